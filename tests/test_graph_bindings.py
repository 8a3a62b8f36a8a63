"""Each plan gate bound once to the page's own identifiers (graph/plan/binding.py): by the exact rule, or by the
model's setter `gate` field (replacing the rule's, logged as `replaced`); the judge then uses the stored binding,
never words; a gate unbound at a read is said once with its candidates; a kept default is told by the binding."""

from __future__ import annotations

import pytest

from graph.checks.gates import check_read
from graph.plan.binding import bind, bound_plan, gate_id, rule_binding, unbound_notes
from graph.plan.judge import judge, named_controls
from graph.plan.targets import Checked, Value, Window
from graph.state import Gate, Plan


def _v(label: str, value: str, *, kind: str = "select", options: list[str] | None = None, set_at: int | None = None
       ) -> dict:
    return {"value": value, "label": label, "evidence": ["control"], "set_at_step": set_at, "set_by": None,
            "kind": kind, "options": options or []}


def _state(values: dict, url: str = "http://h/search", step: int = 1) -> dict:
    return {"url": url, "path": "/search", "values": values, "page": None, "pages": None, "result_count": None,
            "step": step}


MEASURE = ["Rate per 100k", "Count"]
PAGE = {"date_received": _v("Date received", "2020-01-01", kind="date"),
        "date_closed": _v("Date closed", "2021-01-01", kind="date"),
        "measure": _v("Measure", "Rate per 100k", options=MEASURE),
        "status": _v("Status", "Open", options=["Open", "Closed"])}


def test_the_exact_rule_binds_a_control_named_so_with_an_option_the_target_names():
    binding = rule_binding(Gate(kind="filter", name="Measure", target=Value(value="Count")), _state(PAGE), 3)
    assert binding is not None
    assert (binding["keys"], binding["by"], binding["accepts"], binding["step"]) == (["measure"], "rule", ["Count"], 3)
    assert binding["default"] == "Rate per 100k"  # untouched by the agent when bound: the site's default
    # named only in part, or no option is the target: not bound by rule
    assert rule_binding(Gate(kind="filter", name="Date", target=Value(value="2020")), _state(PAGE), 3) is None
    assert rule_binding(Gate(kind="filter", name="Measure", target=Value(value="Median")), _state(PAGE), 3) is None
    assert rule_binding(Gate(kind="filter", name="Status", target=Checked(checked=True)), _state(PAGE), 3) is None


def test_a_window_binds_to_its_named_from_to_pair():
    page = {"opened_from": _v("Opened from", "2019-01-01", kind="date"),
            "opened_to": _v("Opened to", "2019-12-31", kind="date"),
            "closed_from": _v("Closed from", "2018-01-01", kind="date")}
    gate = Gate(kind="window", name="Opened", target=Window(**{"from": "2019-01-01", "to": "2019-12-31"}))
    binding = rule_binding(gate, _state(page), 2)
    assert binding is not None and binding["keys"] == ["opened_from", "opened_to"]


def test_a_window_named_in_the_plural_and_one_end_set_by_the_model_bind_the_pair():
    """A played run: a plan's `Years 2009..2015` beside 'From year' / 'To year' selects. The rule binds the pair
    ('Years' names 'year'); the model's `gate` on one end binds the pair too, never that end alone (bound to 'To
    year' alone, the window read '2015..2015', narrower: a false flag for four turns and a false refusal)."""
    years = [str(y) for y in range(1986, 2021)]
    page = {"from": _v("From year", "2009", options=years, set_at=7), "to": _v("To year", "2015", options=years, set_at=8)}
    gate = Gate(kind="window", name="Years", target=Window(**{"from": "2009", "to": "2015"}))
    assert rule_binding(gate, _state(page), 8)["keys"] == ["from", "to"]
    plan = Plan(gates=[gate])
    first = bind(plan, {}, _state({**page, "to": _v("To year", "2020", options=years)}, step=7), 7,
                 action={"kind": "select"}, set_controls=["From year"], model_gate="Years")
    assert first[gate_id(gate)]["keys"] == ["from", "to"]
    assert bind(bound_plan(plan, first), first, _state(page, step=8), 8, action={"kind": "select"},
                set_controls=["To year"], model_gate="Years") == {}  # the same pair: nothing replaced
    assert judge(bound_plan(plan, first).gates[0], _state(page)).status == "held"


