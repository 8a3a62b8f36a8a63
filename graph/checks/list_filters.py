"""Which rows of a list table a derivation drops by the list's own values (graph/checks/details.py asks it).

A derived answer that keeps only some listed results ("keep the rows whose catalogued genus differs") needs
no visit to the results it drops, as long as it drops them by what the list shows. The query is parsed (DuckDB's
own parser, in this process: parsing runs nothing) and each place that reads the list table is looked at: a
SELECT over that table alone with a WHERE holding no subquery filters by the list's own columns; anything else
(no WHERE, a join, a subquery that could consult another table) keeps every row. The filters found are run in
the query engine's own process (graph/workspace.run_query), like any derive.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import duckdb

from graph.evidence.evidence_tables import TableRecord, WorkspaceError, run_query

CHECK_SECONDS = 30.0  # the check at finish waits longer than a derive: a filter that did not run keeps every row


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _base_table(node: Any, name: str) -> bool:
    return isinstance(node, dict) and node.get("type") == "BASE_TABLE" and str(node.get("table_name", "")).casefold() \
        == name.casefold() and not node.get("schema_name")


def list_filters(sql: str, table: str) -> list[str] | None:
    """One query per place `sql` reads `table`, returning the `rowid` of the rows that place keeps; [] when `sql`
    never reads `table`; None when a place keeps every row (or the query cannot be parsed)."""
    con = duckdb.connect(":memory:")
    try:
        parsed = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
        if parsed.get("error"):
            return None
        reads = sum(_base_table(node, table) for node in _nodes(parsed))
        filters: list[str] = []
        for node in _nodes(parsed):
            source, where = node.get("from_table"), node.get("where_clause")
            if node.get("type") != "SELECT_NODE" or not _base_table(source, table) or where is None:
                continue
            if any(n.get("class") == "SUBQUERY" or n.get("type") == "BASE_TABLE" for n in _nodes(where)):
                continue
            alias = source.get("alias") or source["table_name"]
            query = {"node": {**copy.deepcopy(node), "modifiers": [], "cte_map": {"map": []}, "group_expressions": [],
                              "group_sets": [], "having": None, "qualify": None, "sample": None,
                              "aggregate_handling": "STANDARD_HANDLING", "select_list": [
                                  {"class": "COLUMN_REF", "type": "COLUMN_REF", "alias": "row_id",
                                   "query_location": 0, "column_names": [alias, "rowid"]}]},
                     "named_param_map": []}
            text = con.execute("SELECT json_deserialize_sql(?)", [json.dumps({**parsed, "statements": [query]})])
            filters.append(text.fetchone()[0])
        return filters if len(filters) == reads else None
    except duckdb.Error:
        return None
    finally:
        con.close()


def kept_rows(sqls: list[str], name: str, table: TableRecord) -> set[int] | None:
    """Indexes of the rows of `table` that the derivation (its queries, `sqls`) can keep, or None when it may
    keep them all (a read without a list-only filter, or a filter that did not run)."""
    places: list[str] = []
    for sql in sqls:
        found = list_filters(sql, name)
        if found is None:
            return None
        places += found
    if not places:
        return None
    try:
        result = run_query({name: table}, " UNION ".join(f"SELECT row_id FROM ({q})" for q in places),
                           seconds=CHECK_SECONDS)
    except WorkspaceError:
        return None
    return {int(row["row_id"]) for row in result.rows if row.get("row_id") is not None}
