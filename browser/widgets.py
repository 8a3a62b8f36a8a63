"""Setters for library widgets, driven as a user drives them: click the face, type, click the suggestion or the day.

Multi-selects and comboboxes (observe-2-widgets.js: a face over a hidden native element) take an option by opening
the face and clicking it in the library's own list (typed first when the list shows it only after typing, waiting
for suggestions that come from the server); chips are removed by their own remove button. A text field that
suggests (a typeahead) gets the value typed and the exactly matching suggestion clicked before anything blurs it.
A date field that opens a calendar is set on its calendar (readonly pickers included); one without a calendar is
typed in the format its hint or placeholder shows. Nothing here knows a library: only ARIA, visibility and the
dates calendars carry in their attributes.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browser.driver import PageHandle
from browser.interface import BrowserError
from browser.readback import Outcome, norm
from browser.settle import settle
from browser.types import Select

SUGGESTION_WAIT_S = 4.0  # async suggestions: a debounce plus a server round trip
POLL_S = 0.15
MAX_MONTH_STEPS = 60

IS_FACE_JS = "el => !!(window.__sgrFaces && window.__sgrFaces.get(el))"
FACE_VALUES_JS = """el => { const v = window.__sgrFaceShown ? window.__sgrFaceShown(el) : null;
  return v ? v.split(', ').filter(Boolean) : []; }"""
MAY_SUGGEST_JS = """el => el.tagName === 'INPUT' && (el.getAttribute('autocomplete') === 'off' ||
  el.hasAttribute('aria-autocomplete') || el.getAttribute('role') === 'combobox' || el.hasAttribute('list') ||
  el.hasAttribute('aria-haspopup'))"""

# Tag the one visible suggestion whose text is the wanted one (role=option first, then list items and menu items),
# outside the widget's chips; returns whether one was tagged.
_TAG_SUGGESTION_JS = """([wanted, handle]) => {
  document.querySelectorAll('[data-sgr-pick]').forEach(n => n.removeAttribute('data-sgr-pick'));
  const f = window.__sgrFaces && handle ? window.__sgrFaces.get(handle) : null;
  const norm = s => (s || '').replace(/[×✕✖⨯]/g, ' ').replace(/\\s+/g, ' ').trim().toLowerCase();
  const seen = el => el.checkVisibility ? el.checkVisibility({visibilityProperty: true}) : !!el.offsetParent;
  const pools = ['[role=option]', '[role=menuitem], li'];
  for (const sel of pools) {
    for (const el of document.querySelectorAll(sel)) {
      if (el.tagName === 'OPTION' || !seen(el) || el.getAttribute('aria-disabled') === 'true') continue;
      if (f && f.face.contains(el) && !(handle.getAttribute('aria-controls') &&
          el.closest('#' + CSS.escape(handle.getAttribute('aria-controls'))))) continue;
      if (norm(el.innerText) === wanted) { el.setAttribute('data-sgr-pick', '1'); return true; }
    }
  }
  return false;
}"""

# Chip of the face showing `wanted`, and its remove control: tagged for a real click.
_TAG_REMOVER_JS = """([handle, wanted]) => {
  const f = window.__sgrFaces && window.__sgrFaces.get(handle);
  if (!f) return false;
  const norm = s => (s || '').replace(/[×✕✖⨯]/g, ' ').replace(/\\s+/g, ' ').trim().toLowerCase();
  const box = f.face.parentElement && f.face.parentElement.getAttribute('role') === 'combobox' ? f.face.parentElement : f.face;
  for (const el of box.querySelectorAll('*')) {
    if (f.native.contains(el) || !el.checkVisibility()) continue;
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.nodeValue).join(' ');
    const inner = [...el.children].filter(c => !c.matches('a,button,[role=button]')).map(c => c.innerText).join(' ');
    if (norm(own) !== wanted && norm(own + ' ' + inner) !== wanted) continue;
    for (let chip = el, i = 0; chip && chip !== box && i < 3; chip = chip.parentElement, i++) {
      const r = chip.querySelector('a,button,[role=button],[aria-label*=remove i],[title*=remove i]');
      if (r && r.checkVisibility()) { r.setAttribute('data-sgr-pick', '1'); return true; }
    }
  }
  return false;
}"""


async def is_face(locator: Locator) -> bool:
    try:
        return bool(await locator.evaluate(IS_FACE_JS))
    except PlaywrightError:
        return False


async def face_values(locator: Locator) -> list[str]:
    try:
        return list(await locator.evaluate(FACE_VALUES_JS))
    except PlaywrightError:
        return []


async def _click_tagged(driver: PageHandle) -> None:
    tagged = driver.page.locator("[data-sgr-pick]").first
    await tagged.click()
    await driver.page.evaluate("() => document.querySelectorAll('[data-sgr-pick]').forEach("
                               "n => n.removeAttribute('data-sgr-pick'))")


async def _wait_suggestion(driver: PageHandle, handle: Locator | None, option: str, seconds: float) -> bool:
    element = await handle.element_handle() if handle is not None else None
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        if await driver.page.evaluate(_TAG_SUGGESTION_JS, [norm(option), element]):
            return True
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(POLL_S)


async def _close_list(driver: PageHandle, handle: Locator) -> None:
    if await handle.get_attribute("aria-expanded") == "true":
        await driver.page.keyboard.press("Escape")


async def pick_in_face(driver: PageHandle, handle: Locator, option: str, label: str) -> None:
    """Open the widget and click `option` in its list; typed first (without clearing what is chosen) when the list
    does not show it, then waited for (suggestions may come from the server)."""
    if norm(option) in {norm(v) for v in await face_values(handle)}:
        return
    await handle.click()
    if not await _wait_suggestion(driver, handle, option, 0.4):
        await driver.page.keyboard.type(option, delay=15)
        if not await _wait_suggestion(driver, handle, option, SUGGESTION_WAIT_S):
            await driver.page.keyboard.press("Escape")
            raise BrowserError("option_not_found", f"{label!r} offers no option {option!r}, listed or after typing it")
    await _click_tagged(driver)
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)
    await _close_list(driver, handle)


async def remove_in_face(driver: PageHandle, handle: Locator, option: str, label: str) -> None:
    if not await driver.page.evaluate(_TAG_REMOVER_JS, [await handle.element_handle(), norm(option)]):
        raise BrowserError("option_not_found", f"{label!r} shows no removable {option!r}; chosen: "
                                               f"{', '.join(await face_values(handle)) or 'nothing'}")
    await _click_tagged(driver)
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)
    await _close_list(driver, handle)


async def select_in_face(driver: PageHandle, handle: Locator, option: str, mode: str, label: str) -> str | None:
    """Carry out `select` (add, replace, remove, clear) on a widget face; the expected shown value, or None when the
    check is that the face no longer shows `option` (remove, clear)."""
    if mode in ("replace", "clear"):
        for value in await face_values(handle):
            if mode == "clear" or norm(value) != norm(option):
                await remove_in_face(driver, handle, value, label)
    if mode == "remove":
        await remove_in_face(driver, handle, option, label)
    if mode in ("remove", "clear"):
        return None
    await pick_in_face(driver, handle, option, label)
    return option


async def pick_suggestion(driver: PageHandle, locator: Locator, value: str) -> bool:
    """After typing `value` into a field that may suggest: click the suggestion that reads exactly `value`, if one
    comes (waited for); the field is not blurred first (a blur closes the list)."""
    if not await locator.evaluate(MAY_SUGGEST_JS):
        return False
    if not await _wait_suggestion(driver, None, value, SUGGESTION_WAIT_S):
        return False
    await _click_tagged(driver)
    return True


# ------------------------------------------------------------------ dates

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]


def parse_date(text: str) -> date | None:
    """ISO, m/d/yyyy or a month name with day and year: the forms a model writes a date in."""
    text = text.strip()
    try:
        if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text):
            return date(int(m[1]), int(m[2]), int(m[3]))
        if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
            return date(int(m[3]), int(m[1]), int(m[2]))
        lowered = text.lower()
        month = next((i + 1 for i, name in enumerate(_MONTHS) if name[:3] in lowered), None)
        year = re.search(r"\b(\d{4})\b", text)
        day = re.search(r"\b(\d{1,2})\b", re.sub(r"\b\d{4}\b", " ", text))
        if month and year and day:
            return date(int(year[1]), month, int(day[1]))
    except ValueError:
        return None
    return None


def split_range(text: str) -> tuple[date, date] | None:
    parts = re.split(r"\s+(?:to|until|-|–|—)\s+|\s*\.\.\s*", text.strip())
    if len(parts) == 2 and (a := parse_date(parts[0])) and (b := parse_date(parts[1])):
        return a, b
    return None


# Visible day cells of open calendars -> [[iso, disabled]], the shown months' span and the month-step controls
# (tagged data-sgr-prev / data-sgr-next). A day's date comes from its attributes (data-date, data-value, aria-label,
# title), or from a cell's data-year/data-month (month counted from 0, as calendars that use them do).
_CALENDAR_JS = """(target) => {
  const MONTHS = ['jan','feb','mar','apr','may','jun','jul','aug','sep','oct','nov','dec'];
  const pad = n => String(n).padStart(2, '0');
  const parse = (s) => {
    if (!s) return null;
    let m = s.match(/(\\d{4})-(\\d{2})-(\\d{2})/);
    if (m) return `${m[1]}-${m[2]}-${m[3]}`;
    const low = s.toLowerCase(), mi = MONTHS.findIndex(x => low.includes(x)), y = s.match(/\\b(\\d{4})\\b/);
    const d = s.replace(/\\b\\d{4}\\b/, ' ').match(/\\b(\\d{1,2})\\b/);
    return mi >= 0 && y && d ? `${y[1]}-${pad(mi + 1)}-${pad(+d[1])}` : null;
  };
  document.querySelectorAll('[data-sgr-pick],[data-sgr-prev],[data-sgr-next]').forEach(n => {
    n.removeAttribute('data-sgr-pick'); n.removeAttribute('data-sgr-prev'); n.removeAttribute('data-sgr-next'); });
  const seen = el => el.checkVisibility({visibilityProperty: true});
  const days = [];
  for (const el of document.querySelectorAll('td, td > a, td > button, [role=gridcell], button, span, div')) {
    const text = (el.textContent || '').trim();
    if (!/^\\d{1,2}$/.test(text) || el.children.length > 1 || !seen(el)) continue;
    let iso = parse(el.getAttribute('data-date')) || parse(el.getAttribute('data-value')) ||
              parse(el.getAttribute('aria-label')) || parse(el.getAttribute('title'));
    const cell = el.closest('[data-year][data-month]');
    if (!iso && cell) iso = `${cell.getAttribute('data-year')}-${pad(+cell.getAttribute('data-month') + 1)}-${pad(+text)}`;
    if (!iso || +iso.slice(8) !== +text) continue;
    const off = el.getAttribute('aria-disabled') === 'true' || el.disabled || /disabled|unselectable/i.test(
      (el.className || '') + ' ' + ((el.closest('td') || el).className || ''));
    days.push([el, iso, off]);
  }
  if (!days.length) return {days: 0};
  const hit = days.find(([el, iso, off]) => iso === target && !off);
  if (hit) { hit[0].setAttribute('data-sgr-pick', '1'); return {days: days.length, found: true}; }
  const isos = days.map(d => d[1]).sort();
  let box = days[0][0];
  const own = n => [...n.childNodes].filter(c => c.nodeType === 3).map(c => c.nodeValue).join(' ');
  const dayCells = new Set(days.map(d => d[0]));
  const step = (re) => [...box.querySelectorAll('a,button,[role=button],span,div')].find(n => {
    if (dayCells.has(n) || !seen(n)) return false;
    const said = [n.getAttribute('aria-label'), n.getAttribute('title'), typeof n.className === 'string' ? n.className : '',
                  own(n)].join(' ');
    return re.test(said) && !/year/i.test(said);
  });
  let prev = null, next = null;
  for (let i = 0; box && i < 8 && !(prev && next); i++, box = box.parentElement) {
    prev = prev || step(/prev|back|earlier/i); next = next || step(/next|forward|later/i);
  }
  if (prev) prev.setAttribute('data-sgr-prev', '1');
  if (next) next.setAttribute('data-sgr-next', '1');
  return {days: days.length, found: false, first: isos[0], last: isos[isos.length - 1], prev: !!prev, next: !!next};
}"""


async def _calendar_click(driver: PageHandle, day: date) -> bool:
    """Click `day` on the open calendar, stepping months towards it; False when no calendar is open."""
    target = day.isoformat()
    for _ in range(MAX_MONTH_STEPS):
        state = await driver.page.evaluate(_CALENDAR_JS, target)
        if not state.get("days"):
            return False
        if state.get("found"):
            await _click_tagged(driver)
            return True
        direction = "prev" if target < state["first"] else "next"
        if not state.get(direction):
            raise BrowserError("not_interactable", f"the calendar shows {state['first']}..{state['last']} and offers "
                                                   f"no way to {direction} month towards {target}")
        await driver.page.locator(f"[data-sgr-{direction}]").first.click()
    raise BrowserError("not_interactable", f"the calendar did not reach {target} in {MAX_MONTH_STEPS} months")


_HINT_JS = """el => { const ids = (el.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean);
  return [el.getAttribute('placeholder') || '', ...ids.map(i => (document.getElementById(i) || {}).textContent || '')]
    .join(' '); }"""


def in_hint_format(day: date, hint: str) -> str:
    """The date as the field's hint or placeholder writes dates (mm/dd/yyyy, dd/mm/yyyy, ...); ISO without one."""
    m = re.search(r"\b(mm|dd)([/.-])(dd|mm)\2(yyyy|yy)\b", hint, re.I)
    if not m:
        return day.isoformat()
    first, sep = m[1].lower(), m[2]
    a, b = (f"{day.month:02d}", f"{day.day:02d}") if first == "mm" else (f"{day.day:02d}", f"{day.month:02d}")
    return f"{a}{sep}{b}{sep}{day.year if len(m[4]) == 4 else str(day.year)[2:]}"


