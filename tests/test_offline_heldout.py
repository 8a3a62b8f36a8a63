"""The held-out offline tasks: a separate release, loadable by name, never mixed into the suite's 60, and each
walkthrough reproduces its computed oracle in real Chromium on the offline sites."""

from __future__ import annotations

import pytest

from tasks.models import Task
from tasks.offline.app import DEFAULT_SEED, site_data
from tasks.offline.heldout.release import (
    HELDOUT_DIR,
    TASKS,
    check_heldout,
    heldout_drafts,
    heldout_records,
    heldout_walkthroughs,
)
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.suite import build_records
from tests.fixtures.walkthroughs import replay, validate_steps
from tests.test_offline_suite import _default_state_texts, _rows, _visible_together

RECORDS = heldout_records()
BASE_IDS = [r["task_id"] for r in RECORDS if not r["task_id"].endswith("-g")]
SUITE_IDS = {r["task_id"] for r in build_records()}


def test_committed_heldout_release_is_fresh():
    assert check_heldout() == [], "run `sgr offline build` and commit tasks/offline/heldout"


def test_heldout_ids_are_new_and_the_offline_source_is_unchanged():
    from tasks.loaders import load_tasks

    assert len(BASE_IDS) == 12 and len(RECORDS) == 24 and len(set(BASE_IDS)) == 12
    assert not {r["task_id"] for r in RECORDS} & SUITE_IDS
    assert all(i.startswith("offline_heldout_") for i in BASE_IDS)
    offline = load_tasks("offline")
    assert {t.task_id for t in offline} == SUITE_IDS and len(offline) == 60
    heldout = load_tasks("offline-heldout", origin="http://127.0.0.1:9")
    assert sorted(t.task_id for t in heldout) == sorted(r["task_id"] for r in RECORDS)
    assert all(t.start_url.startswith("http://127.0.0.1:9/") for t in heldout)


def test_heldout_set_spreads_over_sites_and_shapes():
    """Each wave of held-out tasks (the _001 ids, then the _002 ids) spreads over at least four sites, holds at
    least three derived tasks of two or more phases, and every task has traps and 2-20 rows."""
    drafts = heldout_drafts()
    assert len(drafts) == len(TASKS)
    for wave in ("_001", "_002"):
        chosen = [(prefix, d) for (prefix, _, _), d in zip(TASKS, drafts, strict=True) if d.task_id.endswith(wave)]
        assert len(chosen) == 6, wave
        assert len({prefix for prefix, _ in chosen}) >= 4, wave
        derived = [d for _, d in chosen if d.shape == "derived"]
        assert len(derived) >= 3 and all(len(d.phases) >= 2 and d.derived for d in derived), wave
    assert all(d.traps and 2 <= len(d.rows) <= 20 for d in drafts)
    assert [d.task_id for d in drafts] == sorted(d.task_id for d in drafts), "TASKS in id order"


def test_unknown_heldout_id_is_a_one_line_error():
    from tasks.errors import TaskSourceError
    from tasks.loaders import load_tasks

    with pytest.raises(TaskSourceError) as caught:
        load_tasks("offline-heldout", task_ids=["offline_heldout_scholar_999"])
    assert "offline_heldout_scholar_001" in str(caught.value) and "\n" not in str(caught.value)


def test_every_heldout_task_has_a_valid_walkthrough_found_by_the_scripted_policy():
    from agent.measuring.scripted import load_walkthrough

    walks = heldout_walkthroughs()
    assert set(walks) == set(BASE_IDS) and (HELDOUT_DIR / "walkthroughs").is_dir()
    for base_id, steps in walks.items():
        assert steps[0]["tool"] == "goto", base_id
        validate_steps(steps)
        loaded = load_walkthrough(f"{base_id}-g", origin="http://127.0.0.1:9")
        assert len(loaded) == len(steps) and "sgr-offline.local" not in repr(loaded)


@pytest.mark.slow
@pytest.mark.parametrize("record", [r for r in RECORDS if not r["task_id"].endswith("-g")],
                         ids=lambda r: r["task_id"].removeprefix("offline_heldout_"))
def test_heldout_answer_rows_absent_from_default_state(record, offline_server):
    """As for the suite: no answer row shows in full on a page reachable without changing any state. Rows of bare
    counts (a year and two counts) match any page with three small numbers, so they prove nothing and are left out
    (a derived task may consist of them only: its counts are computed, no page prints them)."""
    start = record["start_url"].replace(PLACEHOLDER_ORIGIN, offline_server.origin)
    texts = _default_state_texts(offline_server.origin, start)
    assert len(texts) > 1, f"crawl from {start} found no page"
    rows = [row for row in _rows(record) if not all(cell.isdigit() for cell in row)]
    assert rows or record["metadata"]["task_shape"] == "derived", "a copy task must have rows to check"
    for row in rows:
        where = _visible_together(row, texts)
        assert where is None, f"{record['task_id']}: row {row} visible in the default state: {where[:300]}"


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(TASKS)), ids=[i.removeprefix("offline_heldout_") for i in BASE_IDS])
async def test_heldout_walkthrough_reproduces_the_oracle(index, offline_server, chromium_worker, tmp_path):
    prefix, _, walk = TASKS[index]
    record = next(r for r in RECORDS if r["task_id"] == BASE_IDS[index])
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        answer = await replay(driver, walk(site_data(prefix, DEFAULT_SEED)), Task.model_validate(record),
                              offline_server.origin)
    assert answer == record["oracle_answer"]


@pytest.mark.slow
def test_sgr_run_plays_a_heldout_task_like_an_offline_one(tmp_path):
    """`--tasks offline-heldout`: the offline server is started, the placeholder origin replaced and the scripted
    walkthrough found, as for the suite; `sgr play` offers the same option."""
    import json

    from typer.testing import CliRunner

    from agent.cli import app

    assert "offline-heldout" in " ".join(CliRunner().invoke(app, ["play", "--help"]).output.split())
    task_id = "offline_heldout_water_001-g"
    result = CliRunner().invoke(app, ["run", "--task", task_id, "--tasks", "offline-heldout", "--model", "scripted",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / task_id / "scripted" / "full"
    assert json.loads((run_dir / "score.json").read_text())["exact_match"] is True
    assert json.loads((run_dir / "retrieval_state.json").read_text())["final"]["url"].startswith("http://127.0.0.1:")


def test_a_bench_dataset_can_name_the_heldout_suite(tmp_path):
    from agent.config import BenchConfig, DatasetConfig, ModelConfig
    from agent.runner.tasks import load_bench_tasks

    config = BenchConfig(models=[ModelConfig(name="scripted", provider="scripted")],
                         datasets=[DatasetConfig(suite="offline-heldout", splits=["constraint"])])
    tasks = load_bench_tasks(config, tmp_path / "bench.yaml", "http://127.0.0.1:9")
    assert sorted(t.task_id for t in tasks) == sorted(BASE_IDS)
    assert all(t.start_url.startswith("http://127.0.0.1:9/") for t in tasks)
