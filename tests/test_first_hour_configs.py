"""The example configs are right (issue 40): each loads, each `hf:` source names the release's dataset id, each
command a config's comments suggest is a real one, and a task source that cannot be loaded is answered with advice
that fits `sgr bench` (which has no --tasks option)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.config import ConfigError, load_config
from agent.runner.tasks import load_bench_tasks
from tasks.hub import DEFAULT_DATASET_ID, HUB_PREFIX
from tests.sgr_commands import invocation_problems, sgr_lines

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_each_config_loads_and_names_the_release(path: Path) -> None:
    config = load_config(path)
    for dataset in config.datasets:
        if dataset.source and dataset.source.startswith(HUB_PREFIX):
            dataset_id = dataset.source[len(HUB_PREFIX):].partition("@")[0]
            assert dataset_id == DEFAULT_DATASET_ID, f"{path.name}: {dataset.source} is not the release"


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_commands_in_a_configs_comments_are_real(path: Path) -> None:
    lines = sgr_lines(path.read_text(encoding="utf-8"))
    assert all(line.startswith("sgr ") for line in lines)
    assert not [p for line in lines for p in invocation_problems(line)]


def test_a_bad_hub_source_in_a_bench_config_advises_the_config_key(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # the `hf` extra absent
    path = tmp_path / "bench.yaml"
    path.write_text("models: [{name: m, provider: scripted}]\ndatasets: [{suite: sgrbench, source: 'hf:x/y'}]\n")
    with pytest.raises(ConfigError) as caught:
        load_bench_tasks(load_config(path), path, None)
    message = str(caught.value)
    assert "`source: ./sgr-bench` under `datasets:`" in message and f"{HUB_PREFIX}{DEFAULT_DATASET_ID}" in message
    assert "Point --tasks" not in message  # the old advice: an option `sgr bench` does not have


def test_the_command_checker_finds_a_made_up_option() -> None:
    assert invocation_problems("sgr bench configs/offline.yaml --tasks hf:x")
    assert invocation_problems("sgr frobnicate")
    assert not invocation_problems("sgr bench configs/offline.yaml --retry-failed -j 2")
