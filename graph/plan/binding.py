"""Each plan gate bound ONCE to the page's own identifiers, so the judge only compares values.

The planner writes blind; the page names its controls. Which control a gate means is decided once and stored
in the graph state (`AgentState.bindings`, gate id -> `graph.state.Binding`), never re-decided by words at each
check:

- by an exact rule, when a page first shows a candidate (`rule_binding`): a control whose normalised key or label
  is the gate's name and, for a control with options, an option the typed target names; else the one choice
  control offering the typed value word for word, named by a word of the gate's name or set so by the agent; a
  search or filter gate typed as a value: else the one free-text control the agent set to exactly that value; a
  window: the From/To pair (or one control) named so;
- by the model (`model_binding`): the `gate` field of the setter it calls says which plan gate the action sets,
  and the control that action set becomes the gate's binding. A model-made binding replaces a rule-made one and
  keeps it as `replaced` (logged), never silently.

A gate still unbound at a read is said once, with the page's candidate controls (`unbound_notes`); the judge
grounds an unbound gate as before (`graph.plan.judge`), so nothing passes silently. The control's value when bound,
untouched by the agent, is the site's default (`Binding.default`): the read check says a kept default by it.
"""

from __future__ import annotations

from typing import Any

from graph.plan.targets import Value, Window, show, values_of
from graph.plan.values import (
    WINDOW_END_WORDS,
    WINDOW_KINDS,
    WINDOW_START_WORDS,
    at_site_default,
    gate_key,
    name_stems,
    norm_value,
    set_by_agent,
    state_values,
    values_match,
)
from graph.state import Binding, Gate, Plan, SearchField

CHOICE_KINDS = frozenset({"select", "custom_select", "radio_group"})
BOX_KINDS = frozenset({"checkbox", "toggle"})
MAX_CANDIDATES = 6


def gate_id(gate: Gate) -> str:
    """A gate's identity in the store: its kind, name and target (two gates of one control, `HUC = A` and
    `HUC = B`, are bound apart: each accepts its own option)."""
    return f"{gate.kind} {gate_key(gate.name)} = {show(gate.target)}"


def all_gates(plan: Plan) -> list[Gate]:
    return [*plan.gates, *(g for p in plan.phases for g in p.gates)]


def bound_plan(plan: dict[str, Any] | Plan | None, bindings: dict[str, Binding] | None) -> Plan | None:
    """The plan with each gate's stored binding attached (`Gate.binding`): what every judge call reads."""
    if plan is None or plan == {}:
        return None
    plan = plan.model_copy(deep=True) if isinstance(plan, Plan) else Plan.model_validate(plan)
    for gate in all_gates(plan):
        gate._binding = (bindings or {}).get(gate_id(gate))
    return plan


def plan_of(state: dict[str, Any]) -> Plan | None:
    """The state's plan, bound (`bound_plan`)."""
    return bound_plan(state.get("plan"), state.get("bindings"))


def _labels(label: str) -> set[str]:
    """A control's label keys: as shown, and its own part after the group's legend ('Subject: Category')."""
    return {gate_key(label), gate_key(label.rsplit(": ", 1)[-1])} - {""}


def _exact(values: dict[str, Any], name: str) -> str | None:
    wanted = gate_key(name)
    return next((k for k, v in values.items() if k == wanted or wanted in _labels(v.get("label") or "")), None)


def _binding(gate: Gate, values: dict[str, Any], keys: list[str], by: str, step: int) -> Binding:
    from graph.plan.judge import ground_target

    held = values[keys[0]]
    accepts = [] if gate.kind == "window" else ground_target(gate.target, held) or []
    binding = Binding(keys=keys, label=" / ".join(dict.fromkeys(values[k].get("label") or k for k in keys)),
                      accepts=accepts, by=by, step=step)  # type: ignore[typeddict-item]
    if all(at_site_default(values[k]) for k in keys):
        binding["default"] = " .. ".join(values[k].get("value") or "" for k in dict.fromkeys(keys))
    return binding


