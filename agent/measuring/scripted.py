"""A policy that replays a task's walkthrough as tool calls, for deterministic runs (graph/model_io/policy.py).

It is a policy, not a tape: it reacts to the graph's state at each turn the way a careful agent would. Drift
flags make it re-issue the walkthrough steps that set the flagged gates (plus the step that applied them); a
verifier repair after `finish` makes it read the missed pages (or restore the state) and extract again. It reads
the state as data (`TurnState`: the flags, the verifier's failures as fields), never the prompt's text, so
editing a prompt or a message cannot change what it does; and the drift-repair and verifier-repair paths of the
graph are exercised by real reactions to the graph's own output.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from langchain_core.messages import AIMessage, AnyMessage
from pydantic import BaseModel, PrivateAttr

from browser.tokens import count_tokens
from browser.types import NAVIGATING_KINDS, SETTER_KINDS
from graph.checks.failures import Failure
from graph.model_io.policy import CALL_NOTE, PolicyUnavailable, TurnState
from graph.plan.targets import AnyOf, Checked, Value, Window
from graph.plan.values import gate_key, values_match
from graph.settings import PlanSource
from graph.state import Gate, Phase, Plan
from graph.tools.tool_specs import ROW_WRITERS, SOURCE_READS, TOOL_SPECS
from graph.tracking.state_reading import PAGE_PARAMS
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step

WALKTHROUGH_DIR = Path(__file__).resolve().parents[2] / "tasks" / "offline" / "data" / "walkthroughs"
HELDOUT_WALKTHROUGH_DIR = WALKTHROUGH_DIR.parents[1] / "heldout" / "walkthroughs"  # the held-out set (offline-heldout)
SETTERS = SETTER_KINDS  # the steps that set a state value (browser.types.ACTION_SPECS)
EXTRACT_TOOLS = ROW_WRITERS  # the calls that put rows into a table (`into`): graph/tools/tool_specs.py
READ_TOOLS = SOURCE_READS | ROW_WRITERS  # every call that brings evidence in
# after these a walkthrough is elsewhere: a navigation the actor calls, going back, finishing
LEAVES_PAGE = frozenset({k for k in NAVIGATING_KINDS if TOOL_SPECS[k].node} | {"back", "finish"})
APPLY_WORDS = re.compile(r"search|apply|filter|update|submit|go\b|show|refresh", re.IGNORECASE)
LOSS_RULES = ("navigation_reset", "gate_lost", "cascade_reset")
TABLE_CHECKS = frozenset({"drift", "gate", "pages", "details"})  # failures repaired by reading a table again


class WalkthroughNotFound(PolicyUnavailable):
    pass


def base_id(task_id: str) -> str:
    return task_id[:-2] if task_id.endswith("-g") else task_id


def _with_origin(value: Any, origin: str | None) -> Any:
    if origin is None:
        return value
    if isinstance(value, str):
        return value.replace(PLACEHOLDER_ORIGIN, origin.rstrip("/"))
    if isinstance(value, list):
        return [_with_origin(v, origin) for v in value]
    if isinstance(value, dict):
        return {k: _with_origin(v, origin) for k, v in value.items()}
    return value


def load_walkthrough(task_id: str, *, origin: str | None = None, seed: int | None = None) -> list[Step]:
    """The offline walkthrough of a task: the exported JSON if present, else the site module's own."""
    bid = base_id(task_id)
    path = WALKTHROUGH_DIR / f"{bid}.json"
    if not path.exists() and (HELDOUT_WALKTHROUGH_DIR / f"{bid}.json").exists():
        path = HELDOUT_WALKTHROUGH_DIR / f"{bid}.json"
    if path.exists():
        raw = json.loads(path.read_text(encoding="utf-8"))
        steps = raw["steps"] if isinstance(raw, dict) else raw
    else:
        from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data

        steps = None
        for site in discover_sites():
            if f"_{site.prefix}_" in f"_{bid}_":
                steps = site.walkthroughs(site_data(site.prefix, seed or DEFAULT_SEED)).get(bid)
                if steps is not None:
                    break
        if steps is None:
            raise WalkthroughNotFound(f"no walkthrough for task {task_id!r} (looked in {path} and the site modules)")
    return [{"tool": s["tool"], "args": _with_origin(copy.deepcopy(s.get("args") or {}), origin),
             **({"phase_details": True} if s.get("phase_details") else {})} for s in steps]


