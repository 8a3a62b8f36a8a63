"""The history the actor sends is valid under OpenAI's chat rules, whichever node answered each call: checked
through the real `ChatOpenAI` client against the strict fake server (HTTP 400 as OpenAI words it), and by the
state's own reducer, which refuses an update that breaks the rules."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.measuring.fake_server import FakeOpenAIServer
from agent.measuring.openai_rules import request_errors
from graph.model_io.chat_protocol import ChatProtocolError, chat_history, message_turns, violations
from graph.nodes.common import history_window
from graph.prompting.context import fit_window
from tests.test_model_robustness import OBSERVATION, actor_with, state

PLAN = {"source": "the search page", "gates": [{"kind": "filter", "name": "severity", "target": {"value": "HIGH"}}],
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



ALL_TOOLS_STEPS = [
    ("goto", {"url": "{origin}/vulns/search"}), ("fill", {"target": {"shown_label": "Keyword"}, "value": "local user"}),
    ("list_options", {"target": {"shown_label": "Severity"}}),
    ("select", {"target": {"shown_label": "Severity"}, "option": "MEDIUM"}),
    ("check", {"target": {"shown_label": "Keyword"}}),  # not a checkbox: the browser's error is the answer
    ("set_range", {"start_target": {"shown_label": "Date range: From date"}, "end_target": {"shown_label":
                   "Date range: To date"}, "start": "2021-01-01", "end": "2021-06-30"}),
    ("select", {"target": {"shown_label": "Date range: Date type"}, "option": "Published"}),
    ("press", {"key": "Tab"}), ("submit", {"target": {"shown_label": "Search"}}), ("scroll", {"direction": "down"}),
    ("wait_for", {"network_idle": True}), ("list_links", {"contains": "OVR"}), ("read_section", {"heading": "Results"}),
    ("read_table", {"table": 0, "all_pages": True}),
    ("extract_rows", {"columns": {"id": "ID", "published": "Published", "weakness": "Weakness"}}),
    ("discard_rows", {"all_rows": True}), ("revise_plan", {"plan": PLAN, "reason": "the site calls it severity"}),
    ("set_url_params", {"params": {"severity": "MEDIUM"}}), ("read_table", {"table": 0, "all_pages": True}),
    ("extract_rows", {"columns": {"id": "ID", "published": "Published", "weakness": "Weakness"}}),
    ("download", {"target": {"text": "CSV"}}), ("read_pdf", {"url": "{origin}/vulns/none.pdf"}),
    ("read_facts", {"into": "facts", "fields": {"id": "ID"}, "url": "{origin}/vulns/search"}),
    ("derive", {"sql": "select count(*) as n from facts", "into": "counts"}),
    ("click", {"target": {"text": "Next"}}), ("back", {}),
    ("finish", {"order_by": ["published", "id"]}),
]


@pytest.mark.slow
async def test_every_tool_and_every_kind_of_reply_keeps_the_history_valid(offline_server, chromium_worker, tmp_path):
    """A policy that calls every tool (browser actions, extraction, the workspace, revise_plan, discard_rows,
    finish), with extra calls in one reply, arguments that are not JSON and prose, run through the real
    `ChatOpenAI` client: the strict server rejects nothing and the state never refuses an update."""
    from agent.config import AgentVariant
    from agent.measuring.paths.path import DecisionPath
    from agent.measuring.paths.replay import PathPolicy, replay_protocol
    from agent.solve import solve_task
    from graph.tools.tool_schemas import tool_schemas
    from tasks.loaders import load_tasks

    path = DecisionPath(task="offline_vulns_003", plan=PLAN,
                        steps=[{"tool": t, "args": a} for t, a in ALL_TOOLS_STEPS]).with_origin(offline_server.origin)
    task = load_tasks("offline", origin=offline_server.origin, task_ids=[path.task])[0]
    odd = {3: {"content": "Let me think about the severity filter first."},
           6: {"tool_calls": [{"name": "scroll", "arguments": '{"direction": "do'}]},
           9: {"tool_calls": [{"name": "scroll", "arguments": {}}, {"name": "back", "arguments": {}},
                              {"name": "goto", "arguments": '{"url'}]}}
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        policy = PathPolicy(path, lambda: browser.last_observation)
        actor_requests = 0

        def respond(body: dict) -> dict:
            nonlocal actor_requests
            if body.get("tool_choice") != "auto":
                return policy(body)
            actor_requests += 1
            return odd.get(actor_requests) or policy(body)

        with FakeOpenAIServer(respond) as fake:
            outcome = await solve_task(task, browser=browser, model=fake.model_config(), protocol=replay_protocol(path),
                                       variant=AgentVariant(name="full"),
                                       out_dir=tmp_path)
    assert outcome.error_kind != "bug", outcome.traceback
    assert fake.rejected == [] and policy.next == len(path.steps), (fake.rejected, policy.next, outcome.stop_reason)
    called = {c["function"]["name"] for body in fake.requests for m in body["messages"] for c in m.get("tool_calls") or []}
    offered = {t["function"]["name"] for t in tool_schemas(search=False)}
    assert offered <= called | {"Plan"}, offered - called
    # the run becomes its path again: each target the policy gave by ref comes back as the label shown
    from agent.measuring.paths.record import path_from_run

    recorded = path_from_run(tmp_path)
    by_label = [a["target"] for t, a in ALL_TOOLS_STEPS if t in ("fill", "select", "submit")]
    assert [s.args["target"] for s in recorded.steps if s.tool in ("fill", "select", "submit")] == by_label
    assert recorded.steps[0].args == {"url": "{origin}/vulns/search"} and not getattr(recorded, "unmapped", None)
