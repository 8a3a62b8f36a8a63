"""The paper's views of a run: `summary.md/.csv/.json` (+ `cells.csv`, one row per cell).

Metrics are macro averages over tasks (each task counts once), as in the paper's tables: EM, item-F1,
row-F1, P.O.A., the item-F1 minus row-F1 gap, and per-task tokens, cost, wall time and steps.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent.clients.resolve import FAULTY_MODEL, SCRIPTED_MODEL
from agent.rundir.atomic import write_json_atomic, write_text_atomic
from agent.rundir.cells import METRICS, CellRecord, load_records
from agent.rundir.manifest import read_manifest

METRIC_LABELS = {"em": "EM", "item_f1": "Item-F1", "row_f1": "Row-F1", "poa": "P.O.A.",
                 "item_row_gap": "Item-Row gap"}


@dataclass
class GroupStats:
    view: str
    model: str
    variant: str
    group: str
    n: int
    failed: int
    parse_failures: int
    em: float
    item_f1: float
    row_f1: float
    poa: float
    item_row_gap: float
    tokens_per_task: float
    cost_per_task_usd: float
    cost_total_usd: float
    wall_seconds_per_task: float
    steps_per_task: float


def _mean(values: Iterable[float | None]) -> float:
    """Macro mean over the values present: parse failures (None) are counted apart, never as zero."""
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else 0.0


def group_stats(view: str, model: str, variant: str, group: str, records: list[CellRecord]) -> GroupStats:
    metric = {m: _mean(r.metrics.get(m) for r in records) for m in METRICS}
    return GroupStats(
        view=view, model=model, variant=variant, group=group, n=len(records),
        failed=sum(r.failed for r in records), parse_failures=sum(r.parse_failure for r in records), **metric,
        item_row_gap=metric["item_f1"] - metric["row_f1"],
        tokens_per_task=_mean(r.outcome.prompt_tokens + r.outcome.completion_tokens for r in records),
        cost_per_task_usd=_mean(r.outcome.cost_usd for r in records),
        cost_total_usd=sum(r.outcome.cost_usd for r in records),
        wall_seconds_per_task=_mean(r.outcome.wall_seconds for r in records),
        steps_per_task=_mean(r.outcome.steps for r in records),
    )


def _grouped(records: list[CellRecord], view: str, group_of: Callable[[CellRecord], str]) -> list[GroupStats]:
    buckets: dict[tuple[str, str, str], list[CellRecord]] = defaultdict(list)
    for record in records:
        buckets[(record.model, record.variant, group_of(record) or "unknown")].append(record)
    return [group_stats(view, m, v, g, rs) for (m, v, g), rs in sorted(buckets.items())]


@dataclass
class RunSummary:
    run_dir: Path
    notices: list[str]
    planned: int | None
    finished: int
    overall: list[GroupStats]
    by_family: list[GroupStats]
    by_split: list[GroupStats]
    by_shape: list[GroupStats]  # copy vs derived answers, where the records say (the offline suite does)
    stop_reasons: dict[str, dict[str, int]]
    scripted: bool
    scoring: str = "ours"  # the evaluator's mode (docs/evaluator.md), as the cells record it
    replays: list[str] = field(default_factory=list)  # models that replay walkthroughs: labelled on every row

    def label(self, model: str) -> str:
        """A model's name as the tables show it: a replay says so on its own row, never only in a banner."""
        return f"{model} (REPLAY)" if model in self.replays else model

    def views(self) -> list[GroupStats]:
        return [*self.overall, *self.by_family, *self.by_split, *self.by_shape]


def scripted_models(manifest: dict[str, Any] | None, records: list[CellRecord]) -> set[str]:
    """Models in these records that replay walkthroughs (the stand-in, or declared scripted in the config)."""
    declared = {m.get("name") for m in (manifest or {}).get("config", {}).get("models", [])
                if m.get("provider") in ("scripted", "faulty")}
    return {r.model for r in records} & (declared | {SCRIPTED_MODEL.name, FAULTY_MODEL.name})


def summarize(run_dir: Path, records: list[CellRecord] | None = None) -> RunSummary:
    records = load_records(run_dir) if records is None else records
    manifest = read_manifest(run_dir)
    sessions = (manifest or {}).get("sessions", [])
    stops: dict[str, Counter[str]] = defaultdict(Counter)
    for record in records:
        stops[f"{record.model} / {record.variant}"][record.outcome.stop_reason] += 1
    scripted = scripted_models(manifest, records)
    notices = list((manifest or {}).get("notices", []))
    if scripted and not any("SCRIPTED" in n for n in notices):
        notices.insert(0, f"SCRIPTED WALKTHROUGH model ({', '.join(sorted(scripted))}): these scores test the "
                          "pipeline end to end, not an LLM.")
    return RunSummary(
        run_dir=Path(run_dir), notices=notices, planned=sessions[-1]["cells_planned"] if sessions else None,
        finished=len(records),
        overall=_grouped(records, "overall", lambda r: "all"),
        by_family=_grouped(records, "family", lambda r: r.family),
        by_split=_grouped(records, "split", lambda r: r.split),
        by_shape=_grouped(records, "shape", lambda r: r.shape) if any(r.shape for r in records) else [],
        stop_reasons={k: dict(sorted(v.items())) for k, v in sorted(stops.items())},
        scripted=bool(scripted),
        scoring=" + ".join(sorted({str(r.score.get("mode", "ours")) for r in records})) or "ours",
        replays=sorted(scripted),
    )


