"""Carry out one `BrowserAction` truthfully: act, settle, read back, and say what really changed.

Each handler does the Playwright work and returns an `_Outcome` (what to read back and what to
expect); `perform` then settles the page, observes it, computes the `StateDelta` and decides the
error class. A control that shows another value after settling is `value_reverted`; a click that
changed nothing visible is `no_effect`: both are the silent failures that derail state-gated retrieval.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlencode, urljoin, urlsplit, urlunsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browser.interface import BrowserError
from browser.settle import fingerprint, settle
from browser.targets import resolve_target
from browser.types import (
    ActionResult,
    Back,
    Check,
    Click,
    Control,
    Download,
    Fill,
    Goto,
    Observation,
    PdfPage,
    Press,
    ReadPdf,
    ReadTable,
    Scroll,
    Select,
    SetRange,
    SetUrlParams,
    StateDelta,
    Submit,
    TableData,
    Target,
    WaitFor,
)

if TYPE_CHECKING:
    from browser.session import PageDriver

# What a control shows now: value, the visible label of the chosen option, and checked state.
_READ_VALUE_JS = """
el => {
  const text = e => (e ? (e.innerText || e.textContent || '') : '').replace(/\\s+/g, ' ').trim();
  const labelOf = e => (e.labels && e.labels.length ? text(e.labels[0]) : '') || e.getAttribute('aria-label') || '';
  const tag = el.tagName.toLowerCase();
  if (tag === 'select') {
    const chosen = [...el.selectedOptions];
    return {value: chosen.map(o => o.value).join(', '), label: chosen.map(o => text(o)).join(', '), checked: null};
  }
  if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
    return {value: el.value, label: labelOf(el), checked: el.checked, radio: el.type === 'radio'};
  }
  if (tag === 'input' || tag === 'textarea') return {value: el.value, label: el.value, checked: null};
  const radios = el.querySelectorAll('input[type=radio], [role=radio]');
  if (radios.length) {
    const on = [...radios].find(r => r.checked || r.getAttribute('aria-checked') === 'true');
    return {value: on ? (on.value || text(on)) : '', label: on ? (labelOf(on) || text(on)) : '', checked: null};
  }
  const ariaChecked = el.getAttribute('aria-checked');
  if (ariaChecked !== null) return {value: ariaChecked, label: text(el), checked: ariaChecked === 'true'};
  const inner = el.querySelector('input:not([type=hidden])');
  if (inner) return {value: inner.value, label: inner.value, checked: null};
  return {value: el.getAttribute('value') || text(el), label: text(el), checked: null};
}
"""

_KIND_JS = """
el => {
  const tag = el.tagName.toLowerCase();
  const role = (el.getAttribute('role') || '').toLowerCase();
  if (tag === 'select') return 'select';
  if (tag === 'input' && el.type === 'radio') return 'radio';
  if (tag === 'input' && el.type === 'checkbox') return 'checkbox';
  if (tag === 'fieldset' || role === 'radiogroup' || el.querySelector('input[type=radio], [role=radio]'))
    return 'radio_group';
  if (role === 'combobox' || role === 'listbox' || el.getAttribute('aria-haspopup') === 'listbox') return 'combobox';
  if (tag === 'input' || tag === 'textarea') return 'text';
  return 'other';
}
"""

_NEXT_PAGE = re.compile(r"^\s*(next|next page|more results|›|»|→|>|>>)\s*[›»→>]?\s*$", re.I)


@dataclass
class _Outcome:
    message: str
    control: Locator | None = None
    control_label: str | None = None
    expected: str | None = None
    expected_checked: bool | None = None
    expect_change: bool = False
    navigated: bool = False
    table: TableData | None = None
    pdf_pages: list[PdfPage] = field(default_factory=list)
    download_path: str | None = None
    error: str | None = None
    extra_checks: list[tuple[Locator, str, str]] = field(default_factory=list)  # (control, label, expected)


@dataclass
class _Readback:
    value: str
    label: str
    checked: bool | None
    radio: bool = False

    def shown(self) -> str:
        if self.radio and self.checked and self.label:
            return self.label  # a radio is read back as the choice it stands for
        if self.checked is not None:
            return "checked" if self.checked else "unchecked"
        return self.label or self.value


# ------------------------------------------------------------------ helpers


def _norm(text: str | None) -> str:
    return re.sub(r"\s+", " ", (text or "")).strip().casefold()


async def _locate(driver: PageDriver, target: Target) -> Locator:
    return await resolve_target(driver.page, target, ref_is_stale=driver.ref_is_stale)


async def _read_value(locator: Locator | None) -> _Readback | None:
    if locator is None:
        return None
    try:
        if not await locator.count():
            return None
        raw = await locator.evaluate(_READ_VALUE_JS, timeout=2_000)
    except PlaywrightError:
        return None
    return _Readback(str(raw.get("value") or ""), str(raw.get("label") or ""), raw.get("checked"),
                     bool(raw.get("radio")))


def _control_for(observation: Observation | None, ref: str | None) -> Control | None:
    if observation is None or not ref:
        return None
    return next((c for c in observation.controls if c.ref == ref), None)


async def _control_label(driver: PageDriver, locator: Locator, target: Target) -> str:
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


async def _navigate(driver: PageDriver, url: str) -> None:
    refusal = driver.policy.navigation_refusal(url)
    if refusal:
        raise BrowserError("blocked_by_policy", f"not opening {url}: {refusal}")
    try:
        await driver.page.goto(url, wait_until="domcontentloaded")
    except PlaywrightTimeout as exc:
        raise BrowserError("timeout", f"{url} did not load within {driver.timeouts.navigation_ms / 1000:.0f}s; "
                                      "retry once or try another page") from exc
    except PlaywrightError as exc:
        message = str(exc).splitlines()[0]
        if "ERR_BLOCKED_BY_CLIENT" in message:
            raise BrowserError("blocked_by_policy", f"{url} redirected to a refused origin") from exc
        raise BrowserError("not_found", f"{url} could not be opened: {message}") from exc


async def _goto(driver: PageDriver, action: Goto) -> _Outcome:
    await _navigate(driver, action.url)
    return _Outcome(f"opened {action.url}", navigated=True)


async def _back(driver: PageDriver, action: Back) -> _Outcome:
    try:
        response = await driver.page.go_back(wait_until="domcontentloaded")
    except PlaywrightTimeout as exc:
        raise BrowserError("timeout", "going back did not finish loading") from exc
    if response is None and driver.page.url == (driver.last_observation.url if driver.last_observation else None):
        return _Outcome("there is no earlier page in this tab's history", expect_change=True)
    return _Outcome("went back", navigated=True)


def _params_diff(old: dict[str, list[str]], new: dict[str, list[str]]) -> str:
    parts = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            parts.append(f"-{key}")
        elif key not in old:
            parts.append(f"+{key}={','.join(new[key])}")
        elif old[key] != new[key]:
            parts.append(f"{key}: {','.join(old[key])} -> {','.join(new[key])}")
    return "; ".join(parts) or "no parameter changed"


async def _set_url_params(driver: PageDriver, action: SetUrlParams) -> _Outcome:
    current = urlsplit(driver.page.url)
    if current.scheme not in ("http", "https"):
        raise BrowserError("invalid_action", f"the current page ({driver.page.url}) has no URL parameters to set")
    old = parse_qs(current.query, keep_blank_values=True)
    new = {k: list(v) for k, v in old.items() if k not in action.remove}
    for key, value in action.params.items():
        new[key] = [value] if isinstance(value, str) else list(value)
    url = urlunsplit(current._replace(query=urlencode(new, doseq=True)))
    diff = _params_diff(old, new)
    if url == driver.page.url:
        return _Outcome(f"URL unchanged ({diff})")
    await _navigate(driver, url)
    return _Outcome(f"opened {url} ({diff})", navigated=True)


# ------------------------------------------------------------------ element actions


async def _click(driver: PageDriver, action: Click) -> _Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    try:
        await locator.click()
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"clicking {action.target.describe()}") from exc
    return _Outcome(f"clicked {action.target.describe()}", expect_change=True)


async def _fill(driver: PageDriver, action: Fill) -> _Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    try:
        await locator.fill(action.value)
        await locator.evaluate("el => el.blur()")  # many sites apply a field on `change`, fired on blur
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"filling {label!r}") from exc
    return _Outcome(f"filled {label!r} with {action.value!r}", control=locator, control_label=label,
                    expected=action.value)


async def _select_native(locator: Locator, option: str, label: str) -> None:
    options = await locator.evaluate("el => [...el.options].map(o => [o.label || o.text, o.value])")
    wanted = _norm(option)
    match = next((value for text, value in options if _norm(text) == wanted), None)
    match = match if match is not None else next((value for _, value in options if _norm(value) == wanted), None)
    match = match if match is not None else next(
        (value for text, value in options if wanted and wanted in _norm(text)), None)
    if match is None:
        raise BrowserError("option_not_found", f"{label!r} has no option {option!r}; "
                                               f"{_options_hint([text for text, _ in options])}")
    await locator.select_option(value=match)


_RADIOS = "input[type=radio], [role=radio]"


async def _frame_of(driver: PageDriver, locator: Locator) -> Frame:
    handle = await locator.element_handle()
    return (await handle.owner_frame() if handle else None) or driver.page.main_frame


async def _radio_set(driver: PageDriver, radio: Locator) -> tuple[Locator | None, Locator]:
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
    wanted = _norm(option)
    index = next((i for i, n in enumerate(names) if _norm(n) == wanted), None)
    index = index if index is not None else next((i for i, v in enumerate(values) if _norm(v) == wanted), None)
    index = index if index is not None else next((i for i, n in enumerate(names) if wanted in _norm(n)), None)
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


async def _select_custom(driver: PageDriver, locator: Locator, option: str, label: str) -> None:
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


async def _select(driver: PageDriver, action: Select) -> _Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    kind = await locator.evaluate(_KIND_JS)
    control = locator
    try:
        if kind == "select":
            await _select_native(locator, action.option, label)
        elif kind == "radio_group":
            await _select_radio(locator.locator(_RADIOS), action.option, label)
        elif kind == "radio":
            container, radios = await _radio_set(driver, locator)
            chosen = await _select_radio(radios, action.option, label)
            if container is None:  # read back the chosen radio itself: it must still be checked
                return _Outcome(f"selected {action.option!r} in {label!r}", control=chosen, control_label=label,
                                expected_checked=True)
            control = container
        elif kind == "combobox":
            await _select_custom(driver, locator, action.option, label)
        else:
            raise BrowserError("invalid_action", f"{label!r} is not a dropdown or radio group; use click or fill")
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"selecting {action.option!r} in {label!r}") from exc
    return _Outcome(f"selected {action.option!r} in {label!r}", control=control, control_label=label,
                    expected=action.option)


async def _check(driver: PageDriver, action: Check) -> _Outcome:
    locator = await _locate(driver, action.target)
    await _ensure_enabled(locator, action.target.describe())
    label = await _control_label(driver, locator, action.target)
    try:
        if await locator.evaluate("el => el.tagName === 'INPUT'"):
            await locator.set_checked(action.checked)
        elif (await locator.get_attribute("aria-checked") == "true") != action.checked:
            await locator.click()  # ARIA switches/checkboxes toggle on click
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"{'checking' if action.checked else 'unchecking'} {label!r}") from exc
    return _Outcome(f"{'checked' if action.checked else 'unchecked'} {label!r}", control=locator,
                    control_label=label, expected_checked=action.checked)


async def _set_range(driver: PageDriver, action: SetRange) -> _Outcome:
    start = await _locate(driver, action.start_target)
    end = await _locate(driver, action.end_target)
    for locator, value, target in ((start, action.start, action.start_target), (end, action.end, action.end_target)):
        await _ensure_enabled(locator, target.describe())
        try:
            await locator.fill(value)
            await locator.evaluate("el => el.blur()")
        except PlaywrightError as exc:
            raise _interaction_error(exc, f"setting {target.describe()} to {value!r}") from exc
    label = await _control_label(driver, start, action.start_target)
    end_label = await _control_label(driver, end, action.end_target)
    return _Outcome(f"set {label!r}={action.start!r} and {end_label!r}={action.end!r}", control=start,
                    control_label=label, expected=action.start, extra_checks=[(end, end_label, action.end)])


async def _submit(driver: PageDriver, action: Submit) -> _Outcome:
    page = driver.page
    try:
        if action.target is None:
            submitted = await page.evaluate(
                "() => { const f = (document.activeElement && document.activeElement.form) || document.forms[0];"
                " if (!f) return false; f.requestSubmit(); return true; }")
            if not submitted:
                raise BrowserError("not_found", "there is no form on the page to submit; click the search button")
            return _Outcome("submitted the form", expect_change=True)
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
    return _Outcome(f"submitted via {action.target.describe()}", expect_change=True)


async def _press(driver: PageDriver, action: Press) -> _Outcome:
    try:
        if action.target is None:
            await driver.page.keyboard.press(action.key)
        else:
            await (await _locate(driver, action.target)).press(action.key)
    except PlaywrightError as exc:
        raise _interaction_error(exc, f"pressing {action.key}") from exc
    return _Outcome(f"pressed {action.key}", expect_change=True)


async def _scroll(driver: PageDriver, action: Scroll) -> _Outcome:
    dy = action.pixels if action.direction == "down" else -action.pixels
    moved = await driver.page.evaluate(
        "dy => { const before = window.scrollY; window.scrollBy(0, dy); return window.scrollY - before; }", dy)
    return _Outcome(f"scrolled {action.direction} {abs(moved)}px" + ("" if moved else " (already at the end)"))


async def _wait_for(driver: PageDriver, action: WaitFor) -> _Outcome:
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
    return _Outcome(f"waited for {action.text or action.selector or 'network quiet'!r}")


# ------------------------------------------------------------------ reading data


async def _next_page_control(driver: PageDriver) -> Locator | None:
    page = driver.page
    candidates = [page.locator("a[rel~=next], [rel~=next]"),
                  page.get_by_role("link", name=_NEXT_PAGE), page.get_by_role("button", name=_NEXT_PAGE),
                  page.locator("[aria-label*='next' i]")]
    for locator in candidates:
        for index in range(min(await locator.count(), 5)):
            candidate = locator.nth(index)
            if not await candidate.is_visible() or await candidate.is_disabled():
                continue
            if await candidate.get_attribute("aria-disabled") == "true":
                continue
            return candidate
    return None


async def _read_table(driver: PageDriver, action: ReadTable) -> _Outcome:
    from browser.observe import observe_page

    cap = min(action.max_rows, driver.limits.table_rows)
    merged: TableData | None = None
    pages_read = 0
    seen: set[str] = set()
    while True:
        page_id = await driver.sync_page_id()
        observation = await observe_page(driver.page, page_id=page_id, token_budget=driver.worker.token_budget,
                                         max_table_rows=cap)
        if action.table >= len(observation.tables):
            if merged is None:
                raise BrowserError("not_found", f"there is no table {action.table} on the page "
                                                f"({len(observation.tables)} tables found)")
            break
        table = observation.tables[action.table]
        signature = repr(table.rows[:3])
        if signature in seen:
            break  # the 'next' control did not move to a new page
        seen.add(signature)
        pages_read += 1
        if merged is None:
            merged = table.model_copy(deep=True)
        else:
            merged.rows += table.rows
            merged.row_links += table.row_links
        if len(merged.rows) >= cap:
            merged.truncated = True
            break
        if not action.all_pages or pages_read >= driver.limits.table_pages:
            merged.truncated = merged.truncated or table.truncated
            break
        next_control = await _next_page_control(driver)
        if next_control is None:
            break
        await next_control.click()
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
    assert merged is not None
    merged.rows, merged.row_links = merged.rows[:cap], merged.row_links[:cap]
    merged.total_rows = len(merged.rows)
    cut = " (row cap reached; narrow the filters)" if merged.truncated else ""
    return _Outcome(f"read {len(merged.rows)} rows from table {action.table} over {pages_read} page(s){cut}",
                    table=merged, navigated=pages_read > 1)


async def _link_url(driver: PageDriver, target: Target) -> str:
    locator = await _locate(driver, target)
    href = await locator.get_attribute("href")
    if not href:
        raise BrowserError("invalid_action", f"{target.describe()} is not a link with an address")
    return urljoin(driver.page.url, href)


@dataclass
class _Fetched:
    url: str
    body: bytes
    content_type: str
    disposition: str


async def _fetch_capped(driver: PageDriver, url: str) -> _Fetched:
    """GET through the context (its cookies), following redirects only within the policy, size-capped."""
    limit = driver.limits.download_bytes
    for _hop in range(6):
        refusal = driver.policy.navigation_refusal(url)
        if refusal:
            raise BrowserError("blocked_by_policy", f"not fetching {url}: {refusal}")
        response = await driver.context.request.get(url, max_redirects=0, timeout=driver.timeouts.navigation_ms)
        try:
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                url = urljoin(url, location)
                continue
            if not response.ok:
                raise BrowserError("not_found", f"{url} answered HTTP {response.status}")
            declared = int(response.headers.get("content-length") or 0)
            if declared > limit:
                raise BrowserError("download_too_large", f"{url} is {declared} bytes; the cap is {limit}")
            body = await response.body()
            if len(body) > limit:
                raise BrowserError("download_too_large", f"{url} is {len(body)} bytes; the cap is {limit}")
            return _Fetched(url, body, response.headers.get("content-type", ""),
                            response.headers.get("content-disposition", ""))
        finally:
            await response.dispose()
    raise BrowserError("not_found", f"{url} redirects too many times")


_DISPOSITION_NAME = re.compile(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", re.I)


def _file_name(fetched: _Fetched) -> str:
    if match := _DISPOSITION_NAME.search(fetched.disposition):
        name = unquote(match.group(1))
    else:
        name = unquote(urlsplit(fetched.url).path.rsplit("/", 1)[-1])
    return Path(name).name or "download.bin"  # never a path out of the downloads folder


async def _read_pdf(driver: PageDriver, action: ReadPdf) -> _Outcome:
    from browser.pdf import NotAPdfError, read_pdf_bytes

    if action.url:
        url = urljoin(driver.page.url, action.url)
    elif action.target:
        url = await _link_url(driver, action.target)
    else:
        url = driver.page.url
    data = (await _fetch_capped(driver, url)).body
    max_pages = min(action.max_pages, driver.limits.pdf_pages)
    try:
        pages = read_pdf_bytes(data, max_pages=max_pages, max_chars=driver.limits.text_chars)
    except NotAPdfError as exc:
        raise BrowserError("invalid_action", f"{url}: {exc}") from exc
    return _Outcome(f"read {len(pages)} page(s) of {url}", pdf_pages=pages)


async def _download(driver: PageDriver, action: Download) -> _Outcome:
    """A link is fetched through the context (policy and size cap apply before anything is saved); a
    script-made download (blob, POST export) goes through the browser's own download."""
    locator = await _locate(driver, action.target)
    href = await locator.get_attribute("href")
    url = urljoin(driver.page.url, href) if href else ""
    if urlsplit(url).scheme in ("http", "https"):
        fetched = await _fetch_capped(driver, url)
        path = driver.downloads_dir / _file_name(fetched)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fetched.body)
        return _saved_file(driver, path, is_csv="csv" in fetched.content_type)
    try:
        async with driver.page.expect_download(timeout=driver.timeouts.action_ms * 2) as info:
            await locator.click()
        download = await info.value
    except PlaywrightTimeout as exc:
        raise BrowserError("no_effect", f"clicking {action.target.describe()} started no download; "
                                        "use read_pdf for PDFs or click for pages") from exc
    path = driver.downloads_dir / (Path(download.suggested_filename or "download.bin").name or "download.bin")
    path.parent.mkdir(parents=True, exist_ok=True)
    await download.save_as(path)
    return _saved_file(driver, path, is_csv=False)


