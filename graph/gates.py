"""Plan gates checked on the actual values of the state rows are read in, whoever set them.

The commonest real failure is a gate *kept* at its default: the agent never touched the control, so no
setter-based rule sees it. Here the plan's gates are resolved (by key or label, whole words:
`graph.tracker.gate_candidates`) against the values the page holds when rows are read (`check_read`), and
the verifier checks the same on each row's snapshot (`state_snapshot`: key, label and value of every control
and URL parameter). A gate that resolves to nothing is reported, never skipped; a value the page clamps
(`graph.tracker.clamp_evidence`) is accepted and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graph.judge import gates_for, verdicts
from graph.state import DriftFlag, Gate, Plan, RetrievalState
from graph.tracker import PLAN_RULES, plan_flag
from graph.values import gate_key


def state_snapshot(retrieval: RetrievalState | None) -> dict[str, dict[str, Any]]:
    """What a row's provenance records of the state it was read in: every value (empty ones too: a control
    left empty is evidence) with the label the page shows and, where the page clamps a planned value, why."""
    if not retrieval:
        return {}
    snapshot: dict[str, dict[str, Any]] = {}
    for key, value in retrieval.get("values", {}).items():
        entry: dict[str, Any] = {"label": value.get("label") or key, "value": value.get("value") or ""}
        if value.get("clamped"):
            entry["clamped"] = dict(value["clamped"])
        snapshot[key] = entry
    return snapshot


def read_gates(plan: Plan | None, into: str) -> list[Gate]:
    """The gates a read into table `into` must satisfy: the plan's, plus its phase's for a phased plan."""
    return gates_for(plan, into, required=True)


@dataclass
class ReadCheck:
    """The planned gates at one read: held at another value (flags), clamped by the page, or naming nothing."""

    mismatches: list[DriftFlag] = field(default_factory=list)
    clamps: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        return ([f"[gate] {f['message']}" for f in self.mismatches] + [f"[gate] clamped: {c}" for c in self.clamps]
                + [f"[gate] unresolved: {u}" for u in self.unresolved])


def _ever_set(history: list[RetrievalState], key: str) -> bool:
    return any((s["values"].get(key) or {}).get("set_at_step") is not None for s in history)


def check_read(plan: Plan | None, into: str, retrieval: RetrievalState | None, step: int,
               history: list[RetrievalState] | None = None) -> ReadCheck:
    """The read check's policy over the judge's verdicts: each gate of the read's own phase (and the plan's)
    on the values held now, whoever set them (a default kept included); a narrower window too, judged on the page
    read. On a page that grounds none of the plan's gates (a record's own page) the gates are judged on the latest
    visited state that grounds some (the list the page was reached from: a list read in the wrong state lists the
    wrong records); a gate naming no control is reported only where some of the plan's gates ground. "Its
    default: never set" is said only when no state visited shows the agent setting that control."""
    gates = read_gates(plan, into)
    check = ReadCheck()
    if not gates or not retrieval:
        return check
    windows = [g for g in gates if g.kind == "window"]
    gates = [g for g in gates if g.kind != "window"]
    source = retrieval
    if not any(v.grounded for v in verdicts(gates, retrieval)):
        source = next((s for s in reversed(history or []) if s is not retrieval and s["url"] != retrieval["url"]
                       and any(v.grounded for v in verdicts(gates, s))), None) if gates else None
        if source is None:
            source = retrieval
            gates = []
    reached = "" if source is retrieval else f" on {source['path']}, the list this page was reached from,"
    for verdict in verdicts(windows, retrieval, applied=True):  # on the page read (a window is the page's own)
        if verdict.status == "mismatch":
            flag = plan_flag(verdict, retrieval, step)
            check.mismatches.append(DriftFlag(**{**flag, "node": "extractor", "message": (
                f"{flag['message']} (read so: discard_rows these rows and read again)")}))
        elif verdict.status == "clamped":
            check.clamps.append(f"{verdict.label} = {verdict.value!r}, not the plan's {verdict.gate.target!r}: "
                                f"{verdict.evidence}")
    for verdict in verdicts(gates, source, applied=True):
        gate = verdict.gate
        if verdict.status == "unresolved":
            if source is retrieval or verdict.grounded:
                check.unresolved.append(f"{gate.name}={gate.target} ({verdict.evidence})")
        elif verdict.status == "clamped":
            check.clamps.append(f"{verdict.label} = {verdict.value!r}, not the plan's {gate.target!r}: "
                                f"{verdict.evidence}")
        elif verdict.status == "mismatch":
            kept = "" if verdict.set_by_agent or _ever_set(history or [], verdict.key or "") \
                else " (its default: never set)"
            check.mismatches.append(DriftFlag(
                rule="gate_mismatch", gate=verdict.key or gate_key(gate.name), label=verdict.label, before=gate.target,
                after=verdict.value, step=step, path=retrieval["path"], node="extractor",
                message=f"{verdict.label} holds {verdict.value!r}{kept}{reached} but the plan needs "
                        f"{verdict.needs_text()}{f' ({verdict.evidence})' if verdict.evidence else ''}: set it"
                        f"{' and apply it' if verdict.evidence else ''}, discard_rows these rows and read again"))
    return check


def read_drift(active: list[DriftFlag], check: ReadCheck) -> list[DriftFlag]:
    """The flags a read's rows carry: the active loss flags (a gate set, then lost) and the read's own verdicts.
    The tracker's plan flags between reads accept any phase's value, and a flag raised at an earlier read may be
    about another phase or a cause since fixed: each read is judged on its own phase's gates, here."""
    return [*(f for f in active if f["rule"] not in PLAN_RULES), *check.mismatches]
