"""Find the element behind an observation ref, in whichever frame (or open shadow root) it lives."""

from __future__ import annotations

import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

_REF = re.compile(r"^(f\d+)?e\d+$")


def ref_selector(ref: str) -> str:
    return f'[data-sgr-ref="{ref}"]'


async def locate_ref(page: Page, ref: str) -> Locator | None:
    """The unique element carrying `ref`, or None (unknown ref, element gone, or its frame detached).

    CSS locators pierce open shadow roots, so shadow-DOM controls resolve like any other. Frames are
    searched main frame first; the ref's frame prefix is not trusted to map to a frame index, because
    frames can be added and removed while refs stay valid.
    """
    if not _REF.match(ref):
        return None
    frames = [page.main_frame] + [f for f in page.frames if f is not page.main_frame]
    if not ref.startswith("f"):
        frames = frames[:1]
    for frame in frames:
        if frame.is_detached():
            continue
        locator = frame.locator(ref_selector(ref))
        try:
            if await locator.count() == 1:
                return locator
        except PlaywrightError:
            continue
    return None
