"""The first hour (issue 40): a dead endpoint, a missing key and failed cells cost seconds, not the bench.

Each configured endpoint is checked with one request before the first cell (agent/clients/probe.py): a port that
refuses and a port that accepts and never answers both stop `sgr bench` and `sgr run` in under 30 s with one line
naming the base_url, and no run folder is made. `--retry-failed` reruns only the failed cells."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _sgr(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "SGR_TEST_KEY": "sk-test-probe", **(env or {})})


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never says a word."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.fixture
def refusing_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again: connecting is refused


def _config(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(
        "models:\n"
        f"  - {{name: remote, provider: openai, model: m, base_url: 'http://127.0.0.1:{port}/v1', "
        "api_key_env: SGR_TEST_KEY}\n"
        "datasets: [{suite: offline}]\n"
        f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: 1, demo_mode: true, demo_limit: 2}}\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["silent", "refusing"])
def test_bench_against_a_dead_endpoint_stops_fast_naming_the_base_url(kind: str, tmp_path: Path, request) -> None:
    port = request.getfixturevalue(f"{kind}_port")
    started = time.monotonic()
    done = _sgr("bench", str(_config(tmp_path, port)))
    assert time.monotonic() - started < 30
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"base_url http://127.0.0.1:{port}/v1" in errors[0] and "'remote'" in errors[0]
    assert "Traceback" not in done.stderr and "sk-test-probe" not in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_run_against_a_silent_endpoint_stops_fast_and_makes_no_folder(tmp_path: Path, silent_port: int) -> None:
    started = time.monotonic()
    done = _sgr("run", "--task", "offline_water_001", "--config", str(_config(tmp_path, silent_port)),
                "--out", str(tmp_path / "runs"))
    assert time.monotonic() - started < 30
    assert done.returncode == 2 and f"base_url http://127.0.0.1:{silent_port}/v1" in done.stderr
    assert "no answer within" in done.stderr and not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_missing_key_makes_no_run_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run([sys.executable, "-m", "agent.cli", "run", "--task", "offline_water_001", "--model",
                           "gpt-4.1-mini", "--out", str(tmp_path / "runs")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 2
    assert "$OPENAI_API_KEY is not set" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_silent_endpoint_is_one_line_after_the_deadline(silent_port: int, refusing_port: int) -> None:
    import asyncio

    from agent.clients.probe import EndpointUnreachable, check_endpoints
    from agent.config import ModelConfig

    models = [ModelConfig(name=f"m{p}", base_url=f"http://127.0.0.1:{p}/v1", api_key_env="SGR_TEST_KEY")
              for p in (silent_port, refusing_port)]
    started = time.monotonic()
    with pytest.raises(EndpointUnreachable) as caught:
        asyncio.run(check_endpoints(models, seconds=1.0))
    assert time.monotonic() - started < 5  # probed at once, each within its deadline
    silent, refused = str(caught.value).splitlines()
    assert f"'m{silent_port}' at base_url http://127.0.0.1:{silent_port}/v1: no answer within 1 s" in silent
    assert f"'m{refusing_port}' at base_url http://127.0.0.1:{refusing_port}/v1: cannot connect" in refused


def test_an_answering_endpoint_passes_and_a_refused_key_is_named() -> None:
    import asyncio

    from agent.clients.probe import EndpointUnreachable, check_endpoints
    from agent.config import ModelConfig
    from agent.measuring.fake_server import FakeOpenAIServer

    with FakeOpenAIServer([]) as fake:
        asyncio.run(check_endpoints([fake.model_config(), ModelConfig(name="s", provider="scripted")]))
        assert fake.requests == []  # GET /models: no scripted reply used up
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tasks.offline.server import ThreadedServer, free_port

    port = free_port("127.0.0.1")
    app = Starlette(routes=[Route("/v1/models", lambda _r: JSONResponse({"error": "bad key"}, status_code=401))])
    with ThreadedServer(app, "127.0.0.1", port, "401 server"):
        model = ModelConfig(name="keyed", base_url=f"http://127.0.0.1:{port}/v1", api_key_env="SGR_TEST_KEY")
        with pytest.raises(EndpointUnreachable, match=r"'keyed' at base_url .*refuses the key \(HTTP 401\)"):
            asyncio.run(check_endpoints([model]))


@pytest.mark.slow
async def test_retry_failed_reruns_only_the_failed_cells(tmp_path: Path) -> None:
    from rich.console import Console

    from agent.outcome import TaskOutcome
    from agent.rundir.cells import load_records
    from agent.runner.bench import run_bench

    sample = ROOT / "tests" / "data" / "sgrbench_sample"
    config = tmp_path / "bench.yaml"
    config.write_text("models: [{name: stand-in, provider: scripted}]\n"
                      f"datasets: [{{suite: sgrbench, source: '{sample}', task_ids: [arxiv_001, nvd_005]}}]\n"
                      "agent: {trace: false}\n"
                      f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: 1, retries: 0, html_report: false}}\n")
    solved: list[str] = []
    broken = {"arxiv_001"}

    async def solve(task, *, model, variant, **_):
        solved.append(task.task_id)
        if task.task_id in broken:
            return TaskOutcome(task_id=task.task_id, model=model.name, variant=variant.name, answer="NONE",
                               stop_reason="error", error_kind="config", error="Connection error.")
        return TaskOutcome(task_id=task.task_id, model=model.name, variant=variant.name, answer=task.oracle_answer)

    quiet = Console(quiet=True)
    first = await run_bench(config, solve=solve, console=quiet, write_reports=False)
    assert first.failed == 1 and sorted(solved) == ["arxiv_001", "nvd_005"]
    good = {r.task_id: r for r in load_records(first.run_dir)}["nvd_005"]
    solved.clear()
    again = await run_bench(config, solve=solve, console=quiet, write_reports=False)
    assert again.ran == 0 and solved == []  # resuming alone keeps every finished cell
    broken.clear()
    retried = await run_bench(config, solve=solve, console=quiet, write_reports=False, retry_failed=True)
    assert solved == ["arxiv_001"] and retried.ran == 1 and retried.failed == 0 and retried.skipped == 1
    records = {r.task_id: r for r in load_records(first.run_dir)}
    assert not records["arxiv_001"].failed and records["arxiv_001"].metrics["em"] == 1.0
    assert records["nvd_005"].finished_at == good.finished_at  # the good cell kept as it was


def test_retry_failed_is_an_option_of_bench_and_ablate() -> None:
    from typer.testing import CliRunner

    from agent.cli import app

    for command in ("bench", "ablate"):
        shown = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert "--retry-failed" in shown.output
