"""Benchmark/run configuration: one YAML file, validated with pydantic; keys are read from the
environment by *name* and never stored (so a config snapshot can be written into results as is)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator

from agent.webenv.mapping import validate_webenv
from agent.webenv.sites import DEFAULT_RELEASE
from graph.settings import (  # defined below agent/ and graph/, re-exported
    Budgets,
    ModelConfig,
    PlanSource,
    StrictModel,
)

ABLATABLE_NODES = ("planner", "state_tracker", "verifier", "provenance")


class DatasetConfig(StrictModel):
    suite: Literal["offline", "offline-heldout", "sgrbench"] = "offline"  # offline-heldout: tasks/offline/heldout
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
            validate_webenv(value)
        return value


class ProtocolConfig(StrictModel):
    give_start_url: bool = True
    search: bool = False
    allowed_origins: list[str] = Field(default_factory=list, description="Beyond the task's start origin.")
    budgets: Budgets = Field(default_factory=Budgets)


class AgentVariant(StrictModel):
    name: str
    ablate: list[str] = Field(default_factory=list)

    @field_validator("ablate")
    @classmethod
    def _known_nodes(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(ABLATABLE_NODES))
        if unknown:
            raise ValueError(f"unknown node(s) {unknown}; ablatable: {list(ABLATABLE_NODES)}")
        return value


class AgentConfig(StrictModel):
    variants: list[AgentVariant] = Field(default_factory=lambda: [AgentVariant(name="full")])
    trace: bool = True
    screenshots: bool = False
    token_budget_per_observation: int = Field(1500, ge=1)

    @field_validator("variants")
    @classmethod
    def _unique_variant_names(cls, value: list[AgentVariant]) -> list[AgentVariant]:
        _reject_duplicates([v.name for v in value], "agent variant")
        return value


class RayConfig(StrictModel):
    """Where and how the Ray executor runs cells (see agent/runner/ray_pool.py for why cells go to actors)."""

    address: str | None = Field(
        None, description="'auto' joins the cluster started with `ray start` on this machine, 'HOST:PORT' or "
                          "'ray://HOST:10001' a remote one; absent starts a private local cluster.")
    num_cpus_per_cell: float = Field(1.0, gt=0, description="CPUs reserved by each cell worker (one Chromium).")
    memory_per_cell: str | None = Field(
        None, description="Memory reserved by each cell worker, e.g. '2GiB' or '1500MB'; absent reserves none.")
    max_in_flight: int | None = Field(
        None, ge=1, description="Cells running at once; absent: the cluster's CPUs / num_cpus_per_cell.")
    runtime_env: dict[str, Any] | None = Field(
        None, description="Ray runtime_env for the workers (env_vars, working_dir, pip, ...).")

    @field_validator("memory_per_cell")
    @classmethod
    def _memory_size(cls, value: str | None) -> str | None:
        if value is not None:
            memory_bytes(value)
        return value


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def memory_bytes(size: str) -> int:
    """'2GiB' -> 2147483648; a bare number is bytes."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", size)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"{size!r} is not a size such as '2GiB', '1500MB' or '1073741824'")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


class RunConfig(StrictModel):
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
    check_endpoints: bool = Field(
        True, description="One request to each model endpoint before the first cell; one that does not answer stops "
                          "the run with one line (false: its cells run and fail, each with the cause).")
    seed: int = 20260521
    executor: Literal["local", "ray"] = Field(
        "local", description="local: a pool of `concurrency` browser workers in this process; ray: cells on a "
                             "Ray cluster (extra `ray`), configured by run.ray.")
    ray: RayConfig = Field(default_factory=RayConfig)


class FaultsConfig(StrictModel):
    """Without a model key, run the faulty policy (agent/measuring/faulty.py) instead of the plain scripted replays: one
    seeded mistake per task record, for every variant, next to clean scripted replays (false alarms, clean EM)."""

    seed: int = Field(20260521, description="Picks each record's fault class and place.")
    clean_variants: list[str] | None = Field(
        default_factory=lambda: ["full"],
        description="Variants that also run the clean scripted replays; null: all of them.")
    plans: PlanSource = Field(
        "walkthrough", description="The plan both policies answer the planner with: the walkthrough's own (a perfect "
                                   "plan), or a played model's blind plan (tasks/offline/blind_plans).")


class ScoringConfig(StrictModel):
    compat: Literal["ours", "authors"] = Field(
        "ours", description="ours: the project's definitions; authors: as the SGR-Bench authors' scorer (docs/evaluator.md)")


class BenchConfig(StrictModel):
    models: list[ModelConfig] = Field(min_length=1)
    faults: FaultsConfig | None = Field(
        None, description="Fault-injected replays when no model key is set (the offline ablation without a key).")
    datasets: list[DatasetConfig] = Field(default_factory=lambda: [DatasetConfig()])
    protocol: ProtocolConfig = Field(default_factory=ProtocolConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)

    @field_validator("models")
    @classmethod
    def _unique_model_names(cls, value: list[ModelConfig]) -> list[ModelConfig]:
        _reject_duplicates([m.name for m in value], "model")
        from agent.clients.policies import PROVIDERS

        for model in value:
            if model.provider not in PROVIDERS:
                raise ValueError(f"model {model.name!r}: unknown provider {model.provider!r} (one of {', '.join(PROVIDERS)})")
        return value


def _reject_duplicates(names: list[str], what: str) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ValueError(f"duplicate {what} name(s) {sorted(seen)}: names identify result folders")


class ConfigError(ValueError):
    """Names the file and the key of every problem."""


MAX_CONFIG_BYTES = 1_000_000  # a benchmark config is a few KB; `sgr bench /dev/zero` read 10 GB


def _read_config_text(path: Path) -> str:
    with Path(path).open("rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: over {MAX_CONFIG_BYTES:,} bytes: not a benchmark config")
    return data.decode("utf-8")


def load_config(path: Path) -> BenchConfig:
    try:
        raw = yaml.safe_load(_read_config_text(path)) or {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: cannot read YAML: nested too deeply") from exc
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read YAML: {_one_line(exc)}") from exc
    try:
        return BenchConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [f"{path}: {'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()]
        raise ConfigError("\n".join(lines)) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply") from exc


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def make_output_dir(path: Path, config_path: Path | str, given_as: str | None = None) -> None:
    """Create the run folder and prove it takes files, or say in one line why not (a file is in the way, the
    folder is not writable): before anything else is written there. `given_as` names where the folder came
    from (`--output DIR`), so an option's error never blames the config."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path, prefix=".write-check-"):
            pass
    except OSError as exc:
        reason = exc.strerror or _one_line(exc)
        if path.exists() and not path.is_dir():
            reason = "it is a file, not a folder"
        where = given_as or f"{config_path}: run.output_dir"
        raise ConfigError(f"{where}: cannot use {path} as the run folder: {reason}") from exc
