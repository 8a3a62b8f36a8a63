"""Issue 40 item 1: the redaction of trace.zip at a task's close ran on the event loop, about 250 s for large
pages, outside every budget, and every other cell of the process waited. It now runs in a process of its own,
bounded: the event loop goes on meanwhile, and past the bound the trace is deleted (never kept unredacted)."""

from __future__ import annotations

import asyncio
import time
import zipfile
from pathlib import Path

from browser.trace import REDACTED, Redactor
from browser.types import Goto

SECRET = "sk-" + "Zq81xkTraceSecret" * 2


def _big_trace(path: Path, megabytes: int = 40) -> None:
    filler = ("<div class='row'><td>Some page text 12345</td><td>another cell value</td></div>\n" * 12_500)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for number in range(megabytes):
            archive.writestr(f"resources/page-{number}.html", filler + (SECRET if number % 7 == 0 else ""))
        archive.writestr("screenshot.png", b"\x89PNG" + bytes(range(256)) * 10)


async def _longest_stall(work) -> tuple[object, float]:
    """`work` awaited while a ticker measures the longest the event loop went without running it."""
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        result = await work
    finally:
        ticker.cancel()
    return result, max(gaps, default=0.0)


async def test_trace_redaction_runs_off_the_event_loop(tmp_path: Path):
    trace = tmp_path / "trace.zip"
    _big_trace(trace)
    started = time.monotonic()
    why, stall = await _longest_stall(Redactor([SECRET]).zip_file_bounded(trace, 300))
    took = time.monotonic() - started
    assert why is None
    with zipfile.ZipFile(trace) as archive:
        texts = [archive.read(n).decode() for n in archive.namelist() if n.endswith(".html")]
        assert archive.read("screenshot.png").startswith(b"\x89PNG")
    assert not any(SECRET in t for t in texts) and sum(REDACTED in t for t in texts) == 6
    assert stall < max(1.0, took / 4), (stall, took)  # the loop kept running while the trace was redacted


async def test_trace_redaction_past_its_bound_deletes_the_trace(tmp_path: Path):
    trace = tmp_path / "trace.zip"
    _big_trace(trace)
    why = await Redactor([SECRET]).zip_file_bounded(trace, 0.05)
    assert why and "took over 0.05 s" in why
    assert not trace.exists() and not trace.with_suffix(".redacting").exists()


async def test_trace_redaction_bound_applies_at_a_task_close(chromium_worker, fixture_site, tmp_path: Path):
    before = chromium_worker.timeouts
    chromium_worker.timeouts = before.model_copy(update={"redact_seconds": 0.01})
    try:
        async with chromium_worker.task_browser(tmp_path, [fixture_site.origin], trace=True) as browser:
            await browser.act(Goto(url=fixture_site.url("act_form.html")))
        assert not (tmp_path / "trace.zip").exists()
        assert any("trace not saved: redacting it took over" in d for d in browser.dialogs)
    finally:
        chromium_worker.timeouts = before
