"""Check each reference answer against its own derived OutputSpec, with the shared evaluator's parser.

A gold answer that the spec cannot parse, or whose row count or width disagrees with the record, would
make every prediction score wrongly; `sgr tasks validate` reports it as a problem of the record instead.
"""

from __future__ import annotations

from eval.parse import parse_answer
from tasks.errors import TaskProblem
from tasks.models import Task


def check_reference_answer(task: Task) -> list[TaskProblem]:
    spec = task.output_spec
    parsed = parse_answer(task.oracle_answer, spec)
    file, line = task.source_file or "?", task.source_line

    def problem(message: str, field: str = "oracle_answer") -> TaskProblem:
        return TaskProblem(file, message, line=line, field=field, task_id=task.task_id)

    if parsed.status == "parse_failure":
        return [problem("does not parse under the derived output spec (separators/columns)")]
    found: list[TaskProblem] = []
    expected = task.expected_rows
    if expected is not None and len(parsed.rows) != expected:
        found.append(
            problem(f"has {len(parsed.rows)} row(s) but oracle_output_cardinality says {expected}",
                    "oracle_output_cardinality")
        )
    widths = sorted({len(row) for row in parsed.rows if len(row) != spec.width})
    if widths:
        found.append(problem(f"rows with {widths} cell(s); the schema has {spec.width} columns"))
    if spec.header == "required" and parsed.rows and not parsed.header_seen:
        found.append(problem("the header row is required but the reference answer has none"))
    if spec.header == "omitted" and parsed.header_seen:
        found.append(problem("the header row is to be omitted but the reference answer has one"))
    return found
