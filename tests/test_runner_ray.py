"""The Ray executor against a real Ray cluster on loopback (started here, 2 CPUs, stopped after): the same
cells as the local pool, a killed Ray worker retried as infrastructure, `kill -9` of the driver resumed,
Ctrl-C cancelling the cells on the cluster."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.rundir.cells import load_records
from agent.runner.bench import run_bench
from tasks.offline.server import free_port

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed (scripts/install.sh installs it; CI runs these)")

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"
pytestmark = pytest.mark.slow
ORIGIN = re.compile(r"http://127\.0\.0\.1:\d+")


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            found[int(entry)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmd)
    return found


def _descendants(root: int, procs: dict[int, tuple[int, str]]) -> list[int]:
    out, stack = [], [root]
    while stack:
        current = stack.pop()
        children = [pid for pid, (ppid, _) in procs.items() if ppid == current]
        out += children
        stack += children
    return out


def _cell_workers(head_pid: int) -> list[int]:
    """The CellWorker actor processes of our cluster (other engineers may run Ray on this machine too)."""
    procs = _processes()
    return [pid for pid in _descendants(head_pid, procs) if procs[pid][1].startswith("ray::CellWorker")]


def _start_head() -> tuple[subprocess.Popen, str]:
    """`ray start --head` on loopback, 2 CPUs; waits until the cluster answers. Ray gives its raylet a fixed
    30 s to come up, which a heavily loaded 2-core machine can miss: then `ray start` exits and we say so."""
    port = free_port("127.0.0.1")
    temp_dir = tempfile.mkdtemp(prefix="sgrray", dir="/tmp")  # short: Ray's socket paths have a length limit
    head = subprocess.Popen(
        [str(RAY), "start", "--head", "--block", "--num-cpus", "2", "--port", str(port),
         "--node-ip-address", "127.0.0.1", "--temp-dir", temp_dir, "--include-dashboard", "false",
         "--object-store-memory", str(100 * 2**20), "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "RAY_worker_niceness": "0"},  # as docs/ray.md starts a cluster's nodes
    )
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and head.poll() is None:
        probe = subprocess.run([str(RAY), "status", "--address", address], capture_output=True, text=True)
        if probe.returncode == 0 and "CPU" in probe.stdout:
            return head, address
        time.sleep(1)
    _stop_head(head)
    raise RuntimeError(f"ray start did not come up: {(head.stderr.read() if head.stderr else '')[-2000:]}")


def _stop_head(head: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        head.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGKILL)
    head.wait(timeout=20)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[tuple[str, int]]:
    """(address, pid of `ray start`): a head with 2 CPUs on loopback; every Ray process is in its group.
    A start that times out under load is tried again (twice at most): the cluster is the test's setting.
    Token authentication (on by default for local clusters since Ray 2.59) is off for this loopback-only
    cluster: the head, the `ray status` probe and the drivers would otherwise each need the token."""
    saved_auth = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    for tries_left in (2, 1, 0):
        try:
            head, address = _start_head()
            break
        except RuntimeError:
            if not tries_left:
                raise
    try:
        yield address, head.pid
    finally:
        _stop_head(head)
        if saved_auth is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved_auth


def _config(tmp_path: Path, name: str, *, tasks: int, executor: str, address: str = "",
            run_extra: str = "") -> Path:
    ray_section = f", ray: {{address: '{address}', max_in_flight: 2}}" if executor == "ray" else ""
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        "models: [{name: walkthrough, provider: scripted}]\n"
        "datasets: [{suite: offline}]\n"
        "agent: {trace: true, screenshots: false}\n"
        f"run: {{output_dir: '{tmp_path / name}', concurrency: 2, demo_mode: true, demo_limit: {tasks}, "
        f"retry_backoff_seconds: 0.5, executor: {executor}{ray_section}{run_extra}}}\n"
    )
    return path


def _comparable(record) -> dict:
    """A cell's result without what differs between any two runs: wall time, and the offline sites' origin
    (a free port drawn per run) with the prompt tokens it costs (port numbers tokenize to 1-3 tokens)."""
    outcome = record.outcome.model_dump(exclude={"wall_seconds", "prompt_tokens"})
    return json.loads(ORIGIN.sub("<origin>", json.dumps({
        "outcome": outcome, "metrics": record.metrics, "score": record.score, "attempts": len(record.attempts),
        "gold": record.gold, "files": record.files})))


def _layout(run_dir: Path) -> set[str]:
    return {str(p.relative_to(run_dir)) for p in run_dir.rglob("*") if p.is_file()}


def test_ray_cells_match_the_local_pool_cell_by_cell(ray_cluster: tuple[str, int], tmp_path: Path) -> None:
    address, _ = ray_cluster
    local = asyncio.run(run_bench(_config(tmp_path, "local", tasks=3, executor="local")))
    on_ray = asyncio.run(run_bench(_config(tmp_path, "ray", tasks=3, executor="ray", address=address)))
    assert (local.ran, local.failed, on_ray.ran, on_ray.failed) == (3, 0, 3, 0)

    local_records, ray_records = load_records(local.run_dir), load_records(on_ray.run_dir)
    assert [r.key for r in ray_records] == [r.key for r in local_records]
    for mine, theirs in zip(ray_records, local_records, strict=True):
        assert _comparable(mine) == _comparable(theirs), mine.key
        assert abs(mine.outcome.prompt_tokens - theirs.outcome.prompt_tokens) <= 0.01 * theirs.outcome.prompt_tokens
        assert mine.metrics["item_f1"] == 1.0  # the walkthroughs solve their tasks
    assert _layout(on_ray.run_dir) == _layout(local.run_dir)  # cells, checkpoints, reports, manifest

    local_manifest = json.loads((local.run_dir / "manifest.json").read_text())
    ray_manifest = json.loads((on_ray.run_dir / "manifest.json").read_text())
    assert set(ray_manifest) == set(local_manifest)
    assert set(ray_manifest["sessions"][0]) == set(local_manifest["sessions"][0])
    assert local_manifest["executor"]["kind"] == "local"
    executor = ray_manifest["executor"]
    assert (executor["kind"], executor["max_in_flight"], len(executor["nodes"])) == ("ray", 2, 1)
    assert executor["ray_version"] == ray.__version__ and executor["address"] == address
    assert executor["nodes"][0]["cpus"] == 2.0 and executor["nodes"][0]["host"] == platform.node()
    assert ray_manifest["fingerprints"]["code"] == local_manifest["fingerprints"]["code"]


def test_a_killed_ray_worker_is_retried_not_scored(ray_cluster: tuple[str, int], tmp_path: Path) -> None:
    address, head_pid = ray_cluster
    config = _config(tmp_path, "killed", tasks=1, executor="ray", address=address)
    staging = tmp_path / "killed" / ".staging"
    killed: list[int] = []

    def kill_the_worker_mid_cell() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:
            workers = _cell_workers(head_pid) if staging.exists() else []  # staging: past the preflight
            procs = _processes()
            busy = [w for w in workers if any("chrom" in procs[c][1] for c in _descendants(w, procs) if c in procs)]
            if busy:
                time.sleep(1.0)  # well inside the cell (a walkthrough takes several seconds)
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])
            time.sleep(0.2)

    killer = threading.Thread(target=kill_the_worker_mid_cell)
    killer.start()
    result = asyncio.run(run_bench(config))
    killer.join()
    assert killed, "the worker was never seen running a cell"

    (record,) = load_records(result.run_dir)
    assert result.failed == 0 and record.outcome.error is None
    assert record.outcome.stop_reason == "finished" and record.metrics["item_f1"] == 1.0
    assert [a.error_kind for a in record.attempts] == ["infra"]
    assert "Ray:" in record.attempts[0].error and "Died" in record.attempts[0].error


def _bench(config: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finished(run_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run_dir.glob("cells/*/*/*/cell.json")}


def test_kill_9_of_the_driver_then_resume_on_ray(ray_cluster: tuple[str, int], tmp_path: Path) -> None:
    address, head_pid = ray_cluster
    tasks = 4
    config = _config(tmp_path, "resume", tasks=tasks, executor="ray", address=address)
    run_dir = tmp_path / "resume"
    first = _bench(config)
    deadline = time.monotonic() + 600
    while not _finished(run_dir) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    before = _finished(run_dir)
    assert 1 <= len(before) < tasks, first.stderr.read()[-2000:]

    second = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"{len(before)} already finished, {tasks - len(before)} to run" in second.stderr
    after = _finished(run_dir)
    assert len(after) == tasks and {p: after[p] for p in before} == before  # kept, not rerun
    # the cell in flight at the kill started over on a new actor (its checkpoint named the old sites' URLs)
    assert [r.metrics["item_f1"] for r in load_records(run_dir)] == [1.0] * tasks
    killed, resumed = json.loads((run_dir / "manifest.json").read_text())["sessions"]
    assert killed["status"] == "running" and resumed["status"] == "finished"
    assert resumed["executor"]["kind"] == "ray"
    assert not (run_dir / ".staging").exists()
    _wait_for_no_cell_workers(head_pid)  # the killed driver's actors died with it


def _wait_for_no_cell_workers(head_pid: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while _cell_workers(head_pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _cell_workers(head_pid)


def test_ctrl_c_cancels_the_cells_on_the_cluster(ray_cluster: tuple[str, int], tmp_path: Path) -> None:
    address, head_pid = ray_cluster
    config = _config(tmp_path, "interrupt", tasks=2, executor="ray", address=address)
    run_dir = tmp_path / "interrupt"
    driver = _bench(config)
    deadline = time.monotonic() + 300
    while not (run_dir / ".staging").exists() and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
    time.sleep(2.0)  # cells in flight on the cluster
    os.kill(driver.pid, signal.SIGINT)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr[-3000:]
    assert "interrupted: finished cells are kept" in stderr
    assert json.loads((run_dir / "manifest.json").read_text())["sessions"][-1]["status"] == "interrupted"
    _wait_for_no_cell_workers(head_pid, seconds=30)


def test_lost_workers_are_infrastructure_errors() -> None:
    from agent.runner.ray_pool import lost_worker

    for lost in (ray.exceptions.ActorDiedError(), ray.exceptions.WorkerCrashedError(),
                 ray.exceptions.NodeDiedError("node gone"), ray.exceptions.OutOfMemoryError("killed by OOM")):
        assert lost_worker(lost), type(lost).__name__
    assert not lost_worker(ray.exceptions.TaskCancelledError()) and not lost_worker(ValueError("agent bug"))


def test_a_private_cluster_runs_cells_at_normal_priority(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray starts workers at niceness 15; the private cluster of a run must not, or any other load on the
    machine starves the agent and its Chromium (measured: +45% wall time beside other work)."""
    from agent.config import load_config
    from agent.runner.ray_pool import RayExecutor

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    path = tmp_path / "private.yaml"
    path.write_text("models: [{name: walkthrough, provider: scripted}]\ndatasets: [{suite: offline}]\n"
                    f"run: {{output_dir: '{tmp_path / 'run'}', executor: ray, ray: {{max_in_flight: 1}}}}\n")

    async def niceness_on_a_worker() -> int:
        async with RayExecutor(load_config(path)):
            return await asyncio.wrap_future(ray.remote(lambda: os.nice(0)).remote().future())

    assert not ray.is_initialized()
    assert asyncio.run(niceness_on_a_worker()) == 0
    assert not ray.is_initialized()  # the executor shut down the cluster it started
