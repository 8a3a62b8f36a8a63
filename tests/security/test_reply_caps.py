"""Issue 29 item 4 (caps on a model reply): 3,000 tool calls in one reply put 3,000 refusals into the history, a
30 MB prose reply was kept whole (344 MB of checkpoints, sent again in every request), and a call's arguments
had no size limit. A real run through `ChatOpenAI` against the fake server: each cap cuts with a message, the
history stays valid under OpenAI's chat rules, and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from agent.cli import app
from agent.measuring.fake_server import FakeOpenAIServer
from graph.model_io.caps import MAX_REPLY_CHARS, MAX_TOOL_ARGS_CHARS, MAX_TOOL_CALLS_PER_REPLY, bound_reply

MANY = 3000
PROSE = "Let me think about this. " * 80_000  # 2 MB of prose, no tool call
HUGE_ANSWER = "a|1\n" * 50_000  # 200 KB of arguments (a note, an answer, a query)


def test_reply_caps_bound_reply_unit():
    calls = [{"name": "scroll", "args": {}, "id": f"c{i}", "type": "tool_call"} for i in range(MANY)]
    ai, cuts = bound_reply(AIMessage(content=PROSE, tool_calls=calls))
    assert len(ai.tool_calls) == MAX_TOOL_CALLS_PER_REPLY and len(ai.content) < MAX_REPLY_CHARS + 100
    assert len(cuts) == 2 and "3,000 tool calls" in cuts[1]
    big = AIMessage(content="", tool_calls=[{"name": "finish", "args": {"answer": HUGE_ANSWER}, "id": "f",
                                             "type": "tool_call"}])
    ai, cuts = bound_reply(big)
    assert ai.tool_calls == [] and ai.invalid_tool_calls[0]["id"] == "f"
    assert f"cap of {MAX_TOOL_ARGS_CHARS:,}" in ai.invalid_tool_calls[0]["error"]
    untouched = AIMessage(content="ok", tool_calls=calls[:1])
    assert bound_reply(untouched) == (untouched, [])


def _valid_history(messages: list[dict]) -> bool:
    """Every assistant tool call answered by a tool message right after it, before any other message."""
    for i, message in enumerate(messages):
        ids = [c["id"] for c in message.get("tool_calls") or []]
        answered = []
        for follower in messages[i + 1:]:
            if follower.get("role") != "tool":
                break
            answered.append(follower.get("tool_call_id"))
        if ids and sorted(ids) != sorted(answered):
            return False
    return True


@pytest.mark.slow
def test_reply_caps_in_a_real_run(tmp_path: Path):
    replies = [
        {"tool_calls": [{"name": "scroll", "arguments": {"direction": "down"}}] * MANY},
        {"content": PROSE},
        {"tool_calls": [{"name": "finish", "arguments": {"note": HUGE_ANSWER}}]},
        {"tool_calls": [{"name": "finish", "arguments": {}}]},
    ]
    with FakeOpenAIServer(replies) as fake:
        config = tmp_path / "run.yaml"
        config.write_text(f"models: [{{name: capped, provider: openai, model: m, base_url: '{fake.base_url}', "
                          "api_key_env: null, max_retries: 0}]\nagent: {trace: false}\n", encoding="utf-8")
        done = CliRunner().invoke(app, ["run", "--task", "offline_stats_001", "--config", str(config),
                                        "--ablate", "planner,verifier", "--out", str(tmp_path / "runs")])
        requests = list(fake.requests)
    assert done.exit_code == 0, done.output
    assert len(requests) >= 4
    for body in requests:
        assert _valid_history(body["messages"])
        assert len(json.dumps(body)) < 400_000  # neither the prose nor the 3,000 calls are sent again
    later = requests[1]["messages"]
    assistant = [m for m in later if m.get("role") == "assistant"][-1]
    assert len(assistant["tool_calls"]) == MAX_TOOL_CALLS_PER_REPLY
    assert sum(m.get("role") == "tool" for m in later) == MAX_TOOL_CALLS_PER_REPLY
    refused = [m["content"] for m in requests[3]["messages"] if m.get("role") == "tool"]
    assert any("over the cap" in text for text in refused)
    run_dir = tmp_path / "runs" / "offline_stats_001" / "capped" / "no-planner-verifier"
    steps = (run_dir / "steps.jsonl").read_text()
    assert steps.count('"reply_cut"') == 3
    assert not (run_dir / "checkpoints.sqlite").exists()  # deleted once the outcome stands (its size while the
    # run goes: tests/security/test_checkpoint_size.py)
    assert json.loads((run_dir / "outcome.json").read_text())["stop_reason"] == "finished"


def test_reply_caps_transcript_keeps_the_start_of_a_huge_reply(tmp_path: Path):
    from agent.clients.transcript import MAX_RECORDED_BYTES, TranscriptRecorder, read_transcript

    recorder = TranscriptRecorder(tmp_path / "transcript.jsonl")
    body = json.dumps({"choices": [{"message": {"content": PROSE * 2}}]}).encode()
    recorder.record(b'{"messages": []}', 200, body)
    [line] = read_transcript(tmp_path / "transcript.jsonl")
    assert line["request"] == {"messages": []} and "over the transcript's cap" in line["response"]["sgr_cut"]
    assert (tmp_path / "transcript.jsonl").stat().st_size < MAX_RECORDED_BYTES // 10
