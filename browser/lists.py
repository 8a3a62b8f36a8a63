"""Lists that grow in place (infinite scroll, a 'load more' button): wait for what a scroll loads, say what grew,
and read such a list to its end.

A feed library fetches the next batch a moment after the scroll event (throttled), so a page read right after
a scroll or an End key shows the previous batch and the action looks like it changed nothing. Scrolling
actions wait for that fetch; the reply names the lists that grew (typed in `StateDelta.tables_grown`).
"""

from __future__ import annotations

import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browser.driver import PageHandle
from browser.settle import settle

SCROLL_KEYS = frozenset({"End", "PageDown", "Space", " ", "ArrowDown", "Control+End", "Meta+ArrowDown"})
FETCH_DELAY_MS = 400  # a feed's scroll handler is throttled (infinite-scroll: 200 ms) before it fetches

# "Load more", "Show more results", "View older posts": the whole name, so a "See more about this dataset" link
# that leads elsewhere is never taken for it
_MORE = re.compile(r"^\s*(load|show|view|see|get)\s+(more|older)(\s+(results|items|posts|rows|entries|records|"
                   r"stories|articles|news|notices|comments))?\s*[.…]*\s*$", re.I)


async def await_loading(driver: PageHandle) -> None:
    """Give a scroll-triggered fetch time to start, then settle on it."""
    await driver.page.wait_for_timeout(FETCH_DELAY_MS)
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)


async def more_control(driver: PageHandle) -> Locator | None:
    """A visible, enabled 'Load more' / 'View more' / 'Show more results' button or link."""
    page = driver.page
    for locator in (page.get_by_role("button", name=_MORE), page.get_by_role("link", name=_MORE)):
        try:
            for index in range(min(await locator.count(), 5)):
                candidate = locator.nth(index)
                if await candidate.is_visible() and await candidate.is_enabled():
                    return candidate
        except PlaywrightError:
            return None
    return None


async def load_more(driver: PageHandle) -> str | None:
    """One step of growing the page's list: its 'more' control clicked, else the page scrolled to its end. Says
    which it did; None when there is neither a control nor room left to scroll."""
    page = driver.page
    control = await more_control(driver)
    try:
        if control is not None:
            await control.click()
            await await_loading(driver)
            return "more"
        moved = await page.evaluate(
            "() => { const s = document.scrollingElement || document.body; const before = s.scrollTop;"
            " s.scrollTop = s.scrollHeight; return s.scrollTop !== before; }")
    except PlaywrightError:
        return None
    await await_loading(driver)
    return "scrolled" if moved else None
