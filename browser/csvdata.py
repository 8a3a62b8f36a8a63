"""CSV downloads as table rows: the delimiter is sniffed, a BOM stripped, quoted fields kept whole."""

from __future__ import annotations

import csv
import io

from browser.types import TableData

_DELIMITERS = ",;\t|"


class CsvError(ValueError):
    """The bytes cannot be read as delimited text."""


def _decode(data: bytes) -> str:
    for encoding in ("utf-8-sig", "utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8-sig",):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    # Old statistics portals still serve Latin-1; decoding it never fails, so it is the last resort.
    return data.decode("cp1252", errors="replace")


def _dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        counts = {d: first.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])

        class Guessed(csv.excel):
            delimiter = best if counts[best] else ","

        return Guessed


def parse_csv(data: bytes, *, max_rows: int) -> TableData:
    """First line is the header; rows beyond `max_rows` are counted in total_rows and flagged truncated."""
    if b"\x00" in data[:4096] and data[:2] not in (b"\xff\xfe", b"\xfe\xff"):
        raise CsvError("not a CSV file: binary content (NUL bytes) in the first 4 KB")
    text = _decode(data)
    if not text.strip():
        raise CsvError("empty CSV file")
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(text[:8192]))
    rows = [row for row in reader if any(cell.strip() for cell in row)]
    headers = [h.strip() for h in rows[0]]
    body = rows[1:]
    width = len(headers)
    kept = [(r + [""] * (width - len(r))) if len(r) < width else r for r in body[:max_rows]]
    return TableData(
        index=0,
        headers=headers,
        rows=kept,
        total_rows=len(body),
        truncated=len(body) > max_rows,
        source="csv",
    )
