"""Reference answers checked against their own derived spec with the evaluator's parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tasks.answer_check import check_reference_answer
from tasks.cli import app
from tasks.loaders import load_tasks
from tasks.models import Task

SAMPLE = Path(__file__).parent / "data" / "sgrbench_sample"


def _raw(split: str, task_id: str) -> dict:
    return json.loads((SAMPLE / "data_en" / split / f"{task_id}.json").read_text(encoding="utf-8"))


def test_every_sample_answer_matches_its_spec() -> None:
    assert [p for t in load_tasks(SAMPLE) for p in check_reference_answer(t)] == []


@pytest.mark.parametrize(
    ("task_id", "changes", "field", "message"),
    [
        ("nvd_005", {"oracle_output_cardinality": 3}, "oracle_output_cardinality",
         "has 2 row(s) but oracle_output_cardinality says 3"),
        ("nvd_005", {"oracle_answer": "CVE-2024-0727|2024-01-26\nCVE-2024-2511|2024-03-28|CRITICAL"}, "oracle_answer",
         "rows with [3] cell(s); the schema has 2 columns"),
        ("water_quality_portal_003", {"oracle_answer": "USGS-01646500|Nitrate|0.92 mg/L,USGS-01646500|pH|7.8 std units,"
                                      "USGS-01646500|Phosphorus|0.041 mg/L"}, "oracle_answer",
         "the header row is required but the reference answer has none"),
        ("arxiv_001", {"oracle_answer": "arxiv_id|title|first_author\n"
                       + _raw("constraint", "arxiv_001")["oracle_answer"]}, "oracle_answer",
         "the header row is to be omitted but the reference answer has one"),
        ("cfpb_complaint_database_002", {"oracle_answer": "see the attached spreadsheet"}, "oracle_answer",
         "does not parse under the derived output spec"),
    ],
)
def test_inconsistent_reference_answers(task_id: str, changes: dict, field: str, message: str) -> None:
    task = Task.model_validate(_raw("constraint", task_id) | changes)
    problems = check_reference_answer(task)
    assert [(p.field, p.task_id) for p in problems] == [(field, task_id)]
    assert problems[0].message.startswith(message)


def test_validate_reports_answer_problems(tmp_path: Path) -> None:
    (tmp_path / "constraint.jsonl").write_text(json.dumps(_raw("constraint", "nvd_005") | {"oracle_output_cardinality": 5}))
    args = ["validate", "--tasks", str(tmp_path)]
    checked = CliRunner().invoke(app, args, env={"COLUMNS": "220"})
    assert checked.exit_code == 1
    assert "oracle_output_cardinality says 5" in checked.output
    assert CliRunner().invoke(app, [*args, "--no-answer-check"]).exit_code == 0
