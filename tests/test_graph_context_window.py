"""The observation is rendered when the prompt is built, within the room the prompt has left (issue 26 stage 7).

A model with a short window (`context_tokens: 2048`) gets prompts that fit it: the browser's observation is laid
out again within what is left after the system prompt, the tools, the history and the turn's state part (itself
abbreviated, with a line counting what it left out, when the window is shorter still), instead of being sent
whole at the worker's budget. A window too short for the smallest prompt is a one-line error, never an
overflow. Counted on the requests the fake server received through the real `ChatOpenAI` client. A context trim
is counted only when something sent was cut.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from agent.clients.chat import make_chat_model
from agent.config import AgentVariant, Budgets, ProtocolConfig
from agent.measuring.fake_server import FakeOpenAIServer
from agent.solve import initial_state, solve_task
from browser.render import DEFAULT_BUDGET, render
from browser.tokens import count_tokens
from browser.types import CellLink, Control, Observation, Option, TableData
from graph.evidence.evidence_tables import ANSWER, new_table
from graph.model_io.policy import ChatPolicy
from graph.nodes import Deps, make_actor
from graph.prompting.context import COMPLETION_RESERVE, TOKENIZER_MARGIN
from tasks.loaders import load_tasks

pytestmark = pytest.mark.asyncio(loop_scope="session")
# A short window: the tool schemas and a page that does not fit whole. 2,048 until revise_plan's summary named the
# typed target shapes (issue 37) and select gained its multi-select mode (issue 38): the schemas grew and the e0
# line collapsed one token short of the room, so the window keeps a margin over what it must hold
# (the assertions name what a short window must do, not which control collapses first).
WINDOW = 2304


def sent_tokens(request: dict) -> int:
    """A request's prompt as the project counts it (graph/prompting/context.py): each message's text and tool calls plus
    its role overhead, and the tool schemas."""
    total = count_tokens(json.dumps(request.get("tools") or [], separators=(",", ":")))
    for message in request["messages"]:
        total += 4 + count_tokens(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            total += count_tokens(call["function"]["name"] + call["function"]["arguments"])
    return total


def _task():
    return load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_vulns_001"])[0]


def _page(rows: int, filters: int = 6) -> dict:
    """A result page as the browser sends it: its filters, a table of `rows` rows, each linking to its detail page."""
    controls = [Control(ref=f"e{i}", kind="select", label=f"Filter {i}", value="Any",
                        options=[Option(label=f"Value {j}", value=str(j)) for j in range(8)]) for i in range(filters)]
    table = TableData(index=0, headers=["ID", "Vendor", "Severity", "Published"], total_rows=rows,
                      rows=[[f"CVE-2024-{1000 + r}", f"Vendor {r % 7}", "High", f"2024-03-{r % 28 + 1:02d}"]
                            for r in range(rows)],
                      cell_links=[[[CellLink(text=f"CVE-2024-{1000 + r}", href=f"http://127.0.0.1:9/v/{r}",
                                             ref=f"e{100 + r}")], [], [], []] for r in range(rows)])
    obs = Observation(url="http://127.0.0.1:9/vulns/search?severity=high", query_state={"severity": ["high"]},
                      title="Search", controls=controls, tables=[table], page_id=1)
    return obs.model_dump()


def whole_text(page: dict) -> str:
    """The page's text at the worker's budget (what a prompt with room for it shows)."""
    return render(Observation.model_validate(page), 1500).text


def _actor(fake: FakeOpenAIServer, **model: object):
    config = fake.model_config(**model)
    task = _task()
    deps = Deps(browser=None, policy=ChatPolicy(make_chat_model(config, "t")), model_config=config,
                spec=task.output_spec)
    state = dict(initial_state(task.solver_view(), time.time()), messages=[])
    return make_actor(deps), state


def named_refs(text: str) -> set[str]:
    """Every ref the text names, a collapsed line's run 'e2-e5' included."""
    refs = set(re.findall(r"\be\d+\b", text))
    for start, end in re.findall(r"\be(\d+)-e(\d+)\b", text):
        refs |= {f"e{n}" for n in range(int(start), int(end) + 1)}
    return refs


GOTO = {"tool_calls": [{"name": "goto", "arguments": {"url": "http://127.0.0.1:9/vulns/search"}}]}


