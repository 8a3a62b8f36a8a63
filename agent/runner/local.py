"""The local executor and what every executor shares: one cell attempt on one browser worker.

`LocalSlot` is the attempt (a fresh browser context, the solver, the hard limit beyond the agent's wall
budget, a browser restart after a crash or an abandoned task); `run_attempts` the attempts of one cell (an
infrastructure error retried with backoff); `LocalExecutor` is today's pool of `run.concurrency` such slots in
this process. The Ray executor (agent/runner/ray_pool.py) runs `LocalSlot` inside its actors, and `sgr run`
runs one cell on one `LocalSlot` (agent/commands/run.py), so all share one definition of a cell attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent.config import AgentVariant, BenchConfig, ModelConfig, RunConfig
from agent.outcome import TaskOutcome
from agent.rundir.cells import Attempt, CellKey, cell_dir
from agent.runner.errors import classify_exception
from tasks.models import Task

SolveFn = Callable[..., Awaitable[TaskOutcome]]
WorkerFactory = Callable[[], Awaitable[Any]]
CANCEL_GRACE_SECONDS = 30.0
CLOSE_TIMEOUT_SECONDS = 30.0
CHECKPOINTS_DIR = "checkpoints"


@dataclass(frozen=True)
class Cell:
    key: CellKey
    task: Task
    model: ModelConfig
    variant: AgentVariant


class BrowserUnavailable(RuntimeError):
    """The browser cannot start at all: stop before recording every cell as failed."""


async def preflight_browser(factory: WorkerFactory) -> None:
    worker = None
    try:
        worker = await factory()
        with tempfile.TemporaryDirectory(prefix="sgr-preflight-") as tmp:
            async with worker.task_browser(tmp, []) as browser:
                await browser.observe()
    except Exception as exc:
        raise BrowserUnavailable(
            f"the browser cannot start ({describe_error(exc)}); check Chromium (SGR_CHROMIUM) and its libraries"
        ) from exc
    finally:
        if worker is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.close(), CLOSE_TIMEOUT_SECONDS)


class WorkerSlot:
    """One pool worker's browser: launched lazily, restarted after a crash or an abandoned task."""

    def __init__(self, factory: WorkerFactory):
        self._factory = factory
        self._worker: Any = None

    async def get(self) -> Any:
        if self._worker is None:
            self._worker = await self._factory()
        return self._worker

    async def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.close(), CLOSE_TIMEOUT_SECONDS)


def chromium_worker_factory(config: BenchConfig) -> WorkerFactory:
    async def new_worker() -> Any:
        from browser.session import ChromiumWorker

        return ChromiumWorker(token_budget=config.agent.token_budget_per_observation)

    return new_worker


class LocalSlot:
    """One cell at a time on one browser worker of this process: the attempt as every executor runs it.

    The hard limit is enforced here (a hung task is cancelled and its browser restarted); the Ray executor
    runs this same class inside each of its actors, so both executors share one definition of an attempt.
    `run_dir` holds the checkpoints (`checkpoints/<cell>.sqlite`, or where `checkpoint_db` says: `sgr run`
    keeps its one in the run folder), outside the staging folder: a finished thread is re-reported, an
    interrupted one restarted from a clean slate (agent/rundir/checkpoints.py).
    """

    def __init__(self, config: BenchConfig, run_dir: Path, allowed_origins: list[str], *,
                 solve: SolveFn, worker_factory: WorkerFactory, webenv: Any = None,
                 checkpoint_db: Callable[[CellKey], Path] | None = None):
        self.config = config
        self.run_dir = run_dir
        self.checkpoint_db = checkpoint_db or (lambda key: checkpoint_path(run_dir, key))
        self.allowed_origins = allowed_origins
        self.solve = solve
        self.worker = WorkerSlot(worker_factory)
        self.webenv = webenv  # agent.webenv.environments.WebEnvPlan: live origins served from local environments

    @property
    def hard_limit(self) -> float:
        return hard_limit(self.config)

    async def attempt(self, cell: Cell, staging: Path) -> tuple[TaskOutcome, bool]:
        """(outcome, timed out). Never raises: every failure becomes an outcome; after an infrastructure
        error or an abandoned task the browser is restarted for the next try or cell."""
        outcome, timed_out, restart = await self._attempt(cell, staging)
        if restart or outcome.error_kind == "infra":
            await self.worker.close()
        return outcome, timed_out

    async def close(self) -> None:
        await self.worker.close()

    async def _attempt(self, cell: Cell, staging: Path) -> tuple[TaskOutcome, bool, bool]:
        task = asyncio.create_task(self._solve_in_browser(cell, staging))
        done, _ = await asyncio.wait({task}, timeout=self.hard_limit)
        if task in done:
            exc = task.exception()
            if exc is None:
                return task.result(), False, False
            kind = classify_exception(exc)
            outcome = failed_outcome(cell, staging, kind, describe_error(exc))
            if kind == "bug":
                outcome.traceback = "".join(traceback.format_exception(exc))[-8000:]
            return outcome, False, kind == "infra"
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_SECONDS)
        if task not in done:  # the task ignores cancellation: abandon it with its browser
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
        message = (f"cancelled by the runner after {self.hard_limit:.0f} s (agent wall budget "
                   f"{self.config.protocol.budgets.wall_seconds:.0f} s)")
        outcome = failed_outcome(cell, staging, "timeout", message)
        outcome.stop_reason = "wall_time"
        return outcome, True, True

    async def _solve_in_browser(self, cell: Cell, staging: Path) -> TaskOutcome:
        worker = await self.worker.get()
        origins = list(self.allowed_origins)
        if cell.task.start_url:
            origins.append(cell.task.start_url)
        routes = self.webenv.routes_for(cell.task) if self.webenv is not None else None
        extra = {"routes": routes} if routes else {}
        if routes:
            origins.extend(routes.pairs)  # every live origin of the task's environment
        async with worker.task_browser(str(staging), origins, trace=self.config.agent.trace,
                                       screenshots=self.config.agent.screenshots, **extra) as browser:
            return await self.solve(
                cell.task, browser=browser, model=cell.model, variant=cell.variant,
                protocol=self.config.protocol, out_dir=staging,
                token_budget=self.config.agent.token_budget_per_observation,
                checkpoint_db=self.checkpoint_db(cell.key),
            )


