"""One judge of "is the planned gate held?": the gates in force (`gates_for`) and one verdict per gate on the
values a state holds (`judge`). The state tracker, the read check and the verifier are policies over these
verdicts (graph/README, "The gate judge").

The planner writes blind, from the task alone, so its targets are the task's words, not the site's: `ticked`
for a checkbox that holds `on`, `Diabetes mellitus` for the option `Diabetes mellitus (E10-E14)`,
`02040502, 04040504 (one at a time)` for a list of codes read one by one. A gate is therefore *grounded* on
the page first: its control by label words or URL parameter (`graph.plan.values.gate_candidates`), its target on
that control's options or values, leniently (`ground_target`). Only a target grounded to a definite value
that the control does not hold is a **mismatch**. A target no option or value answers, or a gate naming no
control (or several), is **unresolved**: the model is asked to say what it meant, never told it drifted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from graph.plan.values import (
    ASIDE,
    WINDOW_END_WORDS,
    WINDOW_KINDS,
    WINDOW_START_WORDS,
    gate_candidates,
    gate_key,
    is_clamped,
    key_matches,
    norm_value,
    parse_date,
    split_window,
    state_values,
    values_match,
)
from graph.prompting.page_fence import page_repr
from graph.state import Gate, Phase, Plan

Status = Literal["held", "mismatch", "unresolved", "clamped"]
TRUE_WORDS = frozenset({"on", "yes", "true", "ticked", "checked", "tick", "check", "selected", "enabled", "1",
                        "included", "include", "shown", "show"})
ALL_WORDS = frozenset({"all", "any", "every", "entire", "whole", "full", "no", "unlimited", "unrestricted", "ever"})
TIME_WORDS = frozenset({"date", "dates", "time", "times", "year", "years", "period", "periods", "range", "history",
                        "limit", "limits", "window", "available", "records", "record"})
FALSE_WORDS = frozenset({"off", "no", "false", "unticked", "unchecked", "untick", "uncheck", "cleared", "disabled",
                         "0", "excluded", "exclude", "hidden", "hide", "none"})
BOX_KINDS = frozenset({"checkbox", "toggle"})
# a free-text target that describes its value ('the oldest name', 'each code') instead of giving it
DESCRIBING_HEADS = frozenset({"the", "each", "every", "any", "a", "an", "its", "their", "this", "that", "per"})
PLACEHOLDER_NOUNS = frozenset({"name", "names", "value", "values", "term", "terms", "id", "ids", "code", "codes",
                               "number", "numbers", "title", "titles", "keyword", "keywords", "query", "identifier"})
_LIST_HEAD = re.compile(r"^(?:each|every|one|any|all|either|both)\s+(?:of\s+)?(?:the\s+)?", re.IGNORECASE)
_ALTERNATIVES = re.compile(r"\s*(?:,|;|/|\bor\b|\bthen\b)\s*", re.IGNORECASE)
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
    gates = [*plan.gates, *(g for p in phases for g in p.gate_list())]
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


def _alternatives(target: str) -> tuple[list[str], list[str]]:
    """The target whole (and without its asides: 'Eastmarch (state)' -> Eastmarch), and the values it lists
    ('A, B (one at a time)' -> A, B; 'x or y' -> x, y)."""
    bare = ASIDE.sub(" ", target).strip()
    whole = list(dict.fromkeys(t for t in (target, bare) if t))
    parts = [p.strip() for p in _ALTERNATIVES.split(_LIST_HEAD.sub("", bare)) if p and p.strip()]
    if len(parts) < 2:  # 'each of A, B' lists A and B; 'All records' is one value, its head kept
        parts = [p.strip() for p in _ALTERNATIVES.split(bare) if p and p.strip()]
    return whole, [p for p in dict.fromkeys(parts) if p not in whole]


def _box_state(target: str) -> str | None:
    """on / off for a yes/no word, the planner's aside left out ('ticked (for the back-search)')."""
    words = _words(ASIDE.sub(" ", target)) or _words(target)
    if words and words <= TRUE_WORDS:
        return "on"
    if words and words <= FALSE_WORDS:
        return "off"
    return None


