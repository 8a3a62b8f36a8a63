"""Ablated nodes are absent from the compiled graph (not skipped at run time)."""

from __future__ import annotations

import pytest

from agent.config import ABLATABLE_NODES, ModelConfig
from agent.measuring.scripted import ScriptedPolicy
from graph.build import build_graph
from graph.nodes import Deps
from tasks.spec import OutputSpec

ALWAYS = {"actor", "executor", "extractor", "workspace", "composer"}


@pytest.mark.parametrize("ablate", [[], *([n] for n in ABLATABLE_NODES), list(ABLATABLE_NODES)])
def test_compiled_graph_has_exactly_the_enabled_nodes(ablate):
    deps = Deps(browser=None, policy=ScriptedPolicy(steps=[]), model_config=ModelConfig(name="s"),
                spec=OutputSpec(columns=("a",)))
    nodes = set(build_graph(ablate, deps).get_graph().nodes) - {"__start__", "__end__"}
    optional = {"planner", "state_tracker", "verifier"} - set(ablate)
    assert nodes == ALWAYS | optional


def test_build_graph_leaves_its_deps_as_given():
    """Deps are fixed for a run: building an ablated graph gives its nodes a copy, and the given one cannot be
    changed by a node either."""
    import dataclasses

    deps = Deps(browser=None, policy=ScriptedPolicy(steps=[]), model_config=ModelConfig(name="s"),
                spec=OutputSpec(columns=("a",)))
    build_graph(["verifier"], deps)
    assert deps.ablated == frozenset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        deps.ablated = frozenset({"planner"})  # type: ignore[misc]
    assert not hasattr(deps, "actor_model") and not hasattr(deps, "model")
