"""The full agent's turn says each planned gate once: a gate that names a control on the page has its PLAN ON THIS
PAGE line, so neither its value (a RETRIEVAL STATE line) nor the gate (the PLAN's list) is said again, even when
another gate of the plan names nothing here. A played full run spent ~20% more prompt tokens than its ablated
pair, most of it the same window said three times a turn."""

from __future__ import annotations

import time

from agent.solve import initial_state
from browser.delta import render_observation
from graph.plan.targets import Value, Window
from graph.prompting.render import Prompts
from graph.state import Gate, Phase, Plan
from tasks.loaders import load_tasks


def _value(label: str, value: str) -> dict:
    return {"value": value, "label": label, "evidence": ["control"], "set_at_step": None, "set_by": None,
            "kind": "select", "options": [str(y) for y in range(1960, 2025)]}


def _turn(plan: Plan) -> str:
    task = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_water_004"])[0]
    state = initial_state(task.solver_view(True), time.time())
    state["plan"] = plan.model_dump(mode="json")
    state["retrieval"] = {"url": "http://127.0.0.1:9/station/X-1/availability", "path": "/station/X-1/availability",
                          "values": {"from_year": _value("From year", "2020"), "to_year": _value("To year", "2024")},
                          "page": None, "pages": None, "result_count": None, "step": 8}
    return Prompts.load().actor_turn(state, observation_text=render_observation(None, 100).text, max_steps=60)


def test_a_gate_shown_on_this_page_is_said_once():
    window = Gate(kind="window", name="From year / To year", target=Window(**{"from": "1962", "to": "1969"}))
    elsewhere = Gate(kind="filter", name="Data type", target=Value(value="Flow"))
    turn = _turn(Plan(gates=[window, elsewhere], phases=[Phase(read="availability", into="avail",
                                                               gates=[window, elsewhere])]))
    on_page = turn[turn.index("\nPLAN ON THIS PAGE ("):turn.index("ROWS COLLECTED")]
    assert "From year / To year" in on_page and "NOT HELD" in on_page  # the window: its line, held or not
    assert "filter Data type = Flow: no control here" in on_page and "UNRESOLVED" not in on_page  # a fact, no alarm
    plan_part = turn[turn.index("PLAN:"):turn.index("\nPLAN ON THIS PAGE (")]
    assert "- window From year / To year" not in plan_part and "- filter Data type" not in plan_part
    assert "- gates: as PLAN ON THIS PAGE" in plan_part and "under the gates on this page" in plan_part
    assert "from_year = 2020" not in turn and "to_year = 2024" not in turn  # the values: in the gate's line


def _page_turn(plan: Plan, values: dict, tables: dict | None = None) -> str:
    task = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_water_004"])[0]
    state = initial_state(task.solver_view(True), time.time())
    state["plan"] = plan.model_dump(mode="json")
    state["retrieval"] = {"url": "http://127.0.0.1:9/x", "path": "/x", "values": values, "page": None,
                          "pages": None, "result_count": None, "step": 3}
    state["tables"] = tables or {}
    return Prompts.load().actor_turn(state, observation_text=render_observation(None, 100).text, max_steps=60)


def test_an_ambiguous_gate_of_another_phase_is_not_said_and_an_unseen_gate_is_marked_in_the_plan():
    """Played runs were told, on every turn, of gates of a phase not in force (issue 37): the ambiguity of a later
    phase's gate is said when that phase is in force, and a plan gate no page has shown is marked in the PLAN's
    list, not said again on a line of its own."""
    dates = {"date_received": {**_value("Date received", "2020"), "kind": "text"},
             "date_closed": {**_value("Date closed", "2021"), "kind": "text"}}
    later = Gate(kind="filter", name="Date", target=Value(value="2020"))
    unseen = Gate(kind="filter", name="Basin", target=Value(value="Upper"))
    plan = Plan(gates=[unseen], phases=[Phase(read="list", into="stations"),
                                        Phase(read="records", into="records", gates=[later])])
    turn = _page_turn(plan, dates)
    assert "AMBIGUOUS" not in turn and "Date matches" not in turn, turn
    assert "- filter Basin = Upper (not seen yet)\n" in turn and "GATES NOT YET SEEN" not in turn, turn
    rows = {"stations": {"name": "stations", "columns": ["a"], "rows": [{"values": {"a": "1"}, "provenance": {
        "step": 2, "url": "http://127.0.0.1:9/x", "state": None, "drift": [], "locator": "t"}}], "derived": False,
        "sql": None, "inputs": [], "types": ["VARCHAR"], "reads": [], "steps": [2]}}
    turn = _page_turn(plan, dates, tables=rows)  # phase 2 in force now: its gate's ambiguity is news
    assert "GATES NOT YET SEEN: AMBIGUOUS Date matches 2 controls ['Date received', 'Date closed']" in turn, turn


def test_a_pending_control_a_gates_line_shows_is_named_once_in_not_applied():
    """NOT APPLIED listed each pending gate with its value and old results beside the gate's own line (a played
    full run's turn said each value twice): a control a gate's line shows is named only; another keeps its value."""
    values = {"area": {**_value("Area", "North"), "set_at_step": 2, "set_by": "select", "options": ["Any area", "North"]},
              "size": {**_value("Rows per page", "50"), "set_at_step": 3, "set_by": "select", "options": ["10", "50"]}}
    plan = Plan(gates=[Gate(kind="filter", name="Area", target=Value(value="North"))])
    task = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_water_004"])[0]
    state = initial_state(task.solver_view(True), time.time())
    state["plan"] = plan.model_dump(mode="json")
    state["retrieval"] = {"url": "http://127.0.0.1:9/x", "path": "/x", "values": values, "page": None,
                          "pages": None, "result_count": None, "step": 4,
                          "pending": [{"label": "Area", "value": "North", "shown": "Any area"},
                                      {"label": "Rows per page", "value": "50", "shown": "10"}]}
    turn = Prompts.load().actor_turn(state, observation_text=render_observation(None, 100).text, max_steps=60)
    assert "NOT APPLIED (apply before reading): Area; Rows per page = 50\n" in turn, turn
    assert "filter Area = North: held" in turn and "Any area" not in turn
