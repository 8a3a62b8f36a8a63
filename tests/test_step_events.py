"""steps.jsonl is typed by one module (graph/events.py): its writers are checked against the models, and its
readers get typed events; a bad line is one line of problem, the rest is still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.reports.timeline import step_rows
from browser.trace import StepTracer
from browser.types import ActionResult, Observation, StateDelta
from graph.events import ActorEvent, BrowserLine, EventError, RunEvent, StepLog, checked, read_events


def test_the_browser_tracer_line_is_a_browser_event_with_no_field_the_model_lacks(tmp_path: Path):
    """browser/ cannot import graph/: this is where its line and the model are held together."""
    result = ActionResult(ok=True, action={"kind": "select", "target": {"label": "Agency"}}, message="selected 'EPA'",
                          delta=StateDelta(params_added={"agency": ["epa"]}, controls_changed={"Agency": ("", "EPA")},
                                           count_before=10, count_after=4))
    line = StepTracer(tmp_path).record(result, Observation(url="http://127.0.0.1:9/search?agency=epa"))
    event = checked(json.loads(json.dumps(line)))
    assert isinstance(event, BrowserLine) and event.count_after == 4 and event.url.endswith("agency=epa")


def test_the_writer_refuses_an_event_its_model_does_not_describe(tmp_path: Path):
    log = StepLog(tmp_path / "steps.jsonl")
    log.write({"node": "actor", "step": 1, "tool": "goto", "call_id": "c1", "args": {"url": "/x"}})
    with pytest.raises(EventError, match=r"actor event: field\(s\) \['surprise'\] not in graph/events.py"):
        log.write({"node": "actor", "step": 2, "surprise": 1})
    with pytest.raises(EventError, match="verifier event: ok"):
        log.write({"node": "verifier", "step": 3, "ok": "maybe"})
    with pytest.raises(EventError, match="not a step event"):
        log.write({"node": "oracle", "step": 3})
    events, problems = read_events(tmp_path / "steps.jsonl")  # only the valid event reached the file
    assert problems == [] and [type(e) for e in events] == [ActorEvent] and events[0].is_call


def test_a_reader_reports_each_unreadable_line_and_reads_the_rest(tmp_path: Path):
    path = tmp_path / "steps.jsonl"
    good = [{"t": 1.0, "node": "run", "event": "start", "task_id": "t1", "model": "m", "variant": "full",
             "ablated": []},
            {"t": 2.0, "node": "actor", "step": 1, "tool": "goto", "call_id": "c1", "args": {"url": "http://s/a"},
             "an_older_field": True}]  # a field of another writer's version is dropped, the event read
    path.write_text("\n".join([json.dumps(good[0]), "[1, 2]", json.dumps(good[1]),
                               json.dumps({"node": "composer", "rows": "many"}), '{"node": "actor", "st'])
                    + "\n", encoding="utf-8")
    events, problems = read_events(path)
    assert [type(e) for e in events] == [RunEvent, ActorEvent] and events[0].task_id == "t1"
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 4", "line 5"]
    assert "not a step event" in problems[0] and "not a composer event (rows" in problems[1]
    assert "not JSON" in problems[2]
    rows, shown = step_rows(path)
    assert shown == problems and [r.action for r in rows] == ["goto"]
