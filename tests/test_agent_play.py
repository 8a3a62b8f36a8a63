"""Play the model: `sgr play` runs the agent as usual while a person (at the terminal: stdin) or a program
(through a folder) answers each model request over the real wire path. The run folder is the usual one plus
the transcript and who played; a mistake is shown and the request stays open."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.clients.transcript import read_transcript
from agent.measuring.paths.record import path_from_run
from agent.measuring.play_replies import check_reply, parse_line
from agent.measuring.play_view import RequestView

ROOT = Path(__file__).resolve().parents[1]
PATH = json.loads((ROOT / "tests/data/real_model_paths/offline_vulns_003.json").read_text())
QUERY = "/vulns/search?keyword=local+user&severity=MEDIUM&date_type=published&from=2021-01-01&to=2021-06-30"
GOTO = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"], "additionalProperties": False}
BODY = {"messages": [{"role": "system", "content": "You are the agent."}, {"role": "user", "content": "TASK one"}],
        "tools": [{"type": "function", "function": {"name": "goto", "description": "Open a URL.", "parameters": GOTO}}],
        "tool_choice": "auto"}


def test_a_request_is_shown_once_whole_then_only_what_is_new():
    view = RequestView()
    first = view.render(1, BODY)
    assert "=== SYSTEM PROMPT\nYou are the agent." in first and "* goto(url) Open a URL." in first and "TASK one" in first
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                                "function": {"name": "goto", "arguments": "{}"}}]}
    second = view.render(2, {**BODY, "messages": [*BODY["messages"], call,
                                                  {"role": "tool", "tool_call_id": "c1", "content": "ok=True"},
                                                  {"role": "user", "content": "TASK two"}]})
    assert "SYSTEM PROMPT" not in second and "goto(url) Open a URL." not in second and "TASK one" not in second
    assert "(1 earlier messages unchanged)" in second and "CALL goto {}  (c1)" in second and "TASK two" in second


def test_a_reply_is_checked_against_the_requests_own_schemas():
    assert check_reply({"tool": "goto", "args": {"url": "http://x/"}}, BODY) is None
    assert check_reply({"tool": "click", "args": {}}, BODY) == "no tool 'click' in this request; offered: goto"
    assert check_reply({"tool": "goto", "args": {"url": 5}}, BODY) == "goto: url: 5 is not of type 'string'"
    assert "'url' is a required property" in check_reply({"tool": "goto", "args": {}}, BODY)
    forced = {**BODY, "tool_choice": {"type": "function", "function": {"name": "goto"}}}
    assert check_reply({"content": "hi"}, forced) == "this request requires a tool call to goto"
    assert parse_line("say I am done") == {"content": "I am done"}
    with pytest.raises(ValueError, match="not JSON"):
        parse_line('goto {"url": ')


def test_play_options_are_checked_before_anything_runs(tmp_path):
    from typer.testing import CliRunner

    from agent.cli import app

    wrong = CliRunner().invoke(app, ["play", "--task", "offline_vulns_003", "--player", "robot", "--out", str(tmp_path)])
    assert wrong.exit_code == 2 and "--player 'robot': write person, llm:NAME or program:NAME" in wrong.output
    alone = CliRunner().invoke(app, ["run", "--task", "offline_vulns_003", "--model", "scripted", "--player", "person",
                                     "--out", str(tmp_path)])
    assert alone.exit_code == 2 and "--player goes with --model play" in alone.output
    assert not any(tmp_path.iterdir())


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}


def _answers(origin: str) -> list[str]:
    plan = json.dumps(PATH["plan"]).replace("{origin}", origin)
    return [f"Plan {plan}", f"goto {json.dumps({'url': origin + QUERY})}",
            *[f"{s['tool']} {json.dumps(s['args'])}" for s in PATH["steps"][-3:]]]


def _check_run(run: Path, expected_player: dict) -> None:
    assert json.loads((run / "score.json").read_text())["exact_match"] is True
    assert json.loads((run / "play.json").read_text())["player"] == expected_player
    lines = read_transcript(run / "transcript.jsonl")
    assert [line["status"] for line in lines] == [200] * 5  # the planner and four actor steps, none refused
    assert lines[1]["response"]["model"] == "play/" + ":".join(expected_player.values())
    path = path_from_run(run)  # a played run becomes a decision path
    assert path.task == "offline_vulns_003" and [s.tool for s in path.steps] == ["goto", "read_table",
                                                                                  "extract_rows", "finish"]
    assert path.steps[0].args["url"] == "{origin}" + QUERY and path.plan["source"] == PATH["plan"]["source"]
    assert path.player == expected_player


@pytest.mark.slow
def test_play_at_the_terminal_through_stdin(tmp_path):
    """A person: sees the system prompt and tools once, types each call; a mistake keeps the request open."""
    proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "play", "--task", "offline_vulns_003", "--out",
                             str(tmp_path / "runs")], cwd=ROOT, env=_env(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()

    def wait_for(prompts: int) -> str:
        deadline = time.time() + 120
        while "".join(seen).count("answer> ") < prompts:
            assert time.time() < deadline and proc.poll() is None, "".join(seen)[-2000:]
            time.sleep(0.1)
        return "".join(seen)

    origin = re.search(r"START URL: (http://127\.0\.0\.1:\d+)", wait_for(1)).group(1)
    answers = _answers(origin)
    proc.stdin.write(answers[0] + "\n")
    wait_for(2)
    proc.stdin.write('goto {"url": 5}\n')  # a mistake: shown, and the same request is asked again
    wait_for(3)
    proc.stdin.write('goto {"url": "x"\n\n')  # JSON that never closes: a blank line ends it
    wait_for(4)
    for n, answer in enumerate(answers[1:]):
        proc.stdin.write(answer + "\n")
        if n < len(answers) - 2:
            wait_for(5 + n)
    out, _ = proc.communicate(timeout=180)
    shown = "".join(seen)
    assert proc.returncode == 0, shown[-3000:]
    assert shown.count("=== SYSTEM PROMPT") == 2  # the planner's and the actor's, each once
    assert shown.count("* goto(url)") == 1 and "! goto: url: 5 is not of type 'string'; the request is still open" in shown
    assert "! arguments are not JSON" in shown and "OVR-2021-01011" in out
    _check_run(tmp_path / "runs" / "offline_vulns_003" / "play" / "full", {"kind": "person"})


@pytest.mark.slow
def test_play_through_a_folder(tmp_path):
    """Another program: reads req-N.json, writes resp-N.json; a reply that breaks the schema is set aside."""
    folder = tmp_path / "play"
    proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "play", "--task", "offline_vulns_003", "--folder",
                             str(folder), "--player", "llm:test-llm", "--out", str(tmp_path / "runs")], cwd=ROOT,
                            env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def request(n: int) -> dict:
        deadline = time.time() + 120
        while not (folder / f"req-{n}.json").exists():
            assert time.time() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else n
            time.sleep(0.1)
        return json.loads((folder / f"req-{n}.json").read_text())

    first = request(1)
    origin = re.search(r"START URL: (http://127\.0\.0\.1:\d+)", json.dumps(first)).group(1)
    answers = [parse_line(a) for a in _answers(origin)]
    (folder / "resp-1.json").write_text(json.dumps({"tool": "Plan", "args": {"gates": "none"}}))
    deadline = time.time() + 30
    while not (folder / "resp-1.error.txt").exists():
        assert time.time() < deadline
        time.sleep(0.1)
    assert "Plan: gates" in (folder / "resp-1.error.txt").read_text()
    for n, answer in enumerate(answers, start=1):
        request(n)
        (folder / f"resp-{n}.json").write_text(json.dumps(answer))
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err[-3000:]
    assert (folder / "resp-1.rejected.json").exists() and not (folder / "resp-1.error.txt").exists()
    assert "=== SYSTEM PROMPT" not in (folder / "req-3.txt").read_text()  # only what is new in each request
    _check_run(tmp_path / "runs" / "offline_vulns_003" / "play" / "full", {"kind": "llm", "name": "test-llm"})
