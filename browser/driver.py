"""What the action, read and listing modules need of one task's page: a protocol the session implements.

They depend on this small surface rather than on `browser.session.PageDriver`, so the session can import them
(to perform actions) without an import circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from playwright.async_api import APIResponse, BrowserContext, Page
from pydantic import BaseModel, ConfigDict, Field

from browser.policy import BrowserLimits, OriginPolicy
from browser.settle import NetworkMonitor
from browser.types import Observation


class SessionTimeouts(BaseModel):
    """Every wait is bounded; `act_seconds` is the ceiling over a whole action (incl. settle + observe)."""

    model_config = ConfigDict(extra="forbid")

    launch_ms: int = Field(30_000, gt=0)
    action_ms: int = Field(5_000, gt=0, description="One element operation (click, fill, select).")
    navigation_ms: int = Field(20_000, gt=0)
    settle_quiet_ms: int = Field(300, gt=0, description="DOM and network must be quiet this long.")
    settle_max_ms: int = Field(4_000, gt=0)
    observe_seconds: float = Field(20.0, gt=0)
    act_seconds: float = Field(90.0, gt=0, description="Includes read_table following many pages.")
    close_seconds: float = Field(10.0, gt=0)
    redact_seconds: float = Field(60.0, gt=0, description="Redacting trace.zip at close, in its own process; "
                                                          "past it the trace is deleted, never kept unredacted.")


class WorkerHandle(Protocol):
    token_budget: int


class PageHandle(Protocol):
    worker: WorkerHandle
    limits: BrowserLimits
    timeouts: SessionTimeouts
    policy: OriginPolicy
    network: NetworkMonitor
    last_observation: Observation | None
    last_fingerprint: str | None

    @property
    def page(self) -> Page: ...

    @property
    def context(self) -> BrowserContext: ...

    @property
    def downloads_dir(self) -> Path: ...

    async def http_get(self, url: str) -> tuple[APIResponse, str | None]: ...

    async def observe(self) -> Observation: ...

    def ref_is_stale(self, ref: str) -> bool: ...

    async def sync_page_id(self) -> int: ...
