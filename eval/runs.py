"""Read the scored tasks of a run directory, whichever tool wrote it.

Two layouts: `sgr score` writes `scores.jsonl` (one ScoredRecord a line); the benchmark runner writes
one `cell.json` per model/variant/task under `cells/`. Both are read as plain JSON, so `eval/` does not
import the runner.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from eval.aggregate import ScoredRecord
from eval.score import Score, no_answer, run_failed

SCORES_FILE = "scores.jsonl"


class RunReadError(ValueError):
    """A run directory that cannot be read; the message names the file (and line)."""


@dataclass
class RunEntry:
    record: ScoredRecord
    location: Path  # where the task's answer and trace live (or the scores file line's file)


def load_run(run_dir: Path) -> list[RunEntry]:
    scores_file = run_dir / SCORES_FILE
    if scores_file.is_file():
        return _from_scores_file(scores_file)
    cells = sorted(run_dir.glob("cells/**/cell.json"))
    if cells:
        return [_from_cell(path) for path in cells]
    raise RunReadError(
        f"{run_dir}: no {SCORES_FILE} (from `sgr score`) and no cells/**/cell.json (from `sgr bench`)"
    )


def _from_scores_file(path: Path) -> list[RunEntry]:
    entries: list[RunEntry] = []
    problems: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(RunEntry(ScoredRecord.model_validate_json(line), path))
        except ValidationError as exc:
            problems.append(f"{path}:{number}: {_first_error(exc)}")
    if problems:
        raise RunReadError("unreadable scored records:\n" + "\n".join(problems))
    return entries


def _from_cell(path: Path) -> RunEntry:
    try:
        cell = json.loads(path.read_text(encoding="utf-8"))
        raw_score = cell.get("score") or {}
        error = raw_score.get("error") if isinstance(raw_score, dict) else None
        outcome = cell.get("outcome") or {}
        failed = run_failed(outcome.get("stop_reason"), outcome.get("error_kind")) or bool(cell.get("timed_out"))
        if failed:  # no answer whatever this cell's score says (a folder written before the rule, docs/evaluator.md)
            mode = "authors" if isinstance(raw_score, dict) and raw_score.get("mode") == "authors" else "ours"
            raw_score, error = no_answer("the run ended in an error", mode).model_dump(), None
        record = ScoredRecord(
            task_id=cell["task_id"],
            variant=cell.get("split", ""),
            domain=cell.get("domain", ""),
            family=cell.get("family", ""),
            system=cell.get("model", ""),
            agent_variant=cell.get("variant", ""),
            score=None if error or not raw_score else Score.model_validate(raw_score),
            error=str(error) if error else (None if raw_score else "no score in cell"),
            failed_run=failed,
        )
    except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise RunReadError(f"{path}: unreadable cell record: {exc!r}") from exc
    except ValidationError as exc:
        raise RunReadError(f"{path}: {_first_error(exc)}") from exc
    return RunEntry(record, path.parent)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"field {'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
