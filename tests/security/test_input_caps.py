"""Issue 29 item 4 (caps on what the user gives): `sgr bench /dev/zero` read without a limit (10.6 GB), a 20 MB
instruction was sent in every model request (200 MB after two steps), and `sgr score` took 174 s over a 55 MB
answer. Each is now refused, or recorded as unscored, with one clear line; nothing else is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.config import MAX_CONFIG_BYTES, ConfigError, load_config
from eval.batch import MAX_LINE_CHARS, read_predictions
from tasks.errors import TaskLoadError
from tasks.loaders import load_tasks
from tasks.models import MAX_INSTRUCTION_CHARS

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sgrbench_sample" / "data_en" / "goal" / "arxiv_001-g.json"
runner = CliRunner()


def test_input_caps_config_from_an_endless_stream_is_one_line() -> None:
    with pytest.raises(ConfigError, match=f"over {MAX_CONFIG_BYTES:,} bytes"):
        load_config(Path("/dev/zero"))
    result = runner.invoke(app, ["bench", "/dev/zero"])
    assert result.exit_code == 2 and "not a benchmark config" in result.output
    assert "Traceback" not in result.output


def test_input_caps_an_absurdly_long_instruction_is_a_record_problem(tmp_path: Path) -> None:
    record = json.loads(SAMPLE.read_text(encoding="utf-8"))
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({**record, "instruction": "Read every row. " * 1_300_000}) + "\n")  # 20 MB
    with pytest.raises(TaskLoadError) as info:
        load_tasks(path)
    [problem] = info.value.problems
    assert problem.field == "instruction" and f"over the cap of {MAX_INSTRUCTION_CHARS:,}" in problem.message
    path.write_text(json.dumps(record) + "\n")
    assert len(load_tasks(path)) == 1  # a released instruction loads


def test_input_caps_a_huge_predicted_answer_is_unscored_not_read_for_minutes(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    huge = json.dumps({"task_id": "arxiv_001-g", "model": "m", "answer": "a|1\n" * (MAX_LINE_CHARS // 2)})
    path.write_text(huge + "\n" + json.dumps({"task_id": "other", "answer": "NONE"}) + "\n", encoding="utf-8")
    first, second = read_predictions(path)
    assert first.task_id == "arxiv_001-g" and first.answer == "" and "over the cap" in (first.unreadable or "")
    assert second.task_id == "other" and second.answer == "NONE" and second.line == 2  # nothing else lost