async def fill_date(driver: PageHandle, locator: Locator, days: list[date]) -> str | None:
    """Set a date field (one day, or a range's two days on one field): on the calendar it opens, else typed in its
    hint's format. Returns how it was set ('calendar' / the text typed), None when it is no date field to set so."""
    readonly = await locator.evaluate("el => !!el.readOnly")
    await locator.click()
    await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                 timeout_ms=driver.timeouts.settle_max_ms)
    if await _calendar_click(driver, days[0]):
        for day in days[1:]:
            if not await _calendar_click(driver, day):
                await locator.click()
                if not await _calendar_click(driver, day):
                    raise BrowserError("not_interactable", "the calendar closed before the range's end was picked")
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
        if await locator.evaluate("el => document.activeElement === el"):
            await driver.page.keyboard.press("Escape")
            await locator.evaluate("el => el.blur()")
        return "calendar"
    if readonly:
        raise BrowserError("not_interactable", "the field is readonly and opened no calendar to pick the date on")
    if len(days) != 1:
        return None
    typed = in_hint_format(days[0], await locator.evaluate(_HINT_JS))
    await locator.fill(typed)
    await locator.evaluate("el => el.blur()")
    return typed


# ------------------------------------------------------------------ the actions' entry points


async def date_field(driver: PageHandle, locator: Locator) -> bool:
    """A date field the observation showed that is no native date input (those take ISO text as they are)."""
    ref = await locator.get_attribute("data-sgr-ref")
    observed = next((c for c in driver.last_observation.controls if c.ref == ref), None) \
        if driver.last_observation and ref else None
    native = await locator.evaluate("el => ['date', 'datetime-local', 'month', 'week', 'time'].includes(el.type)")
    return observed is not None and observed.kind == "date" and not native


