"""Clamps: a planned value the page cannot show (its options or its stated range end before it), recorded with
that evidence on the state value instead of a mismatch.
"""

from __future__ import annotations

import re

from graph.plan.judge import gates_for, named_controls
from graph.plan.targets import Window, values_of
from graph.plan.values import is_clamped, parse_date, values_match
from graph.prompting.page_fence import page_repr
from graph.state import Clamp, Plan, RetrievalState, StateValue

_STATED_RANGE = re.compile(r"\b(\d{4}(?:-\d{2}){0,2})\s*(?:–|—|\.\.|\bto\b|\s-\s)\s*(\d{4}(?:-\d{2}){0,2})\b"
                           r"|\b(\d{4})-(\d{4})\b")


def _point(value: str) -> tuple[int, int, int] | None:
    return parse_date(value.split(" [", 1)[0].strip())


def clamp_evidence(value: StateValue, target: str, page_lines: list[str], *, asked_for_target: bool = True) -> str | None:
    """Why `target` cannot be had on this page, in the page's own terms, when the control holds the nearest
    end of what the page allows: its options (years, dates) end before the target, or the page states a
    range ("Showing 2001–2010") that does. None when the target could be set (then a different value is
    a mismatch, not a clamp).

    A stated range counts only when the agent asked for the target and the page held its own end instead
    (`asked_for_target`): pages restate the filter in force ("Date received: 2018-07-02 – 2020-12-31"), and
    that restatement of a wrong or default window is no evidence of the site's limits."""
    want, held = parse_date(target.strip()), _point(value["value"])
    if want is None or held is None or want == held:
        return None
    options = value.get("options") or []
    dated = sorted((p, o) for o in options if (p := _point(o)) is not None)
    if dated and not any(values_match(o, target) for o in options):
        (low, low_label), (high, high_label) = dated[0], dated[-1]
        if (want > high and held == high) or (want < low and held == low):
            return f"{page_repr(value['label'])} offers {low_label}..{high_label}"
    for line in page_lines if asked_for_target else []:
        for match in _STATED_RANGE.finditer(line):
            ends = sorted(p for g in match.groups() if g and (p := parse_date(g)) is not None)
            if len(ends) == 2 and ((want > ends[1] and held == ends[1]) or (want < ends[0] and held == ends[0])):
                return f"the page states {page_repr(' '.join(line.split())[:100])}"
    return None


def requested_values(action: dict | None) -> list[str]:
    """The values this step's action asked a control or the URL for (what a clamp would have refused)."""
    if not action:
        return []
    asked = [action.get(field) for field in ("value", "option", "start", "end", "text")]
    asked += [v for values in (action.get("params") or {}).values() for v in (values if isinstance(values, list) else [values])]
    return [str(v) for v in asked if v not in (None, "")]


def mark_clamps(plan: Plan, state: RetrievalState, page_lines: list[str], requested: list[str]) -> None:
    """Record `clamped` on each value a plan gate (or a window's end) names that the page cannot set."""
    for gate in gates_for(plan, every_phase=True):
        wanted: list[tuple[str, str]] = []
        named = named_controls(gate, state)
        if isinstance(gate.target, Window):
            start, end = named
            if start != end:  # the From/To pair the gate names, as the judge reads it
                wanted += [(key, bound) for key, bound in ((start, gate.target.start), (end, gate.target.end))
                           if key and bound]
        elif named:
            wanted += [(named[0], value) for value in values_of(gate.target)[:1]]
        for key, target in wanted:
            value = state["values"][key]
            if values_match(value["value"], target) or is_clamped(value, target):
                continue
            asked = value.get("set_at_step") == state["step"] and any(values_match(r, target) for r in requested)
            if evidence := clamp_evidence(value, target, page_lines, asked_for_target=asked):
                value["clamped"] = Clamp(planned=target, evidence=evidence)
