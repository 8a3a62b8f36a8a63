"""Gates on actual values, clamps, empty reads and fixed decimals through the whole graph (real Chromium on the
offline sites, the scripted model): each scenario is a small walkthrough run by `solve_task`, and the expected
answers are computed here in Python from the sites' own data models.

- a planned gate kept at its default while rows are read (the commonest real miss) is flagged by the
  extractor, refused by the verifier naming the control and both values, and repaired;
- one year window applied to many stations' availability pages: a station whose record ends earlier shows
  its last year (the site clamps "To year"), which is recorded as a clamp with the page's evidence, not drift;
- a section with a header-only table and a search with no results are reads of 0 rows: evidence for the
  derivation ("read, none" vs "never read") and for the answer NONE;
- a share written with printf('%.1f', ...) reaches the answer as the SQL wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from tasks.loaders import load_tasks
from tasks.models import Task
from tasks.offline.app import DEFAULT_SEED, site_data

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

WINDOW = (2008, 2016)
LATE_WINDOW = (2022, 2024)


def offline_task(task_id: str, origin: str) -> Task:
    return load_tasks("offline", origin=origin, task_ids=[task_id])[0]


async def _solve(task: Task, steps: list[dict], out: Path, server, worker, **policy):
    async with worker.task_browser(str(out), [server.origin]) as browser:
        return await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=out,
                                policy=ScriptedPolicy(steps=steps, **policy))


def _saved(out: Path) -> dict:
    return json.loads((out / "retrieval_state.json").read_text())


# ---------------------------------------------------------------- a gate kept at its default


async def test_a_gate_kept_at_its_default_is_flagged_refused_and_repaired(offline_server, chromium_worker, tmp_path):
    """The plan names Date basis = Original submission (v1); the rows are read before it is set (the control
    still holds its default), then it is set: the read is flagged, the verifier refuses naming the control and
    both values, and the repair (discard, restore the planned state with the late gate, then read every
    discarded page again) answers right."""
    task = offline_task("offline_scholar_001", offline_server.origin)
    steps = load_walkthrough("offline_scholar_001", origin=offline_server.origin)
    basis = next(i for i, s in enumerate(steps) if s["args"].get("target", {}).get("label") == "Date basis")
    late, apply = steps.pop(basis), next(s for s in steps if s["tool"] == "click")
    after = next(i for i, s in enumerate(steps) if s["tool"] == "extract_rows") + 1
    steps[after:after] = [late, apply]  # set (and applied) only after the rows were read
    outcome = await _solve(task, steps, tmp_path, offline_server, chromium_worker)
    flagged = [f for f in outcome.drift_flags if f["rule"] == "gate_mismatch"]
    # one flag per read in the wrong state (the repair's re-read of each discarded page may add one more)
    assert {(f["gate"], f.get("node"), f["before"]) for f in flagged} == {
        ("basis", "extractor", "Original submission (v1)")}, outcome.drift_flags
    assert "its default: never set" in flagged[0]["message"]
    first = outcome.verifier_reports[0]
    assert not first["ok"] and {f["check"] for f in first["failures"]} == {"drift", "gate"}, first
    gate = next(f["message"] for f in first["failures"] if f["check"] == "gate")
    assert f"Date basis = {flagged[0]['after']!r}, but the plan needs Date basis = 'Original submission (v1)'" in gate
    assert outcome.verifier_reports[-1]["ok"], (outcome.verifier_reports[-1], outcome.stop_reason)
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    events = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    repair = [(e["tool"], e["args"]) for e in events
              if e.get("node") == "actor" and (e.get("note") or {}).get("kind") == "repair"]
    tools = [t for t, _ in repair]
    basis_set = next(i for i, (t, a) in enumerate(repair) if t == "select" and a["target"]["label"] == "Date basis")
    assert tools[0] == "discard_rows" and basis_set < tools.index("click") < tools.index("read_table"), tools


# ---------------------------------------------------------------- stations, windows, clamps, empty reads


def _stations():
    return list(site_data("water", DEFAULT_SEED).stations)


def _flow_years(station, window: tuple[int, int]) -> list[int]:
    """What the availability page lists for a window: the site clamps it to the station's record."""
    first = max(window[0], min(start for start, _ in station.records.values()))
    last = min(window[1], station.last_year)
    return [y for y in range(first, last + 1) if y in station.grid["Flow"]]


