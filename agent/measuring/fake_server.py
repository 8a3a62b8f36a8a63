"""A fake OpenAI-compatible chat server on loopback that replays scripted or recorded responses.

Tests drive the real `ChatOpenAI` client (HTTP, JSON, tool-call parsing) against it, so imperfect model
output - prose instead of a tool call, several calls, malformed JSON arguments, HTTP errors - goes through
the same wire path as a real endpoint. A recorded transcript (`agent.clients.transcript`) replays a real run.

Each reply is one of:
- a full chat-completion response body (as recorded in a transcript), or
- shorthand: `{"content": "..."}`, `{"tool_calls": [{"name": ..., "arguments": <dict or raw JSON text>}]}`,
  `{"status": 429, "error": "..."}` (an HTTP error; 429/5xx are retried by the client; `{api_key}` in the
  error text is replaced by the request's key, like an endpoint that echoes it in its 401).
`replies` may instead be a callable: it gets each request body and returns the reply (a policy that reads
the request, e.g. `agent.models.path_replay`).

Strict by default, as a hosted API is: a request OpenAI would refuse (a tool message answering no call, a
call left unanswered, a duplicate call id: `openai_rules.py`) gets HTTP 400 with OpenAI's error text and is
kept in `rejected`; `strict=False` accepts anything. `llama_cpp=True` also refuses what llama.cpp's server
refuses (an assistant message with `content: null`, HTTP 500).
Every request body received is kept in `requests`, in order.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from agent.clients.transcript import read_transcript
from agent.config import ModelConfig
from agent.measuring.chat_endpoint import ChatEndpoint
from agent.measuring.openai_rules import error_body, request_errors

EXHAUSTED = {"status": 400, "error": "fake server: no scripted reply left"}


def completion(reply: dict[str, Any], index: int, model: str) -> dict[str, Any]:
    """A shorthand reply as a chat-completion body (a full body passes through unchanged)."""
    if "choices" in reply:
        return reply
    calls = [{"id": f"call_{index}_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                           else json.dumps(c["arguments"])}}
             for i, c in enumerate(reply.get("tool_calls") or [])]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-fake-{index}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


class FakeOpenAIServer(ChatEndpoint):
    """`with FakeOpenAIServer(replies) as fake: ModelConfig(..., base_url=fake.base_url)`."""

    def __init__(self, replies: Iterable[dict[str, Any]] | Callable[[dict[str, Any]], dict[str, Any]], *,
                 model: str = "fake-model", fallback: dict[str, Any] | None = None, strict: bool = True,
                 llama_cpp: bool = False):
        self.strict = strict
        self.llama_cpp = llama_cpp
        self.rejected: list[tuple[int, str]] = []  # (request index from 1, OpenAI's error text)
        self.responder = replies if callable(replies) else None
        self.replies = [] if callable(replies) else list(replies)
        self.model = model
        self.fallback = fallback or EXHAUSTED
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        super().__init__(model, "fake OpenAI server")

    @classmethod
    def from_transcript(cls, path: Path, **kwargs: Any) -> FakeOpenAIServer:
        """Replays a recorded run's responses in order (HTTP errors included)."""
        replies = [line["response"] if line["status"] == 200 else {"status": line["status"], "error": line["response"]}
                   for line in read_transcript(path)]
        return cls(replies, **kwargs)


    def model_config(self, **overrides: Any) -> ModelConfig:
        return ModelConfig(**{"name": "fake", "model": self.model, "base_url": self.base_url, "api_key_env": None,
                              "max_retries": 0, "timeout": 30.0, **overrides})


    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        if self.llama_cpp and any(m.get("role") == "assistant" and m.get("content") is None for m in body["messages"]):
            self.requests.append(body)
            return JSONResponse({"error": {"message": "messages: assistant content should be a valid string"}},
                                status_code=500)
        errors = request_errors(body) if self.strict else []
        with self._lock:
            self.requests.append(body)
            index = len(self.requests)
            if errors:
                self.rejected.append((index, errors[0]))
                return JSONResponse(error_body(errors[0]), status_code=400)
            if self.responder is not None:
                reply = self.responder(body)
            else:
                reply = self.replies.pop(0) if self.replies else self.fallback
        if "status" in reply and "choices" not in reply:
            # `{api_key}` in an error text echoes the request's key, as some real endpoints do in a 401
            key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            message = str(reply.get("error", "")).replace("{api_key}", key)
            return JSONResponse({"error": {"message": message, "type": "fake_error"}},
                                status_code=int(reply["status"]))
        return JSONResponse(completion(reply, index, self.model))
