"""Verifier node: checks the evidence before finishing; sends the actor back with a repair goal."""

from __future__ import annotations

import asyncio
from typing import Any

from graph.checks.finish_checks import verify
from graph.model_io.robust import tool_reply
from graph.nodes.deps import Deps
from graph.plan.binding import plan_of
from graph.plan.judge import site_shapes
from graph.state import AgentState, VerifierReport


def declared_skips(state: AgentState) -> dict[str, str]:
    """The listed results the model left unopened on purpose: earlier finishes' and this one's (`finish(skip=)`)."""
    pending = state.get("pending") or {}
    return {**(state.get("skipped") or {}), **((pending.get("args") or {}).get("skip") or {})}


def check(deps: Deps, state: AgentState) -> VerifierReport:
    """The verifier's report on the evidence as it stands (a derived answer's lineage, else the `answer` table)."""
    return verify(plan=plan_of(state), columns=deps.spec.columns,
                  tables=state.get("tables") or {}, step=state.get("step", 0), listings=state.get("listings") or [],
                  opened=state.get("opened") or [], shapes=site_shapes(state.get("history") or []),
                  skipped=declared_skips(state))


def repair_goal(report: VerifierReport, refused: int, max_repairs: int) -> str:
    """The repair goal with what is left of the repair budget: a model told nothing of it would keep repairing;
    and the one way to contest it (a refusal is a claim about the evidence, and the model may know better)."""
    left = max_repairs - refused
    after = ("this was the last refusal: the next finish composes the answer as it stands" if left <= 0 else
             f"{left} more refusal(s) at most, then finish composes the answer as it stands")
    return (f"{report['repair_goal']} (refusal {refused} of {max_repairs}: {after}; a check wrong here: finish with "
            "dispute=<why>)")


def disputed(state: AgentState, report: VerifierReport) -> str | None:
    """The model's dispute of a refusal it was shown (`finish(dispute=...)`), or None: only after a refusal, once
    (the answer is then composed), and only while the checks still fail (else there is nothing to dispute)."""
    pending = state.get("pending") or {}
    reason = str((pending.get("args") or {}).get("dispute") or "").strip()
    return reason if reason and not report["ok"] and state.get("repairs", 0) >= 1 else None


def make_verifier(deps: Deps):
    async def verifier(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        # the detail check may run the derivation's list filters in the query engine's process
        report = await asyncio.to_thread(check, deps, state)
        repairs = state.get("repairs", 0)
        dispute = disputed(state, report)
        send_back = not report["ok"] and repairs < deps.budgets.max_repairs and dispute is None
        if send_back:
            report["repair_goal"] = repair_goal(report, repairs + 1, deps.budgets.max_repairs)
        if dispute is not None:
            report["disputed"] = dispute
        deps.log.write({"node": "verifier", "step": state.get("step", 0), "ok": report["ok"],
                        "failures": report["failures"], "notes": report.get("notes") or [],
                        "send_back": send_back, **({"dispute": dispute} if dispute is not None else {})})
        notes = "".join(f"\nnote: {n}" for n in report.get("notes") or [])
        reply = ("verified: composing the answer" if report["ok"] else
                 f"disputed ({dispute}): composing the answer, marked disputed; the checks said: "
                 f"{report['repair_goal']}" if dispute is not None else
                 f"VERIFICATION FAILED, REPAIR GOAL: {report['repair_goal']}" if send_back else
                 f"verification failed but the repair budget is spent; composing: {report['repair_goal']}") + notes
        update: dict[str, Any] = {"reports": [report], "nodes_run": ["verifier"],
                                  # the verifier's own words: page values in it are quoted where the checks put them
                                  "messages": [tool_reply(reply, pending["id"], own=True)],
                                  "skipped": declared_skips(state)}
        if dispute is not None:
            update["disputed"] = dispute
        if send_back:
            update.update(pending=None, repair_goal=report["repair_goal"], repair_failures=report["failures"],
                          repairs=repairs + 1)
        else:
            update.update(repair_goal=None, repair_failures=[])
        return update

    return verifier


def recheck_goal(deps: Deps, state: AgentState) -> dict[str, Any]:
    """After `revise_plan` or `discard_rows`, an active repair goal said again on the evidence as it is now (a
    table discarded is no longer "read under drift"; what is left to read is said), or cleared when nothing is
    left; the refusal count does not move."""
    if not state.get("repair_goal") or "verifier" in deps.ablated:
        return {}
    report = check(deps, state)
    if report["ok"]:
        return {"repair_goal": None, "repair_failures": []}
    return {"repair_goal": repair_goal(report, state.get("repairs", 0), deps.budgets.max_repairs),
            "repair_failures": report["failures"]}
