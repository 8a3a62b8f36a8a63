"""Carry out one `BrowserAction` truthfully: act, settle, read back, and say what really changed.

Each handler does the Playwright work and returns an `Outcome` (what to read back and what to
expect); `perform` then settles the page, observes it, computes the `StateDelta` and decides the
error class. A control that shows another value after settling is `value_reverted`; a click that
changed nothing visible is `no_effect`: both are the silent failures that derail state-gated retrieval.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browser import lists, trees
from browser.delta import describe_delta, params_diff, state_delta
from browser.driver import PageHandle
from browser.facts import read_page_facts
from browser.interface import BrowserError
from browser.listing import list_links, list_options, read_section
from browser.navigate import navigate
from browser.readback import Outcome, norm, verify
from browser.reads import download, read_pdf, read_table
from browser.settle import fingerprint, settle
from browser.targets import resolve_target
from browser.types import (
    ACTION_SPECS,
    ActionResult,
    Back,
    Check,
    Click,
    Control,
    Fill,
    Goto,
    Observation,
    Press,
    Scroll,
    Select,
    SetRange,
    SetUrlParams,
    Submit,
    Target,
    WaitFor,
)
from browser.widgets import (
    date_field,
    fill_date,
    is_face,
    parse_date,
    pick_suggestion,
    select_face,
    widget_fill,
)

_KIND_JS = """
el => {
  const tag = el.tagName.toLowerCase();
  const role = (el.getAttribute('role') || '').toLowerCase();
  if (tag === 'select') return 'select';
  if (role === 'treeitem') return 'tree_node';
  if (tag === 'input' && el.type === 'radio') return 'radio';
  if (tag === 'input' && el.type === 'checkbox') return 'checkbox';
  if (tag === 'fieldset' || role === 'radiogroup' || el.querySelector('input[type=radio], [role=radio]'))
    return 'radio_group';
  if (role === 'combobox' || role === 'listbox' || el.getAttribute('aria-haspopup') === 'listbox') return 'combobox';
  if (tag === 'input' || tag === 'textarea') return 'text';
  return 'other';
}
"""

_USE_INSTEAD = {"select": "use select with one of its options", "radio_group": "use select with one of its choices",
                "radio": "use select with one of its choices", "checkbox": "use check",
                "combobox": "use select", "text": "use fill", "other": "use click"}

# ------------------------------------------------------------------ helpers


async def _locate(driver: PageHandle, target: Target) -> Locator:
    return await resolve_target(driver.page, target, ref_is_stale=driver.ref_is_stale, shown=driver.last_observation)


def _control_for(observation: Observation | None, ref: str | None) -> Control | None:
    if observation is None or not ref:
        return None
    return next((c for c in observation.controls if c.ref == ref), None)


async def _control_label(driver: PageHandle, locator: Locator, target: Target) -> str:
    """How the observation names this control (so the delta and messages use the agent's words)."""
    try:
        ref = await locator.get_attribute("data-sgr-ref", timeout=1_000)
    except PlaywrightError:
        ref = None
    control = _control_for(driver.last_observation, ref)
    return control.label if control else (target.label or target.text or target.describe())


async def _ensure_enabled(locator: Locator, what: str) -> None:
    try:
        disabled = await locator.is_disabled(timeout=2_000)
    except PlaywrightError:
        disabled = False
    if disabled:
        raise BrowserError("not_interactable", f"{what} is disabled; set the controls it depends on first")


_INTERCEPTOR = re.compile(r"(<[^\n]*?>)(?:…</\w+>)? (?:from <[^\n]*?> subtree )?intercepts pointer events")


def _interaction_error(exc: PlaywrightError, what: str) -> BrowserError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if cover := _INTERCEPTOR.search(str(exc)):
        return BrowserError("not_interactable", f"{what}: the element is covered by {cover.group(1)[:120]}; close "
                                                "that overlay first (e.g. accept the cookie banner or the dialog)")
    if isinstance(exc, PlaywrightTimeout):
        return BrowserError("not_interactable", f"{what} could not be used (hidden, covered or disabled): {first}")
    return BrowserError("not_interactable", f"{what}: {first}")


def _options_hint(options: list[str]) -> str:
    shown = ", ".join(repr(o) for o in options[:15])
    more = f" and {len(options) - 15} more" if len(options) > 15 else ""
    return f"available: {shown}{more}" if options else "no options are visible"


# ------------------------------------------------------------------ navigation


async def _goto(driver: PageHandle, action: Goto) -> Outcome:
    status = await navigate(driver, action.url)
    if status is not None and status >= 400:  # the server's error page is shown: not the page that was asked for
        hint = ("check the address (opening a link from the page is safer than typing a URL)" if status < 500
                else "the site failed; retry once or try another page")
        return Outcome(f"opened {action.url} but the server answered HTTP {status}: {hint}", navigated=True,
                       error="http_error")
    return Outcome(f"opened {action.url}", navigated=True)


async def _back(driver: PageHandle, action: Back) -> Outcome:
    try:
        response = await driver.page.go_back(wait_until="domcontentloaded")
    except PlaywrightTimeout as exc:
        raise BrowserError("timeout", "going back did not finish loading") from exc
    if response is None and driver.page.url == (driver.last_observation.url if driver.last_observation else None):
        return Outcome("there is no earlier page in this tab's history", expect_change=True)
    return Outcome("went back", navigated=True)


async def _set_url_params(driver: PageHandle, action: SetUrlParams) -> Outcome:
    current = urlsplit(driver.page.url)
    if current.scheme not in ("http", "https"):
        raise BrowserError("invalid_action", f"the current page ({driver.page.url}) has no URL parameters to set")
    old = parse_qs(current.query, keep_blank_values=True)
    new = {k: list(v) for k, v in old.items() if k not in action.remove}
    for key, value in action.params.items():
        new[key] = [value] if isinstance(value, str) else list(value)
    url = urlunsplit(current._replace(query=urlencode(new, doseq=True)))
    diff = params_diff(old, new)
    if url == driver.page.url:
        return Outcome(f"URL unchanged ({diff})")
    await navigate(driver, url)
    return Outcome(f"opened {url} ({diff})", navigated=True)


# ------------------------------------------------------------------ element actions


async def _click(driver: PageHandle, action: Click) -> Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    try:
        node = await locator.evaluate(_KIND_JS) == "tree_node"
        if await locator.evaluate(_OPENS_TAB_JS):
            await _click_expecting_tab(driver, locator)
        else:
            await locator.click()
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"clicking {action.target.describe()}") from exc
    return Outcome(f"clicked {action.target.describe()}" + (" (a tree node: check ticks it)" if node else ""),
                   expect_change=True)


