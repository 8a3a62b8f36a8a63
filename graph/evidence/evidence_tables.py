"""The evidence workspace: named tables of what the agent read (with provenance columns) and read-only SQL
over them in a locked-down DuckDB, run in its own short-lived process (graph/evidence/sql_sandbox.py).

Tables live in the graph state as plain JSON (so a checkpointed run resumes); each `derive` loads them into
a fresh in-memory database, runs ONE `SELECT`/`WITH` statement with a time limit, a memory ceiling and caps
on the result's rows and bytes, and stores the result as a new table that remembers its SQL and its input
tables (the lineage the verifier and the reports follow back to the page state each input was read in).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from graph.evidence.sql_sandbox import memory_message, table_payload
from graph.state import EvidenceRow, ReadRecord

ANSWER = "answer"  # the table the answer is: extract_rows without `into` appends to it, derive may replace it
TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
QUERY_SECONDS = 5.0
MAX_RESULT_ROWS = 5000
LINEAGE_MAX_ROWS = 2000  # rows of a list table followed one by one (one engine run per row and query, ~3 ms)
MAX_RESULT_BYTES = 4 * 2**20  # text of a derived table; it lives in the graph state and every checkpoint
STARTUP_SECONDS = 10.0  # the engine process's start-up, on a busy machine, before its own time limit runs
_SANDBOX = Path(__file__).with_name("sql_sandbox.py")
_SANDBOX_ENV = {"LC_ALL": "C.UTF-8"}  # nothing of ours (no keys) reaches the engine process


class TableRecord(TypedDict):
    """One evidence or derived table. An evidence table's rows are `EvidenceRow`s (cells as read, typed
    provenance); a derived table's rows are the cells its SQL wrote, and it holds its SQL, inputs and types."""

    name: str
    columns: list[str]  # value columns (derived: every result column)
    rows: list[Any]  # EvidenceRow (evidence) | dict[str, Any] (derived)
    derived: bool
    sql: str | None
    inputs: list[str]
    types: list[str]
    reads: list[ReadRecord]
    steps: list[int]  # steps that wrote it


SCHEMAS_HEAD = "Tables:"


class WorkspaceError(ValueError):
    """A bad table name or query; the message (with the tables' schemas) goes back to the model. `schemas`: the
    tables' schemas the error shows after its own message (an engine error), as data: the message may quote page
    values, the schemas are the agent's own words."""

    def __init__(self, message: str, *, schemas: str | None = None) -> None:
        super().__init__(message if schemas is None else f"{message}\n{SCHEMAS_HEAD}\n{schemas}")
        self.message = message
        self.schemas = schemas


@dataclass
class QueryResult:
    columns: list[str]
    types: list[str]
    rows: list[dict[str, Any]]
    inputs: list[str]


def check_name(name: str) -> str:
    if not TABLE_NAME.match(name or ""):
        raise WorkspaceError(f"table/column name {name!r} must match [a-z][a-z0-9_]* (lower case, digits, _)")
    return name


def engine_row(row: EvidenceRow) -> dict[str, Any]:
    """An evidence row as the query engine loads it: its cells plus the provenance columns. The one place the
    typed provenance becomes `_state` (JSON) and `_drift` (comma-joined) text, for SQL that filters on them."""
    prov = row["provenance"]
    return {**row["values"], "_url": prov["url"], "_step": prov["step"], "_page": prov["page"],
            "_pages": prov["pages"], "_locator": prov["locator"],
            "_state": json.dumps(prov["state"], sort_keys=True) if prov["state"] is not None else None,
            "_drift": ",".join(prov["drift"]), "_empty": bool(row.get("empty"))}


def engine_rows(table: TableRecord) -> list[dict[str, Any]]:
    """A table's rows as the engine loads them (a derived table's are already plain cells)."""
    return table["rows"] if table["derived"] else [engine_row(r) for r in table["rows"]]


def read_rows(table: TableRecord | None) -> list[EvidenceRow]:
    """An evidence table's rows that hold values: without the rows reads of 0 rows left."""
    return [r for r in table["rows"] if not r.get("empty")] if table else []


def derived_answer(tables: dict[str, TableRecord] | None) -> TableRecord | None:
    """The `answer` table when `derive` wrote it (its SQL is the answer)."""
    table = (tables or {}).get(ANSWER)
    return table if table and table["derived"] else None


