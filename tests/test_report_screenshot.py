"""The HTML report of a bench with failures, in headless Chromium (issue 30). A real `sgr bench`: fault-injected
replays with the verifier switched off (wrong answers, drift alarms) and a model whose endpoint refuses
connections (failed cells). Above the fold of a 1600x1000 window the page must show the failures, an aligned
answer-vs-gold table with the differing cells marked, and a one-row-per-step timeline; filters reach each kind
of cell in one click; the page keeps its images after it is moved out of the run folder. The screenshot is
saved (SGR_REPORT_SCREENSHOT, or the run folder) to be looked at."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.rundir.cells import load_records
from browser.launch import launch_chromium

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
FOLD = {"width": 1600, "height": 1000}


@pytest.fixture(scope="module")
def failing_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("failing")
    config = tmp / "failing.yaml"
    config.write_text(
        "models:\n"
        "  - {name: faulty-replay, provider: faulty, fault_seed: 20260521, variants: [no-verifier]}\n"
        "  - {name: dead-endpoint, provider: openai, model: gpt-x, base_url: 'http://127.0.0.1:9/v1',\n"
        "     api_key_env: SGR_REPORT_KEY, variants: [full], timeout: 5}\n"
        "datasets: [{suite: offline, splits: [constraint],\n"
        "            task_ids: [offline_regulatory_001, offline_scholar_001, offline_lifesci_001]}]\n"
        "protocol: {budgets: {wall_seconds: 300, max_steps: 150}}\n"
        "agent: {variants: [{name: full}, {name: no-verifier, ablate: [verifier]}], trace: false, screenshots: true}\n"
        f"run: {{output_dir: '{tmp / 'run'}', concurrency: 2, retries: 0, check_endpoints: false}}\n"
    )
    done = subprocess.run([sys.executable, "-m", "agent.cli", "bench", str(config)], cwd=ROOT, capture_output=True,
                          text=True, timeout=1500, env={**os.environ, "SGR_REPORT_KEY": "sk-test-not-a-key"})
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "run", done


def _inside(box: dict | None) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= FOLD["height"] \
        and box["x"] + 20 <= FOLD["width"]


async def test_report_shows_what_went_wrong_above_the_fold(failing_bench) -> None:
    from playwright.async_api import async_playwright

    run_dir, done = failing_bench
    records = load_records(run_dir)
    failed = [r for r in records if r.failed]
    wrong = [r for r in records if not r.failed and r.metrics.get("em") != 1.0]
    assert failed and wrong, [(r.task_id, r.model, r.metrics) for r in records]
    assert f"open {(run_dir / 'report.html').resolve()}" in done.stderr
    shot = Path(os.environ.get("SGR_REPORT_SCREENSHOT") or run_dir / "report_screenshot.png")
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright.chromium)
        try:
            context = await browser.new_context(offline=True, viewport=FOLD)
            page = await context.new_page()
            await page.goto((run_dir / "report.html").as_uri())
            rows = page.locator("tr.cell-row")
            assert await rows.count() == len(records)
            statuses = await rows.evaluate_all("rs => rs.map(r => r.dataset.status)")
            order = {"failed": 0, "wrong": 1, "flagged": 2, "exact": 3}
            assert statuses == sorted(statuses, key=order.__getitem__) and statuses[0] == "failed"
            for i in range(len(failed)):  # every failure in the list, above the fold, with its cause
                assert _inside(await rows.nth(i).bounding_box())
                assert "infra error: " in await rows.nth(i).locator(".cause-mini").inner_text()
            shown = page.locator("section.task.shown")
            assert await shown.count() == 1 and await shown.get_attribute("data-status") == "wrong"
            bad = shown.locator("table.aligned td.bad")
            assert await bad.count() > 0 and _inside(await bad.first.bounding_box())
            header = await shown.locator("table.aligned tr").first.inner_text()
            assert "Row" in header
            steps = shown.locator("table.steps tr")
            assert await steps.count() > 5 and _inside(await steps.nth(2).bounding_box())
            first_step = await steps.nth(2).locator("td").all_inner_texts()  # one row per step, five columns
            assert len(first_step) == 5 and first_step[0] == "1" and first_step[1].startswith("goto")
            numbers = [t for t in await shown.locator("table.steps tr td:first-child").all_inner_texts() if t.isdigit()]
            assert len(numbers) == len(set(numbers))  # never the same step three times
            await page.screenshot(path=str(shot))

            await page.select_option("#f-status", "failed")  # one click to each kind of cell
            visible = await rows.evaluate_all("rs => rs.filter(r => r.style.display !== 'none').length")
            assert visible == len(failed)
            assert await page.locator("section.task.shown").get_attribute("data-status") == "failed"
            assert await page.locator("section.task.shown .cause").inner_text() != ""
            await page.select_option("#f-status", "")
            await page.select_option("#f-alarms", "yes")
            flagged = await rows.evaluate_all("rs => rs.filter(r => r.style.display !== 'none').length")
            assert flagged == sum(1 for r in records if r.outcome.drift_flags or
                                  any(not v.get("ok") for v in r.outcome.verifier_reports))
        finally:
            await browser.close()
    assert shot.stat().st_size > 50_000


async def test_report_keeps_its_images_when_moved(failing_bench, tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    run_dir, _ = failing_bench
    moved = tmp_path / "elsewhere.html"
    shutil.copy(run_dir / "report.html", moved)
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright.chromium)
        try:
            page = await (await browser.new_context(offline=True, viewport=FOLD)).new_page()
            await page.goto(moved.as_uri())
            images = await page.locator("img").evaluate_all(
                "imgs => imgs.map(i => ({src: i.src.slice(0, 11), w: i.naturalWidth}))")
            assert any(i["w"] > 100 for i in images if i["src"] == "data:image/")
            assert images and all(i["src"] == "data:image/" and i["w"] > 0 for i in images), images[:5]
            plots = await page.locator("img.plot").count()
            assert plots >= 2
        finally:
            await browser.close()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["replays"] == ["faulty-replay"]
    assert "faulty-replay (REPLAY)" in (run_dir / "summary.md").read_text()
