"""Actor: the LLM picks one tool call; invalid calls are answered with the validation error (bounded)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from graph.composer import live_rows, parse_order
from graph.evidence import ANSWER, derived_answer, discard_from
from graph.nodes.common import (
    MAX_INVALID_STREAK,
    LLMCallError,
    budget_stop,
    call_model,
    error_record,
    history_window,
    usage_after,
)
from graph.nodes.deps import Deps
from graph.render import observation_text
from graph.state import AgentState, PendingCall
from graph.tools import DiscardRows, Finish, RevisePlan
from graph.toolset import ToolCallError, parse_tool_call


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
            ai, llm_ms = await call_model(deps.actor_model, prompt)
        except LLMCallError as exc:
            deps.log.write({"node": "actor", "step": step, "error": str(exc)})
            return {"stop_reason": "error", "pending": None, "nodes_run": ["actor"], "step": step,
                    "errors": [error_record(state, "actor", "infra", "llm", str(exc))]}
        usage, spent = usage_after(deps, state["usage"], ai)
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
        update["errors"] = [error_record(state, "actor", "agent", "invalid_tool_call",
                                   f"{streak} invalid tool calls in a row; last: {why}")]
    return update


def _bookkeeping(state: AgentState, tool: BaseModel, call_id: str) -> dict[str, Any]:
    """revise_plan and discard_rows change only the agent's own state: no browser, no extra node."""
    if isinstance(tool, RevisePlan):
        return {"plan": tool.plan.model_dump(), "messages": [ToolMessage(f"plan revised: {tool.reason}", tool_call_id=call_id)]}
    assert isinstance(tool, DiscardRows)
    if tool.table != ANSWER or derived_answer(state.get("tables")):
        table = (state.get("tables") or {}).get(tool.table)
        if table is None:
            return {"messages": [ToolMessage(f"no table {tool.table!r}", tool_call_id=call_id)]}
        kept, gone_count = discard_from(tool, table)
        text = f"discarded {gone_count} row(s) of {tool.table}; {len(kept['rows'])} left"
        return {"tables": {tool.table: kept}, "messages": [ToolMessage(text, tool_call_id=call_id)]}
    rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
    gone = [r for r in rows if tool.all_rows
            or ((tool.from_step is None or r["provenance"]["step"] == tool.from_step)
                and (tool.where or tool.from_step is not None)
                and all(r["values"].get(k, "").casefold() == v.casefold() for k, v in tool.where.items()))]
    text = f"discarded {len(gone)} row(s); {len(rows) - len(gone)} left"
    return {"discarded": gone, "messages": [ToolMessage(text, tool_call_id=call_id)]}
