"""Faults injected into real-model decision paths (agent/measuring/paths/inject.py): which kinds apply where, the
faulted path each makes, and (slow) that the full agent catches them on a real path, by the check that names
the faulted gate or page. FAULT-INJECTED REPLAYS, not model results."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.measuring.paths.inject import FAULT_KINDS, faulted_path, inject_faults, plan_faults
from agent.measuring.paths.path import DecisionPath

CASES = Path(__file__).parent / "data" / "real_model_paths"
PATHS = {p.stem: DecisionPath.load(p) for p in sorted(CASES.glob("*.json")) if "." not in p.stem}


def test_every_real_path_gets_faults_of_several_kinds_and_each_alters_one_step() -> None:
    for name, path in PATHS.items():
        faults = plan_faults(path)
        if "played" not in name:  # the six real-model paths all set gates; a played path may only click a tree
            assert len({f.kind for f in faults}) >= 2, name
        for fault in faults:
            assert fault.kind in FAULT_KINDS
            faulted = faulted_path(path, fault)
            changed = [i for i, (a, b) in enumerate(zip(path.steps, faulted.steps, strict=False)) if a != b]
            if fault.kind in ("kept_default", "open_bound", "stale_read"):
                assert len(faulted.steps) == len(path.steps) - 1, (name, fault)
                assert path.steps[fault.step] not in faulted.steps[fault.step:fault.step + 1], (name, fault)
            elif fault.kind in ("wrong_option", "rows_lost"):  # made at replay time, from the page
                assert faulted.steps == path.steps, (name, fault)
            else:
                assert changed == [fault.step], (name, fault)


def test_a_narrower_window_moves_the_bound_inwards() -> None:
    path = PATHS["offline_vulns_003"]
    fault = next(f for f in plan_faults(path) if f.kind == "narrower_window")
    before, after = path.steps[fault.step].args["value"], faulted_path(path, fault).steps[fault.step].args["value"]
    assert after > before if "From" in fault.names else after < before


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_gate_faults_on_a_real_path_are_caught_by_the_check_naming_the_gate(offline_server, chromium_worker,
                                                                                   tmp_path) -> None:
    outcomes = await inject_faults(PATHS["offline_vulns_003"], origin=offline_server.origin, worker=chromium_worker,
                                   out_dir=tmp_path, kinds=("kept_default", "wrong_option", "narrower_window"))
    assert {o.kind for o in outcomes} == {"kept_default", "wrong_option", "narrower_window"}
    for outcome in outcomes:
        assert outcome.made and outcome.caught_by, outcome


def test_a_detail_fault_on_a_results_pdf_is_caught_by_the_refusal_naming_that_result() -> None:
    from agent.measuring.paths.inject import _names_result

    listed = ["http://s/regulatory/enforcement/frontier-046"]
    assert _names_result("http://s/regulatory/enforcement/frontier-046/consent-order.pdf", listed)
    assert _names_result("http://s/regulatory/enforcement/frontier-046", listed)
    assert not _names_result("http://s/regulatory/enforcement/frontier-0467/consent-order.pdf", listed)
    assert not _names_result("http://s/regulatory/enforcement/sterling-015/consent-order.pdf", listed)


def test_a_detail_fault_leaves_out_a_page_no_other_read_into_its_table_opens() -> None:
    """Left out of one read, a page another read takes into the same table again is no fault (the shared-phases
    water path reads its 32 pages twice: its fault was never made, and counted as missed); a page read into
    another table is (the vulns path's `affected` read loses a record its `history` read still opens)."""
    assert not [f for f in plan_faults(PATHS["offline_water_005-g-shared-phases"]) if f.kind == "detail_unopened"]
    fault = next(f for f in plan_faults(PATHS["offline_vulns_005-played-ablated"]) if f.kind == "detail_unopened")
    step = PATHS["offline_vulns_005-played-ablated"].steps[fault.step]
    assert fault.names in step.args["url"] and fault.names not in faulted_path(
        PATHS["offline_vulns_005-played-ablated"], fault).steps[fault.step].args["url"]


def test_a_kept_default_or_wrong_option_faults_a_gate_the_plan_names_not_any_control_set() -> None:
    """'A planned gate kept at its default': the fault drops a setter of a control the plan names (its label is a
    gate's name, or the value set is one a gate's target names), never a control the path set that no gate
    names (regulatory_004-g's 'Filter dates by', set before the planned 'Status'; lifesci_005's 'Name contains')."""
    from agent.measuring.paths.inject import sets_planned_gate

    chosen = {(name, f.kind): f.names for name, path in PATHS.items() for f in plan_faults(path)
              if f.kind in ("kept_default", "wrong_option")}
    assert chosen[("offline_regulatory_004-g", "kept_default")] == "Status"
    assert chosen[("offline_regulatory_004-g", "wrong_option")] == "Status"
    assert chosen[("offline_lifesci_005", "kept_default")] == "Include synonyms (old names)"
    for name, path in PATHS.items():
        for fault in plan_faults(path):
            if fault.kind in ("kept_default", "wrong_option"):
                assert sets_planned_gate(path.steps[fault.step], path.plan), (name, fault)
    dates_by = PATHS["offline_regulatory_004-g"].steps[2]
    assert not sets_planned_gate(dates_by, PATHS["offline_regulatory_004-g"].plan)
