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

from graph.state import DriftFlag, Gate, Plan, RetrievalState
from graph.tracker import gate_candidates, is_clamped, values_match, window_flag


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
    if plan is None:
        return []
    phase = plan.phase_for(into) if plan.phases else None
    gates = [*plan.gates, *(phase.gate_list() if phase else [])]
    return [g for g in gates if g.required]


@dataclass
class ReadCheck:
    """The planned gates at one read: held at another value (flags), clamped by the page, or naming nothing."""

    mismatches: list[DriftFlag] = field(default_factory=list)
    clamps: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        return ([f"[gate] {f['message']}" for f in self.mismatches] + [f"[gate] clamped: {c}" for c in self.clamps]
                + [f"[gate] unresolved: {u}" for u in self.unresolved])


def check_read(plan: Plan | None, into: str, retrieval: RetrievalState | None, step: int,
               history: list[RetrievalState] | None = None) -> ReadCheck:
    """Each planned gate against the value its control holds now, whoever set it (a default kept included).
    On a page that holds none of the plan's gates (a record's own page) the gates are checked on the latest
    visited state that holds some (the list the page was reached from: a list read in the wrong state lists the
    wrong records); a gate naming no control is reported only where some of the plan's gates resolve."""
    gates = read_gates(plan, into)
    check = ReadCheck()
    if not gates or not retrieval:
        return check
    windows = [g for g in gates if g.kind == "window"]
    gates = [g for g in gates if g.kind != "window"]
    source = retrieval
    if not any(len(gate_candidates(retrieval, g.name, g)) == 1 for g in gates):
        source = next((s for s in reversed(history or []) if s is not retrieval and s["url"] != retrieval["url"]
                       and any(len(gate_candidates(s, g.name, g)) == 1 for g in gates)), None) if gates else None
        if source is None:
            source = retrieval
            gates = []
    reached = "" if source is retrieval else f" on {source['path']}, the list this page was reached from,"
    for gate in windows:  # on the page read (a window is the read page's own)
        if flag := window_flag(gate.name, gate.target, retrieval, step, at_read=True):
            check.mismatches.append(DriftFlag(**{**flag, "node": "extractor", "message": (
                f"{flag['message']} (read so: discard_rows these rows and read again)")}))
    unresolved: list[str] = []
    for gate in gates:
        found = gate_candidates(source, gate.name, gate)
        if len(found) != 1:
            labels = [source["values"][k]["label"] or k for k, _ in found]
            unresolved.append(f"{gate.name}={gate.target} (" + (f"matches {len(found)} controls {labels}; revise_plan "
                              "with the full label)" if found else "no control or URL parameter here is named so)"))
            continue
        key, value = found[0]
        held = source["values"][key]
        if values_match(value, gate.target):
            continue
        label = held.get("label") or gate.name
        if is_clamped(held, gate.target):
            check.clamps.append(f"{label} = {value!r}, not the plan's {gate.target!r}: {held['clamped']['evidence']}")
            continue
        kept = " (its default: never set)" if held.get("set_at_step") is None else ""
        check.mismatches.append(DriftFlag(
            rule="gate_mismatch", gate=key, label=label, before=gate.target, after=value, step=step,
            path=retrieval["path"], node="extractor",
            message=f"{label} holds {value!r}{kept}{reached} but the plan needs {gate.target!r}: set it, "
                    "discard_rows these rows and read again"))
    if source is retrieval:
        check.unresolved = unresolved
    return check
