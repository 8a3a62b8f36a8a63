"""One spec per action (issue 26 stage 8): the browser's table (kind, model, effect, setter) and the graph's
(node, doc line, offering rule) cover the same kinds, and every list read from them agrees with them; the reads
of what an observation left out are offered from the renderer's layout, which names exactly what its text names."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from agent.config import ModelConfig
from agent.measuring import fault_plan
from agent.measuring.scripted import EXTRACT_TOOLS, LEAVES_PAGE, READ_TOOLS, SETTERS, ScriptedPolicy
from browser.actions import _HANDLERS
from browser.render import Rendering, possible_reads, render, whole_reads, whole_tokens
from browser.types import (
    ACTION_SPECS,
    CHANGING_KINDS,
    NAVIGATING_KINDS,
    PASSIVE_KINDS,
    SETTER_KINDS,
    TARGETED_SETTERS,
    BrowserAction,
    Control,
    Link,
    Observation,
    Option,
)
from graph.build import build_graph
from graph.nodes import Deps
from graph.tools.offers import offered_tool_names
from graph.tools.tool_schemas import parse_tool_call, tool_schemas
from graph.tools.tool_specs import ROW_WRITERS, SOURCE_READS, TOOL_SPECS, Situation
from graph.tracking.drift import NAVIGATIONS
from tasks.spec import OutputSpec

GRAPH_NODES = {"executor", "extractor", "workspace", "finish", "actor"}
LEFT_OUT_READS = ("list_options", "list_links", "read_section")  # the reads a note of the text may name


def test_every_browser_kind_has_one_spec_one_model_and_one_handler() -> None:
    union = get_args(get_args(BrowserAction)[0])
    assert [m.model_fields["kind"].default for m in union] == list(ACTION_SPECS)
    assert all(spec.kind == kind for kind, spec in ACTION_SPECS.items())
    assert len({spec.model for spec in ACTION_SPECS.values()}) == len(ACTION_SPECS)
    assert set(_HANDLERS) == set(ACTION_SPECS)


def test_the_derived_kind_sets_agree_with_the_table() -> None:
    reads = {k for k, s in ACTION_SPECS.items() if s.effect == "read"}
    assert CHANGING_KINDS | PASSIVE_KINDS | reads == set(ACTION_SPECS)
    assert not CHANGING_KINDS & PASSIVE_KINDS and not (CHANGING_KINDS | PASSIVE_KINDS) & reads
    assert TARGETED_SETTERS < SETTER_KINDS <= CHANGING_KINDS
    assert {"set_url_params"} == SETTER_KINDS - TARGETED_SETTERS
    assert SETTERS == SETTER_KINDS  # the scripted policy's gate-setting steps
    assert {"scroll", "wait_for"} == PASSIVE_KINDS  # the reads and passive actions keep what was read


def test_the_kind_lists_of_the_graph_and_the_policies_are_read_from_the_tables() -> None:
    """Navigations (the drift rules' "opened a URL on purpose") and the policies' reads are the specs' fields,
    so a new kind is classified where it is declared, once."""
    assert NAVIGATIONS is NAVIGATING_KINDS == {k for k, s in ACTION_SPECS.items() if s.navigates}
    assert {"goto", "page_facts"} == NAVIGATING_KINDS
    for kind in NAVIGATING_KINDS:
        assert "url" in ACTION_SPECS[kind].model.model_fields  # the URL it opens is the call's
    assert SOURCE_READS == {k for k, s in TOOL_SPECS.items() if s.evidence == "source"} == {"read_table", "read_pdf",
                                                                                             "download"}
    assert all(ACTION_SPECS[k].effect == "read" for k in SOURCE_READS)  # a source read is a browser read
    assert EXTRACT_TOOLS is ROW_WRITERS == {"extract_rows", "read_facts"}
    assert READ_TOOLS == SOURCE_READS | ROW_WRITERS and fault_plan.READ_TOOLS is READ_TOOLS
    assert all(TOOL_SPECS[k].node in ("extractor", "workspace") for k in ROW_WRITERS)
    assert {"goto", "back", "finish"} == LEAVES_PAGE  # the policies' "the page was left": the actor's navigation


def test_the_graph_table_covers_exactly_the_browser_kinds_and_the_agent_tools() -> None:
    browser_rows = {k for k in TOOL_SPECS if k in ACTION_SPECS}
    assert browser_rows == set(ACTION_SPECS)  # no browser kind without a row, no row for a kind that is gone
    for kind, spec in TOOL_SPECS.items():
        assert spec.node is None or spec.node in GRAPH_NODES
        if kind in ACTION_SPECS:
            assert spec.model is None  # the browser's model, not a second one
            assert spec.node in (None, "executor")
            assert spec.node is None or spec.doc  # a browser tool's one line for the model
        else:
            assert spec.model is not None and spec.model.model_fields["kind"].default == kind
    tools = {k for k in ACTION_SPECS if TOOL_SPECS[k].node}
    assert set(ACTION_SPECS) - {"page_facts"} == tools  # the workspace's page read is no tool


@pytest.mark.parametrize("search", [False, True])
def test_the_tool_list_is_the_tables_tools_in_its_order_and_each_parses_to_its_model(search: bool) -> None:
    names = [t["function"]["name"] for t in tool_schemas(search=search)]
    assert names == [k for k, s in TOOL_SPECS.items() if s.node and (search or not s.search_only)]
    for tool in tool_schemas(search=search):
        name = tool["function"]["name"]
        spec = TOOL_SPECS[name]
        assert tool["function"]["description"] == (spec.doc or tool["function"]["description"])
        model = spec.model or ACTION_SPECS[name].model
        required = tool["function"]["parameters"].get("required", [])
        args = {field: _sample(model, field) for field in required}
        assert isinstance(parse_tool_call(name, args, search=search), model)


def _sample(model, field: str):
    annotation = str(model.model_fields[field].annotation)
    if "Target" in annotation:
        return {"ref": "e1"}
    if "Plan" in annotation:
        return {}
    if "dict" in annotation:
        return {"a": "b"}
    return "x"


def test_before_the_first_page_only_navigation_search_and_the_plan_are_offered() -> None:
    names = {t["function"]["name"] for t in tool_schemas(search=True)}
    assert offered_tool_names({}, ablated=frozenset(), all_names=names) == {"goto", "web_search", "revise_plan"}
    assert offered_tool_names({}, ablated=frozenset({"planner"}), all_names=names) == {"goto", "web_search"}
    empty = Situation(page=None)
    assert {k for k, s in TOOL_SPECS.items() if s.offered(empty)} == {"goto", "web_search"}


# ---------------------------------------------------------------- the reads of left-out content


def _busy_page() -> Observation:
    """A page with every kind of cut a text can make: long option lists, a chrome panel of buttons, many
    links, a long outline with long main-content lines (one cut by the observer), and many notices."""
    long_line = "A long paragraph of the main content " * 12
    outline = ["# Results", long_line.strip(), f"{'Cut by the observer ' * 20}[read_section e900]",
               *(f"Paragraph {i}: " + "words of the page " * 6 for i in range(60))]
    controls = [Control(ref=f"e{i}", kind="select", label=f"Field {i}",
                        options=[Option(label=f"Option {j}", value=str(j)) for j in range(40 if i < 2 else 4)])
                for i in range(6)]
    controls += [Control(ref=f"e{100 + i}", kind="button", label=f"Menu {i}", rank=2, box="nav") for i in range(40)]
    obs = Observation(
        url="http://127.0.0.1:9/s?q=1", query_state={"q": ["1"]}, title="Busy", page_id=1, controls=controls,
        outline=outline, outline_total=len(outline), outline_main=len(outline), outline_cut=[2],
        outline_refs=["", "e901", "e900", *([""] * 60)],
        links=[Link(ref=f"e{300 + i}", text=f"Link number {i}", href=f"/l/{i}") for i in range(80)],
        links_total=120, notices=[f"Notice {i}: " + "banner text " * 20 for i in range(12)])
    return obs


def _named_in_text(shown: Rendering) -> set[str]:
    """What the text names (this test may read the text; production code reads `Rendering.reads`)."""
    return {read for read in LEFT_OUT_READS if re.search(rf"\b{read}\b", shown.text)}


def test_the_renderer_records_exactly_the_reads_its_text_names() -> None:
    seen: set[str] = set()
    page = _busy_page()
    for budget in (150, 300, 600, 1000, 1500, 2500, 4000, 8000, 20000):
        shown = render(page, budget)
        assert set(shown.reads) == _named_in_text(shown), budget
        # what the offers assume before the room is decided: any rendering's reads, a whole one's
        assert whole_reads(page) <= shown.reads <= possible_reads(page), budget
        if shown.complete:
            assert shown.reads == whole_reads(page) and shown.tokens == whole_tokens(page), budget
        seen |= set(shown.reads)
    assert seen == set(LEFT_OUT_READS)  # each read was named at some budget, so each rule was checked
    assert render(page, 20000).complete and not render(page, 4000).complete
    whole = render(Observation(url="http://127.0.0.1:9/", outline=["# Short"], outline_total=1), 1500)
    assert whole.reads == frozenset() and _named_in_text(whole) == set() and whole.complete


def test_a_line_the_observer_cut_names_its_read_when_shown() -> None:
    line = "Paragraph " * 30 + "[read_section e7]"
    shown = render(Observation(url="http://127.0.0.1:9/", outline=[line], outline_total=1, outline_cut=[0]), 1500)
    assert shown.reads == {"read_section"}
    plain = render(Observation(url="http://127.0.0.1:9/", outline=["Paragraph " * 30], outline_total=1), 1500)
    assert plain.reads == frozenset()


def test_notices_cut_name_read_section_and_a_pager_names_nothing() -> None:
    notices = [f"Notice {i}: " + "banner text " * 20 for i in range(12)]
    shown = render(Observation(url="http://127.0.0.1:9/", notices=notices), 1500)
    assert sorted(shown.reads) == ["read_section"] == sorted(_named_in_text(shown))
    pager = Control(ref="e1", kind="link", label="Pages",
                    options=[Option(label=str(n), value=str(n), selected=n == 3) for n in range(1, 41)])
    paged = render(Observation(url="http://127.0.0.1:9/", controls=[pager]), 1500)
    assert paged.reads == frozenset() and "page links" in paged.text  # a pager's numbers are shown, not summarised
    long_list = render(Observation(url="http://127.0.0.1:9/", controls=[pager.model_copy(update={
        "kind": "select"})]), 1500)
    assert sorted(long_list.reads) == ["list_options"] == sorted(_named_in_text(long_list))


@pytest.mark.parametrize(("ablate", "after_finish"), [([], "verifier"), (["verifier"], "composer")])
def test_every_tool_is_routed_to_a_node_the_actor_leads_to(ablate: list[str], after_finish: str) -> None:
    deps = Deps(browser=None, policy=ScriptedPolicy(steps=[]), model_config=ModelConfig(name="s"),
                spec=OutputSpec(columns=("a",)))
    edges = {(e.source, e.target) for e in build_graph(ablate, deps).get_graph().edges}
    for spec in TOOL_SPECS.values():
        if spec.node in ("executor", "extractor", "workspace"):
            assert ("actor", spec.node) in edges
    assert ("actor", after_finish) in edges