@dataclass
class Attempted:
    """A cell's last attempt (its outcome and the folder it wrote) and the infrastructure failures retried
    before it."""

    outcome: TaskOutcome
    timed_out: bool
    staging: Path
    retried: list[Attempt]


async def run_attempts(cell: Cell, slot: Slot, new_staging: Callable[[], Path], run: RunConfig) -> Attempted:
    """Attempt `cell` on `slot` until it ends other than by an infrastructure error, at most `run.retries`
    extra times, waiting `run.retry_backoff_seconds` (doubled per retry) between attempts; each attempt
    writes into the folder `new_staging` gives it."""
    retried: list[Attempt] = []
    for number in range(1, run.retries + 2):
        staging = new_staging()
        t0 = time.monotonic()
        outcome, timed_out = await slot.attempt(cell, staging)
        outcome.wall_seconds = outcome.wall_seconds or round(time.monotonic() - t0, 3)
        if outcome.error_kind != "infra" or number > run.retries:
            return Attempted(outcome, timed_out, staging, retried)
        retried.append(Attempt(number=number, error=outcome.error or "", error_kind="infra",
                               seconds=round(time.monotonic() - t0, 3)))
        await asyncio.sleep(run.retry_backoff_seconds * 2 ** (number - 1))
    raise AssertionError("unreachable: the last attempt always returns")


def hard_limit(config: BenchConfig) -> float:
    return config.protocol.budgets.wall_seconds + config.run.hard_timeout_margin_seconds


def checkpoint_path(run_dir: Path, key: CellKey) -> Path:
    folder = cell_dir(run_dir / CHECKPOINTS_DIR, key)  # `name + .sqlite`: a task id `a.1` keeps its `.1`
    path = folder.with_name(folder.name + ".sqlite")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def failed_outcome(cell: Cell, staging: Path, kind: str, message: str) -> TaskOutcome:
    partial = staging / "answer.txt"
    answer = partial.read_text(encoding="utf-8") if partial.is_file() else ""
    return TaskOutcome(task_id=cell.key.task_id, model=cell.model.name, variant=cell.variant.name,
                       ablated=list(cell.variant.ablate), answer=answer, stop_reason="error",
                       error=message, error_kind=kind)


class Slot(Protocol):
    """Where one cell attempt runs: a browser worker of this process, or a Ray actor."""

    async def attempt(self, cell: Cell, staging: Path) -> tuple[TaskOutcome, bool]: ...

    async def close(self) -> None: ...


class Executor(Protocol):
    """Runs cell attempts; the runner keeps `in_flight` of them going, each on its own slot."""

    in_flight: int

    def describe(self) -> dict[str, Any]: ...  # recorded in the manifest

    async def preflight(self) -> None: ...

    def new_slot(self) -> Slot: ...


class LocalExecutor:
    """Today's pool: `run.concurrency` browser workers in this process."""

    def __init__(self, config: BenchConfig, run_dir: Path, allowed_origins: list[str], *,
                 solve: SolveFn, worker_factory: WorkerFactory, webenv: Any = None):
        self.config, self.run_dir, self.allowed_origins = config, run_dir, allowed_origins
        self.solve, self.worker_factory, self.webenv = solve, worker_factory, webenv
        self.in_flight = config.run.concurrency

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "concurrency": self.in_flight,
                "nodes": [{"host": platform.node(), "cpus": os.cpu_count()}]}

    async def preflight(self) -> None:
        await preflight_browser(self.worker_factory)

    def new_slot(self) -> LocalSlot:
        return LocalSlot(self.config, self.run_dir, self.allowed_origins, solve=self.solve,
                         worker_factory=self.worker_factory, webenv=self.webenv)


def describe_error(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text[:4000]