def _saved_file(driver: PageDriver, path: Path, *, is_csv: bool) -> _Outcome:
    from browser.csvdata import parse_csv

    size = path.stat().st_size
    if size > driver.limits.download_bytes:
        path.unlink()
        raise BrowserError("download_too_large", f"{path.name} is {size} bytes; the cap is "
                                                 f"{driver.limits.download_bytes} (file discarded)")
    outcome = _Outcome(f"downloaded {path.name} ({size} bytes)", download_path=str(path))
    if is_csv or path.suffix.lower() in (".csv", ".tsv"):
        outcome.table = parse_csv(path.read_bytes(), max_rows=driver.limits.table_rows)
        outcome.message += f"; {len(outcome.table.rows)} rows" + (" (row cap reached)" if outcome.table.truncated else "")
    return outcome


_HANDLERS: dict[str, Callable[[Any, Any], Awaitable[_Outcome]]] = {
    "goto": _goto, "back": _back, "set_url_params": _set_url_params, "click": _click, "fill": _fill,
    "select": _select, "check": _check, "set_range": _set_range, "submit": _submit, "press": _press,
    "scroll": _scroll, "wait_for": _wait_for, "read_table": _read_table, "read_pdf": _read_pdf,
    "download": _download,
}

# ------------------------------------------------------------------ delta and verdict


