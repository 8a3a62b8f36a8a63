"""Gates on actual values, clamps, empty reads and decimals, on hand-built pages (no browser): a planned gate
kept at its default is flagged when rows are read and stays flagged until set; a value the page cannot show
is a clamp, not drift; a read of 0 rows is evidence; the SQL's fixed decimals reach the answer as written."""

from __future__ import annotations

import pytest

from browser.types import Control, Observation, Option
from graph.checks.gates import check_read, state_snapshot
from graph.evidence.row_extraction import ExtractionError, says_no_results
from graph.evidence.workspace_tools import ReadContext, compose_derived, derive, extract_into
from graph.model_io.policy import ChatPolicy
from graph.plan.targets import Value, Window
from graph.state import Gate, Phase, Plan
from graph.tools.agent_tools import Derive, ExtractRows
from graph.tracking.clamps import clamp_evidence
from graph.tracking.tracker import track
from tasks.spec import OutputSpec
from tests.test_graph_tracker import obs, step

PLAN = Plan(gates=[Gate(kind="filter", name="Agency", target=Value(value="FDA"))])


def test_a_gate_kept_at_its_default_is_flagged_when_rows_are_read_and_held_until_set():
    s1, flags = step(obs("/search"), 1, {"kind": "goto", "url": "x"}, plan=PLAN)
    assert flags == []  # arriving on the page is not a mistake: nothing was read yet
    check = check_read(PLAN, "answer", s1, 2)
    assert [(f["rule"], f["gate"], f["before"], f["after"], f["node"]) for f in check.mismatches] == [
        ("gate_mismatch", "agency", "FDA", "Any agency [any]", "extractor")]
    assert "Agency holds 'Any agency [any]' (its default: never set) but the plan needs 'FDA'" in check.notes()[0]
    s2, held = step(obs("/search"), 3, {"kind": "scroll"}, previous=s1, history=[s1], flags=check.mismatches,
                    plan=PLAN)
    assert [f["rule"] for f in held] == ["gate_mismatch"]  # still the default: the flag stays
    _, fixed = step(obs("/search", agency="fda"), 4, {"kind": "select", "target": {"label": "Agency"},
                                                      "option": "FDA"}, previous=s2, history=[s1, s2], flags=held,
                    plan=PLAN)
    assert fixed == []


def test_the_read_checks_the_phase_of_its_table_and_reports_what_resolves_to_nothing():
    plan = Plan(phases=[Phase(read="list", into="records", gates=[Gate(kind="filter", name="Agency", target=Value(value="EPA")), Gate(kind="filter", name="Basis", target=Value(value="v1"))]),
                        Phase(read="all", into="totals", gates=[])])
    state, _ = step(obs("/search", agency="epa"), 1, {"kind": "goto", "url": "x"})
    check = check_read(plan, "records", state, 2)
    assert check.mismatches == [] and check.unresolved == [
        "Basis=v1 (no control or URL parameter here is named so)"]
    assert check_read(plan, "totals", state, 2).notes() == []
    detail, _ = step(obs("/detail/1"), 3, {"kind": "goto", "url": "x"})
    assert check_read(plan, "records", detail, 3).notes() == []  # a record's own page holds none of the gates


def _years_page(to: str, *, last: int = 1966, text: list[str] | None = None) -> Observation:
    years = [str(y) for y in range(1958, last + 1)]
    return Observation(url=f"http://x/st/1/availability?from=1962&to={to}", query_state={"from": ["1962"], "to": [to]},
                       outline=text or [], controls=[
        Control(ref="e1", kind="select", label="From year", name="from", value="1962",
                options=[Option(label=y, value=y, selected=y == "1962") for y in years]),
        Control(ref="e2", kind="select", label="To year", name="to", value=str(min(int(to), last)),
                options=[Option(label=y, value=y, selected=y == str(min(int(to), last))) for y in years])])