# A link or form button that targets another browsing context opens a tab, which `_adopt_popups` follows.
_OPENS_TAB_JS = """el => {
  const owner = el.closest('a[target], area[target]') || (el.form && el.form.getAttribute('target') ? el.form : null);
  const target = owner ? (owner.getAttribute('target') || '').toLowerCase() : '';
  return !!target && !['_self', '_parent', '_top'].includes(target);
}"""


async def _click_expecting_tab(driver: PageHandle, locator: Locator) -> None:
    """Wait for the tab to exist: on a busy machine it appears after the click returns, and a tab that
    is not there yet would read as a click without effect."""
    clicked = False
    try:
        async with driver.context.expect_page(timeout=driver.timeouts.action_ms):
            await locator.click()
            clicked = True
    except PlaywrightTimeout:
        if not clicked:
            raise
        # no tab came (a script handled the click itself): the action is judged by its effect


async def _fill(driver: PageHandle, action: Fill) -> Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    kind = await locator.evaluate(_KIND_JS)
    if kind in ("select", "radio_group", "radio", "checkbox"):
        raise BrowserError("invalid_action", f"{label!r} is a {kind.replace('_', ' ')}, not a text field; "
                                             f"{_USE_INSTEAD[kind]}")
    try:
        if widget := await widget_fill(driver, locator, action.value, label):
            return widget
        await locator.fill(action.value)
        # a typeahead: the suggestion that reads the value is clicked before anything blurs the field
        picked = await pick_suggestion(driver, locator, action.value)
        await locator.evaluate("el => el.blur()")  # many sites apply a field on `change`, fired on blur
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"filling {label!r}") from exc
    said = " and picked it from the suggestions" if picked else ""
    return Outcome(f"filled {label!r} with {action.value!r}{said}", control=locator, control_label=label,
                    expected=action.value)