# ---------------------------------------------------------------- walkthrough -> plan


def _into(step: Step) -> str:
    """The table an extraction writes into (`answer` when it names none)."""
    return step["args"].get("into") or "answer"


def target_name(args: dict[str, Any], field: str = "target") -> str:
    target = args.get(field) or {}
    return target.get("label") or target.get("text") or target.get("selector") or target.get("ref") or ""


def _step_gates(step: Step) -> list[Gate]:
    """The gates one walkthrough step sets."""
    tool, args = step["tool"], step["args"]
    gates: list[Gate] = []
    if tool == "select":
        gates.append(Gate(kind="filter", name=target_name(args), target=Value(value=args["option"])))
    elif tool == "fill":
        name = target_name(args)
        kind = "search" if re.search(r"search|query|term|keyword", name, re.IGNORECASE) else "filter"
        gates.append(Gate(kind=kind, name=name, target=Value(value=args["value"])))
    elif tool == "check":
        gates.append(Gate(kind="filter", name=target_name(args), target=Checked(checked=args.get("checked", True))))
    elif tool == "set_range":
        gates.append(Gate(kind="window", name=target_name(args, "start_target"),
                          target=Window(start=args["start"] or None, end=args["end"] or None)))
    elif tool == "set_url_params":
        for key, value in (args.get("params") or {}).items():
            if key.casefold() not in PAGE_PARAMS:
                gates.append(Gate(kind="filter", name=key, target=AnyOf(any_of=value, together=True)
                                  if isinstance(value, list) and len(value) > 1 else
                                  Value(value=value[0] if isinstance(value, list) else str(value))))
    elif tool == "goto":
        for key, value in parse_qsl(urlsplit(args["url"]).query):
            if key.casefold() not in PAGE_PARAMS:
                gates.append(Gate(kind="scope", name=key, target=Value(value=value)))
    return gates


def policy_plan(task_id: str, steps: list[Step], plans: PlanSource, *, origin: str | None = None
                ) -> dict[str, Any] | None:
    """The plan a policy answers the planner with: None for the walkthrough's own (computed when asked), or a played
    model's blind plan on the walkthrough's phases (agent/measuring/blind_plans.py)."""
    if plans == "walkthrough":
        return None
    from agent.measuring.blind_plans import load_blind_plan, on_walkthrough_phases

    return on_walkthrough_phases(load_blind_plan(task_id, origin=origin), plan_from_walkthrough(steps)).model_dump()


def plan_from_walkthrough(steps: list[Step]) -> Plan:
    """The gates a careful reader of the instruction would list: what the walkthrough sets."""
    gates = [g for step in steps for g in _step_gates(step)]
    unique = {(g.kind, gate_key(g.name)): g for g in gates}
    paged = any(s["tool"] == "read_table" and s["args"].get("all_pages") for s in steps)
    phases = _phases(steps)
    derivation = next((s["args"]["sql"] for s in reversed(steps) if s["tool"] == "derive"), "")
    return Plan(source="offline site", gates=[] if phases else list(unique.values()), all_pages=True,
                detail_pages=_detail_visits(steps) >= 2, phases=phases, derivation=derivation,
                stopping_rule="every result page read" if paged else "the gated result set is read")


def _phases(steps: list[Step]) -> list[Phase]:
    """Walkthroughs that read into named tables: one phase per table, under the gates set before its reads
    (a gate set to different values for the same table is left out: the phase cannot name one). A phase is
    marked as reading each listed result's page only when the walkthrough says so (`"phase_details": true`
    on a read_facts step): a walkthrough may open a chosen subset on purpose."""
    gates: dict[str, Gate] = {}
    by_table: dict[str, dict[str, dict[str, Gate]]] = {}
    details: dict[str, int] = {}
    for step in steps:
        tool = step["tool"]
        if tool == "goto":
            gates = {g.name: g for g in _step_gates(step)}
        elif tool in SETTERS:
            gates.update({g.name: g for g in _step_gates(step)})
        into = _into(step) if tool in EXTRACT_TOOLS else "answer"
        if into != "answer":
            seen = by_table.setdefault(into, {})
            for name, gate in gates.items():
                seen.setdefault(name, {})[str(gate.target)] = gate
            details[into] = details.get(into, 0) + (1 if step.get("phase_details") else 0)
    return [Phase(read=f"rows into {name}", into=name, detail_pages=details[name] > 0,
                  gates=[next(iter(v.values())) for v in seen.values() if len(v) == 1])
            for name, seen in by_table.items()]


