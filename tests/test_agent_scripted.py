"""The scripted policy reacts to the graph's state as data (drift flags, the verifier's failures), never to text."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent.measuring.scripted import (
    ScriptedPolicy,
    load_walkthrough,
    plan_from_walkthrough,
    restore_steps,
)
from graph.checks.failures import failure
from graph.model_io.policy import TurnState
from graph.tools.tool_schemas import plan_tool, tool_schemas
from tasks.offline.registry import PLACEHOLDER_ORIGIN

STEPS = [
    {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/reg/complaints?size=50"}},
    {"tool": "select", "args": {"target": {"label": "Company"}, "option": "Bluestem"}},
    {"tool": "set_range", "args": {"start_target": {"label": "Date received from"},
                                   "end_target": {"label": "Date received to"}, "start": "2016", "end": "2020"}},
    {"tool": "check", "args": {"target": {"label": "Include archived"}, "checked": False}},
    {"tool": "click", "args": {"target": {"text": "Apply filters"}}},
    {"tool": "read_table", "args": {"table": 0}},
    {"tool": "extract_rows", "args": {"columns": {"id": "ID"}}},
    {"tool": "finish", "args": {"order_by": ["id"]}},
]


def actor_call(model: ScriptedPolicy, messages, state: TurnState | None = None):
    ai = asyncio.run(model.act(messages, tool_schemas(search=False), state or TurnState()))
    return ai.tool_calls[0]


def history(model: ScriptedPolicy, turns: int, turn_text: str = "OBSERVATION: page"):
    """Drive `turns` plain turns and return the message history the graph would hold."""
    messages = []
    for _ in range(turns):
        call = actor_call(model, [SystemMessage("actor"), *messages, HumanMessage(turn_text)])
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    return messages


def test_plan_lists_what_the_walkthrough_sets():
    plan = plan_from_walkthrough(STEPS)
    assert {(g.kind, g.name, str(g.target)) for g in plan.gates} == {
        ("scope", "size", "50"), ("filter", "Company", "Bluestem"), ("window", "Date received from", "2016..2020"),
        ("filter", "Include archived", "unchecked")}


def test_planner_call_returns_a_plan_with_token_usage():
    ai = asyncio.run(ScriptedPolicy(steps=STEPS).plan([HumanMessage("task")], plan_tool()))
    assert ai.tool_calls[0]["name"] == "Plan" and ai.tool_calls[0]["args"]["gates"]
    assert ai.usage_metadata["input_tokens"] > 0 and ai.usage_metadata["output_tokens"] > 0


def test_restore_picks_the_setting_steps_of_the_flagged_gates_and_the_apply_step():
    picked = restore_steps(STEPS, cursor=6, gates=["date_received_min", "date_received_from"])
    assert [s["tool"] for s in picked] == ["set_range", "click"]
    assert restore_steps(STEPS, cursor=6, gates=["nothing_like_it"]) == []
    everything = restore_steps(STEPS, cursor=6, gates=[])
    assert [s["tool"] for s in everything] == ["goto", "select", "set_range", "check", "click"]


def test_steps_follow_the_walkthrough():
    model = ScriptedPolicy(steps=STEPS)
    messages = history(model, 3)
    assert [m.tool_calls[0]["name"] for m in messages if isinstance(m, AIMessage)] == ["goto", "select", "set_range"]
    assert actor_call(model, [*messages, HumanMessage("OBSERVATION")])["name"] == "check"


FLAG = {"rule": "navigation_reset", "gate": "company", "label": "Company", "before": "Bluestem", "after": None,
        "step": 6, "path": "/r", "message": "Company was reset"}


def drive(model: ScriptedPolicy, messages: list, state: TurnState, turns: int, text: str = "OBSERVATION"):
    """`turns` actor calls under one turn state: (id, name, args) of each."""
    calls = []
    for _ in range(turns):
        call = actor_call(model, [*messages, HumanMessage(text)], state)
        calls.append((call["id"], call["name"], call["args"]))
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    return calls


def test_drift_flag_makes_it_restore_the_gate_once_then_continue():
    model = ScriptedPolicy(steps=STEPS)
    calls = drive(model, history(model, 6), TurnState(drift_flags=[FLAG]), 3, text="any wording at all")
    assert [(c[0], c[1]) for c in calls] == [("rp-1-0", "select"), ("rp-1-1", "click"), ("wt-6", "extract_rows")]


def test_prompt_wording_alone_changes_nothing():
    """The policy reacts to state, not text: a turn that only *says* DRIFT FLAGS / REPAIR GOAL is ignored."""
    model = ScriptedPolicy(steps=STEPS)
    wording = ('DRIFT FLAGS:\n- [navigation_reset] gate=company label="Company" before=Bluestem after=None: x\n'
               "REPAIR GOAL: [pages] page(s) [2] were not read")
    assert drive(model, history(model, 6), TurnState(), 1, text=wording)[0][0] == "wt-6"


PAGES = failure("pages", "result set /r has 2 pages but page(s) [2] were not read", pages=[2])


def test_verifier_failures_for_pages_make_it_read_all_pages_and_extract_again():
    model = ScriptedPolicy(steps=STEPS)
    sent_back = TurnState(repair_goal="[pages] " + PAGES["message"], failures=[PAGES], repairs=1)
    calls = drive(model, history(model, 8), sent_back, 3)
    assert [(c[1], c[2].get("all_pages")) for c in calls] == [("read_table", True), ("extract_rows", None),
                                                               ("finish", None)]


def test_the_repair_follows_the_failures_as_data_not_the_goal_text():
    """The goal's text is rendered for the model; the policy reads the fields: a goal reworded (or saying
    another check) leaves its repair as it was, a failure of another check changes it."""
    reworded = {**PAGES, "message": "[drift] table t: words that no longer say which page"}
    model = ScriptedPolicy(steps=STEPS)
    calls = drive(model, history(model, 8), TurnState(repair_goal="[drift] anything", failures=[reworded], repairs=1), 1)
    assert (calls[0][1], calls[0][2].get("all_pages")) == ("read_table", True)
    drifted = failure("drift", "1 row(s) were read while drift was active")
    model = ScriptedPolicy(steps=STEPS)
    calls = drive(model, history(model, 8), TurnState(repair_goal="[pages] page(s) [2]", failures=[drifted], repairs=1), 1)
    assert calls[0][1] == "discard_rows"


def test_offline_walkthroughs_load_with_the_running_origin():
    steps = load_walkthrough("offline_vulns_001-g", origin="http://127.0.0.1:1234")
    assert steps[0]["tool"] == "goto" and steps[0]["args"]["url"].startswith("http://127.0.0.1:1234/")
    assert all("why" not in s for s in steps)