async def _select_native(locator: Locator, option: str, label: str, mode: str = "add") -> None:
    options = await locator.evaluate("el => [...el.options].map(o => [o.label || o.text, o.value])")
    wanted = norm(option)
    match = next((value for text, value in options if norm(text) == wanted), None)
    match = match if match is not None else next((value for _, value in options if norm(value) == wanted), None)
    match = match if match is not None else next(
        (value for text, value in options if wanted and wanted in norm(text)), None)
    if match is None:
        raise BrowserError("option_not_found", f"{label!r} has no option {option!r}; "
                                               f"{_options_hint([text for text, _ in options])}")
    if await locator.evaluate("el => el.multiple"):  # a native multi-select: add (default), replace, remove, clear
        chosen = await locator.evaluate("el => [...el.selectedOptions].map(o => o.value)")
        keep = {"add": chosen, "replace": [], "remove": [v for v in chosen if v != match], "clear": []}[mode]
        await locator.select_option(value=keep + ([match] if mode in ("add", "replace") and match not in keep else []))
        return
    await locator.select_option(value=match)


_RADIOS = "input[type=radio], [role=radio]"


async def _frame_of(driver: PageHandle, locator: Locator) -> Frame:
    handle = await locator.element_handle()
    return (await handle.owner_frame() if handle else None) or driver.page.main_frame


async def _radio_set(driver: PageHandle, radio: Locator) -> tuple[Locator | None, Locator]:
    """(container or None, all radios of the group) for one radio: its fieldset/radiogroup, else the
    radios sharing its name (sites often lay radios out loose, with no container)."""
    container = radio.locator("xpath=ancestor::*[self::fieldset or @role='radiogroup'][1]")
    if await container.count():
        return container, container.locator(_RADIOS)
    name = await radio.get_attribute("name")
    if not name:
        return None, radio
    frame = await _frame_of(driver, radio)
    return None, frame.locator(f"input[type=radio][name={json.dumps(name)}]")


async def _select_radio(radios: Locator, option: str, label: str) -> Locator:
    names: list[str] = await radios.evaluate_all(
        "els => els.map(r => ((r.labels && r.labels.length ? r.labels[0].innerText : '') || "
        "r.getAttribute('aria-label') || r.innerText || r.value || '').trim())")
    values: list[str] = await radios.evaluate_all("els => els.map(r => r.value || '')")
    wanted = norm(option)
    index = next((i for i, n in enumerate(names) if norm(n) == wanted), None)
    index = index if index is not None else next((i for i, v in enumerate(values) if norm(v) == wanted), None)
    index = index if index is not None else next((i for i, n in enumerate(names) if wanted in norm(n)), None)
    if index is None:
        raise BrowserError("option_not_found", f"{label!r} has no choice {option!r}; {_options_hint(names)}")
    radio = radios.nth(index)
    await radio.check()
    return radio


async def _click_option(scope: Any, option: str) -> bool:
    for exact in (True, False):
        candidates = scope.get_by_role("option", name=option, exact=exact)
        for index in range(min(await candidates.count(), 10)):
            candidate = candidates.nth(index)
            if await candidate.is_visible():
                await candidate.click()
                return True
    return False


async def _select_custom(driver: PageHandle, locator: Locator, option: str, label: str) -> None:
    """ARIA combobox/listbox: open it and click the matching option; an autocomplete input whose options
    appear only after typing gets the option's text typed first."""
    await locator.click()
    controls_id = await locator.get_attribute("aria-controls") or await locator.get_attribute("aria-owns")
    frame = await _frame_of(driver, locator)
    scope: Any = frame.locator(f"[id='{controls_id}']") if controls_id else frame
    if await _click_option(scope, option):
        return
    if await locator.evaluate("el => el.tagName === 'INPUT'"):
        await locator.fill("")
        await locator.press_sequentially(option, delay=20)
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
        if await _click_option(scope, option):
            return
    names = await scope.get_by_role("option").all_inner_texts()
    await driver.page.keyboard.press("Escape")
    raise BrowserError("option_not_found", f"{label!r} has no option {option!r}; "
                                           f"{_options_hint([n.strip() for n in names])}")


async def _select_link(locator: Locator, option: str, label: str) -> None:
    """A group of links that set one query parameter (facets, sort, page size) is a choice too: follow the
    link whose text (or query string, the observation's option value) is the option."""
    links = locator.locator("a[href]")
    texts = [norm(t) for t in await links.all_inner_texts()]
    hrefs = [await links.nth(i).get_attribute("href") or "" for i in range(len(texts))]
    wanted = norm(option)
    index = next((i for i, t in enumerate(texts) if t == wanted), None)
    index = index if index is not None else next((i for i, h in enumerate(hrefs) if option and h.endswith(option)), None)
    index = index if index is not None else next((i for i, t in enumerate(texts) if wanted and wanted in t), None)
    if index is None:
        raise BrowserError("option_not_found", f"{label!r} has no link {option!r}; {_options_hint(texts)}")
    await links.nth(index).click()


