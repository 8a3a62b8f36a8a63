"""PNG figures of a run (matplotlib, Agg: no display needed): metrics by family, goal vs constraint,
and ablation deltas against the full agent."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from agent.reports.summary import METRIC_LABELS, METRICS, GroupStats, RunSummary  # noqa: E402

PLOTS_DIR = "plots"


def _series(rows: list[GroupStats], summary: RunSummary) -> list[str]:
    return sorted({_name(r, summary) for r in rows})


def _name(row: GroupStats, summary: RunSummary) -> str:
    return f"{summary.label(row.model)} / {row.variant}"


def _replay_note(fig: plt.Figure, summary: RunSummary) -> None:
    """A figure of replays says so on the figure itself: a PNG travels without its summary's banner."""
    if summary.replays:
        fig.text(0.5, 1.04, f"REPLAYS, NOT MODEL RESULTS ({', '.join(summary.replays)}: scripted walkthroughs)",
                 ha="center", va="bottom", fontsize=10, color="#5b3cc4", fontweight="bold")


def _grouped_bars(ax: plt.Axes, groups: list[str], series: list[str], value: dict[tuple[str, str], float],
                  ylabel: str) -> None:
    width = 0.8 / max(1, len(series))
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [100 * value.get((name, g), 0.0) for g in groups], width, label=name)
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    tmp.replace(path)
    return path


def plot_by_family(summary: RunSummary, path: Path) -> Path | None:
    rows = summary.by_family
    if not rows:
        return None
    families = sorted({r.group for r in rows})
    series = _series(rows, summary)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, metric in zip(axes, ("item_f1", "row_f1"), strict=True):
        _grouped_bars(ax, families, series, {(_name(r, summary), r.group): getattr(r, metric) for r in rows},
                      f"{METRIC_LABELS[metric]} (%)")
        ax.set_title(f"{METRIC_LABELS[metric]} by source family")
    axes[0].legend(fontsize=7)
    _replay_note(fig, summary)
    return _save(fig, path)


def plot_goal_vs_constraint(summary: RunSummary, path: Path) -> Path | None:
    rows = summary.by_split
    if not rows:
        return None
    splits = sorted({r.group for r in rows})
    fig, axes = plt.subplots(1, len(METRICS), figsize=(12, 3.6), sharey=True)
    for ax, metric in zip(axes, METRICS, strict=True):
        _grouped_bars(ax, _series(rows, summary), splits,
                      {(r.group, _name(r, summary)): getattr(r, metric) for r in rows},
                      "%" if metric == "em" else "")
        ax.set_title(METRIC_LABELS[metric])
    axes[0].legend(fontsize=7)
    fig.suptitle("Goal vs constraint")
    _replay_note(fig, summary)
    return _save(fig, path)


def plot_ablation_deltas(deltas: dict[str, dict[str, float]], path: Path, replays: bool = False) -> Path | None:
    """`deltas`: variant -> metric -> (variant - full), as fractions; `replays` titles the figure as replays."""
    if not deltas:
        return None
    variants = sorted(deltas)
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(variants) + 2), 3.8))
    width = 0.8 / len(METRICS)
    for i, metric in enumerate(METRICS):
        xs = [v + (i - (len(METRICS) - 1) / 2) * width for v in range(len(variants))]
        ax.bar(xs, [100 * deltas[v].get(metric, 0.0) for v in variants], width, label=METRIC_LABELS[metric])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(variants)), variants, rotation=15, ha="right")
    ax.set_ylabel("delta vs full agent (points)")
    ax.set_title("Ablation: each variant minus the full agent" + (" (REPLAYS, NOT MODEL RESULTS)" if replays else ""))
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def write_plots(summary: RunSummary, run_dir: Path) -> list[Path]:
    out = Path(run_dir) / PLOTS_DIR
    made = [
        plot_by_family(summary, out / "metrics_by_family.png"),
        plot_goal_vs_constraint(summary, out / "goal_vs_constraint.png"),
    ]
    return [p for p in made if p is not None]