def _option_for(target: str, options: list[str]) -> str | None:
    """The option a target names: the same value (label or code), else the only option whose label holds all
    the target's words ('Diabetes mellitus' -> 'Diabetes mellitus (E10-E14)')."""
    same = [o for o in options if values_match(o, target)]
    if same:
        return same[0]
    words = _words(target)
    holding = [o for o in options if words and words <= _words(o)]
    return holding[0] if len(holding) == 1 else None


def ground_target(target: str, held: dict[str, Any]) -> list[str] | None:
    """The values of this control the target stands for (several for a list read one at a time), or None when
    none can be told: a box's target that is no yes/no word, a target no option holds. A control whose options
    are unknown (a row's snapshot, a text field) takes the target's own forms."""
    kind = held.get("kind")
    value = held.get("value") or ""
    if kind in BOX_KINDS or (kind is None and value in ("on", "off")):
        state = _box_state(target)
        return [state] if state else None
    options = held.get("options") or []
    whole, parts = _alternatives(target)
    if options:
        by_part = [o for alt in parts if (o := _option_for(alt, options)) is not None]
        # the whole target names one option only when that option is not one of the listed values: a list
        # ('A, B, C (each separately)') matches its first item as a whole too, and stands for every item
        found = [o for alt in whole if (o := _option_for(alt, options)) is not None and o not in by_part]
        found = found or by_part
        if found:
            return list(dict.fromkeys(found))
        if kind in ("text", "search", "date", "number", "range"):  # free input with suggestions
            return [*whole, *parts]
        return None
    if len(parts) < 2 and describes(target):  # a list names values; one described value is none
        return None
    return [*whole, *parts]


def describes(target: str) -> bool:
    """A free-text target that describes the value rather than giving it ('the oldest other-genus name',
    'each candidate's code', '<name>'): the judge cannot tell which value it stands for, so it is unresolved.
    Told by a leading determiner or quantifier, or lowercase words ending in a placeholder noun."""
    text = ASIDE.sub(" ", target).strip()
    if re.search(r"[<{]", text):
        return True
    words = text.split()
    if len(words) < 2:
        return False
    if words[0].casefold() in DESCRIBING_HEADS:
        return True
    return text == text.casefold() and not re.search(r"\d", text) and words[-1].casefold() in PLACEHOLDER_NOUNS


def _same(value: str, wanted: str) -> bool:
    if values_match(value, wanted):
        return True
    a, b = parse_any_date(value), parse_any_date(wanted)
    if a is not None and b is not None and re.search(r"\d{4}", value) and re.search(r"\d{4}", wanted):
        return a == b and parse_any_date(value, end=True) == parse_any_date(wanted, end=True)
    return bool(_words(value)) and _words(value) == _words(wanted)


_LIST_SEPARATORS = re.compile(r"\s*[,;]\s*")


def _same_list(value: str, target: str) -> bool:
    """A field holding a separated list ('A,B,C': every value at once) equal, as a set, to the values a list
    target names ('C; A; B', 'A, B, C (each separately)'): all of them are held."""
    items = [i for i in _LIST_SEPARATORS.split(value or "") if i.strip()]
    _, parts = _alternatives(target)
    if len(items) < 2 or len(parts) < 2:
        return False
    return (all(any(_same(i, p) for p in parts) for i in items)
            and all(any(_same(i, p) for i in items) for p in parts))


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