async def _select(driver: PageHandle, action: Select) -> Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    ref = await locator.get_attribute("data-sgr-ref")
    observed = _control_for(driver.last_observation, ref)
    if observed is not None and observed.kind == "link":
        try:
            await _select_link(locator, action.option, label)
        except PlaywrightError as exc:
            raise _interaction_error(exc, f"following {action.option!r} in {label!r}") from exc
        return Outcome(f"followed {action.option!r} in {label!r}", expect_change=True)
    if await is_face(locator):
        try:
            return await select_face(driver, locator, action, label)
        except PlaywrightError as exc:
            raise _interaction_error(exc, f"selecting {action.option!r} in {label!r}") from exc
    kind = await locator.evaluate(_KIND_JS)
    control = locator
    try:
        if kind == "select":
            await _select_native(locator, action.option, label, action.mode)
        elif kind == "radio_group":
            await _select_radio(locator.locator(_RADIOS), action.option, label)
        elif kind == "radio":
            container, radios = await _radio_set(driver, locator)
            chosen = await _select_radio(radios, action.option, label)
            if container is None:  # read back the chosen radio itself: it must still be checked
                return Outcome(f"selected {action.option!r} in {label!r}", control=chosen, control_label=label,
                                expected_checked=True)
            control = container
        elif kind == "combobox":
            await _select_custom(driver, locator, action.option, label)
        else:
            raise BrowserError("invalid_action", f"{label!r} is not a dropdown or radio group; use click or fill")
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"selecting {action.option!r} in {label!r}") from exc
    return Outcome(f"selected {action.option!r} in {label!r}", control=control, control_label=label,
                    expected=action.option)


async def _check(driver: PageHandle, action: Check) -> Outcome:
    try:
        locator = await _locate(driver, action.target)
    except BrowserError as exc:  # a tree node under a collapsed one is not in the page until its parent opens
        name = action.target.label or action.target.text
        if exc.error_class != "not_found" or not name or not await trees.open_to(driver.page, name):
            raise
        await driver.observe()  # the opened node is a control of the page the target is resolved against
        locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    kind = await locator.evaluate(_KIND_JS)
    try:
        if kind == "tree_node":
            await locator.evaluate(trees.TICK_JS, action.checked)
        elif kind in ("checkbox", "radio"):
            await locator.set_checked(action.checked)
        elif await locator.get_attribute("aria-checked") is not None:
            if (await locator.get_attribute("aria-checked") == "true") != action.checked:
                await locator.click()  # ARIA switches/checkboxes toggle on click
        else:
            raise BrowserError("invalid_action", f"{label!r} is not a checkbox or switch ({kind}); "
                                                 f"{_USE_INSTEAD.get(kind, 'use click')}")
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"{'checking' if action.checked else 'unchecking'} {label!r}") from exc
    return Outcome(f"{'checked' if action.checked else 'unchecked'} {label!r}", control=locator,
                    control_label=label, expected_checked=action.checked)


async def _set_range(driver: PageHandle, action: SetRange) -> Outcome:
    start = await _locate(driver, action.start_target)
    end = await _locate(driver, action.end_target)
    label = await _control_label(driver, start, action.start_target)
    end_label = await _control_label(driver, end, action.end_target)
    days = [parse_date(action.start), parse_date(action.end)]
    if await start.evaluate("(a, b) => a === b", await end.element_handle()):  # one field holds the range
        if None in days or not await date_field(driver, start):
            raise BrowserError("invalid_action", f"{label!r} is one field: give two dates, or fill it")
        try:
            await fill_date(driver, start, days)  # type: ignore[arg-type]
        except PlaywrightError as exc:
            raise _interaction_error(exc, f"setting {label!r} to {action.start!r}..{action.end!r}") from exc
        return Outcome(f"set {label!r} to {action.start!r}..{action.end!r}", control=start, control_label=label,
                       expected=action.start, extra_checks=[(start, label, action.end)])
    for locator, value, target, day in ((start, action.start, action.start_target, days[0]),
                                        (end, action.end, action.end_target, days[1])):
        await _ensure_enabled(locator, target.describe())
        try:
            if day is None or not await date_field(driver, locator) or await fill_date(driver, locator, [day]) is None:
                await locator.fill(value)
                await locator.evaluate("el => el.blur()")
        except PlaywrightError as exc:
            raise _interaction_error(exc, f"setting {target.describe()} to {value!r}") from exc
    return Outcome(f"set {label!r}={action.start!r} and {end_label!r}={action.end!r}", control=start,
                    control_label=label, expected=action.start, extra_checks=[(end, end_label, action.end)])


