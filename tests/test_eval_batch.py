"""Batch scoring of prediction sets: systems, missing, unknown and duplicate predictions, bad gold."""

from dataclasses import dataclass, field

import pytest

from eval.aggregate import aggregate
from eval.batch import Prediction, score_predictions
from eval.rules import RulesBook, TaskRules
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "v"))


@dataclass
class FakeTask:
    """A plain record with the fields scoring reads (the Task model provides the same names)."""

    task_id: str
    oracle_answer: str = "a|1\nb|2"
    variant: str = "constraint"
    domain: str = "NVD"
    family: str = "Vulnerability records"
    ecosystem: str = "NVD"
    language: str = "en"
    output_spec: OutputSpec = field(default=SPEC)


def prediction(task_id: str, answer: str, line: int, **extra: str) -> Prediction:
    return Prediction.model_validate({"task_id": task_id, "answer": answer, "line": line, **extra})


def test_every_system_is_scored_on_every_task_and_nothing_is_dropped():
    tasks = [FakeTask("t1"), FakeTask("t1-g", variant="goal"), FakeTask("t2", oracle_answer="just prose")]
    predictions = [
        prediction("t1", "a|1\nb|2", 1, model="m1"),
        prediction("t1", "b|2\na|1", 2, model="m2", variant="no-verifier"),
        prediction("t1", "a|9", 3, model="m1"),  # repeated: listed, the first one counts
        prediction("zzz", "a|1", 4, model="m1"),
    ]
    result = score_predictions(tasks, predictions)
    assert result.unknown_task_ids == ["zzz"]
    assert result.duplicate_predictions == ["line 3: m1/t1 (line 1 counts)"]
    by_key = {(r.system, r.agent_variant, r.task_id): r for r in result.scored}
    assert len(by_key) == 6  # 2 systems x 3 tasks
    assert by_key[("m1", "", "t1")].score.exact_match is True
    assert by_key[("m2", "no-verifier", "t1")].score.poa == 0.0
    assert by_key[("m1", "", "t1-g")].missing_prediction and by_key[("m1", "", "t1-g")].score.item_f1 == 0.0
    assert "GoldParseError" in (by_key[("m1", "", "t2")].error or "")
    summary = aggregate(result.scored)
    assert {s.group for s in summary.by["system"]} == {"m1", "m2"}
    assert {s.group for s in summary.by["agent_variant"]} == {"", "no-verifier"}
    assert summary.overall.n_errors == 2 and len(summary.missing_predictions) == 4


def test_language_specific_prediction_wins_over_a_generic_one():
    tasks = [FakeTask("t1", language="en"), FakeTask("t1", language="zh")]
    predictions = [prediction("t1", "a|1\nb|2", 1), prediction("t1", "a|1", 2, language="zh")]
    scores = {
        r.task_id + "/" + str(i): r.score.item_f1
        for i, r in enumerate(score_predictions(tasks, predictions).scored)
    }
    # en takes the generic answer (perfect); zh its own (1 of 2 rows: 2*2 / (4 + 2))
    assert scores == {"t1/0": 1.0, "t1/1": pytest.approx(2 * 2 / 6)}
    by_language = aggregate(score_predictions(tasks, predictions).scored).by["language"]
    assert [(s.group, s.item_f1) for s in by_language] == [("en", 1.0), ("zh", pytest.approx(2 / 3))]


def test_rules_apply_by_base_id_and_bad_rules_are_recorded_per_task():
    tasks = [FakeTask("t1-g", oracle_answer="a|1.0\nb|2")]
    ok = RulesBook({"t1": TaskRules.model_validate({"fields": {"v": {"type": "decimal"}}})})
    assert score_predictions(tasks, [prediction("t1-g", "a|1\nb|2.00", 1)], ok).scored[0].score.exact_match
    bad = RulesBook({"t1": TaskRules.model_validate({"row_key": ["nope"], "origin": "r.yaml: tasks.t1"})})
    record = score_predictions(tasks, [prediction("t1-g", "a|1", 1)], bad).scored[0]
    assert record.score is None and "r.yaml: tasks.t1.row_key" in (record.error or "")
