"""The typed state of one agent run.

Everything in here is JSON-friendly (TypedDicts of plain values plus LangChain messages) so the SQLite
checkpointer can persist it and a run can resume. The task part is the solver's view only: instruction,
output format, start URL, OutputSpec — never metadata, rubric, oracle answer or cardinality.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from graph.checks.failures import Failure
from graph.model_io.chat_protocol import chat_history
from graph.plan.targets import Target, Unknown, Window

GateKind = Literal["source", "scope", "filter", "window", "view", "sort", "search"]
Evidence = Literal["url", "control", "readback", "chip"]


# ---------------------------------------------------------------- plan (LLM boundary: pydantic)


class Gate(BaseModel):
    """One piece of retrieval state the answer depends on."""

    # the target is typed (graph/plan/targets.py); a window gate's target is a window (or unknown), and a window is
    # no other kind's, so the kind is never guessed from the target
    model_config = ConfigDict(extra="forbid")

    kind: GateKind
    name: str = Field(description="Control label or URL parameter as the site names it.")
    target: Target
    required: bool = True
    # the gate's binding on the page (graph/plan/binding.py), attached from the graph state's `bindings` when a
    # node loads the plan (`bound_plan`): not part of what the planner writes, so never in the Plan tool's schema
    _binding: Binding | None = PrivateAttr(default=None)

    @property
    def binding(self) -> Binding | None:
        return self._binding

    @model_validator(mode="after")
    def _window_kind(self) -> Gate:
        if self.kind == "window" and not isinstance(self.target, Window | Unknown):
            raise ValueError(f"gate {self.name!r}: a window's target is {{from, to}} (ISO dates or years, null: open)")
        if self.kind != "window" and isinstance(self.target, Window):
            raise ValueError(f"gate {self.name!r}: a {{from, to}} target is a window: kind 'window'")
        return self


class Phase(BaseModel):
    """One read of a chained task: what, into which table, under which gates."""

    model_config = ConfigDict(extra="forbid")

    read: str
    into: str
    gates: list[Gate] = Field(default_factory=list)
    detail_pages: bool = False


class Plan(BaseModel):
    """The gates the instruction implies, written from the instruction alone; revisable."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field("", description="Site or database.")
    gates: list[Gate] = Field(default_factory=list)
    read: dict[str, str] = Field(
        default_factory=dict, description="column -> where its value is read"
    )
    row_criteria: dict[str, str] = Field(
        default_factory=dict, description="column -> value every answer row must have"
    )
    all_pages: bool = Field(True, description="Every result page must be read.")
    detail_pages: bool = Field(False, description="Each listed result's own page must be opened.")
    stopping_rule: str = "all matching rows of the gated result set are read"
    phases: list[Phase] = Field(default_factory=list, description="For answers computed from several reads.")
    derivation: str = Field("", description="How the answer is computed from the phase tables.")

    def phase_for(self, table: str) -> Phase | None:
        return next((p for p in self.phases if p.into == table), None)


# ---------------------------------------------------------------- state parts (inside: TypedDicts)


class TaskView(TypedDict):
    task_id: str  # for logs and checkpoints only: never rendered into a prompt (released ids name the site)
    instruction: str
    output_format: str
    start_url: str | None
    output_spec: dict[str, Any]
    today: NotRequired[str]  # ISO date the run started: what the protocol gives besides the task text


class Clamp(TypedDict):
    """A planned value the page cannot show: its options or stated range end before it, so the value shown
    (the range's end) is the closest the site allows, not drift."""

    planned: str
    evidence: str  # what on the page shows it, e.g. "'End' offers 2001..2010"


class StateValue(TypedDict):
    value: str
    label: str  # the control label / parameter name as shown
    evidence: list[Evidence]
    set_at_step: int | None  # step of an agent action that set it; None = site default / side effect
    set_by: str | None  # kind of that action
    kind: NotRequired[str]  # the control's kind (select, date, ...) when a control shows it
    options: NotRequired[list[str]]  # its option labels (at most MAX_OPTIONS_KEPT), to tell look-alike gates apart
    clamped: NotRequired[Clamp]  # the plan's value cannot be had on this page (it shows why)
    applied: NotRequired[str]  # the URL's value where the control holds another (changed, not applied)
    first_seen: NotRequired[str]  # what it held when the page first showed it on this path: the site's default
    # unless the agent's own URL chose it; a value the page moved since (a shortcut button's side effect) is not it


