"""The scripted policy reacts to the graph's messages: drift flags, verifier repair goals, resumed history."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent.models.scripted import (
    STATE_KEY,
    ScriptedChatModel,
    load_walkthrough,
    plan_from_walkthrough,
    restore_steps,
)
from graph.toolset import plan_tool, tool_schemas
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


def actor_call(model: ScriptedChatModel, messages):
    bound = model.bind_tools(tool_schemas(search=False))
    ai = bound.invoke(messages)
    return ai.tool_calls[0]


def history(model: ScriptedChatModel, turns: int, turn_text: str = "OBSERVATION: page"):
    """Drive `turns` plain turns and return the message history the graph would hold."""
    messages = []
    for _ in range(turns):
        call = actor_call(model, [SystemMessage("actor"), *messages, HumanMessage(turn_text)])
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    return messages


def test_plan_lists_what_the_walkthrough_sets():
    plan = plan_from_walkthrough(STEPS)
    assert {(g.kind, g.name, g.target) for g in plan.gates} == {
        ("scope", "size", "50"), ("filter", "Company", "Bluestem"), ("window", "Date received from", "2016..2020"),
        ("filter", "Include archived", "off")}


def test_planner_call_returns_a_plan_with_token_usage():
    ai = ScriptedChatModel(steps=STEPS).bind_tools([plan_tool()], tool_choice="Plan").invoke([HumanMessage("task")])
    assert ai.tool_calls[0]["name"] == "Plan" and ai.tool_calls[0]["args"]["gates"]
    assert ai.usage_metadata["input_tokens"] > 0 and ai.usage_metadata["output_tokens"] > 0


def test_restore_picks_the_setting_steps_of_the_flagged_gates_and_the_apply_step():
    picked = restore_steps(STEPS, cursor=6, gates=["date_received_min", "date_received_from"])
    assert [s["tool"] for s in picked] == ["set_range", "click"]
    assert restore_steps(STEPS, cursor=6, gates=["nothing_like_it"]) == []
    everything = restore_steps(STEPS, cursor=6, gates=[])
    assert [s["tool"] for s in everything] == ["goto", "select", "set_range", "check", "click"]


def test_steps_follow_the_walkthrough_and_resume_from_message_ids():
    model = ScriptedChatModel(steps=STEPS)
    messages = history(model, 3)
    assert [m.tool_calls[0]["id"] for m in messages if isinstance(m, AIMessage)] == ["wt-0", "wt-1", "wt-2"]
    fresh = ScriptedChatModel(steps=STEPS)  # a resumed run: a new model instance, the old history
    assert actor_call(fresh, [*messages, HumanMessage("OBSERVATION")])["name"] == "check"


def turn(text: str, **state) -> HumanMessage:
    """An actor turn: its text, and the tracked state as data (what the policy reads)."""
    return HumanMessage(text, additional_kwargs={STATE_KEY: {"drift_flags": [], "repair_goal": None, "repairs": 0,
                                                             **state}})


FLAG = {"rule": "navigation_reset", "gate": "company", "label": "Company", "before": "Bluestem", "after": None,
        "step": 6, "path": "/r", "message": "Company was reset"}


def test_drift_flag_makes_it_restore_the_gate_once_then_continue():
    model = ScriptedChatModel(steps=STEPS)
    messages = history(model, 6)
    flagged = turn("any wording at all", drift_flags=[FLAG])
    calls = []
    for _ in range(3):
        call = actor_call(model, [*messages, flagged])
        calls.append((call["id"], call["name"]))
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    assert calls == [("rp-1-0", "select"), ("rp-1-1", "click"), ("wt-6", "extract_rows")]


def test_prompt_wording_alone_changes_nothing():
    """The policy reacts to state, not text: a turn that only *says* DRIFT FLAGS / REPAIR GOAL is ignored."""
    model = ScriptedChatModel(steps=STEPS)
    messages = history(model, 6)
    wording = turn('DRIFT FLAGS:\n- [navigation_reset] gate=company label="Company" before=Bluestem after=None: x\n'
                   "REPAIR GOAL: [pages] page(s) [2] were not read")
    assert actor_call(model, [*messages, wording])["id"] == "wt-6"


def test_verifier_repair_goal_for_pages_reads_all_pages_and_extracts_again():
    model = ScriptedChatModel(steps=STEPS)
    messages = history(model, 8)
    sent_back = turn("OBSERVATION", repair_goal="[pages] result set /r has 2 pages but page(s) [2] were not read",
                     repairs=1)
    names = []
    for _ in range(3):
        call = actor_call(model, [*messages, sent_back])
        names.append((call["name"], call["args"].get("all_pages")))
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    assert names == [("read_table", True), ("extract_rows", None), ("finish", None)]


def test_offline_walkthroughs_load_with_the_running_origin():
    steps = load_walkthrough("offline_vulns_001-g", origin="http://127.0.0.1:1234")
    assert steps[0]["tool"] == "goto" and steps[0]["args"]["url"].startswith("http://127.0.0.1:1234/")
    assert all("why" not in s for s in steps)
