"""Issue 21, item 10: task records that name a way out of the run folder or a non-web start page are
validation problems, and an empty task file does not validate.

Reproduced: `task_id` `../../etc/x` or `/abs/x`, `start_url` `file:///...` or `javascript:...` used to
validate with 0 problems (and ids are joined into result paths); an empty file validated with rc 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from tasks.errors import TaskLoadError
from tasks.loaders import load_tasks

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sgrbench_sample" / "data_en" / "goal" / "arxiv_001-g.json"
runner = CliRunner()


def _record(**changes: str) -> dict:
    return {**json.loads(SAMPLE.read_text(encoding="utf-8")), **changes}


def _validate(path: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["tasks", "validate", "--tasks", str(path), "--json", "--no-answer-check"])
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("task_id", ["../../etc/x", "/abs/x", "a/b-g", "..", ".hidden-g", "x\\y-g", "a b-g",
                                     "nul\x00-g", "x" * 129 + "-g"])
def test_a_task_id_that_is_not_one_plain_path_segment_is_a_problem(tmp_path: Path, task_id: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(_record(task_id=task_id)) + "\n")
    code, report = _validate(path)
    assert code == 1 and report["tasks"] == 0
    assert [(p["field"], p["line"]) for p in report["problems"]] == [("task_id", 1)]
    assert "is not a task id" in report["problems"][0]["message"]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,<b>x</b>",
                                 "ftp://example.org/", "https://", "//arxiv.org/", "arxiv.org",
                                 "https://arxiv.org/ list", "http://[::1"])
def test_a_start_url_that_is_not_a_web_address_is_a_problem(tmp_path: Path, url: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([_record(start_url=url)]))
    with pytest.raises(TaskLoadError) as info:
        load_tasks(path)
    [problem] = info.value.problems
    assert problem.field == "[0].start_url" and problem.task_id == "arxiv_001-g"
    code, _ = _validate(path)
    assert code == 1


@pytest.mark.parametrize("url", ["https://arxiv.org/", "http://sgr-offline.local/water/search?x=1", None, ""])
def test_web_start_urls_and_plain_ids_still_load(tmp_path: Path, url: str | None) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(_record(start_url=url, task_id="census_gov.v2_006-g")) + "\n")
    [task] = load_tasks(path)
    assert task.start_url == url and task.task_id == "census_gov.v2_006-g"


@pytest.mark.parametrize(("name", "text"), [("empty.jsonl", ""), ("blank.jsonl", "\n  \n"), ("empty.json", "[]")])
def test_an_empty_task_file_does_not_validate(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    code, report = _validate(path)
    assert code == 1 and not report["ok"] and report["tasks"] == 0
    assert "holds no task records" in report["problems"][0]["message"]
    with pytest.raises(TaskLoadError, match="holds no task records"):
        load_tasks(path)


def test_a_filter_that_selects_nothing_does_not_validate_either() -> None:
    result = runner.invoke(app, ["tasks", "validate", "--tasks", str(SAMPLE), "--domain", "NO_SUCH_DOMAIN"])
    assert result.exit_code == 1 and "no task records to validate" in result.output