def _judge_values(gate: Gate, values: dict[str, Any]) -> Verdict:
    if gate.kind == "window":
        return _judge_window(gate, values)
    found = gate_candidates(values, gate.name, gate)
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
    base = dict(key=key, label=label, value=value, set_by_agent=held.get("set_at_step") is not None)
    needs = ground_target(gate.target, held)
    if needs is not None and (any(_same(value, n) for n in needs) or _same_list(value, gate.target)):
        return Verdict(gate, "held", needs=tuple(needs), **base)
    if is_clamped(held, gate.target):  # the page offers no such value (or cannot hold it): its clamp says so
        return Verdict(gate, "clamped", needs=(gate.target,) if needs is None else tuple(needs),
                       evidence=held["clamped"]["evidence"], **base)
    if needs is None and not held.get("options") and held.get("kind") not in BOX_KINDS and describes(gate.target):
        return Verdict(gate, "unresolved", **base,
                       evidence=f"{gate.target!r} describes the value of {page_repr(label)}, it does not give it: "
                                "not checked")
    if needs is None:
        options = held.get("options") or (["on", "off"] if held.get("kind") in BOX_KINDS else [])
        shown = f"; it offers {', '.join(map(page_repr, options[:8]))}{' …' if len(options) > 8 else ''}" if options else ""
        return Verdict(gate, "unresolved", **base,
                       evidence=f"{gate.target!r} names no value of {page_repr(label)}{shown}: revise_plan with the "
                                "value meant")
    return Verdict(gate, "mismatch", needs=tuple(needs), **base)


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
    """A window bound control left empty (no limit: the window is open on that side), named as the pair is."""
    def stems(text: str) -> set[str]:
        return {w.rstrip("s") for w in gate_key(text).split("_") if w}

    name_words = stems(name) - set(WINDOW_START_WORDS) - set(WINDOW_END_WORDS)
    for key, value in values.items():
        keys = stems(key) | stems(value.get("label") or "")
        if keys & set(words) and keys & name_words and not (value.get("value") or "").strip() \
                and value.get("kind") in (*WINDOW_KINDS, "select", "text", None):
            return key
    return None


def unbounded(target: str) -> bool:
    """A window target asking for no limit ('all dates', 'any time', 'no limit (clear the default)'): the asides
    left out, only words of time and of all."""
    words = _words(ASIDE.sub(" ", target)) or _words(target)
    return bool(words & ALL_WORDS) and words <= ALL_WORDS | TIME_WORDS


def _judge_unbounded(gate: Gate, values: dict[str, Any]) -> Verdict:
    """A window the plan wants open: held when the From/To pair it names is empty; a site's default window kept
    (the commonest scope drift: a search that opens on the last three years) is narrower, a mismatch. Dates the
    agent set are not judged (unresolved): a window from the site's first record to today is every date, and
    nothing here says where the records begin. Unresolved without a pair."""
    start, end = window_bounds(gate.name, values)
    keys = [k for k in (start or _open_end(values, gate.name, WINDOW_START_WORDS),
                        end or _open_end(values, gate.name, WINDOW_END_WORDS)) if k]
    if not keys:
        return Verdict(gate, "unresolved", evidence="no From/To pair here is named so")
    shown = f"{values[start]['value'] if start else ''}..{values[end]['value'] if end else ''}"
    base = _window_base(gate, values, keys, shown, start, end)
    if not start and not end:
        return Verdict(gate, "held", **base)
    if base["set_by_agent"]:
        return Verdict(gate, "unresolved", evidence=f"set to {shown}: whether that is every date is not known here",
                       **base)
    return Verdict(gate, "mismatch", **base)


def _window_base(gate: Gate, values: dict[str, Any], keys: list[str], shown: str, start: str | None,
                 end: str | None) -> dict[str, Any]:
    """What every window verdict says of where it grounds: the pair's labels, the window shown, whether the agent
    set a bound of it, the dated keys."""
    return dict(key=gate_key(gate.name), label=" / ".join(dict.fromkeys(values[k].get("label") or k for k in keys)),
                value=shown, needs=(gate.target,), set_by_agent=any(values[k].get("set_at_step") is not None
                                                                    for k in keys),
                bounds=(start or "", end or ""))


