"""What keeps the actor's prompt small without hiding anything it needs: compact tool schemas that still
validate the same calls, the older history folded into one line per step, and observation deltas that keep
every control and link (checked on a hand-built page and on every actor call of a real Chromium run)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, SystemMessage

from agent.measuring.scripted import ScriptedPolicy
from agent.solve import initial_state
from browser.render import render, render_unchanged
from browser.types import Control, Link, Observation, Option, Pagination, TableData
from graph.model_io.robust import tool_reply
from graph.prompting.context import fit_window
from graph.prompting.render import DELTA_SPAN, Prompts, page_key, turn_observation
from graph.tools.offers import offered_tool_names
from graph.tools.tool_schemas import ToolCallError, parse_tool_call, tool_schemas
from tasks.loaders import load_tasks
from tests.fixtures.walkthroughs import solve_exactly

TASK = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_vulns_001"])[0]
CONTROL_LINE = re.compile(r"^\[e\d+\] ")


def page(value: str = "Any", url: str = "http://127.0.0.1:9/s?kind=a", links_total: int = 2) -> dict:
    obs = Observation(
        url=url, query_state={"kind": ["a"]}, title="Search", page_id=3,
        controls=[Control(ref="e1", kind="select", label="Kind", value=value,
                          options=[Option(label=x, value=x) for x in ("Any", "A", "B")]),
                  Control(ref="e2", kind="text", label="Name", value=""),
                  Control(ref="e3", kind="submit", label="Search")],
        tables=[TableData(index=0, caption="Results", headers=["Id", "Name"],
                          rows=[[f"R{i}", f"Row number {i} with a longer name"] for i in range(12)], total_rows=30)],
        pagination=Pagination(page=1, pages=3, has_next=True, has_prev=False),
        outline=["# Search", *(f"Paragraph {i} of the page with some words in it" for i in range(8))], outline_total=8,
        links=[Link(ref="e9", text="Next", href=url + "&page=2"), Link(ref="e10", text="Help", href="/help")],
        links_total=links_total)
    return obs.model_dump()


def whole(observation: dict) -> str:
    """The page's whole text at the worker's budget, as the first actor call that shows it renders it."""
    return render(Observation.model_validate(observation), 1500).text


def ref_lines(text: str) -> list[str]:
    """Every control and link line, without its option list (a delta shows that as {…})."""
    return [line.split(" {")[0] for line in text.splitlines() if CONTROL_LINE.match(line)]


def turn_state(observation: dict, step: int, seen_page: dict | None = None) -> dict:
    return {**initial_state(TASK.solver_view(), time.time()), "observation": observation, "step": step,
            "seen_page": seen_page}


# ---------------------------------------------------------------- observation deltas


def test_a_delta_keeps_every_control_and_link_and_says_what_it_left_out():
    shown = page()
    full = whole(shown)
    delta = render_unchanged(Observation.model_validate(shown), since_step=4)
    assert delta.startswith("(page unchanged since step 4:")
    assert ref_lines(delta) == ref_lines(full) and len(ref_lines(full)) == 5  # 3 controls + 2 links
    for kept in ("URL: ", "State: kind=a", "Pagination: page 1 of 3", "TABLE 0 (caption \"Results\"",
                 "| Id | Name |", "OUTLINE:", "LINKS:"):
        assert kept in delta
    assert "| R0 |" not in delta and "Paragraph 3" not in delta
    assert '[e1] select "Kind" = "Any" {…}' in delta and "{Any | A | B}" in full  # value kept, options as {…}
    assert "1 option list(s) {…}, 12 table row(s), 9 outline line(s)" in delta  # what the whole text showed
    assert "list_options / read_table / read_section return them" in delta
    assert len(delta) < len(full) / 2


def test_a_pager_keeps_its_page_links_in_a_delta():
    """A link list is how the model moves on: its options stay, only choice lists become {…}."""
    obs = Observation.model_validate(page())
    obs.controls.append(Control(ref="e7", kind="link", label="Result pages",
                                options=[Option(label=x, value=f"?p={x}") for x in ("1", "2", "Next")]))
    delta = render_unchanged(obs, since_step=2)
    assert '[e7] link "Result pages" {1 | 2 | Next}' in delta.splitlines()


def test_a_delta_needs_the_same_page_and_a_real_saving():
    shown = page()
    seen = {"key": page_key(shown), "step": 1}
    assert turn_observation(turn_state(shown, step=1, seen_page=seen), 1500)[0].unchanged_since == 1
    assert turn_observation(turn_state(page(value="B"), step=1, seen_page=seen), 1500)[0].unchanged_since is None
    bare = Observation(url="http://x/", controls=[Control(ref="e1", kind="text", label="Name", value="")]).model_dump()
    nothing_to_leave_out = turn_observation(turn_state(bare, step=1, seen_page={"key": page_key(bare), "step": 1}), 1500)
    assert nothing_to_leave_out[0].unchanged_since is None and nothing_to_leave_out[0].text == whole(bare)


def test_the_delta_follows_the_page_the_model_was_shown_whole():
    shown = page()
    rendering, seen = turn_observation(turn_state(shown, step=0), 1500)
    assert rendering.text == whole(shown) and seen["step"] == 1  # first sight: whole
    rendering, again = turn_observation(turn_state(shown, step=1, seen_page=seen), 1500)
    text = rendering.text
    assert text.startswith("(page unchanged since step 1:") and again == seen  # same page: a delta
    assert ref_lines(text) == ref_lines(whole(shown)) and rendering.unchanged_since == 1
    changed = page(value="B")  # a control changed: the model has not seen this page, so it gets it whole
    rendering, seen_changed = turn_observation(turn_state(changed, step=2, seen_page=seen), 1500)
    assert rendering.text == whole(changed) and seen_changed["step"] == 3
    moved = page(url="http://127.0.0.1:9/s?kind=b")
    assert turn_observation(turn_state(moved, step=2, seen_page=seen), 1500)[0].text == whole(moved)
    assert turn_observation(turn_state(shown, step=DELTA_SPAN, seen_page=seen), 1500)[0].text.startswith(
        "(page unchanged")
    rendering, refreshed = turn_observation(turn_state(shown, step=DELTA_SPAN + 1, seen_page=seen), 1500)
    assert rendering.text == whole(shown) and refreshed["step"] == DELTA_SPAN + 2  # whole again DELTA_SPAN steps later


# ---------------------------------------------------------------- tool schemas


def test_the_element_target_is_spelled_out_once_per_offered_list():
    for names in ({"click", "fill", "select"}, {"fill", "select", "download"}, {"goto", "set_range"}):
        tools = tool_schemas(search=False, names=names)
        targets = [(t["function"]["name"], field, prop) for t in tools
                   for field, prop in t["function"]["parameters"]["properties"].items() if field.endswith("target")]
        full = [(name, field) for name, field, prop in targets if "properties" in prop]
        assert len(full) == 1, names
        owner = f"{full[0][0]}.{full[0][1]}"
        assert all(prop["description"] == f"As {owner}." for _, _, prop in targets if "properties" not in prop)
    assert {t["function"]["name"] for t in tool_schemas(search=False, names={"goto", "finish"})} == {"goto", "finish"}


def test_compact_schemas_still_validate_the_same_calls():
    assert parse_tool_call("fill", {"target": {"label": "Name"}, "value": "x"}, search=False).target.label == "Name"
    assert parse_tool_call("read_table", {"all_pages": True}, search=False).max_rows == 500  # defaults still apply
    with pytest.raises(ToolCallError, match="target"):
        parse_tool_call("fill", {"target": {"name": "Name"}, "value": "x"}, search=False)
    with pytest.raises(ToolCallError, match="plan"):  # revise_plan advertises a summary; the Plan still validates
        parse_tool_call("revise_plan", {"plan": {"gates": [{"kind": "colour"}]}, "reason": "r"}, search=False)
    plan = {"gates": [{"kind": "filter", "name": "Kind", "target": {"value": "A"}}]}
    assert parse_tool_call("revise_plan", {"plan": plan, "reason": "r"}, search=False).plan.gates[0].name == "Kind"
    with pytest.raises(ToolCallError, match="list_links"):  # an unadvertised limit is still bounded
        parse_tool_call("list_links", {"limit": 0}, search=False)
    schemas = json.dumps(tool_schemas(search=False))
    assert '"default"' not in schemas and "maximum" not in schemas and '"title"' not in schemas


def offers(state: dict, budget: int = 1500) -> set[str]:
    """The tools offered with the turn's rendering of the observation (as the actor offers them)."""
    all_names = {t["function"]["name"] for t in tool_schemas(search=False)}
    shown = turn_observation({"step": 0, **state}, budget)[0]
    return offered_tool_names(state, ablated=frozenset(), all_names=all_names, shown=shown)