def _detail_template(steps: list[Step]) -> list[Step]:
    """What the walkthrough does on one result's own page: the steps after opening it, up to its extraction."""
    start = None
    for i, step in enumerate(steps):
        if step["tool"] == "click" and not is_apply(step):
            start = i
        elif step["tool"] == "extract_rows" and start is not None:
            return steps[start + 1: i + 1]
        elif step["tool"] in LEAVES_PAGE:
            start = None
    return []


def _detail_visits(steps: list[Step]) -> int:
    """Clicks on a result (not an apply button) that lead to an extraction before leaving the page."""
    visits, opened = 0, False
    for step in steps:
        if step["tool"] == "click" and not is_apply(step):
            opened = True
        elif step["tool"] == "extract_rows" and opened:
            visits, opened = visits + 1, False
        elif step["tool"] in LEAVES_PAGE:
            opened = False
    return visits


# ---------------------------------------------------------------- the policy


def _step_sets(step: Step, gate: str) -> bool:
    tool, args = step["tool"], step["args"]
    names: list[str] = []
    if tool in ("select", "fill", "check"):
        names = [target_name(args)]
    elif tool == "set_range":
        names = [target_name(args, "start_target"), target_name(args, "end_target")]
    elif tool == "set_url_params":
        names = list(args.get("params") or {})
    elif tool == "goto":
        names = [k for k, _ in parse_qsl(urlsplit(args["url"]).query)]
    keys = [gate_key(n) for n in names if n]
    return any(k == gate or (len(k) >= 3 and (k in gate or gate in k)) for k in keys)


def revise_target(plan: dict[str, Any], flag: dict[str, Any], target: Any) -> dict[str, Any] | None:
    """The plan with the flagged gate's target (the plan's or a phase's, named as the flag names it, whose target
    the flag shows) set to `target`; None when no gate of the plan is that one."""
    revised = copy.deepcopy(plan)
    names = {gate_key(flag["label"]), flag["gate"]}
    found = False
    for gates in [revised.get("gates") or [], *((p.get("gates") or []) for p in revised.get("phases") or [])]:
        for gate in gates:
            if gate_key(gate["name"]) in names and str(Gate.model_validate(gate).target) == flag["before"]:
                gate["target"], found = target.model_dump(by_alias=True), True
    return revised if found else None


def is_apply(step: Step) -> bool:
    """A step that applies what the form holds (submit, Enter, a Search/Apply/Show button)."""
    if step["tool"] in ("submit", "press"):
        return True
    return step["tool"] == "click" and bool(APPLY_WORDS.search(target_name(step["args"])))


def restore_steps(steps: list[Step], cursor: int, gates: list[str]) -> list[Step]:
    """Walkthrough steps before `cursor` that set the drifted gates, then the step that applied them."""
    done = steps[:cursor]
    if gates:
        picked = [i for i, s in enumerate(done) if any(_step_sets(s, g) for g in gates)]
    else:  # every gate: replay the state-building steps since the last goto
        start = max((i for i, s in enumerate(done) if s["tool"] == "goto"), default=0)
        picked = [i for i in range(start, len(done)) if done[i]["tool"] in SETTERS | {"goto"}]
    if not picked:
        return []
    for i in range(picked[-1] + 1, len(done)):
        if is_apply(done[i]):
            picked.append(i)
            break
        if done[i]["tool"] in LEAVES_PAGE | {"read_table", "extract_rows"}:
            break
    return [copy.deepcopy(done[i]) for i in sorted(set(picked))]


_RETURN = re.compile(r"\bback\b|\breturn\b", re.IGNORECASE)


