"""Executor: runs a browser action (or a web search) through the `Browser` interface."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urljoin

from langchain_core.messages import ToolMessage
from pydantic import TypeAdapter

from browser.delta import content_key
from browser.interface import BrowserError
from browser.types import CHANGING_KINDS, ActionResult, BrowserAction, Observation
from graph.checks.listings import listing_of, opened_from
from graph.model_io.robust import NO_CHANGE, tool_reply
from graph.nodes.common import error_record, result_lines
from graph.nodes.deps import Deps
from graph.state import AgentState, PendingCall
from graph.tools.agent_tools import WebSearch

# Only actions that may change the page (browser.types.ACTION_SPECS: a change, or a read opening a URL) invalidate
# what was just read; a wait, a scroll or a read returning no table (options, links, a section) do not. An action meant to change
# the page that leaves it exactly as it was is said to be a no-op, so that repeating it counts as a failing
# repeat (graph/model_io/robust.py) instead of looping until the step budget.

_ACTION = TypeAdapter(BrowserAction)


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
                        "message": result.message, "url": observation.url, "browser_ms": browser_ms})
        update: dict[str, Any] = {
            "observation": observation.model_dump(),
            "last_action": {**action.model_dump(), **({"gate": pending["gate"]} if pending.get("gate") else {})},
            "last_result": result.model_dump(exclude={"observation"}),
            "messages": [_reply(state, action.kind, result, observation, pending["id"])],
            "pending": None,
            "nodes_run": ["executor"],
            "visited": [observation.url],
        }
        listing = listing_of(observation, result, step, state.get("listings") or [])
        if listing:
            update["listings"] = [listing]
        requested = urljoin(observation.url, action.url) if getattr(action, "url", None) else None
        if opened := opened_from(observation.url, step, state.get("listings") or [], requested):
            update["opened"] = opened
        if result.table is not None:
            downloaded = action.kind == "download"  # an export holds the whole result set, not one page
            update["last_read"] = {"table": result.table.model_dump(), "table_index": getattr(action, "table", None),
                                   "all_pages": downloaded or bool(getattr(action, "all_pages", False)),
                                   "url": observation.url}
        elif result.pdf_pages:
            update["last_read"] = {"pdf_pages": [p.model_dump() for p in result.pdf_pages], "url": observation.url}
        elif action.kind in CHANGING_KINDS or getattr(action, "url", None):
            update["last_read"] = None  # the page may have changed; a read returning no table (options, links,
            # a section) leaves the table just read as it was: extract_rows still takes it whole
        if not result.delta.empty or result.table is not None or result.pdf_pages:
            update["usage"] = {**state["usage"], "last_progress_at": deps.clock()}
        if result.error == "crashed":
            update["stop_reason"] = "error"
            update["errors"] = [error_record(state, "executor", "infra", "crashed", result.message)]
        return update

    return executor


def _browser_failure(deps: Deps, state: AgentState, pending: PendingCall, error_class: str, message: str) -> dict:
    deps.log.write({"node": "executor", "step": state.get("step", 0), "action": pending["name"],
                    "error": error_class, "message": message})
    fatal = error_class == "crashed"
    update: dict[str, Any] = {
        "messages": [tool_reply(f"ok=False error={error_class}: {message}", pending["id"], failed=True,
                                gist=f"{error_class}: {message}")],
        "pending": None, "nodes_run": ["executor"],
        "errors": [error_record(state, "executor", "infra" if fatal else "agent", error_class, message)],
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


def _reply(state: AgentState, kind: str, result: ActionResult, observation: Observation, call_id: str) -> ToolMessage:
    lines = result_lines(result)
    text = "\n".join(lines)
    before = state.get("observation")
    same = bool(before) and content_key(before) == content_key(observation)
    unchanged = result.ok and kind in CHANGING_KINDS and result.table is None and not result.pdf_pages and same
    if unchanged:
        text += "\n" + NO_CHANGE  # the same page shown (URL and content): a reload of it counts as no change
    gist = lines[1].split("\n", 1)[0] if len(lines) > 1 else ""  # the line after `ok=`: what happened
    return tool_reply(text, call_id, failed=not result.ok, unchanged=unchanged, gist=gist)
