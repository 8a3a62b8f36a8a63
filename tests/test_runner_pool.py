"""The runner's own guarantees, each with an agent that misbehaves on purpose in a real Chromium:
a hung task is cancelled from outside and recorded without blocking the pool; a browser crash is an
infrastructure error that is retried on a fresh browser; an agent error is recorded, not retried."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from rich.console import Console

import agent.runner.bench as bench
from agent.outcome import TaskOutcome
from agent.rundir.cells import load_records
from agent.runner.bench import run_bench

SAMPLE = Path(__file__).resolve().parent / "data" / "sgrbench_sample"
QUIET = Console(quiet=True)
pytestmark = pytest.mark.slow


def _config(tmp_path: Path, task_ids: list[str], *, wall: float = 600, margin: float = 60, retries: int = 2,
            concurrency: int = 1) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(
        "models: [{name: stand-in, provider: scripted}]\n"
        f"datasets: [{{suite: sgrbench, source: '{SAMPLE}', task_ids: {json.dumps(task_ids)}}}]\n"
        f"protocol: {{budgets: {{wall_seconds: {wall}}}}}\n"
        "agent: {trace: false}\n"
        f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: {concurrency}, retries: {retries}, "
        f"retry_backoff_seconds: 0.1, hard_timeout_margin_seconds: {margin}, html_report: false}}\n"
    )
    return path


def _outcome(task, model, variant, answer: str = "", **fields) -> TaskOutcome:
    return TaskOutcome(task_id=task.task_id, model=model.name, variant=variant.name, answer=answer, **fields)


async def test_hung_task_is_cancelled_recorded_and_does_not_block(tmp_path: Path) -> None:
    async def solve(task, *, browser, model, variant, protocol, out_dir, token_budget, **_):
        await browser.observe()
        if task.task_id == "arxiv_001":
            await asyncio.sleep(3600)
        return _outcome(task, model, variant, task.oracle_answer, steps=1)

    config = _config(tmp_path, ["arxiv_001", "nvd_005"], wall=1.0, margin=14.0)  # room for a relaunch under load
    result = await run_bench(config, solve=solve, console=QUIET)
    records = {r.task_id: r for r in load_records(result.run_dir)}
    hung, fine = records["arxiv_001"], records["nvd_005"]
    assert hung.timed_out and hung.outcome.stop_reason == "wall_time" and hung.outcome.error_kind == "timeout"
    assert "cancelled by the runner after 15 s" in hung.outcome.error
    assert hung.metrics["item_f1"] == 0.0 and hung.attempts == []
    assert not fine.failed and fine.metrics["em"] == 1.0
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["overall"][0]["failed"] == 1


async def test_browser_crash_is_retried_on_a_fresh_browser(tmp_path: Path) -> None:
    tries: list[int] = []

    async def solve(task, *, browser, model, variant, protocol, out_dir, token_budget, **_):
        tries.append(1)
        if len(tries) == 1:
            pid = await browser.worker.browser_pid()
            os.kill(pid, signal.SIGKILL)
            for _ in range(100):  # until the process is gone, then give Playwright time to notice
                if not Path(f"/proc/{pid}").exists():
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)
        await browser.observe()  # raises on the dead browser; fine on the fresh one
        return _outcome(task, model, variant, task.oracle_answer, steps=1)

    result = await run_bench(_config(tmp_path, ["nvd_005"]), solve=solve,
                             console=QUIET)
    [record] = load_records(result.run_dir)
    assert len(tries) == 2
    assert [a.error_kind for a in record.attempts] == ["infra"]
    assert not record.failed and record.metrics["em"] == 1.0


async def test_agent_error_is_recorded_not_retried(tmp_path: Path) -> None:
    tries: list[int] = []

    async def solve(task, *, browser, model, variant, protocol, out_dir, token_budget, **_):
        tries.append(1)
        raise KeyError("a bug in the agent")

    result = await run_bench(_config(tmp_path, ["nvd_005"]), solve=solve,
                             console=QUIET)
    [record] = load_records(result.run_dir)
    assert len(tries) == 1 and record.attempts == []
    assert record.outcome.error_kind == "bug" and "a bug in the agent" in record.outcome.error
    assert record.outcome.traceback and "KeyError" in record.outcome.traceback
    assert record.failed and record.metrics == {"em": 0.0, "item_f1": 0.0, "row_f1": 0.0, "poa": 0.0}


async def test_infra_errors_stop_after_the_retry_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tries: list[int] = []

    async def solve(task, *, browser, model, variant, protocol, out_dir, token_budget, **_):
        tries.append(1)
        return _outcome(task, model, variant, stop_reason="error", error="HTTP 503 from the endpoint",
                        error_kind="infra")

    result = await run_bench(_config(tmp_path, ["nvd_005"], retries=2), solve=solve,
                             console=QUIET)
    [record] = load_records(result.run_dir)
    assert len(tries) == 3 and len(record.attempts) == 2
    assert record.outcome.error_kind == "infra" and record.failed
    assert bench.is_finished(result.run_dir, record.key)


async def test_a_browser_that_cannot_start_stops_the_run_before_any_cell(tmp_path: Path) -> None:
    from browser.session import ChromiumWorker

    async def broken_worker():
        return ChromiumWorker(executable="/bin/false")  # exists, is executable, is not a browser

    async def solve(task, **_):
        raise AssertionError("must not run")

    with pytest.raises(bench.BrowserUnavailable, match="the browser cannot start"):
        await run_bench(_config(tmp_path, ["nvd_005"]), solve=solve, worker_factory=broken_worker, console=QUIET)
    assert not list((tmp_path / "run").glob("cells/**/cell.json"))
