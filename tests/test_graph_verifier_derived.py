"""The verifier follows a derived answer back to its evidence tables and checks each one: drift, the phase's
gates, every page, every listed detail page; each failure names the table."""

from __future__ import annotations

from graph.checks.finish_checks import verify
from graph.evidence.evidence_tables import append_rows, computed_from, evidence_inputs
from graph.evidence.workspace_tools import derive
from graph.plan.targets import Value
from graph.state import EvidenceRow, Gate, Listing, Phase, Plan, Provenance, ReadRecord
from graph.tools.agent_tools import Derive


def _rows(values: list[dict[str, str]], *, state: dict[str, str], url: str = "http://s/list", drift=(),
          step: int = 3) -> list[EvidenceRow]:
    return [EvidenceRow(values=v, provenance=Provenance(
        url=url.format(**v), state=state, drift=list(drift), locator="t", result_set="/list", page=1, pages=None,
        step=step)) for v in values]


def _read(pages: int | None, covered: list[int], step: int = 3) -> ReadRecord:
    return ReadRecord(step=step, result_set="/list?agency=epa", pages_covered=covered, pages=pages, site_total=None,
                      rows=2, filtered=False, complete=False)


def _workspace(*, state=None, drift=(), read=None, detail_ids=("a", "b")):
    listed = [{"id": "a"}, {"id": "b"}]
    tables = {"items": append_rows(None, "items", ["id"], _rows(listed, state=state or {"agency": {"label": "Agency", "value": "EPA"}},
                                                                 drift=drift), read or _read(1, [1]), 3)}
    details = [{"id": i, "size": "1,200"} for i in detail_ids]
    tables["sizes"] = append_rows(None, "sizes", ["id", "size"],
                                  _rows(details, state={}, url="http://s/item/{id}", step=5), None, 5)
    tables.update(derive(Derive(sql="SELECT i.id, num(s.size) AS size FROM items i JOIN sizes s USING (id) "
                                    "ORDER BY id"), tables=tables, schema=("id", "size"), step=7).tables)
    return tables


PLAN = Plan(phases=[Phase(read="list", into="items", gates=[Gate(kind="filter", name="Agency", target=Value(value="EPA"))]),
                    Phase(read="each item's page", into="sizes", detail_pages=True)])
LISTING = Listing(step=3, url="http://s/list", result_set="/list", row_links=["http://s/item/a", "http://s/item/b"])


def _verify(tables, plan=PLAN):
    return verify(plan=plan, tables=tables, columns=("id", "size"), step=8, listings=[LISTING])


def test_a_clean_derivation_passes():
    tables = _workspace()
    assert evidence_inputs(tables) == ["items", "sizes"]
    assert _verify(tables)["ok"]


def test_a_lineage_is_walked_once_through_derived_tables_own_inputs_first():
    """The one walk every check uses: the answer's inputs first, then theirs; a table once; an `answer` derived
    from the answer it replaced does not loop."""
    tables = _workspace()
    tables.update(derive(Derive(sql="SELECT id FROM sizes", into="ids"), tables=tables, schema=("id",), step=8).tables)
    tables.update(derive(Derive(sql="SELECT a.id, a.size FROM answer a JOIN ids USING (id) JOIN items USING (id)"),
                         tables=tables, schema=("id", "size"), step=9).tables)
    assert sorted(tables["answer"]["inputs"]) == ["answer", "ids", "items"]
    own = [n for n in tables["answer"]["inputs"] if n != "answer"]
    assert computed_from(tables) == [*own, "sizes"]
    assert evidence_inputs(tables) == ["items", "sizes"]


def test_drift_in_an_input_table_is_caught_by_name():
    report = _verify(_workspace(drift=["navigation_reset:agency"]))
    assert [f["check"] for f in report["failures"]] == ["drift"]
    assert report["repair_goal"].startswith("[drift] table items:")


