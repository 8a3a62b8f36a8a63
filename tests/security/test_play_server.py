"""Issue 40, reliability item 3: the `sgr play` server answered any local process (it could pose as the agent
to the player and read the player's answer), six unanswered requests blocked the agent, a malformed body
printed an ASGI traceback, and request files and transcripts were 0644. Now: a per-run secret (401 without
it, before the body is read), 400 in one line for a body that is not a request, one request at a time on the
server's own thread, and every file the run writes for the player 0600."""

from __future__ import annotations

import io
import json
import os
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from agent.clients.transcript import TranscriptRecorder
from agent.measuring.play_server import PLAY_KEY_ENV, STOPPED_STATUS, PlayServer, play_model, playing
from agent.measuring.players import FolderPlayer, PlayerStopped, TerminalPlayer

GOTO = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
BODY = {"model": "play", "messages": [{"role": "user", "content": "TASK"}],
        "tools": [{"type": "function", "function": {"name": "goto", "description": "Open a URL.", "parameters": GOTO}}]}


def _post(server: PlayServer, body: object, *, token: str | None = None, raw: bytes | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx.post(server.base_url + "/chat/completions", content=content, headers=headers, timeout=30)


def test_a_process_without_the_runs_secret_gets_401_and_the_player_never_sees_it():
    out = io.StringIO()
    player = TerminalPlayer(inp=io.StringIO('goto {"url": "http://a/"}\n'), out=out)
    with PlayServer(player) as server:
        assert _post(server, BODY).status_code == 401
        assert _post(server, BODY, token="guess").status_code == 401
        assert httpx.get(server.base_url + "/models", timeout=10).status_code == 401
        assert server.requests == 0 and out.getvalue() == ""  # nothing reached the player
        answered = _post(server, BODY, token=server.token)
    assert answered.status_code == 200
    call = answered.json()["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "goto" and json.loads(call["arguments"]) == {"url": "http://a/"}


def test_many_requests_from_an_outsider_do_not_hold_up_the_agents_request(tmp_path):
    folder = tmp_path / "play"
    player = FolderPlayer(folder, poll=0.05)
    try:
        with PlayServer(player) as server, ThreadPoolExecutor(max_workers=12) as pool:
            outsiders = [pool.submit(_post, server, BODY) for _ in range(10)]
            assert [f.result().status_code for f in outsiders] == [401] * 10
            agent = pool.submit(_post, server, BODY, token=server.token)
            deadline = time.time() + 20
            while not (folder / "req-1.json").exists():
                assert time.time() < deadline, "the agent's request never reached the player"
                time.sleep(0.05)
            (folder / "resp-1.json").write_text(json.dumps({"tool": "goto", "args": {"url": "http://a/"}}))
            assert agent.result(timeout=20).status_code == 200
            assert server.requests == 1 and not (folder / "req-2.json").exists()
    finally:
        player.close()


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"messages": [1]}', b'{"messages": "hi"}',
                                 b'{"messages": [{"role": "user", "content": "x"}], "tools": [1]}',
                                 b'{"messages": [{"role": "assistant", "content": "", "tool_calls": "x"}]}',
                                 b"[" * 100_000 + b"]" * 100_000])
def test_a_malformed_body_is_400_in_one_line_without_a_traceback(raw, capfd):
    player = TerminalPlayer(inp=io.StringIO(""), out=io.StringIO())
    with PlayServer(player) as server:
        response = _post(server, None, token=server.token, raw=raw)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message and "\n" not in message
    assert "Traceback" not in capfd.readouterr().err


def test_request_files_answers_and_transcripts_are_private(tmp_path):
    folder = tmp_path / "play"
    player = FolderPlayer(folder, poll=0.05)
    try:
        with PlayServer(player) as server:
            threading.Timer(0.5, lambda: (folder / "resp-1.json").write_text(
                json.dumps({"tool": "goto", "args": {"url": "http://a/"}}))).start()
            assert _post(server, BODY, token=server.token).status_code == 200
    finally:
        player.close()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("req-1.json", "req-1.txt", "resp-1.json", "DONE"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    transcript = tmp_path / "transcript.jsonl"
    TranscriptRecorder(transcript).record(b"{}", 200, b"{}")
    assert stat.S_IMODE(transcript.stat().st_mode) == 0o600


def test_playing_hands_the_secret_to_the_agents_client_and_takes_it_back(tmp_path):
    model = play_model(str(tmp_path / "play"))
    with playing(model, tmp_path) as played:
        assert played.model.api_key_env == PLAY_KEY_ENV and os.environ[PLAY_KEY_ENV] == played.server.token
        assert played.model.api_key() == played.server.token
    assert PLAY_KEY_ENV not in os.environ
    assert played.server.token not in (tmp_path / "play.json").read_text()
    assert stat.S_IMODE((tmp_path / "play.json").stat().st_mode) == 0o600


@pytest.mark.parametrize(("typed", "how"), [(":quit\n", ":quit"), ("", "Ctrl-D (end of input)")])
def test_quit_or_end_of_input_stops_the_run_and_every_later_request(typed, how):
    player = TerminalPlayer(inp=io.StringIO(typed), out=io.StringIO())
    with PlayServer(player) as server:
        first = _post(server, BODY, token=server.token)
        later = _post(server, BODY, token=server.token)
    assert first.status_code == later.status_code == STOPPED_STATUS
    assert "the player stopped the run" in first.json()["error"]["message"]
    assert server.stopped == {"by": how, "request": 1}


def test_ctrl_c_wakes_a_player_waiting_at_a_real_terminal_descriptor():
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as inp:
        player = TerminalPlayer(inp=inp, out=io.StringIO())
        threading.Timer(0.3, player.stop, args=("Ctrl-C",)).start()
        started = time.monotonic()
        with pytest.raises(PlayerStopped) as info:
            player.answer(1, BODY)
        assert info.value.how == "Ctrl-C" and time.monotonic() - started < 5
    os.close(write_end)


def test_the_answering_thread_is_the_servers_own():
    """The player is answered on the server's single thread, not the event loop's shared pool (six waiting
    answers filled that pool on a 2-core machine, and every later `to_thread` of the process waited)."""
    seen = []
    player = TerminalPlayer(inp=io.StringIO('goto {"url": "http://a/"}\n'), out=io.StringIO())
    original = player.answer
    player.answer = lambda n, body: seen.append(threading.current_thread().name) or original(n, body)
    with PlayServer(player) as server:
        assert _post(server, BODY, token=server.token).status_code == 200
    assert seen and seen[0].startswith("player")
