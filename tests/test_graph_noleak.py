"""The agent's state and prompts hold the solver view only: no metadata, rubric, oracle answer or cardinality."""

from __future__ import annotations

import json
import time

import pytest

from agent.solve import initial_state
from browser.delta import render_observation
from graph.prompting.render import Prompts
from tasks.loaders import load_tasks

TASKS = load_tasks("offline", origin="http://127.0.0.1:9")


def hidden_texts(task) -> list[str]:
    """Strings only the hidden parts of the record hold (long enough not to match by accident)."""
    texts = [task.oracle_answer, *map(str, task.metadata.gates)]
    for part in (task.rubric.inclusion_conditions, task.rubric.exclusion_conditions):
        texts += [part] if isinstance(part, str) else [str(p) for p in part or []]
    for key in ("data_dependency", "control_dependency"):
        value = getattr(task.metadata, key)
        if isinstance(value, str):
            texts.append(value)
    return [t for t in texts if len(t) > 20 and t not in task.instruction and t not in task.output_format]


@pytest.mark.parametrize("task", TASKS, ids=[t.task_id for t in TASKS])
@pytest.mark.parametrize("give_start_url", [True, False])
def test_state_and_prompts_hold_no_hidden_fields(task, give_start_url):
    state = initial_state(task.solver_view(give_start_url), time.time())
    assert set(state["task"]) == {"task_id", "instruction", "output_format", "start_url", "output_spec", "today"}
    assert (state["task"]["start_url"] is None) == (not give_start_url)
    prompts = Prompts.load()
    rendered = [
        json.dumps(state, default=str),
        prompts.planner_system, prompts.planner_task(state["task"]),
        prompts.actor_system, prompts.actor_turn(state, observation_text=render_observation(None, 100).text, max_steps=60),
    ]
    text = "\n".join(rendered)
    prompt_text = "\n".join(rendered[1:])
    assert task.task_id not in prompt_text and task.base_id not in prompt_text  # released ids name the site
    assert f"TODAY: {state['task']['today']}" in prompts.planner_task(state["task"])
    for word in ("oracle", "cardinality", "rubric", "metadata", "inclusion_conditions", "State-Gated Retrieval"):
        assert word not in text
    leaked = [h for h in hidden_texts(task) if h in text]
    assert not leaked
    if not give_start_url:
        assert task.start_url not in text
