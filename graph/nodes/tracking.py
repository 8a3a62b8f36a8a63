"""State tracker node: reads the retrieval state off the new observation and flags drift."""

from __future__ import annotations

from typing import Any

from browser.types import ActionResult, Observation
from graph.nodes.deps import Deps
from graph.state import AgentState, Phase, Plan, RetrievalState
from graph.tracker import track


def make_tracker(deps: Deps):
    async def state_tracker(state: AgentState) -> dict[str, Any]:
        if not state.get("observation"):
            return {"nodes_run": ["state_tracker"]}
        obs = Observation.model_validate(state["observation"])
        result = ActionResult.model_validate(state["last_result"]) if state.get("last_result") else None
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        previous = state.get("retrieval")
        history = state.get("history") or []
        retrieval, flags = track(obs=obs, step=state.get("step", 0), action=state.get("last_action"), result=result,
                                 previous=previous, history=history, active_flags=state.get("drift_flags") or [],
                                 plan=plan, phase=current_phase(plan, state.get("tables") or {}))
        known = {(f["rule"], f["gate"], f["path"]) for f in state.get("drift_flags") or []}
        new_flags = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
        update: dict[str, Any] = {"retrieval": retrieval, "drift_flags": flags, "nodes_run": ["state_tracker"]}
        if new_flags:
            update["drift_log"] = new_flags
        if _state_changed(previous, retrieval):
            update["history"] = [retrieval]
        deps.log.write({"node": "state_tracker", "step": state.get("step", 0), "url": retrieval["url"],
                        "values": {k: v["value"] for k, v in retrieval["values"].items() if v["value"]},
                        "page": retrieval["page"], "pages": retrieval["pages"],
                        "drift": [f"{f['rule']}:{f['gate']}" for f in flags]})
        return update

    return state_tracker


def current_phase(plan: Plan | None, tables: dict[str, Any]) -> Phase | None:
    """The first phase of the plan whose table has no rows yet (None when unphased or all are read)."""
    if plan is None:
        return None
    return next((p for p in plan.phases if not (tables.get(p.into) or {}).get("rows")), None)


def _state_changed(before: RetrievalState | None, after: RetrievalState) -> bool:
    if before is None:
        return True
    values = lambda s: {k: v["value"] for k, v in s["values"].items()}  # noqa: E731
    return (before["url"], before["page"], values(before)) != (after["url"], after["page"], values(after))