async def test_a_short_window_gets_the_observation_laid_out_within_what_is_left():
    page = _page(120)
    assert count_tokens(whole_text(page)) > 1200  # the page at the worker's budget would fill most of the window
    with FakeOpenAIServer([GOTO, GOTO]) as fake:
        actor, state = _actor(fake, context_tokens=WINDOW)
        update = await actor({**state, "observation": page})
        wide, _ = _actor(fake)  # no window configured: the browser's rendering as it is
        whole = await wide({**state, "observation": page})
    short, full = fake.requests
    assert sent_tokens(short) <= WINDOW < sent_tokens(full)
    assert update["context_trims"] == 1 and whole["context_trims"] == 0
    seen = short["messages"][-1]["content"]
    assert whole_text(page) not in seen and whole_text(page) in full["messages"][-1]["content"]
    # laid out again by the renderer, not chopped: every filter by ref (a line each or a collapsed line naming its
    # refs and read), the table with a note saying where its rows are; the reads its notes name are offered with
    # it (their schemas are part of the prompt the room was decided in, so the text is shorter than the bare room)
    assert {f"e{i}" for i in range(6)} <= named_refs(seen) and "rows of TABLE 0 not shown — read_table 0" in seen
    offered = {tool["function"]["name"] for tool in short["tools"]}
    assert re.search(r"list_options e\d+ lists them", seen) and {"list_options", "read_table"} <= offered
    assert "list_options" not in {tool["function"]["name"] for tool in full["tools"]}  # whole: nothing to list
    assert seen.rstrip().endswith("END OBSERVATION")


async def test_a_page_that_fits_the_room_left_is_sent_as_it_is_and_no_trim_is_counted():
    """The prompt with the page at the worker's budget is over the window's limit, so the observation is given only
    what is left; a small page fits that as it is: nothing was cut, so no trim is counted (the budget was lowered,
    the text is the same). The window is set from the prompt measured without one (200 tokens of room beyond the
    page), so the test says the same whatever the system prompt and tools weigh."""
    page = _page(1, filters=2)
    with FakeOpenAIServer([GOTO, GOTO]) as fake:
        wide, state = _actor(fake)
        await wide({**state, "observation": page})
        window = int((sent_tokens(fake.requests[0]) + 200 + COMPLETION_RESERVE) / TOKENIZER_MARGIN) + 1
        fixed = sent_tokens(fake.requests[0]) - count_tokens(whole_text(page))  # all but the page
        actor, _ = _actor(fake, context_tokens=window)
        update = await actor({**state, "observation": page})
    room = int(window * TOKENIZER_MARGIN) - COMPLETION_RESERVE - fixed
    assert room < DEFAULT_BUDGET  # the observation's budget was lowered
    assert sent_tokens(fake.requests[1]) <= window and whole_text(page) in fake.requests[1]["messages"][-1]["content"]
    assert update["context_trims"] == 0


def _rich(state: dict) -> dict:
    """A state with a long state part: a plan of several gates and phases, rows read, a table, a repair goal."""
    plan = {"source": "vulnerability search", "all_pages": True, "detail_pages": True,
            "gates": [{"kind": "filter", "name": f"Filter {i}", "target": {"value": f"Value {i}"}} for i in range(6)],
            "phases": [{"read": f"every listed record, part {i}, read on its own page with all of its fields",
                        "into": f"part_{i}", "detail_pages": True} for i in range(4)],
            "derivation": "join every part on the record id, keep the records whose vendor is listed twice " * 3}
    columns = ["id", "published", "score"]
    rows = [{"values": {"id": f"CVE-2024-{1000 + r}", "published": "2024-03-01", "score": "7.5"},
             "provenance": {"url": "", "state": None, "drift": [], "locator": f"table 0 row {r}", "result_set": "",
                            "page": None, "pages": None, "step": 3}} for r in range(4)]
    answer = {**new_table(ANSWER, columns), "rows": rows}  # the rows extract_rows read into the answer table
    return {**state, "plan": plan, "tables": {ANSWER: answer}, "step": 7,
            "repair_goal": "open each listed record's own page and extract_rows there (3 of 4 not opened)"}


