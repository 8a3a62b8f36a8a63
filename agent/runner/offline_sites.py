"""The offline sites of a local run, on the same loopback origin every time the run folder is resumed.

A cell's checkpoint holds the URLs it had reached (start page, result pages, detail pages). If a resumed run
served the sites on a new port, a cell continued from its checkpoint would ask a dead origin and fail for
a reason that is not the agent's. So the manifest records the origin each session served (`offline_origin`)
and a resumed run binds the same port. When that port is taken by something else, the sites move and the
checkpoints of unfinished cells are dropped, so those cells start over instead of continuing against
a dead origin (said on the console; finished cells are never touched).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from agent.rundir.manifest import read_manifest
from agent.runner.local import CHECKPOINTS_DIR

HOST = "127.0.0.1"


def recorded_origin(run_dir: Path) -> str | None:
    origin = (read_manifest(run_dir) or {}).get("offline_origin")
    return origin if isinstance(origin, str) else None


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def serve_offline_sites(run_dir: Path, say: Callable[[str], None]) -> Iterator[str]:
    """Serve the suite for this run folder; yields the origin (the recorded one whenever it can be bound),
    which the caller records in the manifest."""
    from tasks.offline.server import OfflineServer

    previous = recorded_origin(run_dir)
    port = urlsplit(previous).port if previous else None
    reuse = port if port is not None and _port_is_free(port) else None
    with OfflineServer(host=HOST, port=reuse) as server:
        if previous and previous != server.origin:
            checkpoints = run_dir / CHECKPOINTS_DIR
            if checkpoints.exists():
                shutil.rmtree(checkpoints, ignore_errors=True)
                say(f"offline sites moved from {previous} to {server.origin} (port taken): unfinished cells "
                    "start over instead of continuing from checkpoints that name the old origin")
        yield server.origin
