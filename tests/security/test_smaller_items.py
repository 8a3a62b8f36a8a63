"""Issue 29 item 6, the smaller findings, each reproduced before its fix:
two `sgr run` on one task and `--out` were not locked against each other; `usage.prompt_tokens: "lots"` was a
`bug` and `-5e9` was accepted (the token budget could never trip); a password inside `base_url` was written to
manifest.json in clear; a model name that looks like Rich markup crashed the last console line; `sgr review init`
crashed on snapshot values that are dicts; a folder holding only `run.lock` was left after a config error;
`duckdb_settings()` showed the host's paths and `uuid()`/`INTERVAL` gave an internal TypeError."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.clients.chat import make_chat_model
from agent.config import BenchConfig
from agent.measuring.fake_server import FakeOpenAIServer, completion
from agent.reports.review import init_run_reviews
from agent.rundir.manifest import config_snapshot
from agent.runner.bench import run_lock
from browser.trace import Redactor
from graph.evidence.evidence_tables import WorkspaceError, run_query
from graph.nodes.common import LLMCallError, call_model

runner = CliRunner()


def test_smaller_two_sgr_run_on_one_folder_are_locked(tmp_path: Path):
    out_dir = tmp_path / "runs" / "offline_stats_001" / "scripted" / "full"
    out_dir.mkdir(parents=True)
    with run_lock(out_dir, "sgr run"):  # another `sgr run` holds the folder
        second = runner.invoke(app, ["run", "--task", "offline_stats_001", "--model", "scripted",
                                     "--out", str(tmp_path / "runs")])
    assert second.exit_code == 2, second.output
    assert "another `sgr run` is running on this folder" in second.output
    assert not (out_dir / "steps.jsonl").exists()  # nothing of the second run was written


@pytest.mark.parametrize("tokens", ["lots", -5e9, 1e30])
def test_smaller_usage_that_is_not_a_count_is_a_config_error(tokens):
    body = completion({"tool_calls": [{"name": "scroll", "arguments": {}}]}, 1, "m")
    body["usage"] = {"prompt_tokens": tokens, "completion_tokens": 3, "total_tokens": 5}
    with FakeOpenAIServer([body]) as fake:
        chat = make_chat_model(fake.model_config(), "t")
        with pytest.raises(LLMCallError) as info:
            asyncio.run(call_model(chat.ainvoke("hello"), 30))
    assert info.value.kind == "config" and "not a token count" in str(info.value)


def test_smaller_password_in_base_url_never_written():
    config = BenchConfig.model_validate({"models": [{"name": "m", "base_url": "https://bob:pw-Zq81xk@llm.example/v1"}]})
    snapshot = json.dumps(config_snapshot(config))
    assert "pw-Zq81xk" not in snapshot and "https://bob:<redacted>@llm.example/v1" in snapshot
    error = "model 'm' (m at https://bob:pw-Zq81xk@llm.example/v1): APIConnectionError"
    assert "pw-Zq81xk" not in Redactor([]).text(error)  # outcome.json, steps.jsonl, the console


def test_smaller_review_init_with_dict_snapshot_values(tmp_path: Path):
    cell = tmp_path / "cells" / "m" / "full" / "t1"
    cell.mkdir(parents=True)
    score = {"item_f1": 0.5, "row_f1": 0.0, "poa": 0.0, "exact_match": False, "parse_failure": False,
             "evidence": {"prediction_status": "rows"}}
    (cell / "cell.json").write_text(json.dumps({"model": "m", "variant": "full", "task_id": "t1", "score": score,
                                                "outcome": {"stop_reason": "finished", "steps": 3}}))
    gate = {"kind": "filter", "name": "Region", "target": "Asia", "required": True}
    (cell / "retrieval_state.json").write_text(json.dumps({
        "plan": {"gates": [gate]},
        "visited": [{"step": 1, "url": "http://h/", "values": {"region": {"value": {"label": "Asia"},
                                                                           "set_at_step": 1}}}],
        "rows": [{"provenance": {"step": 2, "state": {"region": {"value": "Europe", "evidence": ["url"]}}}}]}))
    written, _ = init_run_reviews(tmp_path)
    [template] = written
    assert "first divergence from the plan" in template.read_text()


def test_smaller_no_folder_holding_only_run_lock_after_a_config_error(tmp_path: Path):
    run_dir = tmp_path / "run"
    config = tmp_path / "bench.yaml"
    config.write_text("models: [{name: walkthrough, provider: scripted}]\n"
                      "datasets: [{suite: offline, task_ids: [no_such_task]}]\n"
                      f"run: {{output_dir: '{run_dir}'}}\n")
    done = runner.invoke(app, ["bench", str(config)])
    assert done.exit_code == 2 and "error" in done.output
    assert not run_dir.exists()  # not a folder holding only run.lock


@pytest.mark.parametrize(("sql", "expect"), [
    ("SELECT uuid() AS u, INTERVAL 1 DAY AS i", "rows"),
    ("SELECT * FROM duckdb_settings()", "describes the engine"),
    ("SELECT current_setting('secret_directory') AS s", "describes the engine"),
    ('SELECT * FROM "duckdb_settings"()', "describes the engine"),
])
def test_smaller_derive_types_and_engine_settings(sql, expect):
    if expect == "rows":
        result = run_query({}, sql)
        [row] = result.rows
        assert isinstance(row["u"], str) and len(row["u"]) == 36 and row["i"] == "1 day, 0:00:00"
        return
    with pytest.raises(WorkspaceError, match=expect):
        run_query({}, sql)


@pytest.mark.slow
def test_smaller_model_name_like_rich_markup_prints(tmp_path: Path):
    config = tmp_path / "run.yaml"
    config.write_text("models: [{name: '[/bold]x[red', provider: openai, model: m, api_key_env: SGR_TEST_UNSET_KEY_29}]\n"
                      "agent: {trace: false}\n")
    done = runner.invoke(app, ["run", "--task", "offline_stats_001", "--config", str(config),
                               "--out", str(tmp_path / "runs")])
    assert done.exit_code == 2, done.output  # a missing key is a one-line config error before any run folder
    assert isinstance(done.exception, SystemExit)  # no MarkupError
    assert "model '[/bold]x[red'" in done.output and "is not set" in done.output  # the name printed as written
