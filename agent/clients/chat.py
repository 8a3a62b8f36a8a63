"""Chat model factory: any OpenAI-compatible endpoint through `ChatOpenAI` (agent/clients/policies.py wraps it).

Errors by cause. The OpenAI SDK retries 408/409/429/5xx, timeouts and connection errors with exponential
backoff (honouring `Retry-After`; `max_retries` from the model config): what still fails is infrastructure.
It never retries 400/401/403/404/422: a bad request, key or model name is a configuration error, reported
at once (`llm_error_kind`). The key is read from the environment variable *named* in the config at call
time and handed over as a `SecretStr`, so it never reaches a config dump, a log line, a trace or a transcript.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from agent.clients.transcript import TranscriptRecorder
from browser.trace import register_secret, url_query_secrets
from graph.model_io.llm_errors import (
    CONFIG_STATUSES as CONFIG_STATUSES,  # re-exported: error classes live below
)
from graph.model_io.llm_errors import describe_llm_error as describe_llm_error
from graph.model_io.llm_errors import llm_error_kind as llm_error_kind
from graph.settings import ModelConfig
from graph.settings import step_cost as step_cost  # re-exported: the cost lives below agent/ and graph/


class MissingApiKey(RuntimeError):
    """The environment variable named by `api_key_env` is not set."""


class ModelNotServed(RuntimeError):
    """A `local` model without a `base_url`: nothing started its server."""


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` whose assistant turns with tool calls carry `content: ""` instead of `null`: llama.cpp's
    server (llama-cpp-python) rejects `null` with HTTP 500 (found by our first local-model run; transcript in
    tests/data/transcripts/), and OpenAI, vLLM and OpenRouter accept both."""

    def _get_request_payload(self, input_, *, stop=None, **kwargs):  # noqa: ANN001, ANN003 - as in the base
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        for message in payload.get("messages") or []:
            if message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
        return payload


def make_chat_model(model: ModelConfig, task_id: str, *, transcript: Path | None = None) -> BaseChatModel:
    """`transcript` is where every request/response pair with a real model is appended."""
    if model.provider == "play" and not model.base_url:
        raise ModelNotServed(f"model {model.name!r}: nothing is playing it; `sgr play` or `sgr run --model play` "
                             "start the play server")
    if model.provider == "local" and not model.base_url:
        raise ModelNotServed(f"model {model.name!r}: the local server is not running; `sgr run`/`sgr bench` start "
                             "it, or run `sgr model serve` and set base_url")
    key = model.api_key()
    register_secret(key)  # whatever the variable is called, no artefact or message may carry it
    for secret in url_query_secrets(model.base_url or ""):  # a key in the base_url's query string, likewise
        register_secret(secret)
    if key is None and model.api_key_env is not None:
        raise MissingApiKey(f"model {model.name!r}: environment variable {model.api_key_env} is not set")
    extra = {"http_async_client": TranscriptRecorder(transcript).async_client(model.timeout)} if transcript else {}
    return CompatibleChatOpenAI(
        model=model.model or model.name,
        base_url=model.base_url,
        api_key=SecretStr(key or "not-needed"),  # a local server without auth still wants a header value
        temperature=model.temperature,
        timeout=model.timeout,
        max_retries=model.max_retries,
        use_responses_api=False,  # chat completions: what vLLM, llama.cpp and OpenRouter all speak
        max_tokens=model.max_output_tokens,
        **extra,
    )