def test_the_judge_uses_the_stored_binding_not_words():
    gate = Gate(kind="filter", name="Date", target=Value(value="2021-01-01"))
    plan = bound_plan(Plan(gates=[gate]), {})
    assert judge(plan.gates[0], _state(PAGE)).status == "unresolved"  # two controls hold the word: never guessed
    binding = {"keys": ["date_closed"], "label": "Date closed", "accepts": [], "by": "model", "step": 4}
    plan = bound_plan(Plan(gates=[gate]), {gate_id(gate): binding})
    verdict = judge(plan.gates[0], _state(PAGE))
    assert (verdict.status, verdict.key, verdict.label) == ("held", "date_closed", "Date closed")
    assert named_controls(plan.gates[0], _state(PAGE)) == ["date_closed"]
    # a page without the bound control grounds nothing: no other control is taken for it
    other = {"date_received": PAGE["date_received"], "date": _v("Date", "2021-01-01", kind="date")}
    assert not judge(plan.gates[0], _state(other)).grounded


def test_the_models_gate_field_binds_the_control_it_set_and_replaces_the_rules_logged():
    gate = Gate(kind="filter", name="Status", target=Value(value="Closed"))
    plan = bound_plan(Plan(gates=[gate]), {})
    rule = bind(plan, {}, _state(PAGE), 1)
    assert rule[gate_id(gate)]["by"] == "rule" and rule[gate_id(gate)]["keys"] == ["status"]
    page = {**PAGE, "status_2": _v("Case status", "Closed", options=["Open", "Closed"], set_at=2)}
    made = bind(bound_plan(plan, rule), rule, _state(page), 2, action={"kind": "select"},
                set_controls=["Case status"], model_gate="status")
    binding = made[gate_id(gate)]
    assert (binding["keys"], binding["by"], binding["step"]) == (["status_2"], "model", 2)
    assert binding["replaced"]["keys"] == ["status"] and binding["replaced"]["by"] == "rule"  # never silent
    assert bind(bound_plan(plan, {**rule, **made}), {**rule, **made}, _state(page), 3) == {}  # bound once


def test_no_unbound_note_for_a_gate_the_page_grounds():
    """A played run: an all-dates window `Created` on an empty 'Created from / Created to' pair (nothing the rule
    binds: no dates held) was 'held by' that pair on PLAN ON THIS PAGE, and the read's note said it was bound to no
    control, 'Created' being a column to filter by. Given the page's state, a gate the judge grounds there gets no
    such note; one it cannot ground still does."""
    gate = Gate(kind="window", name="Created", target=Window(**{"from": None, "to": None}))
    plan = bound_plan(Plan(gates=[gate]), {})
    page = {"created_from": _v("Entry created: Created from", "", kind="date"),
            "created_to": _v("Entry created: Created to", "", kind="date")}
    observation = {"controls": [], "tables": [{"headers": ["Species", "Created"]}]}
    assert judge(plan.gates[0], _state(page)).status == "held"
    assert unbound_notes(plan, plan.gates, observation, set(), _state(page)) == []
    assert "'Created' is a column" in unbound_notes(plan, plan.gates, observation, set())[0][1]
    assert unbound_notes(plan, plan.gates, observation, set(), _state({}))[0][0] == gate_id(gate)


