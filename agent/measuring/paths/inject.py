"""Faults injected into real-model decision paths: what the full agent's checks catch on a path a model took.

The faulty policy (agent/measuring/faulty.py) injects mistakes into the walkthroughs, which were written with
the checks in view. A real model's path was not: it sets controls by ref, reads in its own order, and words its
plan its own way. So each fault kind that applies to a path is injected into it (one fault per replay), the path
is replayed through the full agent against the strict fake server, and the fault counts as caught only when the
check that names it spoke before the answer was composed: a drift flag on the faulted gate, a verifier refusal
of the kind (pages, details, count) or a refused read. These are FAULT-INJECTED REPLAYS, not model results.

Where a fault needs the page (another option of the control, the table's row count), it is made at replay time
from the browser's structured observation, as the path's targets are.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agent.measuring.paths.path import DecisionPath, PathStep
from agent.measuring.paths.replay import PathPolicy, ReplayResult, replay_path
from browser.types import Observation
from graph.events import ExtractorEvent, WorkspaceEvent, read_events
from graph.plan.values import gate_key, values_match
from graph.tracking.state_reading import result_set_key

FaultKind = Literal["kept_default", "wrong_option", "narrower_window", "open_bound", "stale_read", "page_unread",
                    "detail_unopened", "rows_lost"]
FAULT_KINDS: tuple[FaultKind, ...] = ("kept_default", "wrong_option", "narrower_window", "open_bound", "stale_read",
                                      "page_unread", "detail_unopened", "rows_lost")
SETTERS = {"select", "fill", "check"}
READS = {"read_table", "extract_rows", "read_facts", "read_pdf", "page_facts"}
APPLIERS = {"submit", "click", "press"}
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")
_WINDOW_WORDS = re.compile(r"\b(from|to|start|end|since|until|before|after|min|max|begin)\b", re.I)


class PathFault(BaseModel):
    """One injected mistake: which step it alters and what the check that catches it must name."""

    kind: FaultKind
    step: int  # index into the path's steps
    names: str  # the gate label, the page or URL, or the table the catching check names
    note: str


def _label(step: PathStep) -> str | None:
    target = step.args.get("target")
    return target.get("shown_label") or target.get("label") if isinstance(target, dict) else None


def _is_bound(step: PathStep) -> bool:
    """A window bound: a date or year filled or chosen in a control whose label says which end it is."""
    value = str(step.args.get("value", step.args.get("option", ""))).strip()
    label = _label(step) or ""
    return step.tool in ("fill", "select") and bool(_ISO.match(value) or _YEAR.match(value)) \
        and bool(_WINDOW_WORDS.search(label))


def _is_start(step: PathStep) -> bool:
    return bool(re.search(r"\b(from|start|since|after|min|begin)\b", _label(step) or "", re.I))


def _shift(value: str, narrower_from_start: bool) -> str:
    """A bound moved inwards: a later start or an earlier end (a month for dates, a year for years)."""
    if _YEAR.match(value):
        return str(int(value) + (1 if narrower_from_start else -1))
    day = date.fromisoformat(value)
    return (day + timedelta(days=31 if narrower_from_start else -31)).isoformat()


def _urls(step: PathStep) -> list[Any]:
    """The pages a step opens: a goto's URL, a read's URL or URLs."""
    url = step.args.get("url")
    return url if isinstance(url, list) else [url] if url else []


def _plan_gates(plan: dict[str, Any] | None) -> list[dict[str, Any]]:
    gates = [*((plan or {}).get("gates") or [])]
    for phase in (plan or {}).get("phases") or []:
        gates += phase.get("gates") or []
    return [g for g in gates if isinstance(g, dict) and g.get("kind") != "window"]


def sets_planned_gate(step: PathStep, plan: dict[str, Any] | None) -> bool:
    """The setter sets a gate the plan names (a planned gate, what a kept default or a wrong option faults): its
    `gate` field names one, or its control's label is a gate's name (the binding's exact rule), or the value it
    sets is one a gate's typed target names (the plan's own words for the control). A path without a plan: any."""
    if plan is None:
        return True
    label = _label(step) or ""
    keys = {gate_key(label), gate_key(label.rsplit(": ", 1)[-1])} - {""}
    value = str(step.args.get("option", step.args.get("value", "")))
    for gate in _plan_gates(plan):
        target = gate.get("target") if isinstance(gate.get("target"), dict) else {}
        wanted = [str(v) for v in [target.get("value"), *(target.get("any_of") or [])] if v is not None]
        if gate_key(str(gate.get("name", ""))) in keys | {gate_key(str(step.args.get("gate", "")))} - {""}:
            return True
        if step.tool != "check" and any(values_match(value, w) for w in wanted):
            return True
    return False


def plan_faults(path: DecisionPath) -> list[PathFault]:
    """Each fault kind that applies to the path, at its first place (one replay each)."""
    steps = path.steps
    found: dict[str, PathFault] = {}

    def add(kind: FaultKind, i: int, names: str, note: str) -> None:
        found.setdefault(kind, PathFault(kind=kind, step=i, names=names, note=note))

    for i, step in enumerate(steps):
        label = _label(step)
        planned = sets_planned_gate(step, path.plan)
        if step.tool in SETTERS and label and not _is_bound(step) and planned:
            add("kept_default", i, label, f"step {i} ({step.tool} {label!r}) skipped: the control keeps its default")
        if step.tool == "select" and label and not _is_bound(step) and planned:
            add("wrong_option", i, label, f"step {i}: another option of {label!r} than {step.args.get('option')!r}")
        if _is_bound(step):
            add("narrower_window", i, label or "", f"step {i}: the bound {label!r} moved inwards")
            add("open_bound", i, label or "", f"step {i}: the bound {label!r} left empty")
        if step.tool in APPLIERS and i > 0 and steps[i - 1].tool in SETTERS \
                and any(s.tool in READS for s in steps[i + 1:i + 3]):
            add("stale_read", i, _label(steps[i - 1]) or "", f"step {i} ({step.tool}) dropped: the read that "
                "follows sees a form changed and not applied")
        if step.tool == "read_table" and step.args.get("all_pages"):
            add("page_unread", i, "pages", f"step {i}: read_table on its first page only")
            add("rows_lost", i, "count", f"step {i}: read_table keeps all but the last row (max_rows)")
        urls = step.args.get("url")
        opened_elsewhere = {str(u) for j, s in enumerate(steps) if j != i and (s.tool == "goto" or s.args.get(
            "into") == step.args.get("into")) for u in _urls(s)}  # a goto, or another read into the same table
        unopened = [u for u in urls or [] if str(u) not in opened_elsewhere] if isinstance(urls, list) else []
        if step.tool in ("read_facts", "extract_rows") and len(urls or []) > 1 and unopened:
            add("detail_unopened", i, str(unopened[-1]), f"step {i}: one of {len(urls)} listed pages not opened "
                "(one the path opens nowhere else)")
    return [found[k] for k in FAULT_KINDS if k in found]


def faulted_path(path: DecisionPath, fault: PathFault) -> DecisionPath:
    """The path with the fault's static part made (a step dropped or its arguments changed); the page-bound
    parts (another option, one row fewer) are made at replay time by `FaultyPathPolicy`."""
    steps = [s.model_copy(deep=True) for s in path.steps]
    step = steps[fault.step]
    if fault.kind in ("kept_default", "open_bound", "stale_read"):
        del steps[fault.step]
    elif fault.kind == "narrower_window":
        key = "value" if "value" in step.args else "option"
        step.args[key] = _shift(str(step.args[key]).strip(), _is_start(step))
    elif fault.kind == "page_unread":
        step.args["all_pages"] = False
    elif fault.kind == "detail_unopened":
        step.args["url"] = [u for u in step.args["url"] if str(u) != fault.names]
    return path.model_copy(update={"steps": steps})


PAGE_BOUND: tuple[FaultKind, ...] = ("wrong_option", "rows_lost", "page_unread")


class FaultyPathPolicy(PathPolicy):
    """The path's decisions, with the page-bound part of one fault made from the page the agent is on."""

    def __init__(self, path: DecisionPath, fault: PathFault, observation: Any):
        super().__init__(faulted_path(path, fault), observation)
        self.fault = fault
        self.made: str | None = None
        self.result_set: str | None = None  # a page or count fault: the result set whose read it altered
        self.page_size = False  # a stale read: the control left unapplied sets the page size

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        at = self.next
        reply = super().__call__(body)
        if at == self.fault.step and self.fault.kind == "stale_read":
            # the read after the dropped apply: is the control left unapplied the page's page size (the browser's
            # control kind)? Its rows are then the same set's, fewer per page: the loss is pages never read
            obs_now: Observation | None = self.observation()
            self.page_size = any(c.kind == "page_size" and c.label == self.fault.names
                                 for c in (obs_now.controls if obs_now else []))
            self.result_set = result_set_key(obs_now.url) if obs_now and obs_now.url else None
        if at != self.fault.step or self.fault.kind not in PAGE_BOUND:
            return reply
        call = reply["tool_calls"][0]
        obs: Observation | None = self.observation()
        self.result_set = result_set_key(obs.url) if obs and obs.url else None
        if self.fault.kind == "page_unread":  # made only where there is a page 2 to leave unread
            pages = obs.pagination.pages if obs and obs.pagination else None
            self.made = f"page 1 of {pages}" if pages and pages > 1 else None
        elif self.fault.kind == "wrong_option":
            control = next((c for c in (obs.controls if obs else []) if c.ref == call["arguments"]["target"].get("ref")
                            or c.label == self.fault.names), None)
            planned = str(call["arguments"].get("option", ""))
            others = [o.label for o in (control.options if control else [])
                      if o.label.strip() and gate_key(o.label) != gate_key(planned) and o.value.strip()]
            if others:
                call["arguments"]["option"] = self.made = others[0]
        else:
            table = next((t for t in (obs.tables if obs else []) if t.index == call["arguments"].get("table", 0)), None)
            total = (obs.pagination.total if obs and obs.pagination and obs.pagination.total else None) \
                or (table.total_rows if table else None)
            if total and total > 1:
                call["arguments"]["max_rows"] = total - 1
                self.made = f"max_rows {total - 1} of {total}"
        return reply