async def _submit(driver: PageHandle, action: Submit) -> Outcome:
    page = driver.page
    try:
        if action.target is None:
            submitted = await page.evaluate(
                "() => { const f = (document.activeElement && document.activeElement.form) || document.forms[0];"
                " if (!f) return false; f.requestSubmit(); return true; }")
            if not submitted:
                raise BrowserError("not_found", "there is no form on the page to submit; click the search button")
            return Outcome("submitted the form", expect_change=True)
        locator = await _locate(driver, action.target)
        await _ensure_enabled(locator, action.target.describe())
        is_button = await locator.evaluate(
            "el => el.tagName === 'BUTTON' || (el.tagName === 'INPUT' && ['submit','image','button']"
            ".includes(el.type)) || el.getAttribute('role') === 'button'")
        if is_button:
            await locator.click()
        elif not await locator.evaluate("el => { const f = el.form || el.closest('form'); if (!f) return false;"
                                        " f.requestSubmit(); return true; }"):
            await locator.press("Enter")
    except PlaywrightError as exc:
        raise _interaction_error(exc, "submitting") from exc
    return Outcome(f"submitted via {action.target.describe()}", expect_change=True)


async def _press(driver: PageHandle, action: Press) -> Outcome:
    try:
        if action.target is None:
            await driver.page.keyboard.press(action.key)
        else:
            await (await _locate(driver, action.target)).press(action.key)
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"pressing {action.key}") from exc
    return Outcome(f"pressed {action.key}", expect_change=True)


async def _scroll(driver: PageHandle, action: Scroll) -> Outcome:
    dy = action.pixels if action.direction == "down" else -action.pixels
    moved = await driver.page.evaluate(
        "dy => { const before = window.scrollY; window.scrollBy(0, dy); return window.scrollY - before; }", dy)
    return Outcome(f"scrolled {action.direction} {abs(moved)}px" + ("" if moved else " (already at the end)"))


async def _wait_for(driver: PageHandle, action: WaitFor) -> Outcome:
    page, timeout = driver.page, action.timeout_ms
    try:
        if action.text:
            # whole words only: "children of Ursus" must not be satisfied by "children of Ursidae"
            phrase = re.compile(rf"(?<!\w){re.escape(action.text)}(?!\w)", re.I)
            await page.get_by_text(phrase).first.wait_for(state="visible", timeout=timeout)
        if action.selector:
            await page.locator(action.selector).first.wait_for(state="visible", timeout=timeout)
        if action.network_idle:
            await page.wait_for_load_state("networkidle", timeout=timeout)
    except PlaywrightTimeout as exc:
        what = action.text or action.selector or "network quiet"
        raise BrowserError("timeout", f"{what!r} did not appear within {timeout / 1000:.1f}s") from exc
    return Outcome(f"waited for {action.text or action.selector or 'network quiet'!r}")


# ------------------------------------------------------------------ reading data


_HANDLERS: dict[str, Callable[[Any, Any], Awaitable[Outcome]]] = {
    "goto": _goto, "back": _back, "set_url_params": _set_url_params, "click": _click, "fill": _fill,
    "select": _select, "check": _check, "set_range": _set_range, "submit": _submit, "press": _press,
    "scroll": _scroll, "wait_for": _wait_for, "read_table": read_table, "read_pdf": read_pdf,
    "download": download, "page_facts": read_page_facts,
    "list_options": list_options, "list_links": list_links, "read_section": read_section,
}
if set(_HANDLERS) != set(ACTION_SPECS):  # every kind of types.ACTION_SPECS is carried out here, and nothing else
    raise ImportError(f"handlers and action specs differ: {sorted(set(_HANDLERS) ^ set(ACTION_SPECS))}")

# ------------------------------------------------------------------ delta and verdict


