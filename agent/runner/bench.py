"""`sgr bench`: every (model x variant x task) cell of a config, on an executor: the local pool of browser
workers (agent/runner/local.py) or a Ray cluster (agent/runner/ray_pool.py).

The runner knows nothing of prompts: it hands a task, a browser and the settings to `solve_task` and
records what comes back. Budgets are enforced from outside (a hung task is cancelled, recorded, and
its worker's browser restarted), infrastructure errors are retried with backoff, and every finished
cell is written atomically, so a rerun of the same config resumes exactly where a killed one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape

from agent.clients.probe import check_endpoints
from agent.clients.resolve import resolve_models
from agent.config import BenchConfig, ConfigError, ModelConfig, load_config, make_output_dir
from agent.measuring.local_server import serving_config
from agent.outcome import TaskOutcome
from agent.rundir.atomic import replace_dir_atomic, write_json_atomic, write_text_atomic
from agent.rundir.cells import (
    CELL_FILE,
    CELLS_DIR,
    METRICS,
    STAGING_DIR,
    Attempt,
    CellKey,
    CellRecord,
    cell_dir,
    cell_task_id,
    finished_failed,
    fresh_staging_dir,
    is_finished,
    slug,
)
from agent.rundir.checkpoints import prune
from agent.rundir.manifest import (
    MANIFEST_FILE,
    MIXED_CODE_HINT,
    ConfigurationMismatch,
    MixedCodeError,
    code_conflicts,
    config_fingerprints,
    configuration_differences,
    configuration_folder,
    end_session,
    fingerprint_conflicts,
    now_iso,
    read_manifest,
    run_fingerprints,
    start_session,
)
from agent.runner.local import (
    BrowserUnavailable,
    Cell,
    Executor,
    LocalExecutor,
    Slot,
    SolveFn,
    WorkerFactory,
    checkpoint_path,
    chromium_worker_factory,
    describe_error,
    run_attempts,
)
from agent.runner.progress import BenchProgress
from agent.runner.tasks import load_bench_tasks
from tasks.models import Task


@dataclass
class BenchResult:
    run_dir: Path
    planned: int
    skipped: int
    ran: int = 0
    failed: int = 0
    notices: list[str] = field(default_factory=list)


class RunFolderBusy(RuntimeError):
    pass


def _webenv_plan(config: BenchConfig, config_path: Path, tasks: list[Task], membership: dict[str, int],
                 console: Console) -> Any:
    """Datasets with `webenv`: check the environments first and say which tasks will run."""
    from agent.webenv.environments import prepare_bench

    try:
        return prepare_bench(config.datasets, tasks, membership, lambda line: console.print(line, highlight=False))
    except ValueError as exc:
        raise ConfigError(f"{config_path}: datasets: {exc}") from exc


@contextlib.contextmanager
def run_lock(run_dir: Path, command: str = "sgr bench") -> Iterator[None]:
    """One runner per folder (`sgr bench`, or `sgr run` on one task's folder); the kernel drops the lock when
    the process dies, even by `kill -9`. A folder left holding only the lock (a config error before anything
    ran) is removed, lock and all, before the lock is let go."""
    lock = run_dir / "run.lock"
    handle = lock.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        handle.close()
        raise RunFolderBusy(f"{run_dir}: another `{command}` is running on this folder") from exc
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if [p.name for p in run_dir.iterdir()] == [lock.name]:
                lock.unlink()
                run_dir.rmdir()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def plan_cells(config: BenchConfig, tasks: list[Task]) -> list[Cell]:
    cells = [
        Cell(CellKey(model.name, variant.name, cell_task_id(task)), task, model, variant)
        for task in tasks for model in config.models for variant in config.agent.variants
        if model.variants is None or variant.name in model.variants
    ]  # task-major: a run stopped early has every model and variant of the tasks it did
    folders: dict[Path, CellKey] = {}
    for cell in cells:
        other = folders.setdefault(cell.key.relpath, cell.key)
        if other != cell.key:
            raise ConfigError(f"names '{other.label()}' and '{cell.key.label()}' map to one folder {cell.key.relpath}")
    return cells


def _cost(outcome: TaskOutcome, model: ModelConfig) -> float:
    if outcome.cost_usd:
        return outcome.cost_usd
    return (outcome.prompt_tokens * model.price_per_1k_prompt
            + outcome.completion_tokens * model.price_per_1k_completion) / 1000.0


def _default_solve() -> SolveFn:
    from agent.solve import solve_task

    return solve_task


class BenchRunner:
    """Keeps `executor.in_flight` cells going; retries infrastructure errors with backoff; writes each
    finished cell (the executor's files, staged here) into the run folder atomically. Only this process
    writes the run folder, whichever executor ran the cell."""

    def __init__(self, config: BenchConfig, run_dir: Path, executor: Executor, progress: BenchProgress):
        self.config = config
        self.run_dir = run_dir
        self.executor = executor
        self.progress = progress
        self.ran = 0
        self.failed = 0

    async def run(self, cells: list[Cell]) -> None:
        queue: asyncio.Queue[Cell] = asyncio.Queue()
        for cell in cells:
            queue.put_nowait(cell)
        loops = max(1, min(self.executor.in_flight, len(cells)))
        workers = [asyncio.create_task(self._worker_loop(queue)) for _ in range(loops)]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _worker_loop(self, queue: asyncio.Queue[Cell]) -> None:
        slot = self.executor.new_slot()
        try:
            while True:
                try:
                    cell = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                self.progress.started()
                started = time.monotonic()
                record = await self.run_cell(cell, slot)
                self.ran += 1
                self.failed += int(record.failed)
                self.progress.finished(record, time.monotonic() - started)
        finally:
            await slot.close()

    async def run_cell(self, cell: Cell, slot: Slot) -> CellRecord:
        started_at = now_iso()
        last = await run_attempts(cell, slot, lambda: fresh_staging_dir(self.run_dir, cell.key), self.config.run)
        return self._finish(cell, last.staging, last.outcome, last.retried, last.timed_out, started_at)

    def _finish(self, cell: Cell, staging: Path, outcome: TaskOutcome, attempts: list[Attempt],
                timed_out: bool, started_at: str) -> CellRecord:
        from browser.trace import Redactor

        redactor = Redactor.from_environment()  # error texts can quote a request: never let a key through
        attempts = [a.model_copy(update={"error": redactor.text(a.error)}) for a in attempts]
        outcome = outcome.model_copy(update={
            "error": redactor.text(outcome.error) if outcome.error else None,
            "traceback": redactor.text(outcome.traceback) if outcome.traceback else None,
            "task_id": cell.key.task_id, "model": cell.model.name, "variant": cell.variant.name,
            "ablated": list(cell.variant.ablate), "cost_usd": round(_cost(outcome, cell.model), 6),
        })
        if not (staging / "answer.txt").is_file():
            write_text_atomic(staging / "answer.txt", outcome.answer)
        metrics, score = score_cell(cell.task, outcome.answer, self.config.scoring.compat,
                                    failure=outcome.failure() or ("timed out" if timed_out else None))
        write_json_atomic(staging / "score.json", score)
        task = cell.task
        record = CellRecord(
            model=cell.model.name, variant=cell.variant.name, task_id=cell.key.task_id,
            base_id=task.base_id, split=task.variant, domain=task.domain, family=task.family,
            language=task.language, gold=task.oracle_answer,
            shape=str((task.metadata.model_extra or {}).get("task_shape") or ""),
            outcome=outcome, metrics=metrics, score=score, timed_out=timed_out, attempts=attempts,
            started_at=started_at, finished_at=now_iso(),
            files=sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file()) + ["cell.json"],
        )
        _fsync_tree(staging)
        write_json_atomic(staging / "cell.json", record.model_dump(mode="json"))
        replace_dir_atomic(staging, cell_dir(self.run_dir, cell.key))
        prune(checkpoint_path(self.run_dir, cell.key))  # a finished cell never runs again: its cell.json stands
        return record


def score_cell(
    task: Task, answer: str, compat: Literal["ours", "authors"] = "ours", *, failure: str | None = None
) -> tuple[dict[str, float | None], dict[str, Any]]:
    """The evaluator's verdict (in the config's scoring mode, recorded in the score). A parse failure keeps
    null metrics (reported apart, never zero); a scoring failure (e.g. a broken gold answer) is recorded in
    the cell, never raised. A run that ended in an error (`failure`, why) has no answer: 0 on every metric."""
    from eval.batch import score_task
    from eval.score import no_answer

    try:
        score = score_task(task, "" if failure else answer, None, compat)  # a broken gold is reported either way
        if failure:
            score = no_answer(failure, compat)
    except Exception as exc:  # recorded: a broken gold or spec must not lose the agent's answer
        return dict.fromkeys(METRICS), {"error": describe_error(exc), "mode": compat}
    exact = None if score.exact_match is None else float(score.exact_match)
    metrics = {"em": exact, "item_f1": score.item_f1, "row_f1": score.row_f1, "poa": score.poa}
    return metrics, score.model_dump(mode="json")


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _has_cells(run_dir: Path) -> bool:
    return any((run_dir / CELLS_DIR).glob(f"*/*/*/{CELL_FILE}"))


def _folder_differences(run_dir: Path, config: BenchConfig) -> list[str]:
    previous = read_manifest(run_dir)
    if not previous or not _has_cells(run_dir):
        return []
    return configuration_differences(previous.get("fingerprints", {}), config_fingerprints(config))


def choose_run_folder(run_dir: Path, config: BenchConfig, *, explicit: bool, given_as: str) -> tuple[Path, str | None]:
    """One folder per configuration. A folder that holds cells of other models or variants (a scripted replay
    run, then the same config with a key) is not resumed into: the run goes to its own folder next to it
    (`results/offline-gpt-4.1-mini`), said on the console, or, when the user named the folder (`-o`), is
    refused with the folder to use. Returns the folder and the note to print (None: the folder as given)."""
    differences = _folder_differences(run_dir, config)
    if not differences:
        return run_dir, None
    own = configuration_folder(run_dir, config_fingerprints(config))
    if explicit or _folder_differences(own, config):
        raise ConfigurationMismatch(run_dir, differences, own, given_as=given_as)
    return own, f"{run_dir} holds another configuration ({'; '.join(differences)}): this run goes to {own}"


def check_resumable(run_dir: Path, config: BenchConfig, config_path: Path, allow_mixed: bool,
                    given_as: str | None = None) -> list[str]:
    """Refuse a folder of another configuration; refuse one of other code unless `allow_mixed` (then the
    differences are returned, to be recorded in the manifest)."""
    previous = read_manifest(run_dir)
    if not previous:
        return []
    old, current = previous.get("fingerprints", {}), run_fingerprints(config)
    if conflicts := fingerprint_conflicts(old, current):
        raise ConfigError(
            f"{given_as or f'{config_path}: run.output_dir'}: {run_dir} holds cells of a different configuration "
            f"({'; '.join(conflicts)}); use another output_dir (or `--output`), --fresh, or remove the folder"
        )
    if not any((run_dir / CELLS_DIR).glob(f"*/*/*/{CELL_FILE}")):
        return []
    mixed = code_conflicts(old, current)
    if mixed and not allow_mixed:
        raise MixedCodeError(f"{run_dir} holds cells made by different code ({'; '.join(mixed)}): "
                             f"{MIXED_CODE_HINT}")
    return mixed


def clear_run_folder(run_dir: Path) -> None:
    """`--fresh`: empty a run folder (keeping its lock); a folder that is not a run folder is left alone."""
    entries = [p for p in run_dir.iterdir() if p.name != "run.lock"]
    if entries and not (run_dir / "manifest.json").exists():
        raise ConfigError(f"--fresh: {run_dir} has no manifest.json, so it is not a run folder; not deleting it")
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


async def run_bench(
    config_path: Path, *, output_dir: Path | None = None, concurrency: int | None = None,
    limit: int | None = None, solve: SolveFn | None = None, worker_factory: WorkerFactory | None = None,
    console: Console | None = None, write_reports: bool = True, executor: str | None = None,
    fresh: bool = False, allow_mixed: bool = False, retry_failed: bool = False,
) -> BenchResult:
    """Load, plan, resume, run and report. Raises `ConfigError` naming file and key for bad configs.

    `executor` overrides `run.executor`; `fresh` empties the run folder first; `allow_mixed` resumes a
    folder whose cells were made by other code (recorded in the manifest); `retry_failed` also reruns the
    finished cells that ended in an error (the others are kept). Each configured endpoint is checked with one
    request before anything is written (agent/clients/probe.py)."""
    console = console or Console(stderr=True, soft_wrap=True)
    config = load_config(config_path)
    updates: dict[str, Any] = {}
    if output_dir is not None:
        updates["output_dir"] = output_dir
    if concurrency is not None:
        updates["concurrency"] = concurrency
    if limit is not None:
        updates.update(demo_mode=True, demo_limit=limit)
    if executor is not None:
        updates["executor"] = executor
    if updates:
        config = config.model_copy(update={"run": config.run.model_copy(update=updates)})
    config, notices = resolve_models(config, config_path)
    for notice in notices:
        console.print(f"[bold yellow]{escape(notice)}[/]")
    on_ray = config.run.executor == "ray"
    if on_ray:
        from agent.runner.ray_pool import require_ray

        require_ray(config_path)
    if config.run.check_endpoints:
        await check_endpoints(config.models)

    given_as = f"--output {output_dir}" if output_dir is not None else f"{config_path}: run.output_dir"
    run_dir = Path(config.run.output_dir)
    if not fresh:
        run_dir, note = choose_run_folder(run_dir, config, explicit=output_dir is not None, given_as=given_as)
        if note:
            console.print(f"[bold yellow]{note}[/]", highlight=False)
    make_output_dir(run_dir, config_path, given_as=given_as)
    with run_lock(run_dir):
        if fresh:
            clear_run_folder(run_dir)
        mixed = check_resumable(run_dir, config, config_path, allow_mixed, given_as)
        for line in mixed:
            console.print(f"[bold yellow]--allow-mixed: resuming over cells of other code: {escape(line)}[/]")
        # leftovers of a killed run stay until their cell runs again: `fresh_staging_dir` keeps their steps
        # On Ray each worker serves the offline sites itself: tasks keep the placeholder origin here.
        with _offline_server(config, run_dir, console, needed=not on_ray) as origin, serving_config(config) as served:
            membership: dict[str, int] = {}
            tasks = load_bench_tasks(config, config_path, origin, membership)
            webenv = _webenv_plan(config, config_path, tasks, membership, console)
            if webenv is not None:
                if on_ray:
                    raise ConfigError(f"{config_path}: datasets.webenv runs on the local executor only "
                                      "(Ray workers would need the environments on their own loopback)")
                tasks = webenv.runnable
            cells = plan_cells(served, tasks)  # `local` models: their server's loopback URL
            finished = {c.key for c in cells if is_finished(run_dir, c.key)}
            failed = {key for key in finished if finished_failed(run_dir, key)}
            todo = [c for c in cells if c.key not in finished or (retry_failed and c.key in failed)]
            result = BenchResult(run_dir, planned=len(cells), skipped=len(cells) - len(todo), notices=notices)
            kept_failed = "" if retry_failed or not failed else \
                f" ({len(failed)} of them failed: --retry-failed reruns only those)"
            rerun_failed = f" ({len(failed)} failed cell(s) rerun)" if retry_failed and failed else ""
            allowed = [origin, *config.protocol.allowed_origins] if origin else list(config.protocol.allowed_origins)
            async with _executor(config, run_dir, allowed, solve, worker_factory, bool(todo), webenv) as engine:
                console.print(
                    f"sgr bench: {len(cells)} cells ({len(config.models)} model(s) x {len(config.agent.variants)} "
                    f"variant(s) x {len(tasks)} task(s)); {result.skipped} already finished{kept_failed}, {len(todo)} to run"
                    f"{rerun_failed}; "
                    f"{_describe_engine(engine)}; results in {run_dir}", highlight=False,
                )
                if todo:
                    await engine.preflight()
                manifest = start_session(run_dir, config, config_path, notices, len(cells), result.skipped,
                                         executor=engine.describe(), mixed_code=mixed, offline_origin=origin)
                if webenv is not None:
                    from agent.webenv.environments import record_in_manifest

                    record_in_manifest(manifest, webenv)
                    write_json_atomic(run_dir / MANIFEST_FILE, manifest)
                status = "interrupted"
                progress = BenchProgress(len(cells), result.skipped, console)
                runner = BenchRunner(config, run_dir, engine, progress)
                try:
                    with progress:
                        await runner.run(todo)
                    status = "finished"
                finally:
                    result.ran, result.failed = runner.ran, runner.failed
                    end_session(run_dir, manifest, ran=runner.ran, failed=runner.failed, status=status)
                    if status == "finished":
                        shutil.rmtree(run_dir / STAGING_DIR, ignore_errors=True)
        if write_reports:
            from agent.reports.write import write_run_reports

            write_run_reports(run_dir, html=config.run.html_report)
            html = f"; open {(run_dir / 'report.html').resolve()}" if config.run.html_report else ""
            console.print(f"reports: {run_dir / 'summary.md'}{html}", highlight=False)
    return result


@contextlib.asynccontextmanager
async def _executor(config: BenchConfig, run_dir: Path, allowed_origins: list[str], solve: SolveFn | None,
                    worker_factory: WorkerFactory | None, needed: bool, webenv: Any = None) -> AsyncIterator[Executor]:
    if config.run.executor == "local":
        yield LocalExecutor(config, run_dir, allowed_origins, solve=solve or _default_solve(),
                            worker_factory=worker_factory or chromium_worker_factory(config), webenv=webenv)
        return
    if solve is not None or worker_factory is not None:
        raise ConfigError("run.executor: ray runs the real solver on its workers; custom solve/worker hooks "
                          "are for the local executor")
    from agent.runner.ray_pool import RayExecutor

    async with RayExecutor(config, connect=needed) as engine:
        yield engine


def _describe_engine(engine: Executor) -> str:
    info = engine.describe()
    if info["kind"] == "local":
        return f"concurrency {engine.in_flight}"
    return f"Ray executor, {engine.in_flight} cell(s) in flight on {len(info.get('nodes', []))} node(s)"


@contextlib.contextmanager
def _offline_server(config: BenchConfig, run_dir: Path, console: Console,
                    needed: bool = True) -> Iterator[str | None]:
    from tasks.loaders import OFFLINE_SOURCES

    if not needed or not any(ds.suite in OFFLINE_SOURCES for ds in config.datasets):
        yield None
        return
    from agent.runner.offline_sites import serve_offline_sites

    with serve_offline_sites(run_dir, lambda line: console.print(f"[bold yellow]{escape(line)}[/]")) as origin:
        yield origin


__all__ = ["BenchResult", "BrowserUnavailable", "Cell", "MixedCodeError", "RunFolderBusy", "plan_cells", "run_bench",
           "score_cell", "slug"]