WINDOW_FAULTS = ("narrower_window", "open_bound")  # the plan's window gate names the From/To pair, not one bound
CHECK_FOR: dict[FaultKind, tuple[str, ...]] = {
    "page_unread": ("pages",), "rows_lost": ("count", "pages"), "detail_unopened": ("details",),
}


def _names_result(url: str, links: list[str]) -> bool:
    """The refusal names the listed result the faulted page belongs to: the page itself, or the result whose
    own page it lies under (a result's PDF, `/action/X/order.pdf`, is opened through the listed `/action/X`)."""
    return any(url == link or url.split("?", 1)[0].startswith(link.split("?", 1)[0].rstrip("/") + "/")
               for link in links)


def caught_by(fault: PathFault, result: ReplayResult, read_refusals: list[dict[str, Any]],
              result_set: str | None = None) -> str | None:
    """The check that caught the fault, naming what it altered, before the answer was composed; None if none.

    Read on the typed fields of flags and failures, never their text. A gate fault is caught by a drift flag on
    that gate (its `gate` or `label`; the tracker's, or the read check's when rows were read), or a verifier `gate`
    or `drift` failure whose `gates`/`labels` name it (a window fault: also a window flag, on the plan's window
    gate that names the pair). A page or count fault is caught by the verifier's check of that kind on the
    result set the faulted read took (`result_set`, when the replay saw it), a detail fault by the `details` check
    naming the page; a stale read by the read refused as stale."""
    key = gate_key(fault.names)
    for flag in result.outcome.drift_flags:
        on_gate = key and key in {gate_key(str(flag.get("gate", ""))), gate_key(str(flag.get("label", "")))}
        on_window = fault.kind in WINDOW_FAULTS and str(flag.get("rule", "")).startswith("window_")
        if fault.kind not in CHECK_FOR and (on_gate or on_window):
            return f"{flag.get('node') or 'state_tracker'}:{flag.get('rule')}"
    for report in result.outcome.verifier_reports:
        for failure in report.get("failures") or []:
            check = failure.get("check")
            if fault.kind in CHECK_FOR:
                if check not in CHECK_FOR[fault.kind]:
                    continue
                if fault.kind == "detail_unopened":
                    if _names_result(fault.names, failure.get("links") or []):
                        return f"verifier:{check}"
                elif result_set is None or failure.get("result_set") == result_set:
                    return f"verifier:{check}"
            elif check in ("gate", "drift") and key and key in {
                    gate_key(str(n)) for n in [*(failure.get("gates") or []), *(failure.get("labels") or [])]}:
                return f"verifier:{check}"
    if fault.kind == "stale_read" and any(r.get("stale") for r in read_refusals):
        return "read:" + next(str(r.get("node", "read")) for r in read_refusals if r.get("stale"))
    return None


