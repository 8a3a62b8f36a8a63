"""Score a file of saved predictions against a set of tasks (the body of `sgr score`).

Nothing is dropped: a task without a prediction has no answer (0 on every metric, `eval.score.no_answer`) and
is listed, so is a prediction whose run ended in an error (its `stop_reason`/`error_kind`, as the runner's
outcome.json writes them), a prediction
for an unknown task is listed, a repeated prediction is listed (the first one counts), and a task whose
gold or rules cannot be scored is recorded with its error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.aggregate import ScoredRecord
from eval.compat.rules import AuthorsRulesError, authors_rules, overlay_from_carried
from eval.compat.score import score_authors
from eval.rules import RulesBook, RulesError, TaskRules
from eval.score import Evidence, GoldParseError, Score, no_answer, run_failed, score_answer
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


_TASK_ID = re.compile(r'"task_id"\s*:\s*("(?:[^"\\]|\\.){1,500}")')
Compat = Literal["ours", "authors"]
MAX_LINE_CHARS = 2_000_000  # one prediction line: an answer of tens of thousands of rows still fits
MAX_SKIPPED_CHARS = 50_000_000  # a line longer than this is no predictions file (/dev/zero)


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
    unreadable: str | None = Field(None, description="why the line could not be read (scored as a parse failure)")
    stop_reason: str | None = Field(None, description="how the run ended (outcome.json); 'error': no answer")
    error_kind: str | None = Field(None, description="the run's error kind (outcome.json); infra/config/bug/"
                                                     "timeout: the run failed, its answer is not scored")

    @property
    def failed(self) -> bool:
        return run_failed(self.stop_reason, self.error_kind)

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("system", data.get("model") or "")
            data.setdefault("agent_variant", data.get("variant") or "")
        return data


@dataclass
class PredictionsFile:
    """What a predictions file held: the readable predictions and one message per bad line."""

    predictions: list[Prediction] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)
    lines: int = 0  # non-blank lines


def read_prediction_file(path: Path) -> PredictionsFile:
    """Every prediction of a JSONL file, read line by line (a 50 MB answer is held once, not thrice); bad
    lines are returned, not raised, so a caller may score the rest and say what it skipped.

    A line nested too deeply for the JSON parser is not fatal: it is reported on one line and, when its
    task id can be read, recorded as an unreadable prediction (a parse failure), so nothing is lost."""
    result = PredictionsFile()
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_CHARS + 1), ""), start=1):
                if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
                    result.lines += 1
                    _over_cap(path, number, line, handle, result.predictions, result.bad_lines)
                elif line.strip():
                    result.lines += 1
                    _read_line(path, number, line, result.predictions, result.bad_lines)
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"{path}: cannot read predictions: {exc}") from exc
    return result


def read_predictions(path: Path) -> list[Prediction]:
    """The predictions of a file in which every line must be good (`PredictionsError` lists the bad ones).
    Lines nested too deeply to parse are kept as unreadable predictions (see `read_prediction_file`)."""
    result = read_prediction_file(path)
    if result.bad_lines:
        raise PredictionsError(f"{len(result.bad_lines)} bad line(s) in predictions:\n" + "\n".join(result.bad_lines))
    return result.predictions


def _over_cap(path: Path, number: int, head: str, handle: Any, predictions: list[Prediction],
              problems: list[str]) -> None:
    """A line over MAX_LINE_CHARS: the rest of it is skipped unread, and when its task id can be read the task is
    recorded as a parse failure (a 55 MB answer took 174 s to score; a stream without newlines never ended)."""
    skipped = len(head)
    while (chunk := handle.readline(MAX_LINE_CHARS)) and not chunk.endswith("\n"):
        skipped += len(chunk)
        if skipped > MAX_SKIPPED_CHARS:
            raise PredictionsError(f"{path}:{number}: a line of over {MAX_SKIPPED_CHARS:,} characters: "
                                   "not a predictions file")
    skipped += len(chunk)
    reason = f"{path}:{number}: a line of {skipped:,}+ characters, over the cap of {MAX_LINE_CHARS:,}"
    task_id = _TASK_ID.search(head[:10_000])
    if task_id is None:
        problems.append(reason + ", and no task_id found at its start")
        return
    predictions.append(Prediction(task_id=json.loads(task_id[1]), answer="", line=number,
                                  unreadable=reason + " (recorded as a parse failure)"))


def _read_line(path: Path, number: int, line: str, predictions: list[Prediction], problems: list[str]) -> None:
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.append(f"{path}:{number}: not JSON: {exc.msg}")
        return
    except RecursionError:
        task_id = _TASK_ID.search(line)
        reason = f"{path}:{number}: JSON nested too deeply to read (recorded as a parse failure)"
        if task_id is None:
            problems.append(f"{path}:{number}: JSON nested too deeply to read, and no task_id found")
            return
        predictions.append(Prediction(task_id=json.loads(task_id[1]), answer="", unreadable=reason, line=number))
        return
    if not isinstance(raw, dict):
        problems.append(f"{path}:{number}: expected an object with task_id and answer")
        return
    try:
        predictions.append(Prediction.model_validate({**raw, "line": number, "unreadable": None}))
    except ValidationError as exc:
        problems.extend(
            f"{path}:{number}: field {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
        )


@dataclass
class BatchResult:
    scored: list[ScoredRecord] = field(default_factory=list)
    unknown_task_ids: list[str] = field(default_factory=list)
    duplicate_predictions: list[str] = field(default_factory=list)  # "file line N: system/task_id"


def score_predictions(
    tasks: Iterable[ScorableTask],
    predictions: list[Prediction],
    rules: RulesBook | None = None,
    compat: Compat = "ours",
) -> BatchResult:
    """Every (system, agent variant) in the predictions is scored on every task; `compat="authors"`
    scores as the benchmark authors' scorer does (eval/compat)."""
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
            result.scored.append(_score_one(task, prediction, system, agent_variant, rules, compat))
    return result


