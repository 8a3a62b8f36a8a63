"""Deterministic extraction: a table, PDF text or page text -> schema rows, each with its provenance.

The LLM only says where each column comes from (`graph.tools.agent_tools.ExtractRows`); reading the cells is code,
so in-page misreading cannot happen here, and every row carries the URL and retrieval state it was read in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import regex

from graph.checks.gates import state_snapshot
from graph.evidence import model_regex
from graph.evidence.fact_match import FactError, section_table, source_value
from graph.plan.values import gate_key, norm_value
from graph.state import DriftFlag, EvidenceRow, Provenance, ReadRecord, RetrievalState
from graph.tools.agent_tools import ExtractRows
from graph.tracking.state_reading import result_set_key


class ExtractionError(ValueError):
    """The column mapping does not fit what was read; the message tells the actor what is available."""


@dataclass
class Extraction:
    rows: list[EvidenceRow]
    record: ReadRecord
    shared: dict[str, str | None]  # column -> its one value for every row (url:, fact:, re: sources), else None


def _find_header(headers: list[str], name: str) -> int | None:
    wanted = norm_value(name)
    normalised = [norm_value(h) for h in headers]
    if wanted in normalised:
        return normalised.index(wanted)
    words = set(wanted.split())
    # whole words only: 'Agency' finds 'Agency name', but 'ID' must not find 'Identifier'
    return next((i for i, h in enumerate(normalised) if words and h and (words <= set(h.split()) or set(h.split()) <= words)),
                None)


SHARED_PREFIXES = ("re:", "url:", "fact:", "path:")
LINK = "link:"


def _shared_value(source: str, page_text: Callable[[], str], url: str, page_facts: dict[str, Any] | None
                  ) -> str | None:
    """'re:<regex>', 'url:<param>', 'path:<n>' and 'fact:<label>' sources: one value for every row, read as
    read_facts reads them (`graph.evidence.fact_match.source_value`), or None if not such a source."""
    if not source.startswith(SHARED_PREFIXES):
        return None
    if source.startswith("fact:") and page_facts is None:
        raise ExtractionError("fact: sources need the page's labelled values (none were read)")
    if source.startswith("re:"):
        try:
            match = model_regex.search(source[3:], page_text())
        except model_regex.PatternError as exc:  # the model's regex: a tool error it can correct, not a crash
            raise ExtractionError(str(exc)) from exc
        if not match:
            raise ExtractionError(f"regex {source[3:]!r} found nothing in the page text")
        return (match.group(1) if match.groups() else match.group(0)).strip()
    try:
        return source_value(source, page_facts, url=url, page_text="")[0]  # url:, path:, fact: read no text
    except FactError as exc:
        raise ExtractionError(str(exc)) from exc


def _cell_regex(source: str, headers: list[str]) -> tuple[str, regex.Pattern[str]] | None:
    """A per-row regex, `re:<header>:<regex>`: (the header, the compiled regex) when the text before the first ':'
    is one of the table's headers, else None (`re:<regex>` is then one value for every row, from the page text).
    Models wrote `re:` meaning each row's own cell, and a page-wide first match given to every row is a value the
    rows do not hold."""
    if not source.startswith("re:") or ":" not in source[3:]:
        return None
    header, regex = source[3:].split(":", 1)
    if norm_value(header) not in {norm_value(h) for h in headers}:
        return None
    try:
        return header, model_regex.compile_pattern(regex, 0)
    except model_regex.PatternError as exc:
        raise ExtractionError(str(exc)) from exc


def _cell_match(pattern: regex.Pattern[str], cell: str, deadline: float) -> str:
    """The regex's first match in one cell (its first group when it has groups); empty when none. Every cell of
    the read shares one deadline (`deadline`, monotonic): a slow pattern stops the read, not row after row."""
    try:
        match = model_regex.search_compiled(pattern, cell, seconds=deadline - time.monotonic())
    except model_regex.PatternError as exc:
        raise ExtractionError(str(exc)) from exc
    if not match:
        return ""
    return (match.group(1) if match.groups() else match.group(0)).strip()


def _keep(values: dict[str, str], raw: dict[str, str], where: dict[str, str]) -> bool:
    for key, wanted in where.items():
        actual = values.get(key, raw.get(norm_value(key)))
        if actual is None or norm_value(actual) != norm_value(wanted):
            return False
    return True


def active_drift(drift_flags: list[DriftFlag], url: str) -> list[str]:
    path = urlsplit(url).path
    return list(dict.fromkeys(f"{f['rule']}:{f['gate']}" for f in drift_flags if f.get("path") == path))


def extract(
    args: ExtractRows,
    *,
    columns: tuple[str, ...],
    observation: dict[str, Any],
    last_read: dict[str, Any] | None,
    retrieval: RetrievalState | None,
    drift_flags: list[DriftFlag],
    provenance: bool,
    step: int,
    page_facts: dict[str, Any] | None = None,
    page_text: Callable[[], str] = str,
) -> Extraction:
    """`columns` are the schema's columns (into "answer") or the table's own (the keys of `args.columns`);
    `page_facts` (a browser PageFacts dump) serves `fact:` sources and `section` tables; `page_text()` is the
    observation's text as the model reads it (`re:` sources and `page_text` rows search it; asked only then)."""
    url = observation.get("url", "")
    pagination = observation.get("pagination") or {}
    page, pages = pagination.get("page"), pagination.get("pages")
    site_total = observation.get("result_count") or pagination.get("total")
    read_index = (last_read or {}).get("table_index") if (last_read or {}).get("table") else None
    wanted = args.table if args.table is not None else read_index if read_index is not None else 0
    if not pagination and wanted != 0:
        site_total = None  # a count shown on a page of several tables need not be this table's

    records: list[tuple[dict[str, str], str]]  # (column/header -> value, locator)
    links: list[dict[str, str]] = []  # per record: normalised header -> the URL its cell links to
    pdf_page: list[int | None] = []  # per record: the PDF page it was read on
    first_row, last_row = pagination.get("first"), pagination.get("last")
    # a page the site numbers; else one its row range places (graph.checks.result_pages); else the first
    pages_covered = [page] if page else [] if first_row and last_row and first_row > 1 else [1]
    complete = False
    untaken = 0
    cut = False
    sources = {col: args.columns.get(col, col) for col in columns}
    if args.source == "table":
        table = (last_read or {}).get("table")
        table_name = f"table {wanted}"
        if args.section:
            try:
                table, _ = section_table(page_facts or {}, args.section)
            except FactError as exc:
                raise ExtractionError(str(exc)) from exc
            table_name, site_total, complete = f"section {args.section!r} table", None, True
        elif table is None or (last_read or {}).get("table_index") not in (None, wanted):
            tables = observation.get("tables") or []
            if wanted < len(tables):
                table = tables[wanted]
            elif not tables and says_no_results(observation):
                table, table_name = {"headers": [], "rows": []}, "no-results page"  # read, none: evidence too
            else:
                raise ExtractionError(f"no table {wanted}: the page shows {len(tables)} table(s); use read_table")
        elif last_read and last_read.get("all_pages") and (site_total is None or len(table["rows"]) >= site_total):
            complete = True  # trust "all pages" only when the rows add up to the site's total
            pages_covered = list(range(1, (pages or 1) + 1))
        meant_whole = not pages or pages <= 1 or bool((last_read or {}).get("all_pages"))
        if not args.section and site_total and meant_whole and len(table["rows"]) < site_total:
            # the site counts rows the table read does not hold: a `where` then filtered a part of the set, too
            untaken = site_total - len(table["rows"])
        # the browser cut the table at a row cap (its own, or the read's max_rows): rows it could not take, uncounted
        cut = not args.section and not untaken and bool(table.get("truncated"))
        headers = table["headers"]
        records = [({norm_value(h): cell for h, cell in zip(headers, row, strict=False)},
                    f"{table_name} row {i + 1}") for i, row in enumerate(table["rows"])]
        links = _cell_links(table, url)
        indexes: dict[str, int] = {}
        cell_regex = {col: found for col, source in sources.items() if (found := _cell_regex(source, headers))}
        sources = {col: cell_regex[col][0] if col in cell_regex else source for col, source in sources.items()}
        for col, source in sources.items():
            if source.startswith(SHARED_PREFIXES) or not (headers or table["rows"]):
                continue
            header = source.removeprefix(LINK)
            idx = _find_header(headers, header)
            if idx is None:
                raise ExtractionError(f"column {col!r}: no header {header!r}; headers are {headers}")
            indexes[col] = idx
        header_for = {col: (LINK if sources[col].startswith(LINK) else "") + norm_value(headers[idx])
                      for col, idx in indexes.items()}
        patterns = {col: pattern for col, (_, pattern) in cell_regex.items()}
        read_columns = list(headers)
    else:
        if not args.pattern:
            raise ExtractionError(f"source {args.source!r} needs a `pattern` with named groups")
        try:
            pattern = model_regex.compile_pattern(args.pattern, model_regex.MULTILINE)
        except model_regex.PatternError as exc:
            raise ExtractionError(str(exc)) from exc
        if args.source == "pdf":
            pdf_pages = (last_read or {}).get("pdf_pages") or []
            if not pdf_pages:
                raise ExtractionError("no PDF was read; use read_pdf first, or give its url")
            url = (last_read or {}).get("pdf_url") or url  # a PDF opened by its URL: its rows' URL
            chunks = [(p["text"], f"pdf page {p['page']}", p["page"]) for p in pdf_pages]
        else:
            chunks = [(page_text(), "page text", None)]
        try:
            found = [({k: (v or "").strip() for k, v in m.groupdict().items()}, loc, number)
                     for text, loc, number in chunks for m in model_regex.find_all(pattern, text)]
        except model_regex.PatternError as exc:
            raise ExtractionError(str(exc)) from exc
        records = [(raw, loc) for raw, loc, _ in found]
        pdf_page = [number for *_, number in found]
        header_for = {col: src for col, src in sources.items() if not src.startswith(SHARED_PREFIXES)}
        patterns = {}
        read_columns = list(pattern.groupindex)

    shared = {col: _shared_value(src, page_text, url, page_facts) for col, src in sources.items()}
    snapshot, active = state_snapshot(retrieval), active_drift(drift_flags, url)
    locator_suffix = f" (page {page} of {pages})" if page and pages else ""

    rows: list[EvidenceRow] = []
    deadline = time.monotonic() + model_regex.REGEX_SECONDS  # per-row `re:<header>:` regexes, all rows together
    for i, (raw, locator) in enumerate(records):
        values: dict[str, str] = {}
        for col in columns:
            key = header_for.get(col, col)
            if shared[col] is not None:
                values[col] = shared[col]
            elif key.startswith(LINK):
                values[col] = links[i].get(key[len(LINK):], "") if i < len(links) else ""
            else:
                values[col] = " ".join(str(raw.get(key, raw.get(gate_key(key), "")) or "").split())
            if col in patterns:
                values[col] = _cell_match(patterns[col], values[col], deadline)
        if not _keep(values, raw, args.where):
            continue
        on_pdf = pdf_page[i] if i < len(pdf_page) else None
        rows.append(EvidenceRow(values=values, provenance=Provenance(
            url=url, state=dict(snapshot) if provenance else None, drift=active if provenance else [],
            locator=locator + ("" if on_pdf else locator_suffix), result_set=result_set_key(url),
            page=on_pdf or page, pages=None if on_pdf else pages, step=step,
        )))
    record = ReadRecord(step=step, result_set=result_set_key(url), pages_covered=pages_covered, pages=pages,
                        site_total=site_total, rows=len(rows), filtered=bool(args.where) or args.source != "table",
                        complete=complete, url=url, columns=read_columns,
                        state=dict(snapshot) if provenance else None)
    if untaken:
        record["untaken"] = untaken
    if cut:
        record["truncated"] = True
    if first_row and last_row and not complete:
        record["rows_range"] = [first_row, last_row]
    return Extraction(rows=rows, record=record, shared=shared)