def rule_binding(gate: Gate, state: dict[str, Any], step: int) -> Binding | None:
    """The exact rule: a control whose key or label IS the gate's name (a control with options: one the target
    names, a box for checked/unchecked); a window: one control so named holding a date, or a From/To pair both
    holding dates and both named by a word of the gate's name. None: the page shows no such control (yet)."""
    from graph.plan.judge import ground_target, window_bounds

    values = state_values(state)
    if gate.kind == "window":
        if not isinstance(gate.target, Window):
            return None
        start, end = window_bounds(gate.name, values)
        if start is not None and start == end:  # one control holding the window, named so
            return _binding(gate, values, [start, end], "rule", step) if start == _exact(values, gate.name) else None
        words = name_stems(gate.name) - set(WINDOW_START_WORDS) - set(WINDOW_END_WORDS)
        named = all(k is not None and words & (name_stems(k) | name_stems(values[k].get("label") or ""))
                    for k in (start, end))
        return _binding(gate, values, [start, end], "rule", step) if named else None
    key = _exact(values, gate.name) or _typed_text(gate, values) or _offering(gate, values)
    if key is None:
        return None
    held = values[key]
    if (held.get("options") or held.get("kind") in BOX_KINDS) and ground_target(gate.target, held) is None:
        return None  # the control is named so, but no option of it is the target: not bound by rule
    binding = _binding(gate, values, [key], "rule", step)
    if gate.kind == "search" and key != _exact(values, gate.name) and (field := search_field(gate, values, key)):
        binding["field"] = field
    return binding


def _search_parts(gate: Gate, values: dict[str, Any], made: Binding, before: Binding | None) -> Binding | None:
    """A search gate's model-made binding, its two parts kept apart: the model's `gate` on the field selector (a
    choice control offering the gate's name) binds that selector as the gate's field beside its terms box, not in
    the box's place (a played run's search gate was judged on the field selector, and its terms named no value of it); on
    the box, the field is found as the rule finds it. None: nothing to bind yet (the field before any box)."""
    key = made["keys"][0]
    held = values.get(key) or {}
    option = _offered(held, gate.name)
    if option is not None:
        if before is None:
            return None
        return Binding(**{**before, "field": SearchField(key=key, label=held.get("label") or key, option=str(option))})
    if "field" not in made and (field := search_field(gate, values, key)):
        made["field"] = field
    return made


def search_field(gate: Gate, values: dict[str, Any], box: str) -> SearchField | None:
    """The one choice control, beside the gate's terms box, that offers the gate's name as an option: the field the
    terms are searched in (a plan's `<field> = x` on a form of a terms box and a field selector). None when no
    control, or more than one, offers it."""
    found = [(k, v, option) for k, v in values.items() if k != box and (option := _offered(v, gate.name)) is not None]
    if len(found) != 1:
        return None
    key, held, option = found[0]
    return SearchField(key=key, label=held.get("label") or key, option=option)


def _offered(held: dict[str, Any], text: str) -> str | None:
    """The option of a choice control that is `text` word for word (normalised), as the page shows it; else None."""
    if held.get("kind") not in CHOICE_KINDS:
        return None
    wanted = norm_value(text)
    return next((str(o) for o in held.get("options") or [] if norm_value(str(o)) == wanted), None)


def _typed_text(gate: Gate, values: dict[str, Any]) -> str | None:
    """The one free-text control (no options, not a box) the agent set to exactly a search or filter gate's
    value: its value is the gate's own words, whatever the site calls the box (a plan's `Name = x` typed into a
    box the site labels otherwise). None when no such control, or more than one, holds it."""
    if gate.kind not in ("search", "filter") or not isinstance(gate.target, Value):
        return None
    wanted = norm_value(gate.target.value)
    typed = [k for k, v in values.items() if not v.get("options") and v.get("kind") not in BOX_KINDS | CHOICE_KINDS
             and set_by_agent(v) and norm_value(v.get("value")) == wanted]
    return typed[0] if len(typed) == 1 else None


def _offering(gate: Gate, values: dict[str, Any]) -> str | None:
    """The one choice control offering the gate's value as an option, word for word, when something beyond the
    value says it is the gate's: its label shares a word with the gate's name (a played plan's '<word> type' for a
    group the page labels '<word> basis'), or the agent set it to that value. A value alone is no evidence: a plan's
    view of a section on one page may be an option of an unrelated filter on another, and binding it would judge
    that filter's default as a kept one (a false refusal). None when no control, or more than one, offers it (a
    year offered by a From and a To select binds neither); the unbound note still names it as a candidate."""
    if gate.kind in ("window", "search", "sort") or not isinstance(gate.target, Value):
        return None
    found = [k for k, v in values.items() if _offered(v, gate.target.value) is not None]
    if len(found) != 1:
        return None
    held = values[found[0]]
    named = name_stems(gate.name) & name_stems(held.get("label") or found[0])
    chosen = set_by_agent(held) and values_match(str(held.get("value") or ""), gate.target.value)
    return found[0] if named or chosen else None


