"""`sgr score` and `sgr review ...` (owned by the eval package)."""

import typer

review_app = typer.Typer(no_args_is_help=True)


def score() -> None:
    """Placeholder until the evaluator lands."""
    raise typer.Exit(1)


@review_app.command("init")
def review_init() -> None:
    raise typer.Exit(1)
