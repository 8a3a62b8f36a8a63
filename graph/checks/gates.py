"""Plan gates checked on the actual values of the state rows are read in, whoever set them.

The commonest real failure is a gate *kept* at its default: the agent never touched the control, so no
setter-based rule sees it. Here the judge's verdicts (`graph.plan.judge`) on the values the page holds when rows are
read become the read check (`check_read`), and the verifier judges the same on each row's snapshot
(`state_snapshot`: key, label and value of every control and URL parameter). A gate that resolves to nothing is
reported, never skipped; a value the page clamps (`graph.tracking.clamps`) is accepted and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from graph.plan.binding import kept_default
from graph.plan.judge import (
    gate_sets,
    judged_here,
    phase_names,
    settle,
    site_shapes,
    verdicts,
    with_shapes,
)
from graph.plan.values import last_set
from graph.prompting.page_fence import inline_data, page_repr
from graph.state import DriftFlag, Gate, Plan, RetrievalState
from graph.tracking.drift import PLAN_RULES
from graph.tracking.plan_flags import plan_flag


def state_snapshot(retrieval: RetrievalState | None) -> dict[str, dict[str, Any]]:
    """What a row's provenance records of the state it was read in: every value (empty ones too: a control
    left empty is evidence) with the label the page shows and, where the page clamps a planned value, why."""
    return {key: {"label": value.get("label") or key, "value": value.get("value") or "",
                  **({"clamped": dict(value["clamped"])} if value.get("clamped") else {})}
            for key, value in (retrieval or {}).get("values", {}).items()}


def stale_read(retrieval: RetrievalState | None) -> str | None:
    """Why a read of the page's results now is refused, or None: controls changed since the results shown were
    applied (the browser's fact, `RetrievalState.pending`), so the rows would be the old state's."""
    pending = (retrieval or {}).get("pending") or []
    if not pending:
        return None
    changed = "; ".join(f"{p['label']} = {p['value']!r} (the page shows results for {p['shown']!r})"
                        for p in pending)
    return (f"refused: the page's results are stale: {changed} changed and not applied. Apply it (submit the form "
            "or press its apply/search button), then read again; or set it back")


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
    """The read check's policy over the judge's verdicts: each gate of the read's own phase (and the plan's)
    on the values held now, whoever set them (a default kept included); a narrower window too, judged on the page
    read. A table several phases write (one per value of a control) is held when the state holds the gates of one
    of them; when it holds none, the nearest phase's mismatches are flagged, naming the phases compared."""
    options = gate_sets(plan, into, required=True)
    if plan is None or not retrieval or not any(gates for _, gates in options):
        return ReadCheck()
    checks = [(phase, _check(gates, retrieval, step, history or [])) for phase, gates in options]
    if len(checks) == 1:
        return checks[0][1]
    held = [check for _, check in checks if not check.mismatches]
    if held:
        return held[0]
    check = min((c for _, c in checks), key=lambda c: len(c.mismatches))
    compared = f" (table {into} is read by {phase_names(plan, [p for p, _ in checks])}: this state holds none " \
               "of their gates)"
    check.mismatches = [DriftFlag(**{**f, "message": f["message"] + compared}) for f in check.mismatches]
    return check


