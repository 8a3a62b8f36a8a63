"""Composer node: the answer in the exact output format, also when a budget stopped the run."""

from __future__ import annotations

from typing import Any

from graph.evidence.evidence_tables import derived_answer
from graph.evidence.workspace_tools import compose_answer
from graph.nodes.common import error_record
from graph.nodes.deps import Deps
from graph.state import AgentState, ErrorRecord


def make_composer(deps: Deps):
    async def composer(state: AgentState) -> dict[str, Any]:
        errors: list[ErrorRecord] = []
        try:
            answer, rows = compose_answer(state.get("tables"), deps.spec, state.get("order_by") or [])
        except ValueError as exc:  # ordering keys that no longer fit: keep the rows, say why
            answer, rows = compose_answer(state.get("tables"), deps.spec, [])
            errors.append(error_record(state, "composer", "agent", "order_by", str(exc)))
        stop = state.get("stop_reason") or "finished"
        deps.log.write({"node": "composer", "step": state.get("step", 0), "rows": rows,
                        "derived": derived_answer(state.get("tables")) is not None, "stop_reason": stop,
                        "answer_lines": answer.count(deps.spec.record_separator) + 1})
        return {"answer": answer, "stop_reason": stop, "pending": None, "nodes_run": ["composer"], "errors": errors}

    return composer
