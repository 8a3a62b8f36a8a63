"""Workspace node: `read_facts` (labelled values of a page, optionally opened first, into one row of a
table) and `derive` (one read-only SQL query over the tables). A page opened here goes through the state
tracker next, like any navigation."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import ToolMessage

from browser.interface import BrowserError
from browser.types import ActionResult, PageFacts, ReadPageFacts
from graph.evidence import ReadContext, derive, error_text, query_tables, read_facts_row
from graph.facts import FactError
from graph.nodes.common import error_record, summarize_result
from graph.nodes.deps import Deps
from graph.nodes.tracking import tracked
from graph.state import AgentState, DriftFlag, Plan
from graph.tools import Derive, ReadFacts
from graph.workspace import WorkspaceError


class PageReadError(ValueError):
    """The page could not be opened or read (policy, not found, timeout)."""


async def read_page(deps: Deps, url: str | None = None) -> PageFacts:
    return (await _read(deps, url)).facts or PageFacts()


async def _read(deps: Deps, url: str | None) -> ActionResult:
    try:
        result = await deps.browser.act(ReadPageFacts(url=url))
    except BrowserError as exc:
        raise PageReadError(f"{exc.error_class}: {exc}") from exc
    if not result.ok or result.facts is None:
        raise PageReadError(f"{result.error}: {result.message}")
    return result


def read_context(state: AgentState, *, provenance: bool, observation: dict[str, Any] | None = None) -> ReadContext:
    return ReadContext(observation=observation if observation is not None else state.get("observation") or {},
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
                available = query_tables(tables, state.get("rows") or [], deps.spec.columns)
                # the engine runs in its own process; waiting for it must not block the event loop
                written = await asyncio.to_thread(derive, args, tables=available, schema=deps.spec.columns,
                                                  step=step)
                log: dict[str, Any] = {"sql": args.sql, "inputs": written.tables[args.into]["inputs"]}
            else:
                facts_args = ReadFacts.model_validate(pending["args"])
                result = await _read(deps, facts_args.url)
                observation = state.get("observation") or {}
                if facts_args.url and result.observation is not None:
                    observation = result.observation.model_dump()
                    update.update(observation=observation, visited=[observation["url"]], last_read=None,
                                  last_action=ReadPageFacts(url=facts_args.url).model_dump(),
                                  last_result=result.model_dump(exclude={"observation", "facts"}),
                                  navigated_at=step)
                    if "state_tracker" not in deps.ablated:  # judged on the page it read, not the one before
                        update.update(tracked({**state, **update}))
                now = {**state, **update, "history": [*(state.get("history") or []), *update.get("history", [])]}
                ctx = read_context(now, provenance=provenance, observation=observation)
                written = read_facts_row(facts_args, ctx, tables=tables, page_facts=result.facts.model_dump())
                log = {"url": observation.get("url"), "into": facts_args.into}
                if facts_args.url and not result.delta.empty:
                    written.message = f"{summarize_result(result).splitlines()[-1]}\n{written.message}"
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