class PendingValue(TypedDict):
    """A control changed since the page last showed results (the browser's fact, browser.applied)."""

    label: str
    value: str  # what it holds now, not applied
    shown: str  # what it held when the results shown were applied


class RetrievalState(TypedDict):
    url: str
    path: str
    values: dict[str, StateValue]  # gate key (normalised control label / URL parameter) -> value
    page: int | None
    pages: int | None
    result_count: int | None
    step: int
    pending: NotRequired[list[PendingValue]]  # controls changed and not applied: the table shown is stale


class SnapshotValue(TypedDict):
    """One value of the state a row was read in (graph.checks.gates.state_snapshot): empty ones too."""

    label: str
    value: str
    clamped: NotRequired[Clamp]


Snapshot = dict[str, SnapshotValue]  # gate key -> the value it held when the row was read


class Provenance(TypedDict):
    url: str
    state: Snapshot | None  # retrieval-state snapshot (None when provenance is ablated)
    drift: list[str]  # drift flags active when the row was read
    locator: str  # e.g. "table 0 row 3 (page 2 of 3)" or "pdf page 4"
    result_set: str  # path + non-page URL parameters: which result set the row belongs to
    page: int | None
    pages: int | None
    step: int


class EvidenceRow(TypedDict):
    """A row of an evidence table: its cells as read and where, when and in which state they were read. The
    provenance stays data here; only the query engine sees it as `_state`/`_drift` columns (graph/workspace)."""

    values: dict[str, str | None]
    provenance: Provenance
    empty: NotRequired[bool]  # the row a read of 0 rows leaves: "read, none" (its shared columns only)


class ReadRecord(TypedDict):
    """One extraction: which result set, which pages it covered, what the site said the total was. A read of 0
    rows (a header-only table, a "no results" page) is a record too: "read, none" is evidence."""

    step: int
    result_set: str
    pages_covered: list[int]
    pages: int | None
    site_total: int | None
    rows: int
    filtered: bool  # `where` was used, so counts cannot be compared with site totals
    complete: bool  # the read covered the whole result set (all pages, or an export)
    url: NotRequired[str]  # the page read
    columns: NotRequired[list[str]]  # the table's headers (what an empty read still shows)
    state: NotRequired[dict[str, Any] | None]  # the state snapshot it was read in (graph.checks.gates.state_snapshot)
    defaults: NotRequired[list[str]]  # choice controls at their site default that no gate names (said once)
    unbound: NotRequired[list[str]]  # required plan gates bound to no control at this read (said once)
    unresolved: NotRequired[list[str]]  # the read check's unresolved gates first said at this read (said once)
    rows_range: NotRequired[list[int]]  # [first, last] row of the set the page showed ('Showing 21-23 of 23')
    untaken: NotRequired[int]  # rows the site counts that this read could not take (not on the table read)
    truncated: NotRequired[bool]  # the browser cut the table read at a row cap: it held more rows than were taken


class Listing(TypedDict):
    """A result list that was read, with the link of each row (the detail pages a plan may need)."""

    step: int
    url: str
    result_set: str
    row_links: list[str]  # the first link of each row, absolute
    row_cells: NotRequired[list[list[str]]]  # the cells of those rows, aligned (what the list shows of each)
    kind: NotRequired[Literal["results", "links"]]  # a result list (default), or a page's table of item links


class OpenedPage(TypedDict):
    """A page opened from a listing's row (graph/checks/listings.py, `opened_from`): recorded when the browser shows
    it, so the detail check asks whether a listed result is in the set opened, never how much a URL looks like it."""

    step: int
    url: str  # the page as the browser showed it
    listing: str  # the listing's URL (`Listing.url`)
    row: int  # the row's index in that listing
    link: str  # the row's link (`Listing.row_links[row]`)


class DriftFlag(TypedDict):
    rule: Literal["gate_lost", "navigation_reset", "cascade_reset", "gate_mismatch", "window_narrower",
                  "window_wider"]
    gate: str
    label: str  # the control label as shown (the gate key may be a URL parameter name)
    before: str | None
    after: str | None
    step: int
    path: str  # the page path whose state drifted (a results page)
    message: str
    node: NotRequired[str]  # who raised it: the state tracker (default) or the extractor, when rows were read


