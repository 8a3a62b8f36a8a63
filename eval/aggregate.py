"""Macro means over task records, like the paper's tables: overall and per dimension.

Parse failures and scoring errors are counted apart and left out of the means (they are unscored, not
zero); the `*_failures_as_zero` columns show the other reading explicitly, so nobody computes it by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean

from pydantic import BaseModel, Field

from eval.score import Score

DIMENSIONS = ("system", "agent_variant", "language", "variant", "family", "ecosystem", "domain")


class ScoredRecord(BaseModel):
    """One task scored for one system; the labels are what the tables group by."""

    task_id: str
    variant: str = Field(description="task variant: goal | constraint")
    domain: str
    family: str
    ecosystem: str = ""
    language: str = ""
    system: str = Field("", description="model or system name")
    agent_variant: str = Field("", description="agent configuration name, e.g. full or no-verifier")
    score: Score | None = None
    error: str | None = Field(None, description="why the task could not be scored (e.g. bad gold)")
    missing_prediction: bool = False
    failed_run: bool = Field(False, description="the run ended in an error: no answer, scored 0 (eval.score)")


class GroupStats(BaseModel):
    dimension: str
    group: str
    n_tasks: int
    n_scored: int
    n_parse_failures: int
    n_errors: int
    n_missing: int
    item_f1: float | None
    row_f1: float | None
    poa: float | None
    exact_match: float | None
    item_f1_failures_as_zero: float | None
    row_f1_failures_as_zero: float | None


class Aggregate(BaseModel):
    scoring: str = Field("ours", description="which definitions scored it: ours | authors (--compat)")
    overall: GroupStats
    by: dict[str, list[GroupStats]]
    parse_failures: list[str] = Field(description="task ids (with system) whose answer did not parse")
    missing_predictions: list[str]
    failed_runs: list[str] = Field(default_factory=list, description="runs that ended in an error (scored 0)")
    errors: dict[str, str] = Field(description="task id (with system) -> why it was not scored")


def aggregate(scored: list[ScoredRecord]) -> Aggregate:
    by: dict[str, list[GroupStats]] = {}
    for dimension in DIMENSIONS:
        labels = sorted({getattr(record, dimension) for record in scored})
        if labels == [""]:
            continue
        by[dimension] = [
            _stats(dimension, label, [r for r in scored if getattr(r, dimension) == label])
            for label in labels
        ]
    modes = sorted({r.score.mode for r in scored if r.score is not None})
    return Aggregate(
        scoring=" + ".join(modes) or "ours",
        overall=_stats("overall", "all", scored),
        by=by,
        parse_failures=[_label(r) for r in scored if r.score is not None and r.score.parse_failure],
        missing_predictions=[_label(r) for r in scored if r.missing_prediction],
        failed_runs=[_label(r) for r in scored if r.failed_run],
        errors={_label(r): r.error for r in scored if r.error is not None},
    )


def _label(record: ScoredRecord) -> str:
    return f"{record.system}/{record.task_id}" if record.system else record.task_id


def _stats(dimension: str, group: str, records: list[ScoredRecord]) -> GroupStats:
    scores = [r.score for r in records if r.score is not None]
    valid = [s for s in scores if not s.parse_failure]
    failures = len(scores) - len(valid)

    def mean(metric: Callable[[Score], float | bool | None]) -> float | None:
        values = [float(v) for v in (metric(s) for s in valid) if v is not None]
        return fmean(values) if values else None

    def mean_with_zeros(metric: Callable[[Score], float | None]) -> float | None:
        values = [metric(s) or 0.0 for s in scores]
        return fmean(values) if values else None

    return GroupStats(
        dimension=dimension,
        group=group,
        n_tasks=len(records),
        n_scored=len(valid),
        n_parse_failures=failures,
        n_errors=sum(r.error is not None for r in records),
        n_missing=sum(r.missing_prediction for r in records),
        item_f1=mean(lambda s: s.item_f1),
        row_f1=mean(lambda s: s.row_f1),
        poa=mean(lambda s: s.poa),
        exact_match=mean(lambda s: s.exact_match),
        item_f1_failures_as_zero=mean_with_zeros(lambda s: s.item_f1),
        row_f1_failures_as_zero=mean_with_zeros(lambda s: s.row_f1),
    )