def extracted_answer(tables: dict[str, TableRecord] | None) -> TableRecord | None:
    """The `answer` table when extract_rows wrote it (its rows are the answer)."""
    table = (tables or {}).get(ANSWER)
    return table if table and not table["derived"] else None


def workspace_tables(tables: dict[str, TableRecord] | None) -> dict[str, TableRecord]:
    """The tables the agent built to derive from: all but the answer rows extract_rows collected (the turn shows
    those as the answer's rows; `derive` is offered, and the tables listed, only for these)."""
    return {name: t for name, t in (tables or {}).items() if name != ANSWER or t["derived"]}


def new_table(name: str, columns: list[str]) -> TableRecord:
    return TableRecord(name=name, columns=list(columns), rows=[], derived=False, sql=None, inputs=[],
                       types=["VARCHAR"] * len(columns), reads=[], steps=[])


def append_rows(table: TableRecord | None, name: str, columns: list[str], rows: list[EvidenceRow],
                record: ReadRecord | None, step: int) -> TableRecord:
    """Rows appended to an evidence table (a new one if absent or derived); new columns widen it."""
    base = new_table(name, []) if table is None or table["derived"] else table
    merged = list(base["columns"]) + [c for c in columns if c not in base["columns"]]
    return TableRecord(**{**base, "columns": merged, "types": ["VARCHAR"] * len(merged),
                          "rows": [*base["rows"], *rows], "reads": [*base["reads"], *([record] if record else [])],
                          "steps": [*base["steps"], step]})


def schemas(tables: dict[str, TableRecord]) -> str:
    """One line per table: name(columns) and row count, for error messages and the actor's turn."""
    if not tables:
        return "no evidence tables yet"
    lines = []
    for name, table in tables.items():
        cols = ", ".join(f"{c} {t}" if t != "VARCHAR" else c for c, t in zip(table["columns"], table["types"],
                                                                              strict=False))
        kind = " derived" if table["derived"] else ""
        lines.append(f"{name}({cols}){kind}: {len(table['rows'])} row(s)")
    return "\n".join(lines)


def run_query(tables: dict[str, TableRecord], sql: str, *, seconds: float = QUERY_SECONDS,
              max_rows: int = MAX_RESULT_ROWS, max_bytes: int = MAX_RESULT_BYTES) -> QueryResult:
    """Run one read-only query over the tables in the engine's own process (graph/evidence/sql_sandbox.py: memory
    ceiling, time limit, row and byte caps measured before anything is fetched); errors carry the engine's
    message and the schemas."""
    reply = _sandbox(tables, {"sql": sql, "max_rows": max_rows, "max_bytes": max_bytes}, seconds)
    return QueryResult(columns=reply["columns"], types=reply["types"], rows=reply["rows"], inputs=reply["inputs"])


def rows_used(tables: dict[str, TableRecord], name: str, queries: list[str], *,
              seconds: float = QUERY_SECONDS) -> list[int]:
    """The indexes of the rows of table `name` the read-only `queries` (over that table alone) use: those whose
    removal changes some query's result, found in the engine's own process (sql_sandbox.execute_lineage), at
    most LINEAGE_MAX_ROWS rows, within `seconds`."""
    reply = _sandbox(tables, {"lineage": {"table": name, "queries": queries, "max_rows": LINEAGE_MAX_ROWS}},
                     seconds)
    return [int(row) for row in reply["used"]]


def _sandbox(tables: dict[str, TableRecord], request: dict[str, Any], seconds: float) -> dict[str, Any]:
    """One request to the engine process (graph/evidence/sql_sandbox.py) over `tables`; its reply, or the
    WorkspaceError it ends in."""
    payloads = {name: table_payload({**table, "rows": engine_rows(table)}) for name, table in tables.items()}
    text = json.dumps({**request, "tables": payloads, "seconds": seconds})
    try:
        done = subprocess.run([sys.executable, "-I", str(_SANDBOX)], input=text.encode(), capture_output=True,
                              timeout=seconds + STARTUP_SECONDS, check=False, env=_SANDBOX_ENV,
                              cwd="/")  # no working directory of ours for the engine to show
    except subprocess.TimeoutExpired as exc:  # the engine did not stop itself: the process was killed
        raise WorkspaceError(f"the query ran longer than {seconds:g}s and was stopped; simplify it") from exc
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):  # it died: a signal is its memory ceiling (an allocation failed: abort)
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:300]
        if done.returncode < 0 or "memory" in last.lower() or "bad_alloc" in last:
            raise WorkspaceError(f"{memory_message()} (engine process exit status {done.returncode})")
        raise WorkspaceError(f"the query engine failed (exit status {done.returncode}): {last}")
    if "error" in reply:
        shown = schemas(tables) if reply.get("kind") in ("engine", "tables") else None
        raise WorkspaceError(reply["error"], schemas=shown)
    return reply


