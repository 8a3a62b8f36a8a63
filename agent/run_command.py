"""`sgr run` (owned by the graph/agent work)."""

import typer


def run() -> None:
    """Placeholder until the graph lands."""
    raise typer.Exit(1)
