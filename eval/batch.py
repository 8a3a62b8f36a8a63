"""Score a file of saved predictions against a set of tasks (the body of `sgr score`).

Nothing is dropped: a task without a prediction is scored as an empty answer and listed, a prediction
for an unknown task is listed, a repeated prediction is listed (the first one counts), and a task whose
gold or rules cannot be scored is recorded with its error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.aggregate import ScoredRecord
from eval.rules import RulesBook, RulesError
from eval.score import GoldParseError, score_answer
from tasks.spec import OutputSpec


class ScorableTask(Protocol):
    """What scoring needs from a task (satisfied by `tasks.models.Task`)."""

    @property
    def task_id(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def domain(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def ecosystem(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def oracle_answer(self) -> str: ...
    @property
    def output_spec(self) -> OutputSpec: ...


class PredictionsError(ValueError):
    """A predictions file with bad lines; lists every bad line (file:line: field: problem)."""


class Prediction(BaseModel):
    """One line of a predictions file. `model`/`variant` follow the runner's TaskOutcome names."""

    model_config = ConfigDict(extra="ignore")

    task_id: str = Field(min_length=1)
    answer: str
    system: str = ""
    agent_variant: str = ""
    language: str | None = None
    line: int = 0

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("system", data.get("model") or "")
            data.setdefault("agent_variant", data.get("variant") or "")
        return data


def read_predictions(path: Path) -> list[Prediction]:
    problems: list[str] = []
    predictions: list[Prediction] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"{path}: cannot read predictions: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON: {exc.msg}")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{path}:{number}: expected an object with task_id and answer")
            continue
        try:
            predictions.append(Prediction.model_validate({**raw, "line": number}))
        except ValidationError as exc:
            problems += [
                f"{path}:{number}: field {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            ]
    if problems:
        raise PredictionsError(f"{len(problems)} bad line(s) in predictions:\n" + "\n".join(problems))
    return predictions


@dataclass
class BatchResult:
    scored: list[ScoredRecord] = field(default_factory=list)
    unknown_task_ids: list[str] = field(default_factory=list)
    duplicate_predictions: list[str] = field(default_factory=list)  # "file line N: system/task_id"


def score_predictions(
    tasks: Iterable[ScorableTask], predictions: list[Prediction], rules: RulesBook | None = None
) -> BatchResult:
    """Every (system, agent variant) in the predictions is scored on every task."""
    tasks = list(tasks)
    result = BatchResult()
    known_ids = {t.task_id for t in tasks}
    chosen: dict[tuple[str, str, str, str | None], Prediction] = {}
    for prediction in predictions:
        if prediction.task_id not in known_ids:
            result.unknown_task_ids.append(prediction.task_id)
            continue
        key = (prediction.system, prediction.agent_variant, prediction.task_id, prediction.language)
        if key in chosen:
            result.duplicate_predictions.append(
                f"line {prediction.line}: {prediction.system or '-'}/{prediction.task_id}"
                f" (line {chosen[key].line} counts)"
            )
            continue
        chosen[key] = prediction
    systems = sorted({(p.system, p.agent_variant) for p in chosen.values()}) or [("", "")]
    for system, agent_variant in systems:
        for task in tasks:
            prediction = chosen.get((system, agent_variant, task.task_id, task.language)) or chosen.get(
                (system, agent_variant, task.task_id, None)
            )
            result.scored.append(_score_one(task, prediction, system, agent_variant, rules))
    return result


def _score_one(
    task: ScorableTask,
    prediction: Prediction | None,
    system: str,
    agent_variant: str,
    rules: RulesBook | None,
) -> ScoredRecord:
    record = ScoredRecord(
        task_id=task.task_id,
        variant=task.variant,
        domain=task.domain,
        family=task.family,
        ecosystem=task.ecosystem,
        language=task.language,
        system=system,
        agent_variant=agent_variant,
        missing_prediction=prediction is None,
    )
    try:
        task_rules = rules.for_task(task.task_id) if rules else None
        record.score = score_answer(
            prediction.answer if prediction else "", task.oracle_answer, task.output_spec, task_rules
        )
    except (GoldParseError, RulesError) as exc:
        record.error = f"{type(exc).__name__}: {exc}"
    return record
