"""`report.html`: a static, offline page built to find what went wrong in a run.

Above the fold: the cells sorted worst first (failed, then not exact, then flagged) with filters (status,
EM, family, stop reason, alarms, model/variant), and beside them the selected cell: its failure cause, the
answer against gold as one aligned table with the differing cells marked (from the evaluator's verdicts), and
its steps as one row each. The run's tables and plots follow. Plots and screenshot thumbnails are embedded,
so the page survives being moved out of its run folder; links to full-size files are relative to the folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from agent.reports.answer_table import AnswerTable, answer_table
from agent.reports.embed import data_uri, thumbnail_uri
from agent.reports.plots import PLOTS_DIR
from agent.reports.summary import METRIC_LABELS, METRICS, RunSummary
from agent.reports.timeline import StepRow, step_rows
from agent.rundir.atomic import write_text_atomic
from agent.rundir.cells import CellRecord, cell_dir
from agent.rundir.evidence import read_evidence

REPORT_FILE = "report.html"
MAX_THUMBS_PER_TASK = 6
_RANK = {"failed": 0, "wrong": 1, "flagged": 2, "exact": 3}


@dataclass
class Thumb:
    path: str  # relative to the run folder (the full-size file)
    uri: str  # the embedded thumbnail
    step: str


@dataclass
class TaskView:
    record: CellRecord
    anchor: str
    folder: str
    status: str  # failed | wrong | flagged | exact
    em: str  # "1", "0", or "-" (not scored)
    alarms: list[str]
    cause: str
    table: AnswerTable
    steps: list[StepRow]
    trace_problems: list[str]
    thumbs: list[Thumb]
    answer: str
    has_trace_zip: bool
    fault: dict[str, Any] | None = None
    lineage: dict[str, Any] | None = None
    replay: bool = False


def _alarms(record: CellRecord) -> list[str]:
    """Drift flags and failing verifier reports: what the agent itself flagged during the run."""
    flags = [":".join(str(f[k]) for k in ("rule", "gate") if f.get(k)) or "drift" for f in record.outcome.drift_flags]
    failed_checks = [str(f.get("check", "?")) if isinstance(f, dict) else "check"
                     for report in record.outcome.verifier_reports if not report.get("ok")
                     for f in report.get("failures") or []]
    disputed = [f"disputed: {record.outcome.disputed}"] if record.outcome.disputed else []
    disputed += [f"skipped on purpose: {link} ({why})" for link, why in record.outcome.skipped.items()]
    return ([f"drift {d}" for d in dict.fromkeys(flags)] + [f"verifier [{c}]" for c in dict.fromkeys(failed_checks)]
            + disputed)


def _status(record: CellRecord, alarms: list[str]) -> str:
    if record.failed:
        return "failed"
    if record.metrics.get("em") != 1.0:
        return "wrong"
    return "flagged" if alarms else "exact"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _thumbs(run_dir: Path, folder: Path, steps: list[StepRow]) -> list[Thumb]:
    """The flagged steps' screenshots first, then the last one: the pages a reader wants to see."""
    by_path = {row.screenshot: row for row in steps if row.screenshot}
    flagged = [p for p, row in by_path.items() if row.flags]
    every = sorted(p.relative_to(run_dir).as_posix() for p in folder.glob("screenshots/*.png"))
    chosen = list(dict.fromkeys([*flagged[:MAX_THUMBS_PER_TASK - 1], *every[-1:]]))[:MAX_THUMBS_PER_TASK]
    thumbs = []
    for rel in chosen:
        row = by_path.get(rel)
        thumbs.append(Thumb(path=rel, uri=thumbnail_uri(run_dir / rel), step=row.step if row else rel))
    return thumbs


def _task_view(run_dir: Path, record: CellRecord, replays: set[str]) -> TaskView:
    folder = cell_dir(run_dir, record.key)
    rel = folder.relative_to(run_dir).as_posix()
    shots = {int(p.stem.rpartition("_")[2]): p.relative_to(run_dir).as_posix()
             for p in folder.glob("screenshots/step_*.png") if p.stem.rpartition("_")[2].isdigit()}
    steps, problems = step_rows(folder / "steps.jsonl", shots)
    answer_file = folder / "answer.txt"
    alarms = _alarms(record)
    em = record.metrics.get("em")
    evidence = read_evidence(folder)
    return TaskView(
        record=record, anchor=rel.replace("/", "--"), folder=rel, status=_status(record, alarms),
        em="-" if em is None else f"{em:.0f}", alarms=alarms, cause=record.failure_cause() if record.failed else "",
        table=answer_table(record.score.get("evidence")), steps=steps, trace_problems=problems,
        thumbs=_thumbs(run_dir, folder, steps),
        answer=answer_file.read_text(encoding="utf-8") if answer_file.is_file() else record.outcome.answer,
        has_trace_zip=(folder / "trace.zip").is_file(), fault=_read_json(folder / "fault.json"),
        lineage=evidence.lineage if evidence else None, replay=record.model in replays,
    )


def _sorted(views: list[TaskView]) -> list[TaskView]:
    return sorted(views, key=lambda v: (_RANK[v.status], v.record.model, v.record.variant, v.record.task_id))


def render_html_report(run_dir: Path, summary: RunSummary, records: list[CellRecord]) -> str:
    env = Environment(loader=PackageLoader("agent.reports", "templates"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{100 * float(v):.2f}"
    run_dir = Path(run_dir)
    plots = [(p.relative_to(run_dir).as_posix(), data_uri(p)) for p in sorted((run_dir / PLOTS_DIR).glob("*.png"))]
    manifest = _read_json(run_dir / "manifest.json") or {}
    tasks = _sorted([_task_view(run_dir, r, set(summary.replays)) for r in records])
    counts = {status: sum(t.status == status for t in tasks) for status in _RANK}
    # opened first: the worst cell with something to read (a cell that failed before its first action says
    # all there is in its list row: the cause)
    readable = [t for t in tasks if t.status != "exact" and any(s.step.isdigit() and s.step != "0" for s in t.steps)]
    first = (readable or tasks or [None])[0]
    return env.get_template("report.html.j2").render(
        summary=summary, metrics=METRICS, labels=METRIC_LABELS, plots=plots, manifest=manifest, tasks=tasks,
        counts=counts, run_path=str(run_dir.resolve()), first=first.anchor if first else "",
        families=sorted({t.record.family or "unknown" for t in tasks}),
        stops=sorted({t.record.outcome.stop_reason for t in tasks}),
        series=sorted({f"{t.record.model} / {t.record.variant}" for t in tasks}),
        ablation=(run_dir / "ablation.md").read_text(encoding="utf-8") if (run_dir / "ablation.md").is_file() else "",
        faults=(run_dir / "faults.md").read_text(encoding="utf-8") if (run_dir / "faults.md").is_file() else "",
    )


def write_html_report(run_dir: Path, summary: RunSummary, records: list[CellRecord]) -> Path:
    path = Path(run_dir) / REPORT_FILE
    write_text_atomic(path, render_html_report(Path(run_dir), summary, records))
    return path
