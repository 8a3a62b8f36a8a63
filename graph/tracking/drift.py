"""Loss rules: a gate the agent set, then lost to a reload, a "Back to results" link or a dependent control.

Drift is the paper's largest failure class (37%). A loss flag stays active until the value is restored, changed
on purpose, or a navigation to a URL resets the path.
"""

from __future__ import annotations

from browser.types import NAVIGATING_KINDS, SETTER_KINDS
from graph.plan.values import key_matches, values_match
from graph.prompting.page_fence import inline_data, page_repr
from graph.state import DriftFlag, RetrievalState

PLAN_RULES = ("gate_mismatch", "window_narrower", "window_wider")
NAVIGATIONS = NAVIGATING_KINDS  # opening a URL on purpose (browser.types.ACTION_SPECS; read_facts with url: one per page)


def last_on_path(history: list[RetrievalState], path: str) -> RetrievalState | None:
    return next((s for s in reversed(history) if s["path"] == path), None)


def carry_flags(flags: list[DriftFlag], state: RetrievalState, kind: str | None, targets: set[str]) -> list[DriftFlag]:
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


def lost_gates(before: RetrievalState, after: RetrievalState, kind: str | None, targets: set[str], *,
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
            message=f"{inline_data(old['label'] or key)} was {page_repr(old['value'])} (set at step "
                    f"{old['set_at_step']}), now {page_repr(new_value)}: {why}; set it again before reading rows",
        ))
    return flags


def dedupe_flags(flags: list[DriftFlag]) -> list[DriftFlag]:
    seen: dict[tuple[str, str | None], DriftFlag] = {}
    for flag in flags:
        seen.setdefault((flag["gate"], flag.get("path")), flag)
    return list(seen.values())