def _control_value(control: Control) -> str | None:
    if control.checked is not None and control.kind in ("checkbox", "toggle"):
        return "checked" if control.checked else "unchecked"
    return control.value


def _controls_by_label(observation: Observation) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for control in observation.controls:
        if control.kind in ("link", "button", "submit"):
            continue
        key = control.label or control.name or control.ref
        if key in values:
            key = f"{key} [{control.ref}]"
        values[key] = _control_value(control)
    return values


def state_delta(before: Observation | None, after: Observation) -> StateDelta:
    before_params = before.query_state if before else {}
    after_params = after.query_state
    before_controls = _controls_by_label(before) if before else {}
    after_controls = _controls_by_label(after)
    return StateDelta(
        url_before=before.url if before else None,
        url_after=after.url,
        params_added={k: v for k, v in after_params.items() if k not in before_params},
        params_removed={k: v for k, v in before_params.items() if k not in after_params},
        params_changed={k: (before_params[k], v) for k, v in after_params.items()
                        if k in before_params and before_params[k] != v},
        controls_changed={k: (before_controls.get(k), v) for k, v in after_controls.items()
                          if k in before_controls and before_controls[k] != v},
        count_before=before.result_count if before else None,
        count_after=after.result_count,
    )


def describe_delta(delta: StateDelta) -> str:
    parts = []
    if delta.params_added or delta.params_removed or delta.params_changed:
        parts.append("URL " + _params_diff(
            {**delta.params_removed, **{k: old for k, (old, _new) in delta.params_changed.items()}},
            {**delta.params_added, **{k: new for k, (_old, new) in delta.params_changed.items()}}))
    elif delta.url_before != delta.url_after:
        parts.append(f"now at {delta.url_after}")
    if delta.controls_changed:
        parts.append("controls " + "; ".join(f"{k}: {b!r} -> {a!r}" for k, (b, a) in
                                               list(delta.controls_changed.items())[:6]))
    if delta.count_before != delta.count_after:
        parts.append(f"results {delta.count_before} -> {delta.count_after}")
    return ", ".join(parts)


