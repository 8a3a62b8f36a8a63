"""The Ray executor (`run.executor: ray`): the cells of a benchmark on a Ray cluster, one machine or many.

Why a pool of actors and not one Ray task per cell: a cell needs a running Chromium and, for the offline
suite, the offline sites on the worker's own loopback. A task per cell would launch both for every cell
(about a second of Chromium start-up plus the sites, and a cold browser cache each time); an actor keeps
them warm across cells, exactly as a worker of the local pool does. So the driver keeps `max_in_flight`
actors (`CellWorker`), each reserving `num_cpus_per_cell` CPUs and `memory_per_cell` memory and holding
one Chromium; each runs one cell at a time with the same `LocalSlot` attempt as the local executor
(budgets, the hard limit, browser restart after a crash), so both executors share one definition of a
cell. An actor that dies (its process killed, its node lost, out of memory) fails its cell with an
infrastructure error: the driver drops it, retries the cell with backoff on a fresh actor, and never
scores the loss as the agent's failure.

The driver alone writes the run folder: an actor returns the outcome, its artefacts as bytes (answer,
steps, retrieval state, trace, screenshots) and its checkpoint, and the driver stages, scores and moves
them into place like a local cell, so a Ray run folder has the same layout and manifest as a local one.
Checkpoints live on the worker node while a cell runs: a retry by the same actor (after a browser crash)
continues the cell from its checkpoint. A cell of the offline suite that lands on another actor (its
actor lost, or the driver restarted) starts over instead: its checkpoint names the URLs of the offline
sites of the old actor, which are gone. (Tasks on real sites keep their URLs: a retry on the same node
continues them.)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from agent.config import BenchConfig, ConfigError, memory_bytes
from agent.outcome import TaskOutcome
from agent.rundir.cells import fresh_staging_dir
from agent.runner.errors import classify_exception
from agent.runner.local import (
    CANCEL_GRACE_SECONDS,
    CLOSE_TIMEOUT_SECONDS,
    BrowserUnavailable,
    Cell,
    LocalSlot,
    checkpoint_path,
    chromium_worker_factory,
    describe_error,
    failed_outcome,
    hard_limit,
    preflight_browser,
)

INSTALL_HINT = "install the optional extra: pip install -e '.[ray]' (in the container image: the `ray` target)"
DRIVER_MARGIN_SECONDS = 60.0  # beyond the actor's own hard limit: the driver's backstop for a hung actor
# A lost worker, actor or node: infrastructure, never the agent (matched by name: Ray's classes move).
_LOST_WORKER = {
    "RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError", "NodeDiedError",
    "LocalRayletDiedError", "ObjectLostError", "OwnerDiedError", "ObjectReconstructionFailedError",
    "ObjectFetchTimedOutError", "OutOfMemoryError", "RaySystemError",
}


def require_ray(config_path: Path | str) -> None:
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"{config_path}: run.executor: ray needs Ray, which is not installed; {INSTALL_HINT}") from exc


def lost_worker(exc: BaseException) -> bool:
    return bool({cls.__name__ for cls in type(exc).__mro__} & _LOST_WORKER)


def worker_code() -> dict[str, Any]:
    """The parts of the code fingerprint a worker can compute without a git checkout (images have none)."""
    from agent.rundir.manifest import code_fingerprint

    return {k: v for k, v in code_fingerprint().items() if k != "commit"}


@dataclass
class CellResult:
    """What an actor sends back for one attempt; the driver writes it into the run folder."""

    outcome: dict[str, Any]
    timed_out: bool
    files: dict[str, bytes] = field(default_factory=dict)
    checkpoint: bytes | None = None
    node: str = ""


# A private cluster (no `address`) runs only our cells, so its workers get normal priority: Ray starts
# worker processes at niceness 15 (so that its own daemons win), which on a shared machine starves the
# agent and the Chromium it launches behind any other load. On a cluster of your own, start every node
# with `RAY_worker_niceness=0 ray start ...` for the same effect (docs/ray.md).
PRIVATE_CLUSTER: dict[str, Any] = {"include_dashboard": False, "_system_config": {"worker_niceness": 0}}


class CellWorker:
    """Lives in a Ray worker process: one Chromium worker and, when a task needs them, the offline sites on
    this node's loopback. Its scratch (staging, checkpoints) is node-local under the temp folder."""

    def __init__(self, config: BenchConfig, run_key: str):
        self.config = config
        self.root = Path(tempfile.gettempdir()) / "sgr-ray" / run_key
        self.server: Any = None
        self.slot: LocalSlot | None = None

    def _offline_origin(self) -> str:
        if self.server is None:
            from tasks.offline.server import OfflineServer

            self.server = OfflineServer().start()
        return self.server.origin

    def _slot_for(self, cell: Cell) -> LocalSlot:
        from agent.solve import solve_task
        from tasks.loaders import resolve_origin
        from tasks.offline.registry import PLACEHOLDER_ORIGIN

        origins = list(self.config.protocol.allowed_origins)
        task = cell.task
        scratch = self.root / "direct"
        if PLACEHOLDER_ORIGIN in (task.start_url or "") or PLACEHOLDER_ORIGIN in task.instruction:
            origin = self._offline_origin()
            resolve_origin(task, origin)  # this actor's copy of the task: the sites of this node
            origins.insert(0, origin)
            # A checkpoint names the sites' URLs: continue one only with the same sites (see module doc).
            scratch = self.root / f"sites-{urlsplit(origin).port}"
        if self.slot is None:
            self.slot = LocalSlot(self.config, scratch, origins, solve=solve_task,
                                  worker_factory=chromium_worker_factory(self.config))
        self.slot.allowed_origins, self.slot.run_dir = origins, scratch
        return self.slot

    async def preflight(self) -> dict[str, Any]:
        await preflight_browser(chromium_worker_factory(self.config))
        return {"node": platform.node(), "code": worker_code()}

    async def run_cell(self, cell: Cell) -> CellResult:
        slot = self._slot_for(cell)
        staging = fresh_staging_dir(self.root, cell.key)
        try:
            outcome, timed_out = await slot.attempt(cell, staging)
            files = {p.relative_to(staging).as_posix(): p.read_bytes() for p in staging.rglob("*") if p.is_file()}
            saved = checkpoint_path(slot.run_dir, cell.key)
            checkpoint = saved.read_bytes() if saved.is_file() else None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return CellResult(outcome.model_dump(mode="json"), timed_out, files, checkpoint, platform.node())

    async def close(self) -> None:
        if self.slot is not None:
            await self.slot.close()
        if self.server is not None:
            self.server.stop()


