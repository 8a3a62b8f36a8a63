"""The gate judge on typed plan targets (graph/plan/judge.py, graph/plan/targets.py): grounding a value on a control's
options, what is a mismatch, what is unresolved; and the gates in force for a read, a phase and the tracker."""

from __future__ import annotations

from graph.plan.judge import gates_for, grounding_lines, judge
from graph.plan.targets import AnyOf, Checked, Unknown, Value, Window
from graph.state import Gate, Phase, Plan


def _state(**controls: dict) -> dict:
    return {"values": {k: {"set_at_step": None, **v} for k, v in controls.items()}}


SYNONYMS = _state(synonyms={"value": "on", "label": "Include synonyms (old names)", "kind": "checkbox"})
CONDITION = ["All conditions", "Diabetes mellitus (E10-E14)", "Diabetes insipidus (E23.2)", "Asthma (J45)"]


def test_a_box_is_held_by_its_checked_state_and_a_value_on_a_box_is_unresolved():
    assert judge(Gate(kind="filter", name="Include synonyms", target=Checked(checked=True)), SYNONYMS).status == "held"
    assert judge(Gate(kind="filter", name="Include synonyms", target=Checked(checked=False)), SYNONYMS).status == \
        "mismatch"
    verdict = judge(Gate(kind="scope", name="Include synonyms", target=Value(value="primary or cross-listed")), SYNONYMS)
    assert (verdict.status, verdict.key) == ("unresolved", "synonyms") and "revise_plan" in verdict.evidence
    select = _state(field={"value": "All fields", "label": "Search field", "kind": "select", "options": ["All fields"]})
    assert judge(Gate(kind="filter", name="Search field", target=Checked(checked=True)), select).status == "unresolved"


def test_a_unique_option_holding_the_targets_words_is_the_targets_value():
    state = _state(condition={"value": "Diabetes mellitus (E10-E14)", "label": "Condition", "kind": "select",
                              "options": CONDITION})
    assert judge(Gate(kind="filter", name="Condition", target=Value(value="Diabetes mellitus")), state).status == "held"
    wrong = judge(Gate(kind="filter", name="Condition", target=Value(value="Asthma")), state)
    assert (wrong.status, wrong.needs) == ("mismatch", ("Asthma (J45)",))
    # two options hold 'Diabetes': nothing is guessed; a target no option holds is unresolved, never a mismatch
    assert judge(Gate(kind="filter", name="Condition", target=Value(value="Diabetes")), state).status == "unresolved"
    assert judge(Gate(kind="filter", name="Condition", target=Value(value="Gout")), state).status == "unresolved"


def test_a_list_read_one_at_a_time_holds_while_the_control_holds_any_of_it():
    gate = Gate(kind="filter", name="HUC", target=AnyOf(any_of=["02040502", "04040504", "05040505"]))
    assert judge(gate, _state(huc={"value": "04040504", "label": "Basin unit (HUC)", "kind": "text"})).status == "held"
    assert judge(gate, _state(huc={"value": "02040502,04040504,05040505", "label": "Basin unit (HUC)"})).status == "held"
    assert judge(gate, _state(huc={"value": "09999999", "label": "Basin unit (HUC)", "kind": "text"})).status == \
        "mismatch"


def test_a_list_read_together_is_held_only_by_all_of_it_at_once():
    gate = Gate(kind="filter", name="HUC", target=AnyOf(any_of=["02040502", "04040504"], together=True))
    assert judge(gate, _state(huc={"value": "04040504,02040502", "label": "HUC", "kind": "text"})).status == "held"
    assert judge(gate, _state(huc={"value": "04040504", "label": "HUC", "kind": "text"})).status == "mismatch"


def test_a_list_of_options_stands_for_each_of_them_not_its_first():
    groups = ["All groups", "Inorganics", "Microbiological", "Nutrient", "Physical"]
    gate = Gate(kind="filter", name="Characteristic group", target=AnyOf(any_of=groups[1:]))
    for held in groups[1:]:
        state = _state(group={"value": held, "label": "Characteristic group", "kind": "select", "options": groups})
        assert judge(gate, state).status == "held", held
    state = _state(group={"value": "All groups", "label": "Characteristic group", "kind": "select", "options": groups})
    assert judge(gate, state).status == "mismatch"


