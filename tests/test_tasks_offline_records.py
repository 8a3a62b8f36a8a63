"""The offline suite's release (built by tasks.offline.suite) loads, aligns and passes the answer check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.align import align_pairs
from tasks.answer_check import check_reference_answer
from tasks.families import FAMILIES
from tasks.loaders import load_tasks
from tasks.offline import suite
from tasks.offline.registry import PLACEHOLDER_ORIGIN

pytestmark = pytest.mark.slow  # builds every offline site


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("offline_release")
    suite.write_release(out)
    return out


def test_offline_release_loads_from_per_task_files_and_jsonl_alike(release: Path) -> None:
    from_files = load_tasks(release)
    from_jsonl = load_tasks(release / "goal.jsonl") + load_tasks(release / "constraint.jsonl")
    assert len(from_files) == len(from_jsonl) > 0
    assert {t.task_id: t.to_record() for t in from_files} == {t.task_id: t.to_record() for t in from_jsonl}


def test_offline_release_is_aligned_and_its_answers_fit_their_specs(release: Path) -> None:
    tasks = load_tasks(release)
    assert align_pairs(tasks).ok
    assert [p for t in tasks for p in check_reference_answer(t)] == []
    assert {t.family for t in tasks} <= set(FAMILIES)  # declared in metadata.family


def test_offline_release_urls_resolve_to_the_server(release: Path) -> None:
    tasks = load_tasks(release, origin="http://127.0.0.1:4321")
    assert all(t.start_url and t.start_url.startswith("http://127.0.0.1:4321/") for t in tasks)
    assert not any(PLACEHOLDER_ORIGIN in t.instruction for t in tasks)
