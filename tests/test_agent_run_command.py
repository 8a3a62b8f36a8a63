"""`sgr run` end to end: offline server, real Chromium, scripted model, ablation flag, score and trace files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.commands.run import RunSetupError, make_variant, pick_model
from agent.config import ModelConfig


def test_model_and_variant_choice():
    assert pick_model("scripted", []).provider == "scripted"
    assert pick_model("gpt-x", []).model == "gpt-x"
    listed = [ModelConfig(name="a", model="m-a"), ModelConfig(name="b", model="m-b")]
    assert pick_model(None, listed).name == "a" and pick_model("b", listed).model == "m-b"
    with pytest.raises(RunSetupError, match=r"known: \['a', 'b'\]"):
        pick_model("c", listed)
    assert make_variant("").name == "full"
    assert make_variant("verifier, state_tracker").ablate == ["verifier", "state_tracker"]
    with pytest.raises(RunSetupError, match="unknown node"):
        make_variant("actor")


def test_bad_options_exit_with_a_message(tmp_path: Path):
    result = CliRunner().invoke(app, ["run", "--task", "x", "--suite", "offline", "--tasks", "f.jsonl"])
    assert result.exit_code == 2 and "either --suite or --tasks" in result.output


def test_an_out_path_that_is_a_file_exits_with_a_message_and_keeps_the_file(tmp_path: Path):
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    result = CliRunner().invoke(app, ["run", "--task", "offline_water_001", "--model", "scripted", "--out", str(taken)])
    assert result.exit_code == 2
    assert f"--out {taken}: cannot make the run folder" in " ".join(result.output.split())
    assert "Traceback" not in result.output and taken.read_text() == "mine"


@pytest.mark.slow
def test_sgr_run_offline_task_with_an_ablation(tmp_path: Path):
    result = CliRunner().invoke(app, ["run", "--task", "offline_water_001", "--suite", "offline", "--model", "scripted",
                                      "--ablate", "verifier", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "offline_water_001" / "scripted" / "no-verifier"
    score = json.loads((run_dir / "score.json").read_text())
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert score["exact_match"] is True
    assert outcome["variant"] == "no-verifier" and "verifier" not in outcome["nodes_run"]
    assert (run_dir / "answer.txt").read_text() in result.output
    for name in ("steps.jsonl", "retrieval_state.json"):
        assert (run_dir / name).is_file()
    assert not (run_dir / "checkpoints.sqlite").exists()  # the outcome stands: nothing resumes a finished run
    assert json.loads((run_dir / "retrieval_state.json").read_text())["final"]["url"].startswith("http://127.0.0.1:")

    browsed = (run_dir / "steps.jsonl").read_text().count('"node": "executor"')
    again = CliRunner().invoke(app, ["run", "--task", "offline_water_001", "--model", "scripted", "--ablate", "verifier",
                                     "--out", str(tmp_path)])
    assert again.exit_code == 0 and (run_dir / "answer.txt").read_text() in again.output
    assert (run_dir / "steps.jsonl").read_text().count('"node": "executor"') == browsed  # finished: re-reported
    assert "re-reporting it, nothing runs again" in again.output


@pytest.mark.slow
def test_sgr_run_retries_an_infrastructure_error_as_a_bench_cell(tmp_path: Path):
    """`sgr run` is a one-cell bench: an endpoint down (503 past the client's retries) is an infrastructure
    error, and the cell runs again (`run.retries`) in the same folder, its thread restarted from a clean slate;
    the next failure (a 400: a configuration error) is not retried."""
    from agent.measuring.fake_server import FakeOpenAIServer

    with FakeOpenAIServer([{"status": 503, "error": "endpoint down"}]) as fake:
        config = tmp_path / "run.yaml"
        config.write_text(f"models: [{{name: flaky, provider: openai, model: m, base_url: '{fake.base_url}', "
                          "api_key_env: null, max_retries: 0}]\n"
                          "run: {retries: 2, retry_backoff_seconds: 0}\nagent: {trace: false}\n", encoding="utf-8")
        result = CliRunner().invoke(app, ["run", "--task", "offline_water_001", "--config", str(config),
                                          "--ablate", "planner", "--out", str(tmp_path / "runs")])
        calls = len(fake.requests)
    assert result.exit_code == 1, result.output
    assert "attempt 1 ended in an infrastructure error, retried" in result.output and "attempt 2" not in result.output
    assert calls == 2  # the failed attempt's call, then the retry's
    run_dir = tmp_path / "runs" / "offline_water_001" / "flaky" / "no-planner"
    outcome = json.loads((run_dir / "outcome.json").read_text())
    assert outcome["error_kind"] == "config" and outcome["restarts"][0]["reason"] == "infra"
    events = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events if e.get("node") == "run" and e.get("event") in ("start", "restart")] == \
        ["start", "start", "restart"]
    # worded as what happened (issue 40): the retry once, never as an interruption "at step 0 (None)"; a failed
    # run prints and stores no answer (it read nothing: not the answer NONE)
    assert "interrupted" not in result.output and "(None)" not in result.output
    assert "NONE" not in result.output and (run_dir / "answer.txt").read_text() == "" and outcome["answer"] == ""
    assert result.stdout == ""  # stdout carries the answer, and there is none




def test_an_unknown_task_id_leaves_no_run_folder(tmp_path: Path):
    """Issue 40 item 8: it left fingerprint.json and run.lock behind; a config error makes no run folder."""
    result = CliRunner().invoke(app, ["run", "--task", "offline_nope_001", "--model", "scripted", "--out",
                                      str(tmp_path / "runs")])
    assert result.exit_code == 2 and "unknown task id(s)" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()
