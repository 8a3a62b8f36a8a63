"""Run the offline suite on a free loopback port in a background thread (tests, runs, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn

from tasks.offline.app import DEFAULT_SEED, create_app


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class OfflineServer:
    """`with OfflineServer() as srv: srv.origin` -> 'http://127.0.0.1:PORT'."""

    def __init__(self, seed: int = DEFAULT_SEED, host: str = "127.0.0.1", port: int | None = None):
        self.seed = seed
        self.host = host
        self.port = port or _free_port(host)
        config = uvicorn.Config(
            create_app(seed), host=host, port=self.port, log_level="warning", lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="sgr-offline-server", daemon=True)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> OfflineServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"offline server did not start on {self.origin}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> OfflineServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
