"""Session: fresh contexts per task, crash and hang recovery with typed errors, bounded waits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from browser.interface import Browser, BrowserWorker
from browser.render import render
from browser.session import ChromiumWorker, PageDriver, SessionTimeouts
from browser.types import Click, Fill, Goto, Select, Target, WaitFor

pytestmark = pytest.mark.slow


async def test_worker_and_driver_satisfy_the_interface(chromium_worker, task_browser):
    assert isinstance(chromium_worker, ChromiumWorker) and isinstance(task_browser, PageDriver)
    worker: BrowserWorker = chromium_worker  # static check of the protocols
    browser: Browser = task_browser
    assert worker and browser


async def test_each_task_gets_clean_storage(chromium_worker, fixture_site, tmp_path: Path):
    async with chromium_worker.task_browser(tmp_path / "a", [fixture_site.origin],
                                            start_url=fixture_site.url("act_form.html")) as first:
        await first.page.evaluate("() => { localStorage.setItem('k', 'v'); document.cookie = 'c=1'; }")
        assert await first.page.evaluate("() => document.cookie") == "c=1"
    async with chromium_worker.task_browser(tmp_path / "b", [fixture_site.origin],
                                            start_url=fixture_site.url("act_form.html")) as second:
        assert await second.page.evaluate("() => [document.cookie, localStorage.getItem('k')]") == ["", None]
    assert (tmp_path / "a" / "steps.jsonl").exists()


async def test_killed_browser_gives_typed_error_then_works(fixture_site, tmp_path: Path):
    worker = ChromiumWorker()
    try:
        async with worker.task_browser(tmp_path, [fixture_site.origin],
                                       start_url=fixture_site.url("act_form.html")) as browser:
            os.kill(await worker.browser_pid(), signal.SIGKILL)
            started = time.monotonic()
            crashed = await browser.act(Fill(target=Target(label="Keyword"), value="x"))
            assert time.monotonic() - started < 60
            assert not crashed.ok and crashed.error == "crashed"
            assert "relaunched" in crashed.message and fixture_site.url("act_form.html") in crashed.message
            assert worker.launches == 2
            assert crashed.observation is not None and crashed.observation.url == fixture_site.url("act_form.html")
            again = await browser.act(Fill(target=Target(label="Keyword"), value="after crash"))
            assert again.ok and again.readback == "after crash"
    finally:
        await worker.close()


async def test_hung_page_times_out_and_is_replaced(fixture_site, tmp_path: Path):
    worker = ChromiumWorker(timeouts=SessionTimeouts(act_seconds=6, settle_max_ms=2_000, close_seconds=3))
    try:
        async with worker.task_browser(tmp_path, [fixture_site.origin],
                                       start_url=fixture_site.url("act_hang.html")) as browser:
            started = time.monotonic()
            frozen = await browser.act(Click(target=Target(text="Freeze the page")))
            assert time.monotonic() - started < 30
            assert not frozen.ok and frozen.error == "timeout"
            assert "reopened" in frozen.message
            works = await browser.act(Fill(target=Target(label="Note"), value="alive"))
            assert works.ok and works.readback == "alive"
    finally:
        await worker.close()


async def test_slow_navigation_and_waits_are_bounded(fixture_site, tmp_path: Path, chromium_worker):
    worker = ChromiumWorker(timeouts=SessionTimeouts(navigation_ms=1_500))
    try:
        async with worker.task_browser(tmp_path, [fixture_site.origin]) as browser:
            started = time.monotonic()
            slow = await browser.act(Goto(url=fixture_site.url("slow?seconds=20")))
            assert slow.error == "timeout" and time.monotonic() - started < 15
            await browser.act(Goto(url=fixture_site.url("act_form.html")))
            started = time.monotonic()
            never = await browser.act(WaitFor(text="this text never appears", timeout_ms=700))
            assert never.error == "timeout" and "0.7s" in never.message
            assert time.monotonic() - started < 10
    finally:
        await worker.close()


async def test_observe_reports_dialogs_and_keeps_page_id(task_browser, fixture_site):
    await task_browser.act(Goto(url=fixture_site.url("act_form.html")))
    first = await task_browser.observe()
    again = await task_browser.observe()
    assert first.page_id == again.page_id
    await task_browser.page.evaluate("() => setTimeout(() => alert('Session expires soon'), 0)")
    await task_browser.page.wait_for_timeout(200)
    noted = await task_browser.observe()
    assert any("Session expires soon" in notice for notice in noted.notices)
    assert "Session expires soon" in render(noted).text
    reloaded = await task_browser.act(Goto(url=fixture_site.url("act_form.html")))
    assert reloaded.observation.page_id > again.page_id  # a reload is a new document


async def test_crashed_tab_is_replaced(task_browser, fixture_site):
    await task_browser.act(Goto(url=fixture_site.url("act_form.html")))
    cdp = await task_browser.context.new_cdp_session(task_browser.page)
    crash = asyncio.ensure_future(cdp.send("Page.crash"))  # never answers: the renderer is gone
    await asyncio.wait([crash], timeout=2)
    crash.cancel()
    crashed = await task_browser.act(Fill(target=Target(label="Keyword"), value="x"))
    assert crashed.error == "crashed"
    again = await task_browser.act(Fill(target=Target(label="Keyword"), value="y"))
    assert again.ok and again.readback == "y"


async def test_concurrent_tasks_are_isolated(chromium_worker, fixture_site, tmp_path: Path):
    async def task(name: str, region: str) -> tuple[str, str | None]:
        async with chromium_worker.task_browser(tmp_path / name, [fixture_site.origin],
                                                start_url=fixture_site.url("act_form.html")) as browser:
            await browser.page.evaluate("n => localStorage.setItem('who', n)", name)
            chosen = await browser.act(Select(target=Target(label="Region"), option=region))
            await browser.act(Click(target=Target(text="Apply filters")))
            return chosen.readback or "", await browser.page.evaluate("() => localStorage.getItem('who')")

    results = await asyncio.gather(task("one", "Asia"), task("two", "Europe"))
    assert results == [("Asia", "one"), ("Europe", "two")]
    assert (tmp_path / "one" / "steps.jsonl").read_text().count("\n") == 3  # goto, select, click


async def test_blank_page_observes(chromium_worker, tmp_path: Path):
    """The runner's preflight observes a fresh task browser before any navigation."""
    async with chromium_worker.task_browser(tmp_path, []) as browser:
        observation = await browser.observe()
        assert observation.url == "about:blank" and observation.controls == []


async def test_frozen_browser_is_killed_and_relaunched(fixture_site, tmp_path: Path):
    worker = ChromiumWorker(timeouts=SessionTimeouts(act_seconds=4, launch_ms=6_000, close_seconds=2,
                                                     observe_seconds=4))
    try:
        async with worker.task_browser(tmp_path, [fixture_site.origin],
                                       start_url=fixture_site.url("act_form.html")) as browser:
            frozen_pid = await worker.browser_pid()
            os.kill(frozen_pid, signal.SIGSTOP)  # alive but answering nothing: the worst kind of hang
            try:
                started = time.monotonic()
                stuck = await browser.act(Fill(target=Target(label="Keyword"), value="x"))
                assert time.monotonic() - started < 60
                assert stuck.error == "timeout" and "reopened" in stuck.message
                assert worker.launches == 2 and await worker.browser_pid() != frozen_pid
                works = await browser.act(Fill(target=Target(label="Keyword"), value="thawed"))
                assert works.ok and works.readback == "thawed"
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(frozen_pid, signal.SIGKILL)
    finally:
        await worker.close()