def test_a_gate_unbound_at_a_read_is_said_once_with_its_candidates():
    gate = Gate(kind="filter", name="Rate type", target=Value(value="Count"))
    plan = bound_plan(Plan(gates=[gate]), {})
    observation = {"controls": [{"ref": "e4", "label": "Measure", "kind": "select"},
                                {"ref": "e5", "label": "Search terms", "kind": "text"},
                                {"ref": "e6", "label": "Rate basis", "kind": "select"}]}
    notes = unbound_notes(plan, plan.gates, observation, set())
    assert notes == [(gate_id(gate), "note: gate Rate type = Count is bound to no control; candidates: "
                                     "'Rate basis' [e6] (gate='Rate type' on the setter binds it)")]
    assert unbound_notes(plan, plan.gates, observation, {gate_id(gate)}) == []  # said once
    binding = {"keys": ["measure"], "label": "Measure", "accepts": ["Count"], "by": "model", "step": 2}
    bound = bound_plan(plan, {gate_id(gate): binding})
    assert unbound_notes(bound, bound.gates, observation, set()) == []


def test_a_kept_default_is_told_by_the_binding():
    gate = Gate(kind="filter", name="Measure", target=Value(value="Count"))
    state = _state(PAGE, step=5)
    binding = rule_binding(gate, _state(PAGE), 1)
    kept = check_read(bound_plan(Plan(gates=[gate]), {gate_id(gate): binding}), "answer", state, 5, [])
    assert [f["message"].split(" but ")[0] for f in kept.mismatches] == ["Measure holds 'Rate per 100k' (its default: never set)"]
    # bound when the agent had already set it: its value then is no site default, so not said a kept default
    set_page = {**PAGE, "measure": _v("Measure", "Rate per 100k", options=MEASURE, set_at=1)}
    chosen = rule_binding(gate, _state(set_page), 1)
    assert "default" not in chosen
    check = check_read(bound_plan(Plan(gates=[gate]), {gate_id(gate): chosen}), "answer", state, 5, [])
    assert [f["message"].split(" but ")[0] for f in check.mismatches] == ["Measure holds 'Rate per 100k'"]


def test_the_gate_field_takes_the_gate_as_the_turn_shows_it():
    """A played model copied the turn's line (`search Title = census`) into `gate` and was told no such gate exists;
    the name, the line's head and the line all name it now, and another gate's name still does not."""
    from graph.tools.tool_schemas import ToolCallError, split_gate

    names = ["Title", "Date range: Filter dates by"]
    for written in ("Title", "search Title = census", "search Title", " title "):
        assert split_gate("select", {"ref": "e1", "gate": written}, names) == ({"ref": "e1"}, "Title")
    assert split_gate("fill", {"ref": "e1", "gate": "window Date range: Filter dates by = 2020..2021"}, names)[1] \
        == "Date range: Filter dates by"
    with pytest.raises(ToolCallError, match="is no gate of the plan"):
        split_gate("select", {"ref": "e1", "gate": "filter Category = cs.DL"}, names)


def test_a_search_gate_binds_to_the_one_box_the_agent_typed_its_words_into():
    """The site calls the box 'Search terms', the plan `search Title = census`: once the agent typed 'census' into
    it, that box is the gate's (no words guessed); untyped, or typed into two boxes, it stays unbound."""
    gate = Gate(kind="search", name="Title", target=Value(value="census"))
    field = _v("Search field", "All fields", options=["All fields", "Title", "Abstract"])
    untyped = {"terms": _v("Search terms", "", kind="text"), "field": field}
    assert rule_binding(gate, _state(untyped), 2) is None
    typed = {**untyped, "terms": _v("Search terms", "Census", kind="text", set_at=2)}
    made = rule_binding(gate, _state(typed), 3)
    assert made is not None and made["keys"] == ["terms"] and made["by"] == "rule"
    twice = {**typed, "other": _v("Other box", "census", kind="text", set_at=3)}
    assert rule_binding(gate, _state(twice), 4) is None
    page_default = {**untyped, "terms": _v("Search terms", "census", kind="text")}  # not typed by the agent
    assert rule_binding(gate, _state(page_default), 2) is None