async def widget_fill(driver: PageHandle, locator: Locator, value: str, label: str) -> Outcome | None:
    """`fill` on a library widget: a date picker gets the date (or a one-field range) on its calendar or in its
    hint's format; a widget face (a combobox over a hidden native element) gets the value typed and picked."""
    days = list(split_range(value) or ()) or [d for d in [parse_date(value)] if d]
    if days and await date_field(driver, locator):
        how = await fill_date(driver, locator, days)
        if how is not None:
            extra = [(locator, label, days[1].isoformat())] if len(days) > 1 else []
            return Outcome(f"set {label!r} to {value!r}" + (" on its calendar" if how == "calendar" else ""),
                           control=locator, control_label=label, expected=days[0].isoformat(), extra_checks=extra)
    if await is_face(locator):
        await select_in_face(driver, locator, value, "add", label)
        return Outcome(f"picked {value!r} in {label!r}", control=locator, control_label=label, expected=value)
    return None


async def select_face(driver: PageHandle, locator: Locator, action: Select, label: str) -> Outcome:
    """A library widget (multi-select, combobox): add (default), replace, remove or clear through its own face."""
    expected = await select_in_face(driver, locator, action.option, action.mode, label)
    verb = {"add": "selected", "replace": "selected only", "remove": "removed", "clear": "cleared"}[action.mode]
    what = "" if action.mode == "clear" else f" {action.option!r} in"
    if expected is None:
        shown = await face_values(locator)
        gone = not shown if action.mode == "clear" else norm(action.option) not in {norm(v) for v in shown}
        if not gone:
            raise BrowserError("value_reverted", f"{label!r} still shows {', '.join(shown)!r} after settling")
        return Outcome(f"{verb}{what} {label!r}; it shows {', '.join(shown) or 'nothing'}", control_label=label)
    return Outcome(f"{verb}{what} {label!r}", control=locator, control_label=label, expected=expected)
