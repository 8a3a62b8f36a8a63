"""Model API errors by cause, below agent/ and graph/: the actor's `LLMCallError` and the runner both need
them. 'config' (400/401/403/404/422: a bad request, key or model name; retrying cannot help) or 'infra'
(what the OpenAI SDK's own retries with backoff could not get through)."""

from __future__ import annotations

from typing import Literal

from graph.settings import ModelConfig

CONFIG_STATUSES = {400: "bad request", 401: "bad or missing API key", 403: "key not allowed this model",
                   404: "unknown model or endpoint", 422: "request rejected"}


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
