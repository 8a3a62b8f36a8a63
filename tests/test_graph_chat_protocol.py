"""The history the actor sends is valid under OpenAI's chat rules, whichever node answered each call: checked
through the real `ChatOpenAI` client against the strict fake server (HTTP 400 as OpenAI words it), and by the
state's own reducer, which refuses an update that breaks the rules."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.models.fake_server import FakeOpenAIServer
from agent.models.openai_rules import request_errors
from graph.chat_protocol import ChatProtocolError, chat_history, message_turns, violations
from graph.context import fit_window
from graph.nodes.common import history_window
from tests.test_model_robustness import OBSERVATION, actor_with, state

PLAN = {"source": "the search page", "gates": [{"kind": "filter", "name": "severity", "target": "HIGH"}],
        "read": {"id": "record id"}}


def call(name: str, args: dict, id_: str) -> dict:
    return {"name": name, "args": args, "id": id_, "type": "tool_call"}


def advance(current: dict, update: dict) -> dict:
    """As LangGraph merges an update: messages through the state's reducer."""
    return {**current, **update, "messages": chat_history(current["messages"], update.get("messages", []))}


def test_the_rules_name_each_break_as_openai_does():
    ok = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
          {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": {"name": "goto"}},
                                                              {"id": "b", "function": {"name": "click"}}]},
          {"role": "tool", "tool_call_id": "b", "content": "refused"}, {"role": "tool", "tool_call_id": "a",
                                                                         "content": "ok"},
          {"role": "user", "content": "next"}]
    assert request_errors({"messages": ok}) == []
    orphan = ok[:2] + [{"role": "tool", "tool_call_id": "a", "content": "plan revised"}, ok[-1]]
    assert request_errors({"messages": orphan})[0].startswith(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
    unanswered = ok[:4] + [ok[-1]]
    assert "did not have response messages: a" in request_errors({"messages": unanswered})[0]
    duplicate = ok[:5] + [ok[2], *ok[3:5], ok[-1]]
    assert "Duplicate value for 'tool_call_id' of a" in request_errors({"messages": duplicate})[0]
    assert request_errors({"messages": ok[:3]})  # a call open at the end of a request
    assert request_errors({"messages": []}) == ["[] is too short - 'messages'"]


def test_the_state_refuses_a_tool_message_without_its_call():
    history = [AIMessage("", tool_calls=[call("goto", {"url": "http://x/"}, "c1")]),
               ToolMessage("ok=True", tool_call_id="c1")]
    with pytest.raises(ChatProtocolError, match="preceeding message with 'tool_calls'"):
        chat_history(history, [ToolMessage("plan revised", tool_call_id="c2")])
    with pytest.raises(ChatProtocolError, match="did not have response messages: c3"):
        chat_history(history, [AIMessage("", tool_calls=[call("goto", {}, "c3")]), HumanMessage("next")])
    # a call may stay open while its node runs: the executor answers it next
    assert len(chat_history(history, [AIMessage("", tool_calls=[call("goto", {}, "c4")])])) == 3


@pytest.mark.parametrize("tool, args", [
    ("revise_plan", {"plan": PLAN, "reason": "the site calls it severity"}),
    ("discard_rows", {"all_rows": True, "note": "read in the wrong state"}),
])
async def test_bookkeeping_calls_keep_their_call_before_their_answer(tool, args):
    """revise_plan and discard_rows are answered by the actor itself; the old update replaced the assistant
    message by its answer (a `tool` message with no call: HTTP 400 at the next request)."""
    extra = {"name": "scroll", "arguments": {}}
    replies = [{"tool_calls": [{"name": tool, "arguments": args}, extra]}, {"content": "done"}]
    with FakeOpenAIServer(replies) as fake:
        actor, current = actor_with(fake), state(observation=OBSERVATION)
        first = await actor(current)
        current = advance(current, first)
        second = await actor(current)
    ai, answer, refused = first["messages"]
    assert isinstance(ai, AIMessage) and [c["name"] for c in ai.tool_calls] == [tool, "scroll"]
    assert answer.tool_call_id == ai.tool_calls[0]["id"] and refused.tool_call_id == ai.tool_calls[1]["id"]
    assert fake.rejected == [] and len(fake.requests) == 2 and not second.get("stop_reason")
    wire = fake.requests[1]["messages"]
    assert [m["role"] for m in wire[-4:]] == ["assistant", "tool", "tool", "user"]


def test_history_windows_keep_every_call_with_its_answers():
    history: list = []
    for i in range(30):
        calls = [call("click", {"target": {"text": f"Row {i}"}}, f"c{i}")] + (
            [call("scroll", {}, f"x{i}")] if i % 3 == 0 else [])
        history = chat_history(history, [AIMessage("", tool_calls=calls),
                                         *[ToolMessage("ok=True\n" + "cell | " * 200, tool_call_id=c["id"])
                                           for c in reversed(calls)]])
        if i % 7 == 0:
            history = chat_history(history, [AIMessage("I think"), HumanMessage("reply with one tool call")])
    turn = HumanMessage("TASK ... OBSERVATION ...")
    for turns in (1, 2, 5, 12, 40):
        for context in (None, 2048, 4096, 8192):
            window = fit_window(history_window(history, turns), head=[], turn=turn, tools=[],
                                context_tokens=context, whole=2)
            assert violations(message_turns([*window.messages, turn])) == [], (turns, context)

