"""Issue 40 item 6: pages without limits. A redirect loop was not detected: the policy answers each page redirect
with a page that navigates on (so every hop is checked), which Chromium's own redirect count never sees; a goto
made ~546 requests until its timeout, and in webenv mode the next goto broke. Twelve 20 MB pages in one
`read_facts` took 146 s and 6.3 GB. Now a chain of more than 20 page redirects is a tool error (plain and
webenv, and the next goto works), a page document is cut at a per-page size cap, and a read over several pages
stops opening them past a per-read cap; the observation and the reply say both."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.measuring.fake_server import FakeOpenAIServer
from agent.rundir.cells import load_records
from browser.policy import MAX_REDIRECTS, BrowserLimits
from browser.routing import OriginMap
from browser.types import Goto, ReadPageFacts
from graph.nodes.pages import READ_BYTES
from tests.security.scripted_cells import ScriptedCells, bench_config

ROOT = Path(__file__).resolve().parents[2]
LIVE = "https://loops.example"
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("webenv", [False, True])
async def test_page_limits_redirect_loop_is_a_tool_error_and_the_next_goto_works(chromium_worker, offline_server,
                                                                               tmp_path: Path, webenv: bool):
    origin = LIVE if webenv else offline_server.origin
    routes = OriginMap.build({LIVE: offline_server.origin}) if webenv else None
    async with chromium_worker.task_browser(tmp_path, [origin], routes=routes) as browser:
        started = time.monotonic()
        looped = await browser.act(Goto(url=f"{origin}/adversarial/loop"))
        took = time.monotonic() - started
        assert not looped.ok and looped.error == "not_found", looped.message
        assert "redirects in a loop" in looped.message and f"{MAX_REDIRECTS + 1} redirects" in looped.message
        assert took < browser.timeouts.navigation_ms / 1000, took  # stopped, not timed out
        after = await browser.act(Goto(url=f"{origin}/adversarial/"))
        assert after.ok, after.message
        assert after.observation.url == f"{origin}/adversarial/" and after.observation.title == "Notes"


async def test_page_limits_a_huge_page_is_cut_and_says_so(chromium_worker, offline_server, tmp_path: Path):
    cap = BrowserLimits().page_bytes
    async with chromium_worker.task_browser(tmp_path, [offline_server.origin]) as browser:
        result = await browser.act(Goto(url=f"{offline_server.origin}/adversarial/huge?mb=20"))
        assert result.ok, result.message
        assert f"cut at {cap:,} of its 20,000,0" in result.message  # said in the reply
        assert any(n.startswith("page cut:") and f"first {cap:,}" in n for n in result.observation.notices)
        assert cap <= result.page_bytes <= cap + 1000
        facts = await browser.act(ReadPageFacts())
        assert facts.ok and facts.facts is not None and "HUGE-1" in facts.facts.model_dump_json()
        small = await browser.act(Goto(url=f"{offline_server.origin}/adversarial/"))
        assert small.ok and "cut" not in small.message and not any("cut" in n for n in small.observation.notices)


def _huge_read(origin: str) -> list[dict]:
    urls = [f"{origin}/adversarial/huge?mb=20&page={n}" for n in range(12)]
    return [{"name": "read_facts", "arguments": {"into": "codes", "url": urls, "fields": {"code": "Code"}}}]


def test_page_limits_twelve_huge_pages_in_one_read_facts(tmp_path: Path):
    """The issue's probe as a bench cell: one read_facts over twelve 20 MB pages."""
    script = ScriptedCells({"stats": _huge_read})
    with FakeOpenAIServer(script) as fake:
        config = tmp_path / "bench.yaml"
        config.write_text(bench_config(fake.base_url, ["offline_stats_001-g"], str(tmp_path / "bench"), wall=240),
                          encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT,
                              capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    [record] = load_records(tmp_path / "bench")
    assert not record.failed and record.outcome.stop_reason == "finished", record.outcome
    [reply] = script.replies["stats"][:1]
    cap = BrowserLimits().page_bytes
    opened = -(-READ_BYTES // cap)  # pages opened before the read's cap is reached
    assert reply.count("HUGE-1") == opened, reply  # each page opened read its row
    assert f"{12 - opened} page(s) not opened" in reply and f"size cap is {READ_BYTES:,}" in reply
    asked, answered = [t for t, family, step in script.log if step in (0, 1)][:2]
    assert answered - asked < 120, answered - asked  # the read took seconds per page it opened, not minutes
