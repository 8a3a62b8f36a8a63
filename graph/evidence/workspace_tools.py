"""The workspace tools as pure functions over what was read: extract_rows into a named table, read_facts
into one row, derive, discard_rows from a table. The graph's nodes and the walkthrough replay both call
these, so a walkthrough's answer is computed exactly as the agent computes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from browser.delta import render_observation
from browser.render import DEFAULT_BUDGET
from graph.checks.gates import ReadCheck, check_read, read_drift, stale_read, state_snapshot
from graph.evidence.answer_format import compose
from graph.evidence.evidence_tables import (
    ANSWER,
    SCHEMAS_HEAD,
    TableRecord,
    WorkspaceError,
    append_rows,
    cell_text,
    check_name,
    derived_answer,
    derived_table,
    extracted_answer,
    read_rows,
    run_query,
    schemas,
)
from graph.evidence.fact_match import FactError, source_value
from graph.evidence.row_extraction import ExtractionError, active_drift, extract
from graph.state import DriftFlag, EvidenceRow, Plan, Provenance, ReadRecord, RetrievalState
from graph.tools.agent_tools import Derive, DiscardRows, ExtractRows, ReadFacts
from graph.tracking.state_reading import result_set_key
from tasks.spec import OutputSpec

ECHO_CHARS = 900  # rows a reply shows: all of them up to about 220 tokens, kept whole in the 2 newest exchanges
DERIVED_CHARS = 1600  # a derived result shown whole up to this, else its head and tail


def show_rows(columns: list[str], rows: list[dict[str, Any]], *, budget: int = ECHO_CHARS) -> list[str]:
    """Rows as ` | `-joined lines under a header line: all of them within `budget` characters, else the head and
    the tail with how many rows lie between (so a check of the last rows costs no extra step)."""
    lines = [" | ".join(cell_text(r.get(c)) for c in columns) for r in rows]
    head = [" | ".join(columns)]
    if sum(len(line) + 1 for line in lines) <= budget:
        return head + lines
    first: list[str] = []
    last: list[str] = []
    used, lo, hi = 0, 0, len(lines) - 1
    while lo <= hi:  # alternately from the head and the tail
        take_head = len(first) <= len(last)
        line = lines[lo] if take_head else lines[hi]
        if used + len(line) + 1 > budget - 40:
            break
        used += len(line) + 1
        if take_head:
            first.append(line)
            lo += 1
        else:
            last.append(line)
            hi -= 1
    hidden = len(lines) - len(first) - len(last)
    return [*head, *first, f"... {hidden} row(s) not shown (rows {len(first) + 1}-{len(first) + hidden})",
            *reversed(last)]


@dataclass
class ReadContext:
    """What the agent had in front of it when a workspace tool ran."""

    observation: dict[str, Any]
    last_read: dict[str, Any] | None
    retrieval: RetrievalState | None
    drift_flags: list[DriftFlag]
    provenance: bool
    step: int
    plan: Plan | None = None  # its gates are checked on the values held when the rows are read
    history: list[RetrievalState] = field(default_factory=list)  # states visited (the list a page came from)
    token_budget: int = DEFAULT_BUDGET  # the worker's: the page text a regex reads is the page shown whole at it

    def page_text(self) -> str:
        """The observation's text as a prompt with the whole budget shows it (what a `re:` source or a
        `page_text` read searches), rendered when a read asks for it."""
        return render_observation(self.observation, self.token_budget).text if self.observation else ""

    def check(self, into: str) -> ReadCheck:
        """Needs the tracked state (none when the state tracker is ablated); rows carry its flags only with
        provenance, but the flags reach the actor either way."""
        return check_read(self.plan, into, self.retrieval, self.step, self.history)


class StaleRead(WorkspaceError):
    """A read refused because the table shown is stale (controls changed and not applied): logged as such."""


def needs_page_facts(args: ExtractRows) -> bool:
    return bool(args.section) or any(s.startswith("fact:") for s in args.columns.values())


@dataclass
class Written:
    """A tool's effect: the tables written (whole), the rows just read, the reply to the model."""

    message: str
    rows: list[EvidenceRow]
    tables: dict[str, TableRecord | None]
    record: ReadRecord | None = None
    flags: list[DriftFlag] = field(default_factory=list)  # planned gates found at another value when reading
    notes: list[str] = field(default_factory=list)  # the read check's, after the message (said once per reply)