def derived_table(name: str, sql: str, result: QueryResult, step: int) -> TableRecord:
    return TableRecord(name=name, columns=result.columns, rows=result.rows, derived=True, sql=sql,
                       inputs=result.inputs, types=result.types, reads=[], steps=[step])


def cell_text(value: Any) -> str:
    """A derived value as answer text: NULL -> '', 2.0 -> '2', other floats shortest-exact."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, list):
        return ", ".join(cell_text(v) for v in value)
    return str(value)


def computed_from(tables: dict[str, Any], name: str = ANSWER) -> list[str]:
    """Every table `name` was computed from, derived or read, followed back through derived ones: its own inputs
    first, then theirs, each table once (the one walk of a lineage every check uses)."""
    found: list[str] = []
    todo = [name]
    while todo:
        table = tables.get(todo.pop(0))
        for source in table["inputs"] if table else []:
            if source not in found and source != name:
                found.append(source)
                todo.append(source)
    return found


def evidence_inputs(tables: dict[str, Any], name: str = ANSWER) -> list[str]:
    """The evidence (read) tables a derived table was computed from."""
    return [n for n in computed_from(tables, name) if n in tables and not tables[n]["derived"]]


def lineage(tables: dict[str, TableRecord], name: str = ANSWER, _seen: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """How a derived table came to be: its SQL and, for every table it read (followed back through derived
    ones), where, when and in which retrieval state those rows were read. None if `name` is not derived."""
    table = tables.get(name)
    if table is None or not table["derived"] or name in _seen:  # `answer` derived from the rows it replaced
        return None
    inputs = []
    for source in table["inputs"]:
        used = tables.get(source)
        if used is None:
            inputs.append({"table": source, "missing": True})
        elif used["derived"]:
            inputs.append({"table": source, "derived": lineage(tables, source, _seen | {name})})
        else:
            rows: list[EvidenceRow] = used["rows"]
            urls = list(dict.fromkeys(r["provenance"]["url"] or "" for r in rows))
            states = list(dict.fromkeys(json.dumps(r["provenance"]["state"], sort_keys=True) for r in rows))
            inputs.append({
                "table": source, "rows": len(rows), "columns": used["columns"], "steps": used["steps"],
                "urls": urls[:10], "url_count": len(urls),
                "states": [_shown_state(json.loads(s)) for s in states[:5]], "state_count": len(states),
                "clamps": _clamps(rows), "empty_reads": sum(1 for r in rows if r.get("empty")),
                "pages_read": [{"result_set": r["result_set"], "pages": r["pages"], "covered": r["pages_covered"],
                                "complete": r["complete"]} for r in used["reads"]][:20],
                "drifted_rows": sum(1 for r in rows if r["provenance"]["drift"]),
            })
    return {"table": name, "sql": table["sql"], "rows": len(table["rows"]), "columns": table["columns"],
            "step": table["steps"][-1] if table["steps"] else None, "inputs": inputs}


def _shown_state(snapshot: dict[str, Any] | None) -> dict[str, str] | None:
    """A row's state snapshot as label -> value (set values only), for reports."""
    if snapshot is None:
        return None
    shown: dict[str, str] = {}
    for key, entry in snapshot.items():
        label, value = (entry.get("label") or key, entry.get("value")) if isinstance(entry, dict) else (key, entry)
        if value:
            shown[label] = value
    return shown


def _clamps(rows: list[EvidenceRow]) -> list[str]:
    """Planned values the pages could not show, with the page's evidence, once each."""
    found: list[str] = []
    for row in rows:
        for key, entry in (row["provenance"]["state"] or {}).items():
            if isinstance(entry, dict) and entry.get("clamped"):
                clamp = entry["clamped"]
                text = (f"{entry.get('label') or key} = {entry.get('value')!r} for the plan's {clamp['planned']!r}: "
                        f"{clamp['evidence']}")
                if text not in found:
                    found.append(text)
    return found[:10]
