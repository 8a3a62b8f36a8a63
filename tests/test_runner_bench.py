"""`sgr bench` end to end with the real agent and the scripted walkthrough model on the offline suite,
at concurrency 2: results folder, summary, plots, the HTML report in real Chromium, no secret anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agent.rundir.cells import load_records
from browser.launch import launch_chromium

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-SGRBENCH-0123456789abcdefSECRET"
TASKS = 4
pytestmark = pytest.mark.slow


def sgr(*args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def write_config(path: Path, out: Path, *, limit: int) -> Path:
    path.write_text(
        "models:\n"
        "  - {name: needs-a-key, provider: openai, model: gpt-4.1-mini, api_key_env: SGR_TEST_UNSET_KEY}\n"
        "  - {name: walkthrough, provider: scripted, api_key_env: SGR_TEST_API_KEY}\n"
        "datasets: [{suite: offline}]\n"
        "protocol: {budgets: {wall_seconds: 300}}\n"
        "agent: {trace: true, screenshots: true}\n"
        f"run: {{output_dir: '{out}', concurrency: 2, demo_mode: true, demo_limit: {limit}}}\n"
    )
    return path


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("bench")
    config = write_config(tmp / "bench.yaml", tmp / "run", limit=TASKS)
    env = {"SGR_TEST_API_KEY": SECRET}
    os.environ.pop("SGR_TEST_UNSET_KEY", None)
    done = sgr("bench", str(config), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "run", done


def test_first_line_says_scripted(bench_run) -> None:
    run_dir, done = bench_run
    assert done.stderr.splitlines()[0].startswith("NO LLM KEY: running the SCRIPTED WALKTHROUGH model")
    assert "$SGR_TEST_UNSET_KEY" in done.stderr.splitlines()[0]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["scripted"] and summary["notices"][0].startswith("NO LLM KEY")
    assert "SCRIPTED WALKTHROUGH" in (run_dir / "summary.md").read_text().splitlines()[2]


def test_every_cell_is_complete_and_solved(bench_run) -> None:
    run_dir, _ = bench_run
    records = load_records(run_dir)
    assert len(records) == TASKS and {r.model for r in records} == {"walkthrough"}
    for record in records:
        folder = run_dir / record.key.relpath
        for name in ("cell.json", "answer.txt", "score.json", "steps.jsonl", "retrieval_state.json", "trace.zip"):
            assert (folder / name).is_file(), f"{folder}/{name}"
        assert list(folder.glob("screenshots/*.png")), folder
        assert not record.failed, record.outcome.error
        assert record.outcome.steps > 0 and record.outcome.stop_reason == "finished"
        assert record.score["evidence"]["prediction_status"] == "rows"
        assert record.metrics["item_f1"] > 0, record.task_id
        assert (folder / "answer.txt").read_text() == record.outcome.answer
    summary = json.loads((run_dir / "summary.json").read_text())
    [overall] = summary["overall"]
    assert overall["n"] == TASKS and overall["item_f1"] == pytest.approx(
        sum(r.metrics["item_f1"] for r in records) / TASKS)
    for plot in ("metrics_by_family.png", "goal_vs_constraint.png"):
        assert (run_dir / "plots" / plot).read_bytes()[:4] == b"\x89PNG"


def test_manifest_records_what_produced_the_run(bench_run) -> None:
    run_dir, _ = bench_run
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["git"]["commit"] and len(manifest["git"]["commit"]) == 40
    assert manifest["chromium"] and "Chromium" in manifest["chromium"]
    assert manifest["packages"]["playwright"] and manifest["machine"]["cpu_count"]
    assert [m["name"] for m in manifest["config"]["models"]] == ["walkthrough"]
    assert manifest["config"]["models"][0]["api_key_present"] is True
    [session] = manifest["sessions"]
    assert session["status"] == "finished" and session["cells_run"] == TASKS and session["ended_at"]


def test_no_secret_anywhere_in_the_run_folder(bench_run) -> None:
    run_dir, done = bench_run
    assert SECRET not in done.stdout + done.stderr
    checked = 0
    for path in run_dir.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        assert SECRET.encode() not in data, path
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    assert SECRET.encode() not in archive.read(member), f"{path}:{member}"
        checked += 1
    assert checked > TASKS * 6


async def test_html_report_in_chromium(bench_run) -> None:
    from playwright.async_api import async_playwright

    run_dir, _ = bench_run
    async with async_playwright() as playwright:
        browser = await launch_chromium(playwright.chromium)
        try:
            context = await browser.new_context(offline=True)  # the report must not need the network
            page = await context.new_page()
            await page.goto((run_dir / "report.html").as_uri())
            assert (await page.title()).startswith("SGR-Bench run")
            assert "SCRIPTED WALKTHROUGH" in await page.locator("[data-role=notice]").first.inner_text()
            assert await page.locator("#overall tr").count() == 2
            assert await page.locator("#tasks tr.cell-row").count() == TASKS
            assert await page.locator("section.task").count() == TASKS
            widths = await page.locator("img.plot").evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
            assert len(widths) >= 2 and all(w > 100 for w in widths)
            await page.locator("tr.cell-row").nth(1).click()
            first = page.locator("section.task.shown")
            assert await first.count() == 1
            assert await first.locator("table.steps tr").count() > 3
            assert await first.locator("table.aligned td").count() > 0  # exact: every cell matches, none marked
            assert await first.locator("table.aligned td.bad").count() == 0
            shot = await first.locator("img.shot").first.evaluate("i => i.complete && i.naturalWidth")
            assert shot > 0
            await page.screenshot(path=str(run_dir / "report.png"), full_page=True)
        finally:
            await browser.close()
    assert (run_dir / "report.png").stat().st_size > 10_000


def test_rerun_resumes_without_rerunning(bench_run) -> None:
    run_dir, _ = bench_run
    before = {p: p.read_bytes() for p in run_dir.glob("cells/*/*/*/cell.json")}
    config = run_dir.parent / "bench.yaml"
    done = sgr("bench", str(config), env={"SGR_TEST_API_KEY": SECRET})
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{TASKS} already finished, 0 to run" in done.stderr
    assert {p: p.read_bytes() for p in run_dir.glob("cells/*/*/*/cell.json")} == before
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [s["cells_skipped"] for s in manifest["sessions"]] == [0, TASKS]