def _detours(done: list[Step], start: int, end: int) -> set[int]:
    """Visits that read nothing and came back (open a result, then "Back to results"): a re-read leaves them out,
    since such a return is what resets the state."""
    left_out: set[int] = set()
    for i in range(start, end):
        if done[i]["tool"] != "click" or is_apply(done[i]) or _RETURN.search(target_name(done[i]["args"])):
            continue
        for j in range(i + 1, end):
            tool = done[j]["tool"]
            if tool == "back" or (tool == "click" and _RETURN.search(target_name(done[j]["args"]))):
                left_out.update(range(i, j + 1))
            if tool not in ("wait_for", "scroll"):  # only a return straight after the visit makes it a detour
                break
    return left_out


def _late_gates(done: list[Step], last_read: int) -> tuple[list[int], int | None]:
    """Setters made after the last read on the same page, with nothing read after them anywhere (a gate set too
    late for the rows it governs), and the click that applied them: (their indices, the apply's index or None).
    A setter followed by any later read sets the state of that read (a next phase), so none is late then."""
    if any(s["tool"] in READ_TOOLS for s in done[last_read + 1:]):
        return [], None
    setters: list[int] = []
    for i in range(last_read + 1, len(done)):
        step = done[i]
        if step["tool"] in SETTERS:
            setters.append(i)
        elif is_apply(step) or (setters and step["tool"] == "click"):  # the first click after them submits them
            return (setters, i) if setters else ([], None)
        elif step["tool"] in ("goto", "back", "click"):
            break
    return setters, None


def reread_steps(done: list[Step], tables: str | set[str], *, all_pages: bool = False) -> list[Step]:
    """Read discarded tables again the way they were read: every page each was extracted on, each reached as
    before. The walkthrough from the navigation that opened their first read up to their last read, without
    the extractions into other tables (a read_facts into another table that opened a page becomes a plain
    goto of that page) and without derivations; tables read on the same pages are read in one pass. The planned
    state comes first: a gate set only after the last read (on that page, nothing read after it) is set with the
    others before the first read's apply, so no page is read again before it holds."""
    tables = {tables} if isinstance(tables, str) else tables
    reads = [i for i, s in enumerate(done) if s["tool"] in EXTRACT_TOOLS and _into(s) in tables]
    if not reads:
        return []
    start = max((i for i in range(reads[0] + 1) if done[i]["tool"] == "goto"), default=0)
    late, late_apply = _late_gates(done, reads[-1])
    segment: list[Step] = []
    detours = _detours(done, start, reads[-1] + 1)
    restored = not late
    for index in range(start, reads[-1] + 1):
        if index in detours:
            continue
        step = copy.deepcopy(done[index])
        if not restored and (is_apply(step) or step["tool"] in READ_TOOLS):
            segment += [copy.deepcopy(done[i]) for i in late]
            if not is_apply(step) and late_apply is not None:
                segment.append(copy.deepcopy(done[late_apply]))
            restored = True
        if step["tool"] in EXTRACT_TOOLS and _into(step) not in tables:
            if step["tool"] == "read_facts" and step["args"].get("url"):
                segment.append({"tool": "goto", "args": {"url": step["args"]["url"]}})
            continue
        if step["tool"] in ("derive", "finish", "discard_rows", "revise_plan"):
            continue
        if all_pages and step["tool"] == "read_table":
            step["args"]["all_pages"] = True
        segment.append(step)
    return segment


