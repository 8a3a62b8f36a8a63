"""Drive one lab widget through the project's browser layer the way a model would, and judge it by the widget's
true state (the library's own API, read with `page.evaluate`), not by our read-back. Used by the lab's tests and
`benchmarks/bench_widgets.py`.

The natural first action follows what the observation shows: a choice control (select, custom select) gets
`select` once per value (a multi-select adds), a text field gets `fill`, a date `fill` with the ISO date, a
range `set_range` (the same control twice for a one-input range). After every action the true state is
compared with what the reply said: ok while the widget does not hold the value is a silent failure, an error
while it does is a false alarm. Then the form is submitted and the result table read whole: rows complete when
the rows read are as many as the page says it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from browser.render import render
from browser.types import ActionResult, Check, Fill, Goto, ReadTable, Select, SetRange, Submit, Target
from tasks.widget_lab.registry import LabPage, Widget

_CHOICE_KINDS = {"select", "custom_select", "radio_group"}


@dataclass
class WidgetRun:
    page: str
    widget: str
    library: str
    category: str
    shown: bool = False  # the control line showed the widget's own selection after it was set
    first_ok: bool = False  # the natural actions set it, each replying ok
    silent: int = 0  # replies ok while the widget did not hold the value
    false_alarms: int = 0  # error replies while the widget held the value
    rows_complete: bool | None = None
    replies: list[str] = field(default_factory=list)


def _same(got: Any, expect: Any) -> bool:
    if isinstance(expect, list):
        return isinstance(got, list) and sorted(map(str, got)) == sorted(map(str, expect))
    return str(got) == str(expect)


def _holds(got: Any, expect: Any, upto: int) -> bool:
    """The widget holds the first `upto` values (a multi-select after its upto-th select)."""
    if isinstance(expect, list) and upto < len(expect) and isinstance(got, list):
        return sorted(map(str, got)) == sorted(map(str, expect[:upto]))
    return _same(got, expect)


async def truth(browser: Any, widget: Widget) -> Any:
    return await browser.page.evaluate(f"() => {{ try {{ return {widget.truth}; }} catch (e) {{ return null; }} }}")


def _control(result_or_obs: Any, label: str) -> Any:
    obs = getattr(result_or_obs, "observation", None) or result_or_obs
    wanted = label.casefold()
    return next((c for c in obs.controls if c.label.casefold() == wanted), None) or next(
        (c for c in obs.controls if wanted in c.label.casefold()), None)


def natural_actions(widget: Widget, control: Any) -> list[Any]:
    if widget.kind == "check":  # tree nodes: each ticked by its own name, wherever it sits in the tree
        return [Check(target=Target(label=value)) for value in widget.values]
    if widget.kind == "read":  # a grid or list read whole: the natural first action is the read itself
        return [ReadTable(table=0, all_pages=True)]
    target = Target(label=widget.label)
    if widget.kind == "range":
        end = Target(label=widget.end_label or widget.label)
        return [SetRange(start_target=target, end_target=end, start=widget.values[0], end=widget.values[1])]
    if widget.kind in ("select_many", "pick") and control is not None and control.kind in _CHOICE_KINDS:
        return [Select(target=target, option=value) for value in widget.values]
    return [Fill(target=target, value=value) for value in widget.values]


async def drive(browser: Any, url: str, page: LabPage, widget: Widget) -> WidgetRun:
    run = WidgetRun(page.name, widget.label, page.library, page.category)
    opened = await browser.act(Goto(url=url))
    await browser.page.wait_for_function(f"() => {{ try {{ return ({widget.truth}) !== undefined; }}"
                                         " catch (e) { return false; } }", timeout=20_000)
    observation = await browser.observe() if opened.ok else opened.observation
    actions = natural_actions(widget, _control(observation, widget.label))
    all_ok, result = True, None
    for i, action in enumerate(actions, start=1):
        result: ActionResult = await browser.act(action)
        run.replies.append(f"{action.kind}: {'ok' if result.ok else result.error} {result.message[:160]}")
        if widget.kind == "read":  # what was read is judged against the library's own row count
            got = len(result.table.rows) if result.ok and result.table is not None else None
            run.rows_complete = got is not None and str(got) == str(widget.expect)
            missing_said = "missing" in result.message
            run.silent += int(result.ok and not run.rows_complete and not missing_said)
            run.false_alarms += int(not result.ok and await truth(browser, widget) == widget.expect)
            all_ok = bool(run.rows_complete)
            continue
        upto = len(widget.values) if widget.kind == "range" else i
        holds = _holds(await truth(browser, widget), widget.expect, upto)
        if result.ok and not holds:
            run.silent += 1
        if not result.ok and holds:
            run.false_alarms += 1
        all_ok = all_ok and result.ok and holds
    final = await truth(browser, widget)
    run.first_ok = all_ok and _same(final, widget.expect)
    obs = await browser.observe()
    text = render(obs).text
    if widget.kind in ("check", "read"):
        run.shown = _shown_tree_or_count(widget, obs, text)
        if widget.kind == "check":
            run.rows_complete = await _rows_complete(browser)
        return run
    labels = [widget.label.casefold()] + ([widget.end_label.casefold()] if widget.end_label else [])
    lines = [line for line in text.splitlines() if line.startswith("[") and any(f'"{lb}"' in line.casefold()
                                                                                for lb in labels)]
    run.shown = bool(lines) and all(any(_shown_value(v, line) for line in lines) for v in widget.values)
    run.rows_complete = await _rows_complete(browser)
    return run


def _shown_tree_or_count(widget: Widget, obs: Any, text: str) -> bool:
    """Tree nodes: each ticked node is a control shown checked. A grid or list read whole: the page as shown
    states its whole count (a grid's stated rows, a pager's total, or the list now holding them all)."""
    if widget.kind == "check":
        ticked = {c.label.casefold() for c in obs.controls if c.kind == "checkbox" and c.checked}
        return all(v.casefold() in ticked for v in widget.values)
    return re.search(rf"(?<!\d){re.escape(str(widget.expect))}(?!\d)", text) is not None


def _shown_value(value: str, line: str) -> bool:
    if value.casefold() in line.casefold():
        return True
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", value)  # a date may be shown in the widget's own format
    return bool(m) and all(part.lstrip("0") in re.findall(r"\d+", line) or part in line for part in m.groups())


async def _rows_complete(browser: Any) -> bool | None:
    submitted = await browser.act(Submit(target=Target(text="Search")))
    if not submitted.ok and submitted.error not in ("no_effect", "not_found"):  # not_found: a live filter
        return None
    said = await browser.page.evaluate("() => { const p = document.querySelector('.count'); "
                                       "return p ? parseInt(p.textContent, 10) : null; }")
    if said is None:
        return None
    if said == 0:
        return True
    read = await browser.act(ReadTable(table=0, all_pages=True))
    return bool(read.ok and read.table is not None and len(read.table.rows) == said)
