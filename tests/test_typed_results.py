"""No component reads another's prose: a tool reply says whether the call failed as data, the verifier's
failures carry their facts as fields, and the readers (the repeat counter, the result summary, the scripted
policy) decide from those, so the text a model reads can be reworded without changing what they do."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.measuring.scripted import ScriptedPolicy
from browser.types import ActionResult, StateDelta
from graph.checks.details import check_details
from graph.checks.failures import failure, render_goal
from graph.evidence.evidence_tables import WorkspaceError, new_table
from graph.evidence.workspace_tools import error_text
from graph.model_io.policy import TurnState
from graph.model_io.robust import call_signature, failed_repeats, tool_reply
from graph.nodes.common import result_lines
from graph.nodes.pages import PageReply, join_replies
from graph.prompting.context import fit_window
from graph.state import Listing, Plan
from graph.tools.agent_tools import MAX_URLS
from graph.tools.tool_schemas import tool_schemas
from tests.fixtures.opened import shown

ARGS = {"target": {"text": "Apply"}}


def _history(*replies: ToolMessage) -> list:
    messages: list = []
    for reply in replies:
        messages += [AIMessage("", tool_calls=[{"name": "click", "args": ARGS, "id": reply.tool_call_id,
                                                 "type": "tool_call"}]), reply]
    return messages


def test_the_repeat_counter_reads_the_status_not_the_text():
    signature = call_signature("click", ARGS)
    said_failed = [ToolMessage("ok=False error=not_found: INVALID TOOL CALL", tool_call_id=f"a{i}") for i in range(2)]
    assert failed_repeats(_history(*said_failed), signature) == 0  # words alone: not failed
    failed = [tool_reply("ok=True all fine", f"b{i}", failed=True) for i in range(2)]
    assert failed_repeats(_history(*failed), signature) == 2
    unchanged = [tool_reply("ok=True", f"c{i}", unchanged=True) for i in range(3)]
    assert failed_repeats(_history(*unchanged), signature) == 3
    assert failed_repeats(_history(failed[0], tool_reply("ok=True", "d"), failed[1]), signature) == 1


def test_the_result_summary_states_each_fact_once_from_the_typed_result():
    delta = StateDelta(url_before="http://s/r", url_after="http://s/r?a=1", controls_changed={"Agency": ("", "EPA")},
                       count_before=10, count_after=3)
    said = ActionResult(ok=True, action={"kind": "select"}, message="selected 'EPA'; URL +a=1, ...", delta=delta,
                        described=True, readback="EPA")
    assert result_lines(said) == ["ok=True", "selected 'EPA'; URL +a=1, ..."]
    # a message that happens to contain the facts' words, without the delta described: the facts are stated
    quiet = said.model_copy(update={"described": False, "message": "Agency: '' -> 'EPA' results 10 -> 3 http://s/r?a=1"})
    lines = result_lines(quiet)
    assert lines[2:] == ["readback='EPA'", "url -> http://s/r?a=1", "Agency: '' -> 'EPA'", "results 10 -> 3"]
    goto = ActionResult(ok=False, action={"kind": "goto", "url": "http://s/r?a=1"}, error="http_error",
                        message="the server answered HTTP 404", delta=delta.model_copy(update={"controls_changed": {}}))
    assert "url -> http://s/r?a=1" not in result_lines(goto)  # the goto's own URL: the call names it


def _folded(*replies: ToolMessage) -> list[str]:
    """The summary lines of a history folded whole (no exchange kept whole)."""
    window = fit_window(_history(*replies), head=[], turn=HumanMessage("turn"), tools=[], context_tokens=None,
                        whole=0)
    return window.messages[0].content.splitlines()[1:]


def test_the_history_fold_reads_the_status_and_the_gist_not_the_text():
    lines = _folded(tool_reply("ok=True\nselected 'EPA'", "a", failed=True, gist="not_found: no option 'EPA'"),
                    tool_reply("ok=True\nfilled 'Year'", "b", unchanged=True, gist="filled 'Year'"),
                    tool_reply("ok=False error=timeout\nsecond line", "c", gist="clicked 'Apply'"),
                    ToolMessage("ok=True\nthe second line of another node's text", tool_call_id="d"),
                    )
    results = [line.split(" -> ", 1)[1] for line in lines]
    assert results == ["failed: not_found: no option 'EPA'", "no change: filled 'Year'", "clicked 'Apply'", "ok=True"]
    assert _folded(tool_reply("", "e"))[0].endswith("-> ok")  # nothing to say: the outcome alone


def test_a_workspace_error_says_as_data_whether_it_lists_the_schemas():
    tables = {"t": new_table("t", ["a"])}
    quoting = error_text(WorkspaceError("no table 'Tables:' here"), tables)  # words alone: the schemas are added
    assert quoting.endswith("Tables:\nt(a): 0 row(s)")
    shown = error_text(WorkspaceError("bad column", schemas="t(a): 0 row(s)"), tables)
    assert shown.count("Tables:") == 1


def test_a_read_over_pages_says_each_note_once_from_the_notes_not_from_bracketed_lines():
    note = "[gate] Agency holds 'EPA' but the plan needs 'FDA'"
    pages = [PageReply(f"/r?p={n}: extracted 1 row(s) into t\n[draft] | 2020", [note]) for n in (1, 2)]
    assert join_replies(pages)[0].splitlines() == ["/r?p=1: extracted 1 row(s) into t", "[draft] | 2020", note,
                                                "/r?p=2: extracted 1 row(s) into t", "[draft] | 2020"]


def test_a_failure_carries_its_facts_as_fields_and_the_goal_is_rendered_from_them():
    links = [f"http://s/item/{i}" for i in range(15)]
    plan = Plan(detail_pages=True)
    listing = Listing(step=1, url="http://s/r", result_set="/r", row_links=links)
    found = check_details(plan, [listing], shown(links[:1], [listing]))
    assert found[0]["links"] == links[1:]  # every link, though the message names one read_facts call's worth
    assert f"{links[MAX_URLS]} and 2 more, named once these are read" in found[0]["message"]
    assert f"{links[MAX_URLS + 1]}," not in found[0]["message"]
    table = failure("pages", "page(s) [2] were not read", table="t", pages=[2])
    assert table["message"] == "table t: page(s) [2] were not read" and table["table"] == "t"
    assert render_goal([table, *found]) == f"[pages] {table['message']} ; [details] {found[0]['message']}"


def _repair(failures: list, goal: str) -> list[str]:
    steps = [{"tool": "goto", "args": {"url": "http://s/r"}}, {"tool": "read_table", "args": {"table": 0}},
             {"tool": "extract_rows", "args": {"columns": {"id": "ID"}}}, {"tool": "finish", "args": {}}]
    policy = ScriptedPolicy(steps=steps)
    for _ in range(4):
        asyncio.run(policy.act([HumanMessage("x")], tool_schemas(search=False), TurnState()))
    state = TurnState(repair_goal=goal, failures=failures, repairs=1)
    return [asyncio.run(policy.act([HumanMessage(goal)], tool_schemas(search=False), state)).tool_calls[0]["name"]
            for _ in range(3)]


def test_the_scripted_policy_repairs_from_the_failures_whatever_the_goal_says():
    pages = failure("pages", "page(s) [2] were not read", pages=[2])
    assert _repair([pages], "[pages] page(s) [2] were not read") == ["read_table", "extract_rows", "finish"]
    assert _repair([pages], "[drift] [gate] [details] [schema] no extract_rows") == ["read_table", "extract_rows",
                                                                                       "finish"]
    reworded = {**pages, "message": "some other words entirely"}
    assert _repair([reworded], render_goal([reworded]) or "") == ["read_table", "extract_rows", "finish"]


def test_the_readers_hold_no_rendered_markers():
    """A guard next to the behaviour tests above: the policies never name the verifier's tags or read the goal's
    text, and the repeat counter and the result summary never search a message."""
    import inspect

    from agent.measuring import faulty, scripted
    from graph.model_io import robust
    from graph.nodes import common
    from graph.prompting import context

    for module in (scripted, faulty):
        source = inspect.getsource(module)
        assert not [tag for tag in ("drift", "gate", "pages", "details", "schema", "count") if f"[{tag}]" in source]
        assert ".repair_goal" not in source and "were not opened" not in source
    assert ".content" not in inspect.getsource(robust.failed_repeats) + inspect.getsource(robust.call_failed)
    assert " in said" not in inspect.getsource(common.result_lines)
    assert "ok=" not in inspect.getsource(context) and "startswith" not in inspect.getsource(context)
    from agent.reports import timeline
    from graph.evidence import workspace_tools
    from graph.nodes import pages

    readers = [workspace_tools.error_text, pages.join_replies, timeline._browser_effect]
    assert not [f.__name__ for f in readers if any(m in inspect.getsource(f) for m in ('Tables:" in', "startswith",
                                                                                      "partition", '"["'))]
