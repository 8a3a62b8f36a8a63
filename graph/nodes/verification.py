"""Verifier node: checks the evidence before finishing; sends the actor back with a repair goal."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import ToolMessage

from graph.composer import live_rows
from graph.evidence import derived_answer
from graph.nodes.deps import Deps
from graph.state import AgentState, Plan
from graph.verifier import verify, verify_derived


def make_verifier(deps: Deps):
    async def verifier(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
        if derived_answer(state.get("tables")) is not None:
            # the detail check may run the derivation's list filters in the query engine's process
            report = await asyncio.to_thread(verify_derived, plan=plan, tables=state.get("tables") or {},
                                             columns=deps.spec.columns, step=state.get("step", 0),
                                             listings=state.get("listings") or [])
        else:
            report = verify(plan=plan, columns=deps.spec.columns, rows=rows, reads=state.get("reads") or [],
                            step=state.get("step", 0), listings=state.get("listings") or [],
                            visited=state.get("visited") or [])
        repairs = state.get("repairs", 0)
        send_back = not report["ok"] and repairs < deps.budgets.max_repairs
        deps.log.write({"node": "verifier", "step": state.get("step", 0), "ok": report["ok"],
                        "failures": report["failures"], "notes": report.get("notes") or [],
                        "send_back": send_back})
        notes = "".join(f"\nnote: {n}" for n in report.get("notes") or [])
        reply = ("verified: composing the answer" + notes if report["ok"] else
                 f"VERIFICATION FAILED, REPAIR GOAL: {report['repair_goal']}" if send_back else
                 f"verification failed but the repair budget is spent; composing: {report['repair_goal']}")
        if notes and not report["ok"]:
            reply += notes
        update: dict[str, Any] = {"reports": [report], "nodes_run": ["verifier"],
                                  "messages": [ToolMessage(reply, tool_call_id=pending["id"])]}
        if send_back:
            update.update(pending=None, repair_goal=report["repair_goal"], repairs=repairs + 1)
        else:
            update["repair_goal"] = None
        return update

    return verifier
