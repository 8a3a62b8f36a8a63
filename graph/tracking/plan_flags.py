"""The tracker's policy over the gate judge's verdicts between reads: which planned gates are flagged, and the
flags judged again when the plan changes.
"""

from __future__ import annotations

from graph.plan.judge import Verdict, gates_for, named_controls, verdicts
from graph.plan.values import gate_key
from graph.prompting.page_fence import page_repr
from graph.state import DriftFlag, Gate, Phase, Plan, RetrievalState
from graph.tracking.drift import PLAN_RULES, dedupe_flags


def in_phase(flag: DriftFlag, phase: Phase | None, plan: Plan) -> bool:
    """A loss flag on a control only other phases name is no drift: the plan changes it between phases."""
    if not plan.phases:
        return True
    gates = gates_for(plan, phase)
    state = {flag["gate"]: {"label": flag["gate"], "value": flag["before"] or ""}}  # keyed as before
    return any(flag["gate"] in named_controls(g, state) or gate_key(g.name) == gate_key(flag["label"]) for g in gates)


def ambiguous_gates(plan: Plan | None, state: RetrievalState | None, gates: list[Gate] | None = None) -> list[str]:
    """Plan gates (of every phase, or `gates`) that name several controls, for the actor to disambiguate
    (revise_plan with a full label); a window names a From/To pair, never "several controls"."""
    if plan is None or not state:
        return []
    return [f"{v.gate.name} matches {len(v.candidates)} controls [{', '.join(map(page_repr, v.candidates))}]"
            for v in verdicts(gates_for(plan, every_phase=True) if gates is None else gates, state) if v.candidates]


def plan_flags(plan: Plan, state: RetrievalState, step: int, active: list[DriftFlag]) -> list[DriftFlag]:
    """The tracker's policy over the judge's verdicts, between reads: a planned gate whose control the agent set
    to another value, or one already flagged (`active`: the read check judges a kept default too) and still
    wrong. Any phase's value is accepted (a phase not yet read may need it), so a control (or a From/To
    pair) is flagged only when every gate naming it is a mismatch; unresolved and clamped verdicts never flag."""
    held = {f["gate"] for f in active if f["rule"] in PLAN_RULES}
    groups: dict[str, list[Verdict]] = {}
    for verdict in verdicts(gates_for(plan, every_phase=True), state):
        if verdict.grounded:
            groups.setdefault(str(verdict.bounds) if verdict.gate.kind == "window" else verdict.key, []).append(verdict)
    flags: list[DriftFlag] = []
    for group in groups.values():
        if any(v.status != "mismatch" for v in group):
            continue
        verdict = group[0]
        flag = plan_flag(verdict, state, step)
        # a wider window not flagged at a read is one being set (From before To): a read made in it is flagged there
        if flag["gate"] in held or (verdict.set_by_agent and not verdict.wider):
            flags.append(flag)
    return flags


def plan_flag(verdict: Verdict, state: RetrievalState, step: int) -> DriftFlag:
    """The drift flag a mismatch verdict raises (the tracker's wording; the read check adds what to do)."""
    gate, shown = verdict.gate, f"the time window shown ({verdict.value}) is"
    if gate.kind != "window":
        rule, message = "gate_mismatch", f"{gate.name} is {page_repr(verdict.value)} but the plan needs {verdict.needs_text()}"
    elif verdict.wider:
        rule, message = "window_wider", (f"{shown} wider than the plan's {gate.target}: rows outside the plan's window "
                                         "are read as in it; set both bounds")
    else:
        rule, message = "window_narrower", f"{shown} narrower than the plan's {gate.target}; widen it"
    if verdict.evidence:  # the form was changed and not applied
        message += f" ({verdict.evidence}; apply the form)"
    return DriftFlag(rule=rule, gate=verdict.key or gate_key(gate.name), label=gate.name, before=str(gate.target),
                     after=verdict.value, step=step, path=state["path"], message=message)


def refresh_flags(plan: Plan | None, state: RetrievalState | None, flags: list[DriftFlag], step: int,
                  phase: Phase | None = None) -> list[DriftFlag]:
    """The active flags judged again on the same state under the plan as it is now (after `revise_plan` or
    `discard_rows`: no page action, so the tracker did not run): loss flags stay (a reset value is still
    lost), the plan's flags are recomputed, a flag raised at a read kept only while still a mismatch."""
    if plan is None or not state:
        return [f for f in flags if f["rule"] not in PLAN_RULES]
    kept = [f for f in flags if f["rule"] not in PLAN_RULES and in_phase(f, phase, plan)]
    return dedupe_flags([*kept, *plan_flags(plan, state, step, flags)])