async def perform(driver: PageHandle, action: Any) -> ActionResult:
    page_id = await driver.sync_page_id()
    before = driver.last_observation
    if before is None or before.page_id != page_id or await fingerprint(driver.page) != driver.last_fingerprint:
        before = await driver.observe()  # the page changed since the agent last saw it: diff against now
    keyboard = action.kind == "press"
    before_print = await fingerprint(driver.page, with_focus=keyboard)
    mark = driver.policy.mark()
    try:
        outcome = await _HANDLERS[action.kind](driver, action)
    except BrowserError as exc:
        if exc.error_class in ("stale_ref", "not_found", "invalid_action", "option_not_found"):
            return ActionResult(ok=False, action=action.model_dump(), error=exc.error_class,  # type: ignore[arg-type]
                                message=str(exc), observation=before)
        outcome = Outcome(str(exc), error=exc.error_class)
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)
    if action.kind == "scroll" or (keyboard and action.key in lists.SCROLL_KEYS):
        await lists.await_loading(driver)  # a feed fetches its next batch a moment after the scroll
    if await _adopt_popups(driver):
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
    refused_navigation = [b.url for b in driver.policy.blocked[mark.blocked:] if b.navigation]
    if driver.page.url.startswith("chrome-error://") and refused_navigation:
        await _leave_error_page(driver)
    after = await driver.observe()
    delta = state_delta(before, after)
    readback, problem = await verify(after, outcome.control, outcome.control_label, outcome.expected,
                                      outcome.expected_checked)
    for locator, label, value in outcome.extra_checks:
        end_readback, end_problem = await verify(after, locator, label, value, None)
        problem = problem or end_problem
        readback = f"{readback} .. {end_readback}" if end_readback else readback
    error = outcome.error
    message = outcome.message
    if (looped := driver.policy.loop_message(mark.loops)) and error is None:  # a click or a form into a loop
        error, message = "not_found", looped
    elif refused_navigation and error is None:
        error, message = "blocked_by_policy", (f"navigation to {refused_navigation[0]} was refused by policy "
                                               f"(allowed: {', '.join(sorted(driver.policy.allowed_origins))})")
    elif problem and error is None:
        error, message = "value_reverted", problem
    elif (error is None and outcome.expect_change and after.page_id == before.page_id and not delta.tables_grown
          and await fingerprint(driver.page, with_focus=keyboard) == before_print):
        error, message = "no_effect", f"{outcome.message} but nothing on the page changed; try another control"
    refused_other = driver.policy.blocked[mark.blocked:]
    if refused_other and not refused_navigation:
        message += f" ({len(refused_other)} request(s) to other origins refused)"
    message += driver.policy.cut_note(mark)
    summary = describe_delta(delta, url_said=bool(delta.url_after) and delta.url_after in message,
                             read_hint=action.kind != "read_table")
    described = bool(summary) and error is None
    if described:
        message += f"; {summary}"
    return ActionResult(ok=error is None, action=action.model_dump(), error=error,  # type: ignore[arg-type]
                        message=message, delta=delta, described=described, readback=readback, observation=after,
                        set_controls=[label for label in (outcome.control_label,
                                                          *(label for _, label, _ in outcome.extra_checks)) if label],
                        table=outcome.table,
                        pdf_pages=outcome.pdf_pages, facts=outcome.facts,
                        download_path=outcome.download_path, page_bytes=driver.policy.document_bytes - mark.document_bytes)


async def _adopt_popups(driver: PageHandle) -> bool:
    """Keep one tab: a link that opened a new tab is followed in the current tab (if policy allows)."""
    followed = False
    for popup in [p for p in driver.context.pages if p is not driver.page]:
        try:
            await popup.wait_for_load_state("commit", timeout=driver.timeouts.action_ms)
            if popup.url == "about:blank":  # a busy machine: the tab exists before its navigation commits
                await popup.wait_for_url(lambda u: u != "about:blank", wait_until="commit",
                                         timeout=driver.timeouts.action_ms)
            url = popup.url
        except PlaywrightError:
            url = "about:blank"
        with contextlib.suppress(PlaywrightError):
            await popup.close()
        if url.startswith(("http://", "https://")):
            await navigate(driver, url)
            followed = True
    return followed


async def _leave_error_page(driver: PageHandle) -> None:
    """A refused navigation leaves Chromium's error page; return to where the agent was."""
    try:
        await driver.page.go_back(wait_until="domcontentloaded", timeout=driver.timeouts.navigation_ms)
    except PlaywrightError:
        if driver.last_observation is not None:
            await driver.page.goto(driver.last_observation.url, wait_until="domcontentloaded")
