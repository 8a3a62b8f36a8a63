"""Benchmark/run configuration: one YAML file, validated with pydantic; keys are read from the
environment by *name* and never stored (so a config snapshot can be written into results as is)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.webenv_sites import DEFAULT_RELEASE

ABLATABLE_NODES = ("planner", "state_tracker", "verifier", "provenance")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelConfig(_Strict):
    name: str
    provider: Literal["openai", "scripted", "local"] = Field(
        "openai", description="openai: any OpenAI-compatible endpoint; local: the packaged llama.cpp model, "
                              "started on loopback when base_url is empty; scripted: walkthrough replays.")
    model: str = Field("", description="Model id at the endpoint, e.g. 'gpt-4.1-mini' or 'openai/gpt-4o'.")
    base_url: str | None = None
    api_key_env: str | None = Field(
        "OPENAI_API_KEY",
        description="NAME of the environment variable holding the key; null for a local server that needs none.",
    )
    temperature: float = 0.0
    timeout: float = 120.0
    max_retries: int = 4
    price_per_1k_prompt: float = 0.0
    price_per_1k_completion: float = 0.0
    max_output_tokens: int | None = Field(
        None, ge=16, description="Cap on each reply's tokens (a small model can loop inside a JSON grammar).")
    context_tokens: int | None = Field(
        None, ge=1024, description="The model's context window; the actor's history is trimmed to fit it.")

    @property
    def needs_key(self) -> bool:
        return self.provider != "scripted" and self.api_key_env is not None

    def api_key(self) -> str | None:
        """Read at call time, never kept on the model (so dumps of the config never hold it)."""
        return os.environ.get(self.api_key_env) or None if self.api_key_env else None


class DatasetConfig(_Strict):
    suite: Literal["offline", "sgrbench"] = "offline"
    source: str | None = Field(None, description="Path (jsonl/folder) or 'hf:<id>' for suite sgrbench.")
    splits: list[Literal["goal", "constraint"]] = Field(default_factory=lambda: ["goal", "constraint"], min_length=1)
    languages: list[str] = Field(default_factory=lambda: ["en"])
    domains: list[str] | None = None
    families: list[str] | None = None
    task_ids: list[str] | None = None
    webenv: dict[str, str] | None = Field(
        None, description="Serve the tasks' live sites from local SGR-WebEnv environments: {site: origin}, where "
                          "site is an environment name (arxiv, census, wonder, wateroffice, cellosaurus, noaa) or a "
                          "live origin (https://host). Tasks whose site is not mapped are skipped with the reason.")
    webenv_release: str = Field(DEFAULT_RELEASE, description="The sgr-webenv release named in start commands.")

    @field_validator("webenv")
    @classmethod
    def _webenv_entries(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None:
            from agent.webenv import validate_webenv

            validate_webenv(value)
        return value


class Budgets(_Strict):
    """Defaults follow the paper's runs: 6,000 s per task, stop after 3,000 s without progress."""

    wall_seconds: float = 6000.0
    no_progress_seconds: float = 3000.0
    max_steps: int = 60
    max_tokens: int = 400_000
    max_repairs: int = 2


class ProtocolConfig(_Strict):
    give_start_url: bool = True
    search: bool = False
    allowed_origins: list[str] = Field(default_factory=list, description="Beyond the task's start origin.")
    budgets: Budgets = Field(default_factory=Budgets)


class AgentVariant(_Strict):
    name: str
    ablate: list[str] = Field(default_factory=list)

    @field_validator("ablate")
    @classmethod
    def _known_nodes(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(ABLATABLE_NODES))
        if unknown:
            raise ValueError(f"unknown node(s) {unknown}; ablatable: {list(ABLATABLE_NODES)}")
        return value


class AgentConfig(_Strict):
    variants: list[AgentVariant] = Field(default_factory=lambda: [AgentVariant(name="full")])
    trace: bool = True
    screenshots: bool = False
    token_budget_per_observation: int = 1500

    @field_validator("variants")
    @classmethod
    def _unique_variant_names(cls, value: list[AgentVariant]) -> list[AgentVariant]:
        _reject_duplicates([v.name for v in value], "agent variant")
        return value


class RunConfig(_Strict):
    output_dir: Path = Field(Path("results"), description="The run folder; rerunning a config resumes it.")
    concurrency: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)
    demo_mode: bool = False
    demo_limit: int = Field(10, ge=1)
    retries: int = Field(2, ge=0, description="Extra attempts for infrastructure errors only.")
    retry_backoff_seconds: float = Field(2.0, ge=0, description="First backoff; doubles per retry.")
    hard_timeout_margin_seconds: float = Field(
        60.0, ge=0, description="The runner cancels a task this long after the agent's own wall budget."
    )
    fallback_to_scripted: bool = Field(
        True, description="No key in the environment: run the scripted walkthrough model (offline suite only)."
    )
    html_report: bool = True
    seed: int = 20260521


class BenchConfig(_Strict):
    models: list[ModelConfig] = Field(min_length=1)
    datasets: list[DatasetConfig] = Field(default_factory=lambda: [DatasetConfig()])
    protocol: ProtocolConfig = Field(default_factory=ProtocolConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    run: RunConfig = Field(default_factory=RunConfig)

    @field_validator("models")
    @classmethod
    def _unique_model_names(cls, value: list[ModelConfig]) -> list[ModelConfig]:
        _reject_duplicates([m.name for m in value], "model")
        return value


def _reject_duplicates(names: list[str], what: str) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ValueError(f"duplicate {what} name(s) {sorted(seen)}: names identify result folders")


class ConfigError(ValueError):
    """Names the file and the key of every problem."""


def load_config(path: Path) -> BenchConfig:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read YAML: {exc}") from exc
    try:
        return BenchConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [f"{path}: {'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()]
        raise ConfigError("\n".join(lines)) from exc