@pytest.mark.parametrize("plan", [
    Plan(gates=[Gate(kind="filter", name="To year", target=Value(value="1969")), Gate(kind="filter", name="From year",
                                                                          target=Value(value="1962"))]),
    Plan(gates=[Gate(kind="window", name="Year", target=Window(start="1962", end="1969"))]),
])
def test_a_value_the_page_cannot_show_is_clamped_not_drift(plan):
    state, flags = track(obs=_years_page("1969"), step=2, action={"kind": "goto", "url": "x"}, result=None,
                         previous=None, history=[], active_flags=[], plan=plan)
    assert flags == []
    assert state["values"]["to"]["value"] == "1966"
    assert state["values"]["to"]["clamped"] == {"planned": "1969", "evidence": "'To year' offers 1958..1966"}
    assert check_read(plan, "answer", state, 3).mismatches == []
    assert state_snapshot(state)["to"]["clamped"]["planned"] == "1969"


def test_a_window_clamps_only_the_from_to_pair_it_names():
    """A window's bounds are judged on the pair the gate judge reads as the window; another control with a start
    or end word (`Max rating year`, whose years end below the plan's) is no bound of it, so never 'clamped'."""
    page = _years_page("1969")
    page.controls.append(Control(ref="e3", kind="select", label="Max rating year", name="max_rating_year",
                                 value="1966", options=[Option(label=str(y), value=str(y), selected=y == 1966)
                                                        for y in range(1960, 1967)]))
    plan = Plan(gates=[Gate(kind="window", name="Year", target=Window(start="1962", end="1969"))])
    state, flags = track(obs=page, step=2, action={"kind": "goto", "url": "x"}, result=None, previous=None,
                         history=[], active_flags=[], plan=plan)
    assert flags == [] and state["values"]["to"]["clamped"]["planned"] == "1969"
    assert "clamped" not in state["values"]["max_rating_year"], state["values"]["max_rating_year"]


def test_a_value_the_page_could_show_is_a_mismatch_not_a_clamp():
    plan = Plan(gates=[Gate(kind="filter", name="To year", target=Value(value="1969"))])
    state, flags = track(obs=_years_page("1964", last=1975), step=2,
                         action={"kind": "select", "target": {"label": "To year"}, "option": "1964"}, result=None,
                         previous=None, history=[], active_flags=[], plan=plan)
    assert "clamped" not in state["values"]["to"] and [f["rule"] for f in flags] == ["gate_mismatch"]


def test_the_page_stating_its_range_is_clamp_evidence_too():
    value = {"value": "2019", "label": "To date", "evidence": [], "set_at_step": 1, "set_by": "fill"}
    assert clamp_evidence(value, "2024", ["Records available 2003–2019."]) == (
        "the page states 'Records available 2003–2019.'")
    assert clamp_evidence(value, "2024", ["Updated 2019."]) is None  # no range stated: a plain mismatch
    assert clamp_evidence({**value, "value": "2018"}, "2024", ["Records available 2003–2019."]) is None



def _date_page(to: str) -> Observation:
    """A free date input whose page restates the filter in force, as result pages do."""
    return Observation(url=f"http://x/search?to={to}", query_state={"to": [to]},
                       outline=[f"Date received: 2018-07-02 – {to}"],
                       controls=[Control(ref="e1", kind="date", label="To date", name="to", value=to)])


def test_a_page_restating_the_filter_in_force_is_no_clamp():
    """The wrong window the agent typed itself, restated by the page, stays a mismatch (not a clamp that would
    withdraw the flag); the same range counts when the agent asked for the target and the page held its end."""
    plan = Plan(gates=[Gate(kind="filter", name="To date", target=Value(value="2024-12-31"))])
    typed_wrong = {"kind": "fill", "target": {"label": "To date"}, "value": "2020-12-31"}
    state, flags = track(obs=_date_page("2020-12-31"), step=3, action=typed_wrong, result=None, previous=None,
                         history=[], active_flags=[], plan=plan)
    assert "clamped" not in state["values"]["to"] and [f["rule"] for f in flags] == ["gate_mismatch"]
    asked_target = {**typed_wrong, "value": "2024-12-31"}
    state, flags = track(obs=_date_page("2020-12-31"), step=3, action=asked_target, result=None, previous=None,
                         history=[], active_flags=[], plan=plan)
    assert state["values"]["to"]["clamped"]["planned"] == "2024-12-31" and flags == []
    later, flags = track(obs=_date_page("2020-12-31"), step=4, action={"kind": "scroll"}, result=None,
                         previous=state, history=[state], active_flags=[], plan=plan)
    assert "clamped" in later["values"]["to"] and flags == []  # the clamp holds while the value does
    value = {"value": "2019", "label": "To date", "evidence": [], "set_at_step": 1, "set_by": "fill"}
    assert clamp_evidence(value, "2024", ["Records available 2003–2019."], asked_for_target=False) is None


