"""The fault table: what the state-tracking nodes catch when the faulty policy makes the paper's mistakes.

Reads a run folder only. Faulty cells are those with `fault.json` (written by `agent.measuring.faulty`); clean cells
are the scripted replays of the same run. An *alarm* is anything the graph raises that asks for action: a
drift flag (state tracker) or a failing verifier report. For each injected fault: was it flagged after the
injection and before the answer was submitted (by which node), was it repaired (flagged, and the final
answer exact), and the final EM and item-F1. For clean runs: false alarms (any alarm at all). Every figure
is a FAULT-INJECTED REPLAY: a scripted policy stands in for a model that follows feedback.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent.measuring.fault_classes import FAULT_CLASSES, FAULT_DESCRIPTIONS, FAULT_FILE, FAULT_OWNERS
from agent.reports.summary import render_csv
from agent.rundir.atomic import write_json_atomic, write_text_atomic
from agent.rundir.cells import CellRecord, cell_dir, load_records
from graph.events import ActorEvent, read_events

FAULT_LABEL = "FAULT-INJECTED REPLAYS"
FAULT_HEADING = (f"{FAULT_LABEL}, NOT MODEL RESULTS: a scripted policy replays each task's known solution with one "
                 "seeded mistake from the paper's taxonomy and then follows the graph's feedback (drift flags, "
                 "verifier repair goals) as a model that follows feedback would. The figures say what each node "
                 "catches and what such an agent recovers, not how well an LLM does.")


@dataclass
class FaultCell:
    """One faulty cell as the table counts it."""

    model: str
    variant: str
    ablated: str
    task_id: str
    fault: str
    injected: bool
    injected_at: int | None  # the graph step of the first action after the mistake was made
    by_tracker: bool
    by_verifier: bool
    em: float
    item_f1: float
    detail: str

    @property
    def flagged(self) -> bool:
        return self.by_tracker or self.by_verifier

    @property
    def repaired(self) -> bool:
        return self.flagged and self.em == 1.0


def _actor_calls(folder: Path) -> list[tuple[int, dict[str, Any]]]:
    """(graph step, the policy's note on the call) of each actor tool call, in order (unreadable lines skipped:
    the timeline lists them)."""
    path = folder / "steps.jsonl"
    if not path.is_file():
        return []
    events, _ = read_events(path)
    return [(int(e.step or 0), e.note or {}) for e in events if isinstance(e, ActorEvent) and e.tool is not None]


def injection_step(calls: list[tuple[int, dict[str, Any]]], walkthrough_step: int, call: int) -> int:
    """The graph step of the first action after the mistake, from the policy's notes in the trace: the first call
    noted as the fault at that walkthrough step, else (a skipped step) the first walkthrough call past it; the
    policy's own call count only when the trace has no notes."""
    for step, note in calls:
        if note.get("kind") == "fault" and note.get("step") == walkthrough_step:
            return step
    for step, note in calls:
        if note.get("kind") == "walkthrough" and isinstance(note.get("step"), int) and note["step"] > walkthrough_step:
            return step
    steps = [step for step, _ in calls]
    return steps[call] if call < len(steps) else (steps[-1] + 1 if steps else 0)


def alarms_after(record: CellRecord, step: int) -> tuple[bool, bool]:
    """(a drift flag raised at or after `step`, a verifier report failing at or after it)."""
    tracker = any(int(f.get("step") or 0) >= step for f in record.outcome.drift_flags)
    verifier = any(not r.get("ok", True) and int(r.get("step") or 0) >= step for r in record.outcome.verifier_reports)
    return tracker, verifier


def fault_cell(run_dir: Path, record: CellRecord) -> FaultCell | None:
    return fault_in_folder(cell_dir(run_dir, record.key), record)


