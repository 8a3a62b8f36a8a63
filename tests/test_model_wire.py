"""The real-model wire path without a real model: `ChatOpenAI` against the fake OpenAI-compatible server.

Transcripts hold exactly what went over the wire (redacted) and replay through the fake server; HTTP errors
are classified by cause (400/401/403/404: configuration, fail fast without retries; 429/5xx: retried).
"""

from __future__ import annotations

import json

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agent.clients.chat import describe_llm_error, llm_error_kind, make_chat_model
from agent.clients.transcript import read_transcript
from agent.measuring.fake_server import FakeOpenAIServer
from agent.runner.errors import classify_exception
from graph.tools.tool_schemas import tool_schemas

SECRET_ENV = "SGR_TEST_WIRE_API_KEY"
SECRET = "sk-wire-test-0123456789abcdef"


async def test_transcript_keeps_the_exact_exchange_redacted_and_replays(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, SECRET)
    reply = {"tool_calls": [{"name": "goto", "arguments": {"url": "http://127.0.0.1:1/a"}}]}
    with FakeOpenAIServer([reply]) as fake:
        model = fake.model_config(api_key_env=SECRET_ENV)
        chat = make_chat_model(model, "t", transcript=tmp_path / "transcript.jsonl")
        ai = await chat.bind_tools(tool_schemas(search=False)).ainvoke(
            [SystemMessage("sys"), HumanMessage(f"go; my key is {SECRET}")])
    assert ai.tool_calls[0]["name"] == "goto"
    [line] = read_transcript(tmp_path / "transcript.jsonl")
    assert line["status"] == 200 and line["request"] == json.loads(json.dumps(fake.requests[0]).replace(SECRET, "[REDACTED]"))
    assert line["request"]["messages"][1]["content"] == "go; my key is [REDACTED]"
    assert line["request"]["tools"] and line["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "goto"
    assert SECRET not in (tmp_path / "transcript.jsonl").read_text()

    with FakeOpenAIServer.from_transcript(tmp_path / "transcript.jsonl") as replay:
        again = await make_chat_model(replay.model_config(), "t").bind_tools(tool_schemas(search=False)).ainvoke(
            [HumanMessage("anything")])
    assert again.tool_calls == [{**ai.tool_calls[0], "id": again.tool_calls[0]["id"]}]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_configuration_errors_fail_fast_without_retries(status):
    with FakeOpenAIServer([{"status": status, "error": "nope"}] * 3) as fake:
        chat = make_chat_model(fake.model_config(max_retries=2), "t")
        with pytest.raises(openai.APIStatusError) as caught:
            await chat.ainvoke([HumanMessage("go")])
    assert len(fake.requests) == 1  # no retry
    assert llm_error_kind(caught.value) == "config" and classify_exception(caught.value) == "config"
    assert f"HTTP {status}" in describe_llm_error(caught.value, fake.model_config())


async def test_rate_limits_and_server_errors_are_retried_then_infrastructure():
    with FakeOpenAIServer([{"status": 429}, {"status": 503}, {"content": "ok"}]) as fake:
        ai = await make_chat_model(fake.model_config(max_retries=2), "t").ainvoke([HumanMessage("go")])
    assert ai.content == "ok" and len(fake.requests) == 3
    with FakeOpenAIServer([{"status": 500}] * 2) as fake, pytest.raises(openai.InternalServerError) as caught:
        await make_chat_model(fake.model_config(max_retries=1), "t").ainvoke([HumanMessage("go")])
    assert len(fake.requests) == 2 and llm_error_kind(caught.value) == "infra"


async def test_assistant_tool_call_turns_are_sent_with_empty_content_not_null():
    """llama.cpp's server answers `content: null` with a 500 (our first local run hit it); we send ''."""
    from langchain_core.messages import AIMessage, ToolMessage

    history = [HumanMessage("go"), AIMessage("", tool_calls=[{"name": "goto", "args": {"url": "http://x/"}, "id": "c1"}]),
               ToolMessage("ok=True", tool_call_id="c1"), HumanMessage("next")]
    with FakeOpenAIServer([{"content": "fine"}], llama_cpp=True) as fake:
        ai = await make_chat_model(fake.model_config(), "t").ainvoke(history)
    assert ai.content == "fine" and fake.requests[0]["messages"][1]["content"] == ""
