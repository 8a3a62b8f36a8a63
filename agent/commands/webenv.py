"""`sgr webenv check CONFIG`: does each mapped SGR-WebEnv environment answer, how to start it when it
does not, and which of the config's tasks would run."""

from __future__ import annotations

from pathlib import Path

import typer

from agent.config import ConfigError, load_config

app = typer.Typer(no_args_is_help=True, help="Run released tasks on SGR-WebEnv's offline website environments.")

_CONFIG = typer.Argument(..., help="Benchmark YAML whose datasets map environments, e.g. configs/sgr-webenv.yaml.")
_TASKS = typer.Option(True, "--tasks/--no-tasks", help="Also load the config's tasks and list which would run.")


@app.command("check")
def check(config: Path = _CONFIG, tasks: bool = _TASKS) -> None:
    """Per mapped site: does its environment answer (and its release, if it says); the start command if not.
    Exits 1 when an environment does not answer, 2 for a bad config."""
    from agent.webenv.environments import check_sites, dataset_sites, plan_tasks, status_lines

    try:
        bench = load_config(config)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    sites = dataset_sites(bench.datasets)
    if not sites:
        typer.echo(f"error: {config}: no dataset has a `webenv` mapping", err=True)
        raise typer.Exit(2)
    statuses = check_sites(sites)
    release = next(d.webenv_release for d in bench.datasets if d.webenv)
    for line in status_lines(statuses, release):
        typer.echo(line)
    if tasks:
        from agent.runner.tasks import load_bench_tasks

        membership: dict[str, int] = {}
        try:
            loaded = load_bench_tasks(bench, config, None, membership)
        except ConfigError as exc:
            typer.echo(f"tasks not listed: {exc}", err=True)
        else:
            for line in plan_tasks(loaded, bench.datasets, membership, statuses).task_lines():
                typer.echo(line)
    if not all(status.up for status in statuses):
        raise typer.Exit(1)
