"""The evidence workspace: named tables of what the agent read (with provenance columns) and read-only SQL
over them in an in-process, locked-down DuckDB.

Tables live in the graph state as plain JSON (so a checkpointed run resumes); each `derive` loads them into
a fresh in-memory database, runs ONE `SELECT`/`WITH` statement with a time limit and a row cap, and stores
the result as a new table that remembers its SQL and its input tables (the lineage the verifier and the
reports follow back to the page state each input was read in).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, TypedDict

import duckdb

from graph.state import EvidenceRow, ReadRecord

TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
PROVENANCE_COLUMNS: dict[str, str] = {
    "_url": "VARCHAR", "_step": "INTEGER", "_page": "INTEGER", "_pages": "INTEGER",
    "_locator": "VARCHAR", "_state": "VARCHAR", "_drift": "VARCHAR", "_empty": "BOOLEAN",
}
QUERY_SECONDS = 5.0
MAX_RESULT_ROWS = 5000
_LOADABLE_TYPES = re.compile(r"^(VARCHAR|BIGINT|INTEGER|HUGEINT|SMALLINT|TINYINT|UBIGINT|UINTEGER|DOUBLE|FLOAT|"
                             r"BOOLEAN|DATE|DECIMAL\(\d+,\d+\))$")

# Helpers real pages need; documented in the derive tool and graph/README.md.
_MACROS = (
    r"""CREATE MACRO num(t) AS TRY_CAST(NULLIF(replace(regexp_extract(replace(CAST(t AS VARCHAR), '−', '-'),
        '-?[0-9][0-9,]*(\.[0-9]+)?|-?\.[0-9]+', 0), ',', ''), '') AS DOUBLE)""",
    r"""CREATE MACRO iso_date(t) AS strftime(CASE
        WHEN regexp_matches(CAST(t AS VARCHAR), '^\s*\d{4}[-/]\d{1,2}[-/]\d{1,2}')
        THEN TRY_STRPTIME(replace(regexp_extract(CAST(t AS VARCHAR), '\d{4}[-/]\d{1,2}[-/]\d{1,2}', 0), '/', '-'),
                          '%Y-%m-%d')
        ELSE TRY_STRPTIME(trim(regexp_replace(CAST(t AS VARCHAR), '(\d)(st|nd|rd|th)\b', '\1')),
                          ['%d %b %Y', '%d %B %Y', '%B %d, %Y', '%b %d, %Y', '%b. %d, %Y', '%B %d %Y', '%b %d %Y',
                           '%a, %d %b %Y %H:%M:%S %Z', '%a, %d %b %Y %H:%M:%S', '%d %b %Y %H:%M', '%d/%m/%Y',
                           '%d.%m.%Y', '%B %Y', '%b %Y'])
        END, '%Y-%m-%d')""",
    r"""CREATE MACRO year_of(t) AS COALESCE(year(TRY_STRPTIME(iso_date(t), '%Y-%m-%d')),
        TRY_CAST(regexp_extract(CAST(t AS VARCHAR), '\b(1[0-9]{3}|2[0-9]{3})\b', 1) AS INTEGER))""",
)


class TableRecord(TypedDict):
    """One evidence or derived table. Evidence rows hold their value columns (text, as read) and the
    provenance columns; a derived table holds its SQL, its inputs and its column types."""

    name: str
    columns: list[str]  # value columns (derived: every result column)
    rows: list[dict[str, Any]]
    derived: bool
    sql: str | None
    inputs: list[str]
    types: list[str]
    reads: list[ReadRecord]
    steps: list[int]  # steps that wrote it


class WorkspaceError(ValueError):
    """A bad table name or query; the message (with the tables' schemas) goes back to the model."""


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


def evidence_rows(rows: list[EvidenceRow]) -> list[dict[str, Any]]:
    """Extracted rows (values + Provenance) as workspace rows with the provenance columns."""
    out = []
    for row in rows:
        prov = row["provenance"]
        out.append({**row["values"], "_url": prov["url"], "_step": prov["step"], "_page": prov["page"],
                    "_pages": prov["pages"], "_locator": prov["locator"],
                    "_state": json.dumps(prov["state"], sort_keys=True) if prov["state"] is not None else None,
                    "_drift": ",".join(prov["drift"]), "_empty": False})
    return out


def new_table(name: str, columns: list[str]) -> TableRecord:
    return TableRecord(name=name, columns=list(columns), rows=[], derived=False, sql=None, inputs=[],
                       types=["VARCHAR"] * len(columns), reads=[], steps=[])


def append_rows(table: TableRecord | None, name: str, columns: list[str], rows: list[dict[str, Any]],
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


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={
        "enable_external_access": False, "autoinstall_known_extensions": False,
        "autoload_known_extensions": False, "threads": 1, "memory_limit": "256MB", "lock_configuration": True,
    })
    for macro in _MACROS:
        con.execute(macro)
    return con


def _load(con: duckdb.DuckDBPyConnection, table: TableRecord) -> None:
    columns: dict[str, str] = {}
    for column, kind in zip(table["columns"], table["types"], strict=False):
        columns[column] = kind if _LOADABLE_TYPES.match(kind) else "VARCHAR"
    if not table["derived"]:
        columns.update(PROVENANCE_COLUMNS)
    ddl = ", ".join(f'"{c}" {t}' for c, t in columns.items())
    con.execute(f'CREATE TABLE "{table["name"]}" ({ddl})')
    if table["rows"]:
        marks = ", ".join("?" for _ in columns)
        con.executemany(f'INSERT INTO "{table["name"]}" VALUES ({marks})',
                        [[_loadable(row.get(c)) for c in columns] for row in table["rows"]])


def _loadable(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list | dict) else value


def _plain(value: Any) -> Any:
    """A DuckDB result value as JSON-friendly data (state is checkpointed as JSON)."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def check_select(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Exactly one SELECT / WITH ... SELECT, checked by DuckDB's parser before anything runs."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise WorkspaceError(f"SQL does not parse: {exc}") from exc
    if len(statements) != 1:
        raise WorkspaceError(f"give exactly one SELECT statement (got {len(statements)})")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise WorkspaceError(f"only SELECT / WITH ... SELECT is allowed, not {kind.name}")


def run_query(tables: dict[str, TableRecord], sql: str, *, seconds: float = QUERY_SECONDS,
              max_rows: int = MAX_RESULT_ROWS) -> QueryResult:
    """Run one read-only query over the tables; errors carry the engine's message and the schemas."""
    con = _connect()
    try:
        check_select(con, sql)
        try:
            referenced = {n.split(".")[-1].strip('"') for n in con.get_table_names(sql)}
        except duckdb.Error:  # e.g. a refused file function: the engine's own error comes when it runs
            referenced = {n for n in tables if re.search(rf"\b{n}\b", sql)}
        inputs = [name for name in tables if name in referenced]
        for name in inputs:
            _load(con, tables[name])
        timer = threading.Timer(seconds, con.interrupt)
        timer.start()
        try:
            cursor = con.execute(sql)
            fetched = cursor.fetchmany(max_rows + 1)
            description = cursor.description or []
        except duckdb.InterruptException as exc:
            raise WorkspaceError(f"the query ran longer than {seconds:g}s and was stopped; simplify it") from exc
        except duckdb.Error as exc:
            raise WorkspaceError(f"{type(exc).__name__}: {exc}\nTables:\n{schemas(tables)}") from exc
        finally:
            timer.cancel()
    finally:
        con.close()
    if len(fetched) > max_rows:
        raise WorkspaceError(f"the result has more than {max_rows} rows; aggregate or filter it")
    columns = [d[0] for d in description]
    if len(set(columns)) != len(columns):
        raise WorkspaceError(f"result columns must have distinct names, got {columns}; use AS")
    types = [str(d[1]) for d in description]
    rows = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in fetched]
    return QueryResult(columns=columns, types=types, rows=rows, inputs=inputs)


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