NO_RESULTS = {"url": "http://x/search?q=zz", "outline": ["Search", "No results."], "tables": []}


def _ctx(observation, plan=None, retrieval=None):
    return ReadContext(observation=observation, last_read=None, retrieval=retrieval, drift_flags=[],
                       provenance=True, step=7, plan=plan)


def test_a_no_results_page_is_a_read_of_zero_rows_not_a_missing_table():
    assert says_no_results(NO_RESULTS) and says_no_results({"result_count": 0})
    assert not says_no_results({"outline": ["Results are updated nightly, no matter what."]})
    written = extract_into(ExtractRows(columns={"id": "ID", "title": "Title"}), _ctx(NO_RESULTS),
                           schema=("id", "title"), tables={}, page_facts=None)
    assert written.rows == [] and written.record["rows"] == 0 and written.record["url"] == NO_RESULTS["url"]
    assert written.message.startswith("extracted 0 row(s) (read, none: http://x/search?q=zz")
    with pytest.raises(ExtractionError, match="no table 0"):
        extract_into(ExtractRows(columns={"id": "ID"}), _ctx({**NO_RESULTS, "outline": ["Search"]}),
                     schema=("id",), tables={}, page_facts=None)


def test_derive_tells_read_none_from_never_read():
    tables: dict = {}
    full = {"url": "http://x/g?group=A", "tables": [{"index": 0, "headers": ["ID"], "rows": [["1"], ["2"]]}]}
    for observation in (full, {**NO_RESULTS, "url": "http://x/g?group=B"}):
        written = extract_into(ExtractRows(into="hits", columns={"grp": "url:group", "id": "ID"}), _ctx(observation),
                               schema=(), tables=tables, page_facts=None)
        tables.update(written.tables)
    empty = [r for r in tables["hits"]["rows"] if r.get("empty")]
    assert len(empty) == 1 and empty[0]["values"]["grp"] == "B" and empty[0]["values"]["id"] is None
    assert "extracted 0 row(s) into hits (read, none" in written.message
    groups = derive(Derive(sql="SELECT g.grp, count(h.id) AS n FROM (VALUES ('A'), ('B'), ('C')) g(grp) "
                               "LEFT JOIN hits h USING (grp) GROUP BY g.grp HAVING bool_or(h._empty IS NOT NULL) "
                               "ORDER BY g.grp", into="counts"), tables=tables, schema=(), step=9)
    assert [(r["grp"], r["n"]) for r in groups.tables["counts"]["rows"]] == [("A", 2), ("B", 0)]  # C: never read


def test_fixed_decimals_are_kept_as_the_sql_wrote_them():
    tables = {}
    spec = OutputSpec(columns=("share",), header="omitted")
    plain = derive(Derive(sql="SELECT 20 / 2 AS share"), tables=tables, schema=("share",), step=1)
    assert compose_derived(plain.tables["answer"], spec, []) == "10"  # a DOUBLE 10.0 is written 10
    fixed = derive(Derive(sql="SELECT printf('%.1f', 20 / 2) AS share"), tables=tables, schema=("share",), step=1)
    assert compose_derived(fixed.tables["answer"], spec, []) == "10.0"
    assert "printf('%.1f', x)" in Derive.__doc__


