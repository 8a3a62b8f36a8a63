"""The OpenAI wire path: real HTTP through `ChatOpenAI` to a local OpenAI-compatible server.

The server speaks the chat-completions wire format (tool calls, usage, 429/5xx with Retry-After). Its
replies come from a queue of canned responses, or from the scripted walkthrough policy itself, so a whole
offline task can run through the real client, retries and tool-call parsing.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agent.clients.chat import MissingApiKey, make_chat_model
from agent.clients.policies import needs_key
from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from graph.model_io.policy import TurnState
from graph.tools.tool_schemas import plan_tool, tool_schemas
from tasks.loaders import load_tasks

KEY_ENV = "SGR_TEST_LLM_KEY"
KEY = "sk-test-not-a-real-key-0123456789"


def completion(name: str, args: dict[str, Any], call_id: str = "call-1", prompt_tokens: int = 120) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "local-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)}}]}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7},
    }


@dataclass
class FakeOpenAI:
    """Loopback chat-completions endpoint; `reply(body)` returns (status, json) for each request."""

    reply: Callable[[dict[str, Any]], tuple[int, dict[str, Any]]] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    origin: str = ""

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.auth.append(request.headers.get("authorization", ""))
        assert self.reply is not None
        status, payload = self.reply(body)
        headers = {"retry-after-ms": "10"} if status in (429, 500, 503) else {}
        return JSONResponse(payload, status_code=status, headers=headers)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    app = Starlette(routes=[Route("/v1/chat/completions", fake.chat, methods=["POST"])])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    fake.origin = f"http://127.0.0.1:{port}"
    yield fake
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def model_config(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> ModelConfig:
    monkeypatch.setenv(KEY_ENV, KEY)
    return ModelConfig(name="local", model="local-test", base_url=fake_openai.origin + "/v1", api_key_env=KEY_ENV,
                       max_retries=2, timeout=30, price_per_1k_prompt=0.5, price_per_1k_completion=1.0)


def queue(*replies: tuple[int, dict[str, Any]]):
    pending = list(replies)
    return lambda body: pending.pop(0)


async def test_rate_limit_then_success_is_retried_and_parsed(fake_openai, model_config):
    fake_openai.reply = queue((429, {"error": {"message": "slow down", "type": "rate_limit"}}),
                              (503, {"error": {"message": "overloaded"}}),
                              (200, completion("select", {"target": {"label": "Agency"}, "option": "EPA"})))
    chat = make_chat_model(model_config, "t-1").bind_tools(tool_schemas(search=False))
    ai = await chat.ainvoke([SystemMessage("sys"), HumanMessage("go")])
    assert len(fake_openai.requests) == 3
    assert ai.tool_calls == [{"name": "select", "args": {"target": {"label": "Agency"}, "option": "EPA"},
                              "id": "call-1", "type": "tool_call"}]
    assert ai.usage_metadata["input_tokens"] == 120 and ai.usage_metadata["output_tokens"] == 7
    assert fake_openai.auth == [f"Bearer {KEY}"] * 3
    sent = fake_openai.requests[-1]
    assert sent["model"] == "local-test" and sent["temperature"] == 0.0
    assert {t["function"]["name"] for t in sent["tools"]} >= {"select", "read_table", "extract_rows", "finish"}


async def test_planner_is_forced_to_the_plan_tool(fake_openai, model_config):
    fake_openai.reply = queue((200, completion("Plan", {"gates": [{"kind": "filter", "name": "Agency",
                                                                   "target": {"value": "EPA"}}]})))
    chat = make_chat_model(model_config, "t-1").bind_tools([plan_tool()], tool_choice="Plan")
    ai = await chat.ainvoke([HumanMessage("plan")])
    assert ai.tool_calls[0]["name"] == "Plan"
    assert fake_openai.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "Plan"}}


async def test_local_server_without_a_key(fake_openai, monkeypatch):
    """`api_key_env: null` (vLLM / llama.cpp without auth) needs no variable and is never a 'missing key'."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = ModelConfig(name="vllm", model="local-test", base_url=fake_openai.origin + "/v1", api_key_env=None)
    assert not needs_key(local) and local.api_key() is None
    fake_openai.reply = queue((200, completion("back", {})))
    ai = await make_chat_model(local, "t-1").bind_tools(tool_schemas(search=False)).ainvoke([HumanMessage("go")])
    assert ai.tool_calls[0]["name"] == "back"
    assert fake_openai.auth == ["Bearer not-needed"]