def test_an_unknown_target_is_unresolved_with_the_planners_note():
    name = _state(name={"value": "Astcalphis gracilis", "label": "Name contains", "kind": "text"})
    verdict = judge(Gate(kind="filter", name="Name", target=Unknown(unknown="the oldest other-genus name")), name)
    assert verdict.status == "unresolved" and "oldest other-genus name" in verdict.evidence and verdict.grounded
    assert judge(Gate(kind="filter", name="Name", target=Value(value="Saugonach striatus")), name).status == "mismatch"
    assert judge(Gate(kind="filter", name="Name", target=Value(value="Astcalphis gracilis")), name).status == "held"


def test_an_unknown_target_the_agent_set_is_said_set_not_unresolved_each_turn():
    """Played plans gave a gate no value ('Results per page'; 'Company', to be left as it is): the turn's line says what
    its control holds, set or not checked, and asks nothing (it was UNRESOLVED, 'revise_plan', on every turn)."""
    gate = Gate(kind="view", name="Results per page", target=Unknown(unknown="as many as offered"))
    untouched = _state(size={"value": "10", "label": "Results per page", "kind": "select", "options": ["10", "50"]})
    assert grounding_lines([gate], untouched) == ["view Results per page = ? (as many as offered) -> 'Results per "
                                                  "page' holds '10': not checked (the plan gives no value)"]
    assert grounding_lines([gate], _state(sort={"value": "Newest", "label": "Sort", "kind": "select"})) == []
    chosen = _state(size={"value": "50", "label": "Results per page", "kind": "select", "options": ["10", "50"],
                          "set_at_step": 5})
    assert grounding_lines([gate], chosen) == ["view Results per page = ? (as many as offered) -> 'Results per page' "
                                               "holds '50': set (the plan gives no value)"]


def test_a_search_gate_grounds_on_a_typed_box_never_on_a_selector_named_alike():
    """A played plan's `search Search term = diffusion` on a form whose fieldset 'Search term' holds a 'Search field'
    selector and a 'Search terms' box: the box (a plural named so) is the gate's, the selector never."""
    state = _state(field={"value": "All fields", "label": "Search term: Search field", "kind": "select",
                          "options": ["All fields", "Abstract"]},
                   terms={"value": "diffusion", "label": "Search terms", "kind": "text", "set_at_step": 2})
    verdict = judge(Gate(kind="search", name="Search term", target=Value(value="diffusion")), state)
    assert (verdict.status, verdict.key) == ("held", "terms")


def test_a_window_open_or_wider_on_either_side_is_a_wider_mismatch():
    years = [str(y) for y in range(2016, 2024)]

    def pair(start: str, end: str) -> dict:
        return _state(year_from={"value": start, "label": "From year", "kind": "select", "options": years},
                      year_to={"value": end, "label": "To year", "kind": "select", "options": years})

    gate = Gate(kind="window", name="Year", target=Window(start="2018", end="2021"))
    assert judge(gate, pair("2018", "2021")).status == "held"
    for start, end in (("2018", "2023"), ("2016", "2021")):
        verdict = judge(gate, pair(start, end))
        assert (verdict.status, verdict.wider) == ("mismatch", True), (start, end)
    narrow = judge(gate, pair("2019", "2021"))
    assert (narrow.status, narrow.wider) == ("mismatch", False)
    dates = _state(date_from={"value": "2018-01-01", "label": "Date from", "kind": "date"},
                   date_to={"value": "", "label": "Date to", "kind": "date"})
    verdict = judge(Gate(kind="window", name="Date", target=Window(start="2018", end="2021")), dates)
    assert (verdict.status, verdict.wider, verdict.value) == ("mismatch", True, "2018-01-01..")  # To left open


