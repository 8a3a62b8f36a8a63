"""A played model's blind plans (`tasks/offline/blind_plans/`) for the scripted and faulty policies.

The fault table measured with `plan_from_walkthrough` measures a perfect plan: gates named in the site's own words.
A real planner writes the task's words before it has seen the site, and that is where false alarms come from. So the
policies can answer the planner with the blind plan a capable model wrote instead.

The policy still acts by the walkthrough, which reads into its own tables. A blind plan whose phases name other tables
would make the verifier ask for tables this policy never fills - an artefact of pairing two authors, not something a
model that follows its own plan meets. So the plan the policy answers with keeps the blind plan's words (its gates,
targets, row criteria, read notes, derivation) on the walkthrough's phase structure:
- no walkthrough phases: the blind plan's top-level gates, without phases;
- walkthrough phases: each keeps its table, read and detail flag, and takes the gates of the blind phase with the same
  table name, else of the next unmatched blind phase in order, else none (the blind top-level gates still apply).
"""

from __future__ import annotations

import json
from pathlib import Path

from graph.model_io.policy import PolicyUnavailable
from graph.state import Phase, Plan
from tasks.offline.registry import PLACEHOLDER_ORIGIN

BLIND_PLAN_DIR = Path(__file__).resolve().parents[2] / "tasks" / "offline" / "blind_plans"
PLAYED_ORIGIN = "{origin}"  # how the played requests wrote the sites' origin


class BlindPlanNotFound(PolicyUnavailable):
    """No recorded blind plan for this task record."""


def load_blind_plan(task_id: str, *, origin: str | None = None) -> Plan:
    path = BLIND_PLAN_DIR / f"{task_id}.json"
    if not path.is_file():
        raise BlindPlanNotFound(f"no blind plan for task {task_id!r} in {BLIND_PLAN_DIR}")
    text = path.read_text(encoding="utf-8").replace(PLAYED_ORIGIN, origin or PLACEHOLDER_ORIGIN)
    return Plan.model_validate(json.loads(text))


def on_walkthrough_phases(blind: Plan, walkthrough: Plan) -> Plan:
    """The blind plan's words on the walkthrough's phases (module docstring)."""
    if not walkthrough.phases:
        return blind.model_copy(update={"phases": []})
    unmatched = [p for p in blind.phases if walkthrough.phase_for(p.into) is None]
    phases = []
    for phase in walkthrough.phases:
        source = blind.phase_for(phase.into) or (unmatched.pop(0) if unmatched else None)
        phases.append(Phase(read=phase.read, into=phase.into, detail_pages=phase.detail_pages,
                            gates=list(source.gates) if source else []))
    return blind.model_copy(update={"phases": phases})