def preview(table: TableRecord, limit: int = 5) -> str:
    """The first rows of a table as ` | `-joined lines (value columns only)."""
    lines = [" | ".join(table["columns"])]
    lines += [" | ".join(cell_text(r.get(c)) for c in table["columns"]) for r in table["rows"][:limit]]
    if len(table["rows"]) > limit:
        lines.append(f"... {len(table['rows']) - limit} more")
    return "\n".join(lines)


def lineage(tables: dict[str, TableRecord], name: str = "answer") -> dict[str, Any] | None:
    """How a derived table came to be: its SQL and, for every table it read (followed back through derived
    ones), where, when and in which retrieval state those rows were read. None if `name` is not derived."""
    table = tables.get(name)
    if table is None or not table["derived"]:
        return None
    inputs = []
    for source in table["inputs"]:
        used = tables.get(source)
        if used is None:
            inputs.append({"table": source, "missing": True})
        elif used["derived"]:
            inputs.append({"table": source, "derived": lineage(tables, source)})
        else:
            rows = used["rows"]
            urls = list(dict.fromkeys(r.get("_url") or "" for r in rows))
            states = list(dict.fromkeys(r.get("_state") or "null" for r in rows))
            inputs.append({
                "table": source, "rows": len(rows), "columns": used["columns"], "steps": used["steps"],
                "urls": urls[:10], "url_count": len(urls),
                "states": [_shown_state(json.loads(s)) for s in states[:5]], "state_count": len(states),
                "clamps": _clamps(rows), "empty_reads": sum(1 for r in rows if r.get("_empty")),
                "pages_read": [{"result_set": r["result_set"], "pages": r["pages"], "covered": r["pages_covered"],
                                "complete": r["complete"]} for r in used["reads"]][:20],
                "drifted_rows": sum(1 for r in rows if r.get("_drift")),
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


def _clamps(rows: list[dict[str, Any]]) -> list[str]:
    """Planned values the pages could not show, with the page's evidence, once each."""
    found: list[str] = []
    for row in rows:
        for key, entry in (json.loads(row["_state"]) if row.get("_state") else {}).items():
            if isinstance(entry, dict) and entry.get("clamped"):
                clamp = entry["clamped"]
                text = (f"{entry.get('label') or key} = {entry.get('value')!r} for the plan's {clamp['planned']!r}: "
                        f"{clamp['evidence']}")
                if text not in found:
                    found.append(text)
    return found[:10]
