"""`steps.jsonl`, typed: one model per event kind, the one definition its writers and its readers share.

A run's `steps.jsonl` holds, one JSON object a line, the events of the graph's nodes (`node`: run, planner,
actor, executor, state_tracker, extractor, workspace, verifier, composer; written through `StepLog`, which
checks each event against its model before it is written) and the browser's own action lines (no `node`;
written by `browser/trace.py`, which must not import graph/: `tests/test_step_events.py` checks its line
against `BrowserLine`). The kind is the `node`, or `browser` for a line with an `action` object.

Readers (`agent/reports/timeline.py`, `agent/reports/faults.py`, `agent/measuring/paths/record.py`) get typed events
from `read_events` and never look at keys. A line of another writer's version keeps its known fields (unknown
ones are dropped when read); a line that is not JSON or not an event is reported as one line, never fatal.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError

from browser.trace import Redactor


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _NodeEvent(_Event):
    t: float | None = None  # StepLog's wall-clock time
    step: int | None = None  # the graph step (None before the first actor step)


class _Spent(BaseModel):
    """What a model call cost (graph.nodes.common.usage_after)."""

    llm_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


class _Outcome(BaseModel):
    """What a browser action came to, as the executor logs it and the browser's tracer writes it."""

    ok: bool | None = None
    error: str | None = None
    message: str | None = None
    url: str | None = None


class RunEvent(_NodeEvent):
    """The run's own milestones: start, a restart of an interrupted or infra-ended thread, a retry's new attempt
    (agent/rundir/cells.py), a step interrupted past the wall budget, a bug."""

    node: Literal["run"] = "run"
    event: Literal["start", "restart", "new_attempt", "interrupted", "bug"]
    task_id: str | None = None
    model: str | None = None
    variant: str | None = None
    ablated: list[str] | None = None
    error: str | None = None
    traceback: str | None = None
    # a restart (agent/rundir/checkpoints.py): what the lost run had reached and spent
    at: str | None = None
    reason: Literal["interrupted", "infra"] | None = None
    interrupted_at_step: int | None = None
    interrupted_before: list[str] | None = None
    last_url: str | None = None
    checkpoint_created_at: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


class PlannerEvent(_NodeEvent, _Spent):
    """A plan made, a reply that was no valid plan (`invalid`, with its `attempt`), or a failed call (`error`)."""

    node: Literal["planner"] = "planner"
    plan: dict[str, Any] | None = None
    attempt: int | None = None
    invalid: str | None = None
    error: str | None = None


class ActorEvent(_NodeEvent, _Spent):
    """One of: a tool call (`tool`, `args`), an invalid reply (`invalid`), a failed model call (`error`, `kind`),
    a reply cut to its caps (`reply_cut`), a stop (`stop`: a budget before the step, or a repeated failure), the
    tables' rows judged again under a revised plan (`rejudged`)."""

    node: Literal["actor"] = "actor"
    tool: str | None = None
    call_id: str | None = None
    args: dict[str, Any] | None = None
    note: dict[str, Any] | None = None  # the policy's note on the call (graph.model_io.policy: walkthrough step, repair, fault)
    shown: dict[str, Any] | None = None  # the targets as the page showed them (graph.model_io.robust.shown_targets)
    prompt_chars: int | None = None
    refused_calls: int | None = None
    prompt_parts: dict[str, int] | None = None
    page_key: str | None = None
    observation_delta: bool | None = None
    invalid: str | None = None
    streak: int | None = None
    error: str | None = None
    kind: str | None = None  # a failed model call's cause: config | infra
    reply_cut: list[str] | None = None
    stop: str | None = None
    rejudged: dict[str, int] | None = None  # after revise_plan: per table, its rows flagged once read again

    @property
    def is_call(self) -> bool:
        """A tool call the actor made (a stop after a repeated failure names its tool but carries no args)."""
        return self.tool is not None and self.args is not None


class ExecutorEvent(_NodeEvent, _Outcome):
    """A browser action done (`ok`, the page's `url`), refused or failed (`error`), or a web search (`query`)."""

    node: Literal["executor"] = "executor"
    action: str | None = None
    browser_ms: float | None = None
    query: str | None = None


class TrackerEvent(_NodeEvent):
    """The retrieval state after a step: set values, page of pages, drift flags as `rule:gate`, and the plan gates
    bound at this step (gate id -> `graph.state.Binding`; a model-made one replacing a rule-made one keeps it)."""

    node: Literal["state_tracker"] = "state_tracker"
    url: str | None = None
    values: dict[str, Any] = {}
    page: int | None = None
    pages: int | None = None
    drift: list[Any] = []
    bound: dict[str, Any] = {}


class ExtractorEvent(_NodeEvent):
    """Rows read from a page (`rows`, `into`), or why they were not (`error`)."""

    node: Literal["extractor"] = "extractor"
    url: str | None = None
    into: str | None = None
    rows: int | None = None
    record: Any = None
    provenance: list[Any] | None = None
    error: str | None = None
    stale: bool | None = None  # the read was refused: the table shown is stale (controls changed, not applied)


class WorkspaceEvent(_NodeEvent):
    """A workspace tool (read_facts, derive): the tables' row counts after it, or its `error`."""

    node: Literal["workspace"] = "workspace"
    tool: str | None = None
    url: str | None = None
    into: str | None = None
    tables: dict[str, int] = {}
    sql: str | None = None
    inputs: list[str] | None = None
    error: str | None = None
    stale: bool | None = None  # the read was refused: the page's results are stale (controls changed, not applied)


