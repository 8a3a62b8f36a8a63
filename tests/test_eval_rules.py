"""Scoring rules: typed fields, normalizers, aliases, units, row keys, and rules-file errors."""

from pathlib import Path

import pytest

from eval.rules import FieldRule, RulesError, TaskRules, load_rules
from eval.score import score_answer
from eval.values import FieldComparer
from tasks.spec import OutputSpec


def test_decimal_with_unit_conversion():
    rule = FieldRule(type="decimal", unit="°C", conversions={"°F": {"offset": 32, "num": 5, "den": 9}})
    compare = FieldComparer(rule)
    assert compare("50 °F") == compare("10 °C") == compare("10.00")  # (50 - 32) x 5 / 9 = 10
    assert compare("51 °F") != compare("10")
    assert FieldComparer(FieldRule(type="decimal", places=1))("10.04") == FieldComparer(
        FieldRule(type="decimal")
    )("10")


def test_invalid_number_never_equals_gold():
    compare = FieldComparer(FieldRule(type="decimal"))
    assert compare("n/a") != compare("n/a")
    assert compare("1,234.5") == compare("1234.50")
    assert FieldComparer(FieldRule(type="integer"))("12.5") != FieldComparer(FieldRule(type="integer"))(
        "12.5"
    )
    spec = OutputSpec(columns=("id", "value"))
    rules = TaskRules(fields={"value": FieldRule(type="decimal")})
    score = score_answer("a|abc\nb|2", "a|abc\nb|2", spec, rules)
    # field a.value invalid on both sides -> 3 of 4 fields; rows: only b -> 2*1/4
    assert (score.item_f1, score.row_f1) == pytest.approx((0.75, 0.5))
    assert "invalid" in next(f.predicted for f in score.evidence.fields if f.reason == "different")


def test_id_list_is_split_deduplicated_and_sorted():
    compare = FieldComparer(FieldRule(type="id_list", uppercase=True))
    assert (
        compare("cve-2; CVE-1, cve-2  CVE-3") == ("CVE-1", "CVE-2", "CVE-3") == compare("CVE-3,CVE-1,CVE-2")
    )


def test_aliases_and_doi_normalizer():
    aliases = FieldComparer(FieldRule(aliases={"United States": ["USA", "U.S."]}))
    assert aliases("USA") == aliases("U.S.") == aliases("United States") == "United States"
    doi = FieldComparer(FieldRule(normalizers=["doi"]))
    assert doi("https://doi.org/10.1000/ABC") == doi("doi:10.1000/abc") == "10.1000/abc"


def test_dates_compare_at_their_written_precision():
    compare = FieldComparer(FieldRule(type="date"))
    assert compare("March 5, 2024") == compare("2024-03-05") == compare("03/05/2024") == "2024-03-05"
    assert compare("Mar 2024") == "2024-03"
    assert compare("sometime") != compare("sometime")


def test_no_case_folding_unless_a_rule_says_so():
    assert FieldComparer(None)("Alpha") != FieldComparer(None)("ALPHA")
    assert FieldComparer(FieldRule(uppercase=True))("Alpha") == "ALPHA"


def test_duplicate_key_in_gold_widens_the_key_and_records_it():
    spec = OutputSpec(columns=("state", "year", "count"))
    gold = "NY|2020|5\nNY|2021|7\nCA|2020|3"
    score = score_answer("NY|2021|7\nNY|2020|5\nCA|2020|3", gold, spec)
    assert score.evidence.key_columns == ["state", "year"] and score.evidence.key_widened
    assert "widened" in (score.evidence.key_note or "")
    # all rows align on (state, year): full credit; pair (NY2020, NY2021) inverted, other two kept -> 2/3
    assert (score.item_f1, score.row_f1, score.poa) == pytest.approx((1, 1, 2 / 3))


def test_row_key_from_rules_beats_dedup_key_beats_first_column():
    spec = OutputSpec(columns=("rank", "name", "value"), dedup_key=("name",))
    gold = "1|A|10\n2|B|20"
    # ranks swapped: keyed by name (dedup_key) both rows align, two rank fields wrong
    by_name = score_answer("2|A|10\n1|B|20", gold, spec)
    assert by_name.evidence.key_columns == ["name"] and by_name.evidence.key_source == "rubric dedup_key"
    assert by_name.item_f1 == pytest.approx(2 * 4 / 12)
    by_rank = score_answer("2|A|10\n1|B|20", gold, spec, TaskRules(row_key=["rank"]))
    assert by_rank.evidence.key_columns == ["rank"]
    assert by_rank.item_f1 == pytest.approx(2 * 2 / 12)  # rank aligns, name and value differ in both rows


def test_rules_file_round_trip_and_lookup_by_base_id(tmp_path: Path):
    path = tmp_path / "rules.yaml"
    path.write_text(
        "tasks:\n  arxiv_001:\n    row_key: [arxiv id]\n    fields:\n      arxiv_id: {normalizers: [arxiv_id]}\n"
    )
    book = load_rules(path)
    assert book.for_task("arxiv_001-g") is book.for_task("arxiv_001")
    assert book.for_task("arxiv_001").fields["arxiv_id"].normalizers == ["arxiv_id"]
    assert book.for_task("other") is None


def test_rules_file_errors_name_file_and_key(tmp_path: Path):
    path = tmp_path / "rules.yaml"
    path.write_text("tasks:\n  t1:\n    fields:\n      v: {type: float, normalizers: [nope]}\n")
    with pytest.raises(RulesError) as error:
        load_rules(path)
    message = str(error.value)
    assert f"{path}: tasks.t1.fields.v.type" in message
    assert f"{path}: tasks.t1.fields.v.normalizers" in message and "nope" in message
    bad_json = tmp_path / "rules.json"
    bad_json.write_text("{tasks: ")
    with pytest.raises(RulesError, match="rules.json: not valid JSON"):
        load_rules(bad_json)


def test_rule_for_an_unknown_column_names_the_rules_origin(tmp_path: Path):
    path = tmp_path / "rules.yaml"
    path.write_text("tasks:\n  t1:\n    fields:\n      nonexistent: {type: integer}\n")
    rules = load_rules(path).for_task("t1")
    with pytest.raises(RulesError, match=r"rules.yaml: tasks.t1.fields.nonexistent: no such column"):
        score_answer("a|1", "a|1", OutputSpec(columns=("id", "v")), rules)


def test_absurd_numbers_are_invalid_not_a_hang():
    compare = FieldComparer(FieldRule(type="decimal"))
    assert isinstance(compare("1e999999999"), type(compare("abc")))
    assert compare("9" * 5000) != compare("9" * 5000)
