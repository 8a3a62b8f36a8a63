"""A model that re-sends an action which succeeds but changes nothing (the same `goto` again and again, seen
from a real local model) is told so, refused, then stopped: it does not loop until the step budget."""

from __future__ import annotations

import json

import pytest

from agent.config import AgentVariant, Budgets, ProtocolConfig
from agent.measuring.fake_server import FakeOpenAIServer
from agent.solve import solve_task
from graph.model_io.robust import NO_CHANGE
from tasks.loaders import load_tasks

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]


async def test_the_same_successful_no_op_repeated_stops_the_run(offline_server, chromium_worker, tmp_path):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_vulns_001"])[0]
    again = {"tool_calls": [{"name": "goto", "arguments": {"url": task.start_url}}]}
    protocol = ProtocolConfig(budgets=Budgets(max_steps=20, wall_seconds=600))
    with FakeOpenAIServer([again] * 20) as fake:
        async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
            outcome = await solve_task(task, browser=browser, model=fake.model_config(name="fake"),
                                       variant=AgentVariant(name="no-planner", ablate=["planner"]),
                                       protocol=protocol, out_dir=tmp_path)
    events = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    actor = [e for e in events if e.get("node") == "actor"]
    # 1st goto opens the page, the 2nd and 3rd change nothing (said so), the 4th is refused, the 5th stops
    assert outcome.stop_reason == "repeated_failure"
    assert len(fake.requests) == 5 and len(actor) == 5
    assert [e.get("tool") for e in actor[:3]] == ["goto"] * 3
    assert NO_CHANGE in json.dumps(fake.requests[3]) and NO_CHANGE not in json.dumps(fake.requests[1])
    assert outcome.invalid_calls >= 2
