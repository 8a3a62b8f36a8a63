"""Which rows of a list table a derivation uses (graph/checks/details.py asks it): a listed result whose row the
derivation drops by the list's own values needs no visit to its page.

Decided from the derivation itself, by running it, not by matching one SQL shape. DuckDB's parser (in this
process: parsing runs nothing) splits each query into its *list-only parts*: the largest subqueries, CTE bodies or
whole query that read the list table and nothing else (self-joins, window functions, IN-lists, bounds taken from
other rows of the list: `lo AS (SELECT km FROM stations WHERE name = 'X')` all stay inside). Whatever else the query
does with such a part (join it with the pages read, count it), the list rows that do not reach the part's result
are dropped by the list's own values. Which rows reach it is measured, not guessed: the part is run once whole and
once without each list row (graph/evidence/evidence_tables.rows_used, in the engine's own process, bounded in rows
and time); a row whose removal changes the part's result is used. A place that reads the list table inside a
query that also reads another table uses every row, except for the WHERE conditions of that query over the list's
own columns alone (`... JOIN pages p ... WHERE s.km BETWEEN 3 AND 9`): a row failing one reaches no result row.

When the row use cannot be determined (a part that does not run alone, such as a correlated subquery; a list too
long to measure; the time limit), the answer is "unknown", never "every row": a refusal must rest on evidence.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import duckdb

from graph.evidence.evidence_tables import TableRecord, WorkspaceError, rows_used
from graph.evidence.sql_sandbox import PROVENANCE_COLUMNS, parse_nodes

CHECK_SECONDS = 30.0  # the check at finish waits longer than a derive
_QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
_NOT_CTES = frozenset({"cte_map"})  # a node's CTE bodies are read where a place names them, not where defined


@dataclass(frozen=True)
class ListReads:
    """How one query reads the list table: `every` row (a place reads it unfiltered), else through `parts` (SQL
    texts of its list-only parts; none when it never reads the table); `unknown` says why it cannot be told."""

    every: bool = False
    parts: tuple[str, ...] = ()
    unknown: str | None = None


@dataclass(frozen=True)
class RowUse:
    """The rows (indexes) of a list table a derivation uses: `kept` None means every row; `unknown` says why the
    use could not be determined (then nothing can be refused on it)."""

    kept: frozenset[int] | None = None
    unknown: str | None = None


def _is_query(node: dict[str, Any]) -> bool:
    return node.get("class") == "SUBQUERY" or node.get("type") in _QUERY_NODES


def _cte_entries(tree: Any) -> list[dict[str, Any]]:
    """Every CTE the query defines, outer ones first (a CTE may read one defined before it)."""
    return [entry for node in parse_nodes(tree) if isinstance(node.get("cte_map"), dict)
            for entry in node["cte_map"].get("map") or []]


class _Query:
    """One parsed statement, read for the places it reads `table`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, parsed: dict[str, Any], table: str, columns: list[str]) -> None:
        self.con, self.parsed, self.table = con, parsed, table.casefold()
        self.columns = {c.casefold() for c in columns}
        self.entries = _cte_entries(parsed)
        self.ctes = {str(e["key"]).casefold(): e["value"]["query_node"] for e in self.entries}
        self.parts: list[str] = []
        self.every = False
        self.seen: set[str] = set()

    def tables(self, node: Any, seen: frozenset[str] = frozenset()) -> set[str]:
        """The base tables `node` reads, through the CTEs it names."""
        found: set[str] = set()
        for item in parse_nodes(node, skip=_NOT_CTES):
            if item.get("type") != "BASE_TABLE":
                continue
            name = str(item.get("table_name", "")).casefold()
            if name in self.ctes and not item.get("schema_name"):
                found |= set() if name in seen else self.tables(self.ctes[name], seen | {name})
            else:
                found.add(name)
        return found

    def ctes_named(self, node: Any, seen: set[str] | None = None) -> set[str]:
        seen = set() if seen is None else seen
        for item in parse_nodes(node, skip=_NOT_CTES):
            name = str(item.get("table_name", "")).casefold()
            if item.get("type") == "BASE_TABLE" and name in self.ctes and name not in seen:
                seen.add(name)
                self.ctes_named(self.ctes[name], seen)
        return seen

    def part_sql(self, node: dict[str, Any]) -> str:
        """`node` as a query of its own, with the CTEs it reads."""
        needed = self.ctes_named(node)
        own = {**copy.deepcopy(node), "cte_map": {"map": [e for e in self.entries
                                                         if str(e["key"]).casefold() in needed]}}
        text = json.dumps({**self.parsed, "statements": [{"node": own, "named_param_map": []}]})
        return str(self.con.execute("SELECT json_deserialize_sql(?)", [text]).fetchone()[0])

    def visit(self, node: dict[str, Any]) -> None:
        """A query node: a list-only part, or a mix whose own places are looked at."""
        read = self.tables(node)
        if self.table not in read:
            return
        if read == {self.table}:
            self.parts.append(self.part_sql(node))
            return
        self.walk(node, node)

    def walk(self, tree: Any, owner: dict[str, Any]) -> None:
        """The places under a mixed query node `owner`, down to the query nodes nested in it."""
        if isinstance(tree, list):
            for value in tree:
                self.walk(value, owner)
            return
        if not isinstance(tree, dict):
            return
        if tree is not owner and tree.get("type") in _QUERY_NODES and "cte_map" in tree:
            self.visit(tree)
            return
        if tree.get("type") == "BASE_TABLE":
            name = str(tree.get("table_name", "")).casefold()
            if name in self.ctes and not tree.get("schema_name"):
                if name not in self.seen:
                    self.seen.add(name)
                    self.visit(self.ctes[name])
            elif name == self.table:
                self.mixed_place(tree, owner)
            return
        for key, value in tree.items():
            if key != "cte_map":
                self.walk(value, owner)

    def mixed_place(self, ref: dict[str, Any], owner: dict[str, Any]) -> None:
        """The list table read inside a query that reads other tables too: filtered only by the WHERE conditions
        over its own columns alone."""
        alias = str(ref.get("alias") or ref.get("table_name")).casefold()
        where = owner.get("where_clause") if owner.get("type") == "SELECT_NODE" else None
        conjuncts = (where.get("children") or [] if where and where.get("type") == "CONJUNCTION_AND"
                     else [where] if where else [])
        own = [c for c in conjuncts if self.list_only_condition(c, alias)]
        if not own:
            self.every = True
            return
        condition = own[0] if len(own) == 1 else {**where, "children": own}
        star = json.loads(self.con.execute("SELECT json_serialize_sql('SELECT * FROM t')").fetchone()[0])
        place = {**star["statements"][0]["node"], "from_table": copy.deepcopy(ref), "where_clause": condition}
        self.parts.append(self.part_sql(place))

    def list_only_condition(self, condition: dict[str, Any], alias: str) -> bool:
        """A condition over the list row alone: its columns the list table's (named through its alias or
        unqualified), its subqueries reading the list table or nothing (one that names another query's columns
        does not run alone: the row use is then unknown)."""
        for item in parse_nodes(condition, prune=_is_query):
            if _is_query(item):
                if not self.tables(item) <= {self.table}:
                    return False
            elif item.get("class") == "COLUMN_REF":
                names = [str(n).casefold() for n in item.get("column_names") or []]
                if not (len(names) == 2 and names[0] == alias or len(names) == 1 and names[0] in self.columns):
                    return False
        return True