def test_a_window_open_at_one_end_holds_only_the_widest_bound_there():
    """'since 2018': From 2018 and To left empty or at the last year the control offers is held; a To the control
    could set later is narrower, whoever set it; a dated To on a free date field is unresolved (nothing here says where
    the records end), a default From kept there is narrower."""
    years = [str(y) for y in range(2016, 2024)]

    def pair(start: str, end: str, set_at: int | None = None) -> dict:
        return _state(year_from={"value": start, "label": "From year", "kind": "select", "options": years},
                      year_to={"value": end, "label": "To year", "kind": "select", "options": years, "set_at_step": set_at})

    since = Gate(kind="window", name="Year", target=Window(start="2018", end=None))
    assert judge(since, pair("2018", "2023")).status == "held"
    assert judge(since, pair("2018", "2021", set_at=3)).status == "mismatch"
    assert judge(since, pair("2017", "2023")).wider

    def dates(end: str, set_at: int | None = None) -> dict:
        return _state(d_from={"value": "2018-01-01", "label": "Date from", "kind": "date"},
                      d_to={"value": end, "label": "Date to", "kind": "date", "set_at_step": set_at})

    gate = Gate(kind="window", name="Date", target=Window(start="2018-01-01", end=None))
    assert judge(gate, dates("")).status == "held"
    assert judge(gate, dates("2024-12-31", set_at=2)).status == "unresolved"
    assert judge(gate, dates("2020-12-31")).status == "unresolved"  # a default end: the site's present, or not
    until = Gate(kind="window", name="Date", target=Window(start=None, end="2021-12-31"))
    kept = _state(d_from={"value": "2019-01-01", "label": "Date from", "kind": "date"},
                  d_to={"value": "2021-12-31", "label": "Date to", "kind": "date", "set_at_step": 2})
    assert judge(until, kept).status == "mismatch"  # a default start kept drops the older records


def test_a_window_the_plan_wants_open_is_held_empty_and_a_kept_default_window_is_not():
    """A window open at both ends (all dates) for a search that opens on its last three years: the default kept is narrower (a mismatch, the commonest scope drift), the pair cleared is
    held, dates the agent set are not judged (nothing here says where the records begin)."""
    def received(start: str, end: str, set_at: int | None = None) -> dict:
        return _state(received_from={"value": start, "label": "Date received from", "kind": "date", "set_at_step": set_at},
                      received_to={"value": end, "label": "Date received to", "kind": "date", "set_at_step": set_at})

    gate = Gate(kind="window", name="Date received", target=Window(start=None, end=None))
    kept = judge(gate, received("2022-01-01", "2024-12-31"))
    assert (kept.status, kept.wider, kept.value) == ("mismatch", False, "2022-01-01..2024-12-31")
    assert judge(gate, received("", "")).status == "held"
    assert judge(gate, received("2022-01-01", "")).status == "mismatch"
    assert judge(gate, received("2011-12-01", "2024-12-31", set_at=4)).status == "unresolved"
    assert judge(gate, _state()).status == "unresolved"


def test_a_start_the_page_moved_after_an_action_is_no_kept_default():
    """A played run: the site's 'All dates' button filled the From date (2022-01-01 -> 2011-12-01), the agent typed
    To. The From was set by no action addressing it, but it is not the default the page opened with either: not
    narrower (no evidence where the records begin), unresolved. The default itself, never moved, stays narrower."""
    gate = Gate(kind="window", name="Date received", target=Window(start=None, end=None))
    moved = _state(received_from={"value": "2011-12-01", "label": "Date received from", "kind": "date",
                                  "first_seen": "2022-01-01"},
                   received_to={"value": "2026-11-29", "label": "Date received to", "kind": "date", "set_at_step": 7,
                                "first_seen": "2024-12-31"})
    assert judge(gate, moved).status == "unresolved"
    kept = _state(received_from={"value": "2022-01-01", "label": "Date received from", "kind": "date",
                                 "first_seen": "2022-01-01"},
                  received_to={"value": "2026-11-29", "label": "Date received to", "kind": "date", "set_at_step": 7})
    assert judge(gate, kept).status == "mismatch"


def test_a_read_judges_the_state_the_page_applied():
    state = _state(category={"value": "cs.CL (Computation and Language)", "label": "Category", "kind": "select",
                             "applied": "cs.LG", "options": ["cs.CL (Computation and Language)", "cs.LG"]})
    gate = Gate(kind="filter", name="Category", target=Value(value="cs.CL"))
    assert judge(gate, state).status == "held"  # the form holds it (between reads)
    verdict = judge(gate, state, applied=True)  # the rows shown are the URL's
    assert verdict.status == "mismatch" and "not applied" in verdict.evidence