def _window_stations() -> tuple:
    """A station whose Flow record spans the whole window, and one whose record ends inside it."""
    spanning = next(s for s in _stations() if "Flow" in s.records and s.records["Flow"][0] <= WINDOW[0]
                    and s.records["Flow"][1] >= WINDOW[1])
    ending = next(s for s in _stations() if "Flow" in s.records and s.records["Flow"][0] <= WINDOW[0]
                  and WINDOW[0] < s.last_year < WINDOW[1] and _flow_years(s, WINDOW))
    return spanning, ending


def _flow_share(station, window: tuple[int, int]) -> str:
    years = _flow_years(station, window)
    complete = [sum(code == "C" for code in station.grid["Flow"][y]) for y in years]
    return f"{sum(complete) / len(complete):.1f}" if complete else "NO_DATA"


SHARE_SQL = """
SELECT f.station_id, count(f.yr) AS years,
       CASE WHEN count(f.yr) = 0 THEN 'NO_DATA' ELSE printf('%.1f', avg(num(f.complete))) END AS mean_complete
FROM flow f GROUP BY f.station_id ORDER BY f.station_id
"""
COLUMNS = ["station_id", "years", "mean_complete"]


def _window_steps(origin: str, stations, window: tuple[int, int]) -> list[dict]:
    steps: list[dict] = []
    for s in stations:
        steps += [
            {"tool": "goto", "args": {"url": f"{origin}/water/stations/{s.id}/availability?from={window[0]}"
                                             f"&to={window[1]}"}},
            {"tool": "extract_rows", "args": {"into": "flow", "section": "Flow", "columns": {
                "station_id": "fact:Station number", "yr": "Year", "complete": "Complete months"}}},
        ]
    return [*steps, {"tool": "derive", "args": {"sql": SHARE_SQL}}, {"tool": "finish", "args": {}}]


def _record(task_id: str) -> dict:
    path = Path(__file__).resolve().parent.parent / "tasks" / "offline" / "data" / "goal.jsonl"
    return next(json.loads(line) for line in path.read_text().splitlines() if json.loads(line)["task_id"] == task_id)


def _window_task(origin: str, stations, window: tuple[int, int]) -> Task:
    base = _record("offline_water_001-g")
    rubric = json.loads(base["rubric"]) if isinstance(base["rubric"], str) else dict(base["rubric"])
    rubric["normalization"] = {**rubric["normalization"], "schema": COLUMNS, "dedup_key": "(station_id)",
                               "sorting_or_selection": "station_id ascending"}
    expected = "\n".join(f"{s.id}|{len(_flow_years(s, window))}|{_flow_share(s, window)}"
                         for s in sorted(stations, key=lambda s: s.id))
    record = {**base, "task_id": "offline_water_902-g", "rubric": rubric,
              "instruction": f"For stations {', '.join(s.id for s in stations)}: over {window[0]}-{window[1]} "
                             "(as far as each record goes), the Flow years listed and the mean complete months "
                             "per year with one decimal (NO_DATA when none).",
              "output_format": f"Output records, one per line, as `{'|'.join(COLUMNS)}` (fields separated by "
                               "`|`), no header row; order: station_id ascending.",
              "oracle_answer": expected, "oracle_output_cardinality": len(stations),
              "start_url": f"{origin}/water/stations"}
    return Task.model_validate(record)


