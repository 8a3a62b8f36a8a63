"""Actor: the LLM picks one tool call; imperfect replies are answered, counted and bounded (graph/model_io/robust.py);
the prompt holds only the tools and instructions of the nodes that run, and fits the context window."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from browser.render import Rendering
from graph.checks.details import switch_off_refusal
from graph.checks.gates import rejudge_tables
from graph.evidence.answer_format import parse_order
from graph.evidence.workspace_tools import discard
from graph.model_io.caps import bound_reply
from graph.model_io.policy import CALL_NOTE, turn_state
from graph.model_io.robust import (
    INVALID,
    PROSE_FEEDBACK,
    REPEAT_STOP,
    REPEAT_WARN,
    call_signature,
    failed_repeats,
    invalid_json_message,
    own_lines,
    repeat_message,
    shown_targets,
    tool_reply,
    unknown_ref_message,
)
from graph.nodes.common import (
    MAX_INVALID_STREAK,
    LLMCallError,
    budget_stop,
    call_deadline,
    call_model,
    error_record,
    history_window,
    usage_after,
)
from graph.nodes.deps import Deps
from graph.nodes.state_tracker import recheck_flags
from graph.nodes.verifier import recheck_goal
from graph.plan.binding import all_gates, bound_plan, plan_of
from graph.prompting.context import ContextOverflow, fit_prompt, prompt_parts, undocumented
from graph.prompting.page_fence import untrusted
from graph.prompting.render import TURN_CUTS, observation_tokens, page_key, turn_observation
from graph.state import AgentState, PendingCall, Plan, merge_tables
from graph.tools.agent_tools import DiscardRows, Finish, RevisePlan
from graph.tools.offers import actor_system, actor_tools
from graph.tools.tool_schemas import ToolCallError, parse_tool_call, split_gate

HISTORY_WHOLE = 2  # the newest exchanges sent whole; older ones (up to HISTORY_TURNS) as one line each


def make_actor(deps: Deps):
    async def actor(state: AgentState) -> dict[str, Any]:
        stop = budget_stop(deps, state)
        if stop:
            deps.log.write({"node": "actor", "stop": stop})
            return {"stop_reason": stop, "pending": None, "nodes_run": ["actor"]}
        step = state.get("step", 0) + 1
        try:
            prompt, tools, trimmed, seen_page, parts = _prompt(deps, state)
        except ContextOverflow as exc:
            deps.log.write({"node": "actor", "step": step, "error": str(exc), "kind": "config"})
            return {"stop_reason": "error", "pending": None, "nodes_run": ["actor"], "step": step,
                    "errors": [error_record(state, "actor", "config", "context_overflow", str(exc))]}
        try:
            ai, llm_ms = await call_model(deps.policy.act(prompt, tools, turn_state(state)), call_deadline(deps, state))
        except LLMCallError as exc:
            deps.log.write({"node": "actor", "step": step, "error": str(exc), "kind": exc.kind})
            return {"stop_reason": "error", "pending": None, "nodes_run": ["actor"], "step": step,
                    "errors": [error_record(state, "actor", exc.kind, "llm", str(exc))]}
        usage, spent = usage_after(deps, state["usage"], ai)
        note = ai.response_metadata.get(CALL_NOTE)  # a policy's own word on its call (a replay's: repair, fault)
        ai, cuts = bound_reply(ai)
        if cuts:
            deps.log.write({"node": "actor", "step": step, "reply_cut": cuts})
        usage["steps"] = step
        update: dict[str, Any] = {"step": step, "usage": usage, "nodes_run": ["actor"], "pending": None,
                                  "context_trims": state.get("context_trims", 0) + (1 if trimmed else 0),
                                  "seen_page": seen_page}
        calls = ai.tool_calls or []
        bad_json = ai.invalid_tool_calls or []
        if not calls and bad_json:  # arguments that are not JSON: answer each with its parse error
            replies = [tool_reply(invalid_json_message(b), b["id"] or "invalid", failed=True, own=True)
                       for b in bad_json]
            return {**update, **_invalid(deps, state, step, [ai, *replies], replies[0].content, llm_ms, spent)}
        if not calls:
            return {**update, **_invalid(deps, state, step, [ai, HumanMessage(PROSE_FEEDBACK)], "no tool call",
                                         llm_ms, spent)}
        call, extra = calls[0], calls[1:]
        ignored = [tool_reply(f"refused: one tool call per turn; only {call['name']} was run", c["id"], own=True)
                   for c in extra]
        ignored += [tool_reply(invalid_json_message(b), b["id"], failed=True, own=True) for b in bad_json if b.get("id")]
        try:
            plan = plan_of(state)
            args, model_gate = split_gate(call["name"], call["args"], [g.name for g in all_gates(plan)]
                                          if plan is not None and "state_tracker" not in deps.ablated else None)
            tool = parse_tool_call(call["name"], args, search=deps.search_enabled)
            if isinstance(tool, Finish):
                parse_order(tool.order_by, deps.spec.columns)
            refusal = unknown_ref_message(call["args"] or {}, state.get("observation"))
            repeats = failed_repeats(state.get("messages") or [], call_signature(call["name"], call["args"]))
            if refusal is None and repeats >= REPEAT_STOP:
                deps.log.write({"node": "actor", "step": step, "stop": "repeated_failure", "tool": call["name"]})
                return {**update, "messages": [ai, tool_reply(repeat_message(repeats), call["id"], own=True),
                                               *ignored],
                        "stop_reason": "repeated_failure", "invalid_calls": state.get("invalid_calls", 0) + 1}
            if refusal is None and repeats >= REPEAT_WARN:
                refusal = repeat_message(repeats)
            if refusal:
                raise ToolCallError(refusal)
        except (ToolCallError, ValueError) as exc:
            reply = tool_reply(f"{INVALID}{exc}", call["id"], failed=True, own=True)  # page labels in it: page_repr
            return {**update, **_invalid(deps, state, step, [ai, reply, *ignored], str(exc), llm_ms, spent)}

        deps.log.write({"node": "actor", "step": step, "tool": call["name"], "call_id": call["id"],
                        "args": tool.model_dump(exclude={"kind"}),
                        "shown": shown_targets(call["args"] or {}, state.get("observation")),
                        "llm_ms": llm_ms, "prompt_chars": sum(len(str(m.content)) for m in prompt),
                        "refused_calls": len(ignored), "prompt_parts": parts,
                        "page_key": page_key(state.get("observation")),
                        "observation_delta": seen_page is not None and seen_page.get("step") != step, **spent,
                        **({"note": note} if note else {})})
        update.update(invalid_streak=0, messages=[ai, *ignored])
        if isinstance(tool, RevisePlan | DiscardRows):  # answered here: the reply joins the call, not replaces it
            # off the event loop: a revision's refusal check may run the derivation's list row use (seconds)
            done = await asyncio.to_thread(_bookkeeping, state, tool, call["id"])
            done = {**update, **done, "messages": [ai, *done["messages"], *ignored]}
            return {**done, **await asyncio.to_thread(recheck, deps, state, done)}
        if isinstance(tool, Finish):
            update["order_by"] = tool.order_by
        update["pending"] = PendingCall(id=call["id"], name=call["name"], args=tool.model_dump(),
                                        **({"gate": model_gate} if model_gate else {}))
        return update

    return actor


def _prompt(deps: Deps, state: AgentState
            ) -> tuple[list[AnyMessage], list[dict[str, Any]], bool, dict[str, Any] | None, dict[str, int]]:
    """System prompt, the earlier exchanges that fit the model's context window, and the current turn; the tool
    schemas to bind (undocumented in the shortest windows); whether anything was cut to fit (the context trim);
    the page record to keep and the prompt's parts in tokens.

    The observation is rendered once, within the room `graph.prompting.context.fit_prompt` leaves it after the system
    prompt, the tools, the history and the turn's state part (abbreviated too when the window is short), so the
    prompt never exceeds `context_tokens` (`ContextOverflow` when even the smallest prompt cannot fit). The
    tools are offered for that rendering (the reads its notes name); the room is decided with the tools a
    rendering of the page needs (shown whole, or any), so the final prompt is no longer than the one fitted."""
    system = SystemMessage(actor_system(deps, state))
    history = [_page_data(m, deps) for m in history_window(state.get("messages") or [])]
    seen_page: list[dict[str, Any] | None] = [None]
    offered: dict[Rendering | bool, list[dict[str, Any]]] = {}

    def observe(budget: int) -> Rendering:
        rendering, seen_page[0] = turn_observation(state, budget)
        return rendering

    def turn(observation: str, cut: int) -> HumanMessage:
        return HumanMessage(deps.prompts.actor_turn(state, observation_text=observation,
                                                    max_steps=deps.budgets.max_steps, cut=cut))

    def tools(level: int, shown: Rendering | bool) -> list[dict[str, Any]]:
        if shown not in offered:
            offered[shown] = actor_tools(deps, state, shown)
        return offered[shown] if level < TURN_CUTS else undocumented(offered[shown])

    fitted = fit_prompt(system=system, history=history, context_tokens=deps.model_config.context_tokens,
                        budget=deps.token_budget, whole=HISTORY_WHOLE, levels=TURN_CUTS, turn=turn, observe=observe,
                        tools=tools, observation_tokens=lambda: observation_tokens(state.get("observation")))
    return fitted.messages, fitted.tools, fitted.trimmed, seen_page[0], prompt_parts(
        system, fitted.history, fitted.turn, fitted.observation, fitted.tools)


def _page_data(message: AnyMessage, deps: Deps) -> AnyMessage:
    """A tool reply quotes page cells (read_table, extract_rows, derive): a line of it that imitates one of the
    turn's headers or a tool result is marked as page text on the wire, as in the observation (the state keeps the
    reply); the lines its producer wrote itself (`own_lines`) are not."""
    if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
        return message
    marked = untrusted(message.content, deps.prompts.turn_template, own=own_lines(message), reply=True)
    return message if marked == message.content else message.model_copy(update={"content": marked})


def _invalid(deps: Deps, state: AgentState, step: int, messages: list[AnyMessage], why: str, llm_ms: float,
             spent: dict[str, Any]) -> dict[str, Any]:
    streak = state.get("invalid_streak", 0) + 1
    deps.log.write({"node": "actor", "step": step, "invalid": why, "streak": streak, "llm_ms": llm_ms, **spent})
    update: dict[str, Any] = {"messages": messages, "invalid_streak": streak,
                              "invalid_calls": state.get("invalid_calls", 0) + 1}
    if streak >= MAX_INVALID_STREAK:
        update["stop_reason"] = "error"
        update["errors"] = [error_record(state, "actor", "agent", "invalid_tool_call",
                                   f"{streak} invalid tool calls in a row; last: {why}")]
    return update


def recheck(deps: Deps, state: AgentState, update: dict[str, Any]) -> dict[str, Any]:
    """Flags and the repair goal judged again right after `revise_plan` / `discard_rows`, so the next turn
    shows only what is still true (the plan revised, the rows gone)."""
    after: dict[str, Any] = {**state, **update}
    if "tables" in update:
        after["tables"] = merge_tables(state.get("tables"), update["tables"])
    rejudged: dict[str, Any] = {}
    if "plan" in update:  # the rows' read checks done again under the revised plan (docs/graph_checks.md, "The gate judge")
        rejudged = rejudge_tables(bound_plan(update["plan"], state.get("bindings")), after.get("tables") or {},
                                  state.get("history") or [])
        after["tables"] = merge_tables(after.get("tables"), rejudged)
        if rejudged:
            deps.log.write({"node": "actor", "step": update.get("step"), "rejudged": {
                name: sum(1 for r in t["rows"] if r["provenance"]["drift"]) for name, t in rejudged.items()}})
    flags = recheck_flags(deps, after)
    return {**({"tables": rejudged} if rejudged else {}), **flags, **recheck_goal(deps, {**after, **flags})}


def _bookkeeping(state: AgentState, tool: BaseModel, call_id: str) -> dict[str, Any]:
    """revise_plan and discard_rows change only the agent's own state: no browser, no extra node."""
    if isinstance(tool, RevisePlan):
        refused = switch_off_refusal(Plan.model_validate(state["plan"]), tool.plan, tables=state.get("tables") or {},
                                     listings=state.get("listings") or [],
                                     opened=state.get("opened") or []) if state.get("plan") else None
        if refused:
            return {"messages": [tool_reply(refused, call_id, own=True)]}
        return {"plan": tool.plan.model_dump(), "messages": [tool_reply(f"plan revised: {tool.reason}", call_id, own=True)]}
    assert isinstance(tool, DiscardRows)
    written = discard(tool, state.get("tables") or {})
    return {**({"tables": written.tables} if written.tables else {}),
            "messages": [tool_reply(written.message, call_id, own=True)]}
