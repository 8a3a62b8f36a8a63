"""CSV downloads parsed into rows."""

from __future__ import annotations

import pytest

from browser.csvdata import CsvError, parse_csv


def test_comma_csv_with_bom_and_quoted_fields() -> None:
    data = '\ufeffcountry,note,value\r\nFrance,"Paris, capital",10\r\n"Côte d\'Ivoire","say ""hi""",7\r\n'.encode()
    table = parse_csv(data, max_rows=100)
    assert table.headers == ["country", "note", "value"]
    assert table.rows == [["France", "Paris, capital", "10"], ["Côte d'Ivoire", 'say "hi"', "7"]]
    assert (table.source, table.total_rows, table.truncated) == ("csv", 2, False)


def test_semicolon_and_tab_delimiters_are_sniffed() -> None:
    assert parse_csv(b"a;b\n1,5;2\n3;4\n", max_rows=10).rows == [["1,5", "2"], ["3", "4"]]
    assert parse_csv(b"a\tb\nx y\tz\n", max_rows=10).rows == [["x y", "z"]]


def test_single_column_and_short_rows() -> None:
    assert parse_csv(b"name\nalpha\nbeta\n", max_rows=10).rows == [["alpha"], ["beta"]]
    assert parse_csv(b"a,b,c\n1,2\n", max_rows=10).rows == [["1", "2", ""]]


def test_row_cap_counts_all_rows() -> None:
    data = b"n\n" + b"".join(f"{i}\n".encode() for i in range(50))
    table = parse_csv(data, max_rows=5)
    assert table.rows == [["0"], ["1"], ["2"], ["3"], ["4"]] and table.total_rows == 50 and table.truncated


def test_latin1_falls_back_without_losing_rows() -> None:
    table = parse_csv("city,n\nMünchen,1\n".encode("latin-1"), max_rows=10)
    assert table.rows == [["München", "1"]]


@pytest.mark.parametrize(("data", "message"), [(b"", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00", "binary")])
def test_bad_input_is_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(CsvError, match=message):
        parse_csv(data, max_rows=10)