async def test_one_window_over_many_stations_clamps_without_drift(offline_server, chromium_worker, tmp_path):
    spanning, ending = _window_stations()
    stations = [spanning, ending]
    task = _window_task(offline_server.origin, stations, WINDOW)
    outcome = await _solve(task, _window_steps(offline_server.origin, stations, WINDOW), tmp_path, offline_server,
                           chromium_worker)
    assert outcome.drift_flags == [], outcome.drift_flags
    assert [r["ok"] for r in outcome.verifier_reports] == [True], outcome.verifier_reports
    notes = outcome.verifier_reports[0]["notes"]
    assert any("clamped" in n and "'To year' offers" in n and f"{ending.last_year}" in n for n in notes), notes
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    assert "." in outcome.answer.splitlines()[0].split("|")[2]  # printf kept its decimal
    saved = _saved(tmp_path)
    clamped = [r["provenance"]["state"]["to"] for r in saved["tables"]["flow"]["rows"]
               if r["provenance"]["url"].startswith(f"{offline_server.origin}/water/stations/{ending.id}/")]
    assert clamped and all(c["value"] == str(ending.last_year) and c["clamped"]["planned"] == str(WINDOW[1])
                           for c in clamped)
    (flow,) = saved["lineage"]["inputs"]
    assert flow["clamps"] == [f"To year = '{ending.last_year}' for the plan's '{WINDOW[1]}': 'To year' offers "
                              f"{min(a for a, _ in ending.records.values())}..{ending.last_year}"], flow["clamps"]


async def test_a_header_only_section_is_a_read_of_none_for_the_derivation(offline_server, chromium_worker,
                                                                          tmp_path):
    """A station whose Flow record ended before the window: its Flow section is a header-only table. The read
    leaves one `_empty` row (its station id from the page's facts), so the SQL writes NO_DATA for it."""
    ended = next(s for s in _stations() if "Flow" in s.records and s.records["Flow"][1] < LATE_WINDOW[0]
                 and s.last_year >= LATE_WINDOW[1])
    flowing = next(s for s in _stations() if "Flow" in s.records and s.records["Flow"][1] >= LATE_WINDOW[1]
                   and s.records["Flow"][0] <= LATE_WINDOW[0])
    stations = [flowing, ended]
    task = _window_task(offline_server.origin, stations, LATE_WINDOW)
    assert f"{ended.id}|0|NO_DATA" in task.oracle_answer
    outcome = await _solve(task, _window_steps(offline_server.origin, stations, LATE_WINDOW), tmp_path,
                           offline_server, chromium_worker)
    assert [r["ok"] for r in outcome.verifier_reports] == [True], outcome.verifier_reports
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    saved = _saved(tmp_path)
    empty = [r for r in saved["tables"]["flow"]["rows"] if r.get("empty")]
    assert [(r["values"]["station_id"], r["values"]["yr"]) for r in empty] == [(ended.id, None)]
    reads = saved["tables"]["flow"]["reads"]
    assert [r["rows"] for r in reads] == [len(_flow_years(flowing, LATE_WINDOW)), 0]
    assert reads[1]["columns"][0] == "Year" and reads[1]["state"]["to"]["value"] == str(LATE_WINDOW[1])
    assert saved["lineage"]["inputs"][0]["empty_reads"] == 1


async def test_a_search_with_no_results_answers_none(offline_server, chromium_worker, tmp_path):
    """A search that matches nothing: extract_rows records a read of 0 rows, the verifier accepts the empty
    answer, and the answer is the format's NONE."""
    steps = load_walkthrough("offline_scholar_001", origin=offline_server.origin)
    for s in steps:
        if s["tool"] == "fill":
            s["args"]["value"] = "zzqxv"  # no title holds it
    steps = [s for s in steps if s["tool"] != "read_table"]  # nothing to read whole: extract from the page
    task = Task.model_validate({**_record("offline_scholar_001-g"), "oracle_answer": "NONE",
                                "oracle_output_cardinality": 0,
                                "start_url": f"{offline_server.origin}/scholar/search"})
    outcome = await _solve(task, steps, tmp_path, offline_server, chromium_worker)
    assert outcome.answer == "NONE" and [r["ok"] for r in outcome.verifier_reports] == [True]
    events = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    (read,) = [e["record"] for e in events if e.get("node") == "extractor" and e.get("record")]
    assert read["rows"] == 0 and "zzqxv" in read["url"] and read["state"]["basis"]["label"] == "Date basis"
