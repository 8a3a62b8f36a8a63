"""`sgr review init|summary`: thin typer wrappers over `agent.reports.review` and `eval.cli`."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.reports.review import init_run_reviews
from eval import cli as eval_cli

review_app = typer.Typer(no_args_is_help=True, help="Failure review (the benchmark's audit protocol).")


@review_app.command("init")
def review_init(run: Path = typer.Argument(..., help="A run folder (`sgr bench`) or scored folder (`sgr score`).")) -> None:
    """Write a review template, prefilled with trace evidence, for every task that is not fully correct."""
    from eval.runs import RunReadError

    try:
        written, kept = init_run_reviews(run)
    except (RunReadError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"{len(written)} template(s) written, {len(kept)} existing review(s) kept, in {run / 'reviews'}")


review_app.command("summary")(eval_cli.review_summary)