def fault_in_folder(folder: Path, record: CellRecord) -> FaultCell | None:
    """The fault verdict of one run folder (a bench cell, or `sgr run`'s folder); None without `fault.json`."""
    path = folder / FAULT_FILE
    if not path.is_file():
        return None
    fault = json.loads(path.read_text(encoding="utf-8"))
    at = None
    if fault.get("injected"):
        at = injection_step(_actor_calls(folder), int(fault.get("walkthrough_step") or 0), int(fault.get("call") or 0))
    tracker, verifier = alarms_after(record, at) if at is not None else (False, False)
    return FaultCell(model=record.model, variant=record.variant, ablated=",".join(record.outcome.ablated) or "-",
                     task_id=record.task_id, fault=fault.get("fault") or "none", injected=bool(fault.get("injected")),
                     injected_at=at, by_tracker=tracker, by_verifier=verifier,
                     em=float(record.metrics.get("em") or 0.0), item_f1=float(record.metrics.get("item_f1") or 0.0),
                     detail=fault.get("detail") or fault.get("why_not") or "")


@dataclass
class FaultRow:
    model: str
    variant: str
    ablated: str
    fault: str
    owned: bool  # one of the nodes switched off in this variant owns this class
    injected: int
    not_injected: int
    flagged: int
    by_tracker: int
    by_verifier: int
    repaired: int
    em: float
    item_f1: float


@dataclass
class CleanRow:
    model: str
    variant: str
    ablated: str
    n: int
    false_alarms: int
    em: float
    item_f1: float


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def fault_rows(cells: list[FaultCell]) -> list[FaultRow]:
    groups: dict[tuple[str, str, str], list[FaultCell]] = defaultdict(list)
    for cell in cells:
        if cell.fault == "none":  # the walkthrough offers no place for any class: counted apart
            continue
        groups[(cell.model, cell.variant, cell.fault)].append(cell)
        groups[(cell.model, cell.variant, "all")].append(cell)
    order = {name: n for n, name in enumerate((*FAULT_CLASSES, "none", "all"))}
    rows = []
    for (model, variant, fault), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                                  order.get(kv[0][2], 99))):
        done = [c for c in group if c.injected]
        ablated = group[0].ablated
        rows.append(FaultRow(
            model=model, variant=variant, ablated=ablated, fault=fault,
            owned=any(node in FAULT_OWNERS.get(fault, ()) for node in ablated.split(",")),
            injected=len(done), not_injected=len(group) - len(done), flagged=sum(c.flagged for c in done),
            by_tracker=sum(c.by_tracker for c in done), by_verifier=sum(c.by_verifier for c in done),
            repaired=sum(c.repaired for c in done), em=_mean([c.em for c in done]),
            item_f1=_mean([c.item_f1 for c in done])))
    return rows


def clean_rows(run_dir: Path, records: list[CellRecord]) -> list[CleanRow]:
    groups: dict[tuple[str, str], list[CellRecord]] = defaultdict(list)
    for record in records:
        if not (cell_dir(run_dir, record.key) / FAULT_FILE).is_file():
            groups[(record.model, record.variant)].append(record)
    return [CleanRow(model=model, variant=variant, ablated=",".join(group[0].outcome.ablated) or "-", n=len(group),
                     false_alarms=sum(any(alarms_after(r, 0)) for r in group),
                     em=_mean([float(r.metrics.get("em") or 0.0) for r in group]),
                     item_f1=_mean([float(r.metrics.get("item_f1") or 0.0) for r in group]))
            for (model, variant), group in sorted(groups.items())]


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def targets(rows: list[FaultRow], clean: list[CleanRow]) -> list[str]:
    """The issue's "done when" checks on the full agent (the variant with nothing switched off)."""
    lines = []
    for row in (r for r in rows if r.fault == "all" and r.ablated == "-"):
        base = next((c for c in clean if c.ablated == "-"), None)
        flag_rate = row.flagged / row.injected if row.injected else 0.0
        lines.append(f"- {row.model} / {row.variant}: faults flagged before submit {_pct(row.flagged, row.injected)} "
                     f"(target >= 95%: {'met' if flag_rate >= 0.95 else 'MISSED'})")
        if base and base.em:
            ratio = row.em / base.em
            lines.append(f"- EM under faults {100 * row.em:.1f}% vs clean {100 * base.em:.1f}% = {100 * ratio:.0f}% "
                         f"of clean (target >= 90%: {'met' if ratio >= 0.9 else 'MISSED'})")
        kept = next((r for r in rows if r.model == row.model and r.variant == row.variant
                     and r.fault == "kept_default"), None)
        if kept and kept.injected:
            lines.append(f"- a kept default caught in {_pct(kept.flagged, kept.injected)} of injections (target 100%: "
                         f"{'met' if kept.flagged == kept.injected else 'MISSED'})")
    for row in (c for c in clean if c.ablated == "-"):
        lines.append(f"- false alarms on clean runs ({row.model} / {row.variant}): {row.false_alarms} of {row.n} "
                     f"(target 0: {'met' if row.false_alarms == 0 else 'MISSED'})")
    return lines


