"""`kill -9` in the middle of `sgr bench`, then the same command again: every cell ends finished exactly
once, cells finished before the kill are kept byte for byte, and every file in the run folder parses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from agent.rundir.cells import load_records

ROOT = Path(__file__).resolve().parents[1]
TASKS = 6
pytestmark = pytest.mark.slow


def _start(config: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own process group: Chromium dies with it


def _finished(run_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run_dir.glob("cells/*/*/*/cell.json")}


def test_kill_9_mid_run_then_resume(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    config = tmp_path / "bench.yaml"
    config.write_text(
        "models: [{name: walkthrough, provider: scripted}]\n"
        "datasets: [{suite: offline}]\n"
        "agent: {trace: true, screenshots: false}\n"
        f"run: {{output_dir: '{run_dir}', concurrency: 2, demo_mode: true, demo_limit: {TASKS}}}\n"
    )
    first = _start(config)
    deadline = time.monotonic() + 600
    while not _finished(run_dir) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, first.stderr.read()[-2000:]

    before = _finished(run_dir)
    assert 1 <= len(before) < TASKS, "the kill must land mid-run"
    for path in before:
        json.loads(path.read_text())  # a finished cell is never half written

    second = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                            capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"{len(before)} already finished, {TASKS - len(before)} to run" in second.stderr

    after = _finished(run_dir)
    assert len(after) == TASKS
    assert {p: after[p] for p in before} == before  # kept, not rerun
    records = load_records(run_dir)
    assert len({r.key for r in records}) == TASKS
    manifest = json.loads((run_dir / "manifest.json").read_text())
    killed, resumed = manifest["sessions"]
    assert killed["status"] == "running" and killed["ended_at"] is None  # what a kill -9 leaves
    assert resumed["status"] == "finished"
    # the offline sites come back on the origin the killed session's checkpoints name
    assert resumed["offline_origin"] == killed["offline_origin"] is not None
    assert (resumed["cells_skipped"], resumed["cells_run"]) == (len(before), TASKS - len(before))

    assert not (run_dir / ".staging").exists()
    assert not [p for p in run_dir.rglob("*.tmp")]
    for path in run_dir.rglob("*"):
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".jsonl":
            for line in path.read_text().splitlines():
                json.loads(line)
        elif path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                assert archive.testzip() is None