def test_reads_of_left_out_content_are_offered_when_the_observation_names_them():
    all_names = {t["function"]["name"] for t in tool_schemas(search=False)}
    named_in_content = page()  # a page's own words naming a read offer nothing: the renderer's layout decides
    named_in_content["outline"][-1] = "read_section list_links list_options"
    assert "read_section list_links list_options" in whole(named_in_content)
    assert not offers({"observation": named_in_content}) & {"list_options", "list_links", "read_section"}
    short = page(links_total=42)
    assert "… 40 more links not shown — list_links" in whole(short)
    offered = offers({"observation": short})
    assert "list_links" in offered and not offered & {"list_options", "read_section", "derive"}
    # before the room is decided, the offers are those any rendering of the page could need (a superset)
    assert offered < offered_tool_names({"observation": short}, ablated=frozenset(), all_names=all_names)
    seen = {"key": page_key(short), "step": 1}  # the next turn shows this page as a delta: options as {…}
    in_delta = offers({"observation": short, "seen_page": seen, "step": 1})
    assert {"list_options", "read_section"} <= in_delta  # the delta's note names both (outline text left out)
    assert "read_section" in render_unchanged(Observation.model_validate(short), since_step=1)
    cramped = page()  # in a small room the same page's text leaves out links and lines: their reads come with it
    assert not offers({"observation": cramped}) & {"list_links", "read_section"}
    assert {"list_links", "read_section"} <= offers({"observation": cramped}, budget=150)
    with_tables = offered_tool_names({"observation": page(), "tables": {"t": {"rows": []}}}, ablated=frozenset(),
                                     all_names=all_names)
    assert {"derive", "set_url_params", "read_table", "extract_rows"} <= with_tables
    assert "discard_rows" not in with_tables  # offered when a drift flag or a repair goal asks for it
    flagged = {"observation": page(), "tables": {"t": {"rows": []}}, "repair_goal": "[drift] table t: discard_rows"}
    assert "discard_rows" in offered_tool_names(flagged, ablated=frozenset(), all_names=all_names)


