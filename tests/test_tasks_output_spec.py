"""OutputSpec derivation from rubric normalization + output_format, and format() round trips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.models import Task
from tasks.output_spec import (
    OutputSpecError,
    columns_from_output_format,
    derive_output_spec,
    header_rule_from_text,
    none_token_from_text,
    parse_dedup_key,
)
from tasks.spec import OutputSpec

SAMPLE = Path(__file__).parent / "data" / "sgrbench_sample"
ABC = {"schema": ["a", "b", "c"]}


# --- record separator ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("\n", "\n"), ("\\n", "\n"), ("newline", "\n"), ("New line", "\n"), ("\r\n", "\n"), (",", ","),
     (";", ";"), ("; ", ";"), (" , ", ","), ("semicolon", ";"), ("semicolons", ";"), ("comma", ","),
     ("'\\n'", "\n"), ("`;`", ";"), ("; (semicolon)", ";"), ("\\n (newline)", "\n"), ("one record per line", "\n"),
     ("semicolon (half-width)", ";")],
)
def test_record_separator_from_rubric(raw: str, expected: str) -> None:
    assert derive_output_spec(ABC | {"record_separator": raw}, "").record_separator == expected


@pytest.mark.parametrize(
    ("output_format", "expected"),
    [
        ("One line; records separated by semicolons.", ";"),
        ("Separate records with a comma.", ","),
        ("Rows are separated by ';'.", ";"),
        ("Output one record per line.", "\n"),
        ("Answer as a|b|c.", "\n"),  # nothing said: newline
    ],
)
def test_record_separator_from_output_format(output_format: str, expected: str) -> None:
    assert derive_output_spec(ABC, output_format).record_separator == expected


@pytest.mark.parametrize("raw", ["whatever comes to mind", "  ", "x"])
def test_unrecognised_separator_names_the_field(raw: str) -> None:
    with pytest.raises(OutputSpecError) as info:
        derive_output_spec(ABC | {"record_separator": raw}, "")
    assert info.value.field == "rubric.normalization.record_separator"


@pytest.mark.parametrize(("raw", "expected"), [("pipe", "|"), ("|", "|"), ("tab", "\t"), ("\\t", "\t")])
def test_field_separator_words(raw: str, expected: str) -> None:
    assert derive_output_spec(ABC | {"field_separator": raw}, "").field_separator == expected


# --- header rule ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, "required"), (False, "omitted"), ("omit", "omitted"), ("none", "omitted"), ("optional", "optional"),
        ("required", "required"), ("Do not include a header row.", "omitted"), ("Omit the header.", "omitted"),
        ("A header row is optional.", "optional"), ("required: a|b|c", "required"), ("a|b|c", "required"),
        ({"required": False}, "omitted"), ({"rule": "optional"}, "optional"), ("not required", "optional"),
        ("first line must be `a|b|c`", "required"),
    ],
)
def test_header_rule_from_rubric(raw: object, expected: str) -> None:
    assert derive_output_spec(ABC | {"header_row": raw}, "").header == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No header.", "omitted"),
        ("Do not include a header row; one record per line.", "omitted"),  # contains "include a header"
        ("Output the rows without a header.", "omitted"),
        ("Include a header row.", "required"),
        ("The first line must be the header.", "required"),
        ("A header row is optional.", "optional"),
        ("You may include a header.", "optional"),
        ("Sort by date.", None),
    ],
)
def test_header_rule_from_output_format(text: str, expected: str | None) -> None:
    assert header_rule_from_text(text) == expected
    assert derive_output_spec(ABC, text).header == (expected or "optional")


def test_rubric_header_rule_wins_over_output_format() -> None:
    assert derive_output_spec(ABC | {"header_row": "omit"}, "Include a header row.").header == "omitted"


def test_unrecognised_header_rule_names_the_field() -> None:
    with pytest.raises(OutputSpecError) as info:
        derive_output_spec(ABC | {"header_row": "banana"}, "")
    assert info.value.field == "rubric.normalization.header_row"


# --- columns -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("normalization", "output_format", "expected"),
    [
        ({"schema": ["KO id", "gene name", "EC/TC number"]}, "", ("KO id", "gene name", "EC/TC number")),
        ({"schema": "a | b | c"}, "", ("a", "b", "c")),
        ({"schema": [{"name": "x", "type": "string"}, {"name": "y"}]}, "", ("x", "y")),
        ({}, "Output one record per line as <arxiv_id>|<title>|<first_author>. No header.",
         ("arxiv_id", "title", "first_author")),
        ({}, "Each as <company> | <product> | <complaint count>.", ("company", "product", "complaint count")),
        ({}, "Return columns site_id|characteristic|result value/unit. Include a header row.",
         ("site_id", "characteristic", "result value/unit")),
        ({}, "Answer with columns: county | state | total population, one per line.",
         ("county", "state", "total population")),
        ({}, "Write lines like `cve_id|published_date`.", ("cve_id", "published_date")),
        ({"header_row": "required: p|q"}, "Include a header.", ("p", "q")),
        ({"header_row": "first line must be `p|q`"}, "", ("p", "q")),
        ({"schema": {"x": "string", "y": "integer"}}, "", ("x", "y")),
        ({}, "Each record is {site}|{date}|{value}.", ("site", "date", "value")),
        ({}, "Fields separated by `|`: `arxiv_id|title|submitted_date`. No header row.",
         ("arxiv_id", "title", "submitted_date")),
        ({}, "Format each line as: CVE ID | Published Date | CVSS Score", ("CVE ID", "Published Date", "CVSS Score")),
        ({}, "CVE ID | Published Date\nOne per line.", ("CVE ID", "Published Date")),
        ({}, "One <cve_id> per line.", ("cve_id",)),
    ],
)
def test_columns(normalization: dict, output_format: str, expected: tuple[str, ...]) -> None:
    assert derive_output_spec(normalization, output_format).columns == expected


def test_schema_wins_over_output_format() -> None:
    assert derive_output_spec({"schema": ["x", "y"]}, "<a>|<b>|<c>").columns == ("x", "y")


def test_a_lone_separator_in_prose_is_not_a_column_list() -> None:
    assert columns_from_output_format("Use | as separator, ; between records.") is None


def test_tab_separated_placeholders() -> None:
    assert columns_from_output_format("<a>\t<b>", "\t") == ["a", "b"]


def test_no_columns_anywhere_names_the_schema_field() -> None:
    with pytest.raises(OutputSpecError) as info:
        derive_output_spec({}, "List the matching vulnerabilities, most recent first.")
    assert info.value.field == "rubric.normalization.schema"
    assert "no columns" in str(info.value)


# --- NONE token, ordering, dedup key --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("If no CVE matches, output NONE.", "NONE"),
        ('If nothing matches, return "NO_RESULTS".', "NO_RESULTS"),
        ("If there are no results, answer N/A.", "N/A"),
        ("Output ONE line per paper.", None),  # no emptiness in the sentence: not a token
        ("Sort by date.", None),
    ],
)
def test_none_token_from_output_format(text: str, expected: str | None) -> None:
    assert none_token_from_text(text) == expected
    assert derive_output_spec(ABC, text).none_token == (expected or "NONE")


def test_none_token_from_rubric() -> None:
    assert derive_output_spec(ABC | {"none_token": "EMPTY"}, "If none, output NONE.").none_token == "EMPTY"


def test_ordering_object_keeps_rank_precedence() -> None:
    spec = derive_output_spec(
        ABC | {"sorting_or_selection": {"tertiary": "c asc", "primary": "a desc", "secondary": "b asc"}}, ""
    )
    assert spec.ordering == "primary: a desc; secondary: b asc; tertiary: c asc"


@pytest.mark.parametrize(
    ("raw", "output_format", "expected"),
    [
        ("arxiv_id ascending", "", "arxiv_id ascending"),
        (["a desc", "b asc"], "", "a desc; b asc"),
        (None, "Use <a>|<b>|<c>. Sort by a descending. If none, output NONE.", "Sort by a descending."),
        (None, "Use <a>|<b>|<c>.", None),
    ],
)
def test_ordering(raw: object, output_format: str, expected: str | None) -> None:
    normalization = ABC | ({"sorting_or_selection": raw} if raw is not None else {})
    assert derive_output_spec(normalization, output_format).ordering == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("(a, b, c)", ("a", "b", "c")), ("a", ("a",)), ("(`a` + b)", ("a", "b")), (["a", "b"], ("a", "b")),
     ("tuple(site_id, date)", ("site_id", "date")),
     ("()", None), (None, None)],
)
def test_parse_dedup_key(raw: object, expected: tuple[str, ...] | None) -> None:
    assert parse_dedup_key(raw) == expected


def test_dedup_key_is_spelled_like_the_columns() -> None:
    spec = derive_output_spec({"schema": ["KO id", "Gene name"], "dedup_key": "(ko_id, gene name, other)"}, "")
    assert spec.dedup_key == ("KO id", "Gene name", "other")


# --- the sample records: the spec reproduces each reference answer ----------------------------------------


def _sample_tasks() -> list[Task]:
    paths = sorted((SAMPLE / "data_en").glob("*/*.json"))
    return [Task.model_validate(json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def _naive_rows(task: Task) -> list[list[str]]:
    """Sample answers keep separators out of fields, except commas inside CFPB names (';' records there)."""
    spec = task.output_spec
    records = [r.strip() for r in task.oracle_answer.split(spec.record_separator)]
    rows = [[c.strip() for c in r.split(spec.field_separator)] for r in records if r]
    if rows and [c.lower() for c in rows[0]] == [c.lower() for c in spec.columns]:
        rows = rows[1:]
    return rows


@pytest.mark.parametrize("task", _sample_tasks(), ids=lambda t: t.task_id)
def test_format_reproduces_the_reference_answer(task: Task) -> None:
    spec = task.output_spec
    rows = _naive_rows(task)
    assert len(rows) == task.expected_rows
    assert all(len(r) == spec.width for r in rows)
    expected = task.oracle_answer
    header_line = spec.field_separator.join(spec.columns)
    if spec.header == "optional" and expected.startswith(header_line):  # format() leaves optional headers out
        expected = expected[len(header_line) + len(spec.record_separator):]
    if spec.record_separator != "\n":
        expected = re.sub(rf"\s*{re.escape(spec.record_separator)}\s*", spec.record_separator, expected)
    assert spec.format(rows) == expected


# --- format() round trip, per separator and header kind -------------------------------------------------


def _parse(spec: OutputSpec, text: str) -> list[list[str]]:
    """Minimal reader for the round trip: honours '\\|' escapes and the header rule."""
    if text == spec.none_token:
        return []
    rows = []
    for record in text.split(spec.record_separator):
        cells = re.split(r"(?<!\\)\|", record) if spec.field_separator == "|" else record.split(spec.field_separator)
        rows.append([c.replace("\\|", "|") for c in cells])
    if spec.header == "required":
        assert rows[0] == list(spec.columns)
        rows = rows[1:]
    return rows


# No backslash: OutputSpec.format() escapes '|' as '\|', so a cell ending in '\' is ambiguous (contract limit).
cell = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\\"), max_size=12).map(
    lambda s: " ".join(s.split())
)


@pytest.mark.parametrize("record_separator", ["\n", ";", ","])
@pytest.mark.parametrize("header", ["required", "omitted", "optional"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_format_round_trip(record_separator: str, header: str, data: st.DataObject) -> None:
    spec = derive_output_spec({"schema": ["a", "b", "c"], "record_separator": record_separator, "header_row": header}, "")
    assert (spec.record_separator, spec.header) == (record_separator, header)
    safe = cell.filter(lambda s: record_separator not in s and s != spec.none_token)
    rows = data.draw(st.lists(st.lists(safe, min_size=3, max_size=3), max_size=5))
    text = spec.format(rows)
    assert _parse(spec, text) == rows
    assert text.startswith("a|b|c") == (header == "required" and bool(rows))
