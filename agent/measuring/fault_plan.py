"""Where a walkthrough can go wrong: the paper's failure taxonomy as places in a task's walkthrough.

Each fault class names the mistake an agent makes on state-gated sites (scope drift, criterion mismatch,
incomplete retrieval) and the walkthrough steps where it can be made. The choice of class and place is a
pure function of (seed, task id, walkthrough), so a fault-injected run is reproducible; whether the mistake
really changes anything is decided at run time by `agent.measuring.faulty` (a control that already holds the planned
value cannot be "kept at its default").
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agent.measuring.fault_classes import FAULT_CLASSES
from agent.measuring.scripted import (
    LEAVES_PAGE,
    READ_TOOLS,
    SETTERS,
    is_apply,
    plan_from_walkthrough,
    target_name,
)
from graph.plan.judge import gates_for
from graph.plan.values import gate_key
from graph.state import Plan
from graph.tracking.state_reading import PAGE_PARAMS
from tasks.offline.registry import Step

PAGE_SIZE = re.compile(r"per_page|page_size|rows_per|results_per|^size$")


@dataclass(frozen=True)
class FaultSite:
    """One class of mistake and the walkthrough steps where it may be made, the seeded choice first."""

    fault: str
    candidates: tuple[int, ...]
    skip_to: dict[int, int] = field(default_factory=dict)  # detail_skipped: a visit's first step -> after it


def _planned(plan: Plan) -> set[str]:
    return {gate_key(g.name) for g in gates_for(plan, every_phase=True)}


def _state_setter(step: Step, planned: set[str], tools: tuple[str, ...]) -> bool:
    if step["tool"] not in tools:
        return False
    name = gate_key(target_name(step["args"]))
    return bool(name) and name in planned and not PAGE_SIZE.search(name)


def _read_follows(steps: list[Step], index: int) -> bool:
    return any(s["tool"] in READ_TOOLS for s in steps[index + 1:])


def _apply_then_read(steps: list[Step]) -> list[int]:
    """Apply steps followed by a read before the page is left."""
    found = []
    for i, step in enumerate(steps):
        if not is_apply(step):
            continue
        for later in steps[i + 1:]:
            if later["tool"] in ("read_table", "download", "extract_rows"):
                found.append(i)
                break
            if later["tool"] in LEAVES_PAGE or (later["tool"] == "click" and not is_apply(later)):
                break
    return found


def last_goto(steps: list[Step], before: int) -> int | None:
    return next((i for i in range(before - 1, -1, -1) if steps[i]["tool"] == "goto"), None)


def _detail_visits(steps: list[Step]) -> dict[int, int]:
    """Unphased walkthroughs that open each result: first step of a visit -> the step after it (`back`)."""
    visits: dict[int, int] = {}
    opened: int | None = None
    extracted = False
    for i, step in enumerate(steps):
        if step["tool"] == "click" and not is_apply(step) and opened is None:
            opened, extracted = i, False
        elif step["tool"] == "extract_rows" and opened is not None:
            extracted = True
        elif step["tool"] == "back" and opened is not None:
            if extracted:
                visits[opened] = i + 1
            opened = None
        elif step["tool"] in ("goto", "finish"):
            opened = None
    return visits


def narrower_window(args: dict) -> dict | None:
    try:
        start, end = date.fromisoformat(args["start"]), date.fromisoformat(args["end"])
    except (KeyError, TypeError, ValueError):
        return None
    if (end - start).days < 2:
        return None
    middle = start + (end - start) / 2
    return {**args, "start": middle.isoformat()}


def other_year(url: str) -> str | None:
    parts = urlsplit(url)
    params = parse_qsl(parts.query)
    for n, (key, value) in enumerate(params):
        if key.casefold() not in PAGE_PARAMS and re.fullmatch(r"(19|20)\d\d", value):
            params[n] = (key, str(int(value) - 1))
            return urlunsplit(parts._replace(query=urlencode(params)))
    return None


def fault_sites(steps: list[Step], plan: Plan | None = None) -> list[FaultSite]:
    """Every fault class this walkthrough offers a place for (a class without one is left out)."""
    plan = plan or plan_from_walkthrough(steps)
    planned = _planned(plan)
    sites: list[FaultSite] = []
    kept = [i for i, s in enumerate(steps) if _state_setter(s, planned, ("select", "check")) and _read_follows(steps, i)]
    if kept:
        sites.append(FaultSite("kept_default", tuple(kept)))
    wrong = [i for i, s in enumerate(steps) if _state_setter(s, planned, ("select",)) and _read_follows(steps, i)]
    if wrong:
        sites.append(FaultSite("wrong_option", tuple(wrong)))
    applied = [i for i in _apply_then_read(steps)
               if (g := last_goto(steps, i)) is not None and any(s["tool"] in SETTERS for s in steps[g:i])]
    if applied:
        sites.append(FaultSite("navigation_reset", tuple(applied)))
    paged = [i for i, s in enumerate(steps) if s["tool"] == "read_table" and s["args"].get("all_pages")]
    if paged:
        sites.append(FaultSite("first_page_only", tuple(paged)))
    if plan.detail_pages and not plan.phases:
        visits = _detail_visits(steps)
        if len(visits) >= 2:
            sites.append(FaultSite("detail_skipped", tuple(visits), skip_to=visits))
    windows = [i for i, s in enumerate(steps)
               if (s["tool"] == "set_range" and narrower_window(s["args"]) and _read_follows(steps, i))
               or (s["tool"] == "goto" and i > 0 and other_year(s["args"]["url"]) and _read_follows(steps, i))]
    if windows:
        sites.append(FaultSite("wrong_window", tuple(windows)))
    stale = []
    for i in applied:
        g = last_goto(steps, i)
        first_setter = next((j for j in range(g or 0, i) if steps[j]["tool"] in SETTERS), None)
        if first_setter is not None and any(steps[j]["tool"] in SETTERS for j in range(first_setter + 1, i)):
            stale.append(first_setter)
    if stale:
        sites.append(FaultSite("stale_rows", tuple(dict.fromkeys(stale))))
    return sites


@functools.cache
def suite_classes(seed: int) -> dict[str, str]:
    """Task record -> fault class for the offline suite, balanced: records in a seeded order each take the
    class they offer that has been given least so far (seeded tie-break), so every class is injected about
    equally often instead of the commonest places (a select) taking most records."""
    from agent.measuring.scripted import WALKTHROUGH_DIR, load_walkthrough

    rng = random.Random(f"{seed}:suite")
    records = [f"{path.stem}{suffix}" for path in sorted(WALKTHROUGH_DIR.glob("*.json")) for suffix in ("", "-g")]
    rng.shuffle(records)
    given = dict.fromkeys(FAULT_CLASSES, 0)
    chosen: dict[str, str] = {}
    for record in records:
        offered = [s.fault for s in fault_sites(load_walkthrough(record))]
        if offered:
            least = min(given[f] for f in offered)
            chosen[record] = rng.choice([f for f in offered if given[f] == least])
            given[chosen[record]] += 1
    return chosen


def choose_fault(steps: list[Step], task_id: str, seed: int, plan: Plan | None = None,
                 only: tuple[str, ...] | None = None) -> FaultSite | None:
    """The seeded fault of one task record: a class among those the walkthrough offers (the suite's balanced
    assignment for offline records), then a place; the candidate places after the chosen one stay as
    fall-backs (used when the chosen one is a no-op at run time)."""
    sites = [s for s in fault_sites(steps, plan) if only is None or s.fault in only]
    if not sites:
        return None
    rng = random.Random(f"{seed}:{task_id}")
    assigned = suite_classes(seed).get(task_id) if only is None else None
    site = next((s for s in sites if s.fault == assigned), None) or rng.choice(sites)
    start = rng.randrange(len(site.candidates))
    return FaultSite(site.fault, site.candidates[start:], site.skip_to)





def read_after(steps: list[Step], index: int) -> list[Step]:
    """The read and extraction that follow an apply step (what a stale read repeats early)."""
    found: list[Step] = []
    for step in steps[index + 1:]:
        if step["tool"] in ("read_table", "download") and not found:
            found.append({**step, "args": {**step["args"], "all_pages": False}}
                         if step["tool"] == "read_table" else step)
        elif step["tool"] == "extract_rows":
            found.append(step)
            return found
        elif step["tool"] in LEAVES_PAGE:
            break
    return []


def apply_after(steps: list[Step], index: int) -> int | None:
    return next((i for i in range(index + 1, len(steps)) if is_apply(steps[i])), None)
