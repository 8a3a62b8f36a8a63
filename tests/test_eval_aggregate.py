"""Aggregation (macro means, parse failures apart) and the report files."""

import csv
import json
from pathlib import Path

import pytest

from eval.aggregate import ScoredRecord, aggregate
from eval.report import write_reports
from eval.score import score_answer
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "name", "year"))
GOLD = "A|Alpha|2001\nB|Beta|2002\nC|Gamma|2003"


def record(task_id: str, answer: str, variant: str, family: str, system: str = "m1") -> ScoredRecord:
    return ScoredRecord(
        task_id=task_id,
        variant=variant,
        domain=family.upper(),
        family=family,
        system=system,
        score=score_answer(answer, GOLD, SPEC),
    )


@pytest.fixture
def records() -> list[ScoredRecord]:
    return [
        record("t1", GOLD, "constraint", "Scholarly"),  # 1, 1, 1, EM
        record("t1-g", "A|Alpha|2001\nB|Beta|2002", "goal", "Scholarly"),  # 0.8, 0.8, 1
        record("t2", "A|Alpha|2001", "constraint", "Statistics"),  # 0.5, 0.5, 0
        record("t2-g", "no idea", "goal", "Statistics"),  # parse failure: unscored
        ScoredRecord(
            task_id="t3", variant="goal", domain="X", family="Statistics", system="m1", error="bad gold"
        ),
    ]


def test_macro_means_leave_parse_failures_and_errors_out(records):
    result = aggregate(records)
    overall = result.overall
    assert (overall.n_tasks, overall.n_scored, overall.n_parse_failures, overall.n_errors) == (5, 3, 1, 1)
    assert overall.item_f1 == pytest.approx((1 + 0.8 + 0.5) / 3)
    assert overall.row_f1 == pytest.approx((1 + 0.8 + 0.5) / 3)
    assert overall.poa == pytest.approx((1 + 1 + 0) / 3)
    assert overall.exact_match == pytest.approx(1 / 3)
    # the explicit other reading: the parse failure counts as 0 over the 4 tasks that have a score
    assert overall.item_f1_failures_as_zero == pytest.approx((1 + 0.8 + 0.5 + 0) / 4)
    assert result.parse_failures == ["m1/t2-g"] and result.errors == {"m1/t3": "bad gold"}


def test_groups_by_variant_and_family(records):
    result = aggregate(records)
    by_variant = {s.group: s for s in result.by["variant"]}
    assert by_variant["constraint"].item_f1 == pytest.approx((1 + 0.5) / 2)
    assert by_variant["goal"].item_f1 == pytest.approx(0.8)
    assert by_variant["goal"].n_parse_failures == 1
    by_family = {s.group: s for s in result.by["family"]}
    assert by_family["Statistics"].item_f1 == pytest.approx(0.5)
    assert by_family["Scholarly"].row_f1 == pytest.approx(0.9)
    assert "agent_variant" not in result.by  # no labels -> no empty dimension


def test_group_with_only_failures_has_null_means():
    only = [record("t", "???", "goal", "F")]
    stats = aggregate(only).overall
    assert (stats.item_f1, stats.row_f1, stats.poa, stats.exact_match) == (None, None, None, None)


def test_reports_are_written_and_consistent(records, tmp_path: Path):
    result = aggregate(records)
    paths = write_reports(result, tmp_path, records)
    assert {p.name for p in paths} == {
        "summary.md",
        "summary.json",
        "summary.csv",
        "f1_by_family.png",
        "tasks.csv",
    }
    assert (tmp_path / "f1_by_family.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "summary.json").read_text())["overall"]["n_parse_failures"] == 1
    rows = list(csv.DictReader((tmp_path / "summary.csv").open()))
    overall = next(r for r in rows if r["dimension"] == "overall")
    assert float(overall["item_f1"]) == pytest.approx((1 + 0.8 + 0.5) / 3)
    markdown = (tmp_path / "summary.md").read_text()
    assert "| all | 5 | 3 | 1 | 76.67 | 76.67 | 66.67 | 33.33 |" in markdown
    assert "- m1/t2-g" in markdown and "m1/t3: bad gold" in markdown
    tasks = {r["task_id"]: r for r in csv.DictReader((tmp_path / "tasks.csv").open())}
    assert tasks["t2-g"]["status"] == "parse_failure" and tasks["t2-g"]["item_f1"] == "null"
    assert tasks["t3"]["status"] == "error"