class VerifierReport(TypedDict):
    step: int
    ok: bool
    failures: list[Failure]
    repair_goal: str | None
    notes: NotRequired[list[str]]  # reported, not refused: gates that resolve to no control, clamps accepted
    disputed: NotRequired[str]  # the model's reason for disputing this report's failures (composed anyway)


class ErrorRecord(TypedDict):
    step: int
    node: str
    kind: Literal["infra", "agent", "config", "bug"]
    error_class: str
    message: str


class Usage(TypedDict):
    steps: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    started_at: float  # epoch seconds (survives a resume, unlike a monotonic clock)
    elapsed_before_resume: float
    last_progress_at: float


class PendingCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]
    gate: NotRequired[str]  # a setter's `gate` field: the plan gate the model says this action sets


class Binding(TypedDict):
    """A plan gate bound once to the page's own identifiers (graph/plan/binding.py): the judge compares values on
    these keys and never grounds the gate by words again."""

    keys: list[str]  # the control's state key (normalised label / name / URL parameter), or a window's [From, To]
    label: str  # as the page shows it
    accepts: list[str]  # the option values the typed target stands for there ([]: the target's own values)
    by: Literal["rule", "model"]
    step: int
    default: NotRequired[str]  # the value it held untouched by the agent when bound: the site's default
    replaced: NotRequired[dict[str, Any]]  # the rule-made binding a model-made one replaced (logged, never silent)
    field: NotRequired[SearchField]  # a search gate's field selector (its terms box is `keys[0]`)


class SearchField(TypedDict):
    """The choice control a search gate's name is an option of (a field selector offering the fields by name): a search
    gate `<field> = x` holds only with x in the box AND that option chosen."""

    key: str
    label: str
    option: str  # the option the gate's name is, as the page shows it


def merge_tables(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """Workspace tables by name: a node returns the tables it wrote, whole; a name maps to None to drop it."""
    merged = {**(old or {}), **(new or {})}
    return {k: v for k, v in merged.items() if v is not None}


def new_usage(now: float) -> Usage:
    return Usage(steps=0, llm_calls=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0,
                 started_at=now, elapsed_before_resume=0.0, last_progress_at=now)


class AgentState(TypedDict, total=False):
    task: TaskView
    plan: dict[str, Any] | None
    messages: Annotated[list[AnyMessage], chat_history]  # checked against OpenAI's rules (graph/model_io/chat_protocol.py)
    retrieval: RetrievalState | None
    bindings: dict[str, Binding]  # plan gate id (graph.plan.binding.gate_id) -> its binding on the page
    history: Annotated[list[RetrievalState], operator.add]  # distinct retrieval states visited
    observation: dict[str, Any] | None  # latest browser.types.Observation dump
    seen_page: dict[str, Any] | None  # {key, step}: the page last shown to the actor whole (graph.prompting.render)
    last_action: dict[str, Any] | None  # the browser action just run
    last_result: dict[str, Any] | None  # its ActionResult dump, without the observation
    last_read: dict[str, Any] | None  # latest read_table/download/read_pdf payload, for the extractor
    tables: Annotated[dict[str, Any], merge_tables]  # the one store: name -> graph.evidence.evidence_tables.TableRecord (`answer` too)
    navigated_at: int | None  # step at which a workspace read opened a page (the state tracker runs next)
    listings: Annotated[list[Listing], operator.add]
    visited: Annotated[list[str], operator.add]  # every URL the browser showed, in order
    opened: Annotated[list[OpenedPage], operator.add]  # pages opened from a listing's row (the detail check)
    drift_flags: list[DriftFlag]  # currently active
    drift_log: Annotated[list[DriftFlag], operator.add]
    reports: Annotated[list[VerifierReport], operator.add]
    repair_goal: str | None
    repair_failures: list[Failure]  # the failures the repair goal renders, as data (what a policy in process reads)
    repairs: int
    skipped: dict[str, str]  # listed results the model left unopened on purpose (finish(skip=...)): link -> why
    disputed: str | None  # the model's reason for disputing a refusal (once): the answer is composed, marked so
    pending: PendingCall | None
    invalid_streak: int
    invalid_calls: int  # model replies the actor could not execute (prose, bad JSON, schema, unknown ref)
    context_trims: int  # actor calls whose earlier steps were summarised to fit the context window
    usage: Usage
    step: int
    order_by: list[str]
    stop_reason: str | None
    errors: Annotated[list[ErrorRecord], operator.add]
    nodes_run: Annotated[list[str], operator.add]
    answer: str | None
