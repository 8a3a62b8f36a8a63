"""What the actor is offered at each turn: only the tools valid in the current phase and page, and only the
instructions of the nodes that run.

Ablation removes behaviour, not just nodes (as flag-driven prompt elements do in AgentLab): without the
planner there is no plan text and no `revise_plan`; without the state tracker no drift-flag instructions;
without the verifier no repair-goal instructions. The turn prompt follows the state (no plan, no flags, no
goal when their node is off), the system prompt follows `deps.ablated`.

Phase and page decide the rest, which keeps every call's tool schemas small: before the first page only
navigation; a tool that acts on a kind of control only when the page has one; `extract_rows` after a read
or on a page with tables; `derive` once evidence tables exist, `discard_rows` once rows or tables exist and a
drift flag or repair goal asks for it (the system prompt names every tool, so it can still be called); the
reads of what the observation left out (`list_options`, `list_links`, `read_section`) when its notes name
them (the renderer's note on every cut says which read returns the rest); `set_url_params` when the URL has
a query; `read_facts` for chained answers; `scroll` and `wait_for` for a page in doubt; `revise_plan` while
the plan is in question (a gate not found or ambiguous, drift, a repair goal). A call to a valid tool that
is not offered is still executed (the list is advice for the model, not a trap). Each tool's rule is its row of
graph/tools/tool_specs.py; this module builds the typed `Situation` the rules read."""

from __future__ import annotations

from typing import Any

from browser.delta import as_observation
from browser.render import Rendering, possible_reads, whole_reads, whole_tokens
from browser.types import Observation
from graph.evidence.evidence_tables import workspace_tables
from graph.nodes.deps import Deps
from graph.plan.binding import plan_of
from graph.plan.judge import current_phase, gates_for, verdicts
from graph.prompting.render import page_key, pending_gates
from graph.state import AgentState
from graph.tools.tool_schemas import tool_schemas, with_gate_field
from graph.tools.tool_specs import TOOL_SPECS, Situation

SPARSE_PAGE_TOKENS = 120  # an observation this short may be a page still loading


def situation(state: AgentState, *, ablated: frozenset[str], shown: Rendering | bool = False) -> Situation:
    """What the offering rules of graph/tools/tool_specs.py read, from the state as typed data; `shown`, the turn's
    rendering of the observation: the reads its notes name and whether it is a delta. Before it is made (the
    prompt's room not decided yet): True, what a rendering that shows the page whole names; False, whatever any
    rendering of it could name; either may be a delta. The final offers are a subset of those assumed."""
    observation = state.get("observation")
    page = as_observation(observation) if observation else None
    if isinstance(shown, Rendering):
        left_out, delta = shown.reads, shown.unchanged_since is not None
    else:
        left_out = frozenset() if page is None else whole_reads(page) if shown else possible_reads(page)
        delta = page is not None and (state.get("seen_page") or {}).get("key") == page_key(observation)
    return Situation(
        page=page,
        left_out=left_out,
        shown_before=delta,
        last_read=bool(state.get("last_read")),
        evidence_tables=bool(workspace_tables(state.get("tables"))),
        rows=bool(state.get("tables")),
        flagged=bool(state.get("drift_flags") or state.get("repair_goal")),
        facts_wanted=_facts_wanted(state),
        page_in_doubt=page is not None and _page_in_doubt(state, page),
        plan_in_question="planner" not in ablated and _plan_in_question(state),
    )


def _facts_wanted(state: AgentState) -> bool:
    """read_facts (one row per page) serves chained answers: offered without a plan (nothing says the answer
    is one table), when the plan reads detail pages, phases or a derivation, or once evidence tables exist."""
    plan = state.get("plan")
    if not plan or workspace_tables(state.get("tables")):
        return True
    return bool(plan.get("detail_pages") or plan.get("phases") or plan.get("derivation"))


def _page_in_doubt(state: AgentState, page: Observation) -> bool:
    """Waiting and scrolling recover a page that shows less than it should (still loading, lazy content):
    offered after an action that failed or changed nothing, or on a page that shows almost nothing."""
    result = state.get("last_result") or {}
    return bool(result.get("error")) or result.get("ok") is False or whole_tokens(page) < SPARSE_PAGE_TOKENS


def _plan_in_question(state: AgentState) -> bool:
    """When the site may show the plan wrong: before the first page, while a plan gate is not found (or
    matches several controls), under drift flags or a repair goal, or when there is no plan yet; and always
    without a tracked state (state tracker off: nothing checks the plan against the page)."""
    if not state.get("observation") or not state.get("plan") or not state.get("retrieval"):
        return True
    plan = plan_of(state)
    return bool(state.get("repair_goal") or state.get("drift_flags")
                or pending_gates(plan, state.get("retrieval"), state.get("history"))
                or any(v.status == "unresolved" and v.grounded
                       for v in verdicts(gates_for(plan, every_phase=True), state.get("retrieval"))))


def offered_tool_names(state: AgentState, *, ablated: frozenset[str], all_names: set[str],
                       shown: Rendering | bool = False) -> set[str]:
    now = situation(state, ablated=ablated, shown=shown)
    return {name for name in all_names if TOOL_SPECS[name].ablated_with not in ablated and TOOL_SPECS[name].offered(now)}


def offering_line(*, ablated: frozenset[str], search: bool) -> str:
    """The system prompt's line on when each tool is offered, from each tool's rule (`Offer.says`): the actor's
    tools of the nodes that run, those sharing words named together, in the table's order."""
    groups: dict[str, list[str]] = {}
    for name, spec in TOOL_SPECS.items():
        if spec.node and (search or not spec.search_only) and spec.ablated_with not in ablated:
            groups.setdefault(spec.offered.says, []).append(name)
    return "Offered when: " + "; ".join(f"{' '.join(names)}: {says}" for says, names in groups.items())


def actor_tools(deps: Deps, state: AgentState, shown: Rendering | bool = False) -> list[dict[str, Any]]:
    """The offered tools' schemas, for the turn's rendering `shown` (see `situation`); a shared shape (the
    element target) is spelled out at its first use here."""
    all_names = {t["function"]["name"] for t in tool_schemas(search=deps.search_enabled)}
    names = offered_tool_names(state, ablated=deps.ablated, all_names=all_names, shown=shown)
    tools = tool_schemas(search=deps.search_enabled, names=names, repair=bool(state.get("repair_goal")))
    return with_gate_field(tools) if "state_tracker" not in deps.ablated and _unbound(state) else tools


def _unbound(state: AgentState) -> bool:
    """A required gate in force bound to no control yet: the setters offer their `gate` field (graph/plan/binding.py)."""
    plan = plan_of(state)
    return plan is not None and any(g.required and g.binding is None
                                    for g in gates_for(plan, current_phase(plan, state.get("tables") or {},
                                                                           state.get("history"))))


def actor_system(deps: Deps, state: AgentState | None = None) -> str:
    """actor.md with the parts of switched-off nodes left out."""
    return deps.prompts.env.from_string(deps.prompts.actor_system).render(
        offering=offering_line(ablated=deps.ablated, search=deps.search_enabled),
        planner="planner" not in deps.ablated, tracker="state_tracker" not in deps.ablated,
        verifier="verifier" not in deps.ablated, provenance="provenance" not in deps.ablated).strip()