def test_a_search_gate_named_by_a_field_option_binds_the_box_and_the_field_selector():
    """`Abstract = calibration` on a form of a terms box and a 'Search field' selector (All fields / Title /
    Abstract): the box the agent typed the words into and the selector offering 'Abstract' are the gate's; the
    terms searched in All fields (the selector's default) are a mismatch naming the selector, in Abstract held."""
    gate = Gate(kind="search", name="Abstract", target=Value(value="calibration"))
    fields = ["All fields", "Title", "Abstract"]
    page = {"terms": _v("Search terms", "calibration", kind="text", set_at=2),
            "field": _v("Search field", "All fields", options=fields),
            "sort": _v("Sort by", "Relevance", options=["Relevance", "Title"])}
    made = rule_binding(gate, _state(page), 3)
    assert made is not None and made["keys"] == ["terms"]
    assert made["field"] == {"key": "field", "label": "Search field", "option": "Abstract"}
    plan = bound_plan(Plan(gates=[gate]), {gate_id(gate): made})
    verdict = judge(plan.gates[0], _state(page))
    assert (verdict.status, verdict.label, verdict.value, verdict.needs) == ("mismatch", "Search field", "All fields",
                                                                          ("Abstract",))
    assert named_controls(plan.gates[0], _state(page)) == ["terms", "field"]
    chosen = {**page, "field": _v("Search field", "Abstract", options=fields, set_at=3)}
    assert judge(plan.gates[0], _state(chosen)).status == "held"
    coded = {**page, "field": _v("Search field", "Abstract [abstract]", options=fields, set_at=3)}
    assert judge(plan.gates[0], _state(coded)).status == "held"  # the held value as the tracker reads it: 'Label [code]'
    # 'Title' is an option of two selectors: which one is the field is not guessed
    title = Gate(kind="search", name="Title", target=Value(value="calibration"))
    assert "field" not in rule_binding(title, _state(page), 3)


def test_an_unbound_note_names_a_column_or_an_option_never_unrelated_controls():
    """Played runs were offered unrelated dropdowns as candidates for a plan gate that was a column choice
    ('Measure = Percent') or an action ('Export CSV'): a target that is a table's header is said as a column to
    read; a control offering the target as an option is a candidate; otherwise no candidate is made up."""
    plan = bound_plan(Plan(gates=[Gate(kind="view", name="Measure", target=Value(value="Percent")),
                                  Gate(kind="filter", name="Compared with state", target=Value(value="Higher")),
                                  Gate(kind="view", name="Export CSV", target=Value(value="all rows")),
                                  Gate(kind="filter", name="Basis", target=Value(value="Final"))]), {})
    observation = {"controls": [{"ref": "e1", "label": "Survey product", "kind": "select",
                                 "options": [{"label": "1-year", "value": "acs1"}]},
                                {"ref": "e2", "label": "Stage", "kind": "select",
                                 "options": [{"label": "Draft", "value": "d"}, {"label": "Final", "value": "f"}]}],
                   "tables": [{"headers": ["County", "Count", "Percent", "Compared with state"], "rows": []}]}
    notes = dict(unbound_notes(plan, plan.gates, observation, set()))
    measure, compared, export, basis = (notes[gate_id(g)] for g in plan.gates)
    assert "'Compared with state' is a column of table 0 here: filter rows by it" in compared
    assert "'Percent' is a column of table 0 here: take it in extract_rows" in measure and "e1" not in measure
    assert export.endswith(": no control on this page is named so")
    assert "candidates: 'Stage' [e2]" in basis and "Survey product" not in basis


