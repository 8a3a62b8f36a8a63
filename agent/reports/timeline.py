"""A task's `steps.jsonl` as one row per step: what was done, to what, what it changed, and what was flagged.

`steps.jsonl` (typed by graph/events.py) logs each step several times (the actor's tool call, the browser's action with its read-back,
the executor's result, the tracker's state, the extractor or workspace, the verifier). A reader wants one
line per step, so the events of a step are folded into a `StepRow`: the action and its target once, the URL
only when it changed, the effect (the page's own read-back of controls and URL, the retrieval state's delta,
rows read), and the flags (errors, drift, failed verification, invalid or refused calls, injected faults).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from graph.events import (
    ActorEvent,
    BrowserLine,
    ComposerEvent,
    ExecutorEvent,
    ExtractorEvent,
    PlannerEvent,
    RunEvent,
    StepEvent,
    TrackerEvent,
    VerifierEvent,
    WorkspaceEvent,
    read_events,
)

MAX_ROWS_PER_TASK = 300
_TARGET_KEYS = ("target", "start_target", "end_target")


@dataclass
class Flag:
    kind: str  # error | drift | verify | invalid | fault | repair | note
    text: str


@dataclass
class StepRow:
    step: str  # the step number, or "plan", "run", "end"
    action: str = ""
    target: str = ""
    url: str = ""  # path and query, only when it differs from the row before
    effect: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    screenshot: str = ""  # run-folder-relative path of the step's screenshot, when one was taken

    @property
    def css(self) -> str:
        kinds = {f.kind for f in self.flags}
        for kind in ("error", "verify", "drift", "fault", "invalid"):
            if kind in kinds:
                return kind
        return ""


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _target_shown(target: Any) -> str:
    """A plan gate's target as the graph shows it (`graph.plan.targets.show`); a run logged before targets were
    typed holds text."""
    from pydantic import TypeAdapter, ValidationError

    from graph.plan.targets import Target, show

    try:
        return show(TypeAdapter(Target).validate_python(target))
    except ValidationError:
        return str(target)


def _target_text(target: Any) -> str:
    """A control as a reader names it: its label or text, else its selector, with the ref kept short."""
    if not isinstance(target, dict):
        return _short(target, 60) if target not in (None, "") else ""
    name = target.get("label") or target.get("text") or target.get("selector")
    ref = target.get("ref")
    if name and ref:
        return f"'{_short(name, 60)}' [{ref}]"
    return f"'{_short(name, 60)}'" if name else (f"[{ref}]" if ref else "")


def describe_call(tool: str, args: dict[str, Any]) -> tuple[str, str]:
    """(action, target) of a tool call, without the null fields the schemas carry."""
    targets = [_target_text(args[k]) for k in _TARGET_KEYS if args.get(k)]
    rest = {k: v for k, v in args.items() if k not in _TARGET_KEYS and v not in (None, "", [], {})}
    if tool == "goto" and "url" in rest:
        return "goto", _path(str(rest.pop("url")))
    extras = " ".join(f"{k}={_short(v, 80)}" for k, v in rest.items())
    return f"{tool} {extras}".strip(), " → ".join(t for t in targets if t)


def _path(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme:
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _browser_effect(event: BrowserLine) -> list[str]:
    """What the action changed, from the line's delta fields (controls, URL parameters, result counts); the
    browser's message whole when it logged no change (its words are the reader's, never parsed here)."""
    controls = event.controls_changed if isinstance(event.controls_changed, dict) else {}
    effect = [f"controls {label}: {_short(repr(pair[0]), 50)} -> {_short(repr(pair[1]), 50)}"
              if isinstance(pair, list | tuple) and len(pair) == 2 else f"controls {label}: {_short(pair, 100)}"
              for label, pair in controls.items()]
    params = [f"+{k}={_short(_joined(v), 60)}" for k, v in _items(event.params_added)]
    params += [f"-{k}" for k, _ in _items(event.params_removed)]
    params += [f"{k}: {_short(v, 80)}" for k, v in _items(event.params_changed)]
    effect += [f"URL {', '.join(params)}"] if params else []
    before, after = event.count_before, event.count_after
    if after is not None and before != after:
        effect.append(f"results {before} → {after}")
    if not effect and event.ok is not False and event.message:
        effect.append(event.message)
    return [_short(e, 200) for e in effect]


def _joined(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)


def _items(params: dict[str, Any] | list[Any]) -> list[tuple[str, Any]]:
    return list(params.items()) if isinstance(params, dict) else [(str(p), None) for p in params]


def _state_delta(previous: dict[str, Any], values: dict[str, Any]) -> list[str]:
    changed = [f"{k}: {_short(previous[k], 50)} → {_short(v, 50)}" if k in previous else f"{k} = {_short(v, 60)}"
               for k, v in values.items() if previous.get(k) != v]
    return changed + [f"{k} cleared" for k in previous if k not in values]


@dataclass
class _Fold:
    rows: dict[str, StepRow] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    last_url: str = ""
    attempt: int = 0  # a retry or restart logs its steps again from step 1: its rows are new rows
    actor_step: int | None = None  # the step of the actor's latest call: the browser's lines belong to it

    def row(self, step: str) -> StepRow:
        key = f"{self.attempt}:{step}"
        if key not in self.rows:
            self.rows[key] = StepRow(step=step)
            self.order.append(key)
        return self.rows[key]

    def url(self, row: StepRow, url: Any) -> None:
        if url and str(url) != self.last_url:
            row.url = _short(_path(str(url)), 140)
            self.last_url = str(url)


def _fold(fold: _Fold, event: StepEvent, screenshots: dict[int, str]) -> None:
    if isinstance(event, RunEvent):
        kind = event.event
        if kind in ("new_attempt", "restart"):
            fold.attempt += 1
            fold.state, fold.tables, fold.last_url, fold.actor_step = {}, {}, "", None
        if kind in ("new_attempt", "restart", "bug"):
            row = fold.row(f"run:{kind}")
            row.step, row.action = "run", {"new_attempt": "retry: the task runs again from a clean slate",
                                           "restart": "restart after an interruption"}.get(kind, kind)
            if event.error:
                row.flags.append(Flag("error" if kind == "bug" else "note", _short(event.error, 300)))
        return
    if isinstance(event, PlannerEvent):
        row = fold.row("plan")
        if event.plan:
            gates = event.plan.get("gates") or []
            row.action = "plan"
            row.effect = ["gates: " + "; ".join(f"{g.get('name')} = {_short(_target_shown(g.get('target')), 60)}"
                                                for g in gates if isinstance(g, dict))] if gates else []
        elif event.invalid or event.error:
            row.action = row.action or "plan (failed)"
            row.flags.append(Flag("error" if event.error else "invalid", _short(event.invalid or event.error, 200)))
        return
    step = event.step
    if isinstance(event, ActorEvent) and isinstance(step, int):
        fold.actor_step = step
    # The browser counts its own actions (a workspace tool or a refused call is an actor step without one, so after
    # a repair browser 8 was actor 11): its line is shown under the actor's step that made the action, one numbering.
    shown = fold.actor_step if isinstance(event, BrowserLine) and fold.actor_step is not None else step
    row = fold.row(str(shown) if shown is not None else "end")
    if isinstance(event, ActorEvent):
        if event.is_call:
            row.action, row.target = describe_call(str(event.tool), event.args or {})
            note = event.note or {}
            if note.get("kind") == "fault":
                row.flags.append(Flag("fault", "injected fault"))
            elif note.get("kind") == "repair":
                row.flags.append(Flag("repair", "repair replay"))
            if event.refused_calls:
                row.flags.append(Flag("invalid", f"{event.refused_calls} extra call(s) refused"))
        if event.invalid:
            row.flags.append(Flag("invalid", f"invalid call: {_short(event.invalid, 200)}"))
        if event.error:
            row.flags.append(Flag("error", _short(event.error, 300)))
        if event.stop:
            row.flags.append(Flag("note", f"stop: {event.stop}"))
    elif isinstance(event, BrowserLine):  # the browser's own line
        fold.url(row, event.url)
        row.effect += _browser_effect(event)
        if event.ok is False:
            row.flags.append(Flag("error", _short(event.error or event.message, 300)))
        if isinstance(step, int) and step in screenshots:
            row.screenshot = screenshots[step]
    elif isinstance(event, ExecutorEvent):
        if not row.action:
            row.action = event.action or ""
        fold.url(row, event.url)
        if event.ok is False and not any(f.kind == "error" for f in row.flags):
            row.flags.append(Flag("error", _short(event.error or event.message, 300)))
    elif isinstance(event, TrackerEvent):
        fold.url(row, event.url)
        values = dict(event.values)
        if event.pages:
            values["page"] = f"{event.page}/{event.pages}"
        delta = _state_delta(fold.state, values)
        if delta:
            row.effect.append("state: " + "; ".join(delta))
        fold.state = values
        row.flags += [Flag("drift", _short(d if isinstance(d, str) else _drift_text(d), 160)) for d in event.drift]
    elif isinstance(event, ExtractorEvent):
        if event.error:
            row.flags.append(Flag("error", f"extract_rows: {_short(event.error, 260)}"))
        else:
            row.effect.append(f"read {event.rows or 0} row(s) into {event.into or 'answer'}")
    elif isinstance(event, WorkspaceEvent):
        if event.error:
            row.flags.append(Flag("error", f"{event.tool or 'extract_rows'}: {_short(event.error, 260)}"))
        else:
            grown = [f"{k} {fold.tables.get(k, 0)} → {n}" for k, n in event.tables.items() if fold.tables.get(k) != n]
            fold.tables.update(event.tables)
            if grown:
                row.effect.append("rows: " + ", ".join(grown))
            if event.sql:
                row.effect.append(f"derive: {_short(' '.join(event.sql.split()), 160)}")
    elif isinstance(event, VerifierEvent):
        if event.ok:
            row.effect.append("verified")
        for failure in event.failures:
            text = f"[{failure.get('check')}] {failure.get('message')}" if isinstance(failure, dict) else failure
            row.flags.append(Flag("verify", _short(text, 300)))
    elif isinstance(event, ComposerEvent):
        row.action = row.action or "compose"
        row.effect.append(f"answer: {event.rows} row(s){' (derived)' if event.derived else ''}, "
                          f"stop {event.stop_reason}")


def _drift_text(flag: Any) -> str:
    if isinstance(flag, dict):
        return ":".join(str(flag[k]) for k in ("rule", "gate") if flag.get(k)) or json.dumps(flag)
    return str(flag)


def step_rows(steps_path: Path, screenshots: dict[int, str] | None = None) -> tuple[list[StepRow], list[str]]:
    """The task's steps as rows, and what could not be read (bad lines, a cut-off file): never dropped silently,
    so a report on a killed run's partial file still renders and says what is missing."""
    if not steps_path.is_file():
        return [], [f"{steps_path.name} missing"]
    fold = _Fold()
    events, problems = read_events(steps_path)
    for event in events:
        _fold(fold, event, screenshots or {})
        if len(fold.order) > MAX_ROWS_PER_TASK:
            problems.append(f"more than {MAX_ROWS_PER_TASK} steps; the rest is in steps.jsonl")
            break
    rows = [fold.rows[k] for k in fold.order]
    for row in rows:
        row.effect = list(dict.fromkeys(row.effect))  # the browser and the tracker can say the same thing
    return rows, problems
