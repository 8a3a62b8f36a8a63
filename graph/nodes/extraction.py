"""Extractor node: `extract_rows` through the deterministic extractor, rows with provenance."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage

from graph.composer import live_rows
from graph.extractor import ExtractionError, extract
from graph.nodes.common import error_record
from graph.nodes.deps import Deps
from graph.state import AgentState
from graph.tools import ExtractRows


def make_extractor(deps: Deps, *, provenance: bool = True):
    """`provenance=False` is the ablation: rows keep their values but not the state they were read in."""

    async def extractor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        args = ExtractRows.model_validate(pending["args"])
        step = state.get("step", 0)
        try:
            extraction = extract(args, columns=deps.spec.columns, observation=state.get("observation") or {},
                                 last_read=state.get("last_read"), retrieval=state.get("retrieval"),
                                 drift_flags=state.get("drift_flags") or [], provenance=provenance, step=step)
        except ExtractionError as exc:
            deps.log.write({"node": "extractor", "step": step, "error": str(exc)})
            return {"messages": [ToolMessage(f"extract_rows failed: {exc}", tool_call_id=pending["id"])],
                    "pending": None, "nodes_run": ["extractor"],
                    "errors": [error_record(state, "extractor", "agent", "extraction", str(exc))]}
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
