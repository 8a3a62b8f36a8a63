"""Who decides: the actor's and the planner's one question to a policy, and what a policy is given.

A policy gets the turn's messages (the prompt), the tools offered and the graph's state at this turn as data
(`TurnState`), and returns the assistant message. The production policy (`ChatPolicy`) sends the messages and
tools to a chat model (ChatOpenAI over the wire, or any LangChain chat model) and ignores the state: a model
reads the prompt. The deterministic test policies (agent/measuring/scripted.py, faulty.py) read the state and
never the prompt, so a prompt's wording cannot change what they do. The graph has no branch for either:
agent/clients/policies.py picks one by the config's provider name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage

from browser.types import Observation
from graph.checks.failures import Failure
from graph.plan.values import gate_key
from graph.state import AgentState, DriftFlag
from graph.tracking.state_reading import MAX_OPTIONS_KEPT, read_values

CALL_NOTE = "call_note"  # AIMessage.response_metadata key: what a policy says a call is (the actor logs it as `note`)


class PolicyUnavailable(LookupError):
    """The policy cannot play this task (a replay policy without a walkthrough for it): an agent failure."""


class ControlState(TypedDict):
    label: str
    value: str
    options: list[str]


@dataclass(frozen=True)
class TurnState:
    """What the graph knows at an actor turn, as data: the flags and the repair goal the prompt renders (the
    failures behind the goal as fields), the verifier rounds so far, and the page's controls and page count
    read off the observation itself (so they are there with the state tracker switched off too)."""

    drift_flags: list[DriftFlag] = field(default_factory=list)
    repair_goal: str | None = None
    failures: list[Failure] = field(default_factory=list)
    repairs: int = 0
    controls: dict[str, ControlState] = field(default_factory=dict)
    pages: int | None = None


def turn_state(state: AgentState) -> TurnState:
    observation = state.get("observation")
    controls: dict[str, ControlState] = {}
    pages = None
    if observation:
        obs = Observation.model_validate(observation)
        options = {gate_key(name): [o.label for o in c.options][:MAX_OPTIONS_KEPT]
                   for c in obs.controls for name in (c.name, c.label) if name}
        controls = {key: ControlState(label=label, value=value,
                                      options=options.get(key) or options.get(gate_key(label), []))
                    for key, (value, label, _) in read_values(obs).items()}
        pages = obs.pagination.pages if obs.pagination else None
    goal = state.get("repair_goal")
    return TurnState(drift_flags=list(state.get("drift_flags") or []), repair_goal=goal,
                     failures=list(state.get("repair_failures") or []) if goal else [],
                     repairs=state.get("repairs", 0), controls=controls, pages=pages)


class Policy(Protocol):
    async def act(self, messages: list[AnyMessage], tools: list[dict[str, Any]], state: TurnState) -> AIMessage:
        """The actor's turn: one assistant message, normally one tool call among `tools`."""
        ...

    async def plan(self, messages: list[AnyMessage], tool: dict[str, Any]) -> AIMessage:
        """The planner's turn: a call of `tool` (the Plan)."""
        ...

    def records(self) -> dict[str, Any]:
        """Files the policy adds to the run folder, name -> JSON (what a fault-injecting policy injected)."""
        ...


class ChatPolicy:
    """A chat model as the policy: the messages and tools go to it as they are (over the wire for ChatOpenAI)."""

    def __init__(self, model: BaseChatModel):
        self.model = model

    async def act(self, messages: list[AnyMessage], tools: list[dict[str, Any]], state: TurnState) -> AIMessage:
        return await self.model.bind_tools(tools, tool_choice="auto").ainvoke(messages)

    async def plan(self, messages: list[AnyMessage], tool: dict[str, Any]) -> AIMessage:
        return await self.model.bind_tools([tool], tool_choice=tool["function"]["name"]).ainvoke(messages)

    def records(self) -> dict[str, Any]:
        return {}