def _score_one(
    task: ScorableTask,
    prediction: Prediction | None,
    system: str,
    agent_variant: str,
    rules: RulesBook | None,
    compat: Compat = "ours",
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
        failed_run=prediction is not None and prediction.failed,
    )
    if prediction is not None and prediction.unreadable:
        record.score = Score(
            item_f1=None, row_f1=None, poa=None, exact_match=None, parse_failure=True, mode=compat,
            evidence=Evidence(prediction_status="parse_failure", parse_notes=[prediction.unreadable]),
        )
        return record
    try:
        task_rules = rules.for_task(task.task_id) if rules else None
        answered = prediction is not None and not prediction.failed
        # scored even without an answer: a gold that cannot be scored is reported either way
        record.score = score_task(task, prediction.answer if answered else "", task_rules, compat)
        if not answered:
            record.score = no_answer("no prediction" if prediction is None else "the run ended in an error "
                                     f"({prediction.error_kind or prediction.stop_reason})", compat)
    except (GoldParseError, RulesError, AuthorsRulesError) as exc:
        record.error = f"{type(exc).__name__}: {exc}"
    return record


def score_task(task: ScorableTask, answer: str, rules: TaskRules | None = None, compat: Compat = "ours") -> Score:
    """One answer of one task, in the project's definitions or the authors' (their rules from the
    record's rubric when it carries them, else from `rules`, else a fallback; see eval/compat/rules.py)."""
    rubric: Any = getattr(task, "rubric", None)
    if compat == "authors":
        return score_authors(answer, task.oracle_answer, authors_rules(task.task_id, task.output_spec, rubric, rules))
    return score_answer(
        answer, task.oracle_answer, task.output_spec, rules or overlay_from_carried(task.task_id, rubric)
    )
