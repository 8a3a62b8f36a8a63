"""`sgr path record|replay`: a played or real-model run becomes a decision path; a path replays through the
real wire path against the strict fake server (agent/measuring/paths/)."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from agent.config import AgentVariant
from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.record import RunFolderError, path_from_run
from agent.measuring.safe_files import UnsafeFile

path_app = typer.Typer(no_args_is_help=True)
_RUN = typer.Argument(..., help="A run folder (transcript.jsonl + steps.jsonl) or a relay folder (resp-N.json; its "
                                "run's steps.jsonl beside it or one up).")
_TASK = typer.Option(None, "--task", help="The task id, when the run's steps.jsonl does not record it.")
_OUTPUT = typer.Option(None, "--output", "-o", help="Write the path here instead of printing it.")
_PATH = typer.Argument(..., help="A decision path (JSON: task, plan, steps).")
_OUT = typer.Option(None, "--out", help="Folder for the replayed run (default: a new temporary folder).")
_ABLATE = typer.Option("", "--ablate", help="Comma-separated nodes to switch off, as for `sgr run`/`sgr play` "
                                           "(planner,state_tracker,verifier,provenance).")


@path_app.command("record")
def record(run: Path = _RUN, task: str | None = _TASK, output: Path | None = _OUTPUT) -> None:
    """Turn a run into a decision path: the plan and the calls, targets as shown, the origin as {origin}."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        path = path_from_run(run, task)
    except (RunFolderError, OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    if output:
        output.write_text(path.dump(), encoding="utf-8")
        console.print(f"{len(path.steps)} steps written to {output}", highlight=False)
    else:
        typer.echo(path.dump(), nl=False)
    for line in getattr(path, "unmapped", None) or []:
        console.print(f"[yellow]kept as a ref (nothing recorded what the page showed):[/] {escape(line)}",
                      highlight=False)


@path_app.command("replay")
def replay(path_file: Path = _PATH, out: Path | None = _OUT, ablate: str = _ABLATE) -> None:
    """Replay a path on the offline sites through the strict fake server; prints one JSON line of results
    (with the prompt tokens and actor calls the agent spent: compare variants with --ablate)."""
    from agent.commands.run import RunSetupError, make_variant

    console = Console(stderr=True, soft_wrap=True)
    try:
        variant = make_variant(ablate)
    except RunSetupError as exc:
        console.print(f"[red]error:[/] {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    try:
        path = DecisionPath.load(path_file)
    except UnsafeFile as exc:  # names the file itself
        console.print(f"[red]error:[/] {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    except (OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {escape(str(path_file))}: {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    try:
        _check_task(path.task)
    except ValueError as exc:
        console.print(f"[red]error:[/] {escape(str(path_file))}: {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    out_dir = out or temp_folder("replay", path.task)
    summary = asyncio.run(_replay(path, out_dir, variant))
    typer.echo(json.dumps({**summary, "out": str(out_dir)}))


async def _replay(path: DecisionPath, out_dir: Path, variant: AgentVariant) -> dict:
    from agent.measuring.paths.replay import replay_path
    from browser.session import ChromiumWorker
    from tasks.offline.server import OfflineServer

    worker = ChromiumWorker()
    try:
        with OfflineServer() as server:
            result = await replay_path(path, origin=server.origin, worker=worker, out_dir=out_dir,
                                       variant=variant)
    finally:
        await worker.close()
    return result.summary()


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):  # its own first line only counts the errors
        first = exc.errors()[0]
        return f"not a decision path: {'.'.join(str(p) for p in first['loc']) or '<root>'}: {first['msg']}"
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _check_task(task_id: str) -> None:
    """A path replays on the bundled offline sites: its task must be one of theirs, in the suite or its held-out
    set (ValueError, one line)."""
    from tasks.loaders import offline_source

    offline_source(task_id)  # TaskSourceError names the id and the closest known ones


def temp_folder(kind: str, task: str) -> Path:
    """A new folder under the temp dir, named after the task with every character but [A-Za-z0-9_-] replaced:
    a task id of `../../x` or `/etc` cannot place it anywhere else."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", task)[:60].strip("_") or "task"
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{safe}-"))


_PATHS = typer.Argument(..., help="Decision paths (JSON) to inject faults into, one replay per fault.")
_KINDS = typer.Option(None, "--kind", help="Only these fault kinds (repeatable); default: every kind that applies.")


@path_app.command("inject")
def inject(path_files: list[Path] = _PATHS, out: Path | None = _OUT, kind: list[str] | None = _KINDS) -> None:
    """Inject each fault kind that applies into each path and replay it through the full agent: which check
    caught it before the answer (FAULT-INJECTED REPLAYS of real-model paths, not model results)."""
    from agent.measuring.paths.inject import FAULT_KINDS

    console = Console(stderr=True, soft_wrap=True)
    unknown = sorted(set(kind or []) - set(FAULT_KINDS))
    if unknown:
        console.print(f"[red]error:[/] unknown fault kind {', '.join(unknown)} (known: {', '.join(FAULT_KINDS)})")
        raise typer.Exit(2)
    try:
        paths = [DecisionPath.load(p) for p in path_files]
        for path in paths:
            _check_task(path.task)
    except (OSError, ValueError) as exc:
        console.print(f"[red]error:[/] {escape(_first_line(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    out_dir = out or Path(tempfile.mkdtemp(prefix="inject-"))
    names = [p.stem for p in path_files]  # two paths of one task (a played and a clean one) run apart
    table = asyncio.run(_inject(list(zip(names, paths, strict=True)), out_dir, tuple(kind or FAULT_KINDS)))
    typer.echo(table)
    console.print(f"FAULT-INJECTED REPLAYS of real-model paths (not model results); runs and "
                  f"faults_on_paths.json in {out_dir}", highlight=False)


async def _inject(paths: list[tuple[str, DecisionPath]], out_dir: Path, kinds: tuple) -> str:
    from agent.measuring.paths.inject import fault_table, inject_faults
    from browser.session import ChromiumWorker
    from tasks.offline.server import OfflineServer

    worker, outcomes = ChromiumWorker(), []
    try:
        with OfflineServer() as server:
            for name, path in paths:
                outcomes += await inject_faults(path, origin=server.origin, worker=worker, out_dir=out_dir,
                                                kinds=kinds, name=name)
    finally:
        await worker.close()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "faults_on_paths.json").write_text(
        json.dumps([o.model_dump() for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return fault_table(outcomes)