def render_fault_markdown(rows: list[FaultRow], clean: list[CleanRow], cells: list[FaultCell]) -> str:
    lines = [f"# Fault table ({FAULT_LABEL})", "", f"> **{FAULT_HEADING}**", "",
             "Flagged = a drift flag (the state tracker's, or the extractor's check of the tracked state at a read) or a "
             "failing verifier report after the mistake, before the answer was submitted; no-op = the class's every "
             "place was already right on the page (e.g. one result page only), so nothing was injected; repaired = flagged and the final answer exact. `*` = a node switched off in this "
             "variant owns the class.", "", "## Targets (full agent)", "", *targets(rows, clean), "",
             "## Per fault class", "",
             "| Model | Variant | Switched off | Fault | Injected | Flagged | by tracker | by verifier | Repaired | "
             "EM | Item-F1 |", "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r.model} | {r.variant} | {r.ablated} | {r.fault}{' *' if r.owned else ''} | {r.injected}"
                     + (f" (+{r.not_injected} no-op)" if r.not_injected else "")
                     + f" | {_pct(r.flagged, r.injected)} | {r.by_tracker} | {r.by_verifier} | {r.repaired} | "
                       f"{100 * r.em:.1f} | {100 * r.item_f1:.1f} |")
    variants = list(dict.fromkeys((r.model, r.variant) for r in rows))
    classes = [f for f in FAULT_CLASSES if any(r.fault == f and r.injected for r in rows)]
    if len(variants) > 1 and classes:
        lines += ["", "## Flagged / EM by variant (%)", "",
                  "| Model / variant | " + " | ".join(classes) + " | all |", "|" + "---|" * (len(classes) + 2)]
        by_key = {(r.model, r.variant, r.fault): r for r in rows}
        for model, variant in variants:
            cells_text = []
            for fault in [*classes, "all"]:
                row = by_key.get((model, variant, fault))
                cells_text.append("-" if not row or not row.injected else
                                  f"{100 * row.flagged / row.injected:.0f} / {100 * row.em:.0f}"
                                  + (" *" if row.owned else ""))
            lines.append(f"| {model} / {variant} | " + " | ".join(cells_text) + " |")
    if clean:
        lines += ["", "## Clean replays (no fault injected)", "",
                  "| Model | Variant | Switched off | n | False alarms | EM | Item-F1 |", "|" + "---|" * 7]
        lines += [f"| {c.model} | {c.variant} | {c.ablated} | {c.n} | {c.false_alarms} | {100 * c.em:.1f} | "
                  f"{100 * c.item_f1:.1f} |" for c in clean]
    placeless = sorted({c.task_id for c in cells if c.fault == "none"})
    if placeless:
        lines += ["", f"Records whose walkthrough offers no place for any fault class (run, not counted): "
                      f"{', '.join(placeless)}."]
    missed = [c for c in cells if c.injected and not c.flagged and c.ablated == "-"]
    if missed:
        lines += ["", "## Not flagged by the full agent", "",
                  "EM 100 on a missed fault means the mistake did no harm: what the policy left or set (a kept "
                  "default, a skipped control) happened to give the right answer on this task, so no node had "
                  "anything to flag. EM below 100 is a real miss.", "",
                  "| Task | Fault | What was done | EM | Verdict |", "|---|---|---|---|---|"]
        lines += [f"| {c.task_id} | {c.fault} | {c.detail} | {100 * c.em:.0f} | "
                  f"{'harmless: the answer stayed exact' if c.em == 1.0 else 'MISSED: the answer is wrong'} |"
                  for c in missed]
    lines += ["", "## Fault classes", "", *[f"- `{f}`: {FAULT_DESCRIPTIONS[f]} (owned by {', '.join(FAULT_OWNERS[f])})"
                                           for f in FAULT_CLASSES]]
    return "\n".join(lines) + "\n"