def test_a_record_page_is_checked_on_the_list_it_was_reached_from():
    listed, _ = step(obs("/search"), 1, {"kind": "goto", "url": "x"})  # Agency kept at its default
    detail, _ = step(obs("/detail/1"), 2, {"kind": "click", "target": {"text": "R-1"}}, previous=listed,
                     history=[listed])
    check = check_read(PLAN, "answer", detail, 3, [listed, detail])
    assert [(f["gate"], f["path"]) for f in check.mismatches] == [("agency", "/detail/1")]
    assert "on /search, the list this page was reached from," in check.mismatches[0]["message"]
    right, _ = step(obs("/search", agency="fda"), 1, {"kind": "goto", "url": "x"})
    assert check_read(PLAN, "answer", detail, 3, [right, detail]).mismatches == []
    assert check_read(PLAN, "answer", detail, 3, [detail]).notes() == []  # nothing to check it on


def test_a_default_window_narrower_than_the_plan_is_flagged_at_the_read_not_on_arrival():
    plan = Plan(gates=[Gate(kind="window", name="Date", target=Window(start="2019-01-01", end="2021-12-31"))])
    s1, flags = step(obs("/search", window=("2021-01-01", "2021-12-31")), 1, {"kind": "goto", "url": "x"}, plan=plan)
    assert flags == []  # the page's default window: not yet a mistake
    check = check_read(plan, "answer", s1, 2)
    assert [(f["rule"], f["node"]) for f in check.mismatches] == [("window_narrower", "extractor")]
    s2, held = step(obs("/search", window=("2021-01-01", "2021-12-31")), 3, {"kind": "scroll"}, previous=s1,
                    history=[s1], flags=check.mismatches, plan=plan)
    assert [f["rule"] for f in held] == ["window_narrower"]
    _, wide = step(obs("/search", window=("2019-01-01", "2021-12-31")), 4,
                   {"kind": "set_range", "start_target": {"label": "From date"}}, previous=s2, history=[s1, s2],
                   flags=held, plan=plan)
    assert wide == []


def test_a_long_derivation_is_whole_until_a_phase_has_rows_then_its_opening():
    from graph.prompting.render import DERIVATION_PREVIEW_TOKENS, derivation_text

    short = "rank by first year; verdict from the share"
    assert derivation_text(short, nothing_read=False) == short
    long = "SELECT " + ", ".join(f"col_{i}" for i in range(200)) + " FROM t"
    assert derivation_text(long, nothing_read=True) == long
    cut = derivation_text(long, nothing_read=False)
    assert cut.startswith("SELECT col_0") and cut.endswith("… (cut: the TASK says how)")
    assert len(cut) < len(long) and DERIVATION_PREVIEW_TOKENS == 15


@pytest.mark.asyncio
async def test_a_failed_extraction_names_the_planned_gate_its_control_holds_otherwise():
    """The rows' table lacks the asked column because a grouping gate was kept at its default: the failure says
    so and raises the flag, so the read is not simply retried in the same state."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from agent.config import ModelConfig
    from graph.nodes import Deps
    from graph.nodes.extractor import make_extractor
    from graph.state import new_usage

    class ToolBindingFake(FakeListChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    state, _ = step(obs("/search"), 1, {"kind": "goto", "url": "x"})
    deps = Deps(browser=None, policy=ChatPolicy(ToolBindingFake(responses=["x"])), model_config=ModelConfig(name="m"),
                spec=OutputSpec(columns=("year",)))
    update = await make_extractor(deps)({
        "pending": {"id": "c1", "name": "extract_rows", "args": {"columns": {"year": "Year"}}}, "step": 2,
        "observation": {"url": state["url"], "tables": [{"index": 0, "headers": ["Agency"], "rows": [["EPA"]]}]},
        "retrieval": state, "plan": PLAN.model_dump(), "usage": new_usage(0.0), "history": [state]})
    text = update["messages"][0].content
    assert text.startswith("extract_rows failed: column 'year': no header 'Year'")
    assert "[gate] Agency holds 'Any agency [any]' (its default: never set) but the plan needs 'FDA'" in text
    assert [(f["rule"], f["node"]) for f in update["drift_log"]] == [("gate_mismatch", "extractor")]
