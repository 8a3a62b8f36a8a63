"""`--compat authors` on hand-made cases (values worked out by hand from the authors' definitions), where
its rules come from, the default mode's changes, and the mode in every summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.outcome import TaskOutcome
from agent.reports.html import render_html_report
from agent.reports.summary import render_markdown, summarize
from agent.rundir.cells import CellRecord
from agent.runner.bench import score_cell
from eval.batch import score_task
from eval.compat.rules import AuthorsRules, AuthorsRulesError, authors_rules
from eval.compat.score import score_authors
from eval.rules import FieldRule, TaskRules, UnitConversion
from eval.score import score_answer
from tasks.models import Task
from tasks.spec import OutputSpec

ROOT = Path(__file__).resolve().parents[1]
GOLD = "id|n\na|1974\nb|2006"
INT_RULES = AuthorsRules(columns=["id", "n"], row_key=["id"], fields={"n": {"type": "integer"}})
SPEC = OutputSpec(columns=("id", "n"))


def metrics(score) -> tuple:
    return score.item_f1, score.row_f1, score.poa, score.exact_match, score.parse_failure


def test_digit_grouping_is_invalid_for_the_authors_and_order_is_not_part_of_their_exact() -> None:
    grouped = score_authors("b|2 006\na|1,974", GOLD, INT_RULES)
    # ids match (2 of 4 gold items), numbers invalid; no row right; b before a: the one pair is broken
    assert metrics(grouped) == (0.5, 0.0, 0.0, False, False)
    assert grouped.mode == "authors" and grouped.evidence.counts.correct_items == 2
    reordered = score_authors("b|2006\na|1974", GOLD, INT_RULES)
    assert metrics(reordered) == (1.0, 1.0, 0.0, True, False)  # complete_correct ignores order
    ours = score_answer("b|2 006\na|1,974", GOLD, SPEC, TaskRules(fields={"n": FieldRule(type="integer")}))
    assert metrics(ours) == (1.0, 1.0, 0.0, False, False)


def test_their_clean_strips_one_sided_wrappers_and_unwraps_links_with_titles() -> None:
    answer = '**a|1974\n[b](https://x.org/a b "t")|`2006'
    assert metrics(score_authors(answer, GOLD, INT_RULES)) == (1.0, 1.0, 1.0, True, False)
    ours = score_answer(answer, GOLD, SPEC)
    # ours keeps one-sided marks: `**a` matches no key, b's id is right but `` `2006 `` is not: 2C/N = 2/8
    assert (ours.item_f1, ours.row_f1) == (0.25, 0.0)


def test_none_forms_and_prose() -> None:
    assert score_authors("**NONE**", GOLD, INT_RULES).parse_failure  # theirs: only bare NONE is empty
    assert metrics(score_authors(" none \n", GOLD, INT_RULES)) == (0.0, 0.0, 0.0, False, False)
    comma = AuthorsRules(columns=["id", "n"], row_key=["id"], record_separator=",")
    assert not score_authors("NONE,", "a|1,b|2", comma).parse_failure  # `NONE,` -> "NONE\n": empty
    # prose with a comma before any header is ignored; after a header it is a (wrong-width) data row
    assert score_authors("Sure, here it is\na|1974", GOLD, INT_RULES).evidence.counts.pred_rows == 1
    after_header = score_authors("id|n\nNote, complete.\na|1974\nb|2006", GOLD, INT_RULES)
    assert after_header.evidence.counts.pred_rows == 3 and after_header.item_f1 == 2 * 4 / (4 + 6)


def test_invalid_text_equals_itself_and_huge_exponents_neither_crash_nor_hang() -> None:
    rules = AuthorsRules(columns=["id", "n"], row_key=["id"], fields={"n": {"type": "integer"}})
    assert score_authors("a|n/a", "a|n/a", rules).exact_match  # `INVALID:n/a` == `INVALID:n/a`
    assert not score_answer("a|n/a", "a|n/a", SPEC, TaskRules(fields={"n": FieldRule(type="integer")})).exact_match
    huge = score_authors("a|1e999999999\nb|1e5000", "a|1\nb|1e5000", rules)
    assert huge.evidence.counts.correct_items == 3  # overflow -> invalid; 1e5000 equal to itself


def test_their_scorer_refusals_are_task_errors() -> None:
    with pytest.raises(AuthorsRulesError, match="duplicate gold keys"):
        score_authors("a|1", "a|1\na|2", INT_RULES)
    with pytest.raises(AuthorsRulesError, match="only newline"):
        authors_rules("t", OutputSpec(columns=("a", "b"), record_separator=" / "))


def _task(rubric: dict, gold: str = GOLD, output_format: str = "`id|n`, one per line, no header") -> Task:
    return Task.model_validate({"task_id": "t1", "domain": "ARXIV", "instruction": "x", "output_format": output_format,
                                "oracle_answer": gold, "metadata": {}, "rubric": rubric})


def test_rules_come_from_the_record_else_the_overlay_else_a_fallback() -> None:
    carried = _task({"columns": ["id", "n"], "row_key": ["id"], "fields": {"n": {"type": "integer"}}})
    assert authors_rules("t1", carried.output_spec, carried.rubric).source == "record rubric (authors' rules)"
    assert score_task(carried, "a|1,974\nb|2006", compat="authors").item_f1 == 3 / 4
    # the default mode keys and types rows by the record's own rules too (integer: grouping is fine)
    assert score_task(carried, "a|1,974\nb|2006").item_f1 == 1.0
    plain = _task({"normalization": {"schema": ["id", "n"], "dedup_key": "n"}})
    assert authors_rules("t1", plain.output_spec, plain.rubric).row_key == ["n"]
    overlay = TaskRules(row_key=["n"], fields={"id": FieldRule(aliases={"a": ["alpha"]}), "n": FieldRule(
        type="decimal", conversions={"k": UnitConversion(num=1000)})}, origin="r.yaml: tasks.t1")
    rules = authors_rules("t1", plain.output_spec, plain.rubric, overlay)
    assert rules.row_key == ["n"] and rules.fields["id"].aliases == {"alpha": "a"}
    assert score_task(plain, "alpha|1.974 k\nb|2006", overlay, "authors").exact_match


def test_default_mode_unwraps_titled_links_whole_bold_rows_and_drops_trailing_text() -> None:
    semi = OutputSpec(columns=("id", "n"), record_separator=";")
    assert score_answer("a|1974;b|2006; That is all.", "a|1974;b|2006", semi).exact_match
    assert score_answer('**a|1974**\n[b](https://x.org/p "title")|2006', GOLD, SPEC).exact_match


def test_bench_cells_and_summaries_state_the_mode() -> None:
    task = _task({"columns": ["id", "n"], "row_key": ["id"], "fields": {"n": {"type": "integer"}}})
    metrics_, score = score_cell(task, "b|2006\na|1974", "authors")
    assert score["mode"] == "authors" and metrics_["em"] == 1.0 and metrics_["poa"] == 0.0
    assert score_cell(task, "b|2006\na|1974")[0]["em"] == 0.0
    outcome = TaskOutcome(task_id="t1", model="m", variant="full", answer="x", stop_reason="finished")
    record = CellRecord(model="m", variant="full", task_id="t1", base_id="t1", split="constraint", family="F",
                        gold=GOLD, outcome=outcome, metrics=metrics_, score=score)
    summary = summarize(Path("run"), [record])
    assert summary.scoring == "authors" and "Scoring mode: authors" in render_markdown(summary)
    html = render_html_report(Path("run"), summary, [record])
    assert re.search(r'Scoring mode: <b id="scoring">authors</b>', html)


def test_cli_compat_authors_writes_the_mode_and_refuses_an_unknown_mode(tmp_path: Path) -> None:
    from agent.cli import app

    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"task_id": "arxiv_001", "answer": "NONE"}) + "\n", encoding="utf-8")
    args = ["score", "--tasks", str(ROOT / "tests/data/sgrbench_sample"), "--language", "en",
            "--predictions", str(predictions), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, [*args, "--compat", "authors"])
    assert result.exit_code == 0, result.output
    assert "scoring mode: authors" in result.output
    assert json.loads((tmp_path / "out/inputs.json").read_text())["compat"] == "authors"
    assert json.loads((tmp_path / "out/summary.json").read_text())["scoring"] == "authors"
    assert "Scoring mode: **authors**" in (tmp_path / "out/summary.md").read_text()
    bad = CliRunner().invoke(app, [*args, "--compat", "paper"])
    assert bad.exit_code == 2
