"""Config problems name the file and the key; a missing key falls back to the scripted model only where
that is allowed, and says so; the manifest never holds a key's value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.clients.resolve import SCRIPTED_MODEL, resolve_models
from agent.config import ConfigError, load_config
from agent.rundir.manifest import config_fingerprints, config_snapshot, fingerprint_conflicts

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("models: [{name: a, temperature: hot}]", "models.0.temperature", "valid number"),
        ("models: [{name: a}]\nrun: {concurency: 2}", "run.concurency", "Extra inputs"),
        ("models: [{name: a}]\nagent: {variants: [{name: x, ablate: [memory]}]}", "agent.variants.0.ablate",
         "unknown node"),
        ("models: [{name: a}, {name: a}]", "models", "duplicate model"),
        ("models: [{name: a}]\nagent: {variants: [{name: v}, {name: v}]}", "agent.variants", "duplicate agent variant"),
        ("models: [{name: a}]\ndatasets: [{suite: offline, splits: []}]", "datasets.0.splits", "at least 1"),
        ("models: []", "models", "at least 1"),
        ("run: {concurrency: 0}\nmodels: [{name: a}]", "run.concurrency", "greater than or equal to 1"),
    ],
)
def test_errors_name_file_and_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}: {key}:" in str(info.value)
    assert message in str(info.value)


def test_unreadable_yaml_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "models: [unclosed")
    with pytest.raises(ConfigError, match=f"{path}: cannot read YAML"):
        load_config(path)


def test_shipped_configs_validate() -> None:
    names = sorted(p.name for p in CONFIGS.glob("*.yaml"))
    assert names == ["ablation-blind.yaml", "ablation.yaml", "local.yaml", "offline-ray.yaml", "offline.yaml", "openrouter-example.yaml",
                     "sgr-webenv.yaml",
                     "sgrbench-local.yaml"]
    for path in CONFIGS.glob("*.yaml"):
        load_config(path)


def test_missing_key_falls_back_to_scripted_on_the_offline_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config, notices = resolve_models(load_config(CONFIGS / "offline.yaml"), CONFIGS / "offline.yaml")
    assert [m.name for m in config.models] == [SCRIPTED_MODEL.name]
    assert len(notices) == 1 and notices[0].startswith("NO LLM KEY") and "$OPENAI_API_KEY" in notices[0]


def test_key_present_runs_the_configured_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
    config, notices = resolve_models(load_config(CONFIGS / "offline.yaml"), CONFIGS / "offline.yaml")
    assert [m.name for m in config.models] == ["gpt-4.1-mini"] and notices == []


def test_keyless_local_endpoint_is_run_not_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = load_config(CONFIGS / "offline.yaml")
    local = base.models[0].model_copy(update={"name": "vllm", "base_url": "http://127.0.0.1:8000/v1",
                                              "api_key_env": None})
    config, notices = resolve_models(base.model_copy(update={"models": [local]}), CONFIGS / "offline.yaml")
    assert [m.name for m in config.models] == ["vllm"] and notices == []


def test_missing_key_without_fallback_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    path = CONFIGS / "openrouter-example.yaml"
    with pytest.raises(ConfigError, match=r"openrouter-example.yaml: models.0.api_key_env: .*\$OPENROUTER_API_KEY"):
        resolve_models(load_config(path), path)


def test_snapshot_holds_no_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = "sk-live-SECRET-0123456789abcdef"
    monkeypatch.setenv("MY_KEY", secret)
    path = _write(tmp_path, f"models: [{{name: a, api_key_env: MY_KEY, base_url: 'https://x.test/v1?key={secret}'}}]")
    snapshot = json.dumps(config_snapshot(load_config(path)))
    assert secret not in snapshot
    assert '"api_key_env": "MY_KEY"' in snapshot and '"api_key_present": true' in snapshot


def test_fingerprints_allow_new_names_but_not_changed_settings(tmp_path: Path) -> None:
    first = config_fingerprints(load_config(_write(tmp_path, "models: [{name: a}]")))
    added = config_fingerprints(load_config(_write(tmp_path, "models: [{name: a}, {name: b}]")))
    changed = config_fingerprints(load_config(_write(tmp_path, "models: [{name: a, temperature: 0.7}]")))
    assert fingerprint_conflicts(first, added) == []
    assert fingerprint_conflicts(first, changed) == ["model 'a' has different settings"]