def _offering(system: str) -> dict[str, str]:
    """tool -> the words the system prompt's "Offered when" line gives for it."""
    line = next(line for line in system.splitlines() if line.startswith("Offered when"))
    said: dict[str, str] = {}
    for group in line.split(": ", 1)[1].rstrip(".").split("; "):
        names, words = group.split(": ", 1)
        said.update({name: words for name in names.split()})
    return said


@pytest.mark.parametrize("search", [False, True])
def test_the_system_prompt_names_every_tool_and_when_it_is_offered(search: bool):
    """A model planning ahead sees every tool by name, offered or not, with the words of the rule that offers it
    (the line is rendered from graph/tools/tool_specs.py, so it cannot drift from the rules), and is told to copy values
    as printed; tools of switched-off nodes are not named."""
    from types import SimpleNamespace

    from graph.tools.offers import actor_system
    from graph.tools.tool_specs import TOOL_SPECS

    names = {t["function"]["name"] for t in tool_schemas(search=search)}
    deps = SimpleNamespace(prompts=Prompts.load(), ablated=frozenset(), search_enabled=search)  # what it reads
    full = actor_system(deps)
    assert _offering(full) == {name: TOOL_SPECS[name].offered.says for name in names}
    assert ("web_search" in _offering(full)) is search
    assert "Copy values as printed" in full and "unless the OUTPUT FORMAT says otherwise" in full
    no_planner = actor_system(SimpleNamespace(prompts=deps.prompts, ablated=frozenset({"planner"}),
                                              search_enabled=search))
    assert "revise_plan" not in no_planner and set(_offering(no_planner)) == names - {"revise_plan"}


def test_facts_scroll_and_wait_are_offered_when_they_can_help():
    all_names = {t["function"]["name"] for t in tool_schemas(search=False)}

    def offered(**state) -> set[str]:
        return offered_tool_names({"observation": page(), **state}, ablated=frozenset(), all_names=all_names)

    one_table = {"gates": [], "phases": [], "detail_pages": False, "derivation": ""}
    assert not offered(plan=one_table) & {"read_facts", "scroll", "wait_for"}
    assert "read_facts" in offered()  # no plan: nothing says the answer is one table
    assert "read_facts" in offered(plan={**one_table, "detail_pages": True})
    assert "read_facts" in offered(plan=one_table, tables={"t": {"rows": []}})
    assert {"scroll", "wait_for"} <= offered(plan=one_table, last_result={"ok": False, "error": "no_effect"})
    sparse = Observation(url="http://x/").model_dump()
    assert {"scroll", "wait_for"} <= offered_tool_names({"observation": sparse}, ablated=frozenset(),
                                                         all_names=all_names)