def test_dates_in_any_common_spelling_are_one_value_and_a_window_grounds_on_a_from_to_pair():
    date = _state(date={"value": "4 March 2021", "label": "Date", "kind": "date"})
    assert judge(Gate(kind="filter", name="Date", target=Value(value="2021-03-04")), date).status == "held"
    pair = _state(filed_from={"value": "2013-01-01", "label": "Filed from", "kind": "date"},
                  filed_to={"value": "2014-06-30", "label": "Filed to", "kind": "date"})
    narrow = judge(Gate(kind="window", name="Initial filing date", target=Window(start="2013-01-01", end="2015-01-01")), pair)
    assert (narrow.status, narrow.bounds, narrow.value) == ("mismatch", ("filed_from", "filed_to"),
                                                           "2013-01-01..2014-06-30")
    assert judge(Gate(kind="window", name="Filed", target=Window(start="2013", end="2014")), pair).status == "mismatch"
    wider = judge(Gate(kind="window", name="Filed", target=Window(start="2013-06-01", end="2014-01-01")), pair)
    assert (wider.status, wider.wider) == ("mismatch", True)  # a wider window lets in rows the plan excludes
    assert judge(Gate(kind="window", name="Filed", target=Window(start="2013-01-01", end="2014-06-30")), pair).status == "held"


def test_a_gate_naming_no_control_or_several_is_unresolved():
    state = _state(date_received={"value": "2020", "label": "Date received"}, date_closed={"value": "", "label":
                                                                                          "Date closed"})
    assert judge(Gate(kind="scope", name="geography", target=Value(value="Eastmarch")), state).status == "unresolved"
    several = judge(Gate(kind="filter", name="Date", target=Value(value="2020")), state)
    assert several.status == "unresolved" and several.candidates == ("Date received", "Date closed")


def test_the_gates_in_force_are_said_in_one_place():
    plan = Plan(gates=[Gate(kind="filter", name="Status", target=Value(value="Terminated")),
                       Gate(kind="sort", name="Order", target=Value(value="newest"), required=False)],
                phases=[Phase(read="2018", into="y2018", gates=[Gate(kind="window", name="Year",
                                                                     target=Window(start="2018", end="2018"))]),
                        Phase(read="2023", into="y2023", gates=[Gate(kind="window", name="Year",
                                                                     target=Window(start="2023", end="2023"))])])
    names = lambda gates: [(g.name, str(g.target)) for g in gates]  # noqa: E731
    assert names(gates_for(plan, "y2018")) == [("Status", "Terminated"), ("Order", "newest"), ("Year", "2018..2018")]
    assert names(gates_for(plan, "y2023", required=True)) == [("Status", "Terminated"), ("Year", "2023..2023")]
    assert names(gates_for(plan, plan.phases[1])) == names(gates_for(plan, "y2023"))
    assert len(gates_for(plan, every_phase=True)) == 4 and gates_for(None) == []
    assert names(gates_for(plan, "not_a_phase")) == [("Status", "Terminated"), ("Order", "newest")]


def test_its_default_never_set_is_said_only_when_true():
    """The read check on a value the agent set on an earlier page (then lost here) does not call it a default."""
    from graph.checks.gates import check_read

    plan = Plan(gates=[Gate(kind="filter", name="Status", target=Value(value="Terminated"))])
    options = ["All", "Active", "Terminated"]

    def retrieval(path: str, value: str, set_at: int | None) -> dict:
        return {"url": "http://o" + path, "path": path, "page": None, "pages": None, "result_count": None, "step": 5,
                "values": {"status": {"value": value, "label": "Status", "evidence": ["control"], "set_at_step": set_at,
                                      "set_by": None, "kind": "select", "options": options}}}

    kept = check_read(plan, "answer", retrieval("/list", "All", None), 5, history=[])
    assert "(its default: never set)" in kept.mismatches[0]["message"]
    earlier = retrieval("/search", "Terminated", 2)
    lost = check_read(plan, "answer", retrieval("/list", "All", None), 5, history=[earlier])
    assert lost.mismatches and "never set" not in lost.mismatches[0]["message"]
    assert check_read(plan, "answer", retrieval("/list", "Terminated", None), 5).mismatches == []
