"""Issue 21 item 4: after `kill -9` of `sgr bench` mid-cell, the rerun resumed the interrupted derived cell by
re-opening only its last URL: a form choice made before the kill ("From year") was lost while the recorded
retrieval state still claimed it, and the cell answered wrong (EM 0) without saying it was resumed, its
earlier steps lost. Now an interrupted cell restarts from a clean slate, says so in `cell.json`, keeps the
steps before the kill, and reaches the same answer and score as a fresh run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.rundir.cells import load_records

ROOT = Path(__file__).resolve().parents[2]
TASK = "offline_water_004"  # derived: a list page, then each station's availability form (From/To year)
pytestmark = pytest.mark.slow


def _config(tmp_path: Path, name: str) -> tuple[Path, Path]:
    run_dir = tmp_path / name
    config = tmp_path / f"{name}.yaml"
    config.write_text(
        "models: [{name: walkthrough, provider: scripted}]\n"
        f"datasets: [{{suite: offline, splits: [constraint], task_ids: [{TASK}]}}]\n"
        "agent: {trace: true, screenshots: false}\n"
        f"run: {{output_dir: '{run_dir}', concurrency: 1}}\n")
    return config, run_dir


def _bench(config: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _form_choices_made(steps: Path) -> int:
    """Executor events that set the 'From year' control (the state a re-opened URL does not bring back)."""
    if not steps.is_file():
        return 0
    return sum('"node": "executor"' in line and "in 'From year'" in line
               for line in steps.read_text(encoding="utf-8", errors="replace").splitlines())


def test_resume_after_kill_9_mid_cell_restarts_and_matches_a_fresh_run(tmp_path: Path) -> None:
    fresh_config, fresh_dir = _config(tmp_path, "fresh")
    _bench(fresh_config)
    [fresh] = load_records(fresh_dir)
    assert fresh.outcome.restarts == [] and fresh.metrics["em"] == 1.0

    config, run_dir = _config(tmp_path, "killed")
    first = subprocess.Popen([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # its own process group: Chromium dies with it
    staged = run_dir / ".staging" / "walkthrough" / "full" / TASK / "steps.jsonl"
    deadline = time.monotonic() + 600
    while _form_choices_made(staged) < 2 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)  # the group this test started, by its id
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, first.stderr.read()[-2000:]
    assert not list(run_dir.glob("cells/*/*/*/cell.json")), "the kill must land mid-cell"
    lines_before_kill = staged.read_text(encoding="utf-8").splitlines()
    choices_before_kill = _form_choices_made(staged)
    assert choices_before_kill >= 2

    _bench(config)
    [record] = load_records(run_dir)
    assert record.outcome.answer == fresh.outcome.answer
    assert record.metrics == fresh.metrics and record.score == fresh.score
    assert record.outcome.stop_reason == fresh.outcome.stop_reason == "finished"

    # the cell says it was restarted, and where the killed run had got to
    [restart] = record.outcome.restarts
    assert restart["interrupted_at_step"] >= 8 and "/availability" in restart["last_url"]
    written = json.loads((run_dir / "cells" / "walkthrough" / "full" / TASK / "cell.json").read_text())
    assert written["outcome"]["restarts"] == record.outcome.restarts

    # the steps before the kill are kept (complete lines), then the restart, then the whole second run
    steps_text = (run_dir / "cells" / "walkthrough" / "full" / TASK / "steps.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in steps_text.splitlines()]
    kept = [line for line in lines_before_kill if line.endswith("}")]
    assert steps_text.splitlines()[:len(kept) - 1] == kept[:-1]
    marks = [(e.get("event"), i) for i, e in enumerate(events) if e.get("node") == "run" and e.get("event")
             in ("new_attempt", "restart")]
    assert [m for m, _ in marks] == ["new_attempt", "restart"]
    after = events[marks[-1][1]:]
    fresh_steps = (fresh_dir / "cells" / "walkthrough" / "full" / TASK / "steps.jsonl").read_text(encoding="utf-8")
    assert _form_choices_made(run_dir / "cells" / "walkthrough" / "full" / TASK / "steps.jsonl") \
        == choices_before_kill + _form_choices_made_text(fresh_steps)
    fresh_events = [json.loads(line) for line in fresh_steps.splitlines()]
    assert [e.get("action") for e in after if e.get("node") == "executor"] \
        == [e.get("action") for e in fresh_events if e.get("node") == "executor"]  # the whole task again
    assert record.outcome.steps == fresh.outcome.steps


def _form_choices_made_text(text: str) -> int:
    return sum('"node": "executor"' in line and "in 'From year'" in line for line in text.splitlines())
