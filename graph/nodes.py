"""The graph's nodes. Each is a small async function over `AgentState`, built over shared `Deps`.

LLM nodes (planner, actor) only choose; browser work, state tracking, extraction, verification and
composition are deterministic code, so their behaviour is testable and their cost is not the model's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, TypeAdapter

from agent.config import Budgets, ModelConfig
from agent.llm import step_cost
from browser.interface import Browser, BrowserError
from browser.types import ActionResult, BrowserAction, Observation
from graph.composer import compose, live_rows, parse_order
from graph.extractor import ExtractionError, extract
from graph.render import Prompts, observation_text
from graph.state import AgentState, ErrorRecord, PendingCall, Plan, RetrievalState, Usage
from graph.tools import DiscardRows, ExtractRows, Finish, RevisePlan, WebSearch
from graph.toolset import ToolCallError, parse_plan, parse_tool_call, plan_tool, tool_schemas
from graph.tracker import track
from graph.verifier import verify
from tasks.spec import OutputSpec

MAX_INVALID_STREAK = 3
HISTORY_TURNS = 12
PASSIVE_KINDS = frozenset({"scroll", "wait_for"})  # do not invalidate what was just read

_ACTION = TypeAdapter(BrowserAction)


class StepLog:
    """steps.jsonl, appended and flushed per event so an interrupted run keeps its trace."""

    def __init__(self, path=None):
        self.path = path
        self.events: list[dict[str, Any]] = []

    def write(self, event: dict[str, Any]) -> None:
        event = {"t": round(time.time(), 3), **event}
        self.events.append(event)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(event, default=str) + "\n")


@dataclass
class Deps:
    browser: Browser
    model: BaseChatModel
    model_config: ModelConfig
    spec: OutputSpec
    budgets: Budgets = field(default_factory=Budgets)
    search_enabled: bool = False
    search: Callable[[str], Any] | None = None  # async query -> list of results
    provenance: bool = True
    verifier: bool = True
    state_tracker: bool = True
    token_budget: int = 1500
    prompts: Prompts = field(default_factory=Prompts.load)
    log: StepLog = field(default_factory=StepLog)
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        self.actor_model = self.model.bind_tools(tool_schemas(search=self.search_enabled))
        self.planner_model = self.model.bind_tools([plan_tool()], tool_choice="Plan")


class LLMCallError(Exception):
    def __init__(self, cause: Exception):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


# ---------------------------------------------------------------- helpers


def _usage_after(deps: Deps, usage: Usage, ai: AIMessage) -> tuple[Usage, dict[str, Any]]:
    meta = ai.usage_metadata or {}
    prompt, completion = int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    cost = step_cost(deps.model_config, prompt, completion)
    new = Usage(**{**usage, "llm_calls": usage["llm_calls"] + 1, "prompt_tokens": usage["prompt_tokens"] + prompt,
                   "completion_tokens": usage["completion_tokens"] + completion,
                   "cost_usd": round(usage["cost_usd"] + cost, 6)})
    return new, {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": round(cost, 6)}


async def _call(model, messages: list[AnyMessage]) -> tuple[AIMessage, float]:
    started = time.perf_counter()
    try:
        ai = await model.ainvoke(messages)
    except Exception as exc:  # classified by the caller: every API failure is infrastructure
        raise LLMCallError(exc) from exc
    return ai, (time.perf_counter() - started) * 1000


def _error(state: AgentState, node: str, kind: str, error_class: str, message: str) -> ErrorRecord:
    return ErrorRecord(step=state.get("step", 0), node=node, kind=kind, error_class=error_class, message=message)


def history_window(messages: list[AnyMessage], turns: int = HISTORY_TURNS) -> list[AnyMessage]:
    """The last `turns` actor exchanges, cut at an AI message so every tool result keeps its call."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    if len(starts) <= turns:
        return list(messages[starts[0]:]) if starts else []
    return list(messages[starts[-turns]:])


