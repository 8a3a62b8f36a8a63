"""The small async interface the graph drives. Implemented by `browser.session.PageDriver`."""

from __future__ import annotations

from typing import Protocol

from browser.types import ActionResult, BrowserAction, Observation


class BrowserError(Exception):
    """A typed failure the caller can act on (`error_class` is one of `browser.types.ErrorClass`)."""

    def __init__(self, error_class: str, message: str):
        super().__init__(message)
        self.error_class = error_class


class Browser(Protocol):
    """One task's view of a browser: a fresh context, its current page, and actions with read-back."""

    async def observe(self) -> Observation: ...

    async def act(self, action: BrowserAction) -> ActionResult: ...

    async def close(self) -> None: ...


class BrowserWorker(Protocol):
    """One launched browser per worker; a fresh context (clean cookies, storage, downloads) per task.

    Usage: `async with worker.task_browser(task_dir, allowed_origins, trace=True) as browser: ...`
    """

    def task_browser(self, task_dir: str, allowed_origins: list[str], *, trace: bool = False,
                     screenshots: bool = False): ...  # -> AsyncContextManager[Browser]

    async def close(self) -> None: ...
