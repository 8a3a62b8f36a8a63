"""One judge of "is the planned gate held?": the gates in force (`gates_for`) and one verdict per gate on the
values a state holds (`judge`). The state tracker, the read check and the verifier are policies over these
verdicts (docs/graph_checks.md, "The gate judge").

The planner writes blind, from the task alone, but its targets are typed (`graph.plan.targets`): a value, any of
several values, checked/unchecked, a date window with open ends, or unknown. Nothing here interprets words: a
gate is *grounded* on the page (its control by label words or URL parameter, `graph.plan.values.gate_candidates`),
a value target on that control's options (the same label or code, or the one option holding all its words), and
the judge compares values. Only a target grounded to a definite value that the control does not hold is a
**mismatch**; a window narrower or wider than the plan's is a mismatch on either side. A target no option answers,
a gate naming no control (or several), or an `unknown` target is **unresolved**: said, never passed silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from graph.plan.targets import AnyOf, Checked, Unknown, Window, show, values_of
from graph.plan.values import (
    WINDOW_END_WORDS,
    WINDOW_KINDS,
    WINDOW_START_WORDS,
    at_site_default,
    find_gate_value,
    gate_candidates,
    gate_key,
    is_clamped,
    key_matches,
    name_stems,
    norm_value,
    parse_date,
    set_by_agent,
    state_values,
    values_match,
)
from graph.prompting.page_fence import page_repr
from graph.state import Gate, Phase, Plan

Status = Literal["held", "mismatch", "unresolved", "clamped"]
BOX_KINDS = frozenset({"checkbox", "toggle"})
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y",
                 "%d.%m.%Y", "%B %Y", "%b %Y", "%Y-%m")


# ---------------------------------------------------------------- the gates in force

# The gates a row's state snapshot is judged on: windows and searches are judged at the read (a window on the page
# read, both bounds in view) and reach later checks as the rows' drift flags.
STATE_GATES = ("source", "scope", "filter", "view", "sort")


def gates_for(plan: Plan | None, where: str | Phase | None = None, *, every_phase: bool = False,
              required: bool = False) -> list[Gate]:
    """The plan's gates and its phase's: `where` is the table a read goes into (its phase) or the phase itself;
    `every_phase` adds every phase's gates (the tracker, between reads, accepts any phase's value)."""
    if plan is None:
        return []
    phase = plan.phase_for(where) if isinstance(where, str) else where
    phases = list(plan.phases) if every_phase else [phase] if phase is not None else []
    gates = [*plan.gates, *(g for p in phases for g in p.gates)]
    return [g for g in gates if g.required] if required else gates


def gate_sets(plan: Plan | None, table: str, *, required: bool = False) -> list[tuple[Phase | None, list[Gate]]]:
    """The gates a read into `table` may be held under: one set per phase writing it (the plan's gates and that
    phase's), or the plan's gates alone when no phase names it. Several phases may share one table (one per
    value of a control, all read into one table): a read is held when it holds the gates of one of them."""
    if plan is None:
        return []
    return ([(p, gates_for(plan, p, required=required)) for p in plan.phases if p.into == table]
            or [(None, gates_for(plan, None, required=required))])


def phase_names(plan: Plan, phases: list[Phase | None]) -> str:
    """'phases 2, 3, 4' as the turn numbers them."""
    numbers = [str(plan.phases.index(p) + 1) for p in phases if p is not None and p in plan.phases]
    return f"phase{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}"


def current_phase(plan: Plan | None, tables: dict[str, Any], history: list[dict[str, Any]] | None = None
                  ) -> Phase | None:
    """The first phase of the plan not read yet (None when unphased or all are read): its table has no rows, or,
    for a table several phases write, none of its rows was read under this phase's gates (`held_under`: phase
    `HUC = A` read leaves `HUC = B`, into the same table, still to read), judged as the visited pages
    (`history`) showed the controls."""
    if plan is None:
        return None
    shapes: dict[str, dict[str, Any]] | None = None  # the controls as seen: only a shared table needs them
    for phase in plan.phases:
        rows = (tables.get(phase.into) or {}).get("rows") or []
        options = gate_sets(plan, phase.into)
        states = list({json.dumps(r["provenance"]["state"], sort_keys=True): r["provenance"]["state"] for r in rows
                       if r["provenance"]["state"]}.values())  # each snapshot once: a table may hold thousands
        if not rows:
            return phase
        if len(options) > 1 and states:
            shapes = site_shapes(history or []) if shapes is None else shapes
            if not any(options[held_under(options, state, shapes)][0] is phase for state in states):
                return phase
    return None


def held_under(options: list[tuple[Phase | None, list[Gate]]], snapshot: dict[str, Any],
               shapes: dict[str, dict[str, Any]]) -> int:
    """Which of the gate sets of the phases writing one table (`gate_sets`) a row's state snapshot holds; else
    the one it misses least."""
    state = with_shapes(snapshot, shapes)
    misses = [sum(v.status == "mismatch" for v in settle([judge(g, state) for g in gates if g.kind in STATE_GATES]))
              for _, gates in options]
    return misses.index(min(misses))


# ---------------------------------------------------------------- grounding a target on a control


def parse_any_date(value: str, *, end: bool = False) -> tuple[int, int, int] | None:
    """A date or year in any common spelling ('2021', '2021-03-04', '4 Mar 2021', 'March 4, 2021', '2021/03/04')."""
    text = value.split(" [", 1)[0].strip()
    if (iso := parse_date(text, end=end)) is not None:
        return iso
    for fmt in _DATE_FORMATS:
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            continue
        day = parsed.day if "%d" in fmt else (31 if end else 1)
        return parsed.year, parsed.month, day
    return None


def _words(text: str) -> set[str]:
    return set(norm_value(text).replace(".", " ").replace(":", " ").replace("-", " ").split())


def _option_for(target: str, options: list[str]) -> str | None:
    """The option a value names: the same value (label or code), else the only option whose label holds all
    the value's words ('Diabetes mellitus' -> 'Diabetes mellitus (E10-E14)')."""
    same = [o for o in options if values_match(o, target)]
    if same:
        return same[0]
    words = _words(target)
    holding = [o for o in options if words and words <= _words(o)]
    return holding[0] if len(holding) == 1 else None


