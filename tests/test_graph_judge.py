"""The gate judge on the blind plans real models wrote (graph/plan/judge.py): lenient grounding of their targets, what is a
mismatch, what is unresolved; and the gates in force for a read, a phase and the tracker."""

from __future__ import annotations

from graph.plan.judge import gates_for, judge
from graph.state import Gate, Phase, Plan


def _state(**controls: dict) -> dict:
    return {"values": {k: {"set_at_step": None, **v} for k, v in controls.items()}}


SYNONYMS = _state(synonyms={"value": "on", "label": "Include synonyms (old names)", "kind": "checkbox"})
CONDITION = ["All conditions", "Diabetes mellitus (E10-E14)", "Diabetes insipidus (E23.2)", "Asthma (J45)"]


def test_a_box_is_held_by_its_yes_words_and_a_non_answer_is_unresolved():
    for target in ("ticked", "checked", "yes", "on", "true", "Ticked"):
        assert judge(Gate(kind="filter", name="Include synonyms", target=target), SYNONYMS).status == "held", target
    assert judge(Gate(kind="filter", name="Include synonyms", target="unticked"), SYNONYMS).status == "mismatch"
    verdict = judge(Gate(kind="scope", name="Include synonyms", target="primary or cross-listed"), SYNONYMS)
    assert (verdict.status, verdict.key) == ("unresolved", "synonyms") and "revise_plan" in verdict.evidence


def test_a_unique_option_holding_the_targets_words_is_the_targets_value():
    state = _state(condition={"value": "Diabetes mellitus (E10-E14)", "label": "Condition", "kind": "select",
                              "options": CONDITION})
    assert judge(Gate(kind="filter", name="Condition", target="Diabetes mellitus"), state).status == "held"
    wrong = judge(Gate(kind="filter", name="Condition", target="Asthma"), state)
    assert (wrong.status, wrong.needs) == ("mismatch", ("Asthma (J45)",))
    # two options hold 'Diabetes': nothing is guessed; a target no option holds is unresolved, never a mismatch
    assert judge(Gate(kind="filter", name="Condition", target="Diabetes"), state).status == "unresolved"
    assert judge(Gate(kind="filter", name="Condition", target="Gout"), state).status == "unresolved"


def test_a_list_read_one_at_a_time_holds_while_the_control_holds_any_of_it():
    gate = Gate(kind="filter", name="HUC", target="02040502, 04040504, 05040505 (one at a time)")
    assert judge(gate, _state(huc={"value": "04040504", "label": "Basin unit (HUC)", "kind": "text"})).status == "held"
    assert judge(gate, _state(huc={"value": "02040502,04040504,05040505", "label": "Basin unit (HUC)"})).status == "held"
    assert judge(gate, _state(huc={"value": "09999999", "label": "Basin unit (HUC)", "kind": "text"})).status == \
        "mismatch"


def test_a_list_of_options_stands_for_each_of_them_not_its_first():
    groups = ["All groups", "Inorganics", "Microbiological", "Nutrient", "Physical"]
    for target in ("Inorganics, Microbiological, Nutrient, Physical (each separately)",
                   "each of Inorganics, Microbiological, Nutrient, Physical"):
        gate = Gate(kind="filter", name="Characteristic group", target=target)
        for held in groups[1:]:
            state = _state(group={"value": held, "label": "Characteristic group", "kind": "select", "options": groups})
            assert judge(gate, state).status == "held", (target, held)
        state = _state(group={"value": "All groups", "label": "Characteristic group", "kind": "select",
                              "options": groups})
        assert judge(gate, state).status == "mismatch"


