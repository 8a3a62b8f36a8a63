"""`sgr bench` and `sgr ablate` (owned by the runner work)."""

import typer


def bench() -> None:
    """Placeholder until the runner lands."""
    raise typer.Exit(1)


def ablate() -> None:
    """Placeholder until the runner lands."""
    raise typer.Exit(1)
