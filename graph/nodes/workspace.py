"""Workspace node: `read_facts` (labelled values of a page, optionally opened first, into one row of a
table; several pages in turn, a row each) and `derive` (one read-only SQL query over the tables). A page opened
here is tracked before it is read (`graph.nodes.pages`), and goes through the state tracker next, like any
navigation."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import ToolMessage

from graph.evidence.evidence_tables import WorkspaceError
from graph.evidence.workspace_tools import derive, error_parts, error_text, read_facts_row
from graph.model_io.robust import tool_reply
from graph.nodes.common import error_record, result_lines
from graph.nodes.deps import Deps
from graph.nodes.pages import PageReply, PageView, add_flags, read_each, read_facts_of
from graph.prompting.page_fence import compose
from graph.state import AgentState
from graph.tools.agent_tools import Derive, ReadFacts


def make_workspace(deps: Deps, *, provenance: bool = True):
    async def workspace(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        if pending["name"] != "derive":
            return await _read_facts(deps, state, ReadFacts.model_validate(pending["args"]), provenance=provenance)
        step = state.get("step", 0)
        tables = state.get("tables") or {}
        update: dict[str, Any] = {"pending": None, "nodes_run": ["workspace"]}
        args = Derive.model_validate(pending["args"])
        try:
            # the engine runs in its own process; waiting for it must not block the event loop
            written = await asyncio.to_thread(derive, args, tables=tables, schema=deps.spec.columns, step=step)
        except WorkspaceError as exc:
            message, shown = error_parts(exc, tables)
            text, own = compose([(f"derive failed: {message}", False), *([(shown, True)] if shown else [])])
            deps.log.write({"node": "workspace", "step": step, "tool": "derive", "error": error_text(exc, tables)})
            return {**update, "messages": [tool_reply(text, pending["id"], own=own)],
                    "errors": [error_record(state, "workspace", "agent", "derive", error_text(exc, tables))]}
        deps.log.write({"node": "workspace", "step": step, "tool": "derive", "sql": args.sql,
                        "inputs": written.tables[args.into]["inputs"],
                        "tables": {k: len(v["rows"]) for k, v in written.tables.items() if v}})
        return {**update, "tables": written.tables,
                "messages": [ToolMessage(written.message, tool_call_id=pending["id"])],
                "usage": {**state["usage"], "last_progress_at": deps.clock()}}

    return workspace


async def _read_facts(deps: Deps, state: AgentState, args: ReadFacts, *, provenance: bool) -> dict[str, Any]:
    """read_facts on the current page, or on each page of `url` in turn (opened and tracked first, so each
    page's gates are judged on that page): one row per page."""
    urls = args.urls()

    async def read(view: PageView, url: str | None) -> PageReply:
        result = await view.open(deps, url) if url is not None else await read_facts_of(deps, None)
        assert result.facts is not None
        # in a worker thread: `re:` sources are the model's regexes (graph/evidence/model_regex.py)
        written = await asyncio.to_thread(read_facts_row, args, view.context(deps, provenance=provenance),
                                          tables=view.get("tables") or {}, page_facts=result.facts.model_dump())
        view.tables_written(written.tables)
        add_flags(view, written.flags)
        deps.log.write({"node": "workspace", "step": view.get("step", 0), "tool": "read_facts",
                        "url": view.get("observation", {}).get("url"), "into": args.into,
                        "tables": {k: len(v["rows"]) for k, v in written.tables.items() if v}})
        if url is not None and len(urls) == 1 and not result.delta.empty:
            return PageReply(f"{result_lines(result)[-1]}\n{written.message}", written.notes)
        return PageReply(written.message, written.notes)

    return await read_each(deps, state, urls, read, tool="read_facts", error_class="read_facts",
                           event={"node": "workspace", "step": state.get("step", 0), "tool": "read_facts"})
