"""What an action changed, in the agent's terms: URL parameters, control values (by label), result count."""

from __future__ import annotations

from browser.types import Control, Observation, StateDelta


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


def describe_delta(delta: StateDelta) -> str:
    parts = []
    if delta.params_added or delta.params_removed or delta.params_changed:
        parts.append("URL " + params_diff(
            {**delta.params_removed, **{k: old for k, (old, _new) in delta.params_changed.items()}},
            {**delta.params_added, **{k: new for k, (_old, new) in delta.params_changed.items()}}))
    elif delta.url_before != delta.url_after:
        parts.append(f"now at {delta.url_after}")
    if delta.controls_changed:
        parts.append("controls " + "; ".join(f"{k}: {b!r} -> {a!r}" for k, (b, a) in
                                               list(delta.controls_changed.items())[:6]))
    if delta.count_before != delta.count_after:
        parts.append(f"results {delta.count_before} -> {delta.count_after}")
    return ", ".join(parts)
