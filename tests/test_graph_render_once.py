"""The observation is rendered when the prompt is built, once per actor call (issue 26 stage 7).

The browser's observe returns the structure only; the actor renders it within the room the prompt leaves it.
Counted on a real run (real Chromium, the offline site, the scripted walkthrough through the real graph): every
call of the renderer's one layout function (`browser.render._rendered`, which every rendering goes through) is
attributed to where it happened.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import browser.render
import graph.nodes.actor
from agent.measuring.scripted import ScriptedPolicy
from browser.session import PageDriver
from tests.fixtures.walkthroughs import solve_exactly

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]


class Counts:
    def __init__(self) -> None:
        self.renders = 0
        self.observes: list[int] = []  # renders made inside each observe of the browser
        self.turns: list[tuple[bool, int, bool]] = []  # per actor call: an observation?, renders made, a delta?
        self.calls = 0  # actor calls that reached the policy


async def test_each_actor_call_renders_its_observation_once_and_observing_renders_nothing(
        offline_server, chromium_worker, tmp_path: Path, monkeypatch):
    counts = Counts()
    layout = browser.render._rendered

    def counting_layout(*args, **kwargs):
        counts.renders += 1
        return layout(*args, **kwargs)

    observe = PageDriver._observe

    async def counting_observe(self):
        before = counts.renders
        try:
            return await observe(self)
        finally:
            counts.observes.append(counts.renders - before)

    turn_observation = graph.nodes.actor.turn_observation

    def counting_turn(state, budget):
        before = counts.renders
        rendering, seen = turn_observation(state, budget)
        counts.turns.append((bool(state.get("observation")), counts.renders - before,
                             rendering.unchanged_since is not None))
        return rendering, seen

    class Counting(ScriptedPolicy):
        async def act(self, messages, tools, state):
            counts.calls += 1
            return await super().act(messages, tools, state)

    monkeypatch.setattr(browser.render, "_rendered", counting_layout)
    monkeypatch.setattr(PageDriver, "_observe", counting_observe)
    monkeypatch.setattr(graph.nodes.actor, "turn_observation", counting_turn)

    task_id = "offline_water_004"  # two tables of one page read in turn: some turns show the page as a delta
    await solve_exactly(task_id, Counting, offline_server, chromium_worker, tmp_path)

    assert len(counts.observes) >= 8 and set(counts.observes) == {0}  # observing renders nothing
    shown = [renders for has_page, renders, _ in counts.turns if has_page]
    assert len(counts.turns) == counts.calls and len(shown) >= 8
    assert set(shown) == {1}  # each actor call that shows the page renders it once (a delta included)
    assert any(delta for _, _, delta in counts.turns) and not any(n for has, n, _ in counts.turns if not has)
    assert counts.renders == len(shown)  # and nothing else in the run renders it