def _set_keys(action: dict[str, Any] | None, set_controls: list[str], values: dict[str, Any]) -> list[str]:
    """The state keys of the controls an action set (the browser's `set_controls`, or a URL's parameters)."""
    names = [*set_controls, *((action or {}).get("params") or {})]
    keys: list[str] = []
    for name in names:
        wanted = gate_key(name)
        key = next((k for k, v in values.items() if k == wanted or wanted in _labels(v.get("label") or "")), None)
        if key is not None and key not in keys:
            keys.append(key)
    return keys


def _window_end(values: dict[str, Any], key: str) -> tuple[str, frozenset[str]] | None:
    """('start' or 'end', the rest of its name) of a control named as one end of a window; None: neither."""
    words = name_stems(key) | name_stems(values[key].get("label") or "")
    side = "start" if words & set(WINDOW_START_WORDS) else "end" if words & set(WINDOW_END_WORDS) else None
    rest = name_stems(values[key].get("label") or key) - set(WINDOW_START_WORDS) - set(WINDOW_END_WORDS)
    return (side, frozenset(rest)) if side else None


def window_pair(values: dict[str, Any], key: str) -> list[str]:
    """A window's two ends, from the one control a setter set: it and the one other control named alike but for
    the From/To word ('From week' and 'To week'), start first. A control with no such partner holds the window
    alone (a range control): [key, key]. A model's `gate` on one end binds the pair: bound to that end alone, the
    other end's value would be judged as the window ('2015..2015' narrower, a played run's false flag)."""
    end = _window_end(values, key)
    if end is None:
        return [key, key]
    partners = [k for k in values if k != key and (other := _window_end(values, k)) is not None
                and other[0] != end[0] and other[1] == end[1]]
    if len(partners) != 1:
        return [key, key]
    return [key, partners[0]] if end[0] == "start" else [partners[0], key]


def model_binding(gate: Gate, state: dict[str, Any], action: dict[str, Any] | None, set_controls: list[str],
                  step: int) -> Binding | None:
    """The control the model's setter set, as the binding of the gate its `gate` field names (a window: the two
    fields a range setter set, or the pair one end belongs to)."""
    values = state_values(state)
    keys = _set_keys(action, set_controls, values)
    if not keys:
        return None
    if gate.kind == "window":
        keys = keys[:2] if len(keys) > 1 else window_pair(values, keys[0])
    else:
        keys = keys[:1]
    return _binding(gate, values, keys, "model", step)


def gates_named(plan: Plan | None, name: str) -> list[Gate]:
    """The plan's gates a setter's `gate` field names (its name, normalised)."""
    return [g for g in (all_gates(plan) if plan else []) if gate_key(g.name) == gate_key(name)]


def bind(plan: Plan | None, bindings: dict[str, Binding] | None, state: dict[str, Any], step: int, *,
         action: dict[str, Any] | None = None, set_controls: list[str] | None = None,
         model_gate: str | None = None) -> dict[str, Binding]:
    """The bindings after this step: the model's (its setter's `gate` field) replacing what was there (the
    rule-made one kept as `replaced`), then the rule's for every gate still unbound that this page answers.
    Only new or changed entries are returned."""
    if plan is None:
        return {}
    old = dict(bindings or {})
    new: dict[str, Binding] = {}
    for gate in gates_named(plan, model_gate) if model_gate else []:
        made = model_binding(gate, state, action, set_controls or [], step)
        if made is None:
            continue
        before = old.get(gate_id(gate))
        if gate.kind == "search":
            made = _search_parts(gate, state_values(state), made, before)
            if made is None or made == before:
                continue
        if before is not None and before["keys"] == made["keys"]:
            continue
        if before is not None:
            made["replaced"] = {k: v for k, v in before.items() if k != "replaced"}
            made.pop("default", None) if "default" not in before else made.update(default=before["default"])
        new[gate_id(gate)] = made
    for gate in all_gates(plan):
        if gate_id(gate) in old or gate_id(gate) in new:
            continue
        made = rule_binding(gate, state, step)
        if made is not None:
            new[gate_id(gate)] = made
    return new


