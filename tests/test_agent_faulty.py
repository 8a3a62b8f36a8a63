"""The faulty policy: seeded, deterministic mistakes from the paper's taxonomy, each one really made, and the
scripted repair that re-reads every page of a discarded table (FAULT-INJECTED REPLAYS, not model results)."""

from __future__ import annotations

import asyncio
from collections import Counter

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent.measuring.fault_plan import FAULT_CLASSES, FaultSite, choose_fault, fault_sites, suite_classes
from agent.measuring.faulty import FaultyPolicy
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough, reread_steps
from agent.reports.faults import FAULT_LABEL, CleanRow, FaultCell, fault_rows, render_fault_markdown
from graph.checks.failures import failure
from graph.model_io.policy import TurnState
from graph.tools.tool_schemas import tool_schemas
from tasks.offline.registry import PLACEHOLDER_ORIGIN

STEPS = [
    {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/reg/complaints"}},
    {"tool": "select", "args": {"target": {"label": "Company"}, "option": "Bluestem"}},
    {"tool": "select", "args": {"target": {"label": "Date basis"}, "option": "Original"}},
    {"tool": "set_range", "args": {"start_target": {"label": "Date received from"},
                                   "end_target": {"label": "Date received to"}, "start": "2016-01-01",
                                   "end": "2019-12-31"}},
    {"tool": "click", "args": {"target": {"text": "Apply filters"}}},
    {"tool": "read_table", "args": {"table": 0, "all_pages": True}},
    {"tool": "extract_rows", "args": {"columns": {"id": "ID"}}},
    {"tool": "finish", "args": {"order_by": ["id"]}},
]
CONTROLS = {
    "company": {"label": "Company", "value": "All companies", "options": ["All companies", "Bluestem", "Arbor"]},
    "basis": {"label": "Date basis", "value": "Latest [latest]", "options": ["Latest", "Original"]},
}


def turn(**state) -> TurnState:
    return TurnState(**{"controls": CONTROLS, "pages": 3, **state})


def drive(model: ScriptedPolicy, turns: int, **state) -> list[tuple[str, str, dict]]:
    """`turns` actor calls on a page whose tracked state is `state`: (call id, tool, args) of each."""
    messages: list = []
    calls = []
    for _ in range(turns):
        prompt = [SystemMessage("actor"), *messages, HumanMessage("OBSERVATION")]
        call = asyncio.run(model.act(prompt, tool_schemas(search=False), turn(**state))).tool_calls[0]
        calls.append((call["id"], call["name"], call["args"]))
        messages += [AIMessage("", tool_calls=[call]), ToolMessage("ok=True", tool_call_id=call["id"])]
    return calls


def faulty(fault: str, candidates: tuple[int, ...], **extra) -> FaultyPolicy:
    return FaultyPolicy(steps=STEPS, task_id="t", seed=1, site=FaultSite(fault, candidates, **extra))


def test_the_injector_is_deterministic_per_seed():
    steps = load_walkthrough("offline_scholar_001")
    first = [choose_fault(steps, task, 7) for task in ("offline_scholar_001", "offline_scholar_001-g")]
    again = [choose_fault(steps, task, 7) for task in ("offline_scholar_001", "offline_scholar_001-g")]
    assert first == again
    assert suite_classes(7) == suite_classes(7)
    assert suite_classes(7) != suite_classes(8)  # another seed, another assignment


def test_the_suite_assignment_gives_every_class_several_records():
    given = Counter(suite_classes(20260521).values())
    assert set(given) == set(FAULT_CLASSES)
    assert min(given.values()) >= 5 and sum(given.values()) >= 50  # records with no place for any fault: few


def test_fault_sites_find_the_places_each_class_needs():
    sites = {s.fault: s.candidates for s in fault_sites(STEPS)}
    assert sites["kept_default"] == (1, 2) and sites["wrong_option"] == (1, 2)
    assert sites["navigation_reset"] == (4,) and sites["first_page_only"] == (5,)
    assert sites["wrong_window"] == (3,) and sites["stale_rows"] == (1,)
    assert "detail_skipped" not in sites  # no result pages opened: nothing to skip


def test_kept_default_skips_the_setting_step_when_the_control_holds_another_value():
    model = faulty("kept_default", (2,))
    calls = drive(model, 4)
    assert [c[1] for c in calls] == ["goto", "select", "set_range", "click"]  # 'Date basis' never set
    record = model.fault_record()
    assert record["injected"] and record["walkthrough_step"] == 2 and record["call"] == 2
    assert "kept 'Latest [latest]'" in record["detail"] and record["label"] == "FAULT-INJECTED REPLAY"


def test_kept_default_is_a_no_op_when_the_default_is_the_planned_value_and_falls_through():
    controls = {**CONTROLS, "company": {**CONTROLS["company"], "value": "Bluestem"}}
    model = faulty("kept_default", (1, 2))
    calls = drive(model, 3, controls=controls)
    assert [c[1] for c in calls] == ["goto", "select", "set_range"]
    assert calls[1][2]["target"]["label"] == "Company"  # 1 was a no-op: made at 2 instead
    assert model.fault_record()["walkthrough_step"] == 2


def test_wrong_option_picks_another_option_of_the_control():
    calls = drive(faulty("wrong_option", (1,)), 2)
    call_id, name, args = calls[1]
    assert call_id == "fx-1-0" and name == "select" and args["option"] == "Arbor"  # not the plan's, not the default


def test_navigation_reset_reopens_the_page_and_submits_its_defaults_before_reading():
    calls = drive(faulty("navigation_reset", (4,)), 8)
    assert [(c[0], c[1]) for c in calls[4:8]] == [("fx-4-0", "click"), ("fx-4-1", "goto"), ("fx-4-2", "click"),
                                                  ("wt-5", "read_table")]


def test_first_page_only_reads_one_of_several_pages():
    calls = drive(faulty("first_page_only", (5,)), 6)
    assert calls[5][:2] == ("fx-5-0", "read_table") and calls[5][2]["all_pages"] is False
    one_page = faulty("first_page_only", (5,))
    assert drive(one_page, 6, pages=1)[5][2]["all_pages"] is True and not one_page.fault_record()["injected"]


def test_wrong_window_narrows_the_range():
    args = drive(faulty("wrong_window", (3,)), 4)[3][2]
    assert (args["start"], args["end"]) == ("2017-12-31", "2019-12-31")


def test_stale_rows_reads_and_keeps_rows_after_the_first_setting():
    calls = drive(faulty("stale_rows", (1,)), 6)
    assert [c[1] for c in calls[1:5]] == ["select", "click", "read_table", "extract_rows"]
    assert all(c[0].startswith("fx-1-") for c in calls[1:5]) and calls[5][0] == "wt-2"


def test_detail_skipped_leaves_out_one_visit():
    steps = load_walkthrough("offline_scholar_003")
    site = next(s for s in fault_sites(steps) if s.fault == "detail_skipped")
    model = FaultyPolicy(steps=steps, task_id="t", seed=1, site=FaultSite("detail_skipped", site.candidates[1:2],
                                                                             site.skip_to))
    calls = drive(model, len(steps) - 3)
    opened = [c[2]["target"]["text"] for c in calls if c[1] == "click" and c[2]["target"].get("text") != "Search"]
    wanted = [s["args"]["target"]["text"] for i, s in enumerate(steps) if i in site.candidates]
    assert opened == [t for t in wanted if t != steps[site.candidates[1]]["args"]["target"]["text"]]


def test_repair_of_a_table_read_over_many_pages_rereads_each_page():
    """Issue 18, item 5: the families table was extracted on three expanded sections; the repair read one."""
    steps = load_walkthrough("offline_lifesci_004")
    cursor = next(i for i, s in enumerate(steps) if s["tool"] == "derive")
    again = reread_steps(steps[:cursor], "families")
    assert [s["args"]["section"] for s in again if s["tool"] == "extract_rows"] == [
        s["args"]["section"] for s in steps if s["tool"] == "extract_rows" and s["args"].get("into") == "families"]
    assert len([s for s in again if s["tool"] == "extract_rows"]) == 3
    assert all(s["args"].get("into") == "families" for s in again if s["tool"] in ("extract_rows", "read_facts"))
    model = ScriptedPolicy(steps=steps)
    model._cursor = cursor + 1
    model._plan_verifier_repair([failure("drift", "5 row(s) were read while drift was active (x) at step(s) [4]: "
                                         "restore", table="families")])
    queued = [s for _, s in model._queue]
    assert queued[0] == {"tool": "discard_rows", "args": {"table": "families", "all_rows": True}}
    assert len([s for s in queued if s["tool"] == "extract_rows"]) == 3 and queued[-1]["tool"] == "finish"


def test_unphased_repair_rereads_every_detail_page():
    steps = load_walkthrough("offline_scholar_003")
    model = ScriptedPolicy(steps=steps)
    model._cursor = len(steps) - 1
    model._plan_verifier_repair([failure("drift", "3 row(s) were read while drift was active (x): restore the gates")])
    queued = [s for _, s in model._queue]
    extracts = len([s for s in steps if s["tool"] == "extract_rows"])
    assert len([s for s in queued if s["tool"] == "extract_rows"]) == extracts > 1


def test_fault_table_is_labelled_and_counts_flags_by_node():
    cells = [FaultCell("faulty", "full", "-", "a", "kept_default", True, 3, True, True, 1.0, 1.0, ""),
             FaultCell("faulty", "full", "-", "b", "kept_default", True, 3, False, False, 0.0, 0.5, "skipped x"),
             FaultCell("faulty", "no-verifier", "verifier", "a", "kept_default", True, 3, True, False, 0.0, 0.4, "")]
    rows = fault_rows(cells)
    full = next(r for r in rows if r.variant == "full" and r.fault == "kept_default")
    assert (full.injected, full.flagged, full.by_tracker, full.repaired, full.em) == (2, 1, 1, 1, 0.5)
    assert next(r for r in rows if r.variant == "no-verifier" and r.fault == "kept_default").owned
    text = render_fault_markdown(rows, [CleanRow("scripted", "full", "-", 2, 0, 1.0, 1.0)], cells)
    assert text.startswith(f"# Fault table ({FAULT_LABEL})") and "NOT MODEL RESULTS" in text
    assert "faults flagged before submit 1/2 (50%) (target >= 95%: MISSED)" in text
    assert "| b | kept_default | skipped x | 0 |" in text  # the one the full agent missed, named


def test_a_reread_leaves_out_a_visit_that_read_nothing_and_came_back():
    """The repair re-reads as the walkthrough read, but not through a detour whose return reset the state."""
    steps = [*STEPS[:5], {"tool": "click", "args": {"target": {"text": "1529370"}}},
             {"tool": "click", "args": {"target": {"text": "Back to results"}}}, *STEPS[5:7],
             {"tool": "click", "args": {"target": {"text": "1529371"}}},
             {"tool": "read_table", "args": {"table": 1}}, {"tool": "extract_rows", "args": {"columns": {"id": "ID"}}},
             {"tool": "back", "args": {}}]
    again = reread_steps(steps, "answer")
    texts = [s["args"]["target"].get("text") for s in again if s["tool"] == "click"]
    assert texts == ["Apply filters", "1529371"]  # the detour left out, the visit that read kept
    assert [s["tool"] for s in again].count("extract_rows") == 2


def test_a_reread_sets_a_gate_set_too_late_before_reading_again():
    """Issue 18: a gate set (and applied) only after the rows were read is part of the planned state: the re-read
    sets it with the others before the first apply, instead of reading every page again without it."""
    late = [STEPS[0], STEPS[1], STEPS[3], STEPS[4], STEPS[5], STEPS[6], STEPS[2], STEPS[4]]
    again = reread_steps(late, "answer")
    assert [s["tool"] for s in again] == ["goto", "select", "set_range", "select", "click", "read_table",
                                          "extract_rows"]
    assert again[3] == STEPS[2] and again[4] == STEPS[4]  # Date basis, then the one apply, then the reads
    # a setter followed by another read sets the state of that read (a next phase), not a late gate
    phased = [*late[:6], STEPS[2], STEPS[4], {"tool": "extract_rows", "args": {"into": "later", "columns": {}}}]
    assert [s["tool"] for s in reread_steps(phased, "answer")] == ["goto", "select", "set_range", "click",
                                                                   "read_table", "extract_rows"]
    # ... even when the click that submits it is not named like an apply button (stats_005: "Send")
    steps = load_walkthrough("offline_stats_005")
    first = reread_steps(steps[:steps.index(next(s for s in steps if s["tool"] == "derive"))], "first")
    assert [s["args"]["option"] for s in first if s["tool"] == "select"][-1] == "2019", first


def test_no_derived_answer_rebuilds_every_table_the_walkthrough_reads():
    """Issue 18: a phased walkthrough whose reads found nothing (a navigation reset the search) has no derived
    answer; the `[schema] no extract_rows` goal replays what built its tables, not a read of `answer`."""
    steps = load_walkthrough("offline_scholar_005")
    model = ScriptedPolicy(steps=steps)
    model._cursor = len(steps) - 1
    model._plan_verifier_repair([failure("schema", "no extract_rows was run", code="nothing_extracted"),
                                 failure("details", "3 of 4 listed result(s) were not opened", links=["http://x/abs/1"])])
    queued = [s for _, s in model._queue]
    assert queued[:2] == [{"tool": "discard_rows", "args": {"table": t, "all_rows": True}}
                          for t in ("edition_2022", "edition_2023")]
    assert queued[2] == steps[0] and [s["tool"] for s in queued[-2:]] == ["derive", "finish"]
    assert [s["args"]["into"] for s in queued if s["tool"] == "extract_rows"] == ["edition_2022", "edition_2023"]
    assert [s for s in queued if s["tool"] in ("fill", "select", "click")] == [
        s for s in steps[:14] if s["tool"] in ("fill", "select", "click")]  # the search, then both visits
