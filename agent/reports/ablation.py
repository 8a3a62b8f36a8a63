"""The ablation table: each agent variant's metrics and its delta against the full agent (the variant
with nothing switched off), overall and per source family, for every model."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent.reports.faults import FAULT_HEADING, FaultRow, fault_cell, write_fault_report
from agent.reports.plots import PLOTS_DIR, plot_ablation_deltas
from agent.reports.summary import METRICS, group_stats, render_csv, scripted_models
from agent.rundir.atomic import write_json_atomic, write_text_atomic
from agent.rundir.cells import CellRecord, load_records
from agent.rundir.manifest import read_manifest


@dataclass
class AblationRow:
    model: str
    variant: str
    ablated: str
    family: str
    n: int
    metrics: dict[str, float]
    deltas: dict[str, float | None]
    replayed: bool = False  # its model replays walkthroughs (scripted): pipeline checks, not agent results


def full_variant(records: list[CellRecord]) -> str | None:
    """The reference: the variant with no node switched off ('full' wins a tie)."""
    candidates = sorted({r.variant for r in records if not r.outcome.ablated}, key=lambda v: (v != "full", v))
    return candidates[0] if candidates else None


def ablation_rows(records: list[CellRecord]) -> list[AblationRow]:
    rows: list[AblationRow] = []
    by_model: dict[str, list[CellRecord]] = defaultdict(list)
    for record in records:
        by_model[record.model].append(record)
    for model, model_records in sorted(by_model.items()):
        reference = full_variant(model_records)
        buckets: dict[tuple[str, str], list[CellRecord]] = defaultdict(list)
        for record in model_records:
            buckets[(record.variant, "all")].append(record)
            buckets[(record.variant, record.family or "unknown")].append(record)
        for (variant, family), group in sorted(buckets.items(), key=lambda kv: (kv[0][1] != "all", kv[0])):
            stats = group_stats("ablation", model, variant, family, group)
            metrics = {m: getattr(stats, m) for m in METRICS}
            base = buckets.get((reference, family)) if reference else None
            if base:
                base_stats = group_stats("ablation", model, reference or "", family, base)
                deltas: dict[str, float | None] = {m: metrics[m] - getattr(base_stats, m) for m in METRICS}
            else:
                deltas = dict.fromkeys(METRICS)
            rows.append(AblationRow(model, variant, ",".join(group[0].outcome.ablated) or "-", family, len(group),
                                    metrics, deltas))
    return rows


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.2f}"


REPLAY_HEADING = ("SCRIPTED REPLAYS, NOT AGENT RESULTS: the scripted model replays known solutions, so these "
                  "scores and deltas check the pipeline (which nodes run, what they catch), not what an LLM "
                  "agent gains from each node.")


def render_ablation_markdown(rows: list[AblationRow], scripted: set[str] | None = None,
                             faulty: set[str] | None = None) -> str:
    """`scripted`: models that replay walkthroughs; `faulty`: those of them that inject faults. Their rows are
    labelled and the table says so on top."""
    scripted, faulty = scripted or set(), faulty or set()
    replayed = sorted({r.model for r in rows} & scripted)
    injected = sorted({r.model for r in rows} & faulty)
    title = "# Ablation (scripted replays)" if replayed else "# Ablation"
    notes = [f"> **{REPLAY_HEADING}** Replayed: {', '.join(replayed)}.", ""] if replayed else []
    if injected:
        notes += [f"> **{FAULT_HEADING}** Fault-injected: {', '.join(injected)}; what each node caught: faults.md.", ""]
    lines = [title, "", *notes,
             "Metrics in %; delta = variant minus the full agent, in points.", "",
             "| Model | Variant | Switched off | Family | n | EM | Item-F1 | Row-F1 | P.O.A. | "
             "d EM | d Item-F1 | d Row-F1 | d P.O.A. |", "|" + "---|" * 13]
    for r in rows:
        lines.append(
            f"| {r.model}{_replay_label(r.model, scripted, faulty)} | {r.variant} | {r.ablated} | "
            f"{r.family} | {r.n} | "
            + " | ".join(f"{100 * r.metrics[m]:.2f}" for m in METRICS) + " | "
            + " | ".join(_signed(r.deltas[m]) for m in METRICS) + " |"
        )
    return "\n".join(lines) + "\n"


def _replay_label(model: str, scripted: set[str], faulty: set[str]) -> str:
    if model in faulty:
        return " (fault-injected replay)"
    return " (scripted replay)" if model in scripted else ""


def render_console_table(rows: list[AblationRow], faults: list[FaultRow]) -> str:
    """What `sgr ablate` prints: one table, a row per model and variant over all families (the per-family rows are in
    ablation.md, the per-class fault figures in faults.md), with each variant's fault figures beside its metrics."""
    by_variant = {(f.model, f.variant): f for f in faults if f.fault == "all"}
    scripted = {r.model for r in rows if r.replayed}
    faulty = {f.model for f in faults if f.injected}
    lines = ["| Model | Variant | Switched off | n | EM | d EM | Item-F1 | d Item-F1 | Faults flagged | EM under faults |",
             "|" + "---|" * 10]
    for r in (r for r in rows if r.family == "all"):
        fault = by_variant.get((r.model, r.variant))
        flagged = f"{fault.flagged}/{fault.injected}" if fault and fault.injected else "-"
        under = f"{100 * fault.em:.1f}" if fault and fault.injected else "-"
        lines.append(f"| {r.model}{_replay_label(r.model, scripted, faulty)} | {r.variant} | {r.ablated} | {r.n} | {100 * r.metrics['em']:.1f} | "
                     f"{_signed(r.deltas['em'])} | {100 * r.metrics['item_f1']:.1f} | {_signed(r.deltas['item_f1'])} | "
                     f"{flagged} | {under} |")
    return "\n".join(lines) + "\n"


def write_ablation(run_dir: Path, records: list[CellRecord] | None = None) -> list[AblationRow]:
    records = load_records(run_dir) if records is None else records
    rows = ablation_rows(records)
    run_dir = Path(run_dir)
    flat: list[dict[str, Any]] = [
        {"model": r.model, "variant": r.variant, "ablated": r.ablated, "family": r.family, "n": r.n,
         **{m: round(r.metrics[m], 6) for m in METRICS},
         **{f"delta_{m}": None if r.deltas[m] is None else round(r.deltas[m], 6) for m in METRICS}}
        for r in rows
    ]
    scripted = scripted_models(read_manifest(run_dir), records)
    rows = [replace(r, replayed=r.model in scripted) for r in rows]
    faulty = {c.model for c in (fault_cell(run_dir, r) for r in records) if c is not None}
    for row in flat:
        row["scripted_replay"] = row["model"] in scripted
        row["fault_injected_replay"] = row["model"] in faulty
    write_text_atomic(run_dir / "ablation.md", render_ablation_markdown(rows, scripted, faulty))
    write_fault_report(run_dir, records)
    write_text_atomic(run_dir / "ablation.csv", render_csv(flat))
    write_json_atomic(run_dir / "ablation.json", flat)
    overall = {f"{r.model}{_replay_label(r.model, scripted, faulty)} / {r.variant}":
               {m: v for m, v in r.deltas.items() if v is not None}
               for r in rows if r.family == "all" and r.ablated != "-"}
    plot_ablation_deltas(overall, run_dir / PLOTS_DIR / "ablation_deltas.png", replays=bool(scripted | faulty))
    return rows