def budget_stop(deps: Deps, state: AgentState) -> str | None:
    usage, b, now = state["usage"], deps.budgets, deps.clock()
    if state.get("step", 0) >= b.max_steps:
        return "max_steps"
    if usage["prompt_tokens"] + usage["completion_tokens"] >= b.max_tokens:
        return "max_tokens"
    if usage["elapsed_before_resume"] + (now - usage["started_at"]) >= b.wall_seconds:
        return "wall_time"
    if now - usage["last_progress_at"] >= b.no_progress_seconds:
        return "no_progress"
    return None


def summarize_result(result: ActionResult) -> str:
    """What the actor learns from one browser action (the full page comes in the next observation)."""
    parts = [f"ok={result.ok}"]
    if result.error:
        parts.append(f"error={result.error}: {result.message}")
    elif result.message:
        parts.append(result.message)
    if result.readback is not None:
        parts.append(f"readback={result.readback!r}")
    delta = result.delta
    if not delta.empty:
        if delta.url_after and delta.url_after != delta.url_before:
            parts.append(f"url -> {delta.url_after}")
        for label, (before, after) in delta.controls_changed.items():
            parts.append(f"{label}: {before!r} -> {after!r}")
        if delta.count_before != delta.count_after:
            parts.append(f"results {delta.count_before} -> {delta.count_after}")
    if result.table is not None:
        t = result.table
        parts.append(f"table: {len(t.rows)} rows of {t.total_rows}; headers {t.headers}")
        parts += [" | ".join(r) for r in t.rows[:3]]
    if result.pdf_pages:
        parts.append(f"pdf: {len(result.pdf_pages)} page(s) read")
    return "\n".join(parts)


# ---------------------------------------------------------------- nodes


def make_planner(deps: Deps):
    async def planner(state: AgentState) -> dict[str, Any]:
        messages: list[AnyMessage] = [SystemMessage(deps.prompts.planner_system),
                                      HumanMessage(deps.prompts.planner_task(state["task"]))]
        usage = state["usage"]
        for attempt in range(MAX_INVALID_STREAK):
            try:
                ai, llm_ms = await _call(deps.planner_model, messages)
            except LLMCallError as exc:
                deps.log.write({"node": "planner", "error": str(exc)})
                return {"stop_reason": "error", "nodes_run": ["planner"], "usage": usage,
                        "errors": [_error(state, "planner", "infra", "llm", str(exc))]}
            usage, spent = _usage_after(deps, usage, ai)
            call = (ai.tool_calls or [None])[0]
            try:
                if call is None:
                    raise ToolCallError("call the Plan tool")
                plan = parse_plan(call["args"])
            except ToolCallError as exc:
                deps.log.write({"node": "planner", "attempt": attempt, "invalid": str(exc), "llm_ms": llm_ms, **spent})
                messages += [ai, ToolMessage(str(exc), tool_call_id=call["id"]) if call else HumanMessage(str(exc))]
                continue
            deps.log.write({"node": "planner", "plan": plan.model_dump(), "llm_ms": llm_ms, **spent})
            return {"plan": plan.model_dump(), "usage": usage, "nodes_run": ["planner"]}
        return {"plan": None, "usage": usage, "nodes_run": ["planner"],
                "errors": [_error(state, "planner", "agent", "invalid_plan", "no valid plan; acting without one")]}

    return planner


