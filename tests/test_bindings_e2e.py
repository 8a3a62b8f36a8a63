"""Gates bound once to the page's controls, through the real graph (real ChatOpenAI client against the strict fake
server, real LangGraph, real Chromium on the offline sites): issue 37 stage 2 (graph/plan/binding.py).

- a gate the plan names in its own words (no control is named so) is bound by the model's `gate` field on the
  setter it calls: the setters offer the field while the gate is unbound, the binding is stored, the read is judged
  on that control and the answer is exact;
- without it, the gate is said unbound once, at the read, with the page's candidate controls (label and ref);
- a gate named as the page names it is bound by the rule, and a control kept at its site default is said so by
  its binding.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.measuring.scripted import load_walkthrough, plan_from_walkthrough
from agent.rundir.evidence import read_evidence
from eval.score import score_answer
from tests.fixtures.replay_calls import call as _call
from tests.fixtures.replay_calls import replay_replies

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]
TASK = "offline_scholar_001"
OWN_WORDS = "Version date"  # the plan's name for the control the page calls "Date basis"
OWN_VALUE = "original"  # and the option's code, not its label: no control offers it word for word (no rule binds it)
GATE = f"filter version_date = {OWN_VALUE}"



def _plan(origin: str, rename: bool) -> dict[str, Any]:
    plan = plan_from_walkthrough(load_walkthrough(TASK, origin=origin)).model_dump()
    if rename:
        for gate in plan["gates"]:
            if gate["name"] == "Date basis":
                gate["name"], gate["target"] = OWN_WORDS, {"value": OWN_VALUE}
    return plan


async def _replay(steps: list[dict[str, Any]], offline_server, chromium_worker, tmp_path: Path, *, rename: bool):
    replies = [_call("Plan", _plan(offline_server.origin, rename)), *(_call(s["tool"], s["args"]) for s in steps)]
    done = await replay_replies(TASK, replies, offline_server, chromium_worker, tmp_path)
    return done.task, done.outcome, read_evidence(tmp_path), done.requests


def _tool_replies(requests: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(m["content"]) for r in requests for m in r["messages"] if m["role"] == "tool"))


def _setter_has_gate(request: dict[str, Any]) -> bool:
    tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
    return "gate" in ((tools.get("select") or {}).get("parameters") or {}).get("properties", {})


def _with_gate(steps: list[dict[str, Any]], gate: str) -> list[dict[str, Any]]:
    return [{**s, "args": {**s["args"], "gate": gate}} if s["args"].get("target", {}).get("label") == "Date basis"
            else s for s in steps]


async def test_the_models_gate_field_binds_a_gate_named_in_the_plans_own_words(offline_server, chromium_worker,
                                                                                tmp_path):
    steps = _with_gate(load_walkthrough(TASK, origin=offline_server.origin), OWN_WORDS)
    wrong = {"tool": "select", "args": {"target": {"label": "Date basis"}, "option": "Original submission (v1)",
                                        "gate": "Sort order"}}
    at = next(i for i, s in enumerate(steps) if s["args"].get("gate"))
    task, outcome, evidence, requests = await _replay([*steps[:at], wrong, *steps[at:]], offline_server,
                                                      chromium_worker, tmp_path, rename=True)
    replies = _tool_replies(requests)
    assert any("gate 'Sort order' is no gate of the plan" in r for r in replies), replies
    binding = evidence.bindings[GATE]
    assert (binding["keys"], binding["by"], binding["label"]) == (["basis"], "model", "Date basis")
    assert not [r for r in replies if "bound to no control" in r]
    offered = [_setter_has_gate(r) for r in requests
               if any(t["function"]["name"] == "select" for t in r.get("tools") or [])]
    assert offered[0] and not offered[-1], offered  # offered while the gate was unbound, gone once bound
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    assert outcome.verifier_reports[-1]["ok"] and not outcome.drift_flags, outcome.verifier_reports


async def test_a_gate_left_unbound_is_said_once_at_the_read_with_its_candidates(offline_server, chromium_worker,
                                                                                tmp_path):
    steps = load_walkthrough(TASK, origin=offline_server.origin)
    extract = next(s for s in steps if s["tool"] == "extract_rows")
    first = {"tool": "extract_rows", "args": {**extract["args"], "into": "first_look"}}
    at = steps.index(extract)
    task, outcome, evidence, requests = await _replay([*steps[:at], first, *steps[at:]], offline_server,
                                                      chromium_worker, tmp_path, rename=True)
    notes = [r for r in _tool_replies(requests) if "bound to no control" in r]
    assert len(notes) == 1, notes
    assert f"note: gate {OWN_WORDS} = {OWN_VALUE} is bound to no control; candidates: " in notes[0]
    assert "'Date basis' [e" in notes[0]
    assert GATE not in evidence.bindings
    said = [g for t in evidence.tables.values() for r in t.get("reads") or [] for g in r.get("unbound") or []]
    assert said == [GATE]
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer


async def test_a_control_kept_at_its_default_is_said_so_by_its_rule_binding(offline_server, chromium_worker,
                                                                            tmp_path):
    steps = [s for s in load_walkthrough(TASK, origin=offline_server.origin)
             if s["args"].get("target", {}).get("label") != "Date basis"]  # Date basis never set
    _, outcome, evidence, requests = await _replay(steps, offline_server, chromium_worker, tmp_path, rename=False)
    binding = evidence.bindings["filter date_basis = Original submission (v1)"]
    assert (binding["keys"], binding["by"]) == (["basis"], "rule")
    assert binding["default"] and binding["default"] != "Original submission (v1)"
    kept = [r for r in _tool_replies(requests) if f"Date basis holds {binding['default']!r} (its default: never set)" in r]
    assert kept, json.dumps(_tool_replies(requests))[-1500:]
