"""`manifest.json`: what produced a run folder (config without secrets, code, versions, machine, times).

Each invocation on the same folder appends a session, so a resumed run keeps its history.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from agent.config import BenchConfig, ConfigError
from agent.rundir.atomic import write_json_atomic
from agent.rundir.paths import safe_segment
from browser.trace import URL_PASSWORD, redact_url_query

MANIFEST_FILE = "manifest.json"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
REDACTED = "<redacted>"
_PACKAGES = (
    "sgr-agent", "playwright", "langgraph", "langchain-core", "langchain-openai", "pydantic", "starlette",
    "uvicorn", "matplotlib", "jinja2", "pypdf", "tiktoken",
)
_SECRET_WORDS = ("key", "token", "secret", "password")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def config_snapshot(config: BenchConfig) -> dict[str, Any]:
    """The config as run, with any value of a key variable scrubbed wherever it might appear."""
    snapshot = config.model_dump(mode="json")
    secrets = {value for m in config.models if (value := m.api_key())}
    for model, raw in zip(config.models, snapshot["models"], strict=True):
        raw["api_key_present"] = model.api_key() is not None
    return _scrub(snapshot, secrets)


def _scrub(node: Any, secrets: set[str], key: str = "") -> Any:
    if isinstance(node, dict):
        return {k: _scrub(v, secrets, k) for k, v in node.items()}
    if isinstance(node, list):
        return [_scrub(v, secrets, key) for v in node]
    if isinstance(node, str):
        if any(s in node for s in secrets):
            return REDACTED
        node = URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED, node)  # a base_url's password
        node = redact_url_query(node, REDACTED)  # and a key in its query string (`?key=...`)
        # Fields such as `api_key_env` hold a variable NAME; any other secret-looking field is dropped.
        if any(w in key.lower() for w in _SECRET_WORDS) and not key.lower().endswith("_env") and node:
            return REDACTED
    return node


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def config_fingerprints(config: BenchConfig) -> dict[str, Any]:
    """What must match for cells of two invocations to be comparable. Cells are keyed by model and
    variant NAME, so adding a model or a variant is fine; changing one under the same name is not."""
    shared = config.model_dump(mode="json", include={"datasets", "protocol"})
    if config.scoring.compat != "ours":  # only when set, so folders made before the option still resume
        shared["scoring"] = config.scoring.model_dump(mode="json")
    return {
        "shared": _digest(shared),
        "models": {m.name: _digest(m.model_dump(mode="json")) for m in config.models},
        "variants": {v.name: _digest(v.model_dump(mode="json")) for v in config.agent.variants},
    }


def fingerprint_conflicts(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Human-readable differences that would mix incomparable cells in one run folder."""
    problems = []
    if previous.get("shared") != current["shared"]:
        problems.append("datasets/protocol/scoring differ")
    for group in ("models", "variants"):
        for name, digest in current[group].items():
            old = previous.get(group, {}).get(name)
            if old is not None and old != digest:
                problems.append(f"{group[:-1]} '{name}' has different settings")
    return problems


class ConfigurationMismatch(ConfigError):
    """A run folder holds the cells of other models or variants: one folder holds one configuration, so its
    summary never mixes two (a replay beside a real model, a variant run once beside a full matrix)."""

    def __init__(self, run_dir: Path, differences: list[str], suggestion: Path, *, given_as: str):
        self.run_dir, self.differences, self.suggestion = run_dir, differences, suggestion
        super().__init__(f"{given_as}: {run_dir} holds another configuration ({'; '.join(differences)}); "
                         f"use its own folder, e.g. {suggestion}, or --fresh to replace {run_dir}")


def configuration_names(fingerprints: dict[str, Any]) -> dict[str, list[str]]:
    return {group: sorted(fingerprints.get(group, {})) for group in ("models", "variants")}