async def test_a_turn_too_long_for_the_window_keeps_what_the_model_acts_on_and_counts_what_it_left_out():
    """A 3,072-token window: the plan, the rows and the repair goal leave the page less than its minimum, so the
    state part is abbreviated (in a 2,048 window this turn cannot fit at all: the next test's error)."""
    page, window = _page(120), 3072
    with FakeOpenAIServer([GOTO, GOTO]) as fake:
        actor, state = _actor(fake, context_tokens=window)
        update = await actor(_rich({**state, "observation": page}))
        wide, _ = _actor(fake)
        await wide(_rich({**state, "observation": page}))
    short, full = fake.requests
    assert sent_tokens(short) <= window < sent_tokens(full) and update["context_trims"] == 1
    seen, whole = short["messages"][-1]["content"], full["messages"][-1]["content"]
    assert "phase 3" in whole and "- CVE-2024-1003 |" in whole and "LEFT OUT" not in whole
    assert "TASK: " in seen and "REPAIR GOAL: open each listed record's own page" in seen and "BUDGET: step 7" in seen
    assert "phase 3" not in seen and "CVE-2024-1003 | 2024" not in seen
    assert "LEFT OUT (short context window): 2 last row(s); the plan (6 gate(s), 4 phase(s))" in seen
    assert "[e0] " in seen and seen.rstrip().endswith("END OBSERVATION")  # a page still shown, by ref


async def test_a_window_too_short_for_the_smallest_prompt_is_a_one_line_error_never_an_overflow():
    with FakeOpenAIServer([GOTO]) as fake:
        actor, state = _actor(fake, context_tokens=1024)
        update = await actor({**state, "observation": _page(120)})
    assert fake.requests == []  # nothing sent
    (error,) = update["errors"]
    assert update["stop_reason"] == "error" and error["kind"] == "config"
    assert error["message"].startswith("context_tokens=1024 is too small") and "\n" not in error["message"]


WALK = [("goto", {"url": "{start}"}),
        ("check", {"target": {"label": "Include deprecated product identifiers"}}),
        ("select", {"target": {"label": "Product"}, "option": "arcturus:router_os"}),
        ("select", {"target": {"label": "Severity"}, "option": "HIGH"}),
        ("select", {"target": {"label": "Date type"}, "option": "Published"}),
        ("set_range", {"start_target": {"label": "From date"}, "end_target": {"label": "To date"},
                       "start": "2021-01-01", "end": "2022-12-31"}),
        ("click", {"target": {"text": "Search"}}),
        ("read_table", {"table": 0, "all_pages": True}),
        ("extract_rows", {"columns": {"id": "ID", "published": "Published", "score": "Score"}}),
        ("finish", {"order_by": ["published", "id"]})]


async def _run(task, browser, tmp_path, **model: object) -> tuple[list[dict], int]:
    replies = [{"tool_calls": [{"name": name, "arguments": json.loads(json.dumps(args).replace(
        "{start}", task.start_url))}]} for name, args in WALK]
    finish = replies[-1]
    protocol = ProtocolConfig(budgets=Budgets(max_steps=16, wall_seconds=600))
    with FakeOpenAIServer(replies, fallback=finish) as fake:
        outcome = await solve_task(task, browser=browser, model=fake.model_config(**model),
                                   variant=AgentVariant(name="no-planner", ablate=["planner"]), protocol=protocol,
                                   out_dir=tmp_path)
    return fake.requests, outcome.context_trims


@pytest.mark.slow
async def test_a_run_with_a_short_window_never_sends_more_and_counts_only_real_cuts(
        offline_server, chromium_worker, tmp_path):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_vulns_001"])[0]
    runs = []
    for name, model in (("wide", {}), ("short", {"context_tokens": WINDOW})):
        async with chromium_worker.task_browser(str(tmp_path / name), [offline_server.origin]) as browser:
            runs.append(await _run(task, browser, tmp_path / name, **model))
    (wide, wide_trims), (short, short_trims) = runs
    assert len(short) == len(wide) >= len(WALK)  # the same path, call for call
    assert max(sent_tokens(r) for r in wide) > WINDOW  # the browser's renderings do not fit the window as they are
    assert max(sent_tokens(r) for r in short) <= WINDOW
    # a trim is a call whose prompt differs from what the whole budget sent (the observation or the history cut)
    cut = sum(1 for a, b in zip(wide, short, strict=True) if a["messages"] != b["messages"])
    assert wide_trims == 0 and short_trims == cut >= 1
