"""The differential against the SGR-Bench authors' scorer: 5,400 seeded variations of the bundled
records' oracle answers, each with the score the authors' own code gives (tests/data/compat/README.md).

`--compat authors` must agree on every case and metric; the default mode may differ only in the kinds
docs/evaluator.md documents, and every documented kind must really differ (the table is exact).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from eval.batch import Compat, score_task
from eval.compat.rules import AuthorsRulesError
from eval.score import GoldParseError
from tasks.loaders import load_tasks
from tasks.models import Task

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "compat"
SOURCES = [ROOT / "tasks" / "offline" / "data", ROOT / "tests" / "data" / "sgrbench_sample"]
METRICS = ("item_f1", "row_f1", "poa", "exact_match", "status")


@cache
def cases() -> list[dict[str, Any]]:
    with gzip.open(DATA / "cases.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@cache
def tasks_with_rules() -> dict[str, Task]:
    """The bundled records, each carrying its authors'-format rules in the rubric as released ones do."""
    rules = json.loads((DATA / "rules.json").read_text(encoding="utf-8"))
    tasks = {}
    for source in SOURCES:
        for task in load_tasks(str(source), split="constraint", languages=["en"]):
            record = task.to_record()
            rubric = record["rubric"] if isinstance(record["rubric"], dict) else json.loads(record["rubric"])
            record["rubric"] = {**rubric, **rules[task.base_id]}
            tasks[task.base_id] = Task.model_validate(record)
    return tasks


def authors_view(expected: dict[str, Any]) -> dict[str, Any]:
    if "error" in expected:
        return dict.fromkeys(METRICS, "error")
    metrics = expected["metrics"]
    if metrics is None:
        return {**dict.fromkeys(METRICS, None), "status": "parse_failure"}
    return {
        "item_f1": metrics["Item-F1"], "row_f1": metrics["Row-F1"], "poa": metrics["P.O.A."],
        "exact_match": expected["complete_correct"], "status": "scored",
    }


def our_view(task: Task, answer: str, compat: Compat) -> dict[str, Any]:
    try:
        score = score_task(task, answer, None, compat)
    except (AuthorsRulesError, GoldParseError):
        return dict.fromkeys(METRICS, "error")
    if score.parse_failure:
        return {**dict.fromkeys(METRICS, None), "status": "parse_failure"}
    return {"item_f1": score.item_f1, "row_f1": score.row_f1, "poa": score.poa,
            "exact_match": score.exact_match, "status": "scored"}


def disagreements(compat: Compat) -> list[tuple[dict[str, Any], list[str]]]:
    """(case, metrics that differ) for every case where `compat` and the authors' code disagree."""
    tasks = tasks_with_rules()
    found = []
    for case in cases():
        ours = our_view(tasks[case["task_id"]], case["answer"], compat)
        theirs = authors_view(case["authors"])
        differing = [m for m in METRICS if ours[m] != theirs[m]]
        if differing:
            found.append((case, differing))
    return found


def documented_kinds() -> set[str]:
    """Kinds named in the `kinds` column of docs/evaluator.md's differences table."""
    text = (ROOT / "docs" / "evaluator.md").read_text(encoding="utf-8")
    table = text.split("## Differences from the authors' scorer", 1)[1].split("\n## ", 1)[0]
    return {kind for row in re.findall(r"^\|(.+)\|\s*$", table, re.MULTILINE)
            for kind in re.findall(r"`([a-z_]+)`", row.split("|")[0])}


def test_the_cases_cover_every_kind_of_the_issue_on_every_bundled_record() -> None:
    per_task = Counter(case["task_id"] for case in cases())
    assert len(per_task) == len(tasks_with_rules()) == 36
    assert set(per_task.values()) == {150}
    statuses = Counter(case["authors"].get("status", "error") for case in cases())
    assert statuses["parsed"] > 4000 and statuses["parse_failure"] > 100 and statuses["empty"] > 100


@pytest.mark.slow
def test_compat_authors_agrees_with_the_authors_code_on_every_case_and_metric() -> None:
    found = disagreements("authors")
    assert found == [], f"{len(found)} disagreements, e.g. {found[:3]}"


@pytest.mark.slow
def test_the_default_modes_differences_are_exactly_the_documented_kinds() -> None:
    by_kind = Counter(case["kind"] for case, _ in disagreements("ours"))
    documented = documented_kinds()
    assert set(by_kind) - documented == set(), f"undocumented differences: {by_kind}"
    assert documented - set(by_kind) == set(), "documented kinds that no longer differ"
