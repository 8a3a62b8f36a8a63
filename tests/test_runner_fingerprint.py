"""A resumed run never mixes results of different code: the run fingerprint covers the package version and
commit and hashes of the prompt files and tool schemas; `--fresh` starts over, `--allow-mixed` goes on and
is recorded. Also: the executor keys of the run section and the error without the `ray` extra."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import graph.prompting.render
from agent.cli import app
from agent.config import ConfigError, load_config, memory_bytes
from agent.rundir.manifest import MixedCodeError, code_conflicts, code_fingerprint
from agent.runner.bench import run_bench


def _edited_prompts(tmp_path: Path) -> Path:
    copy = tmp_path / "prompts"
    shutil.copytree(graph.prompting.render.DEFAULT_PROMPT_DIR, copy)
    actor = copy / "actor.md"
    actor.write_text(actor.read_text(encoding="utf-8") + "\nPrefer the first result.\n", encoding="utf-8")
    return copy


def test_code_fingerprint_follows_the_prompt_files(tmp_path: Path) -> None:
    original = code_fingerprint()
    assert original == code_fingerprint()  # stable
    edited = code_fingerprint(_edited_prompts(tmp_path))
    assert edited["prompts"] != original["prompts"]
    assert {k: v for k, v in edited.items() if k != "prompts"} == {k: v for k, v in original.items() if k != "prompts"}
    assert original["version"] == "0.1.0" and set(original) == {"version", "commit", "prompts", "tools"}


def test_code_conflicts_name_what_changed() -> None:
    old = {"code": {"version": "0.1.0", "commit": "aaa", "prompts": "p1", "tools": "t1"}}
    new = {"code": {"version": "0.1.0", "commit": "bbb", "prompts": "p1", "tools": "t2"}}
    assert code_conflicts(old, new) == ["git commit aaa -> bbb", "tool schemas t1 -> t2"]
    assert code_conflicts(old, old) == []
    assert code_conflicts({}, new) == ["the earlier cells carry no code fingerprint (made before fingerprints "
                                       "covered code)"]


def _config(tmp_path: Path, run_extra: str = "") -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(
        "models: [{name: walkthrough, provider: scripted}]\n"
        "datasets: [{suite: offline, task_ids: [offline_vulns_001]}]\n"
        "agent: {trace: false}\n"
        f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: 1, html_report: false{run_extra}}}\n"
    )
    return path


@pytest.mark.slow
def test_bench_refuses_to_resume_over_other_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path)
    first = asyncio.run(run_bench(config, write_reports=False))
    assert (first.ran, first.failed) == (1, 0)
    monkeypatch.setattr(graph.prompting.render, "DEFAULT_PROMPT_DIR", _edited_prompts(tmp_path))

    with pytest.raises(MixedCodeError, match=r"different code \(prompts [0-9a-f]+ -> [0-9a-f]+\).*--fresh"):
        asyncio.run(run_bench(config, write_reports=False))
    refused = CliRunner().invoke(app, ["bench", str(config)])
    assert refused.exit_code == 2 and "--allow-mixed" in refused.output

    mixed = asyncio.run(run_bench(config, write_reports=False, allow_mixed=True))
    assert (mixed.skipped, mixed.ran) == (1, 0)
    manifest = json.loads((first.run_dir / "manifest.json").read_text())
    assert manifest["allow_mixed"] is True
    assert manifest["sessions"][-1]["mixed_code"][0].startswith("prompts ")
    assert manifest["sessions"][0]["allow_mixed"] is False

    fresh = asyncio.run(run_bench(config, write_reports=False, fresh=True))
    assert (fresh.skipped, fresh.ran) == (0, 1)
    manifest = json.loads((first.run_dir / "manifest.json").read_text())
    assert len(manifest["sessions"]) == 1 and manifest["allow_mixed"] is False


@pytest.mark.slow
def test_sgr_run_refuses_to_rereport_a_run_of_other_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["run", "--task", "offline_vulns_001-g", "--model", "scripted", "--out", str(tmp_path / "runs")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    out_dir = tmp_path / "runs" / "offline_vulns_001-g" / "scripted" / "full"
    assert json.loads((out_dir / "fingerprint.json").read_text())["code"] == code_fingerprint()

    monkeypatch.setattr(graph.prompting.render, "DEFAULT_PROMPT_DIR", _edited_prompts(tmp_path))
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "different code (prompts" in refused.output and "--fresh" in refused.output
    allowed = CliRunner().invoke(app, [*args, "--allow-mixed"])
    assert allowed.exit_code == 0, allowed.output
    recorded = json.loads((out_dir / "fingerprint.json").read_text())
    assert recorded["allow_mixed"] is True and recorded["mixed_code"][0].startswith("prompts ")


def test_run_section_executor_keys(tmp_path: Path) -> None:
    good = _config(tmp_path, ", executor: ray, ray: {address: auto, num_cpus_per_cell: 0.5, memory_per_cell: 2GiB, "
                             "max_in_flight: 3, runtime_env: {env_vars: {A: b}}}")
    ray = load_config(good).run.ray
    assert (ray.address, ray.num_cpus_per_cell, ray.max_in_flight, ray.runtime_env) == ("auto", 0.5, 3,
                                                                                        {"env_vars": {"A": "b"}})
    assert memory_bytes(ray.memory_per_cell) == 2 * 2**30 and memory_bytes("1500MB") == 1_500_000_000
    with pytest.raises(ConfigError, match=r"run\.executor: Input should be 'local' or 'ray'"):
        load_config(_config(tmp_path, ", executor: dask"))
    with pytest.raises(ConfigError, match=r"run\.ray\.memory_per_cell: .*'2 parsecs' is not a size"):
        load_config(_config(tmp_path, ", ray: {memory_per_cell: 2 parsecs}"))
    with pytest.raises(ConfigError, match=r"run\.ray\.max_in_flight"):
        load_config(_config(tmp_path, ", ray: {max_in_flight: 0}"))


def test_ray_executor_without_the_extra_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees without the extra
    with pytest.raises(ConfigError, match=r"run\.executor: ray needs Ray.*pip install -e '\.\[ray\]'"):
        asyncio.run(run_bench(_config(tmp_path), executor="ray"))
    assert not (tmp_path / "run" / "manifest.json").exists()  # nothing written


def test_a_run_folder_scored_in_one_mode_refuses_cells_of_the_other(tmp_path: Path) -> None:
    """Resuming with `scoring.compat` changed would mix EM-with-order and EM-without-order cells in one summary."""
    from agent.rundir.manifest import config_fingerprints, fingerprint_conflicts

    ours = load_config(_config(tmp_path, ""))
    authors = ours.model_copy(update={"scoring": ours.scoring.model_copy(update={"compat": "authors"})})
    assert fingerprint_conflicts(config_fingerprints(ours), config_fingerprints(authors)) == [
        "datasets/protocol/scoring differ"]
    assert fingerprint_conflicts(config_fingerprints(ours), config_fingerprints(ours.model_copy())) == []
