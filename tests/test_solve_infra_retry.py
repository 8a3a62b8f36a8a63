"""An infrastructure failure ends a thread with an error, and the runner retries the cell (same checkpoint
database): the retry must run the task again, not report the failed thread's outcome once more."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from langchain_core.messages import BaseMessage

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from tasks.loaders import load_tasks

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

SCRIPTED = ModelConfig(name="scripted", provider="scripted")
TASK = "offline_vulns_001"


class _ConnectionDropsAfter(ScriptedPolicy):
    """The scripted policy whose endpoint goes away after `calls` answers (a connection refused)."""

    calls: int = 2

    async def act(self, messages: list[BaseMessage], tools: list[dict[str, Any]], state: Any):
        if self.calls <= 0:
            raise httpx.ConnectError("connection refused")
        self.calls -= 1
        return await super().act(messages, tools, state)


async def _solve(chat, server, worker, out, checkpoint_db):
    task = load_tasks("offline", origin=server.origin, task_ids=[TASK])[0]
    async with worker.task_browser(str(out), [server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=SCRIPTED, variant=AgentVariant(name="full"),
                                   protocol=ProtocolConfig(), out_dir=out, policy=chat,
                                   checkpoint_db=checkpoint_db)
    return task, outcome


async def test_a_thread_ended_by_an_infrastructure_error_runs_again_on_retry(offline_server, chromium_worker,
                                                                              tmp_path):
    steps = load_walkthrough(TASK, origin=offline_server.origin)
    db = tmp_path / "checkpoints.sqlite"
    _, failed = await _solve(_ConnectionDropsAfter(steps=steps), offline_server, chromium_worker, tmp_path, db)
    assert failed.stop_reason == "error" and failed.error_kind == "infra" and "connection refused" in failed.error

    task, again = await _solve(ScriptedPolicy(steps=steps), offline_server, chromium_worker, tmp_path, db)
    assert again.error is None and again.stop_reason == "finished"
    assert score_answer(again.answer, task.oracle_answer, task.output_spec).exact_match
    assert len(again.restarts) == 1 and again.restarts[0]["reason"] == "infra"
    assert "connection refused" in again.restarts[0]["error"]

    # a thread that finished without an infrastructure error is reported again, not re-run
    _, third = await _solve(_ConnectionDropsAfter(steps=steps, calls=0), offline_server, chromium_worker, tmp_path, db)
    assert third.error is None and third.answer == again.answer and len(third.restarts) == 1
