"""Issue 40 item 1: a regex the model writes ran synchronously on the event loop. `(a+)+$` on a page holding
`code: aaaa...a!` froze a bench cell with a 40 s budget past 300 s (its cancel was due at 100 s), and every other
cell of the process stalled with it. The model's regexes now run in the `regex` engine with a deadline, off the
event loop (graph/evidence/model_regex.py); a pattern over the deadline is a tool error the model can correct.

The bench test is a real `sgr bench` on the offline sites: one cell meets the trap page (the issue's `(a+)+$` in
a `read_facts` `re:` source, then `(a|aa)+$` as an `extract_rows` pattern, which backtracks in any engine), the
other cell browses its own site meanwhile; both end normally, long before the cancel deadline."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.measuring.fake_server import FakeOpenAIServer
from agent.rundir.cells import load_records
from graph.evidence import model_regex
from graph.evidence.fact_match import FactError, source_value
from tasks.offline.sites.adversarial import REGEX_TRAP
from tests.security.scripted_cells import ScriptedCells, bench_config

ROOT = Path(__file__).resolve().parents[2]
WALL = 40
CANCEL = WALL + 60  # the runner's cancel deadline (run.hard_timeout_margin_seconds)


def _trap_calls(origin: str) -> list[dict]:
    trap = f"{origin}/adversarial/notes/catastrophic-regex"
    return [{"name": "read_facts", "arguments": {"into": "codes", "url": trap, "fields": {"code": "re:(a+)+$"}}},
            {"name": "extract_rows", "arguments": {"source": "page_text", "pattern": "(?P<code>(a|aa)+)$",
                                                   "columns": {"code": "code"}, "into": "codes"}},
            {"name": "read_facts", "arguments": {"into": "codes", "fields": {"code": r"re:code: (a+)!"}}}]


def _browsing_calls(origin: str) -> list[dict]:
    pages = ["/scholar/", "/water/", "/vulns/", "/lifesci/", "/regulatory/", "/adversarial/", "/"]
    return [{"name": "goto", "arguments": {"url": f"{origin}{page}"}} for page in pages]


@pytest.mark.slow
def test_model_regex_catastrophic_pattern_in_a_bench_cell_ends_it_and_the_other_cell_goes_on(tmp_path: Path):
    script = ScriptedCells({"scholar": _trap_calls, "stats": _browsing_calls})
    with FakeOpenAIServer(script) as fake:
        config = tmp_path / "bench.yaml"
        config.write_text(bench_config(fake.base_url, ["offline_scholar_001-g", "offline_stats_001-g"],
                                       str(tmp_path / "bench"), wall=WALL), encoding="utf-8")
        started = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                                  capture_output=True, text=True, timeout=CANCEL + 120,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            pytest.fail(f"the bench was still running {CANCEL + 120} s later (the cells' cancel was due at {CANCEL} s)")
        elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    records = {r.family or r.task_id: r for r in load_records(tmp_path / "bench")}
    assert len(records) == 2 and not any(r.failed for r in records.values()), records
    assert all(r.outcome.stop_reason == "finished" for r in records.values())
    assert all(r.outcome.wall_seconds < WALL for r in records.values())  # each cell ended within its budget
    trap = script.replies["scholar"]
    assert "found nothing in the page text" in trap[0]  # (a+)+$: the regex engine fails it at once
    assert "ran past its" in trap[1] and "was stopped" in trap[1]  # (a|aa)+$: stopped at the deadline
    assert "a" * 36 in trap[2]  # the corrected pattern reads the code
    browsing = [turn for _, family, turn in script.log if family == "stats"]
    assert max(browsing) >= len(_browsing_calls("")), "the other cell did not get through its pages"
    assert elapsed < CANCEL, elapsed


def test_model_regex_over_its_deadline_is_a_tool_error_not_a_hang(monkeypatch):
    text = "page start\n" + REGEX_TRAP + "\n" * 3
    monkeypatch.setattr(model_regex, "REGEX_SECONDS", 0.2)
    started = time.monotonic()
    with pytest.raises(FactError, match="ran past its 0.2 s limit"):
        source_value("re:(a|aa)+$", None, url="http://x/", page_text=text)
    assert time.monotonic() - started < 30  # CPU time on a loaded machine: far below the hours `re` would take
    with pytest.raises(FactError, match="does not compile"):
        source_value("re:(unclosed", None, url="http://x/", page_text=text)
    assert source_value(r"re:code: (a+)!", None, url="http://x/", page_text=text)[0] == "a" * 36