def test_missing_key_names_the_variable_and_never_the_value(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(MissingApiKey, match=KEY_ENV):
        make_chat_model(ModelConfig(name="m", api_key_env=KEY_ENV), "t")
    monkeypatch.setenv(KEY_ENV, KEY)
    chat = make_chat_model(ModelConfig(name="m", api_key_env=KEY_ENV), "t")
    assert KEY not in repr(chat) and KEY not in json.dumps(ModelConfig(name="m", api_key_env=KEY_ENV).model_dump())


# ---------------------------------------------------------------- a whole task over the wire


def to_messages(wire: list[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in wire:
        if m["role"] == "system":
            out.append(SystemMessage(m["content"]))
        elif m["role"] == "user":
            out.append(HumanMessage(m["content"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
        else:
            calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]), "id": c["id"]}
                     for c in m.get("tool_calls") or []]
            out.append(AIMessage(m.get("content") or "", tool_calls=calls))
    return out


class PolicyServer:
    """Replies with what the scripted policy decides on the received conversation; the first call is
    rate-limited and one actor turn gets an invalid tool call, to exercise retry and validation feedback."""

    def __init__(self, policy: ScriptedPolicy, invalid_on_turn: int):
        self.policy, self.invalid_on_turn, self.turns, self.rate_limited = policy, invalid_on_turn, 0, False
        self.feedback_seen: list[str] = []

    def __call__(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not self.rate_limited:
            self.rate_limited = True
            return 429, {"error": {"message": "rate limited"}}
        messages = to_messages(body["messages"])
        self.feedback_seen += [str(m.content) for m in messages if isinstance(m, ToolMessage)
                               and str(m.content).startswith("INVALID TOOL CALL")]
        choice = body.get("tool_choice")
        planner = isinstance(choice, dict) and choice["function"]["name"] == "Plan"
        if not planner:
            self.turns += 1
            if self.turns == self.invalid_on_turn:
                return 200, completion("select", {"target": {"label": "Vendor"}}, call_id=f"bad-{self.turns}")
        tools = body.get("tools") or []
        # the server's handler runs inside its own event loop, so the policy's coroutine runs on a thread of its
        # own; over the wire the policy sees no typed state, which a walkthrough without repairs does not need
        decision = self.policy.plan(messages, tools[0]) if planner else self.policy.act(messages, tools, TurnState())
        with ThreadPoolExecutor(1) as pool:
            decided = pool.submit(asyncio.run, decision).result()
        call = decided.tool_calls[0]
        return 200, completion(call["name"], call["args"], call_id=call["id"])


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_offline_task_through_chat_openai_reaches_exact_match(fake_openai, model_config, offline_server,
                                                                    chromium_worker, tmp_path):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_stats_001"])[0]
    server = PolicyServer(ScriptedPolicy(steps=load_walkthrough(task.task_id, origin=offline_server.origin)),
                          invalid_on_turn=2)
    fake_openai.reply = server
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=model_config, variant=AgentVariant(name="full"),
                                   protocol=ProtocolConfig(), out_dir=tmp_path)
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome
    assert server.feedback_seen and "option: Field required" in server.feedback_seen[0]
    calls = len(fake_openai.requests) - 1  # minus the rate-limited attempt
    assert outcome.prompt_tokens == 120 * calls and outcome.completion_tokens == 7 * calls
    assert outcome.cost_usd == pytest.approx((120 * 0.5 + 7 * 1.0) * calls / 1000)
    trace = (tmp_path / "steps.jsonl").read_text() + (tmp_path / "retrieval_state.json").read_text()
    assert KEY not in trace