def make_actor(deps: Deps):
    async def actor(state: AgentState) -> dict[str, Any]:
        stop = budget_stop(deps, state)
        if stop:
            deps.log.write({"node": "actor", "stop": stop})
            return {"stop_reason": stop, "pending": None, "nodes_run": ["actor"]}
        step = state.get("step", 0) + 1
        turn = deps.prompts.actor_turn(
            state, observation_text=observation_text(state.get("observation"), deps.token_budget),
            max_steps=deps.budgets.max_steps)
        prompt = [SystemMessage(deps.prompts.actor_system), *history_window(state.get("messages") or []),
                  HumanMessage(turn)]
        try:
            ai, llm_ms = await _call(deps.actor_model, prompt)
        except LLMCallError as exc:
            deps.log.write({"node": "actor", "step": step, "error": str(exc)})
            return {"stop_reason": "error", "pending": None, "nodes_run": ["actor"], "step": step,
                    "errors": [_error(state, "actor", "infra", "llm", str(exc))]}
        usage, spent = _usage_after(deps, state["usage"], ai)
        usage["steps"] = step
        update: dict[str, Any] = {"step": step, "usage": usage, "nodes_run": ["actor"], "pending": None}
        calls = ai.tool_calls or []
        if not calls:
            feedback = "Your reply had no tool call. Call exactly one tool."
            return {**update, **_invalid(deps, state, step, [ai, HumanMessage(feedback)], feedback, llm_ms, spent)}
        call, extra = calls[0], calls[1:]
        ignored = [ToolMessage("ignored: one tool call per turn", tool_call_id=c["id"]) for c in extra]
        try:
            tool = parse_tool_call(call["name"], call["args"], search=deps.search_enabled)
            if isinstance(tool, Finish):
                parse_order(tool.order_by, deps.spec.columns)
            if isinstance(tool, RevisePlan):
                parse_plan(tool.plan)
        except (ToolCallError, ValueError) as exc:
            reply = ToolMessage(f"INVALID TOOL CALL: {exc}", tool_call_id=call["id"])
            return {**update, **_invalid(deps, state, step, [ai, reply, *ignored], str(exc), llm_ms, spent)}

        deps.log.write({"node": "actor", "step": step, "tool": call["name"], "args": tool.model_dump(exclude={"kind"}),
                        "llm_ms": llm_ms, "prompt_chars": sum(len(str(m.content)) for m in prompt), **spent})
        update.update(invalid_streak=0, messages=[ai, *ignored])
        if isinstance(tool, RevisePlan | DiscardRows):
            return {**update, **_bookkeeping(state, tool, call["id"])}
        if isinstance(tool, Finish):
            update["order_by"] = tool.order_by
        update["pending"] = PendingCall(id=call["id"], name=call["name"], args=tool.model_dump())
        return update

    return actor


def _invalid(deps: Deps, state: AgentState, step: int, messages: list[AnyMessage], why: str, llm_ms: float,
             spent: dict[str, Any]) -> dict[str, Any]:
    streak = state.get("invalid_streak", 0) + 1
    deps.log.write({"node": "actor", "step": step, "invalid": why, "streak": streak, "llm_ms": llm_ms, **spent})
    update: dict[str, Any] = {"messages": messages, "invalid_streak": streak}
    if streak >= MAX_INVALID_STREAK:
        update["stop_reason"] = "error"
        update["errors"] = [_error(state, "actor", "agent", "invalid_tool_call",
                                   f"{streak} invalid tool calls in a row; last: {why}")]
    return update


def _bookkeeping(state: AgentState, tool: BaseModel, call_id: str) -> dict[str, Any]:
    """revise_plan and discard_rows change only the agent's own state: no browser, no extra node."""
    if isinstance(tool, RevisePlan):
        plan = parse_plan(tool.plan)
        return {"plan": plan.model_dump(), "messages": [ToolMessage(f"plan revised: {tool.reason}", tool_call_id=call_id)]}
    assert isinstance(tool, DiscardRows)
    rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
    gone = [r for r in rows if tool.all_rows
            or ((tool.from_step is None or r["provenance"]["step"] == tool.from_step)
                and (tool.where or tool.from_step is not None)
                and all(r["values"].get(k, "").casefold() == v.casefold() for k, v in tool.where.items()))]
    text = f"discarded {len(gone)} row(s); {len(rows) - len(gone)} left"
    return {"discarded": gone, "messages": [ToolMessage(text, tool_call_id=call_id)]}


