"""`sgr show RUN`: a thin typer wrapper over `agent.reports.show` (one run read at the terminal)."""

from __future__ import annotations

from pathlib import Path

import typer

_RUN = typer.Argument(..., help="A run folder: `sgr run`'s (runs/<task>/<model>/<variant>), one bench cell "
                                "(RUN/cells/<model>/<variant>/<task>), or a bench folder (lists its cells).")


def show(run: Path = _RUN) -> None:
    """Show one run: outcome, score, one line per step (one numbering), the answer and how to open trace.zip."""
    from agent.reports.show import NotARunFolder
    from agent.reports.show import show as show_lines

    try:
        lines = show_lines(run)
    except NotARunFolder as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo("\n".join(lines))
