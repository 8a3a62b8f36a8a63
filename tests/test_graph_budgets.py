"""Budget rules: which budget stops the run, computed from the state alone."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.config import Budgets, ModelConfig
from graph.model_io.policy import ChatPolicy
from graph.nodes import Deps, budget_stop, history_window
from graph.state import new_usage
from tasks.spec import OutputSpec


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def deps(clock: Clock, **budgets) -> Deps:
    class ToolBindingFake(FakeListChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    return Deps(browser=None, policy=ChatPolicy(ToolBindingFake(responses=["x"])), model_config=ModelConfig(name="m"),
                spec=OutputSpec(columns=("a",)), budgets=Budgets(**budgets), clock=clock)


def state(step: int = 0, tokens: int = 0, started: float = 0.0, progress: float = 0.0, before: float = 0.0):
    usage = {**new_usage(started), "prompt_tokens": tokens, "last_progress_at": progress,
             "elapsed_before_resume": before}
    return {"step": step, "usage": usage}


def test_each_budget_names_its_stop_reason():
    clock = Clock(100.0)
    d = deps(clock, max_steps=5, max_tokens=1000, wall_seconds=50, no_progress_seconds=30)
    assert budget_stop(d, state(step=4, tokens=999, started=60, progress=80)) is None
    assert budget_stop(d, state(step=5, started=60, progress=80)) == "max_steps"
    assert budget_stop(d, state(tokens=1000, started=60, progress=80)) == "max_tokens"
    assert budget_stop(d, state(started=50, progress=90)) == "wall_time"
    assert budget_stop(d, state(started=60, progress=90, before=41)) == "wall_time"  # time before a resume counts
    assert budget_stop(d, state(started=80, progress=70)) == "no_progress"


def test_history_window_never_orphans_a_tool_result():
    messages = []
    for i in range(20):
        messages += [AIMessage("", tool_calls=[{"name": "scroll", "args": {}, "id": f"c{i}"}]),
                     ToolMessage("ok", tool_call_id=f"c{i}")]
        if i == 5:
            messages.append(HumanMessage("call one tool"))
    window = history_window(messages, turns=12)
    assert isinstance(window[0], AIMessage) and window[0].tool_calls[0]["id"] == "c8"
    assert len([m for m in window if isinstance(m, AIMessage)]) == 12
