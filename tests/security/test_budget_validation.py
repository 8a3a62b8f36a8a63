"""Issue 21, item 9: budgets that leave no room to act are refused when the config loads.

`wall_seconds: -5` or `max_steps: 0` used to be accepted: such a cell ended "ok" with F1 0 having done
nothing, and counted as finished on resume. Reproduced through `load_config`, `sgr bench` and the model
itself (every way a runner gets its budgets).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agent.cli import app
from agent.config import Budgets, ConfigError, load_config

BAD_BUDGETS = [
    ("wall_seconds", -5, "greater than 0"), ("wall_seconds", 0, "greater than 0"),
    ("no_progress_seconds", 0, "greater than 0"), ("max_steps", 0, "greater than or equal to 1"),
    ("max_tokens", 0, "greater than or equal to 1"), ("max_repairs", -1, "greater than or equal to 0"),
]


def _config(tmp_path: Path, budgets: str, extra: str = "") -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(f"models: [{{name: s, provider: scripted{extra}}}]\n"
                    f"protocol: {{budgets: {{{budgets}}}}}\nrun: {{output_dir: '{tmp_path / 'run'}'}}\n")
    return path


@pytest.mark.parametrize(("key", "value", "message"), BAD_BUDGETS)
def test_a_budget_with_no_room_is_refused_at_load_time(tmp_path: Path, key: str, value: float, message: str) -> None:
    path = _config(tmp_path, f"{key}: {value}")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: protocol.budgets.{key}: Input should be {message}"
    with pytest.raises(ValidationError):
        Budgets(**{key: value})


def test_the_issue_case_through_sgr_bench_runs_no_cell(tmp_path: Path) -> None:
    path = _config(tmp_path, "wall_seconds: -5, max_steps: 0")
    result = CliRunner().invoke(app, ["bench", str(path)])
    assert result.exit_code == 2
    assert "protocol.budgets.wall_seconds" in result.output and "protocol.budgets.max_steps" in result.output
    assert not (tmp_path / "run").exists()  # refused before any run folder or cell


@pytest.mark.parametrize(("key", "value"), [("timeout", 0), ("max_retries", -1), ("price_per_1k_prompt", -1),
                                            ("temperature", -0.5)])
def test_model_limits_that_make_no_sense_are_refused_too(tmp_path: Path, key: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"models.0.{key}: Input should be greater than"):
        load_config(_config(tmp_path, "max_steps: 5", extra=f", {key}: {value}"))


def test_small_but_real_budgets_still_load(tmp_path: Path) -> None:
    budgets = load_config(_config(tmp_path, "wall_seconds: 0.5, max_steps: 1, max_tokens: 1, max_repairs: 0"))
    assert budgets.protocol.budgets.max_steps == 1 and budgets.protocol.budgets.max_repairs == 0
