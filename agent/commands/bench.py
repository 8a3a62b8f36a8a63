"""`sgr bench` and `sgr ablate`: thin typer wrappers; the work is in `agent.runner.bench` and the reports."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from agent.commands.interrupt import run_quietly
from agent.config import ConfigError
from agent.rundir.manifest import ConfigurationMismatch
from agent.runner.bench import BrowserUnavailable, RunFolderBusy, run_bench

_CONFIG = typer.Argument(..., exists=False, help="Benchmark YAML config, e.g. configs/offline.yaml.")
_OUTPUT = typer.Option(None, "--output", "-o", help="Run folder (overrides run.output_dir).")
_CONCURRENCY = typer.Option(None, "--concurrency", "-j", min=1, help="Workers (overrides run.concurrency).")
_LIMIT = typer.Option(None, "--limit", min=1, help="Demo mode: run a reproducible sample of N tasks.")
_FRESH = typer.Option(False, "--fresh", help="Empty the run folder first instead of resuming it.")
_RETRY_FAILED = typer.Option(False, "--retry-failed", help="Also rerun the finished cells that ended in an error "
                                                            "(a dead endpoint, a crash); the other cells are kept.")
_ALLOW_MIXED = typer.Option(False, "--allow-mixed", help="Resume over cells made by other code (prompts, tools, "
                                                         "commit); recorded in the manifest.")


def _run(config: Path, output: Path | None, concurrency: int | None, limit: int | None, fresh: bool = False,
         allow_mixed: bool = False, command: str = "bench", retry_failed: bool = False) -> Path:
    console = Console(stderr=True, soft_wrap=True)
    try:
        result = run_quietly(run_bench(config, output_dir=output, concurrency=concurrency, limit=limit,
                                       console=console, fresh=fresh, allow_mixed=allow_mixed,
                                       retry_failed=retry_failed))
    except ConfigurationMismatch as exc:  # the exact command that gives this configuration its own folder
        options = "".join([f" -j {concurrency}" if concurrency else "", f" --limit {limit}" if limit else "",
                           " --allow-mixed" if allow_mixed else ""])
        console.print(f"[red]error:[/] {escape(str(exc))}\nrun: sgr {command} {config} -o {exc.suggestion}{options}",
                      highlight=False)
        raise typer.Exit(2) from exc
    except (ConfigError, RunFolderBusy, BrowserUnavailable) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    except KeyboardInterrupt as exc:
        console.print("interrupted: finished cells are kept; run the same command again to resume", highlight=False)
        raise typer.Exit(130) from exc
    except OSError as exc:  # a full disk, a run folder gone read-only: the cell being written stays unfinished
        where = f" ({exc.filename})" if exc.filename else ""
        console.print(f"[red]error:[/] cannot write the run folder: {escape(exc.strerror or str(exc))}"
                      f"{escape(where)}; finished cells are kept: free space and run the same command again to "
                      "resume", highlight=False)
        raise typer.Exit(2) from exc
    report = result.run_dir / "report.html"
    console.print(escape(f"done: {result.ran} cell(s) run ({result.failed} failed), {result.skipped} resumed from "
                         f"earlier runs; results in {result.run_dir}"
                         + (f"; report: {report.resolve()}" if report.is_file() else "")), highlight=False)
    return result.run_dir


def bench(config: Path = _CONFIG, output: Path | None = _OUTPUT, concurrency: int | None = _CONCURRENCY,
          limit: int | None = _LIMIT, fresh: bool = _FRESH, allow_mixed: bool = _ALLOW_MIXED,
          retry_failed: bool = _RETRY_FAILED) -> None:
    """Run every (model x variant x task) cell of CONFIG; rerunning resumes unfinished cells."""
    run_dir = _run(config, output, concurrency, limit, fresh, allow_mixed, retry_failed=retry_failed)
    typer.echo((run_dir / "summary.md").read_text(encoding="utf-8"))


def ablate(config: Path = _CONFIG, output: Path | None = _OUTPUT, concurrency: int | None = _CONCURRENCY,
           limit: int | None = _LIMIT, fresh: bool = _FRESH, allow_mixed: bool = _ALLOW_MIXED,
           retry_failed: bool = _RETRY_FAILED) -> None:
    """Run (or resume) CONFIG's variants and print the ablation table: deltas against the full agent."""
    from agent.reports.ablation import render_console_table, write_ablation
    from agent.reports.faults import read_fault_rows

    run_dir = _run(config, output, concurrency, limit, fresh, allow_mixed, command="ablate", retry_failed=retry_failed)
    rows = write_ablation(run_dir)
    faults = read_fault_rows(run_dir)
    if any(r.replayed for r in rows):
        typer.echo("note: no real model ran: SCRIPTED" + (" and FAULT-INJECTED" if faults else "") + " REPLAYS, "
                   "pipeline checks, not agent results", err=True)
    if len({r.variant for r in rows}) < 2:
        typer.echo(f"note: {config} has one agent variant; add agent.variants to get deltas", err=True)
    typer.echo(render_console_table(rows, faults), nl=False)
    files = ["ablation.md (per family)", *(["faults.md (per fault class, what was missed)"] if faults else []),
             "report.html"]
    typer.echo(f"full tables in {run_dir}: {', '.join(files)}")
