"""Issue 29 item 4: each checkpoint held the whole state, so the checkpoint database grew with the square of
the steps (20 steps with 50 KB URLs: 210 MB). A thread now keeps only its latest checkpoint, which is all a
resume needs (re-report a finished thread, restart an interrupted one), and the file is compacted at the end."""

from __future__ import annotations

import operator
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph

from agent.rundir.checkpoints import open_checkpointer, restart_if_interrupted

STEPS = 20
CHUNK = 50_000  # a 50 KB URL a step, as the probe used


class Killed(Exception):
    pass


class _State(TypedDict):
    urls: Annotated[list, operator.add]
    step: int


def _graph(stop_at: int | None = None) -> StateGraph:
    async def act(state: _State) -> dict:
        if stop_at is not None and state["step"] == stop_at:
            raise Killed  # the process killed mid-task
        return {"urls": [f"http://h/?q={state['step']:04d}" + "x" * CHUNK], "step": state["step"] + 1}

    builder = StateGraph(_State)
    builder.add_node("act", act)
    builder.add_edge(START, "act")
    builder.add_conditional_edges("act", lambda s: END if s["step"] >= STEPS else "act")
    return builder


async def test_checkpoint_size_stays_linear_in_the_state(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": STEPS + 5}
    async with AsyncExitStack() as stack:
        graph = _graph().compile(checkpointer=await open_checkpointer(stack, db))
        await graph.ainvoke({"urls": [], "step": 0}, config)
        state = (await graph.aget_state(config)).values
    assert state["step"] == STEPS and len(state["urls"]) == STEPS  # the final state is whole (re-reported)
    final_state = STEPS * CHUNK  # 1 MB; every checkpoint kept: about STEPS / 2 times that
    assert db.stat().st_size < 2 * final_state, db.stat().st_size


async def test_checkpoint_size_an_interrupted_thread_still_restarts_with_its_record(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": STEPS + 5}
    async with AsyncExitStack() as stack:
        saver = await open_checkpointer(stack, db)
        graph = _graph(stop_at=7).compile(checkpointer=saver)
        with suppress(Killed):
            await graph.ainvoke({"urls": [], "step": 0}, config)
    async with AsyncExitStack() as stack:
        saver = await open_checkpointer(stack, db)
        graph = _graph().compile(checkpointer=saver)
        snapshot = await graph.aget_state(config)
        assert snapshot.values["step"] == 7 and snapshot.next == ("act",)  # where it stopped
        restarts = await restart_if_interrupted(snapshot, saver, config)
        assert restarts and restarts[-1]["interrupted_at_step"] == 7
        await graph.ainvoke({"urls": [], "step": 0}, config)
        assert (await graph.aget_state(config)).values["step"] == STEPS