def _write_result(result: CellResult, staging: Path, checkpoint: Path) -> None:
    for rel, data in result.files.items():
        relpath = PurePosixPath(rel)
        if relpath.is_absolute() or ".." in relpath.parts:
            raise ValueError(f"a worker returned a file outside its cell folder: {rel!r}")
        target = staging / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if result.checkpoint is not None:
        checkpoint.write_bytes(result.checkpoint)


class RaySlot:
    """One cell in flight: an actor, created on first use and replaced after it is lost or abandoned."""

    def __init__(self, executor: RayExecutor):
        self.executor = executor
        self.actor: Any = None

    async def attempt(self, cell: Cell, staging: Path) -> tuple[TaskOutcome, bool]:
        import ray

        if self.actor is None:
            self.actor = self.executor.new_actor()
        ref = self.actor.run_cell.remote(cell)
        future = asyncio.wrap_future(ref.future())
        try:
            done, _ = await asyncio.wait({future}, timeout=self.executor.driver_limit)
        except asyncio.CancelledError:  # Ctrl-C: stop the cell on the cluster too, then let it propagate
            ray.cancel(ref)
            self.drop()
            raise
        if not done:
            ray.cancel(ref)
            self.drop()
            outcome = failed_outcome(cell, staging, "timeout", f"the Ray worker did not answer within "
                                     f"{self.executor.driver_limit:.0f} s; it was stopped")
            outcome.stop_reason = "wall_time"
            return outcome, True
        try:
            result: CellResult = future.result()
        except Exception as exc:  # a lost worker or node is infrastructure: the runner retries the cell
            self.drop()
            kind = "infra" if lost_worker(exc) else classify_exception(getattr(exc, "cause", None) or exc)
            return failed_outcome(cell, staging, kind, f"Ray: {describe_error(exc)}"), False
        _write_result(result, staging, checkpoint_path(self.executor.run_dir, cell.key))
        return TaskOutcome.model_validate(result.outcome), result.timed_out

    def drop(self) -> None:
        import ray

        actor, self.actor = self.actor, None
        if actor is not None:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)

    async def close(self) -> None:
        if self.actor is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(self.actor.close.remote().future()),
                                       CLOSE_TIMEOUT_SECONDS)
        self.drop()