def make_executor(deps: Deps):
    async def executor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        step = state.get("step", 0)
        if pending["name"] == "web_search":
            return await _search(deps, state, pending)
        action = _ACTION.validate_python(pending["args"])
        started = time.perf_counter()
        try:
            result = await deps.browser.act(action)
            observation = result.observation or await deps.browser.observe()
        except BrowserError as exc:
            return _browser_failure(deps, state, pending, exc.error_class, str(exc))
        except Exception as exc:  # a dead page / browser: infrastructure, the runner may retry the task
            return _browser_failure(deps, state, pending, "crashed", f"{type(exc).__name__}: {exc}")
        browser_ms = (time.perf_counter() - started) * 1000
        deps.log.write({"node": "executor", "step": step, "action": action.kind, "ok": result.ok, "error": result.error,
                        "message": result.message, "url": observation.url, "browser_ms": browser_ms,
                        "observation_tokens": observation.tokens})
        update: dict[str, Any] = {
            "observation": observation.model_dump(),
            "last_action": action.model_dump(),
            "last_result": result.model_dump(exclude={"observation"}),
            "messages": [ToolMessage(summarize_result(result), tool_call_id=pending["id"])],
            "pending": None,
            "nodes_run": ["executor"],
        }
        if result.table is not None:
            downloaded = action.kind == "download"  # an export holds the whole result set, not one page
            update["last_read"] = {"table": result.table.model_dump(), "table_index": getattr(action, "table", None),
                                   "all_pages": downloaded or bool(getattr(action, "all_pages", False)),
                                   "url": observation.url}
        elif result.pdf_pages:
            update["last_read"] = {"pdf_pages": [p.model_dump() for p in result.pdf_pages], "url": observation.url}
        elif action.kind not in PASSIVE_KINDS:
            update["last_read"] = None
        if not result.delta.empty or result.table is not None or result.pdf_pages:
            update["usage"] = {**state["usage"], "last_progress_at": deps.clock()}
        if result.error == "crashed":
            update["stop_reason"] = "error"
            update["errors"] = [_error(state, "executor", "infra", "crashed", result.message)]
        return update

    return executor


def _browser_failure(deps: Deps, state: AgentState, pending: PendingCall, error_class: str, message: str) -> dict:
    deps.log.write({"node": "executor", "step": state.get("step", 0), "action": pending["name"],
                    "error": error_class, "message": message})
    fatal = error_class == "crashed"
    update: dict[str, Any] = {
        "messages": [ToolMessage(f"ok=False error={error_class}: {message}", tool_call_id=pending["id"])],
        "pending": None, "nodes_run": ["executor"],
        "errors": [_error(state, "executor", "infra" if fatal else "agent", error_class, message)],
    }
    if fatal:
        update["stop_reason"] = "error"
    return update


async def _search(deps: Deps, state: AgentState, pending: PendingCall) -> dict[str, Any]:
    query = WebSearch.model_validate(pending["args"]).query
    started = time.perf_counter()
    try:
        results = await deps.search(query) if deps.search else []
        text = "\n".join(f"- {r['title']} {r['url']}\n  {r.get('snippet', '')}" for r in results) or "no results"
    except Exception as exc:  # search is a convenience; its failure is reported to the model, not fatal
        text = f"search failed: {type(exc).__name__}: {exc}"
    deps.log.write({"node": "executor", "step": state.get("step", 0), "action": "web_search", "query": query,
                    "browser_ms": (time.perf_counter() - started) * 1000})
    return {"messages": [ToolMessage(text, tool_call_id=pending["id"])], "pending": None, "nodes_run": ["executor"]}


def make_tracker(deps: Deps):
    async def state_tracker(state: AgentState) -> dict[str, Any]:
        if not state.get("observation"):
            return {"nodes_run": ["state_tracker"]}
        obs = Observation.model_validate(state["observation"])
        result = ActionResult.model_validate(state["last_result"]) if state.get("last_result") else None
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        previous = state.get("retrieval")
        history = state.get("history") or []
        retrieval, flags = track(obs=obs, step=state.get("step", 0), action=state.get("last_action"), result=result,
                                 previous=previous, history=history, active_flags=state.get("drift_flags") or [],
                                 plan=plan)
        known = {(f["rule"], f["gate"], f["path"]) for f in state.get("drift_flags") or []}
        new_flags = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
        update: dict[str, Any] = {"retrieval": retrieval, "drift_flags": flags, "nodes_run": ["state_tracker"]}
        if new_flags:
            update["drift_log"] = new_flags
        if _state_changed(previous, retrieval):
            update["history"] = [retrieval]
        deps.log.write({"node": "state_tracker", "step": state.get("step", 0), "url": retrieval["url"],
                        "values": {k: v["value"] for k, v in retrieval["values"].items() if v["value"]},
                        "page": retrieval["page"], "pages": retrieval["pages"],
                        "drift": [f"{f['rule']}:{f['gate']}" for f in flags]})
        return update

    return state_tracker


