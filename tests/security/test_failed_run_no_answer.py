"""Issue 29 item 1: a run that failed (endpoint hang = infra, HTTP 401 = config, a bug, the runner's timeout)
wrote the answer NONE and scored exact match 1 on a task whose gold is NONE; a bench summary showed EM 100 next
to "Failed 1". A failed run now has no answer (0 on every metric) in `sgr run`, `sgr bench` and `sgr score`;
an explicit NONE after a run that ended normally is still an answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.outcome import TaskOutcome
from agent.reports.summary import summarize
from agent.rundir.cells import CellRecord
from agent.runner.bench import score_cell
from eval.aggregate import aggregate
from eval.batch import Prediction, score_predictions
from eval.runs import load_run
from tasks.loaders import load_tasks

ROOT = Path(__file__).resolve().parents[2]


def none_tasks(tmp_path: Path, count: int = 4, start_url: str | None = None) -> Path:
    """`count` offline task records whose gold is NONE (what released tasks can have)."""
    lines = (ROOT / "tasks/offline/data/goal.jsonl").read_text(encoding="utf-8").splitlines()[:count]
    records = []
    for number, line in enumerate(lines, start=1):
        record = json.loads(line)
        record.update(task_id=f"none_task_{number:03d}", oracle_answer="NONE")
        if start_url:
            record["start_url"] = start_url
        records.append(json.dumps(record))
    path = tmp_path / "none_tasks.jsonl"
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path


def test_failed_run_no_answer_in_sgr_score_predictions(tmp_path: Path):
    tasks = load_tasks(none_tasks(tmp_path, 4))
    predictions = [
        Prediction(task_id="none_task_001", answer="NONE", stop_reason="error", error_kind="infra"),  # endpoint hang
        Prediction(task_id="none_task_002", answer="", stop_reason="error", error_kind="config"),  # HTTP 401
        Prediction(task_id="none_task_003", answer="NONE", stop_reason="finished"),  # the agent's own NONE
    ]  # none_task_004: no prediction at all
    result = score_predictions(tasks, predictions)
    by_id = {r.task_id: r for r in result.scored}
    assert by_id["none_task_003"].score.exact_match is True and by_id["none_task_003"].score.item_f1 == 1.0
    for task_id in ("none_task_001", "none_task_002", "none_task_004"):
        score = by_id[task_id].score
        assert (score.exact_match, score.item_f1, score.row_f1) == (False, 0.0, 0.0), task_id
        assert score.evidence.prediction_status == "no_answer"
    summary = aggregate(result.scored)
    assert summary.overall.exact_match == pytest.approx(0.25)
    assert summary.failed_runs == ["none_task_001", "none_task_002"]
    assert summary.missing_predictions == ["none_task_004"]


def test_failed_run_no_answer_in_sgr_score_cli_from_outcome_lines(tmp_path: Path):
    """A predictions file of outcome.json lines (what `sgr run` writes) carries how each run ended."""
    source = none_tasks(tmp_path, 2)
    failed = TaskOutcome(task_id="none_task_001", model="m", answer="NONE", stop_reason="error", error_kind="infra",
                         error="model call cut")
    answered = TaskOutcome(task_id="none_task_002", model="m", answer="NONE")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(failed.model_dump_json() + "\n" + answered.model_dump_json() + "\n", encoding="utf-8")
    done = CliRunner().invoke(app, ["score", "--tasks", str(source), "--predictions", str(predictions),
                                    "--out", str(tmp_path / "scored")])
    assert done.exit_code == 0, done.output
    assert "ended in an error" in done.output and "m/none_task_001" in done.output
    scored = {e.record.task_id: e.record for e in load_run(tmp_path / "scored")}
    assert scored["none_task_001"].score.exact_match is False and scored["none_task_001"].failed_run
    assert scored["none_task_002"].score.exact_match is True


@pytest.mark.parametrize("kind", ["infra", "config", "bug", "timeout"])
def test_failed_run_no_answer_in_run_and_bench_scoring(tmp_path: Path, kind: str):
    """`sgr run` and `sgr bench` score through `score_cell` with the outcome's failure; the summary counts the
    cell as failed and gives it 0 (it showed EM 100.00 next to "Failed 1")."""
    [task] = load_tasks(none_tasks(tmp_path, 1))
    outcome = TaskOutcome(task_id=task.task_id, model="m", answer="NONE", stop_reason="error", error_kind=kind,
                          error="it failed")
    assert outcome.failed
    metrics, score = score_cell(task, outcome.answer, failure=outcome.failure())
    assert metrics == {"em": 0.0, "item_f1": 0.0, "row_f1": 0.0, "poa": 0.0}
    assert score["evidence"]["prediction_status"] == "no_answer"
    record = CellRecord(model="m", variant="full", task_id=task.task_id, outcome=outcome, metrics=metrics,
                        score=score)
    [overall] = summarize(tmp_path, [record]).overall
    assert (overall.failed, overall.em, overall.item_f1) == (1, 0.0, 0.0)


def test_failed_run_explicit_none_after_normal_end_is_an_answer(tmp_path: Path):
    [task] = load_tasks(none_tasks(tmp_path, 1))
    for stop in ("finished", "max_steps", "wall_time"):  # a budget stop keeps its best answer
        outcome = TaskOutcome(task_id=task.task_id, model="m", answer="NONE", stop_reason=stop)
        assert not outcome.failed
        metrics, _ = score_cell(task, outcome.answer, failure=outcome.failure())
        assert metrics["em"] == 1.0


def test_failed_run_no_answer_when_reading_an_older_bench_folder(tmp_path: Path):
    """A cell written before the rule (its score says EM 1) is read by `sgr score`/`review` as no answer."""
    [task] = load_tasks(none_tasks(tmp_path, 1))
    outcome = TaskOutcome(task_id=task.task_id, model="m", answer="NONE", stop_reason="error", error_kind="infra")
    metrics, score = score_cell(task, "NONE")  # the old verdict: EM 1
    assert metrics["em"] == 1.0
    cell = tmp_path / "run" / "cells" / "m" / "full" / task.task_id / "cell.json"
    cell.parent.mkdir(parents=True)
    cell.write_text(CellRecord(model="m", variant="full", task_id=task.task_id, outcome=outcome, metrics=metrics,
                               score=score).model_dump_json(), encoding="utf-8")
    [entry] = load_run(tmp_path / "run")
    assert entry.record.failed_run and entry.record.score.exact_match is False
