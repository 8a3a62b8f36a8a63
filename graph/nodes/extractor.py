"""Extractor node: `extract_rows` through the deterministic extractor, rows with provenance, into the `answer`
table or a named evidence table. With `url` the node opens the page first (each of several in turn), tracks its
state and reads it in the same call: one step per detail page, its gates judged on the page it read."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage

from graph.agent_tools import ExtractRows
from graph.evidence_tables import WorkspaceError
from graph.fact_match import FactError
from graph.nodes.common import error_record
from graph.nodes.deps import Deps
from graph.nodes.pages import (
    PageReadError,
    PageReply,
    PageView,
    add_flags,
    echo_budget,
    join_replies,
    open_pdf,
    page_label,
    read_facts_of,
    view_of,
)
from graph.nodes.workspace import read_context
from graph.row_extraction import ExtractionError
from graph.state import AgentState
from graph.workspace_tools import error_text, extract_into, needs_page_facts

FAILURES = (ExtractionError, FactError, WorkspaceError, PageReadError)


def make_extractor(deps: Deps, *, provenance: bool = True):
    """`provenance=False` is the ablation: rows keep their values but not the state they were read in."""

    async def extractor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        args = ExtractRows.model_validate(pending["args"])
        step = state.get("step", 0)
        view = view_of(state)
        replies: list[PageReply] = []
        failed: list[PageReply] = []
        read_any = False
        urls = args.urls()
        for url in urls:
            try:
                reply = await _read_one(deps, view, args, url, provenance=provenance,
                                        echo_chars=echo_budget(len(urls)))
            except FAILURES as exc:
                message = error_text(exc, view.get("tables") or {})
                check = read_context(view.state, provenance=provenance, token_budget=deps.token_budget).check(args.into)
                deps.log.write({"node": "extractor", "step": step, "url": url, "error": message})
                add_flags(view, check.mismatches)
                failed.append(PageReply(f"extract_rows failed{f' on {url}' if url else ''}: {message}",
                                        check.notes()))
                continue
            read_any = True
            replies.append(reply)
        update: dict[str, Any] = {"pending": None, "nodes_run": ["extractor"], **view.update,
                                  "messages": [ToolMessage(join_replies([*replies, *failed]),
                                                           tool_call_id=pending["id"])]}
        if failed:
            update["errors"] = [error_record(state, "extractor", "agent", "extraction", join_replies([f]))
                                for f in failed]
        if read_any:
            update["usage"] = {**state["usage"], "last_progress_at": deps.clock()}
        return update

    async def _read_one(deps: Deps, view: PageView, args: ExtractRows, url: str | None, *,
                        provenance: bool, echo_chars: int) -> PageReply:
        step = view.get("step", 0)
        facts = None
        if url is not None and args.source == "pdf":
            await open_pdf(deps, view, url)
        elif url is not None:
            facts = (await view.open(deps, url)).facts
        elif needs_page_facts(args):
            facts = (await read_facts_of(deps, None)).facts
        tables = view.get("tables") or {}
        ctx = read_context(view.state, provenance=provenance, token_budget=deps.token_budget)
        written = extract_into(args, ctx, schema=deps.spec.columns, tables=tables,
                               page_facts=facts.model_dump() if facts is not None else None, echo_chars=echo_chars)
        rows = written.rows
        text = written.message
        view.tables_written(written.tables)
        add_flags(view, written.flags)
        deps.log.write({"node": "extractor", "step": step, "into": args.into, "url": url, "rows": len(rows) or None,
                        "record": written.record, "provenance": [r["provenance"] for r in rows[:3]]})
        return PageReply(f"{page_label(url)}: {text}" if url is not None and len(args.urls()) > 1 else text,
                         written.notes)

    return extractor
