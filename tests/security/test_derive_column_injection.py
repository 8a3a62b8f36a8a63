"""Issue 21, item 1: SQL injection through column names in the derive workspace.

The workspace used to load a table with `CREATE TABLE "t" ("<column>" TYPE)` built from unescaped names,
outside the time limit: a derived column named with a quote ran statements of its own choosing (past the
one-SELECT rule and the interrupt), and a quote or a case-duplicate in a derived column name made the next
derive raise a raw DuckDB exception. Reproduced here: the same names are refused when a derive would create
them, and a table that already holds them (e.g. from an older checkpoint) loads them as plain names.
"""

from __future__ import annotations

import asyncio
import time

import duckdb
import pytest

from agent.clients.chat import make_chat_model
from agent.measuring.fake_server import FakeOpenAIServer
from agent.solve import initial_state
from graph.evidence.evidence_tables import (
    QUERY_SECONDS,
    WorkspaceError,
    append_rows,
    derived_table,
    run_query,
)
from graph.evidence.workspace_tools import derive
from graph.model_io.policy import ChatPolicy
from graph.nodes import Deps
from graph.nodes.workspace import make_workspace
from graph.state import EvidenceRow, Provenance
from graph.tools.agent_tools import Derive
from tasks.loaders import load_tasks

# What the attack looked like: close the quoted name, finish the DDL, run a statement, comment out the rest.
BREAKOUT = 'a" VARCHAR); CREATE TABLE pwned AS SELECT 1 AS x; --'
HANG = 'a" VARCHAR); SELECT count(*) FROM range(1000000000000) t WHERE hash(t.range) = 0; --'
QUOTED = BREAKOUT.replace('"', '""')  # the same name as a correctly quoted identifier


def _derived(name: str, columns: list[str], rows: list[dict]) -> dict:
    return {"name": name, "columns": columns, "types": ["VARCHAR"] * len(columns), "rows": rows, "derived": True,
            "sql": "SELECT ...", "inputs": [], "reads": [], "steps": [1]}


@pytest.mark.parametrize("sql", [
    f'SELECT 1 AS "{QUOTED}"',
    'SELECT 1 AS "x""y"',
    "SELECT 'v' AS \"line\nbreak\"",
])
def test_a_quote_or_control_character_in_a_derived_column_name_is_refused_clearly(sql):
    with pytest.raises(WorkspaceError, match="may not be empty or contain a double quote") as refused:
        derive(Derive(sql=sql, into="t"), tables={}, schema=(), step=1)
    assert "Error:" not in str(refused.value)  # our message, not the engine's


@pytest.mark.parametrize("sql", ['SELECT 1 AS a, 2 AS "A"', "SELECT 1 AS Total, 2 AS total"])
def test_case_duplicate_derived_column_names_are_refused_clearly(sql):
    with pytest.raises(WorkspaceError, match="distinct names"):
        derive(Derive(sql=sql, into="t"), tables={}, schema=(), step=1)


def test_a_stored_table_with_an_injecting_column_name_loads_it_as_a_plain_name():
    """The old loader ran the `CREATE TABLE pwned` hidden in the name; now the name is one quoted identifier."""
    table = _derived("t", [BREAKOUT, "b"], [{BREAKOUT: "kept", "b": "2"}])
    result = run_query({"t": table}, f'SELECT "{QUOTED}" AS v, b FROM t')
    assert result.rows == [{"v": "kept", "b": "2"}]
    with pytest.raises(WorkspaceError, match="pwned"):  # nothing else was created
        run_query({"t": table}, "SELECT * FROM pwned")


def test_a_stored_injecting_name_cannot_run_a_statement_outside_the_time_limit():
    """The name that used to start an endless query at load time (before the timer) loads instantly."""
    started = time.monotonic()
    result = run_query({"t": _derived("t", [HANG], [{HANG: "x"}])}, "SELECT count(*) AS n FROM t", seconds=2)
    assert result.rows == [{"n": 1}]
    assert time.monotonic() - started < 12  # well under the hard stop (2 s + start-up), nothing ran away


def test_a_stored_case_duplicate_is_a_workspace_error_not_a_raw_engine_exception():
    table = _derived("t", ["a", "A"], [{"a": "1", "A": "2"}])
    with pytest.raises(WorkspaceError) as failed:
        run_query({"t": table}, "SELECT * FROM t")
    assert not isinstance(failed.value, duckdb.Error) and "Tables:" in str(failed.value)


def test_derived_tables_round_trip_through_the_next_derive():
    """A derived table whose columns need quoting (spaces, case) feeds the next query unchanged."""
    first = run_query({}, 'SELECT 1 AS "Station ID", 2.5::DECIMAL(5,2) AS "Km (total)", [1, 2] AS l')
    table = derived_table("first", "SELECT ...", first, 1)
    again = run_query({"first": table}, 'SELECT "Station ID" AS id, "Km (total)" AS km, l FROM first')
    assert again.rows == [{"id": 1, "km": "2.50", "l": "[1, 2]"}]


def test_table_loading_counts_against_the_time_limit():
    """Loading the tables happens inside the time limit: a huge table with a tiny limit is stopped."""
    prov = Provenance(url="", state=None, drift=[], locator="", result_set="", page=None, pages=None, step=1)
    rows = [EvidenceRow(values={"a": str(i), "b": "x" * 40}, provenance=prov) for i in range(150_000)]
    table = append_rows(None, "big", ["a", "b"], rows, None, 1)
    with pytest.raises(WorkspaceError, match="longer than 0.01s"):
        run_query({"big": table}, "SELECT count(*) AS n FROM big", seconds=0.01)


async def test_a_runaway_derive_is_stopped_and_never_blocks_the_event_loop():
    """The workspace node waits for the engine's process off the event loop: other tasks (the browser, a
    second cell) keep running while a query runs into its time limit."""
    task = load_tasks("offline", origin="http://127.0.0.1:9", task_ids=["offline_vulns_001"])[0]
    with FakeOpenAIServer([]) as fake:
        config = fake.model_config()
        deps = Deps(browser=None, policy=ChatPolicy(make_chat_model(config, "t")), model_config=config, spec=task.output_spec)
    runaway = "SELECT count(*) AS n FROM range(1000000000000) t WHERE hash(t.range) = 0"
    state = {**initial_state(task.solver_view(), time.time()), "messages": [], "tables": {},
             "pending": {"name": "derive", "id": "c1", "args": {"sql": runaway, "into": "t"}}}
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    update = await make_workspace(deps)(state)
    elapsed = time.monotonic() - started
    ticker.cancel()
    assert f"longer than {QUERY_SECONDS:g}s" in update["messages"][0].content
    assert ticks >= elapsed / 0.05 / 2, (ticks, elapsed)  # the loop kept turning the whole time
