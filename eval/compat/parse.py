"""Answer text -> rows, the authors' way, one row at a time.

Their rules, in order: a `,`/`;` record separator turns every occurrence into a line break; a blank
answer or exactly `NONE` (any case, surrounding space only) is empty; per line: blank lines and lines
starting with a fence are skipped; cells by pipes (one outer pipe each side dropped), else tabs, else
CSV; a line of `---` cells is a table rule; cells equal to the column names (cleaned, case-folded) are a
header; a CSV line before any header is prose (ignored); every other line is a row, whatever its
width. No rows at all is a parse failure.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from eval.compat.values import clean
from eval.lines import iter_lines, iter_split

_PIPE = re.compile(r"(?<!\\)\|")
_RULE_CELL = re.compile(r":?-{3,}:?")
_NONE = re.compile(r"\s*(?:none)?\s*", re.IGNORECASE)
MAX_KEPT = 200  # evidence lines kept; the rest are counted


class ScorerCrash(ValueError):
    """Input on which the authors' scorer raises instead of scoring (their run records no score)."""


@dataclass
class AuthorsParse:
    """Walk the answer with `rows()`; `status`, `ignored` and `wrong_width` are final afterwards."""

    text: str
    columns: list[str]
    record_separator: str | None = None
    status: str = "parsed"
    header: bool = False
    n_rows: int = 0
    ignored: list[tuple[int, str]] = field(default_factory=list)
    n_ignored: int = 0

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """(line number, cells) of every data row, in order."""
        if _is_empty(self.text, self.record_separator):
            self.status = "empty"
            return
        names = [c.casefold() for c in self.columns]
        for number, line in enumerate(self._lines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("```"):
                continue
            has_pipe = "|" in line
            if has_pipe:
                body = stripped[1:] if stripped.startswith("|") else stripped
                body = body[:-1] if body.endswith("|") else body
                cells = [cell.strip().replace("\\|", "|") for cell in _PIPE.split(body)]
            elif "\t" in line:
                cells = line.split("\t")
            elif "," in line:
                try:
                    cells = next(csv.reader([line]))
                except csv.Error as exc:
                    raise ScorerCrash(f"line {number}: csv.Error: {exc}") from exc
            else:
                self._ignore(number, line)
                continue
            if all(_RULE_CELL.fullmatch(cell.strip()) for cell in cells):
                continue
            if _is_header(cells, names):
                self.header = True
                continue
            if not has_pipe and "\t" not in line and not self.header:
                self._ignore(number, line)
                continue
            self.n_rows += 1
            yield number, cells
        if not self.n_rows:
            self.status = "parse_failure"

    def _lines(self) -> Iterator[str]:
        separator = self.record_separator
        if not separator or separator == "\n":
            yield from iter_lines(self.text)
            return
        # Theirs: "\n".join(text.split(separator)).splitlines(); the same lines, lazily.
        for piece in iter_split(self.text, separator):
            yield from iter_lines(piece) if piece else ("",)

    def _ignore(self, number: int, line: str) -> None:
        self.n_ignored += 1
        if len(self.ignored) < MAX_KEPT:
            self.ignored.append((number, line[:500]))


def _is_header(cells: list[str], names: list[str]) -> bool:
    if len(cells) != len(names) or clean(cells[0]).casefold() != names[0]:
        return False  # cheap first test: this runs on every row
    return [clean(c).casefold() for c in cells] == names


def _is_empty(text: str, separator: str | None) -> bool:
    """Theirs: after separators become line breaks, blank or `NONE` (`.strip().upper()`); a large answer
    is tested by pattern rather than copied."""
    if separator and separator != "\n":
        if len(text) < 10_000:
            text = text.replace(separator, "\n")
        else:
            filler = f"[\\s{re.escape(separator)}]*"
            return bool(re.fullmatch(f"{filler}(?:none)?{filler}", text, re.IGNORECASE))
    if len(text) >= 10_000:
        return bool(_NONE.fullmatch(text)) or text.isspace()
    stripped = text.strip()
    return not stripped or stripped.upper() == "NONE"
