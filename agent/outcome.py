"""What running one task produces, as the runner and reports see it (no prompts, no browser details)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class TaskOutcome(BaseModel):
    task_id: str
    model: str
    variant: str = Field("full", description="Agent variant name, e.g. 'full' or 'no-verifier'.")
    ablated: list[str] = Field(default_factory=list)
    answer: str = ""
    stop_reason: str = Field("finished", description="finished | max_steps | max_tokens | wall_time | no_progress | error")
    error: str | None = None
    error_kind: str | None = Field(None, description="infra (retryable: browser crash, 5xx, rate limit) | agent | timeout (cancelled by the runner)")
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    nodes_run: list[str] = Field(default_factory=list)
    final_retrieval_state: dict[str, Any] = Field(default_factory=dict)
    drift_flags: list[dict[str, Any]] = Field(default_factory=list)
    verifier_reports: list[dict[str, Any]] = Field(default_factory=list)