def list_reads(sql: str, table: str, columns: list[str]) -> ListReads:
    """How `sql` reads `table` (whose columns are `columns`): its list-only parts, or every row, or unknown."""
    con = duckdb.connect(":memory:")
    try:
        parsed = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
        if parsed.get("error") or len(parsed.get("statements") or []) != 1:
            return ListReads(unknown="the query does not parse")
        query = _Query(con, parsed, table, columns)
        if table.casefold() in query.ctes:
            return ListReads(unknown=f"a WITH table is named {table} too")
        query.visit(parsed["statements"][0]["node"])
        return ListReads(every=query.every, parts=tuple(dict.fromkeys(query.parts)))
    except (duckdb.Error, KeyError, TypeError, AttributeError) as exc:
        return ListReads(unknown=f"its parse tree could not be read ({type(exc).__name__})")
    finally:
        con.close()


def kept_rows(sqls: list[str], name: str, table: TableRecord) -> RowUse:
    """The rows of `table` (named `name`) the derivation (its queries, `sqls`) uses: every row when a place reads
    it unfiltered or no query reads it (nothing is dropped by the list's values then)."""
    parts: list[str] = []
    columns = [*table["columns"], *([] if table["derived"] else PROVENANCE_COLUMNS)]
    for sql in sqls:
        reads = list_reads(sql, name, columns)
        if reads.unknown:
            return RowUse(unknown=reads.unknown)
        if reads.every:
            return RowUse()
        parts += reads.parts
    if not parts:
        return RowUse()
    try:
        return RowUse(kept=frozenset(rows_used({name: table}, name, list(dict.fromkeys(parts)),
                                               seconds=CHECK_SECONDS)))
    except WorkspaceError as exc:
        return RowUse(unknown=str(exc))


