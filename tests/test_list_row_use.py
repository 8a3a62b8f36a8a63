"""Which listed rows a derivation uses, whatever shape its SQL takes (graph/checks/list_filters.py, measured by
graph/evidence/evidence_tables.rows_used in the engine's process). Each derivation below is run for real by the
derive tool over a real workspace, then checked by the real verifier: a listed result the SQL drops by the list's
own values (a window, a subquery bound taken from another listed row, a self-join, an IN-list beside a join) is
not asked for; one it keeps and that was never opened still is. The reader of "a WHERE over the list table alone"
this replaces dropped nothing in any of the four shapes, so asked for every unopened one (issue 37)."""

from __future__ import annotations

import pytest

from graph.checks.details import carried_links, dropped_links
from graph.checks.finish_checks import verify
from graph.checks.list_filters import ListReads, carried_conditions, kept_rows, list_reads
from graph.evidence.evidence_tables import LINEAGE_MAX_ROWS, WorkspaceError, append_rows, new_table, rows_used
from graph.evidence.workspace_tools import derive
from graph.state import EvidenceRow, Provenance
from graph.tools.agent_tools import Derive
from tests.test_graph_details import PLAN, SPECIES, _workspace

LINK = "http://s/sp/"
JOIN = "JOIN pages p ON p.species = {a}.current"


def _refused(tables: dict, listings: list) -> tuple[list[str], list[str]]:
    report = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings)
    return [f["message"] for f in report["failures"] if f["check"] == "details"], report.get("notes", [])


@pytest.mark.parametrize(("sql", "opened", "dropped"), [
    pytest.param("WITH top AS (SELECT current FROM (SELECT current, row_number() OVER (ORDER BY id) AS n "
                 "FROM catalogue) WHERE n <= 3) SELECT t.current AS species, p.status FROM top t "
                 + JOIN.format(a="t"), ["A-1", "A-2", "A-3"], {"A-4", "A-5"}, id="window-in-a-subquery"),
    pytest.param("SELECT c.current AS species, p.status FROM catalogue c " + JOIN.format(a="c")
                 + " WHERE c.id >= (SELECT min(id) FROM catalogue WHERE catalogued LIKE 'Delta%')",
                 ["A-3", "A-4", "A-5"], {"A-1", "A-2"}, id="bound-from-another-row-beside-a-join"),
    pytest.param("WITH later AS (SELECT DISTINCT a.current FROM catalogue a JOIN catalogue b ON a.id >= b.id "
                 "WHERE b.catalogued = 'Gamma minor') SELECT l.current AS species, p.status FROM later l "
                 + JOIN.format(a="l"), ["A-2", "A-3", "A-4", "A-5"], {"A-1"}, id="self-join"),
    pytest.param("SELECT c.current AS species, p.status FROM catalogue c " + JOIN.format(a="c")
                 + " WHERE c.id IN ('A-1', 'A-3', 'A-4') AND p.status <> 'lost'", ["A-1", "A-3", "A-4"], {"A-2", "A-5"},
                 id="in-list-beside-a-join"),
])
def test_rows_dropped_by_the_lists_values_need_no_visit(sql, opened, dropped):
    tables, listings = _workspace(opened, sql)
    assert dropped_links(tables, listings) == {LINK + i for i in dropped}
    assert _refused(tables, listings) == ([], [])
    # the same derivation with one kept result never opened: that one is still asked for
    tables, listings = _workspace(opened[1:], sql)
    assert dropped_links(tables, listings) == {LINK + i for i in dropped}
    refused, _ = _refused(tables, listings)
    assert len(refused) == 1 and f"were not opened: {LINK}{opened[0]};" in refused[0]


def test_a_list_read_whole_beside_another_table_uses_every_row():
    ranked = ("WITH r AS (SELECT current, row_number() OVER (ORDER BY id) AS n FROM catalogue) "
              "SELECT r.current AS species, p.status FROM r " + JOIN.format(a="r") + " WHERE r.n <= 3")
    tables, listings = _workspace(["A-1", "A-2", "A-3"], ranked)  # the rank is filtered only beside the pages
    assert dropped_links(tables, listings) == set()
    assert "2 of 5 listed result(s) were not opened" in _refused(tables, listings)[0][0]


def test_row_use_that_cannot_be_told_refuses_nothing_and_says_so():
    """A subquery over the list that names the pages' columns (correlated) does not run alone: which rows it uses
    is unknown, so nothing is asked for on it, and the report says why."""
    correlated = ("SELECT p.species, p.status FROM pages p WHERE EXISTS (SELECT 1 FROM catalogue c "
                  "WHERE c.current = p.species AND c.id <> 'A-2')")
    tables, listings = _workspace(["A-1", "A-3"], correlated)
    use = kept_rows([correlated], "catalogue", tables["catalogue"])
    assert use.kept is None and use.unknown
    refused, notes = _refused(tables, listings)
    assert refused == [] and any(n.startswith("[details] which rows of catalogue the answer uses is unknown")
                                 for n in notes)


