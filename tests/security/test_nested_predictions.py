"""Issue 21, item 8: deeply nested JSON in a predictions file is one clear line naming file and line, the
prediction is recorded as a parse failure of its task, and every other prediction is still scored."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent.cli import app
from eval.batch import read_predictions

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = ROOT / "tasks" / "offline" / "data" / "constraint.jsonl"
DEEP = "[" * 200_000 + "]" * 200_000


def _gold(task_id: str) -> str:
    lines = OFFLINE.read_text(encoding="utf-8").splitlines()
    return next(r["oracle_answer"] for r in map(json.loads, lines) if r["task_id"] == task_id)


def test_a_nested_line_is_a_parse_failure_of_its_task_and_nothing_else_is_lost(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps({"task_id": "offline_lifesci_001", "answer": _gold("offline_lifesci_001")}) + "\n"
        + '{"task_id": "offline_vulns_001", "answer": "x", "notes": ' + DEEP + "}\n"
        + json.dumps({"task_id": "offline_water_001", "answer": _gold("offline_water_001")}) + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["score", "--tasks", str(OFFLINE), "--predictions", str(predictions),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.exception is None and "Traceback" not in result.output
    assert f"{predictions}:2: JSON nested too deeply to read (recorded as a parse failure)" in result.output
    scores = {r["task_id"]: r["score"] for r in map(json.loads, (tmp_path / "out/scores.jsonl").open())}
    assert scores["offline_vulns_001"]["parse_failure"] is True
    assert scores["offline_vulns_001"]["evidence"]["parse_notes"] == [
        f"{predictions}:2: JSON nested too deeply to read (recorded as a parse failure)"
    ]
    assert scores["offline_lifesci_001"]["exact_match"] is True and scores["offline_water_001"]["exact_match"]
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["parse_failures"] == ["offline_vulns_001"]
    assert "offline_vulns_001" not in summary["missing_predictions"]


def test_a_nested_line_without_a_task_id_is_one_clear_error(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"answer": ' + DEEP + "}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "--tasks", str(OFFLINE), "--predictions", str(predictions),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{predictions}:1: JSON nested too deeply to read, and no task_id found" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()
    assert read_predictions.__doc__ and "nested too deeply" in read_predictions.__doc__
