"""Goal/constraint alignment: `X-g` and `X` must share source, reference answer and output schema."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from tasks.models import Task

COMPARED_FIELDS = ("domain", "oracle_answer", "schema")


class TaskPair(BaseModel):
    base_id: str
    language: str
    goal_id: str
    constraint_id: str
    differences: list[str] = Field(default_factory=list, description="Subset of COMPARED_FIELDS that differ.")


class AlignmentReport(BaseModel):
    pairs: list[TaskPair] = Field(default_factory=list)
    unpaired: list[str] = Field(
        default_factory=list, description="Ids lacking a partner in their language (an id repeats per language)."
    )

    @property
    def mismatched(self) -> list[TaskPair]:
        return [p for p in self.pairs if p.differences]

    @property
    def ok(self) -> bool:
        return not self.unpaired and not self.mismatched


def _differences(goal: Task, constraint: Task) -> list[str]:
    found: list[str] = []
    if goal.domain != constraint.domain:
        found.append("domain")
    if goal.oracle_answer.strip() != constraint.oracle_answer.strip():
        found.append("oracle_answer")
    if goal.output_spec.columns != constraint.output_spec.columns:
        found.append("schema")
    return found


def align_pairs(tasks: Iterable[Task]) -> AlignmentReport:
    """Pair within each language (data_en and data_zh hold the same ids), in base-id order."""
    groups: dict[tuple[str, str], dict[str, Task]] = defaultdict(dict)
    for task in tasks:
        groups[(task.language, task.base_id)][task.variant] = task
    report = AlignmentReport()
    for (language, base_id), by_variant in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        goal, constraint = by_variant.get("goal"), by_variant.get("constraint")
        if goal is None or constraint is None:
            lone = goal or constraint
            assert lone is not None
            report.unpaired.append(lone.task_id)
            continue
        report.pairs.append(
            TaskPair(
                base_id=base_id,
                language=language,
                goal_id=goal.task_id,
                constraint_id=constraint.task_id,
                differences=_differences(goal, constraint),
            )
        )
    return report
