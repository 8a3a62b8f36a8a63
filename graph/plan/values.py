"""The vocabulary of gates: how a control label, a URL parameter and a value are normalised and compared, and
which value of a state (a tracked retrieval state or a row's snapshot) a plan gate names. Shared by the state
tracker, the gate judge (`graph.plan.judge`) and the checks that use it; it knows no drift rule.
"""

from __future__ import annotations

import re
from typing import Any

from graph.state import Gate, RetrievalState

WINDOW_KINDS = frozenset({"date", "range", "number"})
SEARCH_KINDS = frozenset({"text", "search"})
WINDOW_START_WORDS = ("from", "start", "min", "begin", "since", "after")
WINDOW_END_WORDS = ("to", "end", "max", "until", "before")


def gate_key(name: str) -> str:
    """Normalise a control label or URL parameter so 'Sort order', 'sort_order' and 'sortOrder' meet."""
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name.strip())
    return re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")


def norm_value(value: str | None) -> str:
    return " ".join(re.sub(r"[^\w\s.:-]", " ", (value or "").casefold()).split())


def _value_forms(value: str) -> set[str]:
    """A value and the forms it may be named by: 'Label [code]' -> label and code; 'a,b' -> each item."""
    forms = {value}
    labelled = re.fullmatch(r"(.*?)\s*\[([^\]]*)\]", value)
    if labelled:
        forms |= {labelled.group(1), labelled.group(2)}
    forms |= {part for part in value.split(",") if part}
    return {norm_value(form) for form in forms} - {""}


def values_match(actual: str | None, target: str | None) -> bool:
    """Equal after normalisation, or the target names one form of the actual value. Never a substring
    match: 'Home' must not satisfy 'Home intended' (the paper's criterion-mismatch trap)."""
    a, t = norm_value(actual), norm_value(target)
    if not a or not t:
        return a == t
    return a == t or t in _value_forms(actual or "") or a in _value_forms(target or "")

def key_matches(key: str, label: str, names: set[str]) -> bool:
    label_key = gate_key(label)
    return any(n and (n in (key, label_key) or (len(n) >= 3 and (n in key or n in label_key))) for n in names)


def set_by_agent(value: dict[str, Any] | None) -> bool:
    """Did the agent set this control (an action of its own set it), rather than the site (a default, a side effect)?
    The one answer: the tracker records it as `set_at_step` (graph/tracking/tracker.py)."""
    return bool(value) and value.get("set_at_step") is not None


def at_site_default(value: dict[str, Any] | None) -> bool:
    """Does this control hold the site's default: not set by the agent, and what the page first showed (a value the
    page moved after an action, such as a shortcut button filling a date, is neither the agent's nor the default)."""
    return bool(value) and not set_by_agent(value) and value["value"] == value.get("first_seen", value["value"])


def last_set(history: list[Any], key: str, value: str | None = None) -> int | None:
    """The latest step at which the agent set `key` (to `value`, when given) on a page visited before."""
    steps = [held["set_at_step"] for state in history if set_by_agent(held := state["values"].get(key))
             and (value is None or held.get("value") == value)]
    return steps[-1] if steps else None


def state_values(state: RetrievalState | dict[str, Any]) -> dict[str, dict[str, Any]]:
    """key -> {value, label, ...} of a retrieval state or of a row's snapshot (`graph.checks.gates.state_snapshot`)."""
    values = state.get("values")
    if isinstance(values, dict) and all(isinstance(v, dict) for v in values.values()):
        return values  # a retrieval state (a snapshot's entry "values" would hold label and value strings)
    return dict(state)


def gate_candidates(state: RetrievalState | dict[str, Any], name: str, gate: Gate | None = None) -> list[tuple[str, str]]:
    """(key, value) of every state value a plan gate may name, by meaning, not substring: the same
    normalised key or label; else each label / key that contains ALL the gate's words as whole words
    ('Date' is not 'update_frequency'; 'Date' is both 'Date received' and 'Date closed': two candidates).
    Several candidates are then narrowed by what the gate asks of a control: a control whose options hold
    the gate's target, or whose kind fits the gate (a window: a date/range/number field; a search: a text
    field). What is still ambiguous stays so: the caller reports it, never guesses."""
    values = state_values(state)
    wanted = gate_key(name)
    exact = [(k, v["value"]) for k, v in values.items() if k == wanted or gate_key(v.get("label") or "") == wanted]
    if exact:
        return exact[:1]
    words = name_stems(wanted)
    found = [(k, v["value"]) for k, v in values.items()
             if words and (words <= name_stems(k) or words <= name_stems(v.get("label") or ""))]
    if gate is not None and gate.kind == "search":  # a search is typed: a selector is never its box
        found = [(k, v) for k, v in found if values[k].get("kind") in (*SEARCH_KINDS, None)]
    if len(found) > 1 and gate is not None:
        found = _narrow(found, values, gate)
    return found


def name_stems(text: str) -> set[str]:
    """A name's words (`gate_key`), a plural's 's' dropped: 'Keyword' names 'Keywords', 'Weeks' 'To week'."""
    return {w.rstrip("s") or w for w in gate_key(text).split("_") if w}


def _narrow(found: list[tuple[str, str]], values: dict, gate: Gate) -> list[tuple[str, str]]:
    from graph.plan.targets import values_of

    wanted = values_of(gate.target)
    by_option = [(k, v) for k, v in found
                 if any(values_match(option, w) for option in values[k].get("options") or [] for w in wanted)]
    if by_option:
        return by_option
    fitting = WINDOW_KINDS if gate.kind == "window" else SEARCH_KINDS if gate.kind == "search" else None
    by_kind = [(k, v) for k, v in found if fitting is not None and values[k].get("kind") in fitting]
    return by_kind or found


def find_gate_value(state: RetrievalState | dict[str, Any], name: str,
                    gate: Gate | None = None) -> tuple[str, str] | None:
    """(key, value) of the state value a plan gate names, if exactly one does (ambiguity is never guessed)."""
    found = gate_candidates(state, name, gate)
    return found[0] if len(found) == 1 else None


_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


def parse_date(value: str, *, end: bool = False) -> tuple[int, int, int] | None:
    """'2021' / '2021-03' / '2021-03-04' as a comparable tuple; an end bound fills to the period's end."""
    match = _DATE.match(value.strip())
    if not match:
        return None
    year, month, day = match.groups()
    return int(year), int(month or (12 if end else 1)), int(day or (31 if end else 1))


def is_clamped(value: dict[str, Any], target: str) -> bool:
    """The value was recorded as the page's clamp of exactly this planned target."""
    clamp = value.get("clamped")
    return bool(clamp) and values_match(clamp["planned"], target)
