"""One benchmark cell = (model, agent variant, task): its identity, folder and finished record.

A cell is finished exactly when `<cell folder>/cell.json` exists: the runner writes everything into a
staging folder, writes `cell.json` last, then renames the folder into place in one step.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.outcome import TaskOutcome
from agent.rundir.paths import ensure_inside, safe_segment
from tasks.models import Task

CELLS_DIR = "cells"
STAGING_DIR = ".staging"
CELL_FILE = "cell.json"
STEPS_FILE = "steps.jsonl"
CELL_SCHEMA_VERSION = 1



def cell_task_id(task: Task) -> str:
    """A run-unique id: the English record keeps its task id, other languages get a suffix (`arxiv_001@zh`)."""
    return task.task_id if task.language == "en" else f"{task.task_id}@{task.language}"


slug = safe_segment  # the one rule for names in paths (agent/rundir/paths.py)


@dataclass(frozen=True)
class CellKey:
    model: str
    variant: str
    task_id: str

    @property
    def relpath(self) -> Path:
        return Path(CELLS_DIR) / slug(self.model) / slug(self.variant) / slug(self.task_id)

    def label(self) -> str:
        return f"{self.model} / {self.variant} / {self.task_id}"


class Attempt(BaseModel):
    """One try that ended in an infrastructure error and was retried (kept as evidence)."""

    number: int
    error: str
    error_kind: str
    seconds: float


METRICS = ("em", "item_f1", "row_f1", "poa")


class CellRecord(BaseModel):
    """`cell.json`: everything the reports need about one finished cell, in one file."""

    schema_version: int = CELL_SCHEMA_VERSION
    model: str
    variant: str
    task_id: str
    base_id: str = ""
    split: str = Field("", description="goal | constraint")
    domain: str = ""
    family: str = ""
    shape: str = Field("", description="copy | derived (the offline suite's metadata.task_shape); '' unknown")
    language: str = ""
    gold: str = ""
    outcome: TaskOutcome
    metrics: dict[str, float | None] = Field(
        default_factory=dict, description="em, item_f1, row_f1, poa (0..1); null when the answer did not parse"
    )
    score: dict[str, Any] = Field(default_factory=dict, description="The evaluator's full score with evidence.")
    timed_out: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    started_at: str = ""
    finished_at: str = ""
    files: list[str] = Field(default_factory=list)

    @property
    def parse_failure(self) -> bool:
        return bool(self.score.get("parse_failure"))

    @property
    def key(self) -> CellKey:
        return CellKey(self.model, self.variant, self.task_id)

    @property
    def failed(self) -> bool:
        """Ended in an error (not merely a wrong answer): no answer, its metrics 0 (eval.score.no_answer)."""
        return self.outcome.failed or self.timed_out

    def failure_cause(self, limit: int = 160) -> str:
        """Why the cell failed, in one line: the error's kind, its first line, and how many attempts it took
        (the console and the report show this, so the cause is not only inside cell.json)."""
        first = (self.outcome.error or ("cancelled: over the time budget" if self.timed_out else "")).strip()
        text = first.splitlines()[0] if first else "no error text"
        text = text if len(text) <= limit else text[: limit - 1] + "…"
        attempts = len(self.attempts) + 1
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return f"{self.outcome.error_kind or 'error'} error{tries}: {text}"


def cell_dir(run_dir: Path, key: CellKey) -> Path:
    return ensure_inside(run_dir, run_dir / key.relpath)


def is_finished(run_dir: Path, key: CellKey) -> bool:
    return (cell_dir(run_dir, key) / CELL_FILE).is_file()


def finished_failed(run_dir: Path, key: CellKey) -> bool:
    """A finished cell that ended in an error (`--retry-failed` reruns these and keeps the others); an unreadable
    `cell.json` counts as failed, so the rerun replaces it."""
    try:
        record = CellRecord.model_validate_json((cell_dir(run_dir, key) / CELL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return record.failed


def staging_dir(run_dir: Path, key: CellKey) -> Path:
    return ensure_inside(run_dir, run_dir / STAGING_DIR / key.relpath.relative_to(CELLS_DIR))


def fresh_staging_dir(run_dir: Path, key: CellKey) -> Path:
    """A staging folder for a new attempt. Leftovers of a killed or failed attempt are discarded, never
    merged, except its `steps.jsonl`: the new attempt appends to it after a `new_attempt` line, so the steps
    before a kill or a retry are never lost (a line the kill cut short is dropped)."""
    path = staging_dir(run_dir, key)
    steps = path / STEPS_FILE
    earlier = steps.read_bytes() if steps.is_file() and not steps.is_symlink() else b""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    earlier = earlier[:earlier.rfind(b"\n") + 1]
    if earlier:
        marker = {"t": round(time.time(), 3), "node": "run", "event": "new_attempt"}
        steps.write_bytes(earlier + json.dumps(marker).encode() + b"\n")
    return path


def load_records(run_dir: Path) -> list[CellRecord]:
    """Every finished cell of a run, sorted; a corrupt `cell.json` is an error naming the file."""
    records = []
    for path in sorted((Path(run_dir) / CELLS_DIR).glob(f"*/*/*/{CELL_FILE}")):
        try:
            records.append(CellRecord.model_validate(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a valid cell record: {exc}") from exc
    return sorted(records, key=lambda r: (r.model, r.variant, r.task_id))