def test_a_free_text_target_that_describes_its_value_is_unresolved_and_an_aside_is_no_value():
    name = _state(name={"value": "Astcalphis gracilis", "label": "Name contains", "kind": "text"})
    for target in ("the oldest other-genus name", "oldest other-genus name", "each candidate's code", "<name>"):
        verdict = judge(Gate(kind="filter", name="Name", target=target), name)
        assert verdict.status == "unresolved" and "describes the value" in verdict.evidence, target
    assert judge(Gate(kind="filter", name="Name", target="Saugonach striatus"), name).status == "mismatch"
    assert judge(Gate(kind="filter", name="Name", target="Astcalphis gracilis"), name).status == "held"
    off = _state(synonyms={"value": "off", "label": "Include synonyms (old names)", "kind": "checkbox"})
    for target in ("ticked (for the back-search)", "ticked (re-tick on every fresh form)"):
        assert judge(Gate(kind="scope", name="Include synonyms", target=target), off).status == "mismatch"
        assert judge(Gate(kind="scope", name="Include synonyms", target=target), SYNONYMS).status == "held"


def test_a_window_open_or_wider_on_either_side_is_a_wider_mismatch():
    years = [str(y) for y in range(2016, 2024)]

    def pair(start: str, end: str) -> dict:
        return _state(year_from={"value": start, "label": "From year", "kind": "select", "options": years},
                      year_to={"value": end, "label": "To year", "kind": "select", "options": years})

    gate = Gate(kind="window", name="Year", target="2018..2021")
    assert judge(gate, pair("2018", "2021")).status == "held"
    for start, end in (("2018", "2023"), ("2016", "2021")):
        verdict = judge(gate, pair(start, end))
        assert (verdict.status, verdict.wider) == ("mismatch", True), (start, end)
    narrow = judge(gate, pair("2019", "2021"))
    assert (narrow.status, narrow.wider) == ("mismatch", False)
    dates = _state(date_from={"value": "2018-01-01", "label": "Date from", "kind": "date"},
                   date_to={"value": "", "label": "Date to", "kind": "date"})
    verdict = judge(Gate(kind="window", name="Date", target="2018..2021"), dates)
    assert (verdict.status, verdict.wider, verdict.value) == ("mismatch", True, "2018-01-01..")  # To left open


def test_a_window_targets_aside_is_no_bound_and_a_bound_no_date_parses_is_never_held():
    """A played model planned `Vintage = 2022 (2018..2022)` (the release 2022 covers those years) on one year
    control: the aside is no bound, so 2022 is held and 2023 is not (it was said held: the aside's parts parsed
    as no date, and no bound counted as every bound met). A target that names no date is unresolved."""
    years = [str(y) for y in range(2019, 2024)]

    def vintage(value: str) -> dict:
        return _state(vintage={"value": value, "label": "Vintage", "kind": "select", "options": years})

    gate = Gate(kind="window", name="Vintage", target="2022 (2018..2022)")
    assert judge(gate, vintage("2022")).status == "held"
    assert judge(gate, vintage("2023")).status == "mismatch"
    for target in ("recent (2018..2022)", "2018..last year", "latest release"):
        assert judge(Gate(kind="window", name="Vintage", target=target), vintage("2023")).status == "unresolved", target


def test_a_window_the_plan_wants_open_is_held_empty_and_a_kept_default_window_is_not():
    """A played planner wrote `all dates (clear default 2022-01-01..2024-12-31)` for a search that opens on its
    last three years: the default kept is narrower (a mismatch, the commonest scope drift), the pair cleared is
    held, dates the agent set are not judged (nothing here says where the records begin)."""
    def received(start: str, end: str, set_at: int | None = None) -> dict:
        return _state(received_from={"value": start, "label": "Date received from", "kind": "date", "set_at_step": set_at},
                      received_to={"value": end, "label": "Date received to", "kind": "date", "set_at_step": set_at})

    gate = Gate(kind="window", name="Date received", target="all dates (clear default 2022-01-01..2024-12-31)")
    kept = judge(gate, received("2022-01-01", "2024-12-31"))
    assert (kept.status, kept.wider, kept.value) == ("mismatch", False, "2022-01-01..2024-12-31")
    assert judge(gate, received("", "")).status == "held"
    assert judge(gate, received("2022-01-01", "")).status == "mismatch"
    assert judge(gate, received("2011-12-01", "2024-12-31", set_at=4)).status == "unresolved"
    assert judge(Gate(kind="window", name="Date received", target="any time"), received("", "")).status == "held"
    assert judge(gate, _state()).status == "unresolved"