def value_matches(expected: str, shown: str) -> bool:
    """Did the control keep the requested value? Tolerates what sites do to a value without refusing it:
    case, spacing, separators ('1000' -> '1,000') and date re-ordering ('2020-01-05' -> '01/05/2020')."""
    wanted, got = _norm(expected), _norm(shown)
    if wanted == got or (wanted and wanted in got):
        return True
    if re.sub(r"[\W_]+", "", wanted) == re.sub(r"[\W_]+", "", got):
        return True
    digits_wanted, digits_got = re.findall(r"\d+", wanted), re.findall(r"\d+", got)
    return bool(digits_wanted) and not re.search(r"[^\W\d_]", wanted + got) and (
        sorted(int(d) for d in digits_wanted) == sorted(int(d) for d in digits_got))


def _matches(expected: str, shown: _Readback) -> bool:
    return value_matches(expected, shown.value) or value_matches(expected, shown.label)


async def _verify(outcome: _Outcome, after: Observation, locator: Locator | None, label: str | None,
                  expected: str | None, expected_checked: bool | None) -> tuple[str | None, str | None]:
    """(readback, problem): the control as shown after settling, and why it differs from the request."""
    shown = await _read_value(locator)
    if shown is None and label:  # the control was re-rendered: read it from the fresh observation
        control = next((c for c in after.controls if c.label == label), None)
        if control is not None:
            shown = _Readback(control.value or "", control.value or "", control.checked)
    if shown is None:
        return None, None
    if expected_checked is not None and shown.checked is not None and shown.checked != expected_checked:
        return shown.shown(), (f"{label!r} is {'checked' if shown.checked else 'unchecked'} after settling; "
                               "the site reset it")
    if expected is not None and not _matches(expected, shown):
        return shown.shown(), (f"{label!r} shows {shown.shown()!r} after settling, not {expected!r}; the site "
                               "refused or reset it (check dependent controls or pick an available value)")
    return shown.shown(), None


