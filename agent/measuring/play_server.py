"""Play the model: an OpenAI-compatible chat server on loopback whose replies come from a player (a person
at the terminal, or another program through a folder: `players.py`).

The agent runs exactly as with a hosted model: its `ChatOpenAI` client sends each request over HTTP, the
transcript records it, and the server is as strict as OpenAI's (a request it would refuse gets HTTP 400 and
the player is told). A played run is one model's behaviour on one task (a person's, or an LLM's reading the
requests), not a benchmark score. Who played is recorded in the run folder (`play.json`) and as the `model`
of every response in the transcript.

Only the run's own agent is answered: the server is made with a per-run secret, handed to the agent's client
as its API key through an environment variable (so it is redacted from every artefact like any key); another
local process gets HTTP 401 before its body is read, so it can neither pose as the agent to the player nor
queue requests in front of the agent's. A body that is not a JSON request gets HTTP 400 in one line. Requests
are answered one at a time on the server's own thread. When the player stops the run (`PlayerStopped`), that
request and every later one get HTTP 403 (a configuration status: the run ends, nothing retries it) and the
run's outcome says `stopped_by_player` (`stopped_by_player()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from agent.config import ModelConfig, ProtocolConfig
from agent.measuring.chat_endpoint import ChatEndpoint
from agent.measuring.fake_server import completion
from agent.measuring.openai_rules import error_body, request_errors
from agent.measuring.players import FolderPlayer, Player, PlayerStopped, TerminalPlayer, parse_player
from agent.measuring.safe_files import write_private
from agent.outcome import TaskOutcome

PLAY_FILE = "play.json"
PLAY_TIMEOUT = 86400.0  # a person may think for a long time; the run's own budgets still apply
PLAY_KEY_ENV = "SGR_PLAY_KEY"  # the per-run secret, read by the agent's client as its API key
MAX_REQUEST_BYTES = 32 * 2**20  # the agent's largest requests are a few MB
STOPPED_STATUS = 403
STOPPED_REASON = "stopped_by_player"


def play_model(folder: str | None = None, player: str | None = None) -> ModelConfig:
    """The model config of a played run: `folder` for a program (else the terminal), `player` says who."""
    return ModelConfig(name="play", provider="play", model="play", api_key_env=None, timeout=PLAY_TIMEOUT,
                       max_retries=0, play_dir=folder, player=player)


def play_protocol(protocol: ProtocolConfig) -> ProtocolConfig:
    """A person thinks longer than a model: the time budgets widen to a day; steps and tokens still bound the run."""
    budgets = protocol.budgets.model_copy(update={"wall_seconds": PLAY_TIMEOUT, "no_progress_seconds": PLAY_TIMEOUT})
    return protocol.model_copy(update={"budgets": budgets})


def who_label(who: dict[str, str]) -> str:
    return "play/" + ":".join(v for v in (who.get("kind"), who.get("name")) if v)


def _shape_error(body: Any) -> str | None:
    """Why a body is not a chat request at all (checked before OpenAI's own rules, which assume the shape)."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages, tools = body.get("messages"), body.get("tools")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a list of objects"
    if tools is not None and not (isinstance(tools, list) and all(
            isinstance(t, dict) and isinstance(t.get("function"), dict) and isinstance(t["function"].get("name"), str)
            for t in tools)):
        return "'tools' must be a list of {type, function: {name, parameters}}"
    return None


class PlayServer(ChatEndpoint):
    """`with PlayServer(player) as server: ModelConfig(..., base_url=server.base_url)`; one request at a time,
    and only with `Authorization: Bearer {server.token}`."""

    def __init__(self, player: Player):
        self.player = player
        self.requests = 0
        self.rejected: list[tuple[int, str]] = []
        self.stopped: dict[str, Any] | None = None  # {"by": how, "request": n} once the player stopped the run
        self.token = secrets.token_urlsafe(32)
        self._count = threading.Lock()
        self._turn: asyncio.Lock | None = None
        self._answering = ThreadPoolExecutor(max_workers=1, thread_name_prefix="player")
        super().__init__("play", "play server", token=self.token)

    def stop(self) -> None:
        super().stop()
        self._answering.shutdown(wait=False, cancel_futures=True)

    def _stopped_reply(self) -> JSONResponse:
        how = (self.stopped or {}).get("by", "")
        body = error_body(f"the player stopped the run ({how}); nothing more is answered")
        return JSONResponse(body, status_code=STOPPED_STATUS)

    async def _body(self, request: Request) -> Any:
        """The parsed body; ValueError (one line) for one that is too large or not JSON."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
            raise ValueError(f"the request body is over {MAX_REQUEST_BYTES:,} bytes")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_REQUEST_BYTES:
                raise ValueError(f"the request body is over {MAX_REQUEST_BYTES:,} bytes")
        try:
            return json.loads(bytes(data))
        except RecursionError as exc:
            raise ValueError("the request body is nested too deeply") from exc
        except ValueError as exc:
            raise ValueError(f"the request body is not JSON ({type(exc).__name__})") from exc

    async def _chat(self, request: Request) -> JSONResponse:
        if self.stopped:
            return self._stopped_reply()
        try:
            body = await self._body(request)
            errors = [problem] if (problem := _shape_error(body)) else request_errors(body)
        except (ValueError, RecursionError) as exc:
            return JSONResponse(error_body(str(exc) or "the request body is nested too deeply"), status_code=400)
        except (AttributeError, TypeError, KeyError) as exc:  # a message or tool call of the wrong shape
            return JSONResponse(error_body(f"malformed request ({type(exc).__name__})"), status_code=400)
        with self._count:
            self.requests += 1
            n = self.requests
        if errors:
            self.rejected.append((n, errors[0]))
            self.player.refused(n, errors[0])
            return JSONResponse(error_body(errors[0]), status_code=400)
        self._turn = self._turn or asyncio.Lock()
        async with self._turn:  # the agent asks one thing at a time: its requests never wait on each other
            if self.stopped:
                return self._stopped_reply()
            try:
                reply = await asyncio.get_running_loop().run_in_executor(self._answering, self.player.answer, n, body)
            except PlayerStopped as exc:
                self.stopped = {"by": exc.how, "request": n}
                return self._stopped_reply()
            except Exception as exc:  # our bug showing this request: one line here and to the agent, no ASGI dump
                print(f"play server: request {n}: {type(exc).__name__}: {exc}", file=sys.stderr)
                return JSONResponse(error_body(f"the play server failed on this request ({type(exc).__name__})"),
                                    status_code=500)
        shorthand = ({"tool_calls": [{"name": reply["tool"], "arguments": reply.get("args", {})}]} if "tool" in reply
                     else {"content": reply["content"]})
        out = completion(shorthand, n, who_label(self.player.who))
        prompt, answer = len(json.dumps(body.get("messages") or [])) // 4, len(json.dumps(reply)) // 4
        out["usage"] = {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer,
                        "estimated": "characters / 4"}
        return JSONResponse(out)


def make_player(model: ModelConfig) -> Player:
    """The model's player; a play folder is claimed here (PlayFolderError when it cannot be)."""
    if model.play_dir:
        return FolderPlayer(Path(model.play_dir), parse_player(model.player, "program"))
    return TerminalPlayer(parse_player(model.player, "person"))


@dataclass
class Played:
    """What `playing()` gives the run: the model config to use, and (a played run) its server."""

    model: ModelConfig
    server: PlayServer | None = None

    @property
    def stopped(self) -> dict[str, Any] | None:
        return self.server.stopped if self.server else None


def stopped_by_player(outcome: TaskOutcome) -> TaskOutcome:
    """The outcome of a run the player stopped: not an error of the model or the agent, so no error kind (the
    refused request's 403 is how the server ended it); the best answer so far is kept, as a budget stop's is."""
    return outcome.model_copy(update={"stop_reason": STOPPED_REASON, "error": None, "error_kind": None,
                                      "traceback": None})


@contextlib.contextmanager
def _ctrl_c_stops(player: Player) -> Iterator[None]:
    """At the terminal, the first Ctrl-C stops the run cleanly (the player's answer ends it); a second one
    falls back to the handler that was there (asyncio's: cancel the run)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_ctrl_c(signum: int, frame: Any) -> None:
        stopping = getattr(player, "stopping", None)
        if stopping is not None and stopping.is_set() and callable(previous):
            previous(signum, frame)
            return
        player.stop("Ctrl-C")

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def playing(model: ModelConfig, out_dir: Path) -> Iterator[Played]:
    """A `play` model gets its server for the block, and the run folder says who played; others pass through."""
    if model.provider != "play" or model.base_url:
        yield Played(model)
        return
    player = make_player(model)
    record = {"player": player.who, "via": "folder" if model.play_dir else "terminal",
              **({"folder": str(model.play_dir)} if model.play_dir else {}),
              "note": "a played run: one model's behaviour on one task, not a benchmark score"}
    write_private(Path(out_dir) / PLAY_FILE, json.dumps(record, indent=2) + "\n")
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(PlayServer(player))
        stack.callback(player.close)  # before the server stops: an answer still awaited ends at once
        if isinstance(player, TerminalPlayer):
            stack.enter_context(_ctrl_c_stops(player))
        previous_key = os.environ.get(PLAY_KEY_ENV)
        os.environ[PLAY_KEY_ENV] = server.token
        try:
            yield Played(model.model_copy(update={"base_url": server.base_url, "api_key_env": PLAY_KEY_ENV}), server)
        finally:
            if previous_key is None:
                os.environ.pop(PLAY_KEY_ENV, None)
            else:
                os.environ[PLAY_KEY_ENV] = previous_key
            record["requests"], record["rejected_requests"] = server.requests, len(server.rejected)
            if server.stopped:
                record["stopped"] = server.stopped
                print(f"stopped by the player ({server.stopped['by']}) at request {server.stopped['request']}",
                      file=sys.stderr)
            write_private(Path(out_dir) / PLAY_FILE, json.dumps(record, indent=2) + "\n")
