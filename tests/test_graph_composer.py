"""The composer writes exactly the task's format: every separator kind, header rule, order, dedupe, NONE."""

from __future__ import annotations

import pytest

from graph.evidence.answer_format import compose, parse_order
from tasks.spec import OutputSpec


def rows(*values: tuple[str, str]) -> list[dict[str, str]]:
    return [{"id": a, "year": b} for a, b in values]


DATA = rows(("B-2", "2021"), ("A-1", "2019"), ("C-3", "2020"), ("A-1", "2019"))


@pytest.mark.parametrize(
    ("record_separator", "header", "expected"),
    [
        ("\n", "omitted", "A-1|2019\nB-2|2021\nC-3|2020"),
        ("\n", "required", "id|year\nA-1|2019\nB-2|2021\nC-3|2020"),
        (";", "omitted", "A-1|2019;B-2|2021;C-3|2020"),
        (";", "required", "id|year;A-1|2019;B-2|2021;C-3|2020"),
        (",", "omitted", "A-1|2019,B-2|2021,C-3|2020"),
        (",", "required", "id|year,A-1|2019,B-2|2021,C-3|2020"),
    ],
)
def test_every_separator_and_header_rule(record_separator: str, header: str, expected: str):
    spec = OutputSpec(columns=("id", "year"), record_separator=record_separator, header=header)
    assert compose(DATA, spec, ["id"]) == expected


@pytest.mark.parametrize("header", ["required", "omitted"])
def test_no_rows_is_the_none_token_even_with_a_header_rule(header: str):
    assert compose([], OutputSpec(columns=("id", "year"), header=header), ["id"]) == "NONE"
    assert compose([], OutputSpec(columns=("id",), none_token="N/A"), []) == "N/A"


def test_order_by_descending_numeric_and_ties_keep_secondary_key():
    spec = OutputSpec(columns=("id", "year"), header="omitted")
    data = rows(("B", "9"), ("A", "10"), ("C", "10"), ("D", "1,200"))
    assert compose(data, spec, ["year desc num", "id"]).split("\n") == ["D|1,200", "A|10", "C|10", "B|9"]
    assert compose(data, spec, ["year"]).split("\n")[0] == "D|1,200"  # text order without 'num'


def test_dedupe_by_key_keeps_the_first_row():
    spec = OutputSpec(columns=("id", "year"), header="omitted", dedup_key=("id",))
    data = rows(("A-1", "2019"), ("a-1", "2020"), ("B", "2021"))
    assert compose(data, spec, []) == "A-1|2019\nB|2021"


def test_pipe_inside_a_cell_is_escaped_and_whitespace_collapsed():
    spec = OutputSpec(columns=("id", "year"), header="omitted")
    assert compose(rows(("x|y", " 2019\n ")), spec, []) == "x\\|y|2019"


def test_unknown_order_column_names_the_schema():
    with pytest.raises(ValueError, match=r"'title' is not in the schema \['id', 'year'\]"):
        parse_order(["title desc"], ("id", "year"))
