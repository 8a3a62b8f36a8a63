"""The graph's nodes, one module each, built over shared `Deps`.

LLM nodes (planner, actor) only choose; browser work, state tracking, extraction, verification and
composition are deterministic code, so their behaviour is testable and their cost is not the model's.
"""

from graph.nodes.actor import make_actor
from graph.nodes.common import budget_stop, history_window
from graph.nodes.composer import make_composer
from graph.nodes.deps import Deps, StepLog
from graph.nodes.executor import make_executor
from graph.nodes.extractor import make_extractor
from graph.nodes.planner import make_planner
from graph.nodes.state_tracker import make_state_tracker
from graph.nodes.verifier import make_verifier
from graph.nodes.workspace import make_workspace

__all__ = ["Deps", "StepLog", "budget_stop", "history_window", "make_actor", "make_composer", "make_executor",
           "make_extractor", "make_planner", "make_state_tracker", "make_verifier", "make_workspace"]