def _check(gates: list[Gate], retrieval: RetrievalState, step: int, history: list[RetrievalState]) -> ReadCheck:
    """One set of gates at a read. On a page that grounds none of them (a record's own page) they are judged on
    the latest visited state that grounds some (the list the page was reached from: a list read in the wrong state
    lists the wrong records); on a page that grounds some, as `graph.plan.judge.judged_here` says. A window is judged on
    the page read (it is its own). Gates naming one control are alternatives (`graph.plan.judge.settle`). "Its default:
    never set" is said only when no state visited shows the agent setting that control."""
    windows = [g for g in gates if g.kind == "window"]
    gates = [g for g in gates if g.kind != "window"]
    judged = [(v, "") for v in judged_here(gates, retrieval, history, applied=True)]  # as applied: docs/graph_checks.md
    if not judged and gates:
        source = next((s for s in reversed(history) if s is not retrieval and s["url"] != retrieval["url"]
                       and any(v.grounded for v in verdicts(gates, s))), None)
        if source is not None:
            reached = f" on {source['path']}, the list this page was reached from,"
            judged = [(v, reached) for v in verdicts(gates, source, applied=True)]
    windows_here = [(v, "") for v in verdicts(windows, retrieval, applied=True)]  # on the page read: its own
    check = ReadCheck()
    for verdict, where in [*windows_here, *zip(settle([v for v, _ in judged]), [w for _, w in judged], strict=True)]:
        gate = verdict.gate
        if verdict.status == "unresolved":
            if gate.kind != "window" and (not where or verdict.grounded):
                check.unresolved.append(f"{gate.name}={gate.target} ({verdict.evidence})")
        elif verdict.status == "clamped":
            check.clamps.append(f"{inline_data(verdict.label)} = {page_repr(verdict.value)}, not the plan's "
                                f"{str(gate.target)!r}: "
                                f"{verdict.evidence}")
        elif verdict.status == "mismatch":
            flag = DriftFlag(**plan_flag(verdict, retrieval, step), node="extractor")
            if gate.kind == "window":
                flag["message"] += " (read so: discard_rows these rows and read again)"
            else:  # said by the control's label, with where it was read and whether the agent ever set it
                bound = kept_default(gate, verdict.value, history, retrieval)  # by its binding (graph/plan/binding.py)
                never = not verdict.set_by_agent and last_set(history, verdict.key or "") is None
                kept = " (its default: never set)" if (never if bound is None else bound) else ""
                flag["label"], flag["message"] = verdict.label, (
                    f"{inline_data(verdict.label)} holds {page_repr(verdict.value)}{kept}{where} but the plan needs "
                    f"{verdict.needs_text()}{f' ({verdict.evidence})' if verdict.evidence else ''}: set it"
                    f"{' and apply it' if verdict.evidence else ''}, discard_rows these rows and read again")
            check.mismatches.append(flag)
    return check


def rejudged(plan: Plan | None, name: str, table: dict[str, Any], history: list[RetrievalState]
             ) -> dict[str, Any] | None:
    """An evidence table's rows with their read check done again under a revised plan, from the state snapshot
    each row keeps (with the controls' shapes as the site showed them, `graph.plan.judge.site_shapes`) and the states
    visited up to its read: the plan's flags of a row the revised plan holds are gone, those it now misses are
    raised; a loss flag (a gate set, then lost) stays. None when no row's flags change."""
    shapes = site_shapes(history)
    rows: list[dict[str, Any]] = []
    changed = False
    for row in table["rows"]:
        prov = row["provenance"]
        if not prov["state"]:
            rows.append(row)
            continue
        step = prov["step"]
        state = RetrievalState(url=prov["url"] or "", path=urlsplit(prov["url"] or "").path,
                               values=with_shapes(prov["state"], shapes), page=prov["page"], pages=prov["pages"],
                               result_count=None, step=step)
        check = check_read(plan, name, state, step, [s for s in history if s["step"] <= step])
        old = list(prov["drift"])
        drift = list(dict.fromkeys([*(f for f in old if f.split(":", 1)[0] not in PLAN_RULES),
                                    *(f"{f['rule']}:{f['gate']}" for f in check.mismatches)]))
        changed |= drift != old
        rows.append({**row, "provenance": {**prov, "drift": drift}})
    return {**table, "rows": rows} if changed else None


def rejudge_tables(plan: Plan, tables: dict[str, Any], history: list[RetrievalState]) -> dict[str, Any]:
    """The evidence tables whose rows' flags a revised plan changes (`rejudged`), by name."""
    return {name: table for name, old in tables.items() if not old["derived"]
            and (table := rejudged(plan, name, old, history)) is not None}


def read_drift(active: list[DriftFlag], check: ReadCheck) -> list[DriftFlag]:
    """The flags a read's rows carry: the active loss flags (a gate set, then lost) and the read's own verdicts.
    The tracker's plan flags between reads accept any phase's value, and a flag raised at an earlier read may be
    about another phase or a cause since fixed: each read is judged on its own phase's gates, here."""
    return [*(f for f in active if f["rule"] not in PLAN_RULES), *check.mismatches]
