"""The `derive` engine, run as its own short-lived process: one read-only SELECT over the evidence tables in
a locked-down, in-memory DuckDB, under a hard memory ceiling.

Why a process: DuckDB's `memory_limit` bounds its buffer-managed memory only; string functions allocate
their results outside it (`strlen(repeat('a', 1e9))` grows the process by ~2 GB with nothing fetched), so
the only real bound is the operating system's, on a process that holds nothing else (`RLIMIT_DATA`). Such a
process also dies whole when it overruns, and the caller can kill it after its time limit.

Protocol: a JSON request on stdin (`tables`: name -> `table_payload`, `sql`, `seconds`, `max_rows`,
`max_bytes`), one JSON reply on stdout: `{"columns", "types", "rows", "inputs"}` or `{"error", "kind"}`. A
request with `lineage` (`table`, `queries`, `max_rows`) instead asks which rows of that table the queries use
(`execute_lineage`): the reply is `{"used": [row indexes]}`. Runs as
a plain script (`python -I graph/evidence/sql_sandbox.py`): it imports only the standard library and duckdb, never the
project.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import resource
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import duckdb

ENGINE_MEMORY_MB = 256  # DuckDB's own limit (buffer-managed memory: tables, sorts, hash joins)
PROCESS_DATA_MB = 320  # the process's hard ceiling: the engine's limit plus what Python and DuckDB need to run
LOAD_CHUNK_ROWS = 2000  # rows parsed per statement while loading (the JSON parse is not memory-limited)
LINEAGE_ROWS = "__list_rows"  # the list table's rows under lineage, seen through a view of its name
RESULT = "__result"  # where the query's rows are materialised inside the engine; table names never start with _
PROVENANCE_COLUMNS: dict[str, str] = {
    "_url": "VARCHAR", "_step": "INTEGER", "_page": "INTEGER", "_pages": "INTEGER",
    "_locator": "VARCHAR", "_state": "VARCHAR", "_drift": "VARCHAR", "_empty": "BOOLEAN",
}
_LOADABLE_TYPES = re.compile(r"^(VARCHAR|BIGINT|INTEGER|HUGEINT|SMALLINT|TINYINT|UBIGINT|UINTEGER|DOUBLE|FLOAT|"
                             r"BOOLEAN|DATE|DECIMAL\(\d+,\d+\))$")

# Helpers real pages need; documented in the derive tool and docs/evidence_workspace.md.
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


# the engine's own catalogue and settings (duckdb_settings() shows the host's paths, getenv() its environment)
_ENGINE_INTROSPECTION = re.compile(r'(?i)(?<![\w$])"?(duckdb_\w+|current_setting|getenv|pragma_\w+|which_secret|'
                                   r'version|current_database|current_schema|current_user)"?\s*\(')
# what a query may read besides the evidence tables and its own CTEs: table functions that make values, never
# ones that read the catalogue, a file or another query's text (`query('...')`, `query_table('pg_settings')`)
TABLE_FUNCTIONS = frozenset({"unnest", "range", "generate_series", "json_each", "json_tree"})


class Refused(ValueError):
    """The query is not allowed or its result is too big; `kind` says which, the message says why."""

    def __init__(self, message: str, kind: str = "refused") -> None:
        super().__init__(message)
        self.kind = kind


def quote_ident(name: str) -> str:
    """`name` as a DuckDB quoted identifier: whatever it holds, it stays one name."""
    return '"' + name.replace('"', '""') + '"'


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={
        "enable_external_access": False, "autoinstall_known_extensions": False,
        "autoload_known_extensions": False, "threads": 1, "memory_limit": f"{ENGINE_MEMORY_MB}MB",
        "temp_directory": "",  # no spilling to disk: over the limit is an error, not a growing .tmp folder
        "lock_configuration": True,
    })
    for macro in _MACROS:
        con.execute(macro)
    return con


def check_select(con: duckdb.DuckDBPyConnection, sql: str, tables: Iterable[str] = ()) -> None:
    """Exactly one SELECT / WITH ... SELECT, checked by DuckDB's parser before anything runs, that reads only
    `tables` (the evidence tables), its own CTEs and `TABLE_FUNCTIONS`: the engine's catalogue
    (`pg_catalog.pg_settings`, `information_schema`, `duckdb_settings()`) shows the host's paths."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise Refused(f"SQL does not parse: {exc}") from exc
    if len(statements) != 1:
        raise Refused(f"give exactly one SELECT statement (got {len(statements)})")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise Refused(f"only SELECT / WITH ... SELECT is allowed, not {kind.name}")
    if found := _ENGINE_INTROSPECTION.search(sql):
        raise Refused(f"{found.group(1)}() describes the engine and its host, not the evidence tables; "
                      "query the tables only")
    read_tables, functions, ctes = _reads(con, sql)
    allowed = (f"a query reads only the evidence tables ({', '.join(sorted(tables)) or 'none yet'}), its own WITH "
               f"tables and {', '.join(f'{f}()' for f in sorted(TABLE_FUNCTIONS))} to make values")
    for catalog, schema, name in read_tables:
        if name.casefold() in {cte.casefold() for cte in ctes} and not (catalog or schema):
            continue
        if name not in tables or catalog not in ("", "memory") or schema not in ("", "main"):
            raise Refused(f"no evidence table {'.'.join(p for p in (catalog, schema, name) if p)!r}: {allowed}",
                          "tables")
    for function in functions:
        if function.casefold() not in TABLE_FUNCTIONS:
            raise Refused(f"the table function {function}() is not allowed: {allowed}")


