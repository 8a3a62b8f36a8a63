"""Ctrl-C on a command that runs an event loop ends with one line, not a screen of shutdown noise.

Why: Ctrl-C reaches the Playwright driver and Chromium as well (one process group), so while `asyncio.run`
cancels the bench, the driver's pipe is already closed: asyncio logged six "pipe closed by peer" warnings and six
"Future exception was never retrieved" tracebacks under the one line that matters. Both go through the `asyncio`
logger, which is switched off from the moment SIGINT arrives (asyncio's own handler then runs as before: the main
task is cancelled, `finally` blocks write the manifest, the command prints what is kept).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


def _quiet_then(previous: Any) -> Any:
    def handler(signum: int, frame: Any) -> None:
        logging.getLogger("asyncio").disabled = True  # the shutdown's noise; our own lines use the console
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    return handler


async def quiet_on_interrupt(work: Awaitable[T]) -> T:
    """Await `work` with SIGINT silencing the shutdown noise first (installed inside the loop, after
    `asyncio.run` has set its own SIGINT handler, which it then calls)."""
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, _quiet_then(previous))
    try:
        return await work
    finally:
        signal.signal(signal.SIGINT, previous)


def run_quietly(work: Awaitable[T]) -> T:
    return asyncio.run(quiet_on_interrupt(work))
