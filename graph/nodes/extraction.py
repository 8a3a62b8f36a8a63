"""Extractor node: `extract_rows` through the deterministic extractor, rows with provenance, into the answer
rows or a named evidence table."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage

from graph.composer import live_rows
from graph.evidence import ANSWER, error_text, extract_into, needs_page_facts
from graph.extractor import ExtractionError
from graph.facts import FactError
from graph.nodes.common import error_record
from graph.nodes.deps import Deps
from graph.nodes.workspace import PageReadError, flag_update, read_context, read_page
from graph.state import AgentState
from graph.tools import ExtractRows
from graph.workspace import WorkspaceError


def make_extractor(deps: Deps, *, provenance: bool = True):
    """`provenance=False` is the ablation: rows keep their values but not the state they were read in."""

    async def extractor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        args = ExtractRows.model_validate(pending["args"])
        step = state.get("step", 0)
        tables = state.get("tables") or {}
        try:
            facts = (await read_page(deps)).model_dump() if needs_page_facts(args) else None
            written = extract_into(args, read_context(state, provenance=provenance), schema=deps.spec.columns,
                                   tables=tables, page_facts=facts)
        except (ExtractionError, FactError, WorkspaceError, PageReadError) as exc:
            message = error_text(exc, tables)
            deps.log.write({"node": "extractor", "step": step, "error": message})
            return {"messages": [ToolMessage(f"extract_rows failed: {message}", tool_call_id=pending["id"])],
                    "pending": None, "nodes_run": ["extractor"],
                    "errors": [error_record(state, "extractor", "agent", "extraction", message)]}
        rows = written.rows
        if args.into == ANSWER:
            total = len(live_rows(state.get("rows") or [], state.get("discarded") or [])) + len(rows)
            preview = "\n".join(" | ".join(r["values"].values()) for r in rows[:5])
            first, *notes = written.message.split("\n")
            text = "\n".join([f"{first} ({total} collected)", *([preview] if preview else []), *notes])
        else:
            text = written.message
        deps.log.write({"node": "extractor", "step": step, "into": args.into, "rows": len(rows) or None,
                        "record": written.record, "provenance": [r["provenance"] for r in rows[:3]]})
        update: dict[str, Any] = {"pending": None, "nodes_run": ["extractor"],
                                  "messages": [ToolMessage(text, tool_call_id=pending["id"])],
                                  "usage": {**state["usage"], "last_progress_at": deps.clock()},
                                  **flag_update(state, written.flags)}
        if args.into == ANSWER:
            update.update(rows=rows, reads=[written.record] if written.record else [])
        else:
            update["tables"] = written.tables
        return update

    return extractor
