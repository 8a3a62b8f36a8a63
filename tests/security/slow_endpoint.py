"""An OpenAI-compatible endpoint that answers every request, but one byte every few seconds.

Each read of the HTTP client gets a byte well within its per-read timeout, so only a total deadline on the
call can end it (issue 29 item 2). A raw socket server: a framework would buffer the body.
"""

from __future__ import annotations

import json
import socket
import threading
import time

REPLY = json.dumps({"id": "chatcmpl-trickle", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "NONE"},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


class TrickleEndpoint:
    """`with TrickleEndpoint(interval=3.0) as endpoint:` then `base_url: endpoint.base_url`."""

    def __init__(self, interval: float = 3.0):
        self.interval = interval
        self.requests = 0
        self._stop = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> TrickleEndpoint:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536) or b""
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(REPLY))
                for byte in REPLY:
                    if self._stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.interval)
            except OSError:
                return
