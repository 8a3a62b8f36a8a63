"""Opening a URL in the task's page, refused before it leaves when the origin policy says no."""

from __future__ import annotations

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browser.driver import PageHandle
from browser.interface import BrowserError


async def navigate(driver: PageHandle, url: str) -> int | None:
    """Opens `url`; returns the HTTP status of the page (None when there was no HTTP response)."""
    refusal = driver.policy.navigation_refusal(url)
    if refusal:
        raise BrowserError("blocked_by_policy", f"not opening {url}: {refusal}")
    loops = len(driver.policy.redirect_loops)
    try:
        response = await driver.page.goto(url, wait_until="domcontentloaded")
    except PlaywrightTimeout as exc:
        if looped := driver.policy.loop_message(loops):
            raise BrowserError("not_found", looped) from exc
        raise BrowserError("timeout", f"{url} did not load within {driver.timeouts.navigation_ms / 1000:.0f}s; "
                                      "retry once or try another page") from exc
    except PlaywrightError as exc:
        message = str(exc).splitlines()[0]
        if looped := driver.policy.loop_message(loops):
            raise BrowserError("not_found", looped) from exc
        if "ERR_BLOCKED_BY_CLIENT" in message:
            raise BrowserError("blocked_by_policy", f"{url} redirected to a refused origin") from exc
        raise BrowserError("not_found", f"{url} could not be opened: {message}") from exc
    if looped := driver.policy.loop_message(loops):
        raise BrowserError("not_found", looped)
    return response.status if response is not None else None