def parse_nodes(tree: Any, *, skip: frozenset[str] = frozenset(),
                prune: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[dict[str, Any]]:
    """Every node (dict) of a DuckDB parse tree (`json_serialize_sql`), depth first, parents before children: the
    one walker of parse trees (the derive checks here, the list-row check in graph/checks/list_filters.py). Not
    below the keys in `skip`, nor below a node `prune` stops at (that node itself is yielded). A loop, not
    recursion: a deeply nested query cannot exhaust the stack."""
    todo: list[Any] = [tree]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(reversed(item))
            continue
        if not isinstance(item, dict):
            continue
        yield item
        if prune is None or not prune(item):
            todo.extend(reversed([value for key, value in item.items() if key not in skip]))


def _reads(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[tuple[str, str, str]], list[str], list[str]]:
    """Every table a SELECT names (catalog, schema, name), every table function it calls, every CTE it defines,
    from DuckDB's own parse tree (subqueries, joins, set operations and CTE bodies included)."""
    [(text,)] = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()
    tree = json.loads(text)
    if tree.get("error"):
        raise Refused(f"SQL does not parse: {tree.get('error_message')}")
    tables: list[tuple[str, str, str]] = []
    functions: list[str] = []
    ctes: list[str] = []
    for node in parse_nodes(tree):
        if node.get("type") == "BASE_TABLE":
            tables.append((node.get("catalog_name") or "", node.get("schema_name") or "", node.get("table_name") or ""))
        elif node.get("type") == "TABLE_FUNCTION" and isinstance(node.get("function"), dict):
            functions.append(str(node["function"].get("function_name") or ""))
        if isinstance(node.get("cte_map"), dict):
            ctes += [str(entry.get("key")) for entry in node["cte_map"].get("map") or []]
    return tables, functions, ctes


def check_columns(columns: list[str]) -> None:
    """Result column names become table columns later: no quotes or control characters, and distinct as
    DuckDB sees them (case-insensitively)."""
    for column in columns:
        if not column.strip() or any(c == '"' or unicodedata.category(c).startswith("C") for c in column):
            raise Refused(f"result column name {column!r} may not be empty or contain a double quote or a control "
                          "character; name it with AS")
    folded = [c.casefold() for c in columns]
    if len(set(folded)) != len(folded):
        raise Refused(f"result columns must have distinct names (case does not count), got {columns}; use AS")


def table_payload(table: dict[str, Any]) -> dict[str, Any]:
    """A workspace table as the engine loads it: typed columns (provenance columns for evidence) and its rows
    as JSON texts of value lists, a chunk at a time, so the engine process never holds them as Python
    objects and parses only one chunk at once."""
    columns: dict[str, str] = {}
    for column, kind in zip(table["columns"], table["types"], strict=False):
        columns[column] = kind if _LOADABLE_TYPES.match(kind) else "VARCHAR"
    if not table["derived"]:
        columns.update(PROVENANCE_COLUMNS)
    rows = table["rows"]
    return {"columns": list(columns.items()),
            "chunks": [json.dumps([[_loadable(row.get(c)) for c in columns] for row in rows[i:i + LOAD_CHUNK_ROWS]])
                       for i in range(0, len(rows), LOAD_CHUNK_ROWS)]}


def _loadable(value: Any) -> Any:
    """A stored value as the text or number the engine casts: nested data as JSON text, NaN/inf as words."""
    if isinstance(value, list | dict):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def load(con: duckdb.DuckDBPyConnection, name: str, payload: dict[str, Any], deadline: float) -> None:
    """One table into the engine: every name a quoted identifier, the rows JSON parameters cast column by
    column, one interruptible statement per chunk."""
    table = quote_ident(name)
    con.execute(f"CREATE TABLE {table} ({', '.join(f'{quote_ident(c)} {k}' for c, k in payload['columns'])})")
    paths = ", ".join(f"'$[{i}]'" for i in range(len(payload["columns"])))
    casts = ", ".join(f"CAST(v[{i}] AS {kind})" for i, (_, kind) in enumerate(payload["columns"], start=1))
    insert = (f"INSERT INTO {table} SELECT {casts} FROM (SELECT json_extract_string(r, [{paths}]) AS v "
              "FROM (SELECT unnest(CAST(? AS JSON[])) AS r))")
    for chunk in payload["chunks"]:
        _in_time(deadline)
        con.execute(insert, [chunk])


def plain(value: Any) -> Any:
    """A DuckDB result value as JSON-friendly data (state is checkpointed as JSON)."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # UUID, INTERVAL (timedelta), anything else the engine returns: as DuckDB prints it


def _referenced(con: duckdb.DuckDBPyConnection, sql: str, tables: dict[str, Any]) -> list[str]:
    try:
        names = {n.split(".")[-1].strip('"') for n in con.get_table_names(sql)}
    except duckdb.Error:  # e.g. a refused file function: the engine's own error comes when it runs
        names = {n for n in tables if re.search(rf"\b{re.escape(n)}\b", sql)}
    return [name for name in tables if name in names]


def _result_size(con: duckdb.DuckDBPyConnection, columns: list[str]) -> tuple[int, int]:
    """Rows and text bytes of the materialised result, measured by the engine before anything is fetched."""
    lengths = " + ".join(f"coalesce(strlen(CAST({quote_ident(c)} AS VARCHAR)), 0)" for c in columns) or "0"
    rows, size = con.execute(f"SELECT count(*), coalesce(sum({lengths}), 0) FROM {RESULT}").fetchone()
    return int(rows), int(size)


def execute(con: duckdb.DuckDBPyConnection, request: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Load the tables the query names, run it into the engine's own result table, measure it, fetch it.
    The timer interrupts a running statement; `deadline` catches the time spent between statements."""
    sql, tables = request["sql"], request["tables"]
    max_rows, max_bytes = request["max_rows"], request["max_bytes"]
    check_select(con, sql, tables)
    inputs = _referenced(con, sql, tables)
    for name in inputs:
        load(con, name, tables[name], deadline)
    _in_time(deadline)
    relation = con.sql(sql)
    check_columns(relation.columns)
    relation.limit(max_rows + 1).create(RESULT)
    rows, size = _result_size(con, relation.columns)
    if rows > max_rows:
        raise Refused(f"the result has more than {max_rows} rows; aggregate or filter it", "too_big")
    if size > max_bytes:
        raise Refused(f"the result holds {size:,} bytes of text, more than the {max_bytes:,} allowed; "
                      "select fewer or shorter values", "too_big")
    _in_time(deadline)
    cursor = con.execute(f"SELECT * FROM {RESULT}")
    fetched = cursor.fetchall()
    description = cursor.description or []
    columns = [d[0] for d in description]
    return {"columns": columns, "types": [str(d[1]) for d in description], "inputs": inputs,
            "rows": [{c: plain(v) for c, v in zip(columns, row, strict=True)} for row in fetched]}


def execute_lineage(con: duckdb.DuckDBPyConnection, request: dict[str, Any], deadline: float) -> dict[str, Any]:
    """The rows of one table the queries use, by leaving each out in turn: the table is seen through a view
    without row `sgr_drop`, and a row is used when some query's result without it differs from its whole result
    (as a multiset, by its row count and the sum of its rows' hashes: a duplicate row counts). One run per row
    and query, so the table's rows are capped (`max_rows`) and the time limit covers them all."""
    lineage, tables = request["lineage"], request["tables"]
    name, queries = lineage["table"], lineage["queries"]
    for sql in queries:
        check_select(con, sql, [name])
    load(con, name, tables[name], deadline)
    rows = int(con.execute(f"SELECT count(*) FROM {quote_ident(name)}").fetchone()[0])
    if rows > lineage["max_rows"]:
        raise Refused(f"the table has more than {lineage['max_rows']} rows to follow one by one", "too_big")
    con.execute(f"ALTER TABLE {quote_ident(name)} RENAME TO {LINEAGE_ROWS}")
    con.execute(f"CREATE VIEW {quote_ident(name)} AS SELECT * FROM {LINEAGE_ROWS} "
                "WHERE rowid IS DISTINCT FROM getvariable('sgr_drop')")
    prints = [f"SELECT count(*), sum(hash(__r)::HUGEINT) FROM ({sql}) AS __r" for sql in queries]
    whole = [con.execute(check).fetchone() for check in prints]
    used: list[int] = []
    for row in range(rows):
        _in_time(deadline)
        con.execute(f"SET VARIABLE sgr_drop = {row}")
        if any(con.execute(check).fetchone() != before for check, before in zip(prints, whole, strict=True)):
            used.append(row)
    return {"used": used}


def _in_time(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise duckdb.InterruptException("over the time limit between statements")


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The reply for one request; every failure is a message with its kind, never a traceback."""
    seconds = float(request["seconds"])
    con = connect()
    timer = threading.Timer(seconds, con.interrupt)
    timer.start()  # loading the tables counts against the time limit too
    try:
        run = execute_lineage if "lineage" in request else execute
        return run(con, request, time.monotonic() + seconds)
    except Refused as exc:
        return {"error": str(exc), "kind": exc.kind}
    except duckdb.InterruptException:
        return {"error": f"the query ran longer than {seconds:g}s and was stopped; simplify it", "kind": "timeout"}
    except (duckdb.OutOfMemoryException, MemoryError):
        return {"error": memory_message(), "kind": "memory"}
    except duckdb.Error as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "kind": "engine"}
    finally:
        timer.cancel()
        con.close()


def memory_message() -> str:
    return (f"the query needed more than its {ENGINE_MEMORY_MB} MB of memory and was stopped; "
            "build shorter values or fewer rows")


def main() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (PROCESS_DATA_MB * 2**20, PROCESS_DATA_MB * 2**20))
    try:
        reply = answer(json.loads(sys.stdin.buffer.read()))
    except MemoryError:
        reply = {"error": memory_message(), "kind": "memory"}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
