"""Wait until a page has stopped changing: DOM quiet (MutationObserver + input/change events) and
network quiet (no request in flight), both for a short window and both bounded by a deadline.

`load` alone is wrong for state-gated sites: filters re-render results by XHR long after load, and
some pages never reach network idle (polling), so the deadline is a cap, never an error.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Request

# Installed in every document (all frames) before any page script runs. The document token tells a
# new document (navigation, reload, POST result) apart from a same-document history change.
INIT_SCRIPT = """
(() => {
  if (window.__sgrDocToken) return;
  window.__sgrDocToken = Math.random().toString(36).slice(2) + Date.now().toString(36);
  window.__sgrLastChange = performance.now();
  const touch = () => { window.__sgrLastChange = performance.now(); };
  new MutationObserver(touch).observe(document, {subtree: true, childList: true, attributes: true,
                                                 characterData: true});
  for (const type of ['input', 'change']) document.addEventListener(type, touch, true);
})();
"""

# A region the page marks aria-busy (WAI-ARIA: "being updated") and shows is not quiet, however long since its last
# mutation: a "Loading…" placeholder waiting on a timer before its fetch is quiet to the DOM and the network alike.
_FRAME_QUIET_JS = """() => {
  const busy = [...document.querySelectorAll('[aria-busy="true"]')].some(el => el.getClientRects().length > 0);
  if (busy) return 0;
  return window.__sgrLastChange === undefined ? 1e9 : performance.now() - window.__sgrLastChange;
}"""

# A cheap digest of what a user could see or submit, over all frames: text, control values, URL.
FINGERPRINT_JS = """
(withFocus) => {
  const values = [];
  for (const el of document.querySelectorAll('input, select, textarea')) {
    values.push(el.type === 'checkbox' || el.type === 'radio' ? String(el.checked) : String(el.value));
  }
  const expanded = [...document.querySelectorAll('[aria-expanded],[aria-selected],[aria-checked]')]
    .map(el => (el.getAttribute('aria-expanded') || '') + (el.getAttribute('aria-selected') || '')
               + (el.getAttribute('aria-checked') || ''));
  const text = document.body ? document.body.innerText : '';
  const active = document.activeElement;
  const focus = withFocus && active ? active.tagName + '#' + (active.id || active.getAttribute('name') || '') : '';
  return location.href + '\\u0001' + text.length + ':' + text + '\\u0001' + values.join('\\u0002')
         + '\\u0001' + expanded.join('') + '\\u0001' + focus;
}
"""


@dataclass
class NetworkMonitor:
    """Counts a page's requests in flight (attached once per page)."""

    in_flight: set[Request] = field(default_factory=set)
    last_change: float = field(default_factory=time.monotonic)

    def attach(self, page: Page) -> None:
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request: Request) -> None:
        self.in_flight.add(request)
        self.last_change = time.monotonic()

    def _ended(self, request: Request) -> None:
        self.in_flight.discard(request)
        self.last_change = time.monotonic()

    def quiet_for(self) -> float:
        """Seconds since the network went idle (0 while anything is in flight)."""
        return 0.0 if self.in_flight else time.monotonic() - self.last_change


async def dom_quiet_ms(page: Page) -> float:
    """Milliseconds since the last DOM mutation or input event in any frame (large if unknown)."""
    quiet = 1e9
    for frame in page.frames:
        try:
            quiet = min(quiet, float(await frame.evaluate(_FRAME_QUIET_JS)))
        except PlaywrightError:
            if frame is page.main_frame:
                return 0.0  # the main document is being replaced: certainly not quiet
            continue  # a child frame detached or navigating: the next poll sees its successor
    return quiet


async def settle(page: Page, network: NetworkMonitor | None, *, quiet_ms: int = 300,
                 timeout_ms: int = 4_000) -> bool:
    """True when the page went quiet before the deadline; False when the deadline cut the wait."""
    deadline = time.monotonic() + timeout_ms / 1000
    try:
        await page.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    except PlaywrightError:
        return False
    while time.monotonic() < deadline:
        net_quiet = network is None or network.quiet_for() * 1000 >= quiet_ms
        if net_quiet and await dom_quiet_ms(page) >= quiet_ms:
            return True
        await asyncio.sleep(0.05)
    return False


async def fingerprint(page: Page, *, with_focus: bool = False) -> str:
    """`with_focus` counts a focus move as a change (keyboard actions), not for clicks, which always focus."""
    parts = [page.url]
    for frame in page.frames:
        try:
            parts.append(await frame.evaluate(FINGERPRINT_JS, with_focus))
        except PlaywrightError:
            parts.append("<unavailable>")
    return "\u0003".join(parts)