def write_fault_report(run_dir: Path, records: list[CellRecord] | None = None) -> list[FaultRow]:
    """`faults.md`, `faults.csv`, `faults.json` when the run has faulty cells; nothing otherwise."""
    run_dir = Path(run_dir)
    records = load_records(run_dir) if records is None else records
    cells = [c for c in (fault_cell(run_dir, r) for r in records) if c is not None]
    if not cells:
        return []
    rows = fault_rows(cells)
    clean = clean_rows(run_dir, records)
    write_text_atomic(run_dir / "faults.md", render_fault_markdown(rows, clean, cells))
    flat: list[dict[str, Any]] = [{"label": FAULT_LABEL, **asdict(r)} for r in rows]
    write_text_atomic(run_dir / "faults.csv", render_csv(flat))
    write_json_atomic(run_dir / "faults.json", {
        "label": FAULT_LABEL, "note": FAULT_HEADING, "rows": flat,
        "clean": [{"label": FAULT_LABEL, **asdict(c)} for c in clean],
        "cells": [{**asdict(c), "flagged": c.flagged, "repaired": c.repaired} for c in cells],
    })
    return rows


def read_fault_rows(run_dir: Path) -> list[FaultRow]:
    """The rows `write_fault_report` wrote to faults.json ([] without one)."""
    path = Path(run_dir) / "faults.json"
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    names = set(FaultRow.__dataclass_fields__)
    return [FaultRow(**{k: v for k, v in row.items() if k in names}) for row in data.get("rows", [])]


def describe_fault(cell: FaultCell, record: CellRecord, seed: int | None = None) -> list[str]:
    """What `sgr run --model faulty:SEED` says on the console: which fault was injected (or why none could be),
    whether it was flagged before the answer was submitted and by which node, and whether it was repaired."""
    head = f"FAULT-INJECTED REPLAY{f' (seed {seed})' if seed is not None else ''}: {cell.fault}"
    about = FAULT_DESCRIPTIONS.get(cell.fault, "")
    if not cell.injected:
        return [f"{head} ({about}) was not injected: {cell.detail or 'no place for it in this task'}; "
                "this run is a clean replay"]
    at = cell.injected_at or 0
    nodes = []
    if cell.by_tracker:
        flags = sorted({":".join(str(f[k]) for k in ("rule", "gate") if f.get(k)) for f in record.outcome.drift_flags
                        if int(f.get("step") or 0) >= at})
        nodes.append(f"the state tracker (drift {', '.join(flags)})")
    if cell.by_verifier:
        checks = sorted({str(f.get("check")) for r in record.outcome.verifier_reports
                         if not r.get("ok", True) and int(r.get("step") or 0) >= at
                         for f in r.get("failures") or [] if isinstance(f, dict)})
        nodes.append(f"the verifier ({', '.join(f'[{c}]' for c in checks) or 'failed report'})")
    flagged = f"yes, by {' and '.join(nodes)}" if nodes else "NO (no drift flag or failing verifier report after it)"
    repaired = ("yes (flagged, and the final answer is exact)" if cell.repaired else
                f"no (EM {cell.em:.0f}, item-F1 {100 * cell.item_f1:.1f})")
    return [f"{head} ({about}) injected at step {at}: {cell.detail}",
            f"  flagged before the answer: {flagged}",
            f"  repaired: {repaired}"]
