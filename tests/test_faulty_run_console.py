"""`sgr run --model faulty:SEED` explains itself (issue 30): the console says which fault was injected, whether
it was flagged before the answer and by which node, and whether it was repaired, as `fault.json` and the
outcome record it; a rerun says it re-reports the finished run instead of passing it off as a new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def sgr(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, env=dict(os.environ))


def test_a_faulty_run_says_what_was_injected_caught_and_repaired(tmp_path: Path) -> None:
    args = ("run", "--task", "offline_regulatory_001", "--model", "faulty:7", "--out", str(tmp_path))
    first = sgr(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    folder = tmp_path / "offline_regulatory_001" / "faulty-seed7" / "full"  # the seed names the folder: another
    # seed runs in its own folder instead of re-reporting this one
    fault = json.loads((folder / "fault.json").read_text())
    outcome = json.loads((folder / "outcome.json").read_text())
    lines = first.stderr.splitlines()
    head = next(x for x in lines if x.startswith("FAULT-INJECTED REPLAY (seed 7): "))
    assert f": {fault['fault']} (" in head and "injected at step " in head and fault["detail"] in head
    flagged = next(x for x in lines if x.strip().startswith("flagged before the answer:"))
    rules = {f"{f['rule']}:{f['gate']}" for f in outcome["drift_flags"] if f.get("gate")}
    assert flagged.strip().startswith("flagged before the answer: yes, by the state tracker (drift ")
    assert any(rule in flagged for rule in rules) and "the verifier ([" in flagged
    repaired = next(x for x in lines if x.strip().startswith("repaired:"))
    score = json.loads((folder / "score.json").read_text())
    if score["exact_match"]:
        assert repaired.strip() == "repaired: yes (flagged, and the final answer is exact)"
    else:
        assert repaired.strip().startswith("repaired: no (EM 0, item-F1 ")
    assert "earlier" not in first.stderr and "re-reporting" not in first.stderr

    again = sgr(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.splitlines()[0].startswith(f"{folder} holds a finished run of this task (")
    assert "re-reporting it, nothing runs again; pass --fresh to run the task again" in again.stderr.splitlines()[0]
    assert head in again.stderr  # the same verdict, read from the same run
