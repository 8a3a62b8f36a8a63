"""Deterministic state tracking: read the retrieval state off an observation and flag drift.

Drift is the paper's largest failure class (37%): the agent set a gate, then a reload, a "Back to
results" link or a dependent control silently reset it, and the agent read rows in the wrong state.
The rules here are plain functions of (previous states, observation, action) so they can be tested
without a browser or an LLM.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from browser.types import SETTER_KINDS, ActionResult, Observation
from graph.judge import Verdict, gates_for, verdicts
from graph.state import Clamp, DriftFlag, Gate, Phase, Plan, RetrievalState, StateValue
from graph.values import (
    WINDOW_END_WORDS,
    WINDOW_START_WORDS,
    find_gate_value,
    gate_key,
    is_clamped,
    key_matches,
    norm_value,
    parse_date,
    split_window,
    values_match,
)

PAGE_PARAMS = frozenset({"page", "p", "pg", "pageno", "page_no", "page_num", "pagenumber", "offset", "cursor", "start",
                         "startindex", "start_index"})
MAX_OPTIONS_KEPT = 200
STATE_CONTROL_KINDS = frozenset(
    {"select", "custom_select", "radio_group", "checkbox", "toggle", "text", "search", "date", "number",
     "range", "page_size", "tab"}
)
PLAN_RULES = ("gate_mismatch", "window_narrower", "window_wider")
NAVIGATIONS = frozenset({"goto", "page_facts"})  # opening a URL on purpose (read_facts with url is one per page)



def result_set_key(url: str) -> str:
    """Which result set a URL shows: its path and non-page query parameters, order-independent."""
    parts = urlsplit(url)
    params = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=False) if k.casefold() not in PAGE_PARAMS)
    return parts.path + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "")


# ---------------------------------------------------------------- reading the state


def _control_value(control) -> str:
    if control.kind in ("checkbox", "toggle"):
        return "on" if control.checked else "off"
    if control.kind == "tab":
        return control.label if control.checked else ""
    value = control.value or ""
    for option in control.options:
        if option.selected or (value and option.value == value):
            # both forms, so a plan target given as label ('Environmental ...') or code ('epa') matches
            same = norm_value(option.label) == norm_value(option.value) or not option.value
            return option.label if same else f"{option.label} [{option.value}]"
    return value


def read_values(obs: Observation, result: ActionResult | None = None) -> dict[str, tuple[str, str, list]]:
    """key -> (value, label, evidence) from URL parameters, control values, chips and read-back."""
    found: dict[str, tuple[str, str, list]] = {}
    for param, values in obs.query_state.items():
        if param.casefold() in PAGE_PARAMS:
            continue
        found[gate_key(param)] = (",".join(v for v in values if v), param, ["url"])
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS or control.disabled:
            continue
        value = _control_value(control)
        keys = [gate_key(k) for k in (control.name, control.label) if k]
        key = next((k for k in keys if k in found), keys[0] if keys else None)
        if not key or (control.kind == "tab" and not value):
            continue
        if key in found:
            old_value, _, evidence = found[key]
            found[key] = (value or old_value, control.label, [*evidence, "control"])
        else:
            found[key] = (value, control.label, ["control"])
    chips = [norm_value(c) for c in obs.chips]
    for key, (value, label, evidence) in found.items():
        shown = {norm_value(value), norm_value(value.split(" [", 1)[0])} - {""}  # 'EPA [epa]' shows as 'EPA'
        if any(s in chip for s in shown for chip in chips):
            evidence.append("chip")
        if result is not None and result.readback is not None and values_match(result.readback, value):
            target = (result.action or {}).get("target") or {}
            if any(gate_key(str(t)) in (key, gate_key(label)) for t in target.values() if t):
                evidence.append("readback")
    return found


def applied_values(obs: Observation) -> dict[str, str]:
    """key -> the URL's value, where a control of the same key holds another value: the form was changed and not
    applied, so the results shown are the URL's state, not the control's (boxes are left out: a ticked box's
    URL value is the site's own word, '1', 'true', 'on')."""
    url = {gate_key(p): ",".join(v for v in vs if v) for p, vs in obs.query_state.items()
           if p.casefold() not in PAGE_PARAMS}
    applied: dict[str, str] = {}
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS or control.kind in ("checkbox", "toggle", "tab") or control.disabled:
            continue
        key = next((k for k in (gate_key(n) for n in (control.name, control.label) if n) if k in url), None)
        if key is None or not url[key]:
            continue
        value = _control_value(control)
        if value and not _agree(value, url[key]):
            applied[key] = url[key]
    return applied


def _agree(value: str, url_value: str) -> bool:
    if values_match(value, url_value):
        return True
    a, b = parse_date(value.split(" [", 1)[0].strip()), parse_date(url_value.strip())
    return a is not None and a == b


def _action_targets(action: dict | None) -> set[str]:
    """Gate keys an action deliberately addresses (so their change is intended, not drift)."""
    if not action:
        return set()
    keys: set[str] = set()
    for field in ("target", "start_target", "end_target"):
        target = action.get(field) or {}
        keys.update(gate_key(str(v)) for k, v in target.items() if v and k in ("label", "text", "ref", "selector"))
    keys.update(gate_key(k) for k in (action.get("params") or {}))
    keys.update(gate_key(k) for k in action.get("remove") or [])
    return keys


# ---------------------------------------------------------------- tracking + drift rules


def track(
    *,
    obs: Observation,
    step: int,
    action: dict | None,
    result: ActionResult | None,
    previous: RetrievalState | None,
    history: list[RetrievalState],
    active_flags: list[DriftFlag],
    plan: Plan | None,
    phase: Phase | None = None,
) -> tuple[RetrievalState, list[DriftFlag]]:
    """The new retrieval state and the drift flags active after this step. With a phased plan, `phase` is the
    one being read: a gate only other phases name may change (the plan says so), so it is not drift."""
    kind = (action or {}).get("kind")
    path = urlsplit(obs.url).path
    same_path_before = previous if previous and previous["path"] == path else _last_on_path(history, path)
    targets = _action_targets(action)

    values: dict[str, StateValue] = {}
    shapes = _control_shapes(obs)
    for key, (value, label, evidence) in read_values(obs, result).items():
        before = same_path_before["values"].get(key) if same_path_before else None
        if before is not None and before["value"] == value:
            values[key] = StateValue(value=value, label=label, evidence=evidence, set_at_step=before["set_at_step"],
                                     set_by=before["set_by"])
            if "clamped" in before:  # the page's limit still holds while the value is the one it clamped to
                values[key]["clamped"] = before["clamped"]
        elif value and ("url" in evidence or key_matches(key, label, targets)):
            # set by the agent: a control it addressed, or URL state chosen by the navigation it triggered;
            # a control that changed as a side effect (a reset to its default) is not a gate the agent set
            values[key] = StateValue(value=value, label=label, evidence=evidence, set_at_step=step, set_by=kind)
        else:
            values[key] = StateValue(value=value, label=label, evidence=evidence, set_at_step=None, set_by=None)
        if key in shapes:
            values[key]["kind"], values[key]["options"] = shapes[key]
    for key, url_value in applied_values(obs).items():
        if key in values:
            values[key]["applied"] = url_value

    pagination = obs.pagination
    state = RetrievalState(
        url=obs.url, path=path, values=values,
        page=pagination.page if pagination else None,
        pages=pagination.pages if pagination else None,
        result_count=obs.result_count if obs.result_count is not None else (pagination.total if pagination else None),
        step=step,
    )

    if plan is not None:
        _mark_clamps(plan, state, obs.outline, requested=_requested_values(action))
    flags = _carry_flags(active_flags, state, kind, targets)
    if same_path_before is not None and kind not in NAVIGATIONS:
        flags += _lost_gates(same_path_before, state, kind, targets, moved=previous is None or previous["path"] != path,
                             step=step)
    flags = _dedupe(flags)
    if plan is not None and plan.phases:
        flags = [f for f in flags if _in_phase(f, phase, plan)]
    if plan is not None:
        held = {f["gate"] for f in active_flags if f["rule"] in PLAN_RULES}
        flags += _plan_flags(plan, state, step, held)
    return state, flags


def _in_phase(flag: DriftFlag, phase: Phase | None, plan: Plan) -> bool:
    gates = gates_for(plan, phase)
    state = {flag["gate"]: {"label": flag["gate"], "value": flag["before"] or ""}}  # keyed as before
    return any(find_gate_value(state, g.name) or gate_key(g.name) == gate_key(flag["label"]) for g in gates)


def _last_on_path(history: list[RetrievalState], path: str) -> RetrievalState | None:
    return next((s for s in reversed(history) if s["path"] == path), None)


def _carry_flags(flags: list[DriftFlag], state: RetrievalState, kind: str | None, targets: set[str]) -> list[DriftFlag]:
    """A loss flag stays active until the value is restored, deliberately changed, or a goto resets the path."""
    kept: list[DriftFlag] = []
    for flag in flags:
        if flag["rule"] in PLAN_RULES:
            continue  # recomputed every step
        if flag.get("path") != state["path"]:
            kept.append(flag)
            continue
        now = state["values"].get(flag["gate"])
        restored = now is not None and values_match(now["value"], flag["before"])
        deliberate = kind in NAVIGATIONS or (now is not None and now["set_at_step"] == state["step"]
                                        and key_matches(flag["gate"], now["label"], targets))
        if not (restored or deliberate):
            kept.append(flag)
    return kept


def _lost_gates(before: RetrievalState, after: RetrievalState, kind: str | None, targets: set[str], *,
                moved: bool, step: int) -> list[DriftFlag]:
    flags: list[DriftFlag] = []
    for key, old in before["values"].items():
        if old["set_at_step"] is None or not old["value"]:
            continue
        new = after["values"].get(key)
        if new is not None and new["value"] == old["value"]:
            continue
        if key_matches(key, old["label"], targets):
            continue  # the agent changed this gate on purpose
        new_value = new["value"] if new else None
        if moved or kind == "back" or (kind in ("click", "press") and before["url"] != after["url"]):
            rule, why = "navigation_reset", f"navigating ('{kind}') to {after['path']} reset it"
        elif kind in SETTER_KINDS:
            rule, why = "cascade_reset", f"changing another control ('{kind}') reset it"
        else:
            rule, why = "gate_lost", f"'{kind}' reset it"
        flags.append(DriftFlag(
            rule=rule, gate=key, label=old["label"] or key, before=old["value"], after=new_value, step=step,
            path=after["path"],
            message=f"{old['label'] or key} was {old['value']!r} (set at step {old['set_at_step']}), "
                    f"now {new_value!r}: {why}; set it again before reading rows",
        ))
    return flags


def _dedupe(flags: list[DriftFlag]) -> list[DriftFlag]:
    seen: dict[tuple[str, str | None], DriftFlag] = {}
    for flag in flags:
        seen.setdefault((flag["gate"], flag.get("path")), flag)
    return list(seen.values())


def _control_shapes(obs: Observation) -> dict[str, tuple[str, list[str]]]:
    """gate key -> (control kind, option labels): what tells two controls with look-alike labels apart."""
    shapes: dict[str, tuple[str, list[str]]] = {}
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS:
            continue
        options = [o.label for o in control.options][:MAX_OPTIONS_KEPT]
        for name in (control.name, control.label):
            if name:
                shapes.setdefault(gate_key(name), (control.kind, options))
    return shapes


def ambiguous_gates(plan: Plan | None, state: RetrievalState | None) -> list[str]:
    """Plan gates that name several controls, for the actor to disambiguate (revise_plan with a full label); a
    window names a From/To pair, never "several controls"."""
    if plan is None or not state:
        return []
    return [f"{v.gate.name} matches {len(v.candidates)} controls {list(v.candidates)}"
            for v in verdicts(plan_gates(plan), state) if v.candidates]


def plan_gates(plan: Plan) -> list[Gate]:
    """The plan's gates and every phase's (a chained task reads under several states)."""
    return gates_for(plan, every_phase=True)




def _plan_flags(plan: Plan, state: RetrievalState, step: int, held: set[str] | frozenset[str] = frozenset()
                ) -> list[DriftFlag]:
    """The tracker's policy over the judge's verdicts, between reads: a planned gate whose control the agent set
    to another value, or one flagged when rows were read (`held`: the read check judges a kept default too) and
    still wrong. Any phase's value is accepted (a phase not yet read may need it), so a control (or a From/To
    pair) is flagged only when every gate naming it is a mismatch; unresolved and clamped verdicts never flag."""
    groups: dict[str, list[Verdict]] = {}
    for verdict in verdicts(plan_gates(plan), state):
        if verdict.grounded:
            groups.setdefault(str(verdict.bounds) if verdict.gate.kind == "window" else verdict.key, []).append(verdict)
    flags: list[DriftFlag] = []
    for group in groups.values():
        if any(v.status != "mismatch" for v in group):
            continue
        verdict = group[0]
        flag = plan_flag(verdict, state, step)
        if verdict.wider and flag["gate"] not in held:
            continue  # a window being set (From before To); a read made in it is flagged by the read check
        if verdict.set_by_agent or flag["gate"] in held:
            flags.append(flag)
    return flags


def plan_flag(verdict: Verdict, state: RetrievalState, step: int) -> DriftFlag:
    """The drift flag a mismatch verdict raises (the tracker's wording; the read check adds what to do)."""
    flag = _plan_flag(verdict, state, step)
    if verdict.evidence:  # the form was changed and not applied
        flag["message"] += f" ({verdict.evidence}; apply the form)"
    return flag


def _plan_flag(verdict: Verdict, state: RetrievalState, step: int) -> DriftFlag:
    gate = verdict.gate
    if gate.kind == "window" and verdict.wider:
        return DriftFlag(rule="window_wider", gate=gate_key(gate.name), label=gate.name, before=gate.target,
                         after=verdict.value, step=step, path=state["path"],
                         message=f"the time window shown ({verdict.value}) is wider than the plan's {gate.target}: "
                                 "rows outside the plan's window are read as in it; set both bounds")
    if gate.kind == "window":
        return DriftFlag(rule="window_narrower", gate=gate_key(gate.name), label=gate.name, before=gate.target,
                         after=verdict.value, step=step, path=state["path"],
                         message=f"the time window shown ({verdict.value}) is narrower than the plan's {gate.target}; "
                                 "widen it")
    return DriftFlag(rule="gate_mismatch", gate=verdict.key or gate_key(gate.name), label=gate.name,
                     before=gate.target, after=verdict.value, step=step, path=state["path"],
                     message=f"{gate.name} is {verdict.value!r} but the plan needs {verdict.needs_text()}")


def refresh_flags(plan: Plan | None, state: RetrievalState | None, flags: list[DriftFlag], step: int,
                  phase: Phase | None = None) -> list[DriftFlag]:
    """The active flags judged again on the same state under the plan as it is now (after `revise_plan` or
    `discard_rows`: no page action, so the tracker did not run): loss flags stay (a reset value is still
    lost), the plan's flags are recomputed, a flag raised at a read kept only while still a mismatch."""
    if plan is None or not state:
        return [f for f in flags if f["rule"] not in PLAN_RULES]
    kept = [f for f in flags if f["rule"] not in PLAN_RULES and (not plan.phases or _in_phase(f, phase, plan))]
    held = {f["gate"] for f in flags if f["rule"] in PLAN_RULES}
    return _dedupe([*kept, *_plan_flags(plan, state, step, held)])


# ---------------------------------------------------------------- clamps: a planned value the page cannot show

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
            return f"{value['label']!r} offers {low_label}..{high_label}"
    for line in page_lines if asked_for_target else []:
        for match in _STATED_RANGE.finditer(line):
            ends = sorted(p for g in match.groups() if g and (p := parse_date(g)) is not None)
            if len(ends) == 2 and ((want > ends[1] and held == ends[1]) or (want < ends[0] and held == ends[0])):
                return f"the page states {' '.join(line.split())[:100]!r}"
    return None


def _requested_values(action: dict | None) -> list[str]:
    """The values this step's action asked a control or the URL for (what a clamp would have refused)."""
    if not action:
        return []
    asked = [action.get(field) for field in ("value", "option", "start", "end", "text")]
    asked += [v for values in (action.get("params") or {}).values() for v in (values if isinstance(values, list) else [values])]
    return [str(v) for v in asked if v not in (None, "")]


def _mark_clamps(plan: Plan, state: RetrievalState, page_lines: list[str], requested: list[str]) -> None:
    """Record `clamped` on each value a plan gate (or a window's end) names that the page cannot set."""
    for gate in plan_gates(plan):
        wanted: list[tuple[str, str]] = []
        if gate.kind == "window":
            bounds = split_window(gate.target)
            if bounds:
                for key in state["values"]:
                    words = set(key.split("_"))
                    if words & set(WINDOW_START_WORDS):
                        wanted.append((key, bounds[0]))
                    elif words & set(WINDOW_END_WORDS):
                        wanted.append((key, bounds[1]))
        elif found := find_gate_value(state, gate.name, gate):
            wanted.append((found[0], gate.target))
        for key, target in wanted:
            value = state["values"][key]
            if values_match(value["value"], target):
                continue
            if is_clamped(value, target):
                continue
            asked = value.get("set_at_step") == state["step"] and any(values_match(r, target) for r in requested)
            if evidence := clamp_evidence(value, target, page_lines, asked_for_target=asked):
                value["clamped"] = Clamp(planned=target, evidence=evidence)