def extract_into(args: ExtractRows, ctx: ReadContext, *, schema: tuple[str, ...], tables: dict[str, TableRecord],
                 page_facts: dict[str, Any] | None, echo_chars: int = ECHO_CHARS) -> Written:
    into = check_name(args.into)
    if into == ANSWER and derived_answer(tables):
        raise WorkspaceError("the answer table was derived by SQL: extract_rows into a named table (into=...) and "
                             "derive the answer again")
    columns = schema if into == ANSWER else tuple(check_name(c) for c in args.columns)
    if args.source != "pdf" and (stale := stale_read(ctx.retrieval)):
        raise StaleRead(stale)
    check = ctx.check(into)
    extraction = extract(args, columns=columns, observation=ctx.observation, last_read=ctx.last_read,
                         retrieval=ctx.retrieval, drift_flags=read_drift(ctx.drift_flags, check),
                         provenance=ctx.provenance, step=ctx.step, page_facts=page_facts,
                         page_text=cache(ctx.page_text))
    rows = extraction.rows
    record = extraction.record
    empty = "" if rows else f" (read, none: {record.get('url') or 'this page'} has no matching rows)"
    echo = show_rows(list(columns), [r["values"] for r in rows], budget=echo_chars) if rows else []
    stored = rows or [empty_read_row(columns, extraction.shared, record, ctx, check)]
    notes = read_notes(check, tables, record)
    table = append_rows(tables.get(into), into, list(columns), stored, record, ctx.step)
    first = (f"extracted {len(rows)} row(s){empty} ({len(read_rows(table))} collected)" if into == ANSWER else
             f"extracted {len(rows)} row(s) into {into}{empty} ({len(read_rows(table))} now)")
    if untaken := record.get("untaken"):  # said with the count: a read that silently took part of a set misleads
        first += (f"; {untaken} of the site's {record['site_total']} rows were not on the table read: read them "
                  "(read_table with all_pages=true, or each page) and extract them")
    elif record.get("truncated"):
        first += ("; the table read was cut at a row cap: it holds more rows than were taken (read_table with a "
                  "larger max_rows, or narrower filters, and extract again)")
    return Written("\n".join([first, *echo]), rows, {into: table}, record, check.mismatches, notes)


def empty_read_row(columns: tuple[str, ...], shared: dict[str, str | None], record: ReadRecord,
                   ctx: ReadContext, check: ReadCheck) -> EvidenceRow:
    """The one row an empty read leaves in its table, so SQL tells "read, none" (a row with `_empty` true: its
    url:/fact:/re: columns filled, the others NULL) from "never read" (no row at all)."""
    url = record.get("url") or ctx.observation.get("url", "")
    return EvidenceRow(values={c: shared.get(c) for c in columns}, empty=True, provenance=Provenance(
        url=url, state=record.get("state") if ctx.provenance else None,
        drift=active_drift(read_drift(ctx.drift_flags, check), url) if ctx.provenance else [],
        locator="empty read",
        result_set=record["result_set"], page=record["pages_covered"][0] if record["pages_covered"] else None,
        pages=record["pages"], step=ctx.step))


def read_facts_row(args: ReadFacts, ctx: ReadContext, *, tables: dict[str, TableRecord],
                   page_facts: dict[str, Any]) -> Written:
    into = check_name(args.into)
    if into == ANSWER:
        raise WorkspaceError("read_facts cannot write the answer table; read into a table, then derive the answer")
    if stale := stale_read(ctx.retrieval):  # the page's values are the old state's, as a table's rows would be
        raise StaleRead(stale)
    url = page_facts.get("url") or ctx.observation.get("url", "")
    text = ctx.page_text() if any(s.startswith("re:") for s in args.fields.values()) else ""
    values: dict[str, str] = {}
    locators: list[str] = []
    for column, source in args.fields.items():
        check_name(column)
        try:
            value, where = source_value(source, page_facts, url=url, page_text=text, section=args.section)
        except FactError:
            if not args.allow_missing:
                raise
            value, where = "", f"missing {source!r}"
        values[column] = " ".join(value.split())
        locators.append(where)
    snapshot = state_snapshot(ctx.retrieval)
    check = ctx.check(into)
    row = EvidenceRow(values=values, provenance=Provenance(
        url=url, state=snapshot if ctx.provenance else None,
        drift=active_drift(read_drift(ctx.drift_flags, check), url) if ctx.provenance else [],
        locator="; ".join(locators), result_set=result_set_key(url), page=None, pages=None, step=ctx.step))
    record = ReadRecord(step=ctx.step, result_set=result_set_key(url), pages_covered=[1], pages=None,
                        site_total=None, rows=1, filtered=True, complete=True, url=url, columns=list(values),
                        state=snapshot if ctx.provenance else None)
    notes = read_notes(check, tables, record)
    table = append_rows(tables.get(into), into, list(values), [row], record, ctx.step)
    shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return Written(f"read 1 row into {into} ({len(table['rows'])} now): {shown}", [], {into: table}, record,
                   check.mismatches, notes)