def caught(fault: PathFault, result: ReplayResult, read_refusals: list[dict[str, Any]],
           policy: FaultyPathPolicy | None) -> str | None:
    """`caught_by`, with what the replay saw of the page: the result set the faulted read took, and for a stale
    read of a page-size control (the same rows, fewer per page: no row is stale, pages go unread) the [pages] or
    [count] refusal on that set."""
    result_set = policy.result_set if policy else None
    found = caught_by(fault, result, read_refusals, result_set)
    if found is None and fault.kind == "stale_read" and policy is not None and policy.page_size:
        paging = fault.model_copy(update={"kind": "page_unread"})
        found = caught_by(paging, result, [], result_set)
    return found


class FaultOutcome(BaseModel):
    """One faulted replay: was it caught before the answer, by which check, and the answer's exact match."""

    task: str
    path: str = ""  # the path file's name (two paths of one task)
    kind: FaultKind
    names: str
    note: str
    made: bool  # the fault was injected (a page-bound fault needs another option, or more than one row)
    caught_by: str | None
    exact_match: bool
    stop: str | None


def read_refusals(run_dir: Path) -> list[dict[str, Any]]:
    """The reads the graph refused, from the run's typed event log (a refused read answers with an error)."""
    events, _ = read_events(Path(run_dir) / "steps.jsonl")
    return [{"node": e.node, "message": e.error, "stale": bool(getattr(e, "stale", False))}
            for e in events if isinstance(e, ExtractorEvent | WorkspaceEvent) and getattr(e, "error", None)]


