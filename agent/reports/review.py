"""Failure review on a benchmark run folder: `eval.review`'s templates, prefilled with trace evidence.

`eval.review` knows the audit protocol (six classes, validation, shares) and reads `cells/**/cell.json`;
it cannot read traces (the evaluator stays pure). This module adds what the runner recorded, so a
reviewer starts from evidence instead of raw logs: the first state divergence from the agent's plan,
the drift flags and the verifier reports. The prefill is plain text in `key_trace_evidence` (the
reviewer edits it), and the template stays valid for `eval.review.summarize_reviews`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from agent.rundir.atomic import write_text_atomic
from agent.rundir.evidence import EVIDENCE_FILE, read_evidence
from eval.review import init_reviews
from graph.plan.values import gate_key, values_match

MAX_LINES = 12


def _load_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _value(recorded: Any) -> str | None:
    """A recorded gate value as text: snapshots hold either the value or its record (`{"value": ...}`)."""
    if isinstance(recorded, dict):
        recorded = recorded.get("value")
    if isinstance(recorded, list):
        return ", ".join(str(v) for v in recorded)
    return None if recorded is None else str(recorded)


def first_divergence(retrieval: dict[str, Any]) -> str:
    """The earliest visited state where a required plan gate was set to something else, or lost after
    having been right; else the earliest rows read in a state that lacked it."""
    plan = retrieval.get("plan") or {}
    gates = [g for g in plan.get("gates", []) if g.get("required", True)]
    if not plan:
        return "no plan recorded (planner ablated or never ran)"
    if not gates:
        return "the plan names no required gate"
    reached: set[str] = set()
    for state in sorted(retrieval.get("visited") or [], key=lambda s: s.get("step", 0)):
        values = state.get("values") or {}
        for gate in gates:
            key = gate_key(gate["name"])
            wanted = _value(gate["target"])
            current = values.get(key) or {}
            actual = _value(current)
            current = current if isinstance(current, dict) else {}
            if values_match(actual, wanted):
                reached.add(key)
            elif key in reached:
                return (f"step {state.get('step')}: gate '{gate['name']}' lost (plan '{wanted}', now "
                        f"'{actual or '-'}') at {state.get('url', '')}")
            elif actual and current.get("set_at_step") is not None:
                return (f"step {state.get('step')}: gate '{gate['name']}' set to '{actual}', plan says "
                        f"'{wanted}' at {state.get('url', '')}")
    for row in retrieval.get("rows") or []:
        provenance = row.get("provenance") or {}
        snapshot = provenance.get("state") or {}
        missing = [g["name"] for g in gates
                   if not values_match(_value(snapshot.get(gate_key(g["name"]))), _value(g["target"]))]
        if snapshot and missing:
            return f"step {provenance.get('step')}: rows read without gate(s) {missing} at plan values"
    return "no divergence from the plan in the visited states"


def trace_evidence(cell_folder: Path) -> str:
    """Plain text for the reviewer: divergence, drift flags, verifier reports, stop reason and error."""
    evidence = read_evidence(cell_folder)
    retrieval = evidence.model_dump() if evidence else {}
    cell = _load_json(cell_folder / "cell.json")
    outcome = cell.get("outcome") or {}
    lines = [f"[prefilled from the trace; edit] first divergence from the plan: {first_divergence(retrieval)}"]
    drift = outcome.get("drift_flags") or []
    for flag in drift[:MAX_LINES]:
        lines.append(f"drift step {flag.get('step')}: {flag.get('rule')} gate={flag.get('gate')} "
                     f"before={flag.get('before')} after={flag.get('after')}")
    if len(drift) > MAX_LINES:
        lines.append(f"... {len(drift) - MAX_LINES} more drift flags in the outcome")
    for report in (outcome.get("verifier_reports") or [])[:MAX_LINES]:
        failures = "; ".join(f"{f.get('check')}: {f.get('message')}" for f in report.get("failures", []))
        lines.append(f"verifier step {report.get('step')}: {'ok' if report.get('ok') else 'FAILED ' + failures}")
    lines.append(f"stop reason: {outcome.get('stop_reason', '?')}; steps: {outcome.get('steps', '?')}")
    if outcome.get("error"):
        lines.append(f"error ({outcome.get('error_kind')}): {str(outcome['error'])[:500]}")
    if evidence is None:
        lines.append(f"no {EVIDENCE_FILE} in this cell (the agent did not finish writing it)")
    return "\n".join(lines)


def prefill(path: Path, cell_folder: Path) -> None:
    """Fill `key_trace_evidence` of a fresh template, keeping its header comments."""
    text = path.read_text(encoding="utf-8")
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    body = yaml.safe_load(text)
    if body.get("key_trace_evidence"):
        return
    body["key_trace_evidence"] = trace_evidence(cell_folder)
    write_text_atomic(path, header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=110))


def init_run_reviews(run_dir: Path) -> tuple[list[Path], list[Path]]:
    """`eval.review.init_reviews`, then trace prefill for each new template of a `sgr bench` folder."""
    written, kept = init_reviews(run_dir)
    for path in written:
        body = yaml.safe_load(path.read_text(encoding="utf-8"))
        artifacts = Path((body.get("context") or {}).get("artifacts", ""))
        if (artifacts / "cell.json").is_file():
            prefill(path, artifacts)
    return written, kept