async def perform(driver: PageDriver, action: Any) -> ActionResult:
    page_id = await driver.sync_page_id()
    before = driver.last_observation
    before_print = await fingerprint(driver.page)
    if before is None or before.page_id != page_id or before_print != driver.last_fingerprint:
        before = await driver.observe()  # the page changed since the agent last saw it: diff against now
        before_print = driver.last_fingerprint
    blocked_mark = len(driver.policy.blocked)
    try:
        outcome = await _HANDLERS[action.kind](driver, action)
    except BrowserError as exc:
        if exc.error_class in ("stale_ref", "not_found", "invalid_action", "option_not_found"):
            return ActionResult(ok=False, action=action.model_dump(), error=exc.error_class,  # type: ignore[arg-type]
                                message=str(exc), observation=before)
        outcome = _Outcome(str(exc), error=exc.error_class)
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)
    if await _adopt_popups(driver):
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
    refused_navigation = [b.url for b in driver.policy.blocked[blocked_mark:] if b.navigation]
    if driver.page.url.startswith("chrome-error://") and refused_navigation:
        await _leave_error_page(driver)
    after = await driver.observe()
    delta = state_delta(before, after)
    readback, problem = await _verify(outcome, after, outcome.control, outcome.control_label, outcome.expected,
                                      outcome.expected_checked)
    for locator, label, value in outcome.extra_checks:
        end_readback, end_problem = await _verify(outcome, after, locator, label, value, None)
        problem = problem or end_problem
        readback = f"{readback} .. {end_readback}" if end_readback else readback
    error = outcome.error
    message = outcome.message
    if refused_navigation and error is None:
        error, message = "blocked_by_policy", (f"navigation to {refused_navigation[0]} was refused by policy "
                                               f"(allowed: {', '.join(sorted(driver.policy.allowed_origins))})")
    elif problem and error is None:
        error, message = "value_reverted", problem
    elif (error is None and outcome.expect_change and after.page_id == before.page_id
          and await fingerprint(driver.page) == before_print):
        error, message = "no_effect", f"{outcome.message} but nothing on the page changed; try another control"
    refused_other = driver.policy.blocked[blocked_mark:]
    if refused_other and not refused_navigation:
        message += f" ({len(refused_other)} request(s) to other origins refused)"
    summary = describe_delta(delta)
    if summary and error is None:
        message += f"; {summary}"
    return ActionResult(ok=error is None, action=action.model_dump(), error=error,  # type: ignore[arg-type]
                        message=message, delta=delta, readback=readback, observation=after, table=outcome.table,
                        pdf_pages=outcome.pdf_pages, download_path=outcome.download_path)


async def _adopt_popups(driver: PageDriver) -> bool:
    """Keep one tab: a link that opened a new tab is followed in the current tab (if policy allows)."""
    followed = False
    for popup in [p for p in driver.context.pages if p is not driver.page]:
        try:
            await popup.wait_for_load_state("commit", timeout=driver.timeouts.action_ms)
            url = popup.url
        except PlaywrightError:
            url = "about:blank"
        with contextlib.suppress(PlaywrightError):
            await popup.close()
        if url.startswith(("http://", "https://")):
            await _navigate(driver, url)
            followed = True
    return followed


async def _leave_error_page(driver: PageDriver) -> None:
    """A refused navigation leaves Chromium's error page; return to where the agent was."""
    try:
        await driver.page.go_back(wait_until="domcontentloaded", timeout=driver.timeouts.navigation_ms)
    except PlaywrightError:
        if driver.last_observation is not None:
            await driver.page.goto(driver.last_observation.url, wait_until="domcontentloaded")
