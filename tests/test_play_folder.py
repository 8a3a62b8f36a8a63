"""Issue 40, reliability item 4: `sgr play --folder` took a reused folder's old `resp-N.json` as answers (a run
"finished" in 3 s with no player), two runs on one folder overwrote each other, and a list as the tool name,
very deep JSON or a directory escaped the check and restarted the run, while a FIFO blocked for ever. Now a
folder is new or empty and locked to one run; every answer file is read as untrusted and a bad one is set
aside with one line for the player, the request still open. The helpers' `step.py` still drives a folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.measuring.players import DONE_FILE, LOCK_FILE, FolderPlayer, PlayFolderError

GOTO = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
BODY = {"messages": [{"role": "user", "content": "TASK"}],
        "tools": [{"type": "function", "function": {"name": "goto", "description": "Open a URL.", "parameters": GOTO}}]}
GOOD = {"tool": "goto", "args": {"url": "http://a/"}}
STEP = Path("/work/shared/tools/play/step.py")


def test_a_folder_holding_old_answers_is_refused(tmp_path):
    folder = tmp_path / "play"
    folder.mkdir()
    (folder / "resp-1.json").write_text(json.dumps(GOOD))
    with pytest.raises(PlayFolderError, match=r"not empty \(resp-1.json\).*give a new or empty folder"):
        FolderPlayer(folder)
    result = CliRunner().invoke(app, ["play", "--task", "offline_vulns_003", "--folder", str(folder), "--out",
                                      str(tmp_path / "runs")])
    assert result.exit_code == 2 and "not empty (resp-1.json)" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "runs").exists()  # no run folder either


def test_two_runs_on_one_folder_are_refused(tmp_path):
    folder = tmp_path / "play"
    first = FolderPlayer(folder)
    try:
        with pytest.raises(PlayFolderError, match="another run is playing through this folder"):
            FolderPlayer(folder)
    finally:
        first.close()
    assert (folder / DONE_FILE).exists() and not (folder / LOCK_FILE).exists()
    with pytest.raises(PlayFolderError, match="not empty"):  # a finished run's folder is not reused either
        FolderPlayer(folder)


def test_a_new_or_empty_folder_is_taken(tmp_path):
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "new" / "deeper"):
        FolderPlayer(folder).close()


def _bad_answers() -> list[tuple[str, object]]:
    deep = "[" * 5000 + "]" * 5000
    return [("list as the tool name", {"tool": ["goto"], "args": {}}),
            ("deep JSON", '{"tool": "goto", "args": {"url": ' + deep + "}}"),
            ("a directory", "DIR"), ("a FIFO", "FIFO"),
            ("args not an object", {"tool": "goto", "args": [1]})]


def test_every_bad_answer_file_is_set_aside_without_blocking_and_the_request_stays_open(tmp_path):
    folder = tmp_path / "play"
    player = FolderPlayer(folder, poll=0.02)
    resp, error = folder / "resp-1.json", folder / "resp-1.error.txt"
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(player.answer, 1, BODY)
        reasons = []
        for name, bad in _bad_answers():
            error.unlink(missing_ok=True)
            if bad == "DIR":
                resp.mkdir()
            elif bad == "FIFO":
                os.mkfifo(resp)
            else:
                resp.write_text(bad if isinstance(bad, str) else json.dumps(bad))
            for _ in range(250):
                if error.exists() and not os.path.lexists(resp):
                    break
                time.sleep(0.02)
            assert error.exists() and not os.path.lexists(resp), f"{name}: not set aside"
            text = error.read_text()
            assert text.count("\n") == 1 and len(text) < 520, name
            reasons.append(text.strip())
            assert not pending.done(), f"{name}: the request was closed"
        resp.write_text(json.dumps(GOOD))
        assert pending.result(timeout=10) == GOOD
    player.close()
    assert "string" in reasons[0] and "nested deeper" in reasons[1]
    assert "a directory" in reasons[2] and "a FIFO" in reasons[3] and "args must be a JSON object" in reasons[4]
    aside = sorted(p.name for p in folder.glob("resp-1.rejected*"))
    assert len(aside) == 5 and "resp-1.rejected.json" in aside


def test_the_helpers_step_script_still_plays_a_folder(tmp_path):
    if not STEP.exists():
        pytest.skip(f"{STEP} is not on this machine")
    folder = tmp_path / "play"
    player = FolderPlayer(folder, poll=0.02)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(player.answer, 1, BODY)
        shown = subprocess.run([sys.executable, str(STEP), str(folder)], capture_output=True, text=True, timeout=60)
        assert "=== REQUEST 1" in shown.stdout and "goto(url)" in shown.stdout
        wrong = subprocess.run([sys.executable, str(STEP), str(folder), "goto", '{"url": 5}'], capture_output=True,
                               text=True, timeout=60)
        assert "rejected" in wrong.stdout and "url: 5 is not of type 'string'" in wrong.stdout
        answering = subprocess.Popen([sys.executable, str(STEP), str(folder), "goto", json.dumps(GOOD["args"])],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert pending.result(timeout=30) == GOOD
    player.close()  # DONE: the script waiting for the next request sees the run is over
    assert "the run is over" in answering.communicate(timeout=30)[0]
    over = subprocess.run([sys.executable, str(STEP), str(folder)], capture_output=True, text=True, timeout=60)
    assert "the run is over" in over.stdout


def test_a_folder_request_shows_no_terminal_short_forms():
    """A folder's answers are JSON: its request text shows each tool's parameters, not the terminal's short forms
    (four played folder runs sent {"ref": ...} where `click REF` was shown); the terminal still shows them."""
    from agent.measuring.play_view import RequestView

    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
            "tools": [{"type": "function", "function": {"name": "click", "description": "Click.", "parameters": {
                "type": "object", "properties": {"target": {"type": "object", "properties": {"ref": {"type": "string"}}}},
                "required": ["target"]}}}]}
    assert "short: click" not in RequestView(short_forms=False).render(1, body)
    assert "short: click" in RequestView().render(1, body)
