"""Chat model factory: any OpenAI-compatible endpoint through `ChatOpenAI`, or the scripted policy.

Errors by cause. The OpenAI SDK retries 408/409/429/5xx, timeouts and connection errors with exponential
backoff (honouring `Retry-After`; `max_retries` from the model config): what still fails is infrastructure.
It never retries 400/401/403/404/422: a bad request, key or model name is a configuration error, reported
at once (`llm_error_kind`). The key is read from the environment variable *named* in the config at call
time and handed over as a `SecretStr`, so it never reaches a config dump, a log line, a trace or a transcript.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from agent.config import ModelConfig
from agent.transcript import TranscriptRecorder

CONFIG_STATUSES = {400: "bad request", 401: "bad or missing API key", 403: "key not allowed this model",
                   404: "unknown model or endpoint", 422: "request rejected"}


class MissingApiKey(RuntimeError):
    """The environment variable named by `api_key_env` is not set."""


class ModelNotServed(RuntimeError):
    """A `local` model without a `base_url`: nothing started its server."""


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def llm_error_kind(exc: BaseException) -> Literal["config", "infra"]:
    """'config' (fail fast: fix the config, retrying cannot help) or 'infra' (the SDK already retried)."""
    return "config" if _status(exc) in CONFIG_STATUSES else "infra"


def describe_llm_error(exc: BaseException, model: ModelConfig | None = None) -> str:
    status = _status(exc)
    what = f"model {model.name!r} ({model.model or model.name} at {model.base_url or 'api.openai.com'})" if model else "model"
    if status in CONFIG_STATUSES:
        return f"{what}: HTTP {status} {CONFIG_STATUSES[status]}: check the model config ({type(exc).__name__}: {exc})"
    return f"{what}: {type(exc).__name__}: {exc}"


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


def make_chat_model(model: ModelConfig, task_id: str, *, origin: str | None = None,
                    transcript: Path | None = None) -> BaseChatModel:
    """`origin` is where the offline suite runs (scripted walkthroughs carry a placeholder origin);
    `transcript` is where every request/response pair with a real model is appended."""
    if model.provider == "scripted":
        from agent.scripted import ScriptedChatModel

        return ScriptedChatModel.for_task(task_id, origin=origin)
    if model.provider == "local" and not model.base_url:
        raise ModelNotServed(f"model {model.name!r}: the local server is not running; `sgr run`/`sgr bench` start "
                             "it, or run `sgr model serve` and set base_url")
    key = model.api_key()
    if key is None and model.needs_key:
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


def step_cost(model: ModelConfig, prompt_tokens: int, completion_tokens: int) -> float:
    return (prompt_tokens * model.price_per_1k_prompt + completion_tokens * model.price_per_1k_completion) / 1000