def _state_changed(before: RetrievalState | None, after: RetrievalState) -> bool:
    if before is None:
        return True
    values = lambda s: {k: v["value"] for k, v in s["values"].items()}  # noqa: E731
    return (before["url"], before["page"], values(before)) != (after["url"], after["page"], values(after))


def make_extractor(deps: Deps):
    async def extractor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        args = ExtractRows.model_validate(pending["args"])
        step = state.get("step", 0)
        try:
            extraction = extract(args, columns=deps.spec.columns, observation=state.get("observation") or {},
                                 last_read=state.get("last_read"), retrieval=state.get("retrieval"),
                                 drift_flags=state.get("drift_flags") or [], provenance=deps.provenance, step=step)
        except ExtractionError as exc:
            deps.log.write({"node": "extractor", "step": step, "error": str(exc)})
            return {"messages": [ToolMessage(f"extract_rows failed: {exc}", tool_call_id=pending["id"])],
                    "pending": None, "nodes_run": ["extractor"],
                    "errors": [_error(state, "extractor", "agent", "extraction", str(exc))]}
        rows = extraction.rows
        total = len(live_rows(state.get("rows") or [], state.get("discarded") or [])) + len(rows)
        preview = "\n".join(" | ".join(r["values"].values()) for r in rows[:5])
        text = f"extracted {len(rows)} row(s) ({total} collected)" + (f"\n{preview}" if preview else "")
        deps.log.write({"node": "extractor", "step": step, "rows": len(rows), "record": extraction.record,
                        "provenance": [r["provenance"] for r in rows[:3]]})
        return {"rows": rows, "reads": [extraction.record], "pending": None, "nodes_run": ["extractor"],
                "messages": [ToolMessage(text, tool_call_id=pending["id"])],
                "usage": {**state["usage"], "last_progress_at": deps.clock()}}

    return extractor


def make_verifier(deps: Deps):
    async def verifier(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
        report = verify(plan=plan, columns=deps.spec.columns, rows=rows, reads=state.get("reads") or [],
                        step=state.get("step", 0))
        repairs = state.get("repairs", 0)
        send_back = not report["ok"] and repairs < deps.budgets.max_repairs
        deps.log.write({"node": "verifier", "step": state.get("step", 0), "ok": report["ok"],
                        "failures": report["failures"], "send_back": send_back})
        reply = ("verified: composing the answer" if report["ok"] else
                 f"VERIFICATION FAILED, REPAIR GOAL: {report['repair_goal']}" if send_back else
                 f"verification failed but the repair budget is spent; composing: {report['repair_goal']}")
        update: dict[str, Any] = {"reports": [report], "nodes_run": ["verifier"],
                                  "messages": [ToolMessage(reply, tool_call_id=pending["id"])]}
        if send_back:
            update.update(pending=None, repair_goal=report["repair_goal"], repairs=repairs + 1)
        else:
            update["repair_goal"] = None
        return update

    return verifier


def make_composer(deps: Deps):
    async def composer(state: AgentState) -> dict[str, Any]:
        rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
        errors: list[ErrorRecord] = []
        try:
            answer = compose(rows, deps.spec, state.get("order_by") or [])
        except ValueError as exc:  # ordering keys that no longer fit: keep the rows, say why
            answer = compose(rows, deps.spec, [])
            errors.append(_error(state, "composer", "agent", "order_by", str(exc)))
        stop = state.get("stop_reason") or "finished"
        deps.log.write({"node": "composer", "step": state.get("step", 0), "rows": len(rows), "stop_reason": stop,
                        "answer_lines": answer.count(deps.spec.record_separator) + 1})
        return {"answer": answer, "stop_reason": stop, "pending": None, "nodes_run": ["composer"], "errors": errors}

    return composer
