"""A static, offline-readable HTML report of a run (`report.html` at the run folder's root).

Everything is linked relatively (plots, screenshots), nothing is fetched from the network, so the
folder can be zipped, copied or opened from a container volume as is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from agent.reports.plots import PLOTS_DIR
from agent.reports.summary import METRIC_LABELS, METRICS, RunSummary
from agent.rundir.atomic import write_text_atomic
from agent.rundir.cells import CellRecord, cell_dir

REPORT_FILE = "report.html"
MAX_EVENTS_PER_TASK = 400


@dataclass
class TimelineEvent:
    index: int
    step: Any
    node: str
    action: str
    result: str
    ok: bool | None
    state_change: str = ""
    drift: list[str] = field(default_factory=list)
    verdict: str = ""


def _short(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _action_of(event: dict[str, Any]) -> str:
    if "tool" in event:
        return f"{event['tool']} {_short(event.get('args', {}), 200)}"
    action = event.get("action")
    if isinstance(action, dict):
        return f"{action.get('kind', '?')} {_short({k: v for k, v in action.items() if k != 'kind'}, 200)}"
    if action:
        extra = f" {_short(event['query'], 120)}" if "query" in event else ""
        return f"{action}{extra}"
    if "plan" in event:
        return f"plan {_short(event['plan'], 200)}"
    if "stop" in event:
        return f"stop: {event['stop']}"
    return ""


def _result_of(event: dict[str, Any]) -> str:
    parts = []
    for key in ("error", "invalid", "message"):
        if event.get(key):
            parts.append(f"{key}: {_short(event[key], 200)}")
    if event.get("url"):
        parts.append(_short(event["url"], 160))
    if "rows" in event:
        parts.append(f"rows: {event['rows']}")
    if event.get("stop_reason"):
        parts.append(f"stop: {event['stop_reason']}")
    return " | ".join(parts)


def timeline(steps_path: Path) -> tuple[list[TimelineEvent], list[str]]:
    """Events of steps.jsonl with retrieval-state changes computed between tracker events; bad lines are
    listed (never dropped silently) so a report on a killed run's partial file still renders."""
    events: list[TimelineEvent] = []
    problems: list[str] = []
    if not steps_path.is_file():
        return events, [f"{steps_path.name} missing"]
    previous_state: dict[str, Any] = {}
    for number, line in enumerate(steps_path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        if len(events) >= MAX_EVENTS_PER_TASK:
            problems.append(f"more than {MAX_EVENTS_PER_TASK} events; the rest is in steps.jsonl")
            break
        node = str(event.get("node") or "browser")
        item = TimelineEvent(index=number, step=event.get("step", ""), node=node, action=_action_of(event),
                             result=_result_of(event), ok=event.get("ok"))
        if node == "state_tracker":
            state = {**event.get("values", {}), "page": f"{event.get('page')}/{event.get('pages')}"}
            changed = {k: v for k, v in state.items() if previous_state.get(k) != v}
            dropped = [k for k in previous_state if k not in state]
            item.state_change = "; ".join([f"{k}={_short(v, 80)}" for k, v in changed.items()]
                                          + [f"{k} cleared" for k in dropped])
            previous_state = state
            item.drift = [str(d) for d in event.get("drift", [])]
        for key in ("params_changed", "params_added", "controls_changed"):  # browser tracer lines
            if event.get(key):
                item.state_change += f"{key}: {_short(event[key], 160)} "
        if node == "verifier":
            failures = "; ".join(f"{f.get('check')}: {f.get('message')}" if isinstance(f, dict) else str(f)
                                 for f in event.get("failures") or [])
            item.verdict = "ok" if event.get("ok") else _short(f"FAILED {failures}", 300)
        events.append(item)
    return events, problems


@dataclass
class TaskView:
    record: CellRecord
    anchor: str
    folder: str
    events: list[TimelineEvent]
    trace_problems: list[str]
    screenshots: list[str]
    answer: str
    evidence: dict[str, Any]
    has_trace_zip: bool
    lineage: dict[str, Any] | None = None


def _task_view(run_dir: Path, record: CellRecord) -> TaskView:
    folder = cell_dir(run_dir, record.key)
    events, problems = timeline(folder / "steps.jsonl")
    rel = folder.relative_to(run_dir).as_posix()
    shots = sorted(p.relative_to(run_dir).as_posix() for p in folder.glob("screenshots/*.png"))
    answer_file = folder / "answer.txt"
    return TaskView(
        record=record, anchor=rel.replace("/", "--"), folder=rel, events=events, trace_problems=problems,
        screenshots=shots, answer=answer_file.read_text(encoding="utf-8") if answer_file.is_file() else record.outcome.answer,
        evidence=record.score.get("evidence") or {}, has_trace_zip=(folder / "trace.zip").is_file(),
        lineage=_lineage(folder),
    )


def _lineage(folder: Path) -> dict[str, Any] | None:
    """The derived answer's SQL and inputs, from retrieval_state.json (None for copied answers)."""
    path = folder / "retrieval_state.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("lineage") if path.is_file() else None
    except (OSError, ValueError):
        return None


def render_html_report(run_dir: Path, summary: RunSummary, records: list[CellRecord]) -> str:
    env = Environment(loader=PackageLoader("agent.reports", "templates"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{100 * float(v):.2f}"
    plots = sorted(p.relative_to(run_dir).as_posix() for p in (run_dir / PLOTS_DIR).glob("*.png"))
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    return env.get_template("report.html.j2").render(
        summary=summary, metrics=METRICS, labels=METRIC_LABELS, plots=plots, manifest=manifest,
        tasks=[_task_view(run_dir, r) for r in records],
        ablation=(run_dir / "ablation.md").read_text(encoding="utf-8") if (run_dir / "ablation.md").is_file() else "",
    )


def write_html_report(run_dir: Path, summary: RunSummary, records: list[CellRecord]) -> Path:
    path = Path(run_dir) / REPORT_FILE
    write_text_atomic(path, render_html_report(Path(run_dir), summary, records))
    return path
