"""Issue 21, item 2: a derive's memory is bounded by its 256 MB cap.

`repeat('a', 1e9)` in a derive used to grow the agent's process by ~1.1 GB per column (5 columns: 5.8 GB):
DuckDB's `memory_limit` does not cover what its string functions allocate, and results were materialised in
Python. Reproduced in a subprocess that measures peak RSS: the agent's own process and the engine's process
(`graph/evidence/sql_sandbox.py`) must both stay under the cap plus 100 MB, and the derive must fail with a clear
message. A result's text is also capped in bytes, measured by the engine before anything is fetched.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graph.evidence.evidence_tables import MAX_RESULT_BYTES, WorkspaceError, run_query

ROOT = Path(__file__).resolve().parents[2]
CAP_MB = 256
BOUND_KB = (CAP_MB + 100) * 1024

_MEASURE = """
import json, resource, sys
from graph.evidence.workspace_tools import derive
from graph.tools.agent_tools import Derive
from graph.evidence.evidence_tables import WorkspaceError
def peak_kb():  # VmHWM starts afresh at exec; ru_maxrss would carry the launching process's size over
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1])
before = peak_kb()
try:
    written = derive(Derive(sql=sys.argv[1], into="t"), tables={}, schema=(), step=1)
    outcome = "ok: %d row(s)" % len(written.tables["t"]["rows"])
except WorkspaceError as exc:
    outcome = str(exc)
print(json.dumps({"outcome": outcome, "before_kb": before,
                  "agent_kb": peak_kb(),
                  "engine_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

FIVE_GIGABYTE_COLUMNS = ", ".join(f"repeat('{c}', 1000000000) AS {c}" for c in "abcde")


def measure(sql: str, cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _MEASURE, sql], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return json.loads(done.stdout.strip().splitlines()[-1])


MEMORY = "more than its 256 MB of memory"
STOPPED = f"{MEMORY}|ran longer than"  # whichever limit comes first; both leave memory bounded


@pytest.mark.parametrize(("sql", "refusal"), [
    (f"SELECT {FIVE_GIGABYTE_COLUMNS}", MEMORY),  # the case: 5 columns of 1e9 characters each
    ("SELECT strlen(repeat('a', 1000000000)) AS n", MEMORY),  # huge only inside the engine, nothing to fetch
    ("SELECT strlen(string_agg(repeat('a', 10000000), '')) AS n FROM range(100)", MEMORY),  # a growing aggregate
    ("SELECT lpad('', 900000000, 'x') AS l", STOPPED),  # slow to build: may meet the time limit first
    ("SELECT count(*) AS n FROM (SELECT md5(range::VARCHAR) AS m FROM range(30000000) ORDER BY m)", STOPPED),
], ids=["five-1e9-columns", "strlen-repeat", "string-agg", "lpad", "sort-that-would-spill"])
def test_derive_peak_memory_stays_under_the_cap_plus_100_mb(sql, refusal, tmp_path):
    figures = measure(sql, tmp_path)
    assert re.search(refusal, figures["outcome"]), figures
    assert figures["agent_kb"] < BOUND_KB and figures["agent_kb"] - figures["before_kb"] < 50 * 1024, figures
    assert figures["engine_kb"] < BOUND_KB, figures
    assert not (tmp_path / ".tmp").exists()  # nothing spilled to disk either


def test_a_small_derive_still_answers_in_the_bounded_engine(tmp_path):
    figures = measure("SELECT repeat('x', 1000) AS a FROM range(4000)", tmp_path)  # 4 MB of text, under the cap
    assert figures["outcome"] == "ok: 4000 row(s)", figures


def test_result_text_is_capped_in_bytes_before_it_is_fetched():
    with pytest.raises(WorkspaceError, match=f"5,000,000 bytes of text, more than the {MAX_RESULT_BYTES:,}"):
        run_query({}, "SELECT repeat('a', 5000000) AS a")
    with pytest.raises(WorkspaceError, match="1,200 bytes of text, more than the 1,000 allowed"):
        run_query({}, "SELECT repeat('a', 600) AS a FROM range(2)", max_bytes=1000)
    assert len(run_query({}, "SELECT repeat('a', 600) AS a FROM range(1)", max_bytes=1000).rows) == 1
