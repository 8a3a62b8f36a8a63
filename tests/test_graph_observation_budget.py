"""One observation budget, owned by the browser renderer and honoured end to end (issue 13).

A real LangGraph run with the scripted model opens a control-heavy page (13 dropdowns, 8 filter buttons and an
"Add to my list" button on each of 120 result rows). The test reads the prompt the chat model actually received
and checks that every control reaches it, that the observation in it is the renderer's text as it is (rendered
when the prompt is built, within the budget; laid out within less for a prompt with less room), and that what is
left out is announced with the read that returns it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy
from agent.solve import solve_task
from browser.render import render
from browser.tokens import count_tokens
from tasks.models import Task

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

BUDGET = 1500
PAGE = "obs_control_heavy.html"
DROPDOWNS = ["Region", "Parameter", "Year from", "Year to", "Month", "Station", "Agency", "Status", "Regulation",
             "Operation schedule", "Data type", "Rows per page", "Sort by"]
FILTERS = ["Flow", "Level", "Active", "Natural", "Continuous", "Has real-time", "Has sediment", "RHBN"]
ROWS = 120


def _task(url: str) -> Task:
    """A task record of the suite's shape whose start page is the control-heavy page."""
    path = Path(__file__).resolve().parent.parent / "tasks" / "offline" / "data" / "goal.jsonl"
    base = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return Task.model_validate({**base, "task_id": "observation_budget_901-g", "start_url": url,
                                "instruction": "List the active stations of the search page."})


def _observation_in(prompt: str) -> str:
    """The observation block of an actor turn (the template ends with it, fenced)."""
    return prompt.split("\nOBSERVATION:\n", 1)[1].removesuffix("\nEND OBSERVATION")


async def test_every_control_of_a_control_heavy_page_reaches_the_model_within_the_one_budget(
        chromium_worker, fixture_site, tmp_path):
    url = fixture_site.url(PAGE)
    chat = ScriptedPolicy(steps=[{"tool": "goto", "args": {"url": url}}, {"tool": "finish", "args": {}}])
    async with chromium_worker.task_browser(str(tmp_path), [fixture_site.origin]) as browser:
        outcome = await solve_task(_task(url), browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                   variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=tmp_path,
                                   token_budget=BUDGET, policy=chat)
        observed = await browser.observe()
    assert outcome.error is None, outcome.error

    turns = [m for m in chat.transcript if "\nOBSERVATION:\n" in m and f"URL: {url}" in m]
    # the page shown whole (a later turn on the unchanged page may get a delta: tests/test_graph_prompt_size.py)
    whole = [t for t in turns if not _observation_in(t).startswith("(page unchanged")]
    assert whole, "no actor turn showed the page"
    seen = _observation_in(whole[-1])
    # the prompt shows the renderer's text as it is, observed within the one budget when the prompt was built
    shown = render(observed, BUDGET)
    assert seen == shown.text
    assert count_tokens(seen) <= BUDGET and shown.tokens <= BUDGET
    smaller = render(observed, 600).text  # a prompt with less room: laid out within it, not chopped
    assert count_tokens(smaller) <= 600 and smaller != shown.text and "read_table 0" in smaller

    lines = seen.splitlines()
    for label in DROPDOWNS:
        assert any(re.match(rf'\[e\d+\] (select|page_size) "{label}" = ', line) for line in lines), label
    for label in FILTERS:
        assert any(re.match(rf'\[e\d+\] button "{label}"', line) for line in lines), label
    # long option lists: summarised with the one call that lists them all
    station = next(c for c in observed.controls if c.label == "Station")
    assert len(station.options) == 90 and f"list_options {station.ref} for all" in seen
    # 120 row buttons: one line for the kind, and each shown row ends with its own button's ref
    buttons = [c for c in observed.controls if c.label == "Add to my list"]
    assert len(buttons) == ROWS
    assert f'[{buttons[0].ref}] button "Add to my list" (+{ROWS - 1} alike, one per row of TABLE 0' in seen
    row_lines = [line for line in lines if line.startswith("| ST")]
    assert row_lines and all(line.endswith(f"[{buttons[i].ref}]") for i, line in enumerate(row_lines))
    # every control is named in the text or reached through the rows the cut announces
    named = {m for line in lines for m in re.findall(r"\[(e\d+)\]", line)}
    missing = [c.ref for c in observed.controls if c.ref not in named]
    assert set(missing) <= {b.ref for b in buttons[len(row_lines):]}
    assert f"… {ROWS - len(row_lines)} more rows of TABLE 0 not shown — read_table 0" in seen
    table = observed.tables[0]
    assert table.total_rows == ROWS and [r[-1] for r in table.row_controls] == [b.ref for b in buttons]