def finished_text(summary: RunSummary) -> str:
    """'Cells finished: N of M planned.', or, when the folder holds more than the last session planned (a
    `--limit` run after a full one), both counts said apart instead of 'N of fewer'."""
    if summary.planned is None or summary.finished <= summary.planned:
        planned = f" of {summary.planned} planned" if summary.planned is not None else ""
        return f"Cells finished: {summary.finished}{planned}."
    return f"Cells finished: {summary.finished} in this folder (the last session planned {summary.planned})."


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def _table(rows: list[GroupStats], group_title: str | None, label: Callable[[str], str] = str) -> list[str]:
    head = ["Model", "Variant", *([group_title] if group_title else []), "n", "EM", "Item-F1", "Row-F1",
            "P.O.A.", "Item-Row gap", "Parse failures", "Failed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [label(r.model), r.variant, *([r.group] if group_title else []), str(r.n), _pct(r.em), _pct(r.item_f1),
                 _pct(r.row_f1), _pct(r.poa), _pct(r.item_row_gap), str(r.parse_failures), str(r.failed)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _cost_table(rows: list[GroupStats], label: Callable[[str], str] = str) -> list[str]:
    lines = ["| Model | Variant | Tokens/task | Cost/task (USD) | Cost total (USD) | Wall s/task | Steps/task |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {label(r.model)} | {r.variant} | {r.tokens_per_task:,.0f} | {r.cost_per_task_usd:.4f} | "
                     f"{r.cost_total_usd:.4f} | {r.wall_seconds_per_task:.1f} | {r.steps_per_task:.1f} |")
    return lines


def render_markdown(summary: RunSummary) -> str:
    lines = [f"# SGR-Bench run: {summary.run_dir.name}", ""]
    lines += [f"> **{notice}**" for notice in summary.notices] + ([""] if summary.notices else [])
    lines += [f"{finished_text(summary)} Metrics in %, macro-averaged over tasks.", ""]
    lines += ["Failed cells (the run ended in an error: infra, config, bug, timeout) have no answer: they score 0 "
              "on every metric and are counted in the Failed column; an explicit NONE after a run that ended "
              "normally is an answer.", ""]
    lines += [f"Scoring mode: {summary.scoring} (ours: the project's definitions; authors: as the SGR-Bench "
              "authors' scorer; differences in docs/evaluator.md).", ""]
    lines += ["## Overall (per model and variant)", "", *_table(summary.overall, None, summary.label), ""]
    lines += ["## By source family", "", *_table(summary.by_family, "Family", summary.label), ""]
    lines += ["## Goal vs constraint", "", *_table(summary.by_split, "Split", summary.label), ""]
    if summary.by_shape:
        lines += ["## Task shape (copy: answer cells are page cells; derived: selected, joined, computed)", "",
                  *_table(summary.by_shape, "Shape", summary.label), ""]
    lines += ["## Tokens, cost, time, steps (per task)", "", *_cost_table(summary.overall, summary.label), ""]
    lines += ["## Stop reasons", "", "| Model / variant | Stop reason | Tasks |", "|---|---|---|"]
    for series, counts in summary.stop_reasons.items():
        lines += [f"| {series} | {reason} | {count} |" for reason, count in counts.items()]
    return "\n".join(lines) + "\n"


def render_csv(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()


def cell_rows(records: list[CellRecord]) -> list[dict[str, Any]]:
    return [
        {"model": r.model, "variant": r.variant, "task_id": r.task_id, "base_id": r.base_id, "split": r.split,
         "family": r.family, "domain": r.domain, **{m: None if r.metrics.get(m) is None else round(r.metrics[m], 6) for m in METRICS},
         "stop_reason": r.outcome.stop_reason, "error_kind": r.outcome.error_kind or "", "timed_out": r.timed_out,
         "retries": len(r.attempts), "steps": r.outcome.steps,
         "tokens": r.outcome.prompt_tokens + r.outcome.completion_tokens, "cost_usd": r.outcome.cost_usd,
         "wall_seconds": r.outcome.wall_seconds}
        for r in records
    ]


def write_summary(run_dir: Path, records: list[CellRecord] | None = None) -> RunSummary:
    records = load_records(run_dir) if records is None else records
    summary = summarize(run_dir, records)
    run_dir = Path(run_dir)
    write_text_atomic(run_dir / "summary.md", render_markdown(summary))
    write_text_atomic(run_dir / "summary.csv", render_csv([_rounded(asdict(r)) for r in summary.views()]))
    write_text_atomic(run_dir / "cells.csv", render_csv(cell_rows(records)))
    write_json_atomic(run_dir / "summary.json", {
        "notices": summary.notices, "scripted": summary.scripted, "replays": summary.replays,
        "scoring": summary.scoring, "planned": summary.planned,
        "failed_cells": "no answer: scored 0 on every metric, counted in `failed` (eval.score.no_answer)",
        "finished": summary.finished,
        "overall": [_rounded(asdict(r)) for r in summary.overall],
        "by_family": [_rounded(asdict(r)) for r in summary.by_family],
        "by_shape": [_rounded(asdict(r)) for r in summary.by_shape],
        "by_split": [_rounded(asdict(r)) for r in summary.by_split],
        "stop_reasons": summary.stop_reasons,
    })
    return summary


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}


def load_summary_json(run_dir: Path) -> dict[str, Any]:
    return json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
