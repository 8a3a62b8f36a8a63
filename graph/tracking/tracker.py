"""Deterministic state tracking: the retrieval state after each step and the drift flags active on it.

The rules are plain functions of (previous states, observation, action), so they are tested without a browser or
an LLM: reading the state (`state_reading.py`), loss rules (`drift.py`), the plan's flags over the judge's verdicts
(`plan_flags.py`) and clamps (`clamps.py`). This module puts them together once per step.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from browser.types import ActionResult, Observation
from graph.plan.values import key_matches
from graph.state import DriftFlag, PendingValue, Phase, Plan, RetrievalState, StateValue
from graph.tracking.clamps import mark_clamps, requested_values
from graph.tracking.drift import NAVIGATIONS, carry_flags, dedupe_flags, last_on_path, lost_gates
from graph.tracking.plan_flags import in_phase, plan_flags
from graph.tracking.state_reading import action_targets, applied_values, control_shapes, read_values


def track(
    *,
    obs: Observation,
    step: int,
    action: dict | None,
    result: ActionResult | None,
    previous: RetrievalState | None,
    history: list[RetrievalState],
    active_flags: list[DriftFlag],
    plan: Plan | None,
    phase: Phase | None = None,
) -> tuple[RetrievalState, list[DriftFlag]]:
    """The new retrieval state and the drift flags active after this step. With a phased plan, `phase` is the
    one being read: a gate only other phases name may change (the plan says so), so it is not drift."""
    kind = (action or {}).get("kind")
    path = urlsplit(obs.url).path
    same_path_before = previous if previous and previous["path"] == path else last_on_path(history, path)
    targets = action_targets(action, result)

    values: dict[str, StateValue] = {}
    shapes = control_shapes(obs)
    for key, (value, label, evidence) in read_values(obs, result).items():
        before = same_path_before["values"].get(key) if same_path_before else None
        unchanged = before is not None and before["value"] == value
        if unchanged:
            set_at, set_by = before["set_at_step"], before["set_by"]
        elif value and ("url" in evidence or key_matches(key, label, targets)):
            # set by the agent: a control it addressed, or URL state chosen by the navigation it triggered;
            # a control that changed as a side effect (a reset to its default) is not a gate the agent set
            set_at, set_by = step, kind
        else:
            set_at, set_by = None, None
        values[key] = StateValue(value=value, label=label, evidence=evidence, set_at_step=set_at, set_by=set_by,
                                 first_seen=before.get("first_seen", before["value"]) if before else value)
        if unchanged and "clamped" in before:  # the page's limit still holds while the value is the one it clamped to
            values[key]["clamped"] = before["clamped"]
        if key in shapes:
            values[key]["kind"], values[key]["options"] = shapes[key]
    for key, url_value in applied_values(obs).items():
        if key in values:
            values[key]["applied"] = url_value

    pagination = obs.pagination
    state = RetrievalState(
        url=obs.url, path=path, values=values,
        page=pagination.page if pagination else None,
        pages=pagination.pages if pagination else None,
        result_count=obs.result_count if obs.result_count is not None else (pagination.total if pagination else None),
        step=step,
    )

    if obs.pending:  # the browser's fact: controls changed since the results shown were applied
        state["pending"] = [PendingValue(label=p.label, value=p.value, shown=p.shown) for p in obs.pending]
    if plan is not None:
        mark_clamps(plan, state, obs.outline, requested=requested_values(action))
    flags = carry_flags(active_flags, state, kind, targets)
    if same_path_before is not None and kind not in NAVIGATIONS:
        flags += lost_gates(same_path_before, state, kind, targets, moved=previous is None or previous["path"] != path,
                             step=step)
    flags = dedupe_flags(flags)
    if plan is not None:
        flags = [*(f for f in flags if in_phase(f, phase, plan)), *plan_flags(plan, state, step, active_flags)]
    return state, flags
