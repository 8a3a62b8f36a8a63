"""Goal/constraint pairing by task id, per language, with answer/schema/domain mismatches reported."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.align import align_pairs
from tasks.loaders import load_tasks
from tasks.models import Task

SAMPLE = Path(__file__).parent / "data" / "sgrbench_sample"


def _task(split: str, task_id: str, **changes: object) -> Task:
    raw = json.loads((SAMPLE / "data_en" / split / f"{task_id}.json").read_text(encoding="utf-8"))
    raw.update(changes)
    return Task.model_validate(raw)


def test_sample_release_is_aligned() -> None:
    report = align_pairs(load_tasks(SAMPLE))
    assert report.ok
    assert [(p.base_id, p.language) for p in report.pairs] == [
        ("arxiv_001", "en"), ("arxiv_001", "zh"), ("census_gov_006", "en"), ("cfpb_complaint_database_002", "en"),
        ("kegg_brite_004", "en"), ("nvd_005", "en"), ("nvd_005", "zh"), ("water_quality_portal_003", "en"),
    ]
    assert all(p.goal_id == p.base_id + "-g" and p.constraint_id == p.base_id for p in report.pairs)


def test_differing_answer_schema_and_domain_are_reported() -> None:
    goal = _task("goal", "nvd_005-g")
    answer = _task("constraint", "nvd_005", oracle_answer="CVE-2024-0727|2024-01-26")
    assert align_pairs([goal, answer]).pairs[0].differences == ["oracle_answer"]

    raw_rubric = goal.rubric.model_dump(by_alias=True, exclude_unset=True)
    raw_rubric["normalization"]["schema"] = ["cve", "published_date"]
    schema = _task("constraint", "nvd_005", rubric=raw_rubric, domain="NVD_MIRROR")
    report = align_pairs([goal, schema])
    assert report.pairs[0].differences == ["domain", "schema"]
    assert [p.base_id for p in report.mismatched] == ["nvd_005"] and not report.ok


def test_whitespace_around_the_answer_is_not_a_difference() -> None:
    goal = _task("goal", "nvd_005-g")
    padded = _task("constraint", "nvd_005", oracle_answer="\n" + goal.oracle_answer + "\n")
    assert align_pairs([goal, padded]).ok


def test_unpaired_ids_are_listed_per_language() -> None:
    tasks = load_tasks(SAMPLE, task_ids=["arxiv_001-g", "nvd_005-g", "nvd_005"])
    report = align_pairs(tasks)
    assert report.unpaired == ["arxiv_001-g", "arxiv_001-g"]  # en and zh copies both lack arxiv_001
    assert [(p.base_id, p.language) for p in report.pairs] == [("nvd_005", "en"), ("nvd_005", "zh")]
    assert not report.ok
