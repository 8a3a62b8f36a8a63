"""Run the offline suite on a free loopback port in a background thread (tests, runs, benchmarks)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn

from tasks.offline.app import DEFAULT_SEED, create_app

KEEP_ALIVE_S = 330


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ThreadedServer:
    """An ASGI app served by uvicorn in a daemon thread on loopback: start waits until it answers."""

    def __init__(self, app, host: str, port: int, name: str):  # noqa: ANN001 - any ASGI app
        # Keep idle connections longer than Chromium keeps a used idle socket (5 min): with uvicorn's 5 s
        # default, a request sent just as the server closes the socket fails (seen on a form POST as
        # net::ERR_FAILED, 4.9 s after the previous response); Chromium does not resend it.
        self._server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                     lifespan="off", access_log=False,
                                                     timeout_keep_alive=KEEP_ALIVE_S))
        self._thread = threading.Thread(target=self._server.run, name=name, daemon=True)
        self._where = f"http://{host}:{port}"

    def start(self, timeout: float = 20.0):  # noqa: ANN201 - returns self (the subclass)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self._thread.name} did not start on {self._where}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self):  # noqa: ANN204
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class OfflineServer(ThreadedServer):
    """`with OfflineServer() as srv: srv.origin` -> 'http://127.0.0.1:PORT'."""

    def __init__(self, seed: int = DEFAULT_SEED, host: str = "127.0.0.1", port: int | None = None):
        self.seed = seed
        self.host = host
        self.port = port or free_port(host)
        super().__init__(create_app(seed), host, self.port, "offline server")

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"
