"""Degenerate cases, extra cells, gold errors, exact match and JSON round trip of scores."""

import json

import pytest

from eval.score import GoldParseError, Score, score_answer
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "name", "year"))
GOLD = "A|Alpha|2001\nB|Beta|2002\nC|Gamma|2003"


def test_empty_gold_and_empty_prediction_agree_completely():
    score = score_answer("NONE", "NONE", SPEC)
    # 0 / 0 items and rows: complete agreement; no pair to order -> P.O.A. 0 by definition
    assert (score.item_f1, score.row_f1, score.poa, score.exact_match) == (1.0, 1.0, 0.0, True)


def test_empty_gold_with_rows_predicted_scores_zero():
    score = score_answer("A|Alpha|2001", "", SPEC)
    # C = 0 over N_gold 0 + N_pred 3 -> 0; rows 0 / (0 + 1) -> 0
    assert (score.item_f1, score.row_f1, score.poa, score.exact_match) == (0.0, 0.0, 0.0, False)
    assert score.evidence.extra_keys == ["A"]


def test_extra_cell_counts_in_the_denominator_and_breaks_the_row():
    score = score_answer("A|Alpha|2001|note\nB|Beta|2002\nC|Gamma|2003", GOLD, SPEC)
    # N_pred = 4 + 3 + 3 = 10, C_item = 9 -> 18/19; row A has 4 cells -> rows 2*2/6
    assert (score.item_f1, score.row_f1) == pytest.approx((18 / 19, 2 / 3))
    assert score.evidence.wrong_width_rows == [0]
    assert score.exact_match is False


def test_exact_match_tolerates_presentation_but_not_order():
    decorated = "| id | name | year |\n|---|---|---|\n| **A** | [Alpha](http://a) | `2001` |\n| B | Beta | 2002 |\n| C | Gamma | 2003 |"
    assert score_answer(decorated, GOLD, SPEC).exact_match is True
    assert score_answer("B|Beta|2002\nA|Alpha|2001\nC|Gamma|2003", GOLD, SPEC).exact_match is False


def test_empty_key_cell_cannot_align():
    score = score_answer("||Alpha|2001", GOLD, SPEC)
    # one leading pipe is Markdown decoration, the second opens an empty key cell: unmatched, 0 credit
    assert score.item_f1 == 0.0 and score.evidence.extra_keys == [""]
    # a single leading pipe is decoration only: the row is "Alpha|2001", keyed "Alpha", also unmatched
    assert score_answer("|Alpha|2001", GOLD, SPEC).evidence.extra_keys == ["Alpha"]


def test_gold_that_yields_no_rows_is_an_error_not_a_score():
    with pytest.raises(GoldParseError, match="gold answer yields no rows"):
        score_answer("A|Alpha|2001", "the answer is below", SPEC)


def test_order_pairs_use_first_occurrences():
    # order B, A, C, B: first occurrences B<A (inverted), B<C (kept), A<C (kept) -> 2/3
    score = score_answer("B|Beta|2002\nA|Alpha|2001\nC|Gamma|2003\nB|Beta|2002", GOLD, SPEC)
    assert score.poa == pytest.approx(2 / 3)
    assert [(p.first, p.second, p.kept) for p in score.evidence.order_pairs] == [
        ("A", "B", False),
        ("A", "C", True),
        ("B", "C", True),
    ]


def test_score_serialises_with_its_evidence():
    score = score_answer("A|Alpha|2001\nB|Bet|2002\nnote: partial", GOLD, SPEC)
    data = json.loads(score.model_dump_json())
    assert data["evidence"]["counts"] == {
        "columns": 3,
        "gold_rows": 3,
        "pred_rows": 2,
        "correct_rows": 1,
        "gold_items": 9,
        "pred_items": 6,
        "correct_items": 5,
    }
    assert data["evidence"]["omitted_keys"] == ["C"]
    assert data["evidence"]["ignored_lines"] == [
        {"line": 3, "text": "note: partial", "reason": "no field separator"}
    ]
    assert Score.model_validate(data) == score


def test_parse_failure_serialises_with_null_metrics():
    data = json.loads(score_answer("I don't know", GOLD, SPEC).model_dump_json())
    assert data["parse_failure"] is True
    assert [data[m] for m in ("item_f1", "row_f1", "poa", "exact_match")] == [None, None, None, None]