def _cell_links(table: dict[str, Any], url: str) -> list[dict[str, str]]:
    """Per row, each header's linked URL (absolute): the first link of its cell (`TableData.cell_links`); a table
    read without per-cell links gives its row's first link to every column."""
    headers = [norm_value(h) for h in table.get("headers") or []]
    cells, rows = table.get("cell_links") or [], table.get("row_links") or []
    out = []
    for i in range(len(table.get("rows") or [])):
        own, row_links = (cells[i] if i < len(cells) else []), (rows[i] if i < len(rows) else [])
        if cells:
            out.append({h: urljoin(url, links[0]["href"]) for h, links in zip(headers, own, strict=False) if links})
        else:
            out.append({h: urljoin(url, row_links[0]) for h in headers} if row_links else {})
    return out


_NO_RESULTS = re.compile(
    r"^\W*(?:no|0|zero)\s+(?:[\w-]+\s+){0,3}?(?:results?|records?|matches|items|entries|hits|rows|data|documents)\b"
    r"|\bno\s+(?:[\w-]+\s+){0,3}?(?:found|matched|available|recorded)\b|\bnothing\s+(?:was\s+)?found\b",
    re.IGNORECASE)


def says_no_results(observation: dict[str, Any]) -> bool:
    """The page states an empty result: a count of 0, or a short line such as "No results." / "No records found"
    (a read of 0 rows, not a missing table)."""
    if observation.get("result_count") == 0 or (observation.get("pagination") or {}).get("total") == 0:
        return True
    lines = [*(observation.get("outline") or []), *(observation.get("notices") or [])]
    return any(len(line) <= 120 and _NO_RESULTS.search(line.strip()) for line in lines)