class VerifierEvent(_NodeEvent):
    """A verification: passed, or its failures (sent back to the actor, or not)."""

    node: Literal["verifier"] = "verifier"
    ok: bool
    failures: list[Any] = []
    notes: list[str] = []
    send_back: bool | None = None
    dispute: str | None = None  # the model's reason for disputing the refusal: the answer composed over it


class ComposerEvent(_NodeEvent):
    """The answer composed: its rows, whether derived, why the run stopped."""

    node: Literal["composer"] = "composer"
    rows: int | None = None
    derived: bool | None = None
    stop_reason: str | None = None
    answer_lines: int | None = None


class BrowserLine(_Event, _Outcome):
    """The browser tracer's line per action (browser/trace.py `StepTracer.record`): the action, the page's
    read-back and what changed. `step` is the tracer's own count of actions."""

    time: float | None = None
    step: int | None = None
    action: dict[str, Any]
    readback: str | None = None
    query_state: dict[str, Any] = {}
    params_added: dict[str, Any] | list[Any] = {}
    params_removed: dict[str, Any] | list[Any] = {}
    params_changed: dict[str, Any] | list[Any] = {}
    controls_changed: list[Any] | dict[str, Any] = []
    count_before: int | None = None
    count_after: int | None = None
    elapsed_ms: float | None = None
    blocked_requests: list[str] = []
    screenshot: str | None = None


NODE_EVENTS: tuple[type[_Event], ...] = (RunEvent, PlannerEvent, ActorEvent, ExecutorEvent, TrackerEvent,
                                         ExtractorEvent, WorkspaceEvent, VerifierEvent, ComposerEvent)
_BY_KIND: dict[str, type[_Event]] = {**{m.model_fields["node"].default: m for m in NODE_EVENTS},
                                     "browser": BrowserLine}


def event_kind(value: Any) -> str | None:
    """The kind of a line (its `node`, or `browser` for the tracer's action line); None: no event."""
    if isinstance(value, _Event):
        return getattr(value, "node", "browser")
    if not isinstance(value, dict):
        return None
    if "node" in value:
        return value["node"] if value["node"] in _BY_KIND else None
    return "browser" if isinstance(value.get("action"), dict) else None


StepEvent = Annotated[
    Annotated[RunEvent, Tag("run")] | Annotated[PlannerEvent, Tag("planner")] | Annotated[ActorEvent, Tag("actor")]
    | Annotated[ExecutorEvent, Tag("executor")] | Annotated[TrackerEvent, Tag("state_tracker")]
    | Annotated[ExtractorEvent, Tag("extractor")] | Annotated[WorkspaceEvent, Tag("workspace")]
    | Annotated[VerifierEvent, Tag("verifier")] | Annotated[ComposerEvent, Tag("composer")]
    | Annotated[BrowserLine, Tag("browser")],
    Discriminator(event_kind),
]
STEP_EVENT: TypeAdapter[StepEvent] = TypeAdapter(StepEvent)


class EventError(ValueError):
    """An event a writer was about to log does not match its kind's model: a bug in the writer."""


def checked(event: dict[str, Any]) -> StepEvent:
    """The typed event of a dict a writer logs; raises `EventError` for an unknown kind, a field of the wrong
    type or a field its model does not name (so a new field is added here first, where readers see it)."""
    kind = event_kind(event)
    if kind is None:
        raise EventError(f"not a step event (no known node, no action): {sorted(event)}")
    unknown = set(event) - set(_BY_KIND[kind].model_fields)
    if unknown:
        raise EventError(f"{kind} event: field(s) {sorted(unknown)} not in graph/events.py")
    try:
        return STEP_EVENT.validate_python(event)
    except ValidationError as exc:
        raise EventError(f"{kind} event: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = error["loc"][1:] if error["loc"] and error["loc"][0] in _BY_KIND else error["loc"]  # the tag: said already
    return f"{'.'.join(str(p) for p in loc)}: {error['msg']}"


def parse_line(line: str) -> StepEvent:
    """One line of steps.jsonl as its event; ValueError with a one-line reason when it is none."""
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from exc
    if event_kind(value) is None:
        raise ValueError("not a step event (no known node, no action)")
    try:
        return STEP_EVENT.validate_python(value)
    except ValidationError as exc:
        raise ValueError(f"not a {event_kind(value)} event ({_first_error(exc)})") from exc


def read_events(path: Path) -> tuple[list[StepEvent], list[str]]:
    """The events of a steps.jsonl, and one line per line that could not be read (`line N: why`); a line a
    kill cut short is one such line, the rest is still read."""
    return events_from_text(path.read_text(encoding="utf-8"))


def events_from_text(text: str) -> tuple[list[StepEvent], list[str]]:
    """`read_events` of a steps.jsonl's text (read by a caller that caps its size)."""
    events: list[StepEvent] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            events.append(parse_line(line))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
    return events, problems


class StepLog:
    """The graph's writer of steps.jsonl: each event checked against its model (`checked`), redacted, appended
    and flushed, so an interrupted run keeps its trace. The browser's tracer writes its action lines to the
    same file, giving one timeline; both redact secrets with the same `Redactor`."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.redactor = Redactor.from_environment()

    def write(self, event: dict[str, Any]) -> None:
        event = self.redactor.json({"t": round(time.time(), 3), **event})
        checked(event)
        self.events.append(event)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(event, default=str) + "\n")