def is_box(held: dict[str, Any]) -> bool:
    return held.get("kind") in BOX_KINDS or (held.get("kind") is None and held.get("value") in ("on", "off"))


def ground_target(target: Any, held: dict[str, Any]) -> list[str] | None:
    """The values of this control a typed target stands for (each value of an any-of list), or None when none can
    be told: a checked/unchecked target on a control that is no box, a value no option holds. A control whose
    options are unknown (a row's snapshot, a text field) takes the target's own values."""
    if isinstance(target, Checked):
        return ["on" if target.checked else "off"] if is_box(held) else None
    wanted = values_of(target)
    if is_box(held) or not wanted:
        return None
    options = held.get("options") or []
    if not options:
        return wanted
    found = [o for value in wanted if (o := _option_for(value, options)) is not None]
    if found:
        return list(dict.fromkeys(found))
    if held.get("kind") in ("text", "search", "date", "number", "range"):  # free input with suggestions
        return wanted
    return None


def _same(value: str, wanted: str) -> bool:
    if values_match(value, wanted):
        return True
    a, b = parse_any_date(value), parse_any_date(wanted)
    if a is not None and b is not None and re.search(r"\d{4}", value) and re.search(r"\d{4}", wanted):
        return a == b and parse_any_date(value, end=True) == parse_any_date(wanted, end=True)
    return bool(_words(value)) and _words(value) == _words(wanted)


_LIST_SEPARATORS = re.compile(r"\s*[,;]\s*")


