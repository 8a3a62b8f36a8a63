"""`sgr tasks list|show|validate` through typer's CliRunner, on the sample release and the bad fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tasks.loaders as loaders
from tasks.cli import app

DATA = Path(__file__).parent / "data"
SAMPLE = str(DATA / "sgrbench_sample")
runner = CliRunner()
WIDE = {"COLUMNS": "220"}


def test_list_table_and_filters() -> None:
    result = runner.invoke(app, ["list", "--tasks", SAMPLE, "--split", "goal", "-l", "en", "-f", "life"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "kegg_brite_004-g" in result.output
    assert "KO id | gene name | EC/TC number" in result.output
    assert "1 task(s)" in result.output
    assert "arxiv_001" not in result.output


def test_list_json_lines() -> None:
    result = runner.invoke(app, ["list", "--tasks", SAMPLE, "--json", "-d", "CFPB", "-l", "en"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["task_id"], r["variant"], r["ecosystem"], r["rows"]) for r in rows] == [
        ("cfpb_complaint_database_002-g", "goal", "CFPB", 3),
        ("cfpb_complaint_database_002", "constraint", "CFPB", 3),
    ]
    assert rows[0]["columns"] == ["company", "product", "complaint count"]


def test_show_panels() -> None:
    result = runner.invoke(app, ["show", "water_quality_portal_003", "--tasks", SAMPLE], env=WIDE)
    assert result.exit_code == 0, result.output
    for expected in ("Environmental monitoring", "header            required", "record separator  ','",
                     "('site_id', 'characteristic')", "view: narrow result", "USGS-01646500|pH|7.8 std units"):
        assert expected in result.output


def test_show_solver_view_hides_the_answer() -> None:
    result = runner.invoke(app, ["show", "nvd_005-g", "--tasks", SAMPLE, "-l", "en", "--solver-view"])
    assert result.exit_code == 0, result.output
    view = json.loads(result.output)
    assert set(view) == {"task_id", "instruction", "output_format", "start_url", "output_spec"}
    assert "CVE-2024-0727" not in result.output


def test_show_json_is_the_record() -> None:
    result = runner.invoke(app, ["show", "kegg_brite_004", "--tasks", SAMPLE, "--json"])
    assert result.exit_code == 0, result.output
    original = json.loads((DATA / "sgrbench_sample" / "data_en" / "constraint" / "kegg_brite_004.json").read_text())
    assert json.loads(result.output) == original


def test_show_unknown_id_exits_2() -> None:
    result = runner.invoke(app, ["show", "nope_001", "--tasks", SAMPLE])
    assert result.exit_code == 2
    assert "unknown task id" in result.output and "nope_001" in result.output


def test_validate_clean_release() -> None:
    result = runner.invoke(app, ["validate", "--tasks", SAMPLE], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "8 goal/constraint pair(s), 0 mismatched" in result.output
    assert "16 task(s) loaded, 0 problem(s)" in result.output


def test_validate_lists_all_problems_and_fails() -> None:
    result = runner.invoke(app, ["validate", "--tasks", str(DATA / "bad" / "broken.jsonl")], env=WIDE)
    assert result.exit_code == 1
    assert "6 problem(s)" in result.output
    for expected in ("metadata.intra_chain", "rubric.normalization.schema", "nvd_903", "Field required"):
        assert expected in result.output
    assert "1 task(s) loaded, 6 problem(s)" in result.output


def test_validate_strict_pairs() -> None:
    args = ["validate", "--tasks", str(DATA / "sgrbench_sample" / "goal_hf.jsonl")]
    lenient = runner.invoke(app, args, env=WIDE)
    assert lenient.exit_code == 0 and "unpaired: arxiv_001-g" in lenient.output
    assert runner.invoke(app, [*args, "--strict-pairs"], env=WIDE).exit_code == 1


def test_default_source_is_the_offline_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(loaders, "OFFLINE_DATA_DIR", tmp_path / "absent")
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 2
    assert "offline suite has no task records yet" in result.output


def test_list_warns_about_skipped_bad_records() -> None:
    result = runner.invoke(app, ["list", "--tasks", str(DATA / "bad" / "broken.jsonl"), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output.splitlines()[0])["task_id"] == "nvd_005"
    assert "6 bad record(s) skipped" in result.output


def test_validate_json() -> None:
    result = runner.invoke(app, ["validate", "--tasks", str(DATA / "bad" / "release"), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.output)
    assert payload["ok"] is False and payload["tasks"] == 1
    assert {(Path(p["file"]).name, p["field"]) for p in payload["problems"]} >= {
        ("arxiv_002.json", "task_id"),
        ("arxiv_003.json", "domain"),
    }
    assert payload["alignment"]["unpaired"] == ["arxiv_001"]
    clean = runner.invoke(app, ["validate", "--tasks", SAMPLE, "--json"])
    assert clean.exit_code == 0 and json.loads(clean.output)["ok"] is True
