"""What every node shares: the browser, the policy, the budgets, the prompts and the step log."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from browser.interface import Browser
from graph.events import StepLog
from graph.model_io.policy import Policy
from graph.prompting.render import Prompts
from graph.settings import Budgets, ModelConfig
from tasks.spec import OutputSpec


@dataclass(frozen=True)
class Deps:
    """Fixed for a run: `build_graph` gives its nodes a copy with `ablated` set (`dataclasses.replace`), never
    changes the one it is given. A frozen object rather than LangGraph's `Runtime` context: the nodes are
    closures made once per graph, so the context would only move the same fields behind `runtime.context`."""

    browser: Browser
    policy: Policy  # who answers the actor and the planner (graph/model_io/policy.py)
    model_config: ModelConfig
    spec: OutputSpec
    budgets: Budgets = field(default_factory=Budgets)
    search_enabled: bool = False
    search: Callable[[str], Any] | None = None  # async query -> list of results
    token_budget: int = 1500
    prompts: Prompts = field(default_factory=Prompts.load)
    log: StepLog = field(default_factory=StepLog)
    clock: Callable[[], float] = time.time
    ablated: frozenset[str] = frozenset()  # nodes switched off: their prompt parts and tools go too (build_graph)
