"""Turn a `Target` (ref / label / text / selector, optionally inside a named frame) into one locator.

Labels are matched the ways sites label controls: <label>, aria-label, aria-labelledby, a fieldset's
legend (radio groups), then placeholder; exact matches first, substring matches only as a fallback. Before all
that, a label or text exactly as the observation showed a control (its label may join a group's name and the
control's own, "Group: Field", which no page element carries whole) is that control: every label shown works
as a target.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page

from browser.interface import BrowserError
from browser.render_controls import LABEL_CHARS, LINK_CHARS, clip
from browser.types import Control, Link, Observation, Target

_TEXT_ROLES = ("link", "button", "tab", "option", "menuitem", "radio", "checkbox", "switch", "combobox")
_MAX_CANDIDATES = 10


def target_frames(page: Page, frame_hint: str | None) -> list[Frame]:
    """The frames to search: the named/URL-matched frame when given, else all frames, main first."""
    frames = [page.main_frame] + [f for f in page.frames if f is not page.main_frame]
    if not frame_hint:
        return frames
    chosen = [f for f in frames if f.name == frame_hint or frame_hint in f.url]
    if not chosen:
        names = ", ".join(repr(f.name or f.url) for f in frames[1:]) or "none"
        raise BrowserError("not_found", f"no frame matches {frame_hint!r} (frames: {names})")
    return chosen


async def _pick(locator: Locator) -> Locator | None:
    """First visible match (pages keep hidden duplicates for mobile layouts), else the first match."""
    try:
        count = await locator.count()
        for index in range(min(count, _MAX_CANDIDATES)):
            candidate = locator.nth(index)
            if await candidate.is_visible():
                return candidate
        return locator.first if count else None
    except PlaywrightError:
        return None  # frame detached mid-search


def _label_strategies(frame: Frame, label: str) -> Iterable[Callable[[], Locator]]:
    for exact in (True, False):
        yield lambda exact=exact: frame.get_by_label(label, exact=exact)
        legend_text = re.compile(rf"^\s*{re.escape(label)}\s*$", re.I) if exact else label
        yield lambda legend_text=legend_text: frame.locator("fieldset").filter(
            has=frame.locator("legend", has_text=legend_text))
        yield lambda exact=exact: frame.get_by_placeholder(label, exact=exact)


def _text_strategies(frame: Frame, text: str) -> Iterable[Callable[[], Locator]]:
    for exact in (True, False):
        for role in _TEXT_ROLES:
            yield lambda role=role, exact=exact: frame.get_by_role(role, name=text, exact=exact)  # type: ignore[arg-type]
        yield lambda exact=exact: frame.get_by_text(text, exact=exact)


def _shown(text: str) -> str:
    return " ".join(text.replace('"', "'").split()).casefold()


def shown_ref(controls: Sequence[Control], wanted: str | None, links: Sequence[Link] = ()) -> str | None:
    """The ref of the one control or link the observation showed with this label or text (whole, or cut as the
    text shows it)."""
    if not wanted or not wanted.strip():
        return None
    key = _shown(wanted)
    shown = [(c.ref, c.label, LABEL_CHARS) for c in controls] + [(ln.ref, ln.text, LINK_CHARS) for ln in links]
    refs = {ref for ref, text, cut in shown if key in (_shown(text), _shown(clip(text, cut)))}
    return refs.pop() if len(refs) == 1 else None


async def resolve_target(page: Page, target: Target, *, ref_is_stale: Callable[[str], bool],
                         shown: Observation | None = None) -> Locator:
    """A locator for the target, or BrowserError(stale_ref | not_found) with a message saying what to do.
    `shown`: the latest observation, whose control labels and link texts as shown are targets too."""
    from browser.refs import locate_ref

    frames = target_frames(page, target.frame)
    if shown and not (target.ref or target.selector or target.frame):
        # a label names a control; a text may be a link's or a button's
        ref = shown_ref(shown.controls, target.label) if target.label else \
            shown_ref(shown.controls, target.text, shown.links)
        located = await locate_ref(page, ref) if ref else None
        if located is not None and await located.count():
            return located
    if target.ref:
        located = await locate_ref(page, target.ref)
        if located is not None and await located.count():
            return located
        if ref_is_stale(target.ref):
            raise BrowserError("stale_ref", f"ref {target.ref} belongs to an earlier page; observe again and "
                                            "use a ref from the latest observation")
        raise BrowserError("not_found", f"ref {target.ref} is not on the page any more; observe again")
    if target.label:
        strategies = [s for f in frames for s in _label_strategies(f, target.label)]
    elif target.text:
        strategies = [s for f in frames for s in _text_strategies(f, target.text)]
    elif target.selector:
        strategies = [lambda f=f: f.locator(target.selector) for f in frames]
    else:
        raise BrowserError("invalid_action", "the target is empty: give one of ref, label, text or selector")
    for strategy in strategies:
        found = await _pick(strategy())
        if found is not None:
            return found
    raise BrowserError("not_found", f"no element with {target.describe()}; check the observation's controls "
                                    "and links for the exact label")
