"""Issue 40 item 8: `derive`'s block on the engine's introspection functions (`duckdb_settings()`,
`current_setting()`) was bypassed by the catalogue's views: `SELECT name, setting FROM pg_catalog.pg_settings`
showed the host's paths, the working directory among them. A query now reads only the evidence tables, its own
WITH tables and a few table functions that make values (checked on DuckDB's own parse tree), and the engine's
process runs in `/`."""

from __future__ import annotations

import os

import pytest

from graph.evidence.evidence_tables import WorkspaceError, run_query

TABLES = {"items": {"name": "items", "columns": ["name", "n"], "types": ["VARCHAR", "BIGINT"], "derived": True,
                    "rows": [{"name": "a", "n": 1}, {"name": "b", "n": 2}], "sql": "", "inputs": [], "reads": [],
                    "steps": [1]}}


@pytest.mark.parametrize("sql", [
    "SELECT name, setting FROM pg_catalog.pg_settings",
    "SELECT name, setting FROM pg_settings",
    "SELECT * FROM items WHERE name IN (SELECT setting FROM pg_settings)",  # in a subquery
    "WITH s AS (SELECT * FROM pg_catalog.pg_settings) SELECT * FROM s",  # in a CTE's body
    "SELECT table_name FROM information_schema.tables",
    "SELECT * FROM system.main.duckdb_tables",
    "SELECT * FROM query('SELECT * FROM pg_settings')",  # another query's text
    "SELECT name FROM query_table('pg_settings')",
    "FROM pg_settings SELECT setting",
])
def test_derive_catalogue_views_and_query_functions_are_refused(sql):
    with pytest.raises(WorkspaceError) as info:
        run_query(TABLES, sql)
    message = str(info.value)
    assert "evidence table" in message and "items" in message
    assert os.getcwd() not in message and "/root" not in message


@pytest.mark.parametrize(("sql", "rows"), [
    ("SELECT name FROM items ORDER BY n", [{"name": "a"}, {"name": "b"}]),
    ("WITH x AS (SELECT n FROM items) SELECT sum(n) AS s FROM x", [{"s": 3}]),
    ("WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < 2) SELECT k FROM r", [{"k": 1}, {"k": 2}]),
    ("SELECT u FROM unnest([1, 2]) AS t(u)", [{"u": 1}, {"u": 2}]),
    ("SELECT count(*) AS c FROM range(3)", [{"c": 3}]),
])
def test_derive_the_evidence_tables_ctes_and_value_functions_still_run(sql, rows):
    assert run_query(TABLES, sql).rows == rows


def test_derive_engine_process_shows_no_working_directory_of_ours():
    """Even a path the engine reports by itself is not ours: its process runs in `/`."""
    [row] = run_query({}, "SELECT 1 AS one").rows
    assert row == {"one": 1}
    with pytest.raises(WorkspaceError) as info:
        run_query({}, "SELECT * FROM read_csv('x.csv')")
    assert os.getcwd() not in str(info.value)