def read_notes(check: ReadCheck, tables: dict[str, TableRecord], record: ReadRecord) -> list[str]:
    """The read check's notes for this read's reply: an unresolved gate said at an earlier read is not said again
    (a played run was told the same unresolved gate at each of its 8 reads); what is said is stored with the read.
    Flags and clamps are said at every read: each is this read's."""
    said = {u for t in tables.values() for r in (t or {}).get("reads") or [] for u in r.get("unresolved") or []}
    new = [u for u in check.unresolved if u not in said]
    if new:
        record["unresolved"] = new
    return replace(check, unresolved=new).notes()


def derive(args: Derive, *, tables: dict[str, TableRecord], schema: tuple[str, ...], step: int) -> Written:
    into = check_name(args.into)
    result = run_query(tables, args.sql)
    if into == ANSWER:
        lookup = {c.casefold(): c for c in result.columns}
        missing = [c for c in schema if c.casefold() not in lookup]
        if missing:
            raise WorkspaceError(f"the answer needs the columns {list(schema)}; missing {missing} "
                                 f"(got {result.columns}); name them with AS \"...\"")
    table = derived_table(into, args.sql, result, step)
    shown = "\n".join(show_rows(table["columns"], table["rows"], budget=DERIVED_CHARS))
    return Written(f"derived {into}: {len(result.rows)} row(s) from {result.inputs or 'no table'}\n{shown}",
                   [], {into: table})


def discard_from(args: DiscardRows, table: TableRecord) -> tuple[TableRecord, int]:
    """discard_rows on a table: where (cell values) / from_step (an evidence row's read step) / all_rows."""
    derived = table["derived"]

    def goes(row: Any) -> bool:
        if args.all_rows:
            return True
        if args.from_step is None and not args.where:
            return False
        if args.from_step is not None and (None if derived else row["provenance"]["step"]) != args.from_step:
            return False
        cells = row if derived else row["values"]
        return all(cell_text(cells.get(k)).casefold() == v.casefold() for k, v in args.where.items())

    kept = [r for r in table["rows"] if not goes(r)]
    steps = set() if derived else {r["provenance"]["step"] for r in kept}
    reads = [r for r in table["reads"] if r["step"] in steps]  # a read whose rows are all gone no longer counts
    return TableRecord(**{**table, "rows": kept, "reads": reads}), len(table["rows"]) - len(kept)


def discard(args: DiscardRows, tables: dict[str, TableRecord]) -> Written:
    """discard_rows: the rows of one table (the answer by default) go, and the reads left with no row."""
    table = tables.get(args.table)
    if table is None:
        return Written(f"no table {args.table!r}", [], {})
    kept, _ = discard_from(args, table)
    if table["derived"]:
        before, after = len(table["rows"]), len(kept["rows"])
    else:  # the rows a read of 0 rows left are not counted: they hold no values
        before, after = len(read_rows(table)), len(read_rows(kept))
    where = "" if args.table == ANSWER else f" of {args.table}"
    return Written(f"discarded {before - after} row(s){where}; {after} left", [], {args.table: kept})


def compose_answer(tables: dict[str, TableRecord] | None, spec: OutputSpec, order_by: list[str]) -> tuple[str, int]:
    """The answer text and its row count: the `answer` table, derived (in its SQL order) or extracted."""
    derived = derived_answer(tables)
    if derived is not None:
        return compose_derived(derived, spec, order_by), len(derived["rows"])
    rows = read_rows(extracted_answer(tables))
    return compose([{c: r["values"].get(c) or "" for c in spec.columns} for r in rows], spec, order_by), len(rows)


def compose_derived(table: TableRecord, spec: OutputSpec, order_by: list[str]) -> str:
    """A derived answer in the task's format: its SQL order, unless `finish` gave order_by."""
    lookup = {c.casefold(): c for c in table["columns"]}
    return compose([{c: cell_text(row.get(lookup.get(c.casefold(), c))) for c in spec.columns}
                    for row in table["rows"]], spec, order_by)


def error_parts(exc: Exception, tables: dict[str, TableRecord]) -> tuple[str, str | None]:
    """An error for the model: its message, which may quote page values (an engine error quotes a cell), and the
    evidence tables' schemas to follow it (the agent's own words, never marked as page text), or None."""
    if isinstance(exc, ExtractionError | FactError):
        return str(exc), None
    if isinstance(exc, WorkspaceError):
        return exc.message, f"{SCHEMAS_HEAD}\n{schemas(tables) if exc.schemas is None else exc.schemas}"
    return str(exc), f"{SCHEMAS_HEAD}\n{schemas(tables)}"


def error_text(exc: Exception, tables: dict[str, TableRecord]) -> str:
    message, shown = error_parts(exc, tables)
    return message if shown is None else f"{message}\n{shown}"

