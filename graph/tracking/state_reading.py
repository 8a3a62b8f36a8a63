"""Reading the retrieval state off an observation: which value each control and URL parameter holds, what the
page applied, which result set a URL shows and which gates an action addressed.

Plain functions of the observation, so the tracker, the read check and the replay policies read a page one way.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from browser.types import ActionResult, Observation
from graph.plan.values import gate_key, norm_value, parse_date, values_match

PAGE_PARAMS = frozenset({"page", "p", "pg", "pageno", "page_no", "page_num", "pagenumber", "offset", "cursor", "start",
                         "startindex", "start_index"})
MAX_OPTIONS_KEPT = 200
STATE_CONTROL_KINDS = frozenset(
    {"select", "custom_select", "radio_group", "checkbox", "toggle", "text", "search", "date", "number",
     "range", "page_size", "tab"}
)


def result_set_key(url: str) -> str:
    """Which result set a URL shows: its path and non-page query parameters, order-independent."""
    parts = urlsplit(url)
    params = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=False) if k.casefold() not in PAGE_PARAMS)
    return parts.path + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "")

def _control_value(control) -> str:
    if control.kind in ("checkbox", "toggle"):
        return "on" if control.checked else "off"
    if control.kind == "tab":
        return control.label if control.checked else ""
    value = control.value or ""
    selected = [option for option in control.options if option.selected]
    if len(selected) > 1:  # a multi-select holds every option it shows chosen, not its first (a played run was
        return ", ".join(_option_text(option) for option in selected)  # flagged 'holds Idaho' under 'Utah, Idaho')
    for option in control.options:
        if option.selected or (value and option.value == value):
            return _option_text(option)
    return value


def _option_text(option) -> str:
    """Both forms, so a plan target given as label ('Environmental ...') or code ('epa') matches."""
    same = norm_value(option.label) == norm_value(option.value) or not option.value
    return option.label if same else f"{option.label} [{option.value}]"


def _url_values(obs: Observation) -> dict[str, tuple[str, str]]:
    """key -> (parameter, value) of the URL's state (its page parameters are no gate)."""
    return {gate_key(p): (p, ",".join(v for v in vs if v)) for p, vs in obs.query_state.items()
            if p.casefold() not in PAGE_PARAMS}


def _keys(control) -> list[str]:
    return [gate_key(n) for n in (control.name, control.label) if n]


def read_values(obs: Observation, result: ActionResult | None = None) -> dict[str, tuple[str, str, list]]:
    """key -> (value, label, evidence) from URL parameters, control values, chips and read-back."""
    found = {key: (value, param, ["url"]) for key, (param, value) in _url_values(obs).items()}
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS or control.disabled:
            continue
        value = _control_value(control)
        keys = _keys(control)
        key = next((k for k in keys if k in found), keys[0] if keys else None)
        if not key or (control.kind == "tab" and not value):
            continue
        # a URL parameter (or control) of the same key: its evidence kept, and its value if this one is empty
        old_value, _, evidence = found.get(key, ("", "", []))
        found[key] = (value or old_value, control.label, [*evidence, "control"])
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
    url = {key: value for key, (_, value) in _url_values(obs).items()}
    applied: dict[str, str] = {}
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS or control.kind in ("checkbox", "toggle", "tab") or control.disabled:
            continue
        key = next((k for k in _keys(control) if k in url), None)
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


def action_targets(action: dict | None, result: ActionResult | None = None) -> set[str]:
    """Gate keys an action deliberately addresses (so their change is intended, not drift). A target given by
    ref (as a model mostly gives it) is known by the control the browser resolved it to (`set_controls`)."""
    if not action:
        return set()
    keys: set[str] = {gate_key(label) for label in result.set_controls} if result is not None else set()
    for field in ("target", "start_target", "end_target"):
        target = action.get(field) or {}
        keys.update(gate_key(str(v)) for k, v in target.items() if v and k in ("label", "text", "selector"))
    keys.update(gate_key(k) for k in (action.get("params") or {}))
    keys.update(gate_key(k) for k in action.get("remove") or [])
    return keys


def control_shapes(obs: Observation) -> dict[str, tuple[str, list[str]]]:
    """gate key -> (control kind, option labels): what tells two controls with look-alike labels apart."""
    shapes: dict[str, tuple[str, list[str]]] = {}
    for control in obs.controls:
        if control.kind not in STATE_CONTROL_KINDS:
            continue
        options = [o.label for o in control.options][:MAX_OPTIONS_KEPT]
        for key in _keys(control):
            shapes.setdefault(key, (control.kind, options))
    return shapes
