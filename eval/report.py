"""Write an Aggregate as Markdown, CSV, JSON and a PNG bar chart (item-F1 and row-F1 by family)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402

from eval.aggregate import Aggregate, GroupStats, ScoredRecord  # noqa: E402

SCORING_MODES = {
    "ours": "the project's definitions; differences from the authors' scorer: docs/evaluator.md",
    "authors": "`--compat authors`: the SGR-Bench authors' scorer, reimplemented in eval/compat",
}
METRIC_COLUMNS = ("item_f1", "row_f1", "poa", "exact_match")
COUNT_COLUMNS = ("n_tasks", "n_scored", "n_parse_failures", "n_errors", "n_missing")
CSV_COLUMNS = (
    "dimension",
    "group",
    *COUNT_COLUMNS,
    *METRIC_COLUMNS,
    "item_f1_failures_as_zero",
    "row_f1_failures_as_zero",
)


def write_reports(
    aggregate: Aggregate, out_dir: Path, scored: list[ScoredRecord] | None = None
) -> list[Path]:
    """All report files into `out_dir`; per-task rows too when the scored records are given."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [
        _write(out_dir / "summary.md", render_markdown(aggregate)),
        _write(out_dir / "summary.json", aggregate.model_dump_json(indent=2)),
        _write_csv(out_dir / "summary.csv", _all_groups(aggregate)),
    ]
    chart = plot_by_family(aggregate, out_dir / "f1_by_family.png")
    if chart is not None:
        written.append(chart)
    if scored is not None:
        written.append(_write_task_csv(out_dir / "tasks.csv", scored))
    return written


def _all_groups(aggregate: Aggregate) -> list[GroupStats]:
    return [aggregate.overall] + [stats for groups in aggregate.by.values() for stats in groups]


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def render_markdown(aggregate: Aggregate) -> str:
    lines = [
        "# Scores",
        "",
        f"Scoring mode: **{aggregate.scoring}** ({SCORING_MODES.get(aggregate.scoring, 'mixed modes')}).",
        "",
        "Macro means over task records, in percent; parse failures are unscored.",
        "",
    ]
    for title, groups in [("Overall", [aggregate.overall])] + [
        (f"By {d}", g) for d, g in aggregate.by.items()
    ]:
        lines += [
            f"## {title}",
            "",
            "| group | tasks | scored | parse failures | item-F1 | row-F1 | P.O.A. | EM |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {s.group} | {s.n_tasks} | {s.n_scored} | {s.n_parse_failures} | {_percent(s.item_f1)} | "
            f"{_percent(s.row_f1)} | {_percent(s.poa)} | {_percent(s.exact_match)} |"
            for s in groups
        ]
        lines.append("")
    for title, items in (
        ("Parse failures", aggregate.parse_failures),
        ("Missing predictions", aggregate.missing_predictions),
    ):
        if items:
            lines += [f"## {title}", "", *[f"- {item}" for item in items], ""]
    if aggregate.errors:
        lines += ["## Not scored (errors)", "", *[f"- {k}: {v}" for k, v in aggregate.errors.items()], ""]
    return "\n".join(lines)


def plot_by_family(aggregate: Aggregate, path: Path) -> Path | None:
    """Grouped bars of item-F1 and row-F1 per source family; None when there is nothing to plot."""
    groups = [g for g in aggregate.by.get("family", []) if g.item_f1 is not None]
    if not groups:
        return None
    positions = range(len(groups))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(groups)), 4.0))
    try:
        width = 0.38
        ax.bar(
            [p - width / 2 for p in positions],
            [100 * (g.item_f1 or 0) for g in groups],
            width,
            label="item-F1",
        )
        ax.bar(
            [p + width / 2 for p in positions], [100 * (g.row_f1 or 0) for g in groups], width, label="row-F1"
        )
        ax.set_xticks(list(positions), [g.group for g in groups], rotation=20, ha="right")
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title("Item-F1 and row-F1 by source family")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return path


def _write_csv(path: Path, groups: list[GroupStats]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for stats in groups:
            writer.writerow(stats.model_dump(include=set(CSV_COLUMNS)))
    return path


def _write_task_csv(path: Path, scored: list[ScoredRecord]) -> Path:
    fields = (
        "task_id",
        "system",
        "agent_variant",
        "variant",
        "family",
        "domain",
        "status",
        *METRIC_COLUMNS,
        "error",
    )
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for record in scored:
            score = record.score
            status = "error" if score is None else score.evidence.prediction_status
            writer.writerow(
                {
                    "task_id": record.task_id,
                    "system": record.system,
                    "agent_variant": record.agent_variant,
                    "variant": record.variant,
                    "family": record.family,
                    "domain": record.domain,
                    "status": status,
                    **{
                        m: (json.dumps(getattr(score, m)) if score is not None else "")
                        for m in METRIC_COLUMNS
                    },
                    "error": record.error or "",
                }
            )
    return path
