"""Issue 21 item 5: an endpoint that echoes the API key in its 401 text made `sgr run` print it and write it
into `outcome.json`, and the LangGraph checkpoint databases (`checkpoints.sqlite`, a bench cell's sqlite)
held it. Redaction now happens before anything is persisted or printed; these tests grep every byte of the
run folders, sqlite files included, for the key."""

from __future__ import annotations

import operator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from typer.testing import CliRunner

from agent.cli import app
from agent.measuring.fake_server import FakeOpenAIServer
from agent.rundir.checkpoints import open_checkpointer
from browser.trace import REDACTED, register_secret

# A key matching none of the redactor's patterns, in a variable whose name has no secret-looking suffix:
# only the mechanism (the key registered where it is read) can find it.
KEY_ENV = "SGR_TEST_ENDPOINT_CRED"
KEY = "zq8Vw3nLp0aK7mT4xY2bR9cQ"
UNIT_KEY = "Jw5rT8kQ2mX9vB3nZ7pL4cY6"  # registered by hand in the checkpoint test; KEY only where the run reads it
ECHO_401 = {"status": 401, "error": "Incorrect API key provided: {api_key}. You can find your key at ..."}


def _files_holding(root: Path, key: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and key.encode() in p.read_bytes())


class _State(TypedDict):
    messages: Annotated[list, operator.add]
    errors: Annotated[list, operator.add]


async def test_secrets_checkpoint_database_never_holds_the_key(tmp_path: Path):
    register_secret(UNIT_KEY)

    async def leaks(state: _State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"the key is {UNIT_KEY}", tool_calls=[{"name": "goto", "id": "c1",
                                                                          "args": {"url": f"http://h/?k={UNIT_KEY}"}}]),
                             ToolMessage(f"401: {UNIT_KEY}", tool_call_id="c1")],
                "errors": [{"message": f"HTTP 401 Incorrect API key provided: {UNIT_KEY}"}]}

    async def raises(state: _State) -> dict[str, Any]:
        raise RuntimeError(f"Incorrect API key provided: {UNIT_KEY}")  # kept as the task's pending ERROR write

    builder = StateGraph(_State)
    builder.add_node("leaks", leaks)
    builder.add_node("raises", raises)
    builder.add_edge(START, "leaks")
    builder.add_edge("leaks", "raises")
    builder.add_edge("raises", END)
    db = tmp_path / "checkpoints.sqlite"
    config = {"configurable": {"thread_id": "t"}}
    async with AsyncExitStack() as stack:
        graph = builder.compile(checkpointer=await open_checkpointer(stack, db))
        with pytest.raises(RuntimeError):
            await graph.ainvoke({"messages": [], "errors": []}, config)
        state = (await graph.aget_state(config)).values  # read back: redacted, still the same types
    assert isinstance(state["messages"][0], AIMessage) and state["messages"][0].content == f"the key is {REDACTED}"
    assert state["messages"][0].tool_calls[0]["args"]["url"] == f"http://h/?k={REDACTED}"
    assert state["errors"][0]["message"].endswith(REDACTED)
    assert db.stat().st_size > 0 and _files_holding(tmp_path, UNIT_KEY) == []


def _config(tmp_path: Path, base_url: str) -> Path:
    config = tmp_path / "bench.yaml"
    config.write_text(
        f"models: [{{name: echo, provider: openai, model: m, base_url: '{base_url}', api_key_env: {KEY_ENV}, "
        "max_retries: 0}]\n"
        "datasets: [{suite: offline, task_ids: [offline_stats_001]}]\n"
        "agent: {trace: true, screenshots: false}\n"
        f"run: {{output_dir: '{tmp_path / 'bench'}', concurrency: 1, retries: 0}}\n")
    return config


@pytest.mark.slow
def test_secrets_echoed_401_never_printed_or_written_by_sgr_run_or_bench(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAIServer([], fallback=ECHO_401) as fake:
        config = _config(tmp_path, fake.base_url)
        run = CliRunner().invoke(app, ["run", "--task", "offline_stats_001", "--config", str(config),
                                       "--out", str(tmp_path / "runs")])
        bench = CliRunner().invoke(app, ["bench", str(config)])
        assert fake.requests  # the endpoint was asked (and answered 401 with the key)
    assert run.exit_code == 1, run.output  # the run stopped with a configuration error ...
    assert "config error" in run.output and "HTTP 401" in run.output
    assert KEY not in run.output and REDACTED in run.output  # ... whose echoed key was redacted
    assert bench.exit_code == 0, bench.output
    assert KEY not in bench.output
    run_dir = tmp_path / "runs" / "offline_stats_001" / "echo" / "full"
    assert REDACTED in (run_dir / "outcome.json").read_text()
    # a finished run's checkpoints are deleted (docs/configuration.md); what the checkpointer writes while a run goes
    # is checked by the test above
    assert not [*tmp_path.rglob("*.sqlite")]
    assert _files_holding(tmp_path, KEY) == []