async def inject_faults(path: DecisionPath, *, origin: str, worker: Any, out_dir: Path,
                        kinds: tuple[FaultKind, ...] = FAULT_KINDS, name: str | None = None) -> list[FaultOutcome]:
    """Every fault kind that applies to the path, one replay each through the full agent, each in its own
    folder `<name>-<kind>` (`name`: the path file's, default its task: two paths of one task must not share one)."""
    live = path.with_origin(origin)
    outcomes: list[FaultOutcome] = []
    for fault in (f for f in plan_faults(live) if f.kind in kinds):
        made: list[FaultyPathPolicy] = []

        def policy_for(p: DecisionPath, obs: Any, fault: PathFault = fault,
                       made: list[FaultyPathPolicy] = made) -> FaultyPathPolicy:
            made.append(FaultyPathPolicy(p, fault, obs))
            return made[-1]

        run_dir = Path(out_dir) / f"{name or path.task}-{fault.kind}"
        result = await replay_path(live, origin=origin, worker=worker, out_dir=run_dir, policy_for=policy_for)
        needs_page = fault.kind in PAGE_BOUND
        outcomes.append(FaultOutcome(
            task=path.task, path=name or path.task, kind=fault.kind, names=fault.names, note=fault.note,
            made=not needs_page or bool(made and made[0].made),
            caught_by=caught(fault, result, read_refusals(run_dir), made[0] if made else None),
            exact_match=bool(result.score.get("exact_match")), stop=result.outcome.stop_reason))
    return outcomes


def fault_table(outcomes: list[FaultOutcome]) -> str:
    """The fault table on real paths (README, docs/results_log.md): per fault kind, how many injected faults were caught before the answer, and by what."""
    rows = ["| fault kind | injected | caught before the answer | by | EM under the fault |", "|---|---:|---:|---|---:|"]
    made = [o for o in outcomes if o.made]
    for kind in FAULT_KINDS:
        of_kind = [o for o in made if o.kind == kind]
        if not of_kind:
            continue
        caught = [o for o in of_kind if o.caught_by]
        by = ", ".join(sorted({str(o.caught_by).split(":")[0] for o in caught})) or "-"
        rows.append(f"| {kind} | {len(of_kind)} | {len(caught)} | {by} | "
                    f"{sum(o.exact_match for o in of_kind)}/{len(of_kind)} |")
    caught_all = sum(1 for o in made if o.caught_by)
    rows.append(f"| **all** | {len(made)} | **{caught_all}** ({100 * caught_all // max(1, len(made))}%) | | "
                f"{sum(o.exact_match for o in made)}/{len(made)} |")
    return "\n".join(rows)
