"""Facts the browser can prove, through the real graph (real ChatOpenAI client against the strict fake server, real
LangGraph, real Chromium on the offline sites): issue 37 stage 3.

- applied versus pending: a control changed on a results page and not applied (the form not sent again) makes the
  table shown stale; the browser says which control (`Observation.pending`), the turn shows it, and a read of that
  table is refused at the read with the reason; once applied, the same read is taken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.measuring.scripted import load_walkthrough, plan_from_walkthrough
from eval.score import score_answer
from tests.fixtures.replay_calls import call as _call
from tests.fixtures.replay_calls import replay_replies

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]



async def _replay(task_id: str, steps: list[dict[str, Any]], offline_server, chromium_worker, tmp_path: Path,
                  plan: dict[str, Any] | None = None):
    plan = plan or plan_from_walkthrough(load_walkthrough(task_id, origin=offline_server.origin)).model_dump()
    replies = [_call("Plan", plan), *(_call(s["tool"], s["args"]) for s in steps)]
    return await replay_replies(task_id, replies, offline_server, chromium_worker, tmp_path)


def _tool_replies(requests: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(m["content"]) for r in requests for m in r["messages"] if m["role"] == "tool"))


def _turns(requests: list[dict[str, Any]]) -> list[str]:
    out = []
    for request in requests:
        users = [m for m in request["messages"] if m["role"] == "user"]
        if users and "BUDGET: step" in str(users[-1]["content"]):
            out.append(str(users[-1]["content"]))
    return out


async def test_a_table_read_after_a_control_changed_and_not_applied_is_refused_at_the_read(
        offline_server, chromium_worker, tmp_path):
    """The walkthrough reads its results; then Date basis is changed on the results page and the same table read
    again without applying: refused, naming the control, both values and what answers it. Applied, the read is
    taken (and the answer, read in the planned state after a second change back and apply, is exact)."""
    steps = load_walkthrough("offline_scholar_001", origin=offline_server.origin)
    apply = next(s for s in steps if s["tool"] == "click")
    basis = next(s for s in steps if s["args"].get("target", {}).get("label") == "Date basis")
    read = [s for s in steps if s["tool"] in ("read_table", "extract_rows")]
    changed = {"tool": "select", "args": {"target": {"label": "Date basis"}, "option": "Latest version"}}
    path = [*steps[:-1 - len(read)], *read[:1],  # results shown, not yet read
            changed, read[1],  # changed, not applied: the extract is refused
            basis, apply, *read]  # back to the plan's value, applied: read
    task, outcome, events, requests = await _replay("offline_scholar_001", [*path, steps[-1]], offline_server,
                                                    chromium_worker, tmp_path)
    replies = _tool_replies(requests)
    stale = [r for r in replies if "results are stale" in r]
    assert len(stale) == 1, replies
    assert "Date basis = 'Latest version' (the page shows results for 'Original submission (v1)')" in stale[0]
    assert "Apply it" in stale[0]
    assert [e.get("stale") for e in events if e.get("node") == "extractor" and e.get("error")] == [True]
    turns = _turns(requests)
    # named (the gate's line shows its value) or with its value (no gate's line shows it): said once either way
    assert any("NOT APPLIED (apply before reading): Date basis" in t for t in turns), turns[-3:]
    assert "NOT APPLIED" not in turns[-1]  # applied: no longer said
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    assert outcome.verifier_reports[-1]["ok"], outcome.verifier_reports


async def test_a_read_returning_no_table_leaves_the_all_pages_read_whole(offline_server, chromium_worker, tmp_path):
    """read_table(all_pages=true), then list_options (a read that returns no table), then extract_rows: the rows
    taken are the all-pages read's, every one the site counts (before: the options read dropped it and the
    extract took the current page's rows only, and said nothing)."""
    steps = load_walkthrough("offline_scholar_002", origin=offline_server.origin)
    at = next(i for i, s in enumerate(steps) if s["tool"] == "extract_rows")
    steps.insert(at, {"tool": "list_options", "args": {"target": {"label": "Category"}}})
    task, outcome, events, requests = await _replay("offline_scholar_002", steps, offline_server, chromium_worker,
                                                    tmp_path)
    record = next(e["record"] for e in events if e.get("node") == "extractor" and e.get("record"))
    assert record["pages"] and record["pages"] > 1, record
    assert record["rows"] == record["site_total"] and "untaken" not in record, record
    assert outcome.verifier_reports[0]["ok"], outcome.verifier_reports
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer


