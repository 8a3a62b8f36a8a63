"""Issue 21, item 8: bad files get one clear line naming the file, never a traceback.

Reproduced: a config that is not UTF-8, a config nested thousands deep, a run.output_dir that is a file, lies
under a file or cannot be written, and task files nested deeper than the JSON reader can follow (which used
to raise UnicodeDecodeError, RecursionError or FileExistsError/NotADirectoryError out of the CLI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.config import ConfigError, load_config, make_output_dir
from tasks.errors import TaskLoadError
from tasks.loaders import load_tasks

runner = CliRunner()
DEEP = 100_000  # far past Python's recursion limit


def _cli(*args: str):
    result = runner.invoke(app, list(args))
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "Traceback" not in text and not isinstance(result.exception, (RecursionError, OSError, UnicodeError)), text
    return result, text


def test_a_non_utf8_config_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("models: [{name: caf\xe9}]\n".encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not UTF-8 text (byte 19: invalid continuation byte); save it as UTF-8"
    result, text = _cli("bench", str(path))
    assert result.exit_code == 2 and "not UTF-8" in text


def test_a_deeply_nested_config_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("models: " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(ConfigError, match="nested too deeply") as info:
        load_config(path)
    assert "\n" not in str(info.value)
    result, text = _cli("bench", str(path))
    assert result.exit_code == 2 and "nested too deeply" in text


def _config(tmp_path: Path, output_dir: Path) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(f"models: [{{name: scripted, provider: scripted}}]\nrun: {{output_dir: '{output_dir}'}}\n")
    return path


def _unwritable(tmp_path: Path) -> Path:
    if os.geteuid() == 0:  # root writes through any mode bits; sysfs takes no new folders from anyone
        return Path("/sys/sgr-bench-run")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return folder / "run"


@pytest.mark.parametrize(("where", "reason"), [
    (lambda tmp: tmp / "a-file", "it is a file, not a folder"),
    (lambda tmp: tmp / "a-file" / "run", "Not a directory"),
    (_unwritable, "Operation not permitted|Permission denied"),
])
def test_an_output_dir_that_cannot_take_files_is_one_line(tmp_path: Path, where, reason: str) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    output_dir = where(tmp_path)
    config = _config(tmp_path, output_dir)
    with pytest.raises(ConfigError, match=f"{config}: run.output_dir: cannot use {output_dir} as the run folder: "
                                          f"({reason})"):
        make_output_dir(output_dir, config)
    result, text = _cli("bench", str(config))
    assert result.exit_code == 2 and "run.output_dir: cannot use" in text
    assert (tmp_path / "a-file").read_text() == "not a folder"  # nothing lost


def test_a_writable_output_dir_is_made_and_left_clean(tmp_path: Path) -> None:
    make_output_dir(tmp_path / "new" / "run", "bench.yaml")
    assert list((tmp_path / "new" / "run").iterdir()) == []  # the write check leaves no file behind


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_a_deeply_nested_task_file_is_a_problem_not_a_recursion_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text('{"task_id": "x", "metadata": ' + "[" * DEEP + "]" * DEEP + "}\n")
    with pytest.raises(TaskLoadError, match="nested too deeply"):
        load_tasks(path)
    result, text = _cli("tasks", "validate", "--tasks", str(path), "--json")
    assert result.exit_code == 1 and "nested too deeply" in text


def test_a_deeply_nested_json_string_inside_a_record_is_a_problem(tmp_path: Path) -> None:
    """The `*_hf.jsonl` form carries metadata as a JSON string, decoded while the record validates."""
    path = tmp_path / "goal_hf.jsonl"
    nested = "[" * DEEP + "]" * DEEP
    path.write_text('{"task_id": "x-g", "domain": "D", "instruction": "i", "output_format": "o", '
                    f'"oracle_answer": "a", "metadata": "{nested}", "rubric": {{}}}}\n')
    with pytest.raises(TaskLoadError, match="nested too deeply"):
        load_tasks(path)
