"""Plan gates are matched to the page's state by meaning (whole normalised labels, never substrings; an
ambiguous gate is reported, not guessed), and a phased plan lets a later phase set other gates without drift."""

from __future__ import annotations

from agent.measuring.scripted import plan_from_walkthrough
from browser.types import Control, Observation, Option
from graph.plan.targets import Value, Window
from graph.plan.values import find_gate_value, gate_candidates
from graph.state import Gate, Phase, Plan
from graph.tracking.plan_flags import ambiguous_gates
from graph.tracking.tracker import track
from tests.test_graph_tracker import obs, step


def _state(**values: str) -> dict:
    return {"values": {k: {"value": v, "label": k.replace("_", " ").title()} for k, v in values.items()}}


def test_look_alike_labels_do_not_match():
    state = _state(update_frequency="Daily", identifier="X-1", mandate="Federal")
    assert find_gate_value(state, "Date") is None  # 'date' is inside 'update' and 'mandate', not a word of either
    assert find_gate_value(state, "ID") is None  # not 'identifier'
    assert find_gate_value(_state(update_frequency="Daily", date_received="2020"), "Date") == ("date_received", "2020")


def test_the_whole_label_wins_over_a_longer_one():
    state = _state(station_status="Active", status="All")
    assert find_gate_value(state, "Status") == ("status", "All")
    assert find_gate_value(state, "station status") == ("station_status", "Active")


def test_an_ambiguous_gate_is_reported_never_guessed():
    state = _state(date_received="2020-01-01", date_closed="2021-01-01")
    assert find_gate_value(state, "Date") is None
    assert [k for k, _ in gate_candidates(state, "Date")] == ["date_received", "date_closed"]
    notes = ambiguous_gates(Plan(gates=[Gate(kind="filter", name="Date", target=Value(value="2020"))]), state)
    assert notes == ["Date matches 2 controls ['Date Received', 'Date Closed']"]


def test_a_gate_mismatch_is_still_flagged():
    plan = Plan(gates=[Gate(kind="filter", name="Agency", target=Value(value="FDA"))])
    s1, _ = step(obs("/search"), 1, {"kind": "goto", "url": "x"})
    _, flags = step(obs("/search", agency="epa"), 2, {"kind": "select", "target": {"label": "Agency"}, "option": "EPA"},
                    previous=s1, history=[s1], plan=plan)
    assert [f["rule"] for f in flags] == ["gate_mismatch"]


def _reset_after_a_detour(plan: Plan | None, phase: Phase | None):
    """Agency set to EPA, a detail page opened, then a link back to the search that resets Agency."""
    s1, _ = step(obs("/search"), 1, {"kind": "goto", "url": "x"})
    s2, _ = step(obs("/search", agency="epa"), 2, {"kind": "select", "target": {"label": "Agency"}, "option": "EPA"},
                 previous=s1, history=[s1], plan=plan)
    s3, f3 = step(obs("/detail/1"), 3, {"kind": "click", "target": {"text": "R-1"}}, previous=s2, history=[s1, s2],
                  plan=plan)
    result = track(obs=obs("/search"), step=4, action={"kind": "click", "target": {"text": "New search"}},
                   result=None, previous=s3, history=[s1, s2, s3], active_flags=f3, plan=plan, phase=phase)
    return result[1]


def test_a_later_phase_may_reset_an_earlier_phases_gate():
    unphased = _reset_after_a_detour(None, None)
    assert [f["rule"] for f in unphased] == ["navigation_reset"]
    plan = Plan(phases=[Phase(read="list", into="records", gates=[Gate(kind="filter", name="Agency", target=Value(value="EPA"))]),
                        Phase(read="all agencies", into="totals", gates=[])])
    assert _reset_after_a_detour(plan, plan.phases[1]) == []  # the plan says phase 2 reads without it
    assert [f["rule"] for f in _reset_after_a_detour(plan, plan.phases[0])] == ["navigation_reset"]


def test_each_phase_may_set_its_own_value_without_a_mismatch():
    plan = Plan(phases=[Phase(read="EPA rows", into="epa", gates=[Gate(kind="filter", name="Agency", target=Value(value="EPA"))]),
                        Phase(read="FDA rows", into="fda", gates=[Gate(kind="filter", name="Agency", target=Value(value="FDA"))])])
    s1, _ = step(obs("/search"), 1, {"kind": "goto", "url": "x"})
    s2, flags = step(obs("/search", agency="fda"), 2, {"kind": "select", "target": {"label": "Agency"},
                                                       "option": "FDA"}, previous=s1, history=[s1], plan=plan)
    assert flags == []
    _, flags = step(obs("/search", agency="epa"), 3, {"kind": "select", "target": {"label": "Agency"},
                                                      "option": "EPA"}, previous=s2, history=[s1, s2], plan=plan)
    assert flags == []
    plan.phases[0].gates[0] = Gate(kind="filter", name="Agency", target=Value(value="Any agency"))
    _, flags = step(obs("/search", agency="epa"), 3, {"kind": "select", "target": {"label": "Agency"},
                                                      "option": "EPA"}, previous=s2, history=[s1, s2], plan=plan)
    assert [f["rule"] for f in flags] == ["gate_mismatch"]  # a value no phase names is still wrong
    plan.phases[0].gates[0] = Gate(kind="filter", name="Agency", target=Value(value="DOE"))  # names no option of the control: unresolved (the model is asked)
    _, flags = step(obs("/search", agency="epa"), 3, {"kind": "select", "target": {"label": "Agency"},
                                                      "option": "EPA"}, previous=s2, history=[s1, s2], plan=plan)
    assert flags == []


