"""What every node shares: the browser, the policy, the budgets, the prompts and the step log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browser.interface import Browser
from browser.trace import Redactor
from graph.policy import Policy
from graph.render import Prompts
from graph.settings import Budgets, ModelConfig
from tasks.spec import OutputSpec


class StepLog:
    """steps.jsonl, appended and flushed per event so an interrupted run keeps its trace. The browser's
    tracer writes its action lines to the same file (they have no `node`), giving one timeline; both redact
    secrets with the same `Redactor`."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.redactor = Redactor.from_environment()

    def write(self, event: dict[str, Any]) -> None:
        event = self.redactor.json({"t": round(time.time(), 3), **event})
        self.events.append(event)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(event, default=str) + "\n")


@dataclass
class Deps:
    browser: Browser
    policy: Policy  # who answers the actor and the planner (graph/policy.py)
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
