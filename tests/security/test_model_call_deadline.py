"""Issue 29 item 2 (and item 1's done-when): an endpoint that sends its reply one byte at a time got past the
request timeout and the wall budget; `sgr run` was still running at 300 s with no outcome written, and a bench
over NONE tasks whose endpoint hangs reported them solved. Every model call now has a total deadline (never past
the wall budget), a step running past the wall budget is interrupted, and `sgr run` has the bench's hard stop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.rundir.cells import load_records
from tests.security.slow_endpoint import TrickleEndpoint
from tests.security.test_failed_run_no_answer import none_tasks

ROOT = Path(__file__).resolve().parents[2]
WALL = 20
pytestmark = pytest.mark.slow


def sgr(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _model(endpoint: TrickleEndpoint) -> str:
    # a per-request timeout of 5 s that each byte (every 3 s) renews; retries would not end it either
    return (f"models: [{{name: trickle, provider: openai, model: m, base_url: '{endpoint.base_url}', "
            "api_key_env: null, timeout: 5, max_retries: 2}]\n")


def test_model_call_deadline_sgr_run_ends_within_its_wall_budget(tmp_path: Path):
    with TrickleEndpoint(interval=3.0) as endpoint:
        config = tmp_path / "run.yaml"
        # `sgr run` is one bench cell: an infra error is retried as `run.retries` says; none here, so the one
        # attempt's deadline is what is measured
        config.write_text(_model(endpoint) + f"protocol: {{budgets: {{wall_seconds: {WALL}}}}}\n"
                          "agent: {trace: false}\nrun: {retries: 0, check_endpoints: false}\n", encoding="utf-8")
        done = sgr("run", "--task", "offline_stats_001", "--config", str(config), "--out", str(tmp_path / "runs"),
                   timeout=WALL + 240)  # the process also starts Python, the offline sites and Chromium
        assert endpoint.requests >= 1
    assert done.returncode == 1, done.stderr[-2000:]
    run_dir = tmp_path / "runs" / "offline_stats_001" / "trickle" / "full"
    started = json.loads((run_dir / "steps.jsonl").read_text().splitlines()[0])
    assert started["event"] == "start"
    written = (run_dir / "outcome.json").stat().st_mtime  # the wall budget counts from the run's start
    assert written - started["t"] < WALL + 10, (written - started["t"], done.stderr[-2000:])
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert outcome["error_kind"] == "infra" and "total deadline" in outcome["error"]
    score = json.loads((run_dir / "score.json").read_text())
    assert score["exact_match"] is False and score["evidence"]["prediction_status"] == "no_answer"
    assert "no answer" in done.stderr


def test_model_call_deadline_bench_over_none_tasks_with_a_hung_endpoint_scores_zero(tmp_path: Path):
    with TrickleEndpoint(interval=3.0) as endpoint:
        source = none_tasks(tmp_path, 4, start_url=endpoint.base_url)
        config = tmp_path / "bench.yaml"
        config.write_text(_model(endpoint) + f"datasets: [{{suite: sgrbench, source: '{source}'}}]\n"
                          "protocol: {budgets: {wall_seconds: 8}}\n"
                          "agent: {trace: false}\n"
                          f"run: {{output_dir: '{tmp_path / 'bench'}', concurrency: 2, retries: 0, check_endpoints: false}}\n",
                          encoding="utf-8")
        done = sgr("bench", str(config), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    records = load_records(tmp_path / "bench")
    assert len(records) == 4 and all(r.failed for r in records)
    assert all(r.metrics["em"] == 0.0 and r.outcome.error_kind == "infra" for r in records)
    [overall] = json.loads((tmp_path / "bench" / "summary.json").read_text())["overall"]
    assert (overall["n"], overall["failed"], overall["em"], overall["item_f1"]) == (4, 4, 0.0, 0.0)
    assert "have no answer" in (tmp_path / "bench" / "summary.md").read_text()


def test_model_call_deadline_a_step_past_the_wall_budget_is_interrupted(tmp_path: Path):
    """A page whose script never yields (a JS busy loop) held its step for a whole action timeout past the wall
    budget (97.7 s against 60 s). The step is now interrupted at the budget and its page closed."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from agent.measuring.fake_server import FakeOpenAIServer
    from tasks.offline.server import ThreadedServer, free_port

    port = free_port("127.0.0.1")
    busy = f"http://127.0.0.1:{port}/busy.html"
    app = Starlette(routes=[Route("/busy.html", lambda r: HTMLResponse("<title>busy</title><script>for(;;){}</script>")),
                            Route("/", lambda r: HTMLResponse("<title>start</title><p>start</p>"))])
    wall = 12
    with ThreadedServer(app, "127.0.0.1", port, "sgr-busy-site"), \
            FakeOpenAIServer([{"tool_calls": [{"name": "goto", "arguments": {"url": busy}}]}] * 5) as fake:
        source = none_tasks(tmp_path, 1, start_url=f"http://127.0.0.1:{port}/")
        config = tmp_path / "run.yaml"
        config.write_text(f"models: [{{name: busy, provider: openai, model: m, base_url: '{fake.base_url}', "
                          "api_key_env: null, max_retries: 0}]\n"
                          f"protocol: {{budgets: {{wall_seconds: {wall}}}}}\nagent: {{trace: false}}\nrun: {{check_endpoints: false}}\n")
        done = sgr("run", "--task", "none_task_001", "--tasks", str(source), "--config", str(config), "--ablate",
                   "planner", "--out", str(tmp_path / "runs"), timeout=wall + 240)
    assert done.returncode == 1, done.stderr[-2000:]
    run_dir = tmp_path / "runs" / "none_task_001" / "busy" / "no-planner"
    started = json.loads((run_dir / "steps.jsonl").read_text().splitlines()[0])
    assert (run_dir / "outcome.json").stat().st_mtime - started["t"] < wall + 10
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert outcome["error_kind"] == "timeout" and "ran past the wall budget" in outcome["error"]
    assert json.loads((run_dir / "score.json").read_text())["evidence"]["prediction_status"] == "no_answer"
