"""Find a Chromium binary and launch it headless with the flags that keep it quiet on a closed network.

Playwright's own browser download is often impossible (offline machines, CI images), so the search
order is: an explicit setting or `SGR_CHROMIUM`, Playwright's managed browser if it is on disk, then
the distribution's `/usr/bin/chromium`.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Browser, BrowserType

CHROMIUM_ENV = "SGR_CHROMIUM"
SYSTEM_CHROMIUM = "/usr/bin/chromium"
QUIET_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    # WebRTC's STUN/TURN traffic bypasses request routing, so the origin policy cannot see it: no UDP at all
    # (no proxy is configured, so "non-proxied" is all of it); `browser.policy` also removes the WebRTC API
    # from every frame, which stops TURN over TCP too.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy",
)


class ChromiumNotFound(RuntimeError):
    pass


def _playwright_managed(browser_type: BrowserType | None) -> str | None:
    if browser_type is None:
        return None
    try:
        path = browser_type.executable_path
    except Exception:  # Playwright raises when its browser registry has no entry
        return None
    return path if path and Path(path).is_file() else None


def find_chromium(explicit: str | None = None, browser_type: BrowserType | None = None) -> str:
    """The first existing candidate; the error names every place searched so the fix is obvious."""
    candidates = [
        ("explicit setting", explicit),
        (f"${CHROMIUM_ENV}", os.environ.get(CHROMIUM_ENV)),
        ("Playwright managed browser", _playwright_managed(browser_type)),
        ("system Chromium", SYSTEM_CHROMIUM),
    ]
    for _source, path in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    tried = "; ".join(f"{source}: {path or 'not set'}" for source, path in candidates)
    raise ChromiumNotFound(
        f"no Chromium found ({tried}). Set {CHROMIUM_ENV}=/path/to/chromium, run `playwright install chromium`, "
        f"or install the distribution package providing {SYSTEM_CHROMIUM}."
    )


async def launch_chromium(browser_type: BrowserType, *, executable: str | None = None, headless: bool = True,
                          timeout_ms: float = 30_000) -> Browser:
    path = find_chromium(executable, browser_type)
    return await browser_type.launch(
        executable_path=path, headless=headless, args=list(QUIET_ARGS), timeout=timeout_ms
    )