def test_the_models_gate_on_the_field_selector_binds_it_as_the_search_gates_field():
    """A played model set `gate=Title` on the terms box, then on the 'Search field' selector: the second bound the
    selector in the box's place, and 'kernel' named no value of it. The selector is the gate's field now."""
    gate = Gate(kind="search", name="Title", target=Value(value="kernel"))
    plan = Plan(gates=[gate])
    fields = ["All fields", "Title", "Abstract"]
    typed = {"terms": _v("Search terms", "kernel", kind="text", set_at=2), "field": _v("Search field", "All fields",
                                                                                      options=fields)}
    first = bind(plan, {}, _state(typed, step=2), 2, action={"kind": "fill"}, set_controls=["Search terms"],
                 model_gate="Title")
    made = first[gate_id(gate)]
    assert made["keys"] == ["terms"] and made["field"]["key"] == "field"  # the field found beside the box
    chosen = {**typed, "field": _v("Search field", "Title", options=fields, set_at=3)}
    second = bind(plan, first, _state(chosen, step=3), 3, action={"kind": "select"}, set_controls=["Search field"],
                  model_gate="Title")
    assert second == {}  # already the gate's field: nothing replaced
    bound = bound_plan(plan, first)
    assert judge(bound.gates[0], _state(chosen)).status == "held"
    assert judge(bound.gates[0], _state(typed)).status == "mismatch"
    untyped = {**chosen, "terms": _v("Search terms", "", kind="text")}
    alone = bind(plan, {}, _state(untyped, step=3), 3, action={"kind": "select"}, set_controls=["Search field"],
                 model_gate="Title")
    assert alone == {}  # the field before any box: not the gate's terms box


def test_a_gate_in_the_plans_own_words_binds_to_the_one_control_offering_its_value():
    """A played plan named 'Date type = Original submission (v1)'; the page calls the radio group 'Date basis' and
    offers that option word for word: the one control offering it is the gate's, so its default is judged (not
    'no control here'). A value two controls offer binds neither."""
    gate = Gate(kind="filter", name="Date type", target=Value(value="Original submission (v1)"))
    page = {"basis": _v("Date basis", "Latest version", kind="radio_group",
                        options=["Latest version", "Original submission (v1)"]),
            "sort": _v("Sort", "Newest first", options=["Newest first", "Oldest first"])}
    made = rule_binding(gate, _state(page), 2)
    assert made is not None and made["keys"] == ["basis"] and made["default"] == "Latest version"
    plan = bound_plan(Plan(gates=[gate]), {gate_id(gate): made})
    assert judge(plan.gates[0], _state(page)).status == "mismatch"
    year = Gate(kind="filter", name="Year", target=Value(value="2021"))
    years = {"from": _v("From", "2019", options=["2019", "2021"]), "to": _v("To", "2024", options=["2021", "2024"])}
    assert rule_binding(year, _state(years), 2) is None


def test_a_value_alone_binds_no_control_the_gates_name_does_not_name():
    """A blind plan's view gate 'Section = Level' (a section of a later page) shares a value, word for word, with an
    unrelated filter ('Data type', at 'Any') of the listing. A value alone is no evidence the filter is the gate: it
    stays unbound (a note naming the filter as a candidate), so the filter's default is never judged a kept one.
    Once the agent sets that filter to the value, its own act binds it."""
    gate = Gate(kind="view", name="Section", target=Value(value="Level"))
    page = {"type": _v("Data type", "Any", options=["Any", "Level", "Flow"]),
            "status": _v("Station status", "Active", options=["Active", "All stations"])}
    assert rule_binding(gate, _state(page), 2) is None
    notes = unbound_notes(Plan(gates=[gate]), [gate], {"controls": [
        {"ref": "e3", "label": "Data type", "kind": "select", "options": ["Any", "Level", "Flow"]}]}, {})
    assert any("'Data type' [e3]" in note for _, note in notes), notes
    chosen = {**page, "type": _v("Data type", "Level", options=["Any", "Level", "Flow"], set_at=3)}
    made = rule_binding(gate, _state(chosen, step=3), 3)
    assert made is not None and made["keys"] == ["type"] and "default" not in made
