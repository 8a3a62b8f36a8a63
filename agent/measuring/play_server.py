"""Play the model: an OpenAI-compatible chat server on loopback whose replies come from a player (a person
at the terminal, or another program through a folder: `players.py`).

The agent runs exactly as with a hosted model: its `ChatOpenAI` client sends each request over HTTP, the
transcript records it, and the server is as strict as OpenAI's (a request it would refuse gets HTTP 400 and
the player is told). A played run is one model's behaviour on one task (a person's, or an LLM's reading the
requests), not a benchmark score. Who played is recorded in the run folder (`play.json`) and as the `model`
of every response in the transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse

from agent.config import ModelConfig, ProtocolConfig
from agent.measuring.chat_endpoint import ChatEndpoint
from agent.measuring.fake_server import completion
from agent.measuring.openai_rules import error_body, request_errors
from agent.measuring.players import FolderPlayer, Player, TerminalPlayer, parse_player

PLAY_FILE = "play.json"
PLAY_TIMEOUT = 86400.0  # a person may think for a long time; the run's own budgets still apply


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


class PlayServer(ChatEndpoint):
    """`with PlayServer(player) as server: ModelConfig(..., base_url=server.base_url)`; one request at a time."""

    def __init__(self, player: Player):
        self.player = player
        self.requests = 0
        self.rejected: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        super().__init__("play", "play server")



    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self._lock:
            self.requests += 1
            n = self.requests
        errors = request_errors(body)
        if errors:
            self.rejected.append((n, errors[0]))
            self.player.refused(n, errors[0])
            return JSONResponse(error_body(errors[0]), status_code=400)
        reply = await asyncio.to_thread(self.player.answer, n, body)
        shorthand = ({"tool_calls": [{"name": reply["tool"], "arguments": reply.get("args", {})}]} if "tool" in reply
                     else {"content": reply["content"]})
        out = completion(shorthand, n, who_label(self.player.who))
        prompt, answer = len(json.dumps(body.get("messages") or [])) // 4, len(json.dumps(reply)) // 4
        out["usage"] = {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer,
                        "estimated": "characters / 4"}
        return JSONResponse(out)


def make_player(model: ModelConfig) -> Player:
    if model.play_dir:
        return FolderPlayer(Path(model.play_dir), parse_player(model.player, "program"))
    return TerminalPlayer(parse_player(model.player, "person"))


@contextlib.contextmanager
def playing(model: ModelConfig, out_dir: Path) -> Iterator[ModelConfig]:
    """A `play` model gets its server for the block, and the run folder says who played; others pass through."""
    if model.provider != "play" or model.base_url:
        yield model
        return
    player = make_player(model)
    record = {"player": player.who, "via": "folder" if model.play_dir else "terminal",
              **({"folder": str(model.play_dir)} if model.play_dir else {}),
              "note": "a played run: one model's behaviour on one task, not a benchmark score"}
    (Path(out_dir) / PLAY_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    with PlayServer(player) as server:
        try:
            yield model.model_copy(update={"base_url": server.base_url})
        finally:
            record["requests"], record["rejected_requests"] = server.requests, len(server.rejected)
            (Path(out_dir) / PLAY_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
