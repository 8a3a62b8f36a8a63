"""What running one task produces, as the runner and reports see it (no prompts, no browser details)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from eval.score import run_failed


class TaskOutcome(BaseModel):
    task_id: str
    model: str
    variant: str = Field("full", description="Agent variant name, e.g. 'full' or 'no-verifier'.")
    ablated: list[str] = Field(default_factory=list)
    answer: str = ""
    stop_reason: str = Field("finished", description="finished | max_steps | max_tokens | wall_time | no_progress | error")
    error: str | None = None
    error_kind: str | None = Field(None, description="infra (retryable: browser crash, 5xx, rate limit, timeout) | "
                                                     "config (model 400/401/403/404: fix the config) | agent (a wrong "
                                                     "decision) | bug (a Python exception in our code) | timeout "
                                                     "(cancelled by the runner)")
    traceback: str | None = Field(None, description="For error_kind 'bug': where our code failed.")
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    nodes_run: list[str] = Field(default_factory=list)
    drift_flags: list[dict[str, Any]] = Field(default_factory=list)
    verifier_reports: list[dict[str, Any]] = Field(default_factory=list)
    invalid_calls: int = Field(0, description="Model replies the actor could not execute (no/bad tool call).")
    repairs: int = Field(0, description="Verifier repair rounds.")
    skipped: dict[str, str] = Field(default_factory=dict, description="Listed results the model left unopened on "
                                                                       "purpose (finish(skip=...)): link -> why.")
    disputed: str | None = Field(None, description="The model disputed a refusal (its reason): the answer was "
                                                   "composed over the verifier's failures.")
    context_trims: int = Field(0, description="Actor calls whose history was cut to fit the context window.")
    restarts: list[dict[str, Any]] = Field(
        default_factory=list, description="Each time the task was interrupted (its process killed) and restarted "
                                          "from a clean slate: when, at which step, on which URL, and the tokens "
                                          "and cost the lost run had spent. Empty: one "
                                          "uninterrupted run. Earlier steps stay in steps.jsonl above a restart event.")

    @property
    def failed(self) -> bool:
        """Ended in an error (eval.score.run_failed): no answer, scored 0 whatever the gold; a budget stop or an
        explicit NONE after a normal end is an answer."""
        return run_failed(self.stop_reason, self.error_kind)

    def failure(self) -> str | None:
        """Why this outcome has no answer to score, or None when it has one."""
        return f"the run ended in an error ({self.error_kind or self.stop_reason})" if self.failed else None
