"""What changed between two observations, in the agent's terms: URL parameters, control values (by label),
result count (`state_delta`); the one rendering a prompt shows of an observation within the room it has
(`render_observation`: the whole text, or the delta of a page the model was shown whole); and the identity of
what a page shows (`page_key`, `content_key`), from the structured observation, never by parsing text."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from browser.render import Rendering, render
from browser.tokens import count_tokens
from browser.types import Control, Observation, StateDelta, TableData

NO_PAGE = "(no page yet: start with goto)"


def as_observation(observation: Observation | Mapping[str, Any]) -> Observation:
    return observation if isinstance(observation, Observation) else Observation.model_validate(observation)


def render_observation(observation: Observation | Mapping[str, Any] | None, token_budget: int, *,
                       since_step: int | None = None) -> Rendering:
    """What a prompt shows of the observation within `token_budget`, laid out once (`browser.render.render`):
    its whole text, or with `since_step` (the model was shown this same page whole at that step, see
    `page_key`) the page without the bulk content read then, when that saves enough."""
    if not observation:
        return Rendering(NO_PAGE, count_tokens(NO_PAGE), token_budget, frozenset(), True)
    return render(as_observation(observation), token_budget, since_step=since_step)


def content_key(observation: Observation | Mapping[str, Any] | None) -> str:
    """Identity of what an observation shows, page id aside: equal for a page reloaded exactly as it was. The
    structure decides (the text is a function of it)."""
    if not observation:
        return ""
    raw = as_observation(observation).model_dump_json(exclude={"page_id"})
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12]


def page_key(observation: Observation | Mapping[str, Any] | None) -> str:
    """Identity of what an observation shows and of the document (URL, page id, content): a page that did not
    change since the model last saw it has the same key, and its refs are still valid."""
    if not observation:
        return ""
    page_id = observation.page_id if isinstance(observation, Observation) else observation.get("page_id", 0)
    raw = f"{page_id}\n{content_key(observation)}"
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12]


def params_diff(old: dict[str, list[str]], new: dict[str, list[str]]) -> str:
    parts = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            parts.append(f"-{key}")
        elif key not in old:
            parts.append(f"+{key}={','.join(new[key])}")
        elif old[key] != new[key]:
            parts.append(f"{key}: {','.join(old[key])} -> {','.join(new[key])}")
    return "; ".join(parts) or "no parameter changed"


def _control_value(control: Control) -> str | None:
    if control.checked is not None and control.kind in ("checkbox", "toggle"):
        return "checked" if control.checked else "partly checked" if control.value == "mixed" else "unchecked"
    return control.value


def _controls_by_label(observation: Observation) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for control in observation.controls:
        if control.kind in ("link", "button", "submit"):
            continue
        key = control.label or control.name or control.ref
        if key in values:
            key = f"{key} [{control.ref}]"
        values[key] = _control_value(control)
    return values


def tables_grown(before: Observation | None, after: Observation) -> list[tuple[int, int, int]]:
    """(index, rows before, rows after) of each table or card list of the same page that now holds more rows."""
    if before is None or before.page_id != after.page_id:
        return []
    grown = []
    for old in before.tables:
        same = [new for new in after.tables if _same_list(old, new)]
        if len(same) == 1 and same[0].total_rows > old.total_rows:
            grown.append((same[0].index, old.total_rows, same[0].total_rows))
    return grown


def _same_list(old: TableData, new: TableData) -> bool:
    """`new` is `old` grown in place: the same kind, caption and headers, and its first rows are old's. Matched by
    what the table holds, not by its index: a table inserted before it (another node's children) shifts the
    indexes, and two lists of one shape are not one list grown (a played run was told such a list grew)."""
    return (old.source == new.source and old.caption == new.caption and old.headers == new.headers
            and bool(old.rows) and new.rows[:len(old.rows)] == old.rows)


def state_delta(before: Observation | None, after: Observation) -> StateDelta:
    before_params = before.query_state if before else {}
    after_params = after.query_state
    before_controls = _controls_by_label(before) if before else {}
    after_controls = _controls_by_label(after)
    return StateDelta(
        url_before=before.url if before else None,
        url_after=after.url,
        params_added={k: v for k, v in after_params.items() if k not in before_params},
        params_removed={k: v for k, v in before_params.items() if k not in after_params},
        params_changed={k: (before_params[k], v) for k, v in after_params.items()
                        if k in before_params and before_params[k] != v},
        controls_changed={k: (before_controls.get(k), v) for k, v in after_controls.items()
                          if k in before_controls and before_controls[k] != v},
        count_before=before.result_count if before else None,
        count_after=after.result_count,
        # a list grown in place, not a search's new results (those change the count or a control)
        tables_grown=tables_grown(before, after) if before is not None and before.result_count == after.result_count
        and not any(k in before_controls and before_controls[k] != v for k, v in after_controls.items()) else [],
    )


def _path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.netloc, parts.path.rstrip("/")


DESCRIBED_CONTROLS = 6  # the changed controls `describe_delta` names (the first ones)


def describe_delta(delta: StateDelta, *, url_said: bool = False, read_hint: bool = True) -> str:
    """The delta in words (an action's message ends with it: `ActionResult.described`): the URL's change, the
    first DESCRIBED_CONTROLS changed controls, the result count's change; `url_said`: the action's message
    already names the new URL (not said again)."""
    parts = []
    moved = delta.url_before is not None and _path(delta.url_before) != _path(delta.url_after)
    if moved:  # another page: its URL says its state; the old page's parameters "removed" would read as drift
        if not url_said:
            parts.append(f"now at {delta.url_after}")
    elif delta.params_added or delta.params_removed or delta.params_changed:
        parts.append("URL " + params_diff(
            {**delta.params_removed, **{k: old for k, (old, _new) in delta.params_changed.items()}},
            {**delta.params_added, **{k: new for k, (_old, new) in delta.params_changed.items()}}))
    elif delta.url_before != delta.url_after and not url_said:
        parts.append(f"now at {delta.url_after}")
    if delta.controls_changed:
        parts.append("controls " + "; ".join(f"{k}: {b!r} -> {a!r}" for k, (b, a) in
                                               list(delta.controls_changed.items())[:DESCRIBED_CONTROLS]))
    if delta.count_before != delta.count_after and not (moved and delta.count_after is None):
        parts.append(f"results {delta.count_before} -> {delta.count_after}")
    for index, rows_before, rows_after in delta.tables_grown:
        hint = f" (read_table {index} all_pages=true reads the list to its end)" if read_hint else ""
        parts.append(f"TABLE {index} grew {rows_before} -> {rows_after} rows{hint}")
    return ", ".join(parts)
