"""The model and budget settings a graph run is bound to, and the cost of one model call.

They live in graph/ (not in the runner's config module) so that graph/ never imports agent/: the runner's
config (`agent.config`) embeds and re-exports these types, and `agent.clients.chat` re-exports `step_cost`.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PlanSource = Literal["walkthrough", "blind"]


class StrictModel(BaseModel):
    """Unknown keys are errors: a typo in a config must not be silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ModelConfig(StrictModel):
    name: str
    provider: str = Field(
        "openai", description="openai: any OpenAI-compatible endpoint; local: the packaged llama.cpp model, "
                              "started on loopback when base_url is empty; play: a person or another program answers "
                              "each request (agent/measuring/play_server.py); or the name of an in-process replay "
                              "policy (agent/clients/policies.py lists them and checks the name).")
    model: str = Field("", description="Model id at the endpoint, e.g. 'gpt-4.1-mini' or 'openai/gpt-4o'.")
    base_url: str | None = None
    api_key_env: str | None = Field(
        "OPENAI_API_KEY",
        description="NAME of the environment variable holding the key; null for a local server that needs none.",
    )
    temperature: float = Field(0.0, ge=0)
    timeout: float = Field(120.0, gt=0)
    max_retries: int = Field(4, ge=0)
    price_per_1k_prompt: float = Field(0.0, ge=0)
    price_per_1k_completion: float = Field(0.0, ge=0)
    max_output_tokens: int | None = Field(
        None, ge=16, description="Cap on each reply's tokens (a small model can loop inside a JSON grammar).")
    context_tokens: int | None = Field(
        None, ge=1024, description="The model's context window; the actor's history is trimmed to fit it.")
    fault_seed: int | None = Field(None, description="a fault-injecting replay policy: the seed that picks each "
                                                       "task's mistake.")
    play_dir: str | None = Field(None, description="provider play: the folder a program answers through "
                                                   "(req-N.json / resp-N.json); none: a person at the terminal.")
    player: str | None = Field(None, description="provider play: who plays (person, llm:NAME, program:NAME).")
    plans: PlanSource = Field(
        "walkthrough", description="replay policies: answer the planner with the walkthrough's own plan, or with a "
                                   "played model's blind plan (tasks/offline/blind_plans).")
    variants: list[str] | None = Field(
        None, description="The agent variants this model runs (default: all of the config's).")

    def api_key(self) -> str | None:
        """Read at call time, never kept on the model (so dumps of the config never hold it)."""
        return os.environ.get(self.api_key_env) or None if self.api_key_env else None


class Budgets(StrictModel):
    """Defaults follow the paper's runs: 6,000 s per task, stop after 3,000 s without progress. A budget that
    leaves no room to act is refused when the config loads: such a cell would end "ok" having done nothing
    and count as finished on resume."""

    wall_seconds: float = Field(6000.0, gt=0)
    no_progress_seconds: float = Field(3000.0, gt=0)
    max_steps: int = Field(60, ge=1)
    max_tokens: int = Field(400_000, ge=1)
    max_repairs: int = Field(2, ge=0)


def step_cost(model: ModelConfig, prompt_tokens: int, completion_tokens: int) -> float:
    return (prompt_tokens * model.price_per_1k_prompt + completion_tokens * model.price_per_1k_completion) / 1000
