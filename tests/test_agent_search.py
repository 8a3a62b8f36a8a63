"""Web search: Serper over HTTP (a loopback stand-in), offered to the actor only when the protocol enables it."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import agent.search as search_module
from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy
from agent.solve import solve_task
from graph.tools.tool_schemas import ToolCallError, parse_tool_call, tool_schemas
from tasks.loaders import load_tasks

SEEN: list[tuple[str, dict]] = []


async def serper(request: Request) -> JSONResponse:
    SEEN.append((request.headers.get("x-api-key", ""), await request.json()))
    return JSONResponse({"organic": [
        {"title": "Vulnerability records", "link": "http://127.0.0.1:1/vulns/", "snippet": "official search"},
        {"title": "Other", "link": "http://example.invalid/"}]})


@pytest.fixture
def serper_endpoint(monkeypatch):
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/search", serper, methods=["POST"])]),
                                           host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    monkeypatch.setattr(search_module, "SERPER_URL", f"http://127.0.0.1:{port}/search")
    monkeypatch.setenv("SERPER_API_KEY", "serper-test-key")
    SEEN.clear()
    yield
    server.should_exit = True
    thread.join(timeout=10)


def test_search_tool_is_offered_only_when_enabled():
    assert "web_search" in {t["function"]["name"] for t in tool_schemas(search=True)}
    assert "web_search" not in {t["function"]["name"] for t in tool_schemas(search=False)}
    with pytest.raises(ToolCallError, match="unknown tool 'web_search'"):
        parse_tool_call("web_search", {"query": "x"}, search=False)


async def test_serper_results_reach_the_actor_through_the_graph(serper_endpoint, tmp_path):
    task = load_tasks("offline", origin="http://127.0.0.1:1", task_ids=["offline_vulns_001-g"])[0]
    chat = ScriptedPolicy(steps=[{"tool": "web_search", "args": {"query": "vulnerability records search"}},
                                    {"tool": "finish", "args": {}}])
    protocol = ProtocolConfig(search=True, give_start_url=False)
    outcome = await solve_task(task, browser=None, model=ModelConfig(name="scripted", provider="scripted"),
                               variant=AgentVariant(name="no-verifier", ablate=["verifier"]), protocol=protocol,
                               out_dir=tmp_path, policy=chat)
    assert SEEN == [("serper-test-key", {"q": "vulnerability records search", "num": 8})]
    assert any("- Vulnerability records http://127.0.0.1:1/vulns/\n  official search" in m for m in chat.transcript)
    assert outcome.answer == "NONE" and outcome.stop_reason == "finished"
    assert "serper-test-key" not in (tmp_path / "steps.jsonl").read_text()
