"""What the actor is offered at each turn: only the tools valid in the current phase and page, and only the
instructions of the nodes that run.

Ablation removes behaviour, not just nodes (as flag-driven prompt elements do in AgentLab): without the
planner there is no plan text and no `revise_plan`; without the state tracker no drift-flag instructions;
without the verifier no repair-goal instructions. The turn prompt follows the state (no plan, no flags, no
goal when their node is off), the system prompt follows `deps.ablated`.

Phase and page decide the rest, which keeps every call's tool schemas small: before the first page only
navigation; a tool that acts on a kind of control only when the page has one; `extract_rows` after a read
or on a page with tables; `discard_rows` once rows or evidence tables exist. A call to a valid tool that is not offered is still executed (the list is
advice for the model, not a trap).
"""

from __future__ import annotations

from typing import Any

from graph.nodes.deps import Deps
from graph.state import AgentState
from graph.toolset import tool_schemas

BEFORE_FIRST_PAGE = frozenset({"goto", "web_search", "revise_plan"})
CONTROL_TOOLS = {  # tool -> control kinds that make it useful
    "fill": {"text", "search", "date", "number", "textarea"},
    "press": {"text", "search", "textarea"},
    "check": {"checkbox", "toggle"},
    "set_range": {"range"},
    "submit": {"submit", "button", "text", "search", "date", "number", "select"},
}
DOWNLOADABLE = (".csv", ".tsv", ".xlsx", ".xls", ".json", "download", "export", "format=")


def _gates(state: AgentState) -> dict[str, bool]:
    """Tools offered only under a condition; every other tool is offered once a page is open."""
    observation = state.get("observation") or {}
    controls = observation.get("controls") or []
    kinds = {c.get("kind") for c in controls}
    hrefs = [str(link.get("href", "")).lower() for link in observation.get("links") or []]
    gates = {tool: bool(kinds & wanted) for tool, wanted in CONTROL_TOOLS.items()}
    gates.update(
        select=any(c.get("options") for c in controls),
        read_table=bool(observation.get("tables") or observation.get("pagination")),
        read_pdf=str(observation.get("url", "")).lower().endswith(".pdf") or any(".pdf" in h for h in hrefs),
        download=any(marker in h for h in hrefs for marker in DOWNLOADABLE),
        extract_rows=bool(state.get("last_read") or observation.get("tables")),
        discard_rows=bool(state.get("rows") or state.get("tables")),
        list_options=any(c.get("options") for c in controls),
        list_links=bool(observation.get("links") or observation.get("links_total")),
    )
    return gates


def offered_tool_names(state: AgentState, *, ablated: frozenset[str], all_names: set[str]) -> set[str]:
    if not state.get("observation"):
        names = set(BEFORE_FIRST_PAGE)
    else:
        gates = _gates(state)
        names = {name for name in all_names if gates.get(name, True)}
    if "planner" in ablated:
        names.discard("revise_plan")
    return names & all_names


def actor_tools(deps: Deps, state: AgentState) -> list[dict[str, Any]]:
    tools = tool_schemas(search=deps.search_enabled)
    names = offered_tool_names(state, ablated=deps.ablated, all_names={t["function"]["name"] for t in tools})
    return [t for t in tools if t["function"]["name"] in names]


def actor_system(deps: Deps, state: AgentState | None = None) -> str:
    """actor.md with the parts of switched-off nodes left out."""
    return deps.prompts.env.from_string(deps.prompts.actor_system).render(
        planner="planner" not in deps.ablated, tracker="state_tracker" not in deps.ablated,
        verifier="verifier" not in deps.ablated, provenance="provenance" not in deps.ablated).strip()
