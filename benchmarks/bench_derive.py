"""`derive` under attack and at work: peak memory and seconds per query, each in a fresh subprocess.

For every query a new Python process imports the project, runs one `derive` and reports its own peak RSS
(the agent's side) and its children's (the engine process, graph/evidence/sql_sandbox.py; note that a child's peak
starts from its parent's RSS at fork, so it never reads below the agent's). The bound the tests hold it to:
the engine's 256 MB cap plus 100 MB. Also prints what a normal derive costs now that it runs in its own
process (start-up included), over a table the size of a large evidence table.

Run: .venv/bin/python benchmarks/bench_derive.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BOUND_MB = 256 + 100

MEASURE = """
import json, resource, sys, time
from graph.evidence.workspace_tools import derive
from graph.tools.agent_tools import Derive
from graph.evidence.evidence_tables import WorkspaceError, append_rows
prov = {"url": "", "state": None, "drift": [], "locator": "", "result_set": "", "page": None, "pages": None, "step": 1}
rows = [{"values": {"id": str(i), "name": "row %d of an evidence table" % i}, "provenance": prov}
        for i in range(int(sys.argv[2]))]
tables = {"ev": append_rows(None, "ev", ["id", "name"], rows, None, 1)} if rows else {}
def peak_kb():  # VmHWM starts afresh at exec; ru_maxrss would carry the launching process's size over
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1])
before = peak_kb()
started = time.perf_counter()
try:
    written = derive(Derive(sql=sys.argv[1], into="t"), tables=tables, schema=(), step=1)
    outcome = "%d row(s)" % len(written.tables["t"]["rows"])
except WorkspaceError as exc:
    outcome = str(exc).splitlines()[0]
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started, "before_kb": before,
                  "agent_kb": peak_kb(),
                  "engine_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

CASES = [
    ("5 columns of repeat('a', 1e9) (issue 21)",
     "SELECT " + ", ".join(f"repeat('{c}', 1000000000) AS {c}" for c in "abcde"), 0),
    ("strlen(repeat('a', 1e9)): huge inside only", "SELECT strlen(repeat('a', 1000000000)) AS n", 0),
    ("string_agg growing to 1 GB", "SELECT strlen(string_agg(repeat('a', 10000000), '')) AS n FROM range(100)", 0),
    ("sort of 30M md5 strings (would spill)",
     "SELECT count(*) AS n FROM (SELECT md5(range::VARCHAR) AS m FROM range(30000000) ORDER BY m)", 0),
    ("list(range) of 100M", "SELECT list(range) AS l FROM range(100000000)", 0),
    ("a 5 MB result (over the byte cap)", "SELECT repeat('a', 5000000) AS a", 0),
    ("normal: SELECT 1", "SELECT 1 AS one", 0),
    ("normal: group a 5000-row evidence table", "SELECT count(*) AS n, max(name) AS m FROM ev", 5000),
]


def measure(sql: str, rows: int) -> dict:
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-c", MEASURE, sql, str(rows)], cwd=cwd, capture_output=True,
                              text=True, timeout=300, check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    table = Table(title=f"derive: peak RSS per query (bound {BOUND_MB} MB)")
    for column in ("query", "outcome", "agent peak MB", "agent growth MB", "engine peak MB", "seconds"):
        table.add_column(column, overflow="fold")
    for label, sql, rows in CASES:
        m = measure(sql, rows)
        table.add_row(label, m["outcome"][:60], f"{m['agent_kb'] / 1024:.0f}",
                      f"{(m['agent_kb'] - m['before_kb']) / 1024:.0f}", f"{m['engine_kb'] / 1024:.0f}",
                      f"{m['seconds']:.2f}")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
