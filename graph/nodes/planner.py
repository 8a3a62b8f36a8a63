"""Planner: the gates the instruction implies, as a structured `Plan`, written before any browsing."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage, ToolMessage

from graph.nodes.common import (
    MAX_INVALID_STREAK,
    LLMCallError,
    call_deadline,
    call_model,
    error_record,
    usage_after,
)
from graph.nodes.deps import Deps
from graph.state import AgentState
from graph.tools.tool_schemas import ToolCallError, parse_plan, plan_tool


def make_planner(deps: Deps):
    async def planner(state: AgentState) -> dict[str, Any]:
        messages: list[AnyMessage] = [SystemMessage(deps.prompts.planner_system),
                                      HumanMessage(deps.prompts.planner_task(state["task"]))]
        usage = state["usage"]
        for attempt in range(MAX_INVALID_STREAK):
            try:
                ai, llm_ms = await call_model(deps.policy.plan(messages, plan_tool()), call_deadline(deps, state))
            except LLMCallError as exc:
                deps.log.write({"node": "planner", "error": str(exc)})
                return {"stop_reason": "error", "nodes_run": ["planner"], "usage": usage,
                        "errors": [error_record(state, "planner", exc.kind, "llm", str(exc))]}
            usage, spent = usage_after(deps, usage, ai)
            call = (ai.tool_calls or [None])[0]
            try:
                if call is None:
                    raise ToolCallError("call the Plan tool")
                plan = parse_plan(call["args"])
            except ToolCallError as exc:
                deps.log.write({"node": "planner", "attempt": attempt, "invalid": str(exc), "llm_ms": llm_ms, **spent})
                # every call the reply carries is answered (the first with the error), as the chat rules demand
                ids = [c["id"] for c in [*ai.tool_calls, *ai.invalid_tool_calls] if c.get("id")]
                replies = [ToolMessage(str(exc) if n == 0 else "refused: one Plan call per reply", tool_call_id=i)
                           for n, i in enumerate(ids)]
                messages += [ai, *replies] if replies else [ai, HumanMessage(str(exc))]
                continue
            deps.log.write({"node": "planner", "plan": plan.model_dump(), "llm_ms": llm_ms, **spent})
            return {"plan": plan.model_dump(), "usage": usage, "nodes_run": ["planner"]}
        return {"plan": None, "usage": usage, "nodes_run": ["planner"],
                "errors": [error_record(state, "planner", "agent", "invalid_plan", "no valid plan; acting without one")]}

    return planner
