"""State tracker node: reads the retrieval state off the new observation and flags drift."""

from __future__ import annotations

from typing import Any

from browser.types import ActionResult, Observation
from graph.nodes.deps import Deps
from graph.plan.binding import bind, plan_of
from graph.plan.judge import current_phase
from graph.state import AgentState, RetrievalState
from graph.tracking.plan_flags import refresh_flags
from graph.tracking.tracker import track


def tracked(state: AgentState) -> dict[str, Any]:
    """The retrieval state of the observation in `state` and the flags active after its action: the update the
    tracker returns, shared with a workspace read that opened its own page (`read_facts(url=...)`), which is
    judged on the page it read."""
    obs = Observation.model_validate(state["observation"])
    result = ActionResult.model_validate(state["last_result"]) if state.get("last_result") else None
    plan = plan_of(state)
    previous = state.get("retrieval")
    retrieval, flags = track(obs=obs, step=state.get("step", 0), action=state.get("last_action"), result=result,
                             previous=previous, history=state.get("history") or [],
                             active_flags=state.get("drift_flags") or [], plan=plan,
                             phase=current_phase(plan, state.get("tables") or {}, state.get("history")))
    known = {(f["rule"], f["gate"], f["path"]) for f in state.get("drift_flags") or []}
    new_flags = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
    update: dict[str, Any] = {"retrieval": retrieval, "drift_flags": flags}
    action = state.get("last_action") or {}
    made = bind(plan, state.get("bindings"), retrieval, state.get("step", 0), action=action,
                set_controls=result.set_controls if result is not None and result.ok else [],
                model_gate=action.get("gate") if result is not None and result.ok else None)
    if made:  # each gate bound once: a new binding, or the model's replacing the rule's (kept as `replaced`)
        update["bindings"] = {**(state.get("bindings") or {}), **made}
    if new_flags:
        update["drift_log"] = new_flags
    if _state_changed(previous, retrieval):
        update["history"] = [retrieval]
    return update


def make_state_tracker(deps: Deps):
    async def state_tracker(state: AgentState) -> dict[str, Any]:
        if not state.get("observation"):
            return {"nodes_run": ["state_tracker"]}
        update = tracked(state)
        retrieval, flags = update["retrieval"], update["drift_flags"]
        deps.log.write({"node": "state_tracker", "step": state.get("step", 0), "url": retrieval["url"],
                        "values": {k: v["value"] for k, v in retrieval["values"].items() if v["value"]},
                        "page": retrieval["page"], "pages": retrieval["pages"],
                        "drift": [f"{f['rule']}:{f['gate']}" for f in flags],
                        **({"bound": {g: b for g, b in update["bindings"].items()
                                      if b["step"] == state.get("step", 0)}} if "bindings" in update else {})})
        return {**update, "nodes_run": ["state_tracker"]}

    return state_tracker


def recheck_flags(deps: Deps, state: AgentState) -> dict[str, Any]:
    """`refresh_flags` after `revise_plan` or `discard_rows`, so what the next turn shows is true."""
    if "state_tracker" in deps.ablated or not state.get("retrieval"):
        return {}
    plan = plan_of(state)
    flags = refresh_flags(plan, state.get("retrieval"), state.get("drift_flags") or [], state.get("step", 0),
                          current_phase(plan, state.get("tables") or {}, state.get("history")))
    return {"drift_flags": flags}


def _state_changed(before: RetrievalState | None, after: RetrievalState) -> bool:
    if before is None:
        return True
    values = lambda s: {k: v["value"] for k, v in s["values"].items()}  # noqa: E731
    return (before["url"], before["page"], values(before)) != (after["url"], after["page"], values(after))
