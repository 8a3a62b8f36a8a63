"""Applied versus pending: which controls were changed since the page last showed results.

What a page's results show (its tables, count, pagination, URL) is the state its form last applied. A control
whose value differs from the one it held when those results were last shown was changed and not applied (the
form was not sent again, the filter button not pressed): a table read now is stale. Only the browser sees
every observation of a page in order, so it owns this fact; the graph stores it and refuses a read of a stale
table (graph/checks/gates.py), it never guesses it from URL likeness.

A page that applies a control on change (a select that reloads, a filter redrawing the table) changes its
results in the same step, so its controls are never pending. A search form showing no results yet has its
changes pending too: a read there is of no state the agent set (the commonest stale read: the submit forgotten).
Site chrome (a header search box) is left out:
the results do not depend on it.
"""

from __future__ import annotations

import hashlib

from browser.types import Control, Observation, PendingControl

_KINDS = frozenset({"select", "custom_select", "radio_group", "checkbox", "toggle", "text", "search", "date",
                    "number", "range", "page_size"})


def _value(control: Control) -> str:
    if control.kind in ("checkbox", "toggle"):
        return "on" if control.checked else "off"
    selected = [o.label for o in control.options if o.selected]
    return ", ".join(selected) if selected else control.value or ""


def _controls(observation: Observation) -> dict[str, tuple[str, str]]:
    """identity -> (label, value) of the controls the results can depend on."""
    found: dict[str, tuple[str, str]] = {}
    for control in observation.controls:
        if control.kind not in _KINDS or control.rank >= 2 or control.disabled:
            continue
        identity = f"{control.frame or ''}|{control.form or ''}|{control.name or ''}|{control.label}"
        found.setdefault(identity, (control.label or control.name or "", _value(control)))
    return found


def results_key(observation: Observation) -> str:
    """What the page shows as results: the document, its URL, tables, count, pagination and text (a page that
    redraws its figures on change, without a table, applied the change: a miss here is a false refusal)."""
    raw = "\n".join([str(observation.page_id), observation.url, str(observation.result_count),
                     observation.pagination.model_dump_json() if observation.pagination else "",
                     *(t.model_dump_json(include={"headers", "rows"}) for t in observation.tables),
                     *observation.outline])
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


class AppliedState:
    """The controls' values when the page's results were last shown, and what differs from them now."""

    def __init__(self) -> None:
        self._key = ""
        self._shown: dict[str, tuple[str, str]] = {}

    def pending(self, observation: Observation) -> list[PendingControl]:
        """The controls changed since the results were last shown; a change of the results makes the values
        held now the applied ones (nothing pending)."""
        now = _controls(observation)
        key = results_key(observation)
        if key != self._key:
            self._key, self._shown = key, now
            return []
        return [PendingControl(label=label, value=value, shown=self._shown[identity][1])
                for identity, (label, value) in now.items()
                if identity in self._shown and self._shown[identity][1] != value]
