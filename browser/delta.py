"""What changed between two observations, in the agent's terms: URL parameters, control values (by label),
result count (`state_delta`); the text of an observation within the budget a prompt has left for it
(`observation_text`); and the text of a page the model has already been shown whole (`page_key`,
`render_delta`), rendered from the structured observation by the browser's renderer, never by parsing text."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from browser.render import DEFAULT_BUDGET, render, render_unchanged
from browser.tokens import count_tokens
from browser.types import Control, Observation, StateDelta

DELTA_MIN_SAVING = 40  # tokens; a smaller saving is not worth a second form of the page


def as_observation(observation: Observation | Mapping[str, Any]) -> Observation:
    return observation if isinstance(observation, Observation) else Observation.model_validate(observation)


def observation_text(observation: Observation | Mapping[str, Any] | None, token_budget: int) -> str:
    """The text the model reads for an observation within `token_budget`: the rendering the browser made when
    it observed (at the worker's budget) when that fits, else the renderer's at `token_budget` (a prompt with
    less room left: the renderer lays the page out again and notes what it left out; cutting the text would
    drop controls silently)."""
    if not observation:
        return "(no page yet: start with goto)"
    get = (lambda key: getattr(observation, key)) if isinstance(observation, Observation) else observation.get
    text, tokens = get("text"), get("tokens") or 0
    if text and (tokens or count_tokens(str(text))) <= token_budget:
        return str(text)
    return render(as_observation(observation), token_budget=token_budget)[0]


def reads_named(observation: Observation | Mapping[str, Any] | None) -> frozenset[str]:
    """The reads of what the observation's text left out, as the renderer recorded them with the text (its
    notes name each); for an observation not rendered, from its counts."""
    if not observation:
        return frozenset()
    obs = as_observation(observation)
    if obs.text:
        return frozenset(obs.text_reads)
    return frozenset(({"read_section"} if obs.outline_total > len(obs.outline) else set()) | (
        {"list_links"} if obs.links_total > len(obs.links) else set()))


def page_key(observation: Observation | Mapping[str, Any] | None) -> str:
    """Identity of what an observation shows: URL, page id and the rendered content (a page that did not
    change since the model last saw it has the same key)."""
    if not observation:
        return ""
    fields = observation.model_dump(include={"url", "page_id"}) if isinstance(observation, Observation) else observation
    raw = "\n".join((str(fields.get("url", "")), str(fields.get("page_id", 0)),
                     observation_text(observation, DEFAULT_BUDGET)))
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12]


def render_delta(seen_key: str, observation: Observation | Mapping[str, Any], *, since_step: int,
                 token_budget: int) -> str | None:
    """The observation for a model that was shown the page with key `seen_key` whole at `since_step`: when it
    is still that page, every line but the bulk content read then (option lists, table rows, outline text),
    laid out as the whole text was (at its budget; `token_budget` for an observation rendered elsewhere), with
    a first line saying which reads return them. None when it is another page or that would save little."""
    if not seen_key or page_key(observation) != seen_key:
        return None
    obs = as_observation(observation)
    if not obs.text:
        return None
    budget = min(obs.token_budget or token_budget, token_budget)
    delta = render_unchanged(obs, since_step=since_step, token_budget=budget)
    if count_tokens(observation_text(obs, budget)) - count_tokens(delta) < DELTA_MIN_SAVING:
        return None
    return delta


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
        return "checked" if control.checked else "unchecked"
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
    )


def describe_delta(delta: StateDelta, *, url_said: bool = False) -> str:
    """The change in a line; `url_said`: the action's message already names the new URL (not said again)."""
    parts = []
    if delta.params_added or delta.params_removed or delta.params_changed:
        parts.append("URL " + params_diff(
            {**delta.params_removed, **{k: old for k, (old, _new) in delta.params_changed.items()}},
            {**delta.params_added, **{k: new for k, (_old, new) in delta.params_changed.items()}}))
    elif delta.url_before != delta.url_after and not url_said:
        parts.append(f"now at {delta.url_after}")
    if delta.controls_changed:
        parts.append("controls " + "; ".join(f"{k}: {b!r} -> {a!r}" for k, (b, a) in
                                               list(delta.controls_changed.items())[:6]))
    if delta.count_before != delta.count_after:
        parts.append(f"results {delta.count_before} -> {delta.count_after}")
    return ", ".join(parts)