def test_revise_plan_is_offered_while_the_plan_is_in_question():
    all_names = {t["function"]["name"] for t in tool_schemas(search=False)}
    plan = {"gates": [{"kind": "filter", "name": "Kind", "target": {"value": "A"}}]}
    found = {"kind": {"value": "A", "label": "Kind", "evidence": ["control"], "set_at_step": 2, "set_by": "select"}}
    retrieval = {"url": "u", "path": "/s", "values": {}, "page": None, "pages": None, "result_count": None, "step": 2}

    def offered(**extra) -> bool:
        state = {"observation": page(), "plan": plan, "retrieval": retrieval, **extra}
        return "revise_plan" in offered_tool_names(state, ablated=frozenset(), all_names=all_names)

    assert offered()  # the plan's gate is not on the page yet
    assert not offered(retrieval={**retrieval, "values": found})  # every gate found: nothing to revise
    assert offered(retrieval={**retrieval, "values": found}, repair_goal="[pages] page 2 not read")
    assert offered(retrieval={**retrieval, "values": found}, drift_flags=[{"rule": "navigation_reset"}])
    assert offered(retrieval=None)  # state tracker off: nothing checks the plan, so it stays revisable
    assert "revise_plan" in offered_tool_names({}, ablated=frozenset(), all_names=all_names)  # before the first page
    assert "revise_plan" not in offered_tool_names({"observation": page(), "plan": plan, "retrieval": retrieval},
                                                   ablated=frozenset({"planner"}), all_names=all_names)


# ---------------------------------------------------------------- history


def test_older_exchanges_are_one_line_each_and_the_newest_stay_whole():
    history = []
    for i in range(7):
        history += [AIMessage("", tool_calls=[{"name": "click", "args": {"target": {"text": f"Row {i}"}},
                                               "id": f"c{i}", "type": "tool_call"}]),
                    tool_reply(f"ok=True\nclicked text='Row {i}'\n" + "detail line\n" * 20, f"c{i}",
                               gist=f"clicked text='Row {i}'")]
    window = fit_window(history, head=[SystemMessage("s")], turn=SystemMessage("t"), tools=[], context_tokens=None,
                        whole=4)
    summary, *kept = window.messages
    assert summary.content.startswith("EARLIER STEPS") and window.trimmed == 0  # not a context trim
    assert "- click({\"target\":{\"text\":\"Row 0\"}}) -> clicked text='Row 0'" in summary.content
    assert len(summary.content.splitlines()) == 4 and kept == history[6:]


# ---------------------------------------------------------------- real run


class Recording(ScriptedPolicy):
    async def act(self, messages, tools, state):
        turns.append(str(messages[-1].content))
        return await super().act(messages, tools, state)


turns: list[str] = []


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_deltas_on_a_real_run_hide_no_control_and_the_replay_stays_exact(offline_server, chromium_worker,
                                                                                tmp_path: Path):
    task_id = "offline_water_004"  # reads two tables of the same page in turn: deltas happen
    turns.clear()
    await solve_exactly(task_id, Recording, offline_server, chromium_worker, tmp_path)
    observations = [t.split("\nOBSERVATION:\n", 1)[1] for t in turns if "\nOBSERVATION:\n" in t]
    deltas = 0
    last_whole = ""
    for text in observations:
        if text.startswith("(page unchanged since step"):
            deltas += 1
            assert ref_lines(text) == ref_lines(last_whole)  # the same controls and links, every one
        else:
            last_whole = text
    assert deltas >= 4
    events = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    actor = [e for e in events if e.get("node") == "actor" and "prompt_parts" in e]
    assert sum(e["observation_delta"] for e in actor) == deltas
    assert all(e["prompt_tokens"] == sum(e["prompt_parts"].values()) for e in actor)


@pytest.mark.parametrize("ablated", [frozenset(), frozenset({"state_tracker", "verifier"}), frozenset({"planner"}),
                                     frozenset({"state_tracker"}), frozenset({"verifier", "provenance"})])
def test_the_system_prompt_says_nothing_of_what_is_switched_off_and_numbers_its_rules_in_order(ablated):
    """With `--ablate state_tracker,verifier` the prompt said "check the RETRIEVAL STATE" and its rules skipped from 2
    to 5 (issue 37): each rule of a switched-off node goes, and the rules are numbered 1..n as shown."""
    import re
    from types import SimpleNamespace

    from graph.tools.offers import actor_system

    text = actor_system(SimpleNamespace(prompts=Prompts.load(), ablated=ablated, search_enabled=False))
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", text, flags=re.MULTILINE)]
    assert numbers == list(range(1, len(numbers) + 1)), text
    said = {"RETRIEVAL STATE": "state_tracker", "DRIFT FLAGS": "state_tracker", "REPAIR GOAL": "verifier",
            "PLAN ON THIS PAGE": "state_tracker", "revise_plan": "planner", "of the plan": "planner",
            "read-time state": "provenance"}
    for words, node in said.items():
        assert (words in text) is (node not in ablated and (words != "PLAN ON THIS PAGE" or "planner" not in ablated)), \
            (words, sorted(ablated))
