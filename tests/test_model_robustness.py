"""What real models emit, through the real `ChatOpenAI` wire path (fake OpenAI-compatible server) into the
actor node: every imperfect reply is answered, counted and bounded; the prompt fits the context window;
an ablated node takes its prompt parts and tools with it."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.clients.chat import make_chat_model
from agent.config import ModelConfig
from agent.measuring.fake_server import FakeOpenAIServer
from agent.solve import initial_state
from browser.tokens import count_tokens
from graph.model_io.policy import ChatPolicy
from graph.model_io.robust import PROSE_FEEDBACK, tool_reply
from graph.nodes import Deps, make_actor
from tasks.loaders import load_tasks

TASK = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_vulns_001"])[0]
OBSERVATION = {
    "url": "http://127.0.0.1:9/vulns/search", "title": "Search", "page_id": 1,
    "controls": [{"ref": f"e{i}", "kind": "select", "label": f"Filter {i}", "options": [{"label": "A", "value": "a"}]}
                 for i in range(1, 6)],
    "links": [{"ref": "e7", "text": "Next", "href": "/vulns/search?page=2"}], "tables": [],
}


def actor_with(fake: FakeOpenAIServer, ablated: frozenset[str] = frozenset(), **model: object):
    config: ModelConfig = fake.model_config(**model)
    deps = Deps(browser=None, policy=ChatPolicy(make_chat_model(config, "t")), model_config=config,
                spec=TASK.output_spec, ablated=ablated)
    return make_actor(deps)


def state(**extra: object) -> dict:
    base = dict(initial_state(TASK.solver_view(), time.time()), messages=[])
    return {**base, **extra}


def advance(current: dict, update: dict) -> dict:
    return {**current, **update, "messages": current["messages"] + update.get("messages", [])}


def goto(url: str = "http://127.0.0.1:9/vulns/search") -> dict:
    return {"tool_calls": [{"name": "goto", "arguments": {"url": url}}]}


async def test_prose_gets_one_corrective_message_then_counts_as_failed_steps():
    prose = {"content": "I will now open the search page and look for the vulnerabilities."}
    with FakeOpenAIServer([prose, prose, prose]) as fake:
        actor, current = actor_with(fake), state()
        first = await actor(current)
        assert first["messages"][-1] == HumanMessage(PROSE_FEEDBACK) and first["invalid_calls"] == 1
        assert first.get("pending") is None and not first.get("stop_reason")
        current = advance(current, first)
        second = await actor(current)
        current = advance(current, second)
        third = await actor(current)
    assert third["stop_reason"] == "error" and third["invalid_calls"] == 3
    assert third["errors"][0]["error_class"] == "invalid_tool_call"
    # the corrective message went over the wire as a user turn after the assistant's prose
    wire = fake.requests[1]["messages"]
    assert [m["role"] for m in wire[-3:]] == ["assistant", "user", "user"] and wire[-2]["content"] == PROSE_FEEDBACK


async def test_several_tool_calls_run_the_first_and_refuse_the_rest():
    reply = {"tool_calls": [{"name": "goto", "arguments": {"url": "http://127.0.0.1:9/a"}},
                            {"name": "scroll", "arguments": {}}]}
    with FakeOpenAIServer([reply]) as fake:
        update = await actor_with(fake)(state())
    assert update["pending"]["name"] == "goto"
    [refused] = [m for m in update["messages"] if isinstance(m, ToolMessage)]
    assert refused.content == "refused: one tool call per turn; only goto was run"


async def test_arguments_that_are_not_json_are_answered_with_the_parse_error_over_a_valid_conversation():
    broken = {"tool_calls": [{"name": "goto", "arguments": '{"url": "http://127.0.0.1:9/a'}]}
    with FakeOpenAIServer([broken, goto()]) as fake:
        actor, current = actor_with(fake), state()
        first = await actor(current)
        reply = first["messages"][-1]
        assert isinstance(reply, ToolMessage) and "not valid JSON" in reply.content and first["invalid_calls"] == 1
        second = await actor(advance(current, first))
    assert second["pending"]["name"] == "goto" and second["invalid_streak"] == 0
    wire = fake.requests[1]["messages"]  # the broken call and its answer are sent back as a well-formed pair
    assert wire[-3]["role"] == "assistant" and wire[-3]["tool_calls"][0]["function"]["arguments"].startswith('{"url"')
    assert wire[-2]["role"] == "tool" and wire[-2]["tool_call_id"] == wire[-3]["tool_calls"][0]["id"]


async def test_schema_violations_are_answered_with_the_validation_error():
    with FakeOpenAIServer([{"tool_calls": [{"name": "select", "arguments": {"target": {"label": "Vendor"}}}]}]) as fake:
        update = await actor_with(fake)(state(observation=OBSERVATION))
    assert update["messages"][-1].content.startswith("INVALID TOOL CALL: invalid arguments for select: option: Field "
                                                     "required")
    assert update["invalid_calls"] == 1 and update["pending"] is None


async def test_unknown_refs_are_answered_with_the_nearest_valid_refs():
    call = {"tool_calls": [{"name": "click", "arguments": {"target": {"ref": "e9"}}}]}
    with FakeOpenAIServer([call]) as fake:
        update = await actor_with(fake)(state(observation=OBSERVATION))
    text = update["messages"][-1].content
    assert text.startswith("INVALID TOOL CALL: ref 'e9' is not on the current page. Nearest valid refs: e7 = link "
                           "'Next', e5 = select 'Filter 5'")
    assert update["pending"] is None and update["invalid_calls"] == 1


async def test_a_repeated_failing_action_is_refused_then_stops_the_run():
    args = {"target": {"text": "Apply"}}
    history = []
    for i in range(2):  # two earlier identical clicks that failed in the browser
        history += [AIMessage("", tool_calls=[{"name": "click", "args": args, "id": f"old{i}", "type": "tool_call"}]),
                    tool_reply("ok=False error=not_found: no element with text='Apply'", f"old{i}", failed=True)]
    again = {"tool_calls": [{"name": "click", "arguments": args}]}
    with FakeOpenAIServer([again, again]) as fake:
        actor, current = actor_with(fake), state(observation=OBSERVATION, messages=history)
        third = await actor(current)
        assert "already failed or changed nothing 2 time(s)" in third["messages"][-1].content and third["pending"] is None
        fourth = await actor(advance(current, third))
    assert fourth["stop_reason"] == "repeated_failure"


async def test_the_prompt_fits_the_context_window_and_older_steps_are_summarised():
    history = []
    for i in range(12):
        history += [AIMessage("", tool_calls=[{"name": "click", "args": {"target": {"text": f"Row {i}"}},
                                               "id": f"h{i}", "type": "tool_call"}]),
                    ToolMessage("ok=True\n" + "long table line | value | value | value\n" * 100, tool_call_id=f"h{i}")]
    with FakeOpenAIServer([goto()]) as fake:
        update = await actor_with(fake, context_tokens=4096)(state(observation=OBSERVATION, messages=history))
    sent = fake.requests[0]
    counted = sum(count_tokens(str(m.get("content") or "")) + 4 for m in sent["messages"])
    counted += count_tokens(str(sent["tools"]).replace("'", '"'))
    assert counted <= 4096
    assert update["context_trims"] == 1 and update["pending"]["name"] == "goto"
    summary = next(m["content"] for m in sent["messages"] if str(m.get("content", "")).startswith("EARLIER STEPS"))
    assert 'click({"target":{"text":"Row 7"}}) -> ok=True' in summary  # one line per step, the last 4 of them
    assert "(7 earlier steps not shown)" in summary and "Row 6" not in summary
    assert sent["messages"][-1]["content"].startswith(("TODAY:", "TASK:"))  # the current turn is always sent whole
    with FakeOpenAIServer([goto()]) as fake:  # no context_tokens configured: nothing is trimmed
        update = await actor_with(fake)(state(observation=OBSERVATION, messages=history))
    assert update["context_trims"] == 0


@pytest.mark.parametrize(("ablated", "gone_text", "gone_tools"), [
    ("planner", ["of the plan"], {"revise_plan"}),
    ("state_tracker", ["DRIFT FLAGS"], set()),
    ("verifier", ["REPAIR GOAL"], set()),
    ("provenance", ["Rows keep their URL"], set()),
])
async def test_an_ablated_node_takes_its_prompt_parts_and_tools_with_it(ablated, gone_text, gone_tools):
    rows = [{"values": {"cve_id": "X"}, "provenance": {"step": 1, "locator": "table 0 row 0", "url": "u"}}]
    current = state(observation=OBSERVATION, rows=rows, last_read={"table": {}},  # a plan gate not found yet:
                    plan={"source": "s", "gates": [{"kind": "filter", "name": "Severity", "target": {"value": "High"}}],
                          "read": {}, "row_criteria": {}, "all_pages": True, "detail_pages": False,
                          "stopping_rule": "done"},  # revise_plan is offered (graph/tools/offers.py)
                    retrieval={"url": OBSERVATION["url"], "path": "/vulns/search", "values": {}, "page": None,
                               "pages": None, "result_count": None, "step": 1})
    with FakeOpenAIServer([goto(), goto()]) as fake:
        await actor_with(fake)(current)
        await actor_with(fake, frozenset({ablated}))(current)
    (full, cut) = fake.requests
    full_tools = {t["function"]["name"] for t in full["tools"]}
    cut_tools = {t["function"]["name"] for t in cut["tools"]}
    assert full_tools - cut_tools == gone_tools
    for text in gone_text:
        assert text in full["messages"][0]["content"] and text not in cut["messages"][0]["content"]
    others = {"planner": "of the plan", "state_tracker": "DRIFT FLAGS", "verifier": "REPAIR GOAL",
              "provenance": "Rows keep their URL"}
    for node, text in others.items():  # switching one node off leaves every other node's instructions
        if node != ablated:
            assert text in cut["messages"][0]["content"]


async def test_tools_follow_the_phase_and_the_page():
    with FakeOpenAIServer([goto(), goto()]) as fake:
        await actor_with(fake)(state())
        await actor_with(fake)(state(observation=OBSERVATION))
    before, on_page = ({t["function"]["name"] for t in r["tools"]} for r in fake.requests)
    assert before == {"goto", "revise_plan"}
    assert {"select", "click", "finish"} <= on_page and not on_page & {"fill", "set_range", "extract_rows",
                                                                        "discard_rows", "read_pdf"}
