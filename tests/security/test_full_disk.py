"""Issue 29 item 4: a full disk ended `sgr bench` with a traceback (no cell was lost, and the rerun was clean).
It is now one line, the cell being written stays unfinished, and the same command then finishes it."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agent.runner.bench as bench_module
from agent.cli import app
from agent.rundir.cells import load_records

pytestmark = pytest.mark.slow


def test_full_disk_is_one_line_and_the_cell_stays_unfinished(tmp_path: Path, monkeypatch):
    config = tmp_path / "bench.yaml"
    run_dir = tmp_path / "run"
    config.write_text("models: [{name: walkthrough, provider: scripted}]\n"
                      "datasets: [{suite: offline, task_ids: [offline_stats_001]}]\n"
                      "agent: {trace: false}\n"
                      f"run: {{output_dir: '{run_dir}', concurrency: 1, html_report: false}}\n", encoding="utf-8")
    written = bench_module.write_json_atomic

    def disk_full(path: Path, data: object) -> None:
        if Path(path).name == "cell.json":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        written(path, data)

    monkeypatch.setattr(bench_module, "write_json_atomic", disk_full)
    full = CliRunner().invoke(app, ["bench", str(config)])
    assert full.exit_code == 2, full.output
    assert "No space left on device" in full.output and "run the same command again" in full.output
    assert full.exception is None or isinstance(full.exception, SystemExit)  # no traceback
    assert load_records(run_dir) == []  # the cell is not finished
    monkeypatch.setattr(bench_module, "write_json_atomic", written)
    again = CliRunner().invoke(app, ["bench", str(config)])
    assert again.exit_code == 0, again.output
    [record] = load_records(run_dir)
    assert record.task_id == "offline_stats_001" and not record.failed
