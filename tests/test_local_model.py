"""The packaged local model (SmolLM2-135M-Instruct on llama.cpp) drives `sgr run` end to end.

Any score is accepted: what is tested is the real-model path - the server starts and stops, the real
`ChatOpenAI` client talks to it, the graph survives whatever the model emits, and the run leaves a valid
answer file, a score, a transcript and no unhandled exception. Skipped (with the reason printed) only where
the server cannot be built: `.ci/run` builds the extra `local` in the background and runs this file after the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent.measuring.local_server import server_available

pytestmark = pytest.mark.slow
TASK = "offline_regulatory_001"


def test_sgr_run_with_the_local_model_completes_with_answer_score_and_transcript(tmp_path: Path):
    reason = server_available()
    if reason:
        print(f"SKIPPED local model test: {reason}")
        pytest.skip(f"the local model server cannot run here: {reason}")
    config = yaml.safe_load(Path("configs/local.yaml").read_text())
    config["protocol"]["budgets"].update(max_steps=3, wall_seconds=1800)
    config_path = tmp_path / "local.yaml"
    config_path.write_text(yaml.safe_dump(config))
    # planner off: its JSON-grammar plan is the slowest call on a CPU (docs/local_model.md); the actor path is what is tested
    done = subprocess.run([sys.executable, "-m", "agent.cli", "run", "--model", "local", "--ablate", "planner",
                           "--task", TASK, "--config", str(config_path), "--out", str(tmp_path / "runs")],
                          capture_output=True, text=True, timeout=1500)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode in (0, 1), done.stderr[-3000:]
    run = tmp_path / "runs" / TASK / "local" / "no-planner"
    outcome = json.loads((run / "outcome.json").read_text())
    assert outcome["error_kind"] not in ("bug", "config"), outcome
    assert outcome["error_kind"] != "infra" or "500" not in (outcome["error"] or ""), outcome  # null-content 500
    assert outcome["steps"] >= 1 and outcome["stop_reason"]
    assert (run / "answer.txt").read_text() == outcome["answer"]
    score = json.loads((run / "score.json").read_text())
    assert {"exact_match", "item_f1", "row_f1"} <= set(score) or score.get("parse_failure") is True, score
    transcript = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
    assert transcript and transcript[0]["status"] == 200
    assert transcript[0]["request"]["model"] == "smollm2-135m-instruct" and transcript[0]["request"]["messages"]
    assert transcript[0]["response"]["usage"]["prompt_tokens"] > 0
    assert outcome["prompt_tokens"] == sum(t["response"]["usage"]["prompt_tokens"] for t in transcript
                                           if t["status"] == 200)


def test_the_local_server_answers_one_capped_tool_call_per_turn():
    """`sgr-chatml-tools` on the real model: exactly one call of an offered tool, the reply cap honoured (the
    library's `chatml-function-calling` ignored it with `tool_choice: auto`), the prompt counted once."""
    import httpx

    from agent.measuring.local_server import SERVED_MODEL_ID, LocalModelServer

    reason = server_available()
    if reason:
        print(f"SKIPPED local model test: {reason}")
        pytest.skip(f"the local model server cannot run here: {reason}")
    tools = [{"type": "function", "function": {
        "name": "note", "description": "Write a note.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}]
    messages = [{"role": "system", "content": "You write notes."},
                {"role": "user", "content": "Write a very long note about the history of the river Thames."}]
    with LocalModelServer() as server:
        reply = httpx.post(f"{server.base_url}/chat/completions", timeout=600, json={
            "model": SERVED_MODEL_ID, "messages": messages, "tools": tools, "tool_choice": "required",
            "max_tokens": 12, "temperature": 0.0}).json()
        prose = httpx.post(f"{server.base_url}/chat/completions", timeout=600, json={
            "model": SERVED_MODEL_ID, "messages": messages, "max_tokens": 5, "temperature": 0.0}).json()
        assert server.cpu_seconds() and server.cpu_seconds() > 0
    message = reply["choices"][0]["message"]
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["note"]
    assert message["tool_calls"][0]["function"]["arguments"].startswith("{")
    assert reply["choices"][0]["finish_reason"] == "length"  # the note was cut at 12 tokens, not run on
    assert reply["usage"]["completion_tokens"] <= 12 + 8  # the arguments plus the few tokens naming the tool
    assert 40 < reply["usage"]["prompt_tokens"] < 200  # the rendered prompt once, not once per sub-completion
    assert isinstance(prose["choices"][0]["message"]["content"], str)
    assert prose["usage"]["completion_tokens"] <= 5
