"""`sgr show RUN`: one run read at the terminal, as the report's step table reads it (issue 40).

Why: after `sgr run` a user had one console line and a raw `steps.jsonl` whose browser lines count the browser's
own actions (after a repair, browser 8 was actor 11), and nothing said how to open `trace.zip`. This view reads a
run folder (`sgr run`'s, or one bench cell's) through the same fold as report.html (agent/reports/timeline.py):
one line per step under the actor's step number, the outcome and score above, the answer (or why there is none)
and how to open the trace below. A bench folder lists its cells, failed ones first, to pick one.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.outcome import TaskOutcome
from agent.reports.timeline import StepRow, step_rows
from agent.rundir.cells import CELL_FILE, CELLS_DIR, CellRecord, load_records

MAX_CELLS_LISTED = 40


class NotARunFolder(ValueError):
    """The folder holds no run: the message says what a run folder holds."""


def _outcome(folder: Path) -> tuple[TaskOutcome, dict]:
    """The outcome and score of a run folder: a bench cell's `cell.json`, or `sgr run`'s `outcome.json`."""
    try:
        if (folder / CELL_FILE).is_file():
            record = CellRecord.model_validate_json((folder / CELL_FILE).read_text(encoding="utf-8"))
            return record.outcome, record.score
        outcome = TaskOutcome.model_validate_json((folder / "outcome.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotARunFolder(f"{folder}: no readable outcome.json or cell.json ({type(exc).__name__}): not a finished "
                            "run folder (`sgr run` writes one under runs/<task>/<model>/<variant>)") from exc
    score_path = folder / "score.json"
    try:
        score = json.loads(score_path.read_text(encoding="utf-8")) if score_path.is_file() else {}
    except (OSError, ValueError):
        score = {}
    return outcome, score if isinstance(score, dict) else {}


def _step_line(row: StepRow) -> list[str]:
    head = f"{row.step:>5}  {row.action}" + (f" {row.target}" if row.target else "")
    lines = [head + (f"  @ {row.url}" if row.url else "")]
    lines += [f"       {effect}" for effect in row.effect]
    lines += [f"       ! {flag.kind}: {flag.text}" for flag in row.flags]
    return lines


def show_run(folder: Path) -> list[str]:
    """The lines of one run's view."""
    outcome, score = _outcome(folder)
    lines = [f"{outcome.task_id} [{outcome.model}/{outcome.variant}]: stop {outcome.stop_reason}, {outcome.steps} "
             f"step(s), tokens {outcome.prompt_tokens}+{outcome.completion_tokens}, {outcome.wall_seconds:.0f} s"]
    if outcome.failed:
        lines.append(f"FAILED ({outcome.error_kind or outcome.stop_reason} error): {outcome.error or 'no error text'}"
                     " - no answer, scored 0")
    else:
        metrics = ", ".join(f"{k} {score[k]}" for k in ("exact_match", "item_f1", "row_f1", "poa") if k in score)
        lines.append(f"score: {metrics or 'none recorded'}")
    rows, problems = step_rows(folder / "steps.jsonl")
    lines.append("")
    lines.append("steps (the actor's numbering; the browser's lines are shown under the step that acted):")
    lines += [line for row in rows for line in _step_line(row)] or ["    (no steps recorded)"]
    lines += [f"    note: {problem}" for problem in problems]
    lines.append("")
    if outcome.failed:
        lines.append("answer: none (the run ended in an error)")
    else:
        lines.append("answer:" + ("\n" + outcome.answer if outcome.answer else " (empty)"))
    trace = folder / "trace.zip"
    if trace.is_file():
        lines.append(f"trace: .venv/bin/playwright show-trace {trace}  (or open https://trace.playwright.dev and drop "
                     "the file on it: it is read in the browser, not uploaded)")
    lines.append(f"files: {folder} (steps.jsonl: every event; outcome.json, score.json: the full records)")
    return lines


def show_bench(run_dir: Path) -> list[str]:
    """A bench folder: its cells, failed ones first, each with the folder to give `sgr show`."""
    records = load_records(run_dir)
    if not records:
        raise NotARunFolder(f"{run_dir}: a bench folder without finished cells")
    ordered = sorted(records, key=lambda r: (not r.failed, (r.metrics.get("em") or 0) >= 1, r.task_id))
    failed = sum(r.failed for r in records)
    lines = [f"{run_dir}: {len(records)} finished cell(s), {failed} failed; show one with "
             f"`sgr show {run_dir}/{CELLS_DIR}/<model>/<variant>/<task>`:"]
    for record in ordered[:MAX_CELLS_LISTED]:
        status = "FAILED" if record.failed else f"EM {record.metrics.get('em')}"
        lines.append(f"  {status:<8} {run_dir / record.key.relpath}")
    if len(ordered) > MAX_CELLS_LISTED:
        lines.append(f"  ... and {len(ordered) - MAX_CELLS_LISTED} more (report.html lists them all)")
    return lines


def show(path: Path) -> list[str]:
    if not path.is_dir():
        raise NotARunFolder(f"{path}: no such folder")
    if (path / CELLS_DIR).is_dir() and not (path / CELL_FILE).is_file():
        return show_bench(path)
    return show_run(path)
