"""The actor node on its own: tool-call validation feedback, bounded retries, bookkeeping tools, extra calls."""

from __future__ import annotations

import time

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.config import ModelConfig
from agent.solve import initial_state
from graph.evidence.evidence_tables import append_rows
from graph.model_io.policy import ChatPolicy
from graph.nodes import Deps, make_actor
from graph.state import EvidenceRow, Provenance
from tasks.loaders import load_tasks

TASK = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_vulns_001"])[0]


class ToolFake(GenericFakeChatModel):
    """Replies with the queued AI messages; binding tools is a no-op (the replies are fixed)."""

    def bind_tools(self, tools, **kwargs):
        return self


def call(name: str, args: dict, ident: str) -> dict:
    return {"name": name, "args": args, "id": ident, "type": "tool_call"}


def actor_for(*replies: AIMessage):
    deps = Deps(browser=None, policy=ChatPolicy(ToolFake(messages=iter(replies))), model_config=ModelConfig(name="fake"),
                spec=TASK.output_spec)
    return make_actor(deps)


def start_state() -> dict:
    return dict(initial_state(TASK.solver_view(), time.time()), messages=[])


async def test_invalid_call_is_answered_with_the_validation_error_and_bounded():
    bad = [AIMessage("", tool_calls=[call("select", {"target": {"label": "Vendor"}}, f"c{i}")]) for i in range(3)]
    actor, state = actor_for(*bad), start_state()
    for i in range(3):
        update = await actor(state)
        reply = update["messages"][-1]
        assert isinstance(reply, ToolMessage) and reply.tool_call_id == f"c{i}"
        assert reply.content.startswith("INVALID TOOL CALL: invalid arguments for select: option: Field required")
        state = {**state, **update, "messages": state["messages"] + update["messages"]}
    assert state["invalid_streak"] == 3 and state["stop_reason"] == "error"
    assert update["errors"][0]["kind"] == "agent" and update["errors"][0]["error_class"] == "invalid_tool_call"


async def test_text_reply_and_unknown_order_column_are_fed_back():
    actor = actor_for(AIMessage("I think the answer is 42"),
                      AIMessage("", tool_calls=[call("finish", {"order_by": ["severity"]}, "f1")]))
    first = await actor(start_state())
    assert isinstance(first["messages"][-1], HumanMessage) and "no tool call" in first["messages"][-1].content
    second = await actor(start_state())
    assert "order_by column 'severity' is not in the schema" in second["messages"][-1].content
    assert second["pending"] is None and "stop_reason" not in second


async def test_only_the_first_of_several_calls_runs():
    actor = actor_for(AIMessage("", tool_calls=[call("scroll", {}, "a"), call("back", {}, "b")]))
    update = await actor(start_state())
    assert update["pending"]["name"] == "scroll" and update["pending"]["id"] == "a"
    assert [(m.tool_call_id, m.content) for m in update["messages"][1:]] == [("b", "refused: one tool call per turn; only scroll was run")]


def evidence(ident: str, step: int) -> EvidenceRow:
    return EvidenceRow(values={"id": ident, "published": "2021", "score": "7"}, provenance=Provenance(
        url="u", state={}, drift=[], locator=f"row {ident}", result_set="/r", page=1, pages=1, step=step))


async def test_discard_rows_and_revise_plan_change_only_the_agent_state():
    rows = [evidence("a", 3), evidence("b", 3), evidence("c", 7)]
    new_plan = {"gates": [{"kind": "filter", "name": "Severity", "target": {"value": "HIGH"}}], "all_pages": False}
    actor = actor_for(AIMessage("", tool_calls=[call("discard_rows", {"from_step": 3}, "d1")]),
                      AIMessage("", tool_calls=[call("discard_rows", {"where": {"id": "C"}}, "d2")]),
                      AIMessage("", tool_calls=[call("revise_plan", {"plan": new_plan, "reason": "site differs"}, "p1")]))
    state = {**start_state(), "tables": {"answer": append_rows(None, "answer", ["id", "published", "score"], rows,
                                                                 None, 7)}}
    by_step = await actor(state)
    assert [r["values"]["id"] for r in by_step["tables"]["answer"]["rows"]] == ["c"] and by_step["pending"] is None
    assert by_step["messages"][-1].content == "discarded 2 row(s); 1 left"
    by_value = await actor(state)
    assert [r["values"]["id"] for r in by_value["tables"]["answer"]["rows"]] == ["a", "b"]
    revised = await actor(state)
    assert revised["plan"]["gates"][0]["target"] == {"value": "HIGH"} and revised["plan"]["all_pages"] is False
    assert revised["messages"][-1].content == "plan revised: site differs"
