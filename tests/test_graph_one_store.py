"""The answer is a table of the one store: extract_rows without `into` appends to `answer`, discard and compose
and verify read that table, and a derive into `answer` replaces it."""

from __future__ import annotations

import pytest

from graph.checks.finish_checks import verify
from graph.evidence.evidence_tables import WorkspaceError, engine_rows, lineage, read_rows
from graph.evidence.workspace_tools import ReadContext, compose_answer, derive, discard, extract_into
from graph.state import Plan
from graph.tools.agent_tools import Derive, DiscardRows, ExtractRows
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "year"), field_separator="|", record_separator="\n")
PAGE = {"url": "http://x/r?q=a", "outline": [],
        "tables": [{"index": 0, "headers": ["ID", "Year"], "rows": [["b", "2021"], ["a", "2020"]]}]}
NONE = {"url": "http://x/r?q=zz", "outline": ["Search", "No results."], "tables": []}


def _read(observation, tables, step):
    ctx = ReadContext(observation=observation, last_read=None, retrieval=None, drift_flags=[], provenance=True,
                      step=step)
    written = extract_into(ExtractRows(columns={"id": "ID", "year": "Year"}), ctx, schema=SPEC.columns,
                           tables=tables, page_facts=None)
    return written, {**tables, **written.tables}


def test_extract_rows_without_into_appends_to_the_answer_table_and_says_how_many_are_collected():
    first, tables = _read(PAGE, {}, 3)
    assert first.message.splitlines()[0] == "extracted 2 row(s) (2 collected)"
    none, tables = _read(NONE, tables, 4)
    assert none.message.startswith("extracted 0 row(s) (read, none: http://x/r?q=zz has no matching rows) (2 collected)")
    answer = tables["answer"]
    assert not answer["derived"] and [r["provenance"]["step"] for r in answer["rows"]] == [3, 3, 4]
    assert len(read_rows(answer)) == 2 and answer["rows"][-1]["empty"] and len(answer["reads"]) == 2
    assert engine_rows(answer)[-1]["_empty"] is True and engine_rows(answer)[0]["_state"] == "{}"
    assert compose_answer(tables, SPEC, ["id"]) == ("a|2020\nb|2021", 2)
    assert verify(plan=Plan(), columns=SPEC.columns, tables=tables, step=5)["ok"]


def test_discard_from_the_answer_counts_rows_that_hold_values_and_the_verifier_sees_them_gone():
    _, tables = _read(PAGE, {}, 3)
    _, tables = _read(NONE, tables, 4)
    one = discard(DiscardRows(where={"id": "a"}), tables)
    assert one.message == "discarded 1 row(s); 1 left"
    every = discard(DiscardRows(all_rows=True), tables)
    assert every.message == "discarded 2 row(s); 0 left"
    report = verify(plan=None, columns=SPEC.columns, tables={**tables, **every.tables}, step=5)
    assert "every row read was discarded" in report["repair_goal"]
    assert discard(DiscardRows(table="nope", all_rows=True), tables).message == "no table 'nope'"


def test_a_derived_answer_replaces_the_rows_and_takes_no_more_extracted_rows():
    _, tables = _read(PAGE, {}, 3)
    written = derive(Derive(sql="SELECT id, year FROM answer WHERE year > '2020'"), tables=tables,
                     schema=SPEC.columns, step=4)
    tables = {**tables, **written.tables}
    assert compose_answer(tables, SPEC, []) == ("b|2021", 1)
    assert lineage(tables)["inputs"] == [{"table": "answer", "derived": None}]  # its own input: no endless lineage
    with pytest.raises(WorkspaceError, match="derived by SQL"):
        _read(PAGE, tables, 5)
