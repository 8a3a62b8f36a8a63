"""Workspace node: `read_facts` (labelled values of a page, optionally opened first, into one row of a
table; several pages in turn, a row each) and `derive` (one read-only SQL query over the tables). A page opened
here is tracked before it is read (`graph.nodes.pages`), and goes through the state tracker next, like any
navigation."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import ToolMessage

from graph.agent_tools import Derive, ReadFacts
from graph.evidence_tables import WorkspaceError
from graph.fact_match import FactError
from graph.nodes.common import error_record, result_lines
from graph.nodes.deps import Deps
from graph.nodes.pages import (
    PageReadError,
    PageReply,
    add_flags,
    join_replies,
    page_label,
    read_facts_of,
    view_of,
)
from graph.state import AgentState, DriftFlag, Plan
from graph.workspace_tools import ReadContext, derive, error_text, read_facts_row


def read_context(state: AgentState, *, provenance: bool, token_budget: int,
                 observation: dict[str, Any] | None = None) -> ReadContext:
    return ReadContext(observation=observation if observation is not None else state.get("observation") or {},
                       token_budget=token_budget,
                       last_read=state.get("last_read"), retrieval=state.get("retrieval"),
                       drift_flags=state.get("drift_flags") or [], provenance=provenance, step=state.get("step", 0),
                       plan=Plan.model_validate(state["plan"]) if state.get("plan") else None,
                       history=state.get("history") or [])


def flag_update(state: AgentState, flags: list[DriftFlag], logged: list[DriftFlag] | None = None) -> dict[str, Any]:
    """Planned gates found at another value when rows were read: active (the tracker keeps them while the value
    stays wrong) and logged, like the tracker's own flags (`logged`: flags this node already logs)."""
    active = state.get("drift_flags") or []
    known = {(f["rule"], f["gate"], f["path"]) for f in active}
    new = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
    return {"drift_flags": [*active, *new], "drift_log": [*(logged or []), *new]} if new else {}


def make_workspace(deps: Deps, *, provenance: bool = True):
    async def workspace(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        step = state.get("step", 0)
        tables = state.get("tables") or {}
        update: dict[str, Any] = {"pending": None, "nodes_run": ["workspace"]}
        try:
            if pending["name"] == "derive":
                args = Derive.model_validate(pending["args"])
                # the engine runs in its own process; waiting for it must not block the event loop
                written = await asyncio.to_thread(derive, args, tables=tables, schema=deps.spec.columns,
                                                  step=step)
                log: dict[str, Any] = {"sql": args.sql, "inputs": written.tables[args.into]["inputs"]}
            else:
                return await _read_facts(deps, state, ReadFacts.model_validate(pending["args"]), update,
                                         provenance=provenance)
        except (WorkspaceError, FactError, PageReadError) as exc:
            message = error_text(exc, tables)
            deps.log.write({"node": "workspace", "step": step, "tool": pending["name"], "error": message})
            return {**update, "messages": [ToolMessage(f"{pending['name']} failed: {message}",
                                                       tool_call_id=pending["id"])],
                    "errors": [error_record(state, "workspace", "agent", pending["name"], message)]}
        deps.log.write({"node": "workspace", "step": step, "tool": pending["name"], **log,
                        "tables": {k: len(v["rows"]) for k, v in written.tables.items() if v}})
        return {**update, "tables": written.tables, "messages": [ToolMessage(written.message,
                                                                             tool_call_id=pending["id"])],
                "usage": {**state["usage"], "last_progress_at": deps.clock()},
                **flag_update({**state, "drift_flags": update.get("drift_flags", state.get("drift_flags"))},
                              written.flags, logged=update.get("drift_log") or [])}

    return workspace


async def _read_facts(deps: Deps, state: AgentState, args: ReadFacts, update: dict[str, Any], *,
                      provenance: bool) -> dict[str, Any]:
    """read_facts on the current page, or on each page of `url` in turn (opened and tracked first, so each
    page's gates are judged on that page): one row per page; a page that fails is said and the others kept."""
    step = state.get("step", 0)
    view = view_of(state)
    urls = args.urls()
    replies: list[PageReply] = []
    failed: list[PageReply] = []
    for url in urls:
        try:
            result = await view.open(deps, url) if url is not None else await read_facts_of(deps, None)
            assert result.facts is not None
            ctx = read_context(view.state, provenance=provenance, token_budget=deps.token_budget)
            written = read_facts_row(args, ctx, tables=view.get("tables") or {}, page_facts=result.facts.model_dump())
        except (WorkspaceError, FactError, PageReadError) as exc:
            message = error_text(exc, view.get("tables") or {})
            deps.log.write({"node": "workspace", "step": step, "tool": "read_facts", "url": url, "error": message})
            failed.append(PageReply(f"read_facts failed{f' on {url}' if url else ''}: {message}"))
            continue
        view.tables_written(written.tables)
        add_flags(view, written.flags)
        text = written.message
        if url is not None and len(urls) == 1 and not result.delta.empty:
            text = f"{result_lines(result)[-1]}\n{text}"
        elif url is not None and len(urls) > 1:
            text = f"{page_label(url)}: {text}"
        replies.append(PageReply(text, written.notes))
        deps.log.write({"node": "workspace", "step": step, "tool": "read_facts", "url": view.get("observation",
                        {}).get("url"), "into": args.into,
                        "tables": {k: len(v["rows"]) for k, v in written.tables.items() if v}})
    out = {**update, **view.update, "messages": [ToolMessage(join_replies([*replies, *failed]),
                                                             tool_call_id=state["pending"]["id"])]}
    if failed:
        out["errors"] = [error_record(state, "workspace", "agent", "read_facts", f.text) for f in failed]
    if replies:
        out["usage"] = {**state["usage"], "last_progress_at": deps.clock()}
    return out
