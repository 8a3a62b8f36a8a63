"""The judge over phases that share a table, gates of one control as alternatives, a list value held as a set, gates
judged where their control is, and rows judged again after `revise_plan` (issue 31; through the graph:
tests/test_judge_phases_e2e.py)."""

from __future__ import annotations

from graph.checks.finish_checks import TableCheck
from graph.checks.gates import check_read, rejudge_tables
from graph.plan.judge import current_phase, gate_sets, judge, settle, verdicts
from graph.plan.targets import AnyOf, Value
from graph.state import Gate, Phase, Plan, RetrievalState


def check_input_gates(plan, tables, names):
    """The verifier's gate check of each named evidence table."""
    return [f for name in names for f in TableCheck(name, tables[name], answer=False).gates(plan, [], None)]

GROUPS = ["All groups", "Inorganics", "Physical"]


def _state(url: str, step: int, **values: tuple[str, str, list[str]]) -> RetrievalState:
    return RetrievalState(url=url, path=url.split("?")[0], page=None, pages=None, result_count=None, step=step,
                          values={k: {"value": v, "label": label, "evidence": ["control"], "set_at_step": None,
                                      "set_by": None, **({"kind": "select", "options": opts} if opts else {})}
                                  for k, (v, label, opts) in values.items()})


LIST = _state("/locations?huc=1", 1, huc=("02,04,05", "Basin unit (HUC)", []), site_type=("Stream", "Site type",
                                                                                         ["Any", "Stream", "Lake"]))


def _record(group: str, step: int = 2) -> RetrievalState:
    return _state(f"/locations/L-1?group={group}", step, group=(group, "Characteristic group", GROUPS))


def _plan(*second: str) -> Plan:
    return Plan(gates=[Gate(kind="scope", name="Basin unit (HUC)", target=AnyOf(any_of=["05", "02", "04"])),
                       Gate(kind="filter", name="Site type", target=Value(value="Stream"))],
                phases=[Phase(read="list", into="candidates"),
                        *(Phase(read=g, into="periods", gates=[Gate(kind="filter", name="Characteristic group", target=Value(value=g))])
                          for g in ("Inorganics", *second))])


def test_a_list_value_equal_as_a_set_to_a_list_target_is_held():
    for value in ("02,04,05", "05;02;04", "04, 05, 02"):
        state = {"huc": {"value": value, "label": "HUC"}}
        assert judge(Gate(kind="scope", name="HUC", target=AnyOf(any_of=["02", "04", "05"])), state).status == "held"
    short = {"huc": {"value": "02,04", "label": "HUC"}}
    assert judge(Gate(kind="scope", name="HUC", target=AnyOf(any_of=["06", "07"])), short).status == "mismatch"


def test_gates_naming_one_control_are_alternatives():
    gates = [Gate(kind="filter", name="Site type", target=Value(value=t)) for t in ("Stream", "Lake")]
    judged = verdicts(gates, LIST)
    assert [v.status for v in judged] == ["held", "mismatch"]
    assert [v.status for v in settle(judged)] == ["held", "held"]
    alone = verdicts(gates[1:], LIST)
    assert [v.status for v in settle(alone)] == ["mismatch"]  # one gate: a mismatch stays one


def test_a_table_several_phases_write_is_held_under_any_of_them_and_a_flag_names_them():
    plan = _plan("Physical")
    assert [p.read for p, _ in gate_sets(plan, "periods")] == ["Inorganics", "Physical"]
    for group in ("Inorganics", "Physical"):
        assert not check_read(plan, "periods", _record(group), 2, [LIST]).mismatches
    flagged = check_read(plan, "periods", _record("All groups"), 2, [LIST]).mismatches
    assert len(flagged) == 1 and "table periods is read by phases 2, 3" in flagged[0]["message"], flagged


def test_gates_held_on_the_list_are_not_said_unresolved_on_a_record_page():
    plan = _plan("Physical")
    check = check_read(plan, "periods", _record("Inorganics"), 2, [LIST])
    assert not check.unresolved and not check.mismatches, check.notes()
    wrong_list = _state("/locations?huc=1", 1, huc=("02,04,05", "Basin unit (HUC)", []),
                        site_type=("Lake", "Site type", ["Any", "Stream", "Lake"]))
    wrong = check_read(plan, "periods", _record("Inorganics"), 2, [wrong_list])  # the list read was flagged there
    assert not wrong.mismatches and [u.split("=")[0] for u in wrong.unresolved] == ["Site type"], wrong.notes()
    alone = check_read(plan, "periods", _record("Inorganics"), 2, [])  # no page named them: said, not skipped
    assert len(alone.unresolved) == 2, alone.notes()


def _table(*groups_drift: tuple[str, str]) -> dict:
    rows = [{"values": {"grp": g}, "provenance": {
        "url": f"/locations/L-1?group={g}", "step": 2, "page": None, "pages": None, "locator": "", "result_set": "",
        "state": {"group": {"label": "Characteristic group", "value": g}}, "drift": [f for f in d.split(",") if f]}}
        for g, d in groups_drift]
    return {"name": "periods", "columns": ["grp"], "rows": rows, "derived": False, "sql": None, "inputs": [],
            "types": ["VARCHAR"], "reads": [], "steps": [2]}


def test_rows_are_judged_again_under_a_revised_plan_loss_flags_stay():
    history = [LIST, _record("Inorganics"), _record("Physical"), _record("All groups")]
    table = _table(("Inorganics", ""), ("Physical", "gate_mismatch:group,navigation_reset:huc"),
                   ("All groups", "gate_mismatch:group"))
    changed = rejudge_tables(_plan("All groups"), {"periods": table}, history)["periods"]
    assert [r["provenance"]["drift"] for r in changed["rows"]] == [[], ["navigation_reset:huc", "gate_mismatch:group"],
                                                                   []]
    assert rejudge_tables(_plan("Physical", "All groups"), {"periods": changed}, history)["periods"]["rows"][1][
        "provenance"]["drift"] == ["navigation_reset:huc"]
    assert rejudge_tables(_plan("Physical", "All groups"), {"periods": _table(("Physical", ""))}, history) == {}


def test_the_verifier_judges_each_row_of_a_shared_table_under_its_own_phase():
    table = _table(("Inorganics", ""), ("Physical", ""))
    assert check_input_gates(_plan("Physical"), {"periods": table}, ["periods"]) == []
    failures = check_input_gates(_plan("Nutrient"), {"periods": table}, ["periods"])
    assert len(failures) == 1 and "phases 2, 3" in failures[0]["message"] and "'Physical'" in failures[0]["message"]


def test_the_phase_in_force_is_the_first_not_read_a_shared_tables_phases_each_by_its_own_rows():
    """Phases 2 and 3 read one table, one group each: once phase 2's rows are in it, phase 3 is the one in force
    (its gates are the turn's PLAN ON THIS PAGE and the tracker's), not the phase after the table."""
    plan = Plan(gates=_plan("Physical").gates, phases=[*_plan("Physical").phases, Phase(read="sums", into="sums")])
    history = [LIST, _record("Inorganics")]
    listed = {"candidates": {**_table(("x", "")), "name": "candidates"}}
    assert current_phase(plan, {}, history) is plan.phases[0]
    assert current_phase(plan, listed, history) is plan.phases[1]
    assert current_phase(plan, {**listed, "periods": _table(("Inorganics", ""))}, history) is plan.phases[2]
    both = {**listed, "periods": _table(("Inorganics", ""), ("Physical", ""))}
    assert current_phase(plan, both, history) is plan.phases[3]
    assert current_phase(plan, {**both, "sums": _table(("x", ""))}, history) is None