class ScriptedPolicy(BaseModel):
    """Replays `steps` (walkthrough format) as tool calls; answers the planner with a Plan."""

    steps: list[dict[str, Any]]
    plan_args: dict[str, Any] | None = None  # what the planner is answered with; None: plan_from_walkthrough(steps)
    ignore_drift: bool = False  # a careless policy: reads through drift flags, only the verifier brings it back

    _cursor: int = PrivateAttr(default=0)
    _calls: int = PrivateAttr(default=0)  # actor calls answered so far
    _queue: list[tuple[str, Step]] = PrivateAttr(default_factory=list)
    _notes: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)  # call id -> what the call is (logged)
    _handled: set[tuple[str, str]] = PrivateAttr(default_factory=set)
    _repairs: int = PrivateAttr(default=0)
    _verifier_rounds: int = PrivateAttr(default=0)
    _transcript: list[str] = PrivateAttr(default_factory=list)

    @property
    def transcript(self) -> list[str]:
        """Every message text this policy was shown (tests check what reached the prompts)."""
        return self._transcript

    @classmethod
    def for_task(cls, task_id: str, *, origin: str | None = None, plans: PlanSource = "walkthrough") -> ScriptedPolicy:
        steps = load_walkthrough(task_id, origin=origin)
        return cls(steps=steps, plan_args=policy_plan(task_id, steps, plans, origin=origin))

    async def act(self, messages: list[AnyMessage], tools: list[dict[str, Any]], state: TurnState) -> AIMessage:
        call_id, step = self._next(state)
        self._calls += 1
        return self._reply(messages, tools, step["tool"], step["args"], call_id, self._notes.get(call_id))

    async def plan(self, messages: list[AnyMessage], tool: dict[str, Any]) -> AIMessage:
        args = self.plan_args or plan_from_walkthrough(self.steps).model_dump()
        return self._reply(messages, [tool], tool["function"]["name"], args, "plan-0")

    def records(self) -> dict[str, Any]:
        return {}

    def _reply(self, messages: list[AnyMessage], tools: list[dict[str, Any]], name: str, args: dict[str, Any],
               call_id: str, note: dict[str, Any] | None = None) -> AIMessage:
        """One tool call, with the usage a model would report for this prompt (the token budget is kept), and
        what the call is as data (`note`: a walkthrough step, a repair, an injected fault) for the trace."""
        self._transcript.extend(str(m.content) for m in messages)
        prompt_tokens = sum(count_tokens(str(m.content)) for m in messages) + count_tokens(json.dumps(tools))
        completion_tokens = count_tokens(json.dumps({"name": name, "arguments": args}))
        return AIMessage(
            content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}],
            usage_metadata={"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens},
            response_metadata={CALL_NOTE: note} if note else {},
        )

    # -- policy

    def _next(self, state: TurnState) -> tuple[str, Step]:
        if not self._queue and state.repairs > self._verifier_rounds:
            self._verifier_rounds = state.repairs
            self._plan_verifier_repair(state.failures)
        if not self._queue and not self.ignore_drift:
            self._plan_correction(state.drift_flags)
        if not self._queue and not self.ignore_drift:
            self._plan_drift_repair(state.drift_flags)
        if self._queue:
            return self._queue.pop(0)
        return self._walkthrough_step(state)

    def _walkthrough_step(self, state: TurnState) -> tuple[str, Step]:
        """The next step of the walkthrough itself (a fault-injecting policy changes what it issues here)."""
        if self._cursor < len(self.steps):
            index = self._cursor
            self._cursor += 1
            return self._noted(f"wt-{index}", {"kind": "walkthrough", "step": index}), copy.deepcopy(self.steps[index])
        return self._noted(f"end-{self._calls}", {"kind": "finish"}), self._finish_step()

    def _noted(self, call_id: str, note: dict[str, Any]) -> str:
        self._notes[call_id] = note
        return call_id

    def _finish_step(self) -> Step:
        return next((copy.deepcopy(s) for s in reversed(self.steps) if s["tool"] == "finish"),
                    {"tool": "finish", "args": {}})

    def _enqueue(self, steps: list[Step]) -> None:
        self._repairs += 1
        self._queue = [(self._noted(f"rp-{self._repairs}-{j}", {"kind": "repair", "round": self._repairs}), s)
                       for j, s in enumerate(steps)]

    def _plan_correction(self, flags: list[Any]) -> None:
        """A plan/action disagreement on a value the walkthrough itself chose is the plan's mistake, not the
        page's: answer it as a model would, with `revise_plan` naming the value set (a value the policy got
        wrong, an injected mistake, is no choice of the walkthrough and is left to be repaired)."""
        if self.plan_args is None:
            return
        done = self.steps[: self._cursor]
        for flag in flags:
            if flag["rule"] != "gate_mismatch" or ("plan", flag["gate"], str(flag["after"])) in self._handled:
                continue
            chosen = next((g for step in reversed(done) if _step_sets(step, flag["gate"])
                           for g in _step_gates(step)), None)
            if chosen is None or not values_match(flag["after"], str(chosen.target)):
                continue
            revised = revise_target(self.plan_args, flag, chosen.target)
            if revised is None:
                continue
            self._handled.add(("plan", flag["gate"], str(flag["after"])))
            self.plan_args = revised
            self._enqueue([{"tool": "revise_plan", "args": {
                "plan": revised, "reason": f"the site's {flag['label']!r} is {str(chosen.target)!r} for what the plan "
                                           f"called {flag['before']!r}"}}])
            return

    def _plan_drift_repair(self, flags: list[Any]) -> None:
        fresh = [f for f in flags if f["rule"] in LOSS_RULES and (f["gate"], str(f["before"])) not in self._handled]
        if not fresh:
            return
        self._handled.update((f["gate"], str(f["before"])) for f in fresh)
        steps = restore_steps(self.steps, self._cursor, [k for f in fresh for k in (f["gate"], gate_key(f["label"]))])
        if steps:
            self._enqueue(steps)

    def _table_repair(self, tables: list[str], failures: list[Failure]) -> list[Step]:
        """Discard each failed table, restore the state it was read in, read and extract it again (or reopen its
        detail pages), then rerun the walkthrough's derivations."""
        done = self.steps[: self._cursor]
        steps: list[Step] = []
        reread: set[str] = set()
        for table in tables:
            reads = [s for s in done if s["tool"] in EXTRACT_TOOLS and _into(s) == table]
            per_page = [s for s in reads if s["tool"] == "read_facts" and s["args"].get("url")]
            missing = next((f.get("links") or [] for f in failures if f["check"] == "details" and f.get("table") == table),
                           [])
            if missing and per_page:  # read the listed pages it skipped, like the ones it read
                for url in missing:
                    steps.append({"tool": "read_facts", "args": {**copy.deepcopy(per_page[-1]["args"]), "url": url}})
                continue
            steps.append({"tool": "discard_rows", "args": {"table": table, "all_rows": True}})
            if per_page:
                steps += copy.deepcopy(reads)  # one call per detail page, each opening its page
                continue
            reread.add(table)
        if reread:  # tables read on the same pages (one profile page feeds several) are read again in one pass
            steps += reread_steps(done, reread, all_pages=_failed(failures, "pages"))
        steps += [copy.deepcopy(s) for s in done if s["tool"] == "derive"]
        return steps

    def _plan_verifier_repair(self, failures: list[Failure]) -> None:
        done = self.steps[: self._cursor]
        last_read = next((s for s in reversed(done) if s["tool"] == "read_table"), None)
        last_extract = next((s for s in reversed(done) if s["tool"] == "extract_rows"), None)
        steps: list[Step] = []
        tables = list(dict.fromkeys(f["table"] for f in failures if f["check"] in TABLE_CHECKS and f.get("table")))
        nothing_read = any(f.get("code") == "nothing_extracted" for f in failures)
        if nothing_read and any(s["tool"] == "derive" for s in done):
            # no derived answer (its input reads found nothing): build every table again as the walkthrough did
            tables = list(dict.fromkeys(_into(s) for s in done if s["tool"] in EXTRACT_TOOLS))
        if tables:  # a derived answer: redo the failed input tables, then every derivation, then finish
            self._enqueue([*self._table_repair(tables, failures), self._finish_step()])
            return
        if _failed(failures, "drift", "gate"):
            steps.append({"tool": "discard_rows", "args": {"all_rows": True, "note": "read in a wrong state"}})
            steps += reread_steps(done, "answer", all_pages=_failed(failures, "pages"))
            last_extract = None  # the re-read extracts on each page it reads
        elif _failed(failures, "details"):
            template = _detail_template(self.steps)
            for url in next(f.get("links") or [] for f in failures if f["check"] == "details"):
                steps += [{"tool": "goto", "args": {"url": url}}, *copy.deepcopy(template)]
            last_extract = None  # the template already extracts on each page
        elif nothing_read:  # nothing was read: read the answer as the walkthrough does
            steps += reread_steps(done, "answer")
            last_extract = None
        elif _failed(failures, "pages", "count"):
            table = (last_read or {"args": {}})["args"].get("table", 0)
            steps.append({"tool": "read_table", "args": {"table": table, "all_pages": True}})
        if steps and last_extract:
            steps.append(copy.deepcopy(last_extract))
        self._enqueue([*steps, self._finish_step()])


def _failed(failures: list[Failure], *checks: str) -> bool:
    return any(f["check"] in checks for f in failures)