def test_a_table_read_in_another_state_than_its_phase():
    report = _verify(_workspace(state={"agency": {"label": "Agency", "value": "FDA"}}))
    assert [f["check"] for f in report["failures"]] == ["gate"]
    assert "table items" in report["repair_goal"] and "'EPA'" in report["repair_goal"]


def test_unread_pages_of_an_input_table():
    report = _verify(_workspace(read=_read(3, [1])))
    assert [f["check"] for f in report["failures"]] == ["pages"] and "[2, 3]" in report["repair_goal"]


def test_a_listed_detail_page_not_read():
    report = _verify(_workspace(detail_ids=("a",)))  # b was opened (visited) but never read into the table
    assert [f["check"] for f in report["failures"]] == ["details"]
    assert "http://s/item/b" in report["repair_goal"] and "table sizes" in report["repair_goal"]
    unphased = Plan(gates=PLAN.phases[0].gates)
    assert _verify(_workspace(detail_ids=("a",)), unphased)["ok"]  # no phase says each page is read


def test_without_phases_the_plan_gates_apply_and_ablated_provenance_skips_them():
    plan = Plan(gates=[PLAN.phases[0].gates[0]])
    assert not _verify(_workspace(state={"agency": {"label": "Agency", "value": "FDA"}}), plan)["ok"]
    tables = _workspace()
    for row in tables["items"]["rows"]:
        row["provenance"]["state"] = None  # provenance ablated: no state to check, no crash
    assert _verify(tables, plan)["ok"]


def test_a_detail_page_read_with_no_rows_counts_as_read_and_an_empty_answer_needs_such_a_read():
    tables = _workspace(detail_ids=("a",))
    read = _rows([{"id": "b"}], state={}, url="http://s/item/{id}", step=6)[0]
    marker = EvidenceRow(values={**read["values"], "size": None}, provenance=read["provenance"], empty=True)
    tables["sizes"] = append_rows(tables["sizes"], "sizes", ["id", "size"], [marker], None, 6)
    assert _verify(tables)["ok"]  # b's page was read: it holds none
    none = derive(Derive(sql="SELECT i.id, num(s.size) AS size FROM items i JOIN sizes s USING (id) "
                             "WHERE num(s.size) > 5000"), tables=tables, schema=("id", "size"), step=9).tables
    report = _verify({**tables, **none})
    assert report["ok"] and "hold reads of 0 rows" in report["notes"][0]
    without = _workspace()
    empty = derive(Derive(sql="SELECT id, size FROM sizes WHERE false"), tables=without, schema=("id", "size"),
                   step=9).tables
    assert [f["check"] for f in _verify({**without, **empty})["failures"]] == ["schema"]  # never read none
    blank = derive(Derive(sql="SELECT s.id, s.size FROM sizes s WHERE s._empty"), tables=tables,
                   schema=("id", "size"), step=9).tables
    blank["answer"]["rows"] = [{"id": None, "size": None}]
    assert "every column empty" in _verify({**tables, **blank})["repair_goal"]


def test_a_derive_input_read_from_a_table_cut_at_a_row_cap_is_refused_naming_its_set():
    """Rows a read could not take (the browser cut the table: `truncated`), in a table a derived answer stands on,
    is evidence the answer may lack rows where the page states no total: a [count] refusal naming the table and
    the result set, until that set is read again uncut."""
    cut = {**_read(1, [1]), "truncated": True}
    refused = _verify(_workspace(read=cut))
    (failure,) = [f for f in refused["failures"] if f["check"] == "count"]
    assert failure["table"] == "items" and failure["result_set"] == "/list?agency=epa", failure
    assert "cut at a row cap" in failure["message"]
    tables = _workspace(read=cut)
    tables["items"]["reads"].append(_read(1, [1], step=4))  # the same set read again, nothing cut
    assert _verify(tables)["ok"]
    assert _verify(_workspace(read={**_read(1, [1]), "untaken": 3, "site_total": 5}))["failures"][0]["check"] == "count"