def test_a_read_judges_the_state_the_page_applied():
    state = _state(category={"value": "cs.CL (Computation and Language)", "label": "Category", "kind": "select",
                             "applied": "cs.LG", "options": ["cs.CL (Computation and Language)", "cs.LG"]})
    gate = Gate(kind="filter", name="Category", target="cs.CL")
    assert judge(gate, state).status == "held"  # the form holds it (between reads)
    verdict = judge(gate, state, applied=True)  # the rows shown are the URL's
    assert verdict.status == "mismatch" and "not applied" in verdict.evidence


def test_dates_in_any_common_spelling_are_one_value_and_a_window_grounds_on_a_from_to_pair():
    date = _state(date={"value": "2021-03-04", "label": "Date", "kind": "date"})
    for target in ("2021-03-04", "4 March 2021", "March 4, 2021", "4 Mar 2021", "2021/03/04"):
        assert judge(Gate(kind="filter", name="Date", target=target), date).status == "held", target
    pair = _state(filed_from={"value": "2013-01-01", "label": "Filed from", "kind": "date"},
                  filed_to={"value": "2014-06-30", "label": "Filed to", "kind": "date"})
    narrow = judge(Gate(kind="window", name="Initial filing date", target="2013-01-01..2015-01-01"), pair)
    assert (narrow.status, narrow.bounds, narrow.value) == ("mismatch", ("filed_from", "filed_to"),
                                                           "2013-01-01..2014-06-30")
    assert judge(Gate(kind="window", name="Filed", target="2013..2014"), pair).status == "mismatch"
    wider = judge(Gate(kind="window", name="Filed", target="2013-06-01..2014-01-01"), pair)
    assert (wider.status, wider.wider) == ("mismatch", True)  # a wider window lets in rows the plan excludes
    assert judge(Gate(kind="window", name="Filed", target="2013-01-01..2014-06-30"), pair).status == "held"
    assert judge(Gate(kind="window", name="Filed", target="recent years"), pair).status == "unresolved"


def test_a_gate_naming_no_control_or_several_is_unresolved():
    state = _state(date_received={"value": "2020", "label": "Date received"}, date_closed={"value": "", "label":
                                                                                          "Date closed"})
    assert judge(Gate(kind="scope", name="geography", target="Eastmarch (state)"), state).status == "unresolved"
    several = judge(Gate(kind="filter", name="Date", target="2020"), state)
    assert several.status == "unresolved" and several.candidates == ("Date received", "Date closed")


def test_the_gates_in_force_are_said_in_one_place():
    plan = Plan(gates=[Gate(kind="filter", name="Status", target="Terminated"),
                       Gate(kind="sort", name="Order", target="newest", required=False)],
                phases=[Phase(read="2018", into="y2018", gates={"Year": "2018..2018"}),
                        Phase(read="2023", into="y2023", gates={"Year": "2023..2023"})])
    names = lambda gates: [(g.name, g.target) for g in gates]  # noqa: E731
    assert names(gates_for(plan, "y2018")) == [("Status", "Terminated"), ("Order", "newest"), ("Year", "2018..2018")]
    assert names(gates_for(plan, "y2023", required=True)) == [("Status", "Terminated"), ("Year", "2023..2023")]
    assert names(gates_for(plan, plan.phases[1])) == names(gates_for(plan, "y2023"))
    assert len(gates_for(plan, every_phase=True)) == 4 and gates_for(None) == []
    assert names(gates_for(plan, "not_a_phase")) == [("Status", "Terminated"), ("Order", "newest")]


def test_its_default_never_set_is_said_only_when_true():
    """The read check on a value the agent set on an earlier page (then lost here) does not call it a default."""
    from graph.checks.gates import check_read

    plan = Plan(gates=[Gate(kind="filter", name="Status", target="Terminated")])
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