@dataclass(frozen=True)
class Carried:
    """A derivation's conditions on a detail table, over columns the list table has too, as a query over the list
    (`sql`: SELECT * FROM the list WHERE those conditions) and the columns they read."""

    sql: str
    columns: frozenset[str]


def carried_conditions(sqls: list[str], detail: str, listing: str, shared: set[str]) -> list[Carried]:
    """The WHERE conditions each query applies to the detail table read alone (`FROM detail [alias] WHERE ...`)
    that read only columns the list table has too (`shared`, casefolded) and no subquery, carried over to the list
    table. A listed result whose list row fails them is dropped by what its own list row shows, if that column
    says on the list what it says on the result's page (the caller checks that on the results opened)."""
    con = duckdb.connect(":memory:")
    carried: list[Carried] = []
    try:
        star = json.loads(con.execute("SELECT json_serialize_sql('SELECT * FROM t')").fetchone()[0])
        for sql in sqls:
            parsed = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
            if parsed.get("error"):
                continue
            # not inside an expression's subquery (`IN (SELECT ... FROM pages WHERE ...)`, `NOT EXISTS`): there the
            # condition may pick the rows the answer leaves out, not those it keeps
            for node in parse_nodes(parsed, prune=lambda n: n.get("class") == "SUBQUERY"):
                found = _carried(node, detail.casefold(), shared)
                if found is None:
                    continue
                condition, columns = found
                source = {**node["from_table"], "table_name": listing, "qualified_name": {"path": [listing]},
                          "schema_name": "", "catalog_name": ""}
                place = {**star["statements"][0]["node"], "from_table": source, "where_clause": condition}
                text = json.dumps({**parsed, "statements": [{"node": place, "named_param_map": []}]})
                carried.append(Carried(str(con.execute("SELECT json_deserialize_sql(?)", [text]).fetchone()[0]),
                                       frozenset(columns)))
    except (duckdb.Error, KeyError, TypeError, AttributeError):
        return []
    finally:
        con.close()
    return carried


def _carried(node: dict[str, Any], detail: str, shared: set[str]) -> tuple[dict[str, Any], set[str]] | None:
    """(the conjunction of `node`'s WHERE conjuncts over shared columns, those columns) for a SELECT node reading
    the detail table alone; None otherwise."""
    source = node.get("from_table") if node.get("type") == "SELECT_NODE" else None
    if not source or source.get("type") != "BASE_TABLE" or str(source.get("table_name", "")).casefold() != detail:
        return None
    where = node.get("where_clause")
    conjuncts = where.get("children") or [] if where and where.get("type") == "CONJUNCTION_AND" else [where] if where else []
    alias = str(source.get("alias") or source.get("table_name")).casefold()
    kept: list[dict[str, Any]] = []
    columns: set[str] = set()
    for conjunct in conjuncts:
        refs = [n for n in parse_nodes(conjunct) if n.get("class") == "COLUMN_REF"]
        names = [[str(p).casefold() for p in ref.get("column_names") or []] for ref in refs]
        if any(_is_query(n) for n in parse_nodes(conjunct)) or not names or not all(
                (len(n) == 1 or (len(n) == 2 and n[0] == alias)) and n[-1] in shared for n in names):
            continue
        kept.append(conjunct)
        columns |= {n[-1] for n in names}
    if not kept:
        return None
    return (kept[0] if len(kept) == 1 else {**where, "children": kept}), columns
