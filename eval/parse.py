"""Answer text -> rows of cells, under the task's OutputSpec.

Models write tables in many dialects (raw pipes, Markdown tables, TSV, CSV, fenced blocks, prose
around them). The parser accepts all of them but never guesses content: every line it does not use
is kept, with the reason, so an audit can see exactly what was thrown away.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from eval.canonical import canonicalize, loose_name
from eval.lines import iter_lines
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


MAX_KEPT = 200  # ignored lines / notes kept as evidence; the rest are counted (bounded memory)


@dataclass
class ParsedAnswer:
    status: ParseStatus
    rows: list[list[str]] = field(default_factory=list)
    header_seen: bool = False
    ignored: list[IgnoredLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    n_rows: int = 0
    n_ignored: int = 0

    def ignore(self, number: int, text: str, reason: str) -> None:
        self.n_ignored += 1
        if len(self.ignored) < MAX_KEPT:
            self.ignored.append(IgnoredLine(line=number, text=text[:500], reason=reason))


def parse_answer(text: str, spec: OutputSpec) -> ParsedAnswer:
    """Split records, split cells, drop headers and decoration; classify rows / empty / parse_failure."""
    parsed = ParsedAnswer(status="rows")
    parsed.rows = list(iter_rows(text, spec, parsed))
    return parsed


def iter_rows(text: str, spec: OutputSpec, parsed: ParsedAnswer) -> Iterator[list[str]]:
    """The rows of `text` one at a time (a large answer is never held as a list of rows); `parsed`
    collects the ignored lines and notes, and holds the final status once the rows are exhausted."""
    header_keys = [loose_name(c) for c in spec.columns]
    none_key = spec.none_token.casefold()
    csv_mode = False
    saw_none = False
    for number, raw_line in enumerate(iter_lines(text), start=1):
        line = raw_line.strip()
        if not line:
            continue
        if _FENCE.match(line):
            parsed.ignore(number, raw_line, "code fence")
            continue
        if len(line) <= 1000 and canonicalize(line).casefold() == none_key:  # a 50 MB line is no NONE
            saw_none = True
            parsed.ignore(number, raw_line, "none token")
            continue
        if _TABLE_RULE.match(line):
            parsed.ignore(number, raw_line, "table separator row")
            continue
        if spec.record_separator in ("\n", "\r\n"):
            cells = _split_cells(line, spec, csv_mode, header_keys)
            records: Iterable[list[str]] = [] if cells is None else [cells]
        else:
            records = _joined_records(line, spec, parsed, number, csv_mode, header_keys)
        any_record = False
        for cells in records:
            any_record = True
            cells = _unwrap_row(cells)
            if _is_header(cells, header_keys):
                parsed.header_seen = True
                csv_mode = csv_mode or not _has_primary_separator(line, spec)
                parsed.ignore(number, raw_line, "header row")
                continue
            parsed.n_rows += 1
            yield cells
        if not any_record:
            parsed.ignore(number, raw_line, "no field separator")
    if not parsed.n_rows:
        parsed.status = "empty" if saw_none or not text.strip() else "parse_failure"


def _joined_records(
    line: str, spec: OutputSpec, parsed: ParsedAnswer, number: int, csv_mode: bool, header_keys: list[str]
) -> Iterator[list[str]]:
    """Records of a line under a `,`/`;` record separator; with none, the line in another dialect
    (tabs, CSV) as one record."""
    produced = False
    for cells in _split_records_schema_aware(line, spec, parsed, number) or ():
        produced = True
        yield cells
    if not produced:
        cells = _split_cells(line, spec, csv_mode, header_keys)
        if cells is not None:
            yield cells


_ROW_WRAPPERS = ("**", "*", "`")


def _unwrap_row(cells: list[str]) -> list[str]:
    """`**a|b|c**` (a whole row in bold or code): the wrapper opens the first cell and closes the last."""
    if len(cells) < 2:
        return cells
    first, last = cells[0], cells[-1]
    for wrap in _ROW_WRAPPERS:
        if first.startswith(wrap) and last.endswith(wrap) and not first.endswith(wrap) and not last.startswith(wrap):
            return [first[len(wrap) :].strip(), *cells[1:-1], last[: -len(wrap)].strip()]
    return cells


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
    line: str, spec: OutputSpec, parsed: ParsedAnswer, number: int
) -> Iterator[list[str]] | None:
    """Records joined by `,`/`;` on one line: the field count says where a record ends (None when
    the line has no field separator at all).

    A record of k columns holds k-1 field separators, so only the token after the (k-1)-th separator
    can contain a record boundary; a separator anywhere else belongs to a value ("X HOLDINGS, INC.").
    """
    record_sep = spec.record_separator
    if spec.width == 1:
        return iter([[piece] for piece in _split_at_boundaries(line, record_sep) if piece])
    field_pattern = (
        _UNESCAPED_PIPE if spec.field_separator == "|" else re.compile(re.escape(spec.field_separator))
    )
    if not field_pattern.search(line):
        return None
    return _records_of_line(line, spec, field_pattern, parsed, number)


def _records_of_line(
    line: str, spec: OutputSpec, field_pattern: re.Pattern[str], parsed: ParsedAnswer, number: int
) -> Iterator[list[str]]:
    record_sep = spec.record_separator
    body = line.strip()
    if spec.field_separator == "|":
        body = body[1:] if body.startswith("|") else body
        body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    current: list[str] = []
    for token in _iter_split(body, field_pattern):
        if len(current) >= spec.width - 1 and record_sep in token:
            cut = _boundary(token, record_sep, parsed, number)
            current.append(token[:cut])
            yield from _cleaned(current)
            current = [token[cut + len(record_sep) :]]
        else:
            current.append(token)
    if len(current) == 1 and spec.width > 1 and not line.rstrip().endswith(spec.field_separator):
        # text after the last record separator without any field separator: prose, not a 1-cell row
        if current[0].strip():
            parsed.ignore(number, current[0], "text after the last record (no field separator)")
        return
    yield from _cleaned(current)


def _cleaned(record: list[str]) -> Iterator[list[str]]:
    cells = [cell.replace("\\|", "|").strip() for cell in record]
    if any(cells):
        yield cells


def _iter_split(text: str, pattern: re.Pattern[str]) -> Iterator[str]:
    """`pattern.split(text)` lazily (patterns here have no groups)."""
    start = 0
    for match in pattern.finditer(text):
        yield text[start : match.start()]
        start = match.end()
    yield text[start:]


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


def _boundary(token: str, record_sep: str, parsed: ParsedAnswer, number: int) -> int:
    """Where in `token` one record ends: the last separator that does not continue a value."""
    positions = [m.start() for m in re.finditer(re.escape(record_sep), token)]
    candidates = [p for p in positions if not _continues_value(token, p, record_sep)] or positions
    if len(candidates) > 1 and len(parsed.notes) < MAX_KEPT:
        parsed.notes.append(
            f"line {number}: ambiguous record boundary in {token!r}; split at the last {record_sep!r}"
        )
    return candidates[-1]


def _continues_value(text: str, position: int, record_sep: str) -> bool:
    after = text[position + len(record_sep) :]
    if _CONTINUATION.match(after):
        return True
    before = text[:position]
    return record_sep == "," and before[-1:].isdigit() and re.match(r"\d{3}(?!\d)", after) is not None