def test_the_scripted_plan_has_one_phase_per_table():
    steps = [
        {"tool": "goto", "args": {"url": "http://s/search?scope=all"}},
        {"tool": "select", "args": {"target": {"label": "Group"}, "option": "A"}},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}},
        {"tool": "extract_rows", "args": {"into": "groups", "columns": {"g": "Group"}}},
        {"tool": "select", "args": {"target": {"label": "Group"}, "option": "B"}},
        {"tool": "extract_rows", "args": {"into": "groups", "columns": {"g": "Group"}}},
        {"tool": "read_facts", "args": {"url": "http://s/d/1", "into": "facts", "fields": {"x": "X"}},
         "phase_details": True},
        {"tool": "read_facts", "args": {"url": "http://s/d/2", "into": "facts", "fields": {"x": "X"}}},
        {"tool": "derive", "args": {"sql": "SELECT g FROM groups"}},
        {"tool": "finish", "args": {}},
    ]
    plan = plan_from_walkthrough(steps)
    assert [(p.into, {g.name: str(g.target) for g in p.gates}, p.detail_pages) for p in plan.phases] == [
        ("groups", {"scope": "all"}, False),  # Group took two values in this table: no single gate to check
        ("facts", {"scope": "all", "Group": "B"}, True)]
    assert plan.gates == [] and plan.derivation == "SELECT g FROM groups"


def test_read_facts_opening_a_url_is_a_deliberate_navigation():
    s1, _ = step(obs("/results?agency=epa", agency="epa"), 1, {"kind": "goto", "url": "x"})
    s2, flags = step(obs("/results?agency=fda", agency="fda"), 2,
                     {"kind": "page_facts", "url": "/results?agency=fda"}, previous=s1, history=[s1])
    assert flags == [] and s2["values"]["agency"]["set_at_step"] == 2
    _, lost = step(obs("/results?agency=fda", agency="fda"), 2, {"kind": "click", "target": {"text": "x"}},
                   previous=s1, history=[s1])
    assert [f["rule"] for f in lost] == ["navigation_reset"]  # the same change by a click is drift


def _page_with_look_alikes(status: str = "open") -> Observation:
    """Two controls whose labels both hold 'Status' and one whose label holds 'Date': only the kind and the
    options tell which one a gate means."""
    return Observation(url="http://site.test/search", controls=[
        Control(ref="e1", kind="select", label="Case status", name="case_status", value=status,
                options=[Option(label="Open", value="open", selected=status == "open"),
                         Option(label="Closed", value="closed", selected=status == "closed")]),
        Control(ref="e2", kind="select", label="Status of review", name="review_status", value="any",
                options=[Option(label="Any", value="any", selected=True), Option(label="Reviewed", value="rev")]),
        Control(ref="e3", kind="date", label="Date filed", name="filed", value="2020-01-01"),
        Control(ref="e4", kind="select", label="Date type", name="date_type", value="received",
                options=[Option(label="Received", value="received", selected=True)]),
    ])


def test_look_alike_gates_are_told_apart_by_options_and_kind():
    state, _ = track(obs=_page_with_look_alikes(), step=1, action={"kind": "goto", "url": "x"}, result=None,
                     previous=None, history=[], active_flags=[], plan=None)
    closed = Gate(kind="filter", name="Status", target=Value(value="Closed"))
    assert find_gate_value(state, "Status") is None  # by label alone: two controls
    assert find_gate_value(state, "Status", closed) == ("case_status", "Open")  # only it offers 'Closed'
    window = Gate(kind="window", name="Date", target=Window(start="2020-01-01", end="2020-12-31"))
    assert find_gate_value(state, "Date") is None
    assert find_gate_value(state, "Date", window) == ("filed", "2020-01-01")  # the date field, not 'Date type'
    neither = Gate(kind="filter", name="Status", target=Value(value="Pending"))  # no control offers it: still ambiguous
    assert find_gate_value(state, "Status", neither) is None
    assert ambiguous_gates(Plan(gates=[neither, closed]), state) == [
        "Status matches 2 controls ['Case status', 'Status of review']"]


def test_a_look_alike_gate_resolved_by_options_is_checked_for_mismatch():
    plan = Plan(gates=[Gate(kind="filter", name="Status", target=Value(value="Closed"))])
    state, flags = track(obs=_page_with_look_alikes("open"), step=2,
                         action={"kind": "select", "target": {"label": "Case status"}, "option": "Open"},
                         result=None, previous=None, history=[], active_flags=[], plan=plan)
    assert [(f["rule"], f["gate"], f["after"]) for f in flags] == [("gate_mismatch", "case_status", "Open")]


def test_an_unresolved_gate_is_said_at_the_first_read_only():
    """A played run was told the same unresolved gate at each of its 8 reads: said once, stored with that read;
    flags and clamps stay each read's own."""
    from graph.checks.gates import ReadCheck
    from graph.evidence.workspace_tools import read_notes

    first: dict = {"step": 3, "rows": 2}
    check = ReadCheck(clamps=["Year = '2020', not the plan's '2019': the page's last year"],
                      unresolved=["collection=Westwood (no control or URL parameter here is named so)"])
    assert read_notes(check, {}, first) == check.notes() and first["unresolved"] == check.unresolved
    again: dict = {"step": 5, "rows": 2}
    tables = {"t": {"reads": [first]}}
    assert read_notes(check, tables, again) == ["[gate] clamped: Year = '2020', not the plan's '2019': the page's "
                                                "last year"]
    assert "unresolved" not in again
