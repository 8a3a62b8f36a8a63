"""Issue 40, "what a researcher hits first" item 3: `sgr play` at the terminal could not be left cleanly (Ctrl-C
once did nothing and twice printed a traceback, Ctrl-D printed EOFError and the agent asked again, no quit
command, the run folder left unfinished), every answer was full JSON, and each tool's schema was one
1,500-character line. Now `:quit`, Ctrl-C and Ctrl-D end the run as stopped by the player, the common tools
have a short form made from their own schemas, and tools are shown as compact signatures."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.clients.transcript import read_transcript
from agent.measuring.play_replies import check_reply, parse_line
from agent.measuring.play_view import RequestView, tool_lines
from agent.measuring.players import HELP
from graph.tools.tool_schemas import plan_tool, tool_schemas

ROOT = Path(__file__).resolve().parents[1]
TOOLS = [*tool_schemas(search=False), plan_tool()]
BODY = {"messages": [{"role": "user", "content": "TASK"}], "tools": TOOLS}
PATH = json.loads((ROOT / "tests/data/real_model_paths/offline_vulns_003.json").read_text())
QUERY = "/vulns/search?keyword=local+user&severity=MEDIUM&date_type=published&from=2021-01-01&to=2021-06-30"


@pytest.mark.parametrize(("typed", "args"), [
    ("click e12", {"target": {"ref": "e12"}}),
    ("select e4 New York", {"target": {"ref": "e4"}, "option": "New York"}),
    ('fill e7 "2021-01-01"', {"target": {"ref": "e7"}, "value": "2021-01-01"}),
    ("check e9 false", {"target": {"ref": "e9"}, "checked": False}),
    ("set_range e3 e5 2020-01-01 2020-12-31", {"start_target": {"ref": "e3"}, "end_target": {"ref": "e5"},
                                               "start": "2020-01-01", "end": "2020-12-31"}),
    ("read_table 2 true", {"table": 2, "all_pages": True}),
    ("finish year desc, name", {"order_by": ["year desc", "name"]}),
    ("finish", {}),
    ('click label="Next page"', {"target": {"label": "Next page"}}),
    ("derive SELECT a, b FROM t", {"sql": "SELECT a, b FROM t"}),
])
def test_a_short_answer_is_the_call_its_schema_reads(typed, args):
    reply = parse_line(typed, BODY)
    assert reply == {"tool": typed.split()[0], "args": args}
    assert check_reply(reply, BODY) is None


@pytest.mark.parametrize(("typed", "problem"), [
    ("click e12 e13", "more words than parameters"), ("click Search", "is not a ref such as e12"),
    ("read_table two", "'two' is not a number"), ("extract_rows x", "has no short form"),
    ("teleport e1", "no tool 'teleport'")])
def test_a_short_answer_that_does_not_fit_says_why(typed, problem):
    with pytest.raises(ValueError, match=problem):
        parse_line(typed, BODY)


def test_tools_are_shown_as_compact_signatures_with_their_short_form():
    lines = tool_lines(TOOLS)
    assert max(len(line) for line in lines) < 300  # a schema was one 1,500-character line
    assert "  * select(target, option, mode?) Choose an option (its label or value) of a dropdown or radio group." in lines
    assert "      short: select REF OPTION..." in lines and "      short: click REF" in lines
    assert not any(line.startswith("      short: Plan") or line.startswith("      short: extract_rows")
                   for line in lines)
    shown = RequestView().render(1, BODY)
    assert "short: finish [ORDER_BY,...]" in shown and "gates: [{kind: source|scope|filter" in shown
    assert "click e12" in HELP and ":quit" in HELP and "Ctrl-D" in HELP


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}


class _Terminal:
    """`sgr play` in a subprocess, its stderr collected as it comes."""

    def __init__(self, tmp_path: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "play", "--task", "offline_vulns_003", "--out",
                                      str(tmp_path / "runs")], cwd=ROOT, env=_env(tmp_path), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.seen: list[str] = []
        threading.Thread(target=lambda: self.seen.extend(iter(lambda: self.proc.stderr.read(1), "")),
                         daemon=True).start()
        self.run = tmp_path / "runs" / "offline_vulns_003" / "play" / "full"

    def wait_for(self, prompts: int) -> str:
        deadline = time.time() + 120
        while "".join(self.seen).count("answer> ") < prompts:
            assert time.time() < deadline and self.proc.poll() is None, "".join(self.seen)[-2000:]
            time.sleep(0.1)
        return "".join(self.seen)

    def finish(self) -> str:
        self.proc.wait(timeout=120)
        time.sleep(0.2)
        return "".join(self.seen)


def _stopped(run: Path, how: str, request: int) -> None:
    outcome = json.loads((run / "outcome.json").read_text())
    assert outcome["stop_reason"] == "stopped_by_player" and outcome["error_kind"] is None
    assert json.loads((run / "play.json").read_text())["stopped"] == {"by": how, "request": request}
    assert (run / "score.json").exists() and not (run / "checkpoints.sqlite").exists()  # finished: not resumed


@pytest.mark.slow
def test_ctrl_d_after_short_answers_ends_the_run_as_stopped_by_the_player(tmp_path):
    term = _Terminal(tmp_path)
    origin = re.search(r"START URL: (http://127\.0\.0\.1:\d+)", term.wait_for(1)).group(1)
    term.proc.stdin.write(f"Plan {json.dumps(PATH['plan']).replace('{origin}', origin)}\n")
    term.wait_for(2)
    term.proc.stdin.write(f"goto {origin}{QUERY}\n")  # the short form
    term.wait_for(3)
    term.proc.stdin.close()  # Ctrl-D
    shown = term.finish()
    assert term.proc.returncode == 0, shown[-3000:]
    assert "Traceback" not in shown and "EOFError" not in shown and "stopped by the player" in shown
    lines = read_transcript(term.run / "transcript.jsonl")
    call = lines[1]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "goto" and json.loads(call["arguments"]) == {"url": origin + QUERY}
    assert [line["status"] for line in lines] == [200, 200, 403]
    _stopped(term.run, "Ctrl-D (end of input)", 3)


@pytest.mark.slow
def test_ctrl_c_ends_the_run_as_stopped_by_the_player(tmp_path):
    term = _Terminal(tmp_path)
    term.wait_for(1)
    term.proc.send_signal(signal.SIGINT)
    shown = term.finish()
    assert term.proc.returncode == 0, shown[-3000:]
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown
    _stopped(term.run, "Ctrl-C", 1)