async def test_a_refusal_disputed_once_composes_the_answer_marked_disputed(offline_server, chromium_worker, tmp_path):
    """Page 1 of a two-page result set is read and finish is called with a dispute before any refusal: the dispute
    answers nothing yet, so the [pages] check refuses. The model then disputes the refusal with a reason: the answer
    is composed, the dispute logged, and the outcome, the verifier's report and the HTML alarms say disputed."""
    from agent.reports.html import _alarms

    steps = load_walkthrough("offline_scholar_002", origin=offline_server.origin)
    for step in steps:
        if step["tool"] == "read_table":
            step["args"] = {"table": 0}  # this page only
    finish = steps.pop()
    why = "the site's second page repeats the first (checked)"
    path = [*steps, {"tool": "finish", "args": {**finish["args"], "dispute": "nothing refused yet"}},
            {"tool": "finish", "args": {**finish["args"], "dispute": why}}]
    task, outcome, events, requests = await _replay("offline_scholar_002", path, offline_server, chromium_worker,
                                                    tmp_path)
    reports = outcome.verifier_reports
    assert len(reports) == 2 and not reports[0]["ok"] and "disputed" not in reports[0], reports
    assert {f["check"] for f in reports[0]["failures"]} == {"pages", "count"}, reports[0]
    assert reports[1]["disputed"] == why and not reports[1]["ok"]
    assert outcome.disputed == why and outcome.stop_reason == "finished" and outcome.answer
    logged = [e for e in events if e.get("node") == "verifier"]
    assert [e.get("dispute") for e in logged] == [None, why]
    assert "dispute=<why>" in next(r for r in _tool_replies(requests) if "REPAIR GOAL" in r)

    class Record:  # the HTML report reads a cell's outcome
        pass
    record = Record()
    record.outcome = outcome
    assert f"disputed: {why}" in _alarms(record)


async def test_a_last_page_the_site_does_not_number_is_placed_by_its_rows(offline_server, chromium_worker, tmp_path):
    """A result set read page by page through its Next link, whose last page says only 'Showing 11-N of N' (no
    page number, no Next): that read is its set's last page by its row range, so the [pages] check passes at the
    first finish (before: it was logged as page 1, and the check said the last page was unread after it was read)."""
    steps = load_walkthrough("offline_vulns_001", origin=offline_server.origin)
    at = next(i for i, s in enumerate(steps) if s["tool"] == "read_table")
    extract = steps[at + 1]
    walk = [{"tool": "read_table", "args": {"table": 0}}, extract,
            {"tool": "click", "args": {"target": {"text": "Next >"}}}, {"tool": "read_table", "args": {"table": 0}},
            extract]
    path = [*steps[:at], *walk, steps[-1]]
    task, outcome, events, requests = await _replay("offline_vulns_001", path, offline_server, chromium_worker,
                                                    tmp_path)
    records = [e["record"] for e in events if e.get("node") == "extractor" and e.get("record")]
    assert len(records) == 2, records
    assert records[0]["pages_covered"] == [1] and records[0]["pages"] == 2, records[0]
    last = records[1]
    assert last["pages"] is None and last["pages_covered"] == [] and last["rows_range"][0] > 1, last
    assert outcome.verifier_reports[0]["ok"], outcome.verifier_reports[0]
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer


async def test_a_choice_left_at_its_site_default_that_the_plan_does_not_name_is_said_once_at_a_read(
        offline_server, chromium_worker, tmp_path):
    """The plan forgets Date basis (the trap of a played task: a control the plan never named, shown only as "not in
    plan") and the path never sets it: the first read says, as a note, that Date basis is at its site default and
    named by no gate; a second read does not say it again; nothing is refused for it."""
    steps = load_walkthrough("offline_scholar_001", origin=offline_server.origin)
    plan = plan_from_walkthrough(steps).model_dump()
    plan["gates"] = [g for g in plan["gates"] if g["name"] != "Date basis"]
    path = [s for s in steps if s["args"].get("target", {}).get("label") != "Date basis"]
    extract = next(s for s in path if s["tool"] == "extract_rows")
    path.insert(path.index(extract) + 1, extract)
    task, outcome, events, requests = await _replay("offline_scholar_001", path, offline_server, chromium_worker,
                                                    tmp_path, plan=plan)
    said = [r for r in _tool_replies(requests) if "at their site default, named by no gate of the plan" in r]
    assert len(said) == 1 and "Date basis = 'Latest version" in said[0], said
    records = [e["record"] for e in events if e.get("node") == "extractor" and e.get("record")]
    assert "basis" in " ".join(records[0]["defaults"]) and "defaults" not in records[1], records
    assert not any("Search field" in r for r in said)  # a choice the plan names is not said