def configuration_differences(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """How this run's models and variants differ from the ones whose cells a folder holds (empty: the same)."""
    old, new = configuration_names(previous), configuration_names(current)
    return [f"{group}: the folder has {', '.join(old[group]) or 'none'}, this run {', '.join(new[group])}"
            for group in ("models", "variants") if old[group] != new[group]]


def configuration_folder(run_dir: Path, fingerprints: dict[str, Any]) -> Path:
    """The folder of one configuration next to `run_dir`: its name says the models (and the variants
    unless the only one is `full`), e.g. results/offline-gpt-4.1-mini."""
    names = configuration_names(fingerprints)
    suffix = "+".join(names["models"]) + ("" if names["variants"] == ["full"] else "-" + "+".join(names["variants"]))
    return Path(run_dir).with_name(f"{Path(run_dir).name}-{safe_segment(suffix)}")


def merged_fingerprints(previous: dict[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    if not previous:
        return current
    return {
        **current,
        "models": {**previous.get("models", {}), **current["models"]},
        "variants": {**previous.get("variants", {}), **current["variants"]},
    }


def _tree_digest(directory: Path) -> str:
    files = sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return _digest({str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files})


def code_fingerprint(prompt_dir: Path | None = None) -> dict[str, Any]:
    """What of the code decides a cell's result: the package version and commit, and hashes of the prompt
    files and of the tool schemas the model is shown. Computed now, from the files and schemas as they are,
    so a resumed run never silently mixes cells of different agents."""
    from graph.prompting.render import DEFAULT_PROMPT_DIR
    from graph.tools.tool_schemas import plan_tool, tool_schemas

    try:
        version: str | None = metadata.version("sgr-agent")
    except metadata.PackageNotFoundError:
        version = None
    return {
        "version": version,
        "commit": git_info()["commit"],
        "prompts": _tree_digest(prompt_dir or DEFAULT_PROMPT_DIR),
        "tools": _digest([tool_schemas(search=False), tool_schemas(search=True), plan_tool()]),
    }


def run_fingerprints(config: BenchConfig) -> dict[str, Any]:
    return {**config_fingerprints(config), "code": code_fingerprint()}


def code_conflicts(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """How the code that made the earlier cells differs from this code (empty: the same agent)."""
    old = previous.get("code")
    if old is None:
        return ["the earlier cells carry no code fingerprint (made before fingerprints covered code)"]
    labels = {"version": "package version", "commit": "git commit", "prompts": "prompts", "tools": "tool schemas"}
    return [f"{label} {old.get(key)} -> {current['code'].get(key)}" for key, label in labels.items()
            if old.get(key) != current["code"].get(key)]


class MixedCodeError(ConfigError):
    """The folder holds results of other code; resuming would mix two agents in one table."""


MIXED_CODE_HINT = ("pass --fresh to start the run over, use a new output folder, or --allow-mixed to resume anyway "
                   "(recorded in the manifest)")


def _run(cmd: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def git_info() -> dict[str, Any]:
    commit = _run(["git", "rev-parse", "HEAD"], PROJECT_ROOT)
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], PROJECT_ROOT) if commit else None
    return {"commit": commit, "dirty": bool(status) if commit else None}


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def chromium_version() -> str | None:
    from browser.launch import ChromiumNotFound, find_chromium

    try:
        return _run([find_chromium(), "--version"])
    except ChromiumNotFound:
        return None


def machine_info() -> dict[str, Any]:
    memory_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "memory_gb": round(memory_kb / 1024 / 1024, 1) if memory_kb else None,
        "in_container": Path("/run/.containerenv").exists() or Path("/.dockerenv").exists(),
    }


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc


def start_session(run_dir: Path, config: BenchConfig, config_path: Path, notices: list[str],
                  planned: int, skipped: int, *, executor: dict[str, Any] | None = None,
                  mixed_code: list[str] | None = None, offline_origin: str | None = None) -> dict[str, Any]:
    """Write the manifest with a new open session; returns the manifest to close later.

    The top level describes the latest session (config, code, versions, machine); `sessions` keeps
    every invocation, so a resumed run shows what produced which cells."""
    previous = read_manifest(run_dir) or {}
    environment = {
        "config_path": str(config_path),
        "config": config_snapshot(config),
        "git": git_info(),
        "packages": package_versions(),
        "chromium": chromium_version(),
        "machine": machine_info(),
        "notices": notices,
        "executor": executor or {"kind": "local", "concurrency": config.run.concurrency},
        "offline_origin": offline_origin,  # a resumed run serves the offline sites here again (checkpoints name it)
    }
    fingerprints = run_fingerprints(config)
    session = {**environment, "code": fingerprints["code"], "allow_mixed": bool(mixed_code),
               "mixed_code": mixed_code or [], "started_at": now_iso(), "ended_at": None, "cells_planned": planned,
               "cells_skipped": skipped, "cells_run": 0, "cells_failed": 0, "status": "running",
               "pid": os.getpid()}
    manifest = {
        "started_at": previous.get("started_at") or session["started_at"],
        "ended_at": None,
        **environment,
        "fingerprints": merged_fingerprints(previous.get("fingerprints"), fingerprints),
        "allow_mixed": bool(mixed_code) or previous.get("allow_mixed", False),
        "sessions": [*previous.get("sessions", []), session],
    }
    write_json_atomic(Path(run_dir) / MANIFEST_FILE, manifest)
    return manifest


def end_session(run_dir: Path, manifest: dict[str, Any], *, ran: int, failed: int, status: str) -> None:
    session = manifest["sessions"][-1]
    session.update(ended_at=now_iso(), cells_run=ran, cells_failed=failed, status=status)
    manifest["ended_at"] = session["ended_at"]
    write_json_atomic(Path(run_dir) / MANIFEST_FILE, manifest)


SINGLE_RUN_FINGERPRINT = "fingerprint.json"


def check_single_run_code(out_dir: Path, allow_mixed: bool) -> list[str]:
    """`sgr run` resumes or re-reports the folder of an earlier run: refuse it when other code made it, unless
    `allow_mixed` (then recorded in `fingerprint.json` with the differences)."""
    path = Path(out_dir) / SINGLE_RUN_FINGERPRINT
    previous = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    current = {"code": code_fingerprint()}
    has_results = any((Path(out_dir) / name).exists() for name in ("checkpoints.sqlite", "outcome.json"))
    mixed = code_conflicts(previous, current) if has_results else []
    if mixed and not allow_mixed:
        raise MixedCodeError(f"{out_dir} holds a run made by different code ({'; '.join(mixed)}): {MIXED_CODE_HINT}")
    write_json_atomic(path, {**current, "allow_mixed": bool(mixed) or previous.get("allow_mixed", False),
                             "mixed_code": [*previous.get("mixed_code", []), *mixed]})
    return mixed
