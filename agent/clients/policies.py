"""Which policy plays a model config: the in-process test policies by provider name, else a chat model.

The registry is the one place a provider name picks a policy: `scripted` (walkthrough replays) and `faulty`
(walkthrough replays with one seeded injected mistake per task) are built here; every other provider is a chat
model at an endpoint (agent/clients/chat.py) behind `graph.model_io.policy.ChatPolicy`. Neither the graph nor
`agent/solve.py` names a test policy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.clients.chat import make_chat_model
from graph.model_io.policy import ChatPolicy, Policy
from graph.settings import ModelConfig

Maker = Callable[[ModelConfig, str, "str | None"], Policy]


def _scripted(model: ModelConfig, task_id: str, origin: str | None) -> Policy:
    from agent.measuring.scripted import ScriptedPolicy

    return ScriptedPolicy.for_task(task_id, origin=origin, plans=model.plans)


def _faulty(model: ModelConfig, task_id: str, origin: str | None) -> Policy:
    from agent.measuring.faulty import FaultyPolicy

    return FaultyPolicy.for_task(task_id, origin=origin, seed=model.fault_seed or 0, plans=model.plans)


IN_PROCESS: dict[str, Maker] = {"scripted": _scripted, "faulty": _faulty}
CHAT_PROVIDERS = ("openai", "local", "play")  # a chat model at an endpoint
PROVIDERS = (*CHAT_PROVIDERS, *IN_PROCESS)


def needs_key(model: ModelConfig) -> bool:
    """An API key is read only for a chat model whose config names its variable."""
    return model.provider not in IN_PROCESS and model.api_key_env is not None


def make_policy(model: ModelConfig, task_id: str, *, origin: str | None = None,
                transcript: Path | None = None) -> Policy:
    """`origin` is where the offline suite runs (walkthroughs carry a placeholder origin); `transcript` is where a
    chat model's request/response pairs are appended. A replay without a walkthrough for the task raises
    `graph.model_io.policy.PolicyUnavailable`."""
    maker = IN_PROCESS.get(model.provider)
    if maker is not None:
        return maker(model, task_id, origin)
    return ChatPolicy(make_chat_model(model, task_id, transcript=transcript))
