"""Answer text -> rows of cells, under the task's OutputSpec.

Models write tables in many dialects (raw pipes, Markdown tables, TSV, CSV, fenced blocks, prose
around them). The parser accepts all of them but never guesses content: every line it does not use
is kept, with the reason, so an audit can see exactly what was thrown away.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from eval.canonical import canonicalize, loose_name
from tasks.spec import OutputSpec

ParseStatus = Literal["rows", "empty", "parse_failure"]

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
_FENCE = re.compile(r"^(?:```|~~~)")
# Text right after a `,`/`;` that continues the same field rather than starting a record.
_CONTINUATION = re.compile(
    r"^\s*(?:inc|llc|l\.?l\.?c|ltd|l\.?p\.?|co|corp|corporation|plc"
    r"|n\.?a\.?|s\.?a\.?|ag|gmbh|jr|sr|et al)\b\.?",
    re.IGNORECASE,
)


class IgnoredLine(BaseModel):
    line: int
    text: str
    reason: str


@dataclass
class ParsedAnswer:
    status: ParseStatus
    rows: list[list[str]] = field(default_factory=list)
    header_seen: bool = False
    ignored: list[IgnoredLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_answer(text: str, spec: OutputSpec) -> ParsedAnswer:
    """Split records, split cells, drop headers and decoration; classify rows / empty / parse_failure."""
    parsed = ParsedAnswer(status="rows")
    header_keys = [loose_name(c) for c in spec.columns]
    none_key = spec.none_token.casefold()
    csv_mode = False
    saw_none = False
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line:
            continue
        if _FENCE.match(line):
            parsed.ignored.append(IgnoredLine(line=number, text=raw_line, reason="code fence"))
            continue
        if canonicalize(line).casefold() == none_key:
            saw_none = True
            parsed.ignored.append(IgnoredLine(line=number, text=raw_line, reason="none token"))
            continue
        if _TABLE_RULE.match(line):
            parsed.ignored.append(IgnoredLine(line=number, text=raw_line, reason="table separator row"))
            continue
        if spec.record_separator in ("\n", "\r\n"):
            cells = _split_cells(line, spec, csv_mode, header_keys)
            records = [] if cells is None else [cells]
        else:
            records = _split_records_schema_aware(line, spec, parsed.notes, number)
            if not records:  # no field separator: maybe one record per line in another dialect (tabs, CSV)
                cells = _split_cells(line, spec, csv_mode, header_keys)
                records = [] if cells is None else [cells]
        if not records:
            parsed.ignored.append(IgnoredLine(line=number, text=raw_line, reason="no field separator"))
            continue
        for cells in records:
            if _is_header(cells, header_keys):
                parsed.header_seen = True
                csv_mode = csv_mode or not _has_primary_separator(line, spec)
                parsed.ignored.append(IgnoredLine(line=number, text=raw_line, reason="header row"))
                continue
            parsed.rows.append(cells)
    if not parsed.rows:
        parsed.status = "empty" if saw_none or not text.strip() else "parse_failure"
    return parsed


def _is_header(cells: list[str], header_keys: list[str]) -> bool:
    """Cells equal to the schema names (case and style aside) form a header row."""
    if len(cells) != len(header_keys) or loose_name(cells[0]) != header_keys[0]:
        return False  # cheap first-cell test: this runs on every row
    return [loose_name(c) for c in cells] == header_keys


def _has_primary_separator(line: str, spec: OutputSpec) -> bool:
    return (
        bool(_UNESCAPED_PIPE.search(line))
        or "\t" in line
        or (spec.field_separator not in ("|", ",") and spec.field_separator in line)
    )


def _split_cells(line: str, spec: OutputSpec, csv_mode: bool, header_keys: list[str]) -> list[str] | None:
    """Cells of one record line, by the first dialect that applies; None when no dialect does."""
    sep = spec.field_separator
    if sep not in ("|", ",", "\t") and sep in line:
        return [cell.strip() for cell in line.split(sep)]
    if _UNESCAPED_PIPE.search(line):
        return split_pipes(line)
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    if "," in line and (csv_mode or sep == ","):
        return _split_csv(line)
    if "," in line and _is_header(_split_csv(line), header_keys):
        return _split_csv(line)
    if spec.width == 1:
        return [line]
    return None


def split_pipes(line: str) -> list[str]:
    """Pipe cells: one leading and one trailing pipe dropped (Markdown), `\\|` kept as a literal pipe."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.replace("\\|", "|").strip() for cell in _UNESCAPED_PIPE.split(body)]


def _split_csv(line: str) -> list[str]:
    return [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True), [])]


def _split_records_schema_aware(
    line: str, spec: OutputSpec, notes: list[str], number: int
) -> list[list[str]]:
    """Records joined by `,`/`;` on one line: the field count says where a record ends.

    A record of k columns holds k-1 field separators, so only the token after the (k-1)-th separator
    can contain a record boundary; a separator anywhere else belongs to a value ("X HOLDINGS, INC.").
    """
    record_sep = spec.record_separator
    width = spec.width
    field_pattern = (
        _UNESCAPED_PIPE if spec.field_separator == "|" else re.compile(re.escape(spec.field_separator))
    )
    if width == 1:
        return [[piece] for piece in _split_at_boundaries(line, record_sep) if piece]
    if not field_pattern.search(line):
        return []
    body = line.strip()
    if spec.field_separator == "|":
        body = body[1:] if body.startswith("|") else body
        body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    tokens = field_pattern.split(body)
    records: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        if len(current) >= width - 1 and record_sep in token:
            cut = _boundary(token, record_sep, notes, number)
            current.append(token[:cut])
            records.append(current)
            current = [token[cut + len(record_sep) :]]
        else:
            current.append(token)
    records.append(current)
    cleaned = [[cell.replace("\\|", "|").strip() for cell in record] for record in records]
    return [record for record in cleaned if any(record)]


def _split_at_boundaries(text: str, record_sep: str) -> list[str]:
    """Single-column lists: split at every separator except those that continue a value."""
    pieces: list[str] = []
    start = 0
    for match in re.finditer(re.escape(record_sep), text):
        if _continues_value(text, match.start(), record_sep):
            continue
        pieces.append(text[start : match.start()].strip())
        start = match.end()
    pieces.append(text[start:].strip())
    return pieces


def _boundary(token: str, record_sep: str, notes: list[str], number: int) -> int:
    """Where in `token` one record ends: the last separator that does not continue a value."""
    positions = [m.start() for m in re.finditer(re.escape(record_sep), token)]
    candidates = [p for p in positions if not _continues_value(token, p, record_sep)] or positions
    if len(candidates) > 1:
        notes.append(
            f"line {number}: ambiguous record boundary in {token!r}; split at the last {record_sep!r}"
        )
    return candidates[-1]


def _continues_value(text: str, position: int, record_sep: str) -> bool:
    after = text[position + len(record_sep) :]
    if _CONTINUATION.match(after):
        return True
    before = text[:position]
    return record_sep == "," and before[-1:].isdigit() and re.match(r"\d{3}(?!\d)", after) is not None