def kept_default(gate: Gate, value: str, history: list[dict[str, Any]], state: dict[str, Any]) -> bool | None:
    """A bound gate's control still holding the site default it held when bound, never set by the agent (on
    this page or any visited): a kept default. None: the gate is unbound (the caller says by the state)."""
    binding = gate.binding
    if binding is None:
        return None
    if "default" not in binding:
        return False
    keys = binding["keys"]
    values = state_values(state)
    if any(set_by_agent(values.get(k)) for k in keys):
        return False
    if any(set_by_agent(h["values"].get(k)) for h in history for k in keys):
        return False
    return binding["default"] == value or binding["default"] == " .. ".join(
        (values.get(k) or {}).get("value") or "" for k in dict.fromkeys(keys))


def _fits(gate: Gate, kind: str | None) -> bool:
    if gate.kind == "window":
        return kind in WINDOW_KINDS
    if gate.kind == "search":
        return kind in ("text", "search")
    return kind in CHOICE_KINDS or kind in BOX_KINDS


def unbound_notes(plan: Plan | None, gates: list[Gate], observation: dict[str, Any] | None,
                  said: set[str], state: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(gate id, note) for each required gate bound to no control at a read and not said before: once, a note,
    never a refusal, with the page's candidate controls (label and ref) the model may bind it to (`gate` on the
    setter it calls). Not for a gate the judge grounds on this page's state (`state`): the turn's PLAN ON THIS PAGE
    already names its control (a played run read "bound to no control" beside "held by" an empty From/To pair)."""
    from graph.plan.judge import judge

    if plan is None:
        return []
    gates = [g for g in gates if state is None or not judge(g, state).grounded]
    controls = [c for c in (observation or {}).get("controls") or [] if c.get("label") and not c.get("disabled")]
    notes: list[tuple[str, str]] = []
    for gate in gates:
        if not gate.required or gate.binding is not None or gate_id(gate) in said or gate_id(gate) in dict(notes):
            continue
        words = name_stems(gate.name)
        fitting = [c for c in controls if _fits(gate, c.get("kind"))]
        wanted = {norm_value(v) for v in values_of(gate.target)} - {""}
        named = [c for c in fitting if words & name_stems(c["label"])
                 or wanted & {norm_value(t) for o in c.get("options") or [] for t in _option_texts(o)}]
        shown = ", ".join(f"{c['label']!r} [{c['ref']}]" for c in named[:MAX_CANDIDATES])
        column = _column_named(gate, observation)
        note = f"note: gate {gate.name} = {show(gate.target)} is bound to no control"
        if column is not None:  # the plan made a column, or a choice of one, a gate: said as what the page shows
            use = "filter rows by it (extract_rows where, or the derive)" if column[2] else "take it in extract_rows"
            note += f"; {column[1]!r} is a column of table {column[0]} here: {use} (revise_plan without this gate)"
        elif shown:
            note += f"; candidates: {shown} (gate={gate.name!r} on the setter binds it)"
        else:
            note += ": no control on this page is named so"
        notes.append((gate_id(gate), note))
    return notes


def _option_texts(option: Any) -> list[str]:
    """An observed option's label and value (`browser.types.Option`), or a plain option's text."""
    return [str(option.get("label") or ""), str(option.get("value") or "")] if isinstance(option, dict) else [str(option)]


def _column_named(gate: Gate, observation: dict[str, Any] | None) -> tuple[int, str, bool] | None:
    """(table index, header, named by the gate's name) of the first table header that is the gate's target value
    (a column to read) or its name (a column whose values filter rows): not a control to set."""
    wanted = {norm_value(v) for v in values_of(gate.target)} - {""}
    for index, table in enumerate((observation or {}).get("tables") or []):
        for header in table.get("headers") or []:
            if norm_value(header) in wanted or norm_value(header) == norm_value(gate.name):
                return index, header, norm_value(header) == norm_value(gate.name)
    return None