class RayExecutor:
    """Connects to (or starts) the cluster for the run and disconnects after; see the module docstring."""

    def __init__(self, config: BenchConfig, *, connect: bool = True):
        self.config = config
        self.settings = config.run.ray
        self.run_dir = Path(config.run.output_dir).resolve()
        self.connect = connect
        self.in_flight = 0
        self.nodes: list[dict[str, Any]] = []
        self.driver_limit = hard_limit(config) + CANCEL_GRACE_SECONDS + DRIVER_MARGIN_SECONDS
        self.run_key = hashlib.sha256(f"{platform.node()}:{self.run_dir}".encode()).hexdigest()[:16]
        self._actor_class: Any = None
        self._started_here = False

    async def __aenter__(self) -> RayExecutor:
        if not self.connect:
            return self
        import ray

        self._started_here = not ray.is_initialized()
        if self._started_here:
            private = PRIVATE_CLUSTER if self.settings.address is None else {}
            ray.init(address=self.settings.address, runtime_env=self._runtime_env(), namespace="sgr-bench",
                     log_to_driver=False, configure_logging=False, **private)
        self.nodes = [{"node_id": n["NodeID"], "host": n.get("NodeManagerHostname") or n.get("NodeManagerAddress"),
                       "address": n.get("NodeManagerAddress"), "cpus": n.get("Resources", {}).get("CPU"),
                       "memory_gb": round(n.get("Resources", {}).get("memory", 0) / 2**30, 1)}
                      for n in ray.nodes() if n.get("Alive")]
        cpus = ray.cluster_resources().get("CPU", 1.0)
        self.in_flight = self.settings.max_in_flight or max(1, int(cpus // self.settings.num_cpus_per_cell))
        self._actor_class = ray.remote(CellWorker)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._started_here:
            import ray

            ray.shutdown()

    def _runtime_env(self) -> dict[str, Any]:
        """The configured runtime_env, plus the model keys named by the config (read from this driver's
        environment, so the workers need no copy of them; they never enter a file of the run)."""
        env = dict(self.settings.runtime_env or {})
        keys = {m.api_key_env: os.environ[m.api_key_env] for m in self.config.models
                if m.api_key_env and os.environ.get(m.api_key_env)}
        if keys:
            env["env_vars"] = {**keys, **env.get("env_vars", {})}
        return env

    def describe(self) -> dict[str, Any]:
        import ray

        return {"kind": "ray", "address": self.settings.address, "ray_version": ray.__version__,
                "max_in_flight": self.in_flight, "num_cpus_per_cell": self.settings.num_cpus_per_cell,
                "memory_per_cell": self.settings.memory_per_cell, "nodes": self.nodes}

    def new_actor(self) -> Any:
        options: dict[str, Any] = {"num_cpus": self.settings.num_cpus_per_cell, "max_restarts": 0,
                                   "max_task_retries": 0}
        if self.settings.memory_per_cell:
            options["memory"] = memory_bytes(self.settings.memory_per_cell)
        return self._actor_class.options(**options).remote(self.config, self.run_key)

    def new_slot(self) -> RaySlot:
        return RaySlot(self)

    async def preflight(self) -> None:
        """One actor starts Chromium and reports its code: a cluster that cannot run cells (no Chromium, no
        package, other prompts or tools than this driver) stops the run before any cell is recorded."""
        from agent.rundir.manifest import code_fingerprint

        slot = self.new_slot()
        try:
            slot.actor = self.new_actor()
            report = await asyncio.wrap_future(slot.actor.preflight.remote().future())
        except Exception as exc:
            raise BrowserUnavailable(f"the Ray workers cannot run cells ({describe_error(getattr(exc, 'cause', None) or exc)})"
                                     "; check Ray, the package and Chromium on the worker nodes") from exc
        finally:
            await slot.close()
        mine = {k: v for k, v in code_fingerprint().items() if k != "commit"}
        if report["code"] != mine:
            raise ConfigError(f"the Ray worker on {report['node']} runs other code than this driver "
                              f"(worker {report['code']}, driver {mine}): install the same version on every node")
