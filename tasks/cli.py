"""`sgr tasks ...` (owned by the tasks package)."""

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("list")
def list_tasks() -> None:
    """Placeholder until the loaders land."""
    raise typer.Exit(1)
