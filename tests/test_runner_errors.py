"""Which failures the runner retries (infrastructure) and which it records as the agent's."""

from __future__ import annotations

import httpx
import pytest

from agent.runner.errors import classify_exception
from browser.interface import BrowserError


class TargetClosedError(Exception):
    """Same name as Playwright's: matched by class name, so no client library is imported."""


class RateLimitError(Exception):
    pass


class _StatusError(Exception):
    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status_code = status


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TargetClosedError("Target page, context or browser has been closed"), "infra"),
        (RateLimitError("slow down"), "infra"),
        (_StatusError(503), "infra"),
        (_StatusError(429), "infra"),
        (_StatusError(400), "config"),
        (_StatusError(401), "config"),
        (_StatusError(404), "config"),
        (httpx.ConnectError("refused"), "infra"),
        (ConnectionResetError("reset"), "infra"),
        (Exception("Connection closed while reading from the driver"), "infra"),
        (BrowserError("crashed", "page crashed"), "infra"),
        (BrowserError("option_not_found", "no such option"), "agent"),
        (KeyError("plan"), "bug"),
        (ValueError("bad tool call"), "bug"),
    ],
)
def test_classification(exc: BaseException, kind: str) -> None:
    assert classify_exception(exc) == kind