def _same_list(value: str, wanted: list[str]) -> bool:
    """A field holding a separated list ('A,B,C': every value at once) equal, as a set, to the values an any-of
    target names: all of them are held."""
    items = [i for i in _LIST_SEPARATORS.split(value or "") if i.strip()]
    if len(items) < 2 or len(wanted) < 2:
        return False
    return (all(any(_same(i, p) for p in wanted) for i in items)
            and all(any(_same(i, p) for i in items) for p in wanted))


def holds(value: str, target: Any, needs: list[str]) -> bool:
    """The control's value is what the target asks: one of the values (any of them when read one at a time), or
    all of them at once for an any-of read together."""
    if isinstance(target, AnyOf) and target.together:
        return _same_list(value, needs) or _same_list(value, list(target.any_of))
    return any(_same(value, n) for n in needs) or _same_list(value, values_of(target))


# ---------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """One planned gate judged on one state: where it grounds (the control's key and label, the value it holds,
    what the target stands for there) and the outcome, with its evidence (a clamp's, or why it is unresolved)."""

    gate: Gate
    status: Status
    key: str | None = None
    label: str = ""
    value: str = ""
    needs: tuple[str, ...] = ()
    evidence: str = ""
    candidates: tuple[str, ...] = ()  # the labels of every control the gate names, when several do
    set_by_agent: bool = False  # the grounded control(s) hold a value the agent set (not the site's default)
    bounds: tuple[str, str] = field(default=("", ""))  # a window: the (start, end) keys it grounds on
    wider: bool = False  # a window mismatch that lets in more than the plan's window (not narrower)

    @property
    def grounded(self) -> bool:
        """The gate names one control of this state (its target may still be unresolved)."""
        return self.key is not None

    def needs_text(self) -> str:
        return " or ".join(page_repr(n) for n in self.needs) or repr(self.gate.target)  # needs: the page's options


def judge(gate: Gate, state: dict[str, Any], *, applied: bool = False) -> Verdict:
    """The gate on a state's values (a retrieval state, or a row's snapshot: `graph.plan.values.state_values`).
    `applied` judges the state the page applied where it differs from a control (the URL's value of a form
    changed and not submitted: the rows shown are the URL's), as a read must."""
    values = state_values(state)
    if applied:
        values = {k: {**v, "value": v["applied"], "pending": v["value"]} if v.get("applied") else v
                  for k, v in values.items()}
    verdict = _judge_values(gate, values)
    pending = [values[k]["pending"] for k in (verdict.key, *verdict.bounds) if k in values and values[k].get("pending")]
    if pending and verdict.status == "mismatch":
        return replace(verdict, evidence=f"the form holds {page_repr(pending[0])}, not applied: the page shows "
                                                f"{page_repr(verdict.value)}")
    return verdict


def _bound(gate: Gate, values: dict[str, Any]) -> list[tuple[str, str]]:
    """The gate's control by its stored binding (`graph.plan.binding`): [] when this state has no such key."""
    key = gate.binding["keys"][0]
    return [(key, values[key].get("value") or "")] if key in values else []


def _judge_field(gate: Gate, values: dict[str, Any]) -> Verdict | None:
    """A search gate's bound field selector at another option than the gate's name: the terms are searched
    elsewhere (every field, where the plan names one: the paper's criterion mismatch). None when it holds, or is not here."""
    field = (gate.binding or {}).get("field")
    if not field or field["key"] not in values:
        return None
    held = values[field["key"]]
    value = held.get("value") or ""
    if values_match(value, field["option"]):  # as every held value is compared: 'Label [code]' holds 'Label'
        return None
    return Verdict(gate, "mismatch", key=field["key"], label=field["label"], value=value, needs=(field["option"],),
                   set_by_agent=set_by_agent(held))


def _judge_values(gate: Gate, values: dict[str, Any]) -> Verdict:
    if gate.kind == "window" and isinstance(gate.target, Window):
        return _judge_window(gate, gate.target, values)
    found = _bound(gate, values) if gate.binding is not None else gate_candidates(values, gate.name, gate)
    if not found:
        return Verdict(gate, "unresolved", evidence="no control or URL parameter here is named so")
    if len(found) > 1:
        labels = tuple(values[k].get("label") or k for k, _ in found)
        return Verdict(gate, "unresolved", candidates=labels,
                       evidence=f"matches {len(found)} controls [{', '.join(map(page_repr, labels))}]; revise_plan "
                                "with the full label")
    key, value = found[0]
    held = values[key]
    label = held.get("label") or key
    base = dict(key=key, label=label, value=value, set_by_agent=set_by_agent(held))
    if isinstance(gate.target, Unknown):
        return Verdict(gate, "unresolved", **base, evidence=f"the plan gives no value ({gate.target.unknown}): not checked")
    needs = list(gate.binding["accepts"]) if gate.binding and gate.binding["accepts"] else ground_target(gate.target, held)
    if needs is not None and holds(value, gate.target, needs):
        return _judge_field(gate, values) or Verdict(gate, "held", needs=tuple(needs), **base)
    if any(is_clamped(held, v) for v in values_of(gate.target)):  # the page offers no such value: its clamp says so
        return Verdict(gate, "clamped", needs=tuple(needs or values_of(gate.target)),
                       evidence=held["clamped"]["evidence"], **base)
    if needs is None:
        options = held.get("options") or (["on", "off"] if is_box(held) else [])
        shown = f"; it offers {', '.join(map(page_repr, options[:8]))}{' …' if len(options) > 8 else ''}" if options else ""
        return Verdict(gate, "unresolved", **base,
                       evidence=f"{show(gate.target)!r} names no value of {page_repr(label)}{shown}: revise_plan with "
                                "the value meant")
    return Verdict(gate, "mismatch", needs=tuple(needs), **base)


def named_controls(gate: Gate, state: dict[str, Any]) -> list[str | None]:
    """Which controls a gate names on a state: the one answer every caller asks (the turn's state lines, clamps,
    the gates not seen yet, the phase a loss flag belongs to). A window: its [From, To] keys (`window_bounds`, None
    where the pair has no such end); a search gate bound with its field selector: [its box, the selector]; any other
    gate: [the key] of the one control it names, [] when none or several (ambiguity is never guessed)."""
    values = state_values(state)
    if gate.kind == "window":
        return list(_window_keys(gate, values)[:2])
    if gate.binding is not None:
        field = gate.binding.get("field")
        return [k for k, _ in _bound(gate, values)] + ([field["key"]] if field and field["key"] in values else [])
    found = find_gate_value(values, gate.name, gate)
    return [found[0]] if found else []


def window_bounds(name: str, values: dict[str, Any]) -> tuple[str | None, str | None]:
    """The From/To pair a window gate names: the start and end controls holding dates (those sharing a word
    with the gate's name first), or one control the gate names holding a date (both bounds)."""
    name_words = set(gate_key(name).split("_")) - set(WINDOW_START_WORDS) - set(WINDOW_END_WORDS) - {""}
    starts: list[str] = []
    ends: list[str] = []
    single: list[str] = []
    for key, value in values.items():
        words = set(key.split("_"))
        raw = value.get("value") or ""
        if words & set(WINDOW_START_WORDS) and parse_date(raw):
            starts.append(key)
        elif words & set(WINDOW_END_WORDS) and parse_date(raw, end=True):
            ends.append(key)
        elif key_matches(key, value.get("label") or "", {gate_key(name)}) and parse_date(raw):
            single.append(key)

    def pick(keys: list[str]) -> str | None:
        named = [k for k in keys if name_words & (set(k.split("_")) | set(gate_key(values[k].get("label") or "")
                                                                              .split("_")))]
        return (named or keys or [None])[0]

    start, end = pick(starts), pick(ends)
    if single:
        start, end = start or single[0], end or single[0]
    return start, end


def _open_end(values: dict[str, Any], name: str, words: tuple[str, ...]) -> str | None:
    """A window bound control left empty (no limit: the window is open on that side): named as the pair is, else
    the only empty date field with a From/To word."""
    name_words = name_stems(name) - set(WINDOW_START_WORDS) - set(WINDOW_END_WORDS)
    empty = [(key, value) for key, value in values.items() if not (value.get("value") or "").strip()
             and (name_stems(key) | name_stems(value.get("label") or "")) & set(words)]
    named = [key for key, value in empty if (name_stems(key) | name_stems(value.get("label") or "")) & name_words
             and value.get("kind") in (*WINDOW_KINDS, "select", "text", None)]
    dated = [key for key, value in empty if value.get("kind") == "date"]
    return named[0] if named else dated[0] if len(dated) == 1 else None


def _window_base(gate: Gate, values: dict[str, Any], keys: list[str], shown: str, start: str | None,
                 end: str | None) -> dict[str, Any]:
    """What every window verdict says of where it grounds: the pair's labels, the window shown, whether the agent
    set a bound of it, the dated keys."""
    return dict(key=gate_key(gate.name), label=" / ".join(dict.fromkeys(values[k].get("label") or k for k in keys)),
                value=shown, needs=(show(gate.target),), set_by_agent=any(set_by_agent(values[k]) for k in keys),
                bounds=(start or "", end or ""))


Side = Literal["ok", "narrow", "wide", "unknown", "missing", "clamped"]


def _side(values: dict[str, Any], key: str | None, open_key: str | None, want: str | None, *, end: bool
          ) -> tuple[Side, str]:
    """One end of a window: the page's bound (`key`: a control holding a date; `open_key`: one left empty) against
    the plan's (`want`; None: open). A wanted open end is held by an empty bound or the widest option the control
    offers. On a control without options, a date the agent set is unknown (nothing here says where the records begin
    or end), and so is a site's default end (a default window ends at the site's present: its latest records), and so is a start
    the page moved after an action (a shortcut's date: not the default); a site's default start kept is narrower (a search that opens on its last years: the commonest scope drift). A wanted bound is compared as dates; an empty bound is
    wider; no control for that end at all is missing (said, never held)."""
    if want is None:
        if key is None:
            return "ok", ""
        held = values[key]
        got = parse_date(held["value"], end=end)
        dated = [d for o in held.get("options") or [] if (d := parse_date(o.split(" [", 1)[0].strip(), end=end))]
        if dated:
            return ("narrow" if any((d > got) if end else (d < got) for d in dated) else "ok"), ""
        if not at_site_default(held) or end:
            return "unknown", f"{'To' if end else 'From'} holds {held['value']}: whether that is every date is not known here"
        return "narrow", ""
    if key is None:
        return ("wide", "") if open_key else ("missing", f"no control for the window's {'end' if end else 'start'} here")
    got, wanted = parse_date(values[key]["value"], end=end), parse_date(want, end=end)
    off = "narrow" if (got < wanted if end else got > wanted) else "wide" if (got > wanted if end else got < wanted) \
        else "ok"
    if off != "ok" and is_clamped(values[key], want):
        return "clamped", values[key]["clamped"]["evidence"]
    return off, ""


def _window_keys(gate: Gate, values: dict[str, Any]) -> tuple[str | None, str | None, str | None, str | None]:
    """(start, end, open start, open end) keys of a window: its bound pair (`graph.plan.binding`: a bound left
    empty is open), else the From/To pair its name finds here (`window_bounds`, `_open_end`)."""
    if gate.binding is not None:
        keys = [k if k in values else None for k in gate.binding["keys"][:2]]
        dated = [k if k and parse_date(values[k].get("value") or "", end=i == 1) else None for i, k in enumerate(keys)]
        empty = [k if k and not (values[k].get("value") or "").strip() else None for k in keys]
        return dated[0], dated[1], empty[0], empty[1]
    start, end = window_bounds(gate.name, values)
    open_start = _open_end(values, gate.name, WINDOW_START_WORDS) if start is None or start == end else None
    open_end = _open_end(values, gate.name, WINDOW_END_WORDS) if end is None or start == end else None
    return start, end, open_start, open_end


def _judge_window(gate: Gate, window: Window, values: dict[str, Any]) -> Verdict:
    """A window narrower than the plan's drops rows the answer needs; a wider one (a bound set outside the plan's,
    or left empty) lets in rows the answer must not have: both are a mismatch (`wider` tells them apart: the
    tracker flags a wider window between reads only once a read was made in it, since a From set before its To is
    a window being set). A bound the page clamps is clamped; an end with no control, or an open end set to a date
    nothing here can judge, is unresolved; no From/To pair at all is unresolved."""
    start, end, open_start, open_end = _window_keys(gate, values)
    if not any((start, end, open_start, open_end)):
        return Verdict(gate, "unresolved", evidence="no From/To pair here is named so")
    if start is not None and start == end and (open_start or open_end):
        start, end = (None if open_start else start), (None if open_end else end)  # one dated control and an empty one
    sides = [_side(values, start, open_start, window.start, end=False), _side(values, end, open_end, window.end, end=True)]
    shown = f"{'' if start is None else values[start]['value']}..{'' if end is None else values[end]['value']}"
    base = _window_base(gate, values, [k for k in (start or open_start, end or open_end) if k], shown, start, end)
    outcomes = [o for o, _ in sides]
    notes = "; ".join(n for _, n in sides if n)
    if "narrow" in outcomes:
        return Verdict(gate, "mismatch", **base)
    if "wide" in outcomes:
        return Verdict(gate, "mismatch", wider=True, **base)
    if "unknown" in outcomes or "missing" in outcomes:
        return Verdict(gate, "unresolved", evidence=notes, **base)
    if "clamped" in outcomes:
        return Verdict(gate, "clamped", evidence=notes, **base)
    return Verdict(gate, "held", **base)


def site_shapes(history: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """key -> {kind, options} of each control as the site showed it (the tracked states keep both; the options of
    every page it was seen on: one record's page may offer fewer), so a row's snapshot (label and value only) is
    judged as the pages were."""
    shapes: dict[str, dict[str, Any]] = {}
    for state in history:
        for key, value in (state.get("values") or {}).items():
            if value.get("kind"):
                seen = shapes.get(key, {}).get("options") or []
                options = list(dict.fromkeys([*seen, *(value.get("options") or [])]))
                shapes[key] = {"kind": value["kind"], "options": options}
    return shapes


def with_shapes(snapshot: dict[str, Any], shapes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    values = state_values(snapshot)
    return {k: {**shapes.get(k, {}), **v} for k, v in values.items()}


def verdicts(gates: list[Gate], state: dict[str, Any] | None, *, applied: bool = False) -> list[Verdict]:
    return [judge(g, state, applied=applied) for g in gates] if state else []


def settle(judged: list[Verdict]) -> list[Verdict]:
    """Gates of one set naming the same control are alternatives (a control holds one value at a time: a plan
    listing `HUC = A`, `HUC = B` reads one unit per read, or all at once as a list): a mismatch of a control
    another of these gates holds (or the page clamps) is held."""
    holding = {v.key for v in judged if v.key is not None and v.status in ("held", "clamped")}
    return [replace(v, status="held") if v.status == "mismatch" and v.key in holding else v for v in judged]


def held_before(gate: Gate, gates: list[Gate], state: dict[str, Any] | None,
                history: list[dict[str, Any]] | None) -> bool:
    """The latest page visited before this one (another URL) that names the gate's control held it (the set's
    gates of one control as alternatives): a record's page under a list never has the list's controls, so a gate
    held there is not said "unresolved" on each record's page."""
    url = (state or {}).get("url")
    for seen in reversed(history or []):
        if seen is state or seen.get("url") == url:
            continue
        verdict = next(v for v in settle(verdicts(gates, seen)) if v.gate == gate)
        if verdict.grounded:
            return verdict.status in ("held", "clamped")
    return False


def judged_here(gates: list[Gate], state: dict[str, Any] | None, history: list[dict[str, Any]] | None, *,
                applied: bool = False) -> list[Verdict]:
    """The verdicts a page answers for: none on a page where no gate grounds (a record's own page holds none); a
    gate naming no control here that the latest page naming it held is left out (its page judged it)."""
    judged = verdicts(gates, state, applied=applied)
    if not any(v.grounded for v in judged):
        return []
    return [v for v in judged if v.grounded or v.candidates or not held_before(v.gate, gates, state, history)]


def grounding_lines(gates: list[Gate], state: dict[str, Any] | None,
                    history: list[dict[str, Any]] | None = None) -> list[str]:
    """What the turn shows of the grounding (`judged_here`): each plan gate in force, one line: the control it
    grounds on, the value it needs and whether it is held. A held gate's line is short (the control said only
    where its label does not end with the gate's name, the option it stands for only where it differs from the
    plan's words and is no box's on/off): it is said on every turn, while held it needs nothing done."""
    lines = []
    for v in judged_here(gates, state, history):
        head = f"{v.gate.kind} {v.gate.name} = {v.gate.target}"
        label = _pair_label(v.label)
        if v.status == "unresolved" and not v.grounded and not v.candidates and not isinstance(v.gate.target, Unknown):
            lines.append(f"{head}: no control here")  # a fact, no alarm: the read says once what to do about it
        elif isinstance(v.gate.target, Unknown):
            # the plan says it gives no value (a choice left to the page, a control to leave as it is): a fact,
            # not UNRESOLVED (that asks for a revise_plan the model has nothing to put in); said only where
            # a control of the page is the gate's
            if v.grounded:
                lines.append(f"{head} -> {page_repr(label)} holds {page_repr(v.value)}: "
                             f"{'set' if v.set_by_agent else 'not checked'} (the plan gives no value)")
        elif v.status == "unresolved":
            where = f" -> {page_repr(label)}" if v.grounded else ""
            lines.append(f"{head}{where}: UNRESOLVED, {v.evidence}")  # its note is in the head; what to do: the header
        elif v.status == "held":
            named = _names_control(v.gate, label)
            plain = isinstance(v.gate.target, Checked) or {norm_value(n) for n in v.needs} <= {
                norm_value(show(v.gate.target))}
            lines.append(f"{head}: held{'' if plain else ' as ' + v.needs_text()}"
                         f"{'' if named else ' by ' + page_repr(label)}")
        elif v.status == "clamped":
            lines.append(f"{head} -> {page_repr(label)} holds {page_repr(v.value)}: clamped by the page ({v.evidence})")
        else:
            wider = " (wider than the plan's window)" if v.wider else ""
            lines.append(f"{head} -> {page_repr(label)} needs {v.needs_text()}, holds {page_repr(v.value)}: NOT "
                         f"HELD{wider}")
    return lines


def _names_control(gate: Gate, label: str) -> bool:
    """The gate's name is the control's label, but for the group's legend before it ('Filters: Colour' for
    Colour); a window's, its whole From/To pair ('Start / End', not one word of one end's label)."""
    if gate.kind == "window":
        return gate_key(gate.name) in {gate_key(label), gate_key(label.split(": ", 1)[-1])}
    return f"_{gate_key(label)}".endswith(f"_{gate_key(gate.name)}")


def _pair_label(label: str | None) -> str:
    """A From/To pair's label with the legend both ends share said once: 'Period: Start / End'."""
    text = str(label or "")
    first, sep, second = text.partition(" / ")
    if sep and ": " in first and second.startswith(first.rsplit(": ", 1)[0] + ": "):
        return f"{first} / {second[len(first.rsplit(': ', 1)[0]) + 2:]}"
    return text