def _judge_window(gate: Gate, values: dict[str, Any]) -> Verdict:
    """A window narrower than the plan's drops rows the answer needs; a wider one (a bound left at a default
    outside the plan, or empty) lets in rows the answer must not have: both are a mismatch (`wider` tells them
    apart: the tracker flags a wider window between reads only once a read was made in it, since a From set
    before its To is a window being set). A bound the page clamps is clamped; no parseable target or no dated
    control is unresolved."""
    bounds = split_window(gate.target) or ("", "")
    want_start, want_end = parse_date(bounds[0]), parse_date(bounds[1], end=True)
    if (want_start is None and want_end is None) or (bounds[0] and want_start is None) or (
            bounds[1] and want_end is None):  # a bound no date parses says nothing: never held by default
        if unbounded(gate.target):
            return _judge_unbounded(gate, values)
        return Verdict(gate, "unresolved", evidence=f"{gate.target!r} is not a window START..END")
    start, end = window_bounds(gate.name, values)
    if start is None and end is None:
        return Verdict(gate, "unresolved", evidence="no From/To pair here holds a date")
    got_start = parse_date(values[start]["value"]) if start else None
    got_end = parse_date(values[end]["value"], end=True) if end else None
    open_start = _open_end(values, gate.name, WINDOW_START_WORDS) if start is None or start == end else None
    open_end = _open_end(values, gate.name, WINDOW_END_WORDS) if end is None or start == end else None
    narrow_start = bool(want_start and got_start and got_start > want_start and not open_start)
    narrow_end = bool(want_end and got_end and got_end < want_end and not open_end)
    wide_start = bool(want_start and ((got_start and got_start < want_start) or open_start))
    wide_end = bool(want_end and ((got_end and got_end > want_end) or open_end))
    clamps: list[Any] = []

    def unclamped(off: bool, key: str | None, bound: Any) -> bool:
        """A bound off the plan's stays off unless the page clamped it there (then its evidence is kept)."""
        if off and key and is_clamped(values[key], bound):
            clamps.append(values[key]["clamped"]["evidence"])
            return False
        return off

    narrow_start, narrow_end = unclamped(narrow_start, start, bounds[0]), unclamped(narrow_end, end, bounds[1])
    wide_start, wide_end = unclamped(wide_start, start, bounds[0]), unclamped(wide_end, end, bounds[1])
    start_shown = "" if open_start else values[start]["value"] if start else "?"
    end_shown = "" if open_end else values[end]["value"] if end else "?"
    shown = f"{start_shown}..{end_shown}"
    base = _window_base(gate, values, [k for k in (open_start or start, open_end or end) if k], shown, start, end)
    if narrow_start or narrow_end:
        return Verdict(gate, "mismatch", **base)
    if wide_start or wide_end:
        return Verdict(gate, "mismatch", wider=True, **base)
    if clamps:
        return Verdict(gate, "clamped", evidence="; ".join(clamps), **base)
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
    """What the turn shows of the grounding (`judged_here`): each plan gate, the control it grounds on, the value
    it needs and whether it is held."""
    lines = []
    for v in judged_here(gates, state, history):
        head = f"{v.gate.kind} {v.gate.name} = {v.gate.target}"
        if v.status == "unresolved":
            where = f" -> {page_repr(v.label)}" if v.grounded else ""
            lines.append(f"{head}{where}: UNRESOLVED, {v.evidence}")
        elif v.status == "held":
            lines.append(f"{head} -> {page_repr(v.label)} needs {v.needs_text()}: held")
        elif v.status == "clamped":
            lines.append(f"{head} -> {page_repr(v.label)} holds {page_repr(v.value)}: clamped by the page ({v.evidence})")
        else:
            wider = " (wider than the plan's window)" if v.wider else ""
            lines.append(f"{head} -> {page_repr(v.label)} needs {v.needs_text()}, holds {page_repr(v.value)}: NOT "
                         f"HELD{wider}")
    return lines