def test_a_with_table_named_as_the_list_is_unknown():
    shadow = "WITH catalogue AS (SELECT * FROM catalogue WHERE id = 'A-1') SELECT current FROM catalogue"
    assert list_reads(shadow, "catalogue", ["id", "current"]).unknown
    assert list_reads("SELECT id FROM catalogue", "catalogue", ["id"]) == ListReads(
        parts=("SELECT id FROM catalogue",))


def test_rows_used_counts_duplicates_and_is_bounded():
    table = new_table("t", ["k", "v"])
    table["derived"], table["types"] = True, ["VARCHAR", "BIGINT"]
    table["rows"] = [{"k": "a", "v": 1}, {"k": "a", "v": 1}, {"k": "b", "v": 5}, {"k": "c", "v": 9}]
    assert rows_used({"t": table}, "t", ["SELECT k FROM t WHERE v < 6"]) == [0, 1, 2]  # a duplicate is a row too
    assert rows_used({"t": table}, "t", ["SELECT max(v) FROM t", "SELECT k FROM t WHERE k = 'b'"]) == [2, 3]
    table["rows"] = [{"k": str(i), "v": i} for i in range(LINEAGE_MAX_ROWS + 1)]
    with pytest.raises(WorkspaceError, match="rows to follow one by one"):
        rows_used({"t": table}, "t", ["SELECT k FROM t"])


CARRIED = ("SELECT current AS species, status FROM pages WHERE split_part(catalogued, ' ', 1) <> "
           "split_part(current, ' ', 1) ORDER BY 1")


def _carried_workspace(opened: list[str], *, page_says: dict[str, str] | None = None) -> tuple[dict, list]:
    """The list shows each species as catalogued and now; each page opened shows both again (or, `page_says`, a
    catalogued name of its own); the derivation filters the pages read by them, never reading the list."""
    tables, listings = _workspace([])
    pages = [EvidenceRow(values={"current": SPECIES[i][1], "catalogued": (page_says or {}).get(i, SPECIES[i][0]),
                                 "status": "holotype"},
                         provenance=Provenance(url=f"{LINK}{i}?tab=types", state={}, drift=[], locator="t",
                                               result_set="", page=None, pages=None, step=5 + n))
             for n, i in enumerate(opened)]
    tables = {"catalogue": tables["catalogue"],
              "pages": append_rows(None, "pages", ["current", "catalogued", "status"], pages, None, 5)}
    tables.update(derive(Derive(sql=CARRIED), tables=tables, schema=("species", "status"), step=9).tables)
    return tables, listings


def test_a_condition_on_the_pages_read_drops_the_results_whose_list_row_fails_it():
    """A played run filtered the pages it read by a column the list shows too (versions >= 2) and opened only the
    results whose list row passes: the list row is evidence of what the page says, once every page opened agreed
    with its row, so the results it rules out are not asked for; a kept one left unopened still is. Where a page
    opened disagrees with its list row, the list is no evidence: they are asked for (and the note says why)."""
    tables, listings = _carried_workspace(["A-1", "A-3", "A-5"])  # keep their genus: the WHERE drops them
    assert carried_links(tables, listings, "pages") == {LINK + "A-2", LINK + "A-4"}
    assert _refused(tables, listings) == ([], [])
    refused, _ = _refused(*_carried_workspace(["A-1", "A-5"]))  # A-3 passes the condition, never opened
    assert len(refused) == 1 and f"were not opened: {LINK}A-3;" in refused[0]
    tables, listings = _carried_workspace(["A-1", "A-3", "A-5"], page_says={"A-1": "Beta major"})
    notes: list[str] = []
    assert carried_links(tables, listings, "pages", notes) == set()
    assert notes and "disagree on catalogued" in notes[0]
    refused, _ = _refused(tables, listings)
    assert len(refused) == 1 and "2 of 5 listed result(s) were not opened" in refused[0]


@pytest.mark.parametrize(("sql", "carried"), [
    ("SELECT a FROM pages p WHERE CAST(p.versions AS INTEGER) >= 2 AND p.note LIKE '%x%'",
     "SELECT * FROM catalogue AS p WHERE (CAST(p.versions AS INTEGER) >= 2)"),
    ("SELECT a FROM pages WHERE versions IN (SELECT v FROM other)", None),  # a subquery: not the row's own values
    ("SELECT a FROM pages", None),
    ("SELECT a FROM pages JOIN other USING (a) WHERE versions > 1", None),  # not the pages read alone
    ("SELECT a FROM catalogue WHERE a NOT IN (SELECT a FROM pages WHERE versions > 1)", None),  # picks the left-out
    ("WITH kept AS (SELECT a FROM pages WHERE versions > 1) SELECT a FROM kept",
     "SELECT * FROM catalogue WHERE (versions > 1)"),
])
def test_only_conditions_on_the_pages_alone_over_shared_columns_are_carried(sql, carried):
    found = carried_conditions([sql], "pages", "catalogue", {"versions"})
    assert [c.sql for c in found] == ([carried] if carried else [])
