"""Summary, ablation and CSV/JSON views over hand-made cell records, checked against hand-computed values."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from agent.outcome import TaskOutcome
from agent.reports.ablation import write_ablation
from agent.reports.summary import render_markdown, summarize
from agent.reports.write import write_run_reports
from agent.rundir.atomic import write_json_atomic
from agent.rundir.cells import CellKey, CellRecord, cell_dir, load_records


def _record(variant: str, task_id: str, family: str, split: str, em: float, item: float, row: float, poa: float,
            *, ablated: tuple[str, ...] = (), error: str | None = None, tokens: int = 100, cost: float = 0.01,
            steps: int = 4, stop: str = "finished") -> CellRecord:
    outcome = TaskOutcome(task_id=task_id, model="m1", variant=variant, ablated=list(ablated), answer="x|1",
                          stop_reason=stop, error=error, error_kind="agent" if error else None, steps=steps,
                          prompt_tokens=tokens, completion_tokens=0, cost_usd=cost, wall_seconds=10.0)
    return CellRecord(model="m1", variant=variant, task_id=task_id, base_id=task_id.removesuffix("-g"),
                      split=split, family=family, gold="x|1", outcome=outcome,
                      metrics={"em": em, "item_f1": item, "row_f1": row, "poa": poa})


RECORDS = [
    _record("full", "a", "Scholarly", "constraint", 1.0, 1.0, 1.0, 1.0),
    _record("full", "a-g", "Scholarly", "goal", 0.0, 0.5, 0.25, 0.5, tokens=300, steps=8),
    _record("full", "b", "Regulatory", "constraint", 0.0, 0.4, 0.0, 0.0, error="boom", stop="error", cost=0.04),
    _record("no-verifier", "a", "Scholarly", "constraint", 0.0, 0.5, 0.5, 1.0, ablated=("verifier",)),
    _record("no-verifier", "a-g", "Scholarly", "goal", 0.0, 0.5, 0.0, 0.5, ablated=("verifier",)),
    _record("no-verifier", "b", "Regulatory", "constraint", 0.0, 0.1, 0.0, 0.0, ablated=("verifier",)),
]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    for record in RECORDS:
        write_json_atomic(cell_dir(tmp_path, record.key) / "cell.json", record.model_dump(mode="json"))
    return tmp_path


def _row(rows: list, variant: str, group: str):
    return next(r for r in rows if r.variant == variant and r.group == group)


def test_summary_views_are_macro_averages(run_dir: Path) -> None:
    summary = summarize(run_dir)
    full = _row(summary.overall, "full", "all")
    assert full.n == 3 and full.failed == 1
    assert full.em == pytest.approx(1 / 3)
    assert full.item_f1 == pytest.approx((1.0 + 0.5 + 0.4) / 3)
    assert full.row_f1 == pytest.approx((1.0 + 0.25 + 0.0) / 3)
    assert full.item_row_gap == pytest.approx(0.65 / 3)
    assert full.tokens_per_task == pytest.approx(500 / 3)
    assert full.cost_total_usd == pytest.approx(0.06)
    assert full.steps_per_task == pytest.approx(16 / 3)
    assert _row(summary.by_family, "full", "Scholarly").row_f1 == pytest.approx(0.625)
    assert _row(summary.by_family, "full", "Regulatory").item_f1 == pytest.approx(0.4)
    assert _row(summary.by_split, "full", "constraint").item_f1 == pytest.approx(0.7)
    assert _row(summary.by_split, "full", "goal").poa == pytest.approx(0.5)
    assert summary.stop_reasons["m1 / full"] == {"error": 1, "finished": 2}
    assert not summary.scripted
    markdown = render_markdown(summary)
    assert "| m1 | full | 3 | 33.33 | 63.33 | 41.67 | 50.00 | 21.67 | 0 | 1 |" in markdown


def test_parse_failures_are_counted_apart_not_as_zero(tmp_path: Path) -> None:
    scored = _record("full", "a", "Scholarly", "constraint", 1.0, 0.8, 0.5, 1.0)
    unparsed = _record("full", "b", "Scholarly", "constraint", 0.0, 0.0, 0.0, 0.0).model_copy(update={
        "metrics": {"em": None, "item_f1": None, "row_f1": None, "poa": None},
        "score": {"parse_failure": True},
    })
    for record in (scored, unparsed):
        write_json_atomic(cell_dir(tmp_path, record.key) / "cell.json", record.model_dump(mode="json"))
    full = _row(summarize(tmp_path).overall, "full", "all")
    assert (full.n, full.parse_failures) == (2, 1)
    assert (full.item_f1, full.row_f1) == (pytest.approx(0.8), pytest.approx(0.5))  # the scored task only


def test_ablation_deltas_against_the_full_agent(run_dir: Path) -> None:
    rows = write_ablation(run_dir)
    overall = next(r for r in rows if r.variant == "no-verifier" and r.family == "all")
    assert overall.ablated == "verifier"
    assert overall.deltas["item_f1"] == pytest.approx((0.5 + 0.5 + 0.1) / 3 - (1.0 + 0.5 + 0.4) / 3)
    assert overall.deltas["row_f1"] == pytest.approx(0.5 / 3 - 1.25 / 3)
    assert overall.deltas["em"] == pytest.approx(-1 / 3)
    scholarly = next(r for r in rows if r.variant == "no-verifier" and r.family == "Scholarly")
    assert scholarly.deltas["poa"] == pytest.approx(0.0)
    reference = next(r for r in rows if r.variant == "full" and r.family == "all")
    assert reference.deltas["item_f1"] == pytest.approx(0.0)
    table = (run_dir / "ablation.md").read_text()
    assert "| m1 | no-verifier | verifier | all | 3 | 0.00 | 36.67 | 16.67 | 50.00 | -33.33 | -26.67 | -25.00 | +0.00 |" in table
    assert (run_dir / "plots" / "ablation_deltas.png").stat().st_size > 1000


def test_all_report_files_parse(run_dir: Path) -> None:
    write_run_reports(run_dir, html=True)
    data = json.loads((run_dir / "summary.json").read_text())
    assert data["finished"] == 6
    assert {r["variant"] for r in data["overall"]} == {"full", "no-verifier"}
    with (run_dir / "summary.csv").open() as handle:
        views = {row["view"] for row in csv.DictReader(handle)}
    assert views == {"overall", "family", "split"}
    with (run_dir / "cells.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 6
    for name in ("metrics_by_family.png", "goal_vs_constraint.png", "ablation_deltas.png"):
        assert (run_dir / "plots" / name).read_bytes()[:4] == b"\x89PNG"
    html = (run_dir / "report.html").read_text()
    assert html.count('<section class="task') == 6 and html.count('class="cell-row"') == 6
    assert 'data-file="plots/metrics_by_family.png"' in html and 'src="data:image/png;base64,' in html  # embedded


def test_corrupt_cell_record_names_the_file(run_dir: Path) -> None:
    bad = cell_dir(run_dir, CellKey("m1", "full", "zzz")) / "cell.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"zzz/cell.json"):
        load_records(run_dir)


def test_ablation_of_scripted_replays_says_so_on_top_and_per_row() -> None:
    from agent.reports.ablation import AblationRow, render_ablation_markdown

    row = AblationRow("scripted-walkthrough", "full", "-", "all", 3, dict.fromkeys(("em", "item_f1", "row_f1", "poa"), 1.0),
                      dict.fromkeys(("em", "item_f1", "row_f1", "poa"), 0.0))
    real = AblationRow("gpt", "full", "-", "all", 3, row.metrics, row.deltas)
    table = render_ablation_markdown([row, real], {"scripted-walkthrough"})
    assert table.startswith("# Ablation (scripted replays)") and "NOT AGENT RESULTS" in table
    assert "| scripted-walkthrough (scripted replay) | full |" in table and "| gpt | full |" in table
    assert not render_ablation_markdown([real], {"scripted-walkthrough"}).startswith("# Ablation (scripted")


def test_summary_splits_copy_and_derived_tasks_when_records_say(run_dir: Path) -> None:
    assert summarize(run_dir).by_shape == []  # released tasks carry no shape: no table
    assert "## Task shape" not in render_markdown(summarize(run_dir))
    shaped = [r.model_copy(update={"shape": "derived" if r.task_id.startswith("b") else "copy"}) for r in RECORDS]
    summary = summarize(run_dir, shaped)
    full_copy, full_derived = _row(summary.by_shape, "full", "copy"), _row(summary.by_shape, "full", "derived")
    assert (full_copy.n, full_derived.n) == (2, 1)
    assert full_copy.item_f1 == pytest.approx((1.0 + 0.5) / 2) and full_derived.item_f1 == pytest.approx(0.4)
    assert "| m1 | full | derived | 1 | 0.00 | 40.00 |" in render_markdown(summary)
