"""Chat model factory: any OpenAI-compatible endpoint through `ChatOpenAI`, or the scripted policy.

Retries with exponential backoff on 429 / 5xx / connection errors are the OpenAI SDK's own (it also
honours `Retry-After`); `max_retries` comes from the model config. The key is read from the environment
variable *named* in the config at call time and handed over as a `SecretStr`, so it never reaches a
config dump, a log line or a trace.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from graph.settings import ModelConfig
from graph.settings import step_cost as step_cost  # re-exported: the cost lives below agent/ and graph/


class MissingApiKey(RuntimeError):
    """The environment variable named by `api_key_env` is not set."""


def make_chat_model(model: ModelConfig, task_id: str, *, origin: str | None = None) -> BaseChatModel:
    """`origin` is where the offline suite runs (scripted walkthroughs carry a placeholder origin)."""
    if model.provider == "scripted":
        from agent.scripted import ScriptedChatModel

        return ScriptedChatModel.for_task(task_id, origin=origin)
    key = model.api_key()
    if key is None and model.needs_key:
        raise MissingApiKey(f"model {model.name!r}: environment variable {model.api_key_env} is not set")
    return ChatOpenAI(
        model=model.model or model.name,
        base_url=model.base_url,
        api_key=SecretStr(key or "not-needed"),  # a local server without auth still wants a header value
        temperature=model.temperature,
        timeout=model.timeout,
        max_retries=model.max_retries,
        use_responses_api=False,  # chat completions: what vLLM, llama.cpp and OpenRouter all speak
    )
