"""The issue's hand cases, exact values computed by hand in the comments.

Gold: 3 rows x 3 columns (k = 3), key = first column, with a header row.
N_gold = 9 items, R_gold = 3 rows.
"""

from fractions import Fraction

import pytest

from eval.rules import FieldRule, TaskRules
from eval.score import score_answer
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "name", "year"))
GOLD = "id|name|year\nA|Alpha|2001\nB|Beta|2002\nC|Gamma|2003"
R1, R2, R3 = "A|Alpha|2001", "B|Beta|2002", "C|Gamma|2003"


def metrics(answer: str, gold: str = GOLD, spec: OutputSpec = SPEC, rules: TaskRules | None = None):
    score = score_answer(answer, gold, spec, rules)
    return score.item_f1, score.row_f1, score.poa


def approx(*values: Fraction | float):
    return pytest.approx(tuple(float(v) for v in values))


def test_perfect():
    # C_item = 9, N_pred = 9 -> 18/18; C_row = 3 -> 6/6; 3 pairs kept -> 1
    assert metrics("\n".join([R1, R2, R3])) == approx(1, 1, 1)
    assert score_answer("\n".join([R1, R2, R3]), GOLD, SPEC).exact_match is True


def test_reversed_rows():
    # every field and row aligned by key -> 1, 1; all 3 pairs inverted -> P.O.A. 0
    score = score_answer("\n".join([R3, R2, R1]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(1, 1, 0)
    assert score.exact_match is False
    assert [p.kept for p in score.evidence.order_pairs] == [False, False, False]


def test_last_row_omitted():
    # C_item = 6, N_pred = 6 -> 12/15 = 0.8; rows 2*2/(3+2) = 0.8; 1 shared pair kept -> 1
    score = score_answer("\n".join([R1, R2]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(0.8, 0.8, 1)
    assert score.evidence.omitted_keys == ["C"]
    assert [f.reason for f in score.evidence.fields if f.gold_row == 2] == ["omitted_row"] * 3


def test_one_non_key_field_wrong():
    # C_item = 8 -> 16/18 = 8/9; C_row = 2 -> 4/6 = 2/3; order kept -> 1
    score = score_answer("\n".join([R1, "B|Bet|2002", R3]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(Fraction(8, 9), Fraction(2, 3), 1)
    different = [f for f in score.evidence.fields if f.reason == "different"]
    assert [(f.column, f.predicted, f.gold) for f in different] == [("name", "Bet", "Beta")]


def test_empty_answer():
    # zero rows: 0/(9+0) = 0; 0/(3+0) = 0; no shared pair -> 0
    score = score_answer("", GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(0, 0, 0)
    assert score.parse_failure is False and score.evidence.prediction_status == "empty"
    assert metrics("NONE") == approx(0, 0, 0)


def test_markdown_table_equals_raw_pipes():
    table = "| id | name | year |\n|---|:---:|---|\n| A | Alpha | 2001 |\n| B | Bet | 2002 |\n| C | Gamma | 2003 |"
    assert metrics(table) == metrics("\n".join([R1, "B|Bet|2002", R3]))
    assert metrics(table) == approx(Fraction(8, 9), Fraction(2, 3), 1)


def test_row_one_duplicated_at_end():
    # 4 predicted rows: C_item = 9, N_pred = 12 -> 18/21 = 6/7; C_row = 3 -> 6/7; first copies in order -> 1
    score = score_answer("\n".join([R1, R2, R3, R1]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(Fraction(6, 7), Fraction(6, 7), 1)
    assert score.evidence.duplicate_keys == ["A"]
    assert score.exact_match is False


def test_wrong_first_copy_is_not_rescued_by_a_correct_duplicate():
    # first copy of A has a wrong name: fields 2 + 3 + 3 + 0 = 8 -> 16/21; rows B, C -> 2*2/7 = 4/7; order 1
    score = score_answer("\n".join(["A|Alpah|2001", R2, R3, R1]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(Fraction(16, 21), Fraction(4, 7), 1)
    assert [f.reason for f in score.evidence.fields if f.pred_row == 3] == ["duplicate"] * 3


def test_last_cell_of_row_one_missing():
    # row A has 2 cells: N_pred = max(3,2)+3+3 = 9, C_item = 8 -> 16/18 = 8/9; rows 2 -> 2/3; order 1
    score = score_answer("\n".join(["A|Alpha", R2, R3]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(Fraction(8, 9), Fraction(2, 3), 1)
    assert [f.reason for f in score.evidence.fields if f.pred_row == 0] == ["match", "match", "missing"]


def test_only_row_one():
    # C_item = 3 -> 6/(9+3) = 0.5; rows 2/(3+1) = 0.5; one shared key -> P.O.A. 0
    assert metrics(R1) == approx(0.5, 0.5, 0)


def test_extra_unknown_row():
    # C_item = 9, N_pred = 12 -> 6/7; rows 6/7; order 1
    score = score_answer("\n".join([R1, R2, R3, "D|Delta|2004"]), GOLD, SPEC)
    assert (score.item_f1, score.row_f1, score.poa) == approx(Fraction(6, 7), Fraction(6, 7), 1)
    assert score.evidence.extra_keys == ["D"]


def test_cannot_answer_is_a_parse_failure():
    score = score_answer("cannot answer", GOLD, SPEC)
    assert score.parse_failure is True
    assert (score.item_f1, score.row_f1, score.poa, score.exact_match) == (None, None, None, None)
    assert [line.reason for line in score.evidence.ignored_lines] == ["no field separator"]


def test_arxiv_version_suffix_under_arxiv_id_normalizer():
    spec = OutputSpec(columns=("arxiv_id", "title", "year"))
    gold = "arxiv_id|title|year\n2301.00001|Alpha|2023\n2302.00002|Beta|2023\n2303.00003|Gamma|2023"
    answer = "2301.00001v2|Alpha|2023\narXiv:2302.00002|Beta|2023\nhttps://arxiv.org/pdf/2303.00003v1.pdf|Gamma|2023"
    rules = TaskRules(fields={"arxiv_id": FieldRule(normalizers=["arxiv_id"])})
    assert metrics(answer, gold, spec, rules) == approx(1, 1, 1)
    # without the normalizer the versioned ids are different keys: nothing aligns
    assert metrics(answer, gold, spec) == approx(0, 0, 0)
