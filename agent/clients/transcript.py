"""Transcripts: the exact chat-completion requests sent and responses received, one JSON line per call.

Recorded at the HTTP layer (an httpx response hook on the client `ChatOpenAI` uses), so the file holds what
went over the wire - messages, tool schemas, tool calls, usage - not a re-rendering of it. Secrets are
redacted with the same `Redactor` as every other artefact and headers (the API key) are never written. A
failed real run is replayed from this file by `agent.measuring.fake_server.FakeOpenAIServer` as a regression test.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx

from browser.trace import Redactor

TRANSCRIPT_FILE = "transcript.jsonl"


MAX_RECORDED_BYTES = 2_000_000  # per request or response: a 30 MB reply made a 172 MB transcript


def _json_or_text(raw: bytes) -> Any:
    if len(raw) > MAX_RECORDED_BYTES:  # kept as the start of the text, saying how much was left out
        return {"sgr_cut": f"{len(raw):,} bytes, over the transcript's cap of {MAX_RECORDED_BYTES:,}",
                "head": raw[:10_000].decode("utf-8", errors="replace")}
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", errors="replace")


class TranscriptRecorder:
    """Appends `{"t", "status", "request", "response"}` per completed HTTP exchange with the model."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redactor = Redactor.from_environment()
        self.calls = 0

    async def on_response(self, response: httpx.Response) -> None:
        await response.aread()
        self.record(response.request.content, response.status_code, response.content)

    def record(self, request_body: bytes, status: int, response_body: bytes) -> None:
        self.calls += 1
        line = {"t": round(time.time(), 3), "call": self.calls, "status": status,
                "request": _json_or_text(request_body), "response": _json_or_text(response_body)}
        # 0600: the prompts, pages and answers of a run are the user's, not every local account's
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(self.redactor.json(line), ensure_ascii=False) + "\n")

    def async_client(self, timeout: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=timeout, event_hooks={"response": [self.on_response]})


def read_transcript(path: Path) -> list[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
