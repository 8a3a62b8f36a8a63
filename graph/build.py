"""Assemble the StateGraph; ablated nodes are left out of the compiled graph, not skipped at run time.

planner -> actor -> executor -> state_tracker -> actor ...; actor -> extractor -> actor;
actor(read_facts, derive) -> workspace -> (state_tracker if it opened a page | actor);
actor(finish) -> verifier -> (actor with a repair goal | composer) -> END.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.nodes import (
    Deps,
    make_actor,
    make_composer,
    make_executor,
    make_extractor,
    make_planner,
    make_state_tracker,
    make_verifier,
    make_workspace,
)
from graph.state import AgentState
from graph.tools.tool_specs import TOOL_SPECS


def build_graph(ablate: list[str] | frozenset[str], deps: Deps, *, checkpointer: Any = None) -> CompiledStateGraph:
    ablated = frozenset(ablate)
    deps = replace(deps, ablated=ablated)  # the actor's prompt and tools follow the nodes that run (graph/tools/offers.py)
    use_planner, use_tracker, use_verifier = (node not in ablated for node in ("planner", "state_tracker", "verifier"))

    graph = StateGraph(AgentState)
    if use_planner:
        graph.add_node("planner", make_planner(deps))
    graph.add_node("actor", make_actor(deps))
    graph.add_node("executor", make_executor(deps))
    graph.add_node("extractor", make_extractor(deps, provenance="provenance" not in ablated))
    graph.add_node("workspace", make_workspace(deps, provenance="provenance" not in ablated))
    graph.add_node("composer", make_composer(deps))
    if use_tracker:
        graph.add_node("state_tracker", make_state_tracker(deps))
    if use_verifier:
        graph.add_node("verifier", make_verifier(deps))

    after_finish = "verifier" if use_verifier else "composer"
    after_browser = "state_tracker" if use_tracker else "actor"

    def route_actor(state: AgentState) -> str:
        if state.get("stop_reason"):
            return "composer"
        pending = state.get("pending")
        if pending is None:
            return "actor"  # invalid call answered, or bookkeeping tool done
        spec = TOOL_SPECS.get(pending["name"])
        if spec is None or spec.node in (None, "actor"):  # bookkeeping tools are answered by the actor itself
            raise ValueError(f"no route for tool {pending['name']!r}")
        return after_finish if spec.node == "finish" else spec.node

    def route_browser(state: AgentState) -> str:
        return "composer" if state.get("stop_reason") else after_browser

    if use_planner:
        graph.add_edge(START, "planner")
        graph.add_conditional_edges("planner", lambda s: "composer" if s.get("stop_reason") else "actor",
                                    ["actor", "composer"])
    else:
        graph.add_edge(START, "actor")
    graph.add_conditional_edges("actor", route_actor, sorted({"actor", "extractor", "executor", "workspace",
                                                              "composer", after_finish}))
    graph.add_conditional_edges(
        "workspace", lambda s: after_browser if s.get("navigated_at") == s.get("step", 0) else "actor",
        sorted({"actor", after_browser}))
    graph.add_conditional_edges("executor", route_browser, sorted({"composer", after_browser}))
    if use_tracker:
        graph.add_edge("state_tracker", "actor")
    graph.add_edge("extractor", "actor")
    if use_verifier:
        graph.add_conditional_edges("verifier", lambda s: "actor" if s.get("pending") is None else "composer",
                                    ["actor", "composer"])
    graph.add_edge("composer", END)
    return graph.compile(checkpointer=checkpointer)
