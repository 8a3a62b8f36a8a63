"""Read a control back after the page settled, and judge whether it kept the value the agent asked for.

Sites refuse values silently (the option snaps back, a field resets); only a read-back after settling
tells a refused value from an accepted one, and a tolerant comparison keeps formatting from passing
for refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from browser.trees import STATE_JS
from browser.types import Observation, PageFacts, PdfPage, TableData

# What a control shows now: value, the visible label of the chosen option, and checked state.
READ_VALUE_JS = """
el => {
  const text = e => (e ? (e.innerText || e.textContent || '') : '').replace(/\\s+/g, ' ').trim();
  const labelOf = e => (e.labels && e.labels.length ? text(e.labels[0]) : '') || e.getAttribute('aria-label') || '';
  const tag = el.tagName.toLowerCase();
  const face = window.__sgrFaceShown ? window.__sgrFaceShown(el) : null;  // a library widget: what its face shows
  if (face !== null && face !== undefined) return {value: face, label: face, checked: null};
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
  if (el.getAttribute('role') === 'treeitem') {
    const state = (TREE_STATE)(el);
    return {value: String(state.checked), label: state.label, checked: state.checked};
  }
  const ariaChecked = el.getAttribute('aria-checked');
  if (ariaChecked !== null) return {value: ariaChecked, label: text(el), checked: ariaChecked === 'true'};
  const inner = el.querySelector('input:not([type=hidden])');
  if (inner) return {value: inner.value, label: inner.value, checked: null};
  return {value: el.getAttribute('value') || text(el), label: text(el), checked: null};
}
"""


@dataclass
class Outcome:
    """What an action handler did, and what `perform` must read back to check it."""

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
    facts: PageFacts | None = None
    error: str | None = None
    extra_checks: list[tuple[Locator, str, str]] = field(default_factory=list)  # (control, label, expected)


@dataclass
class Readback:
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


def norm(text: str | None) -> str:
    return re.sub(r"\s+", " ", (text or "")).strip().casefold()


async def read_value(locator: Locator | None) -> Readback | None:
    if locator is None:
        return None
    try:
        if not await locator.count():
            return None
        raw = await locator.evaluate(READ_VALUE_JS.replace("TREE_STATE", STATE_JS), timeout=2_000)
    except PlaywrightError:
        return None
    return Readback(str(raw.get("value") or ""), str(raw.get("label") or ""), raw.get("checked"),
                     bool(raw.get("radio")))


def value_matches(expected: str, shown: str) -> bool:
    """Did the control keep the requested value? Tolerates what sites do to a value without refusing it:
    case, spacing, separators ('1000' -> '1,000') and date re-ordering ('2020-01-05' -> '01/05/2020')."""
    wanted, got = norm(expected), norm(shown)
    if wanted == got or (wanted and wanted in got):
        return True
    if re.sub(r"[\W_]+", "", wanted) == re.sub(r"[\W_]+", "", got):
        return True
    digits_wanted, digits_got = re.findall(r"\d+", wanted), re.findall(r"\d+", got)
    return bool(digits_wanted) and not re.search(r"[^\W\d_]", wanted + got) and (
        sorted(d.lstrip("0") or "0" for d in digits_wanted) == sorted(d.lstrip("0") or "0" for d in digits_got))


def matches(expected: str, shown: Readback) -> bool:
    return value_matches(expected, shown.value) or value_matches(expected, shown.label)


async def verify(after: Observation, locator: Locator | None, label: str | None,
                 expected: str | None, expected_checked: bool | None) -> tuple[str | None, str | None]:
    """(readback, problem): the control as shown after settling, and why it differs from the request."""
    shown = await read_value(locator)
    if shown is None and label:  # the control was re-rendered: read it from the fresh observation
        control = next((c for c in after.controls if c.label == label), None)
        if control is not None:
            shown = Readback(control.value or "", control.value or "", control.checked)
    if shown is None:
        return None, None
    if expected_checked is not None and shown.checked is not None and shown.checked != expected_checked:
        return shown.shown(), (f"{label!r} is {'checked' if shown.checked else 'unchecked'} after settling; "
                               "the site reset it")
    if expected is not None and not matches(expected, shown):
        return shown.shown(), (f"{label!r} shows {shown.shown()!r} after settling, not {expected!r}; the site "
                               "refused or reset it (check dependent controls or pick an available value)")
    return shown.shown(), None
