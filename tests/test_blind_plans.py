"""Blind plans: a played model's planner answers, shown by the policies in place of the walkthrough's perfect plan."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agent.clients.resolve import resolve_models
from agent.config import load_config
from agent.measuring.blind_plans import BlindPlanNotFound, load_blind_plan, on_walkthrough_phases
from agent.measuring.faulty import FaultyPolicy
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough, plan_from_walkthrough
from graph.state import Plan
from graph.tools.tool_schemas import plan_tool
from tasks.loaders import load_tasks

CONFIG = "configs/ablation-blind.yaml"


def planner_answer(model: ScriptedPolicy) -> dict:
    ai = asyncio.run(model.plan([SystemMessage("plan"), HumanMessage("task")], plan_tool()))
    return ai.tool_calls[0]["args"]


def test_every_offline_record_has_a_valid_blind_plan():
    ids = [t.task_id for t in load_tasks("offline")]
    assert len(ids) == 60
    for task_id in ids:
        assert isinstance(load_blind_plan(task_id, origin="http://127.0.0.1:1"), Plan)


def test_blind_plan_origin_is_the_runs_and_an_unknown_record_is_refused():
    plan = load_blind_plan("offline_stats_004", origin="http://127.0.0.1:9")
    assert "{origin}" not in plan.model_dump_json()
    with pytest.raises(BlindPlanNotFound):
        load_blind_plan("offline_nope_001")


def test_blind_words_on_the_walkthrough_phases():
    steps = load_walkthrough("offline_stats_004")
    walk, blind = plan_from_walkthrough(steps), load_blind_plan("offline_stats_004")
    shown = on_walkthrough_phases(blind, walk)
    assert [p.into for p in shown.phases] == [p.into for p in walk.phases]  # the tables this policy fills
    assert [p.detail_pages for p in shown.phases] == [p.detail_pages for p in walk.phases]
    by_table = {p.into: p.gates for p in shown.phases}
    assert by_table["counties"] == blind.phase_for("counties").gates  # same table name: its own gates
    assert shown.gates == blind.gates and shown.derivation == blind.derivation and shown.read == blind.read
    names = {g.name for p in shown.phases for g in p.gates}
    assert names <= {g.name for p in blind.phases for g in p.gates}  # never the walkthrough's words


def test_unphased_walkthrough_takes_the_blind_top_level_gates_only():
    walk = plan_from_walkthrough(load_walkthrough("offline_lifesci_003"))
    blind = load_blind_plan("offline_lifesci_003")
    assert not walk.phases and blind.phases
    shown = on_walkthrough_phases(blind, walk)
    assert shown.phases == [] and shown.gates == blind.gates


@pytest.mark.parametrize("cls", [ScriptedPolicy, FaultyPolicy])
def test_policies_answer_the_planner_with_the_blind_plan(cls):
    walk = planner_answer(cls.for_task("offline_scholar_001"))
    blind = planner_answer(cls.for_task("offline_scholar_001", plans="blind"))
    assert walk == plan_from_walkthrough(load_walkthrough("offline_scholar_001")).model_dump()
    assert blind["gates"] == [g.model_dump() for g in load_blind_plan("offline_scholar_001").gates]
    assert blind != walk


def test_blind_config_runs_both_policies_under_their_own_names(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config, notices = resolve_models(load_config(CONFIG), CONFIG)
    policies = {m.name: m.plans for m in config.models if m.provider in ("scripted", "faulty")}
    assert policies == {"scripted-walkthrough+blind-plans": "blind", "faulty-walkthrough+blind-plans": "blind"}
