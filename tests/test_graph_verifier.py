"""The verifier's checks: gates in each row's state, pages, counts, criteria, schema; and its repair goals."""

from __future__ import annotations

from graph.checks import finish_checks
from graph.evidence.evidence_tables import TableRecord, new_table
from graph.plan.targets import Value
from graph.state import EvidenceRow, Gate, Listing, Plan, Provenance, ReadRecord
from tests.fixtures.opened import shown

COLUMNS = ("id", "agency")
PLAN = Plan(gates=[Gate(kind="filter", name="Agency", target=Value(value="EPA"))], row_criteria={"agency": "EPA"})


def row(ident: str, *, agency: str = "EPA", state: dict | None = None, drift: list[str] | None = None,
        result_set: str = "/r?agency=epa", page: int = 1) -> EvidenceRow:
    return EvidenceRow(values={"id": ident, "agency": agency}, provenance=Provenance(
        url="http://x" + result_set, state={"agency": {"label": "Agency", "value": "EPA"}} if state is None else state, drift=drift or [],
        locator=f"table 0 row {ident}", result_set=result_set, page=page, pages=2, step=5))


def read(pages_covered: list[int], *, pages: int | None = 2, total: int | None = None, rows: int = 2,
         filtered: bool = False, complete: bool = False) -> ReadRecord:
    return ReadRecord(step=5, result_set="/r?agency=epa", pages_covered=pages_covered, pages=pages, site_total=total,
                      rows=rows, filtered=filtered, complete=complete)


def answer_table(rows: list[EvidenceRow], reads: list[ReadRecord], columns=COLUMNS) -> dict[str, TableRecord]:
    """The `answer` table extract_rows would leave: its rows, a row for each read of 0 rows, its reads."""
    if not rows and not reads:
        return {}
    empties = [EvidenceRow(values=dict.fromkeys(columns), empty=True, provenance=Provenance(
        url="", state=r.get("state"), drift=[], locator="empty read", result_set=r["result_set"], page=None,
        pages=r["pages"], step=r["step"])) for r in reads if r["rows"] == 0]
    return {"answer": {**new_table("answer", list(columns)), "rows": [*rows, *empties], "reads": list(reads)}}


def verify(*, rows: list[EvidenceRow], reads: list[ReadRecord], **kw):
    return finish_checks.verify(tables=answer_table(rows, reads, kw.get("columns", COLUMNS)), **kw)


def checks(report) -> list[str]:
    return [f["check"] for f in report["failures"]]


def test_clean_evidence_passes():
    report = verify(plan=PLAN, columns=COLUMNS, rows=[row("1"), row("2")], reads=[read([1, 2], total=2)], step=9)
    assert report["ok"] and report["repair_goal"] is None


def test_missed_result_page_is_sent_back_with_the_pages_to_read():
    report = verify(plan=PLAN, columns=COLUMNS, rows=[row("1"), row("2")], reads=[read([1], pages=3)], step=9)
    assert checks(report) == ["pages"]
    assert "page(s) [2, 3] were not read" in report["repair_goal"]


def test_plan_without_all_pages_accepts_the_first_page():
    plan = PLAN.model_copy(update={"all_pages": False})
    assert verify(plan=plan, columns=COLUMNS, rows=[row("1")], reads=[read([1], pages=3)], step=9)["ok"]


def test_rows_read_in_a_wrong_gate_state_fail():
    rows = [row("1"), row("2", state={"agency": {"label": "Agency", "value": "FDA [fda]"}})]
    report = verify(plan=PLAN, columns=COLUMNS, rows=rows, reads=[read([1, 2])], step=9)
    assert checks(report) == ["gate"]
    assert "1 row(s) were read with Agency = 'FDA [fda]', but the plan needs Agency = 'EPA'" in report["repair_goal"]


def test_a_gate_named_by_label_resolves_to_a_snapshot_keyed_by_parameter():
    plan = Plan(gates=[Gate(kind="filter", name="Date basis", target=Value(value="Original submission (v1)"))])
    kept = {"basis": {"label": "Date basis", "value": "Latest version [latest]"}}
    report = verify(plan=plan, columns=COLUMNS, rows=[row("1", state=kept)], reads=[read([1, 2])], step=9)
    assert checks(report) == ["gate"]
    assert ("Date basis = 'Latest version [latest]', but the plan needs Date basis = 'Original submission (v1)'"
            in report["repair_goal"])
    right = {"basis": {"label": "Date basis", "value": "Original submission (v1) [original]"}}
    assert verify(plan=plan, columns=COLUMNS, rows=[row("1", state=right)], reads=[read([1, 2])], step=9)["ok"]


def test_a_gate_naming_no_control_is_reported_not_skipped_silently():
    plan = Plan(gates=[Gate(kind="filter", name="Submission kind", target=Value(value="v1"))])
    report = verify(plan=plan, columns=COLUMNS, rows=[row("1")], reads=[read([1, 2])], step=9)
    assert report["ok"] and report["notes"] == [
        "[gate] unresolved: Submission kind=v1 names no control or URL parameter of the state any row was read in "
        "(not checked)"]


def test_a_clamped_value_is_accepted_and_noted_but_another_value_is_not():
    plan = Plan(gates=[Gate(kind="filter", name="To year", target=Value(value="1969"))])
    clamp = {"planned": "1969", "evidence": "'To year' offers 1958..1966"}
    clamped = {"to": {"label": "To year", "value": "1966", "clamped": clamp}}
    report = verify(plan=plan, columns=COLUMNS, rows=[row("1", state=clamped)], reads=[read([1, 2])], step=9)
    assert report["ok"] and "'To year' offers 1958..1966" in report["notes"][0]
    unexplained = {"to": {"label": "To year", "value": "1966"}}  # the page showed no reason: a wrong value
    assert checks(verify(plan=plan, columns=COLUMNS, rows=[row("1", state=unexplained)], reads=[read([1, 2])],
                         step=9)) == ["gate"]


def test_rows_read_while_drift_was_active_fail():
    report = verify(plan=None, columns=COLUMNS, rows=[row("1", drift=["navigation_reset:agency"])],
                    reads=[read([1, 2])], step=9)
    assert checks(report) == ["drift"] and "navigation_reset:agency" in report["repair_goal"]
    # the drifted gate by its state key and by the label its control showed at the read (typed, not the text)
    assert report["failures"][0]["gates"] == ["agency"] and report["failures"][0]["labels"] == ["Agency"]


def test_without_provenance_the_gate_check_cannot_see_the_state():
    report = verify(plan=PLAN, columns=COLUMNS, rows=[row("1", state=None)], reads=[read([1, 2])], step=9)
    assert report["ok"]  # the provenance ablation: nothing to check against, so nothing is caught


def test_fewer_rows_than_the_site_total_fail_unless_filtered():
    report = verify(plan=None, columns=COLUMNS, rows=[row("1"), row("2")], reads=[read([1, 2], total=16)], step=9)
    assert checks(report) == ["count"] and "the page says 16 results" in report["repair_goal"]
    filtered = verify(plan=None, columns=COLUMNS, rows=[row("1")], reads=[read([1, 2], total=16, filtered=True)],
                      step=9)
    assert filtered["ok"]


def test_rows_that_miss_a_stated_criterion_are_noted_not_refused():
    """A row criterion is the planner's words compared with a cell, no value the page bound: a note (issue 37)."""
    report = verify(plan=PLAN, columns=COLUMNS, rows=[row("1"), row("2", agency="FDA")], reads=[read([1, 2])], step=9)
    assert report["ok"] and any(n.startswith("[criteria] 1 row(s)") and "'FDA'" in n for n in report["notes"])


def test_schema_needs_an_extraction_and_every_column():
    assert checks(verify(plan=None, columns=COLUMNS, rows=[], reads=[], step=2)) == ["schema"]
    report = verify(plan=None, columns=COLUMNS, rows=[row("1", agency="")], reads=[read([1, 2])], step=9)
    assert checks(report) == ["schema"] and "['agency']" in report["repair_goal"]


def test_an_empty_result_read_is_a_valid_none_answer():
    assert verify(plan=None, columns=COLUMNS, rows=[], reads=[read([1], pages=None, total=0, rows=0)], step=3)["ok"]


def test_reads_whose_rows_were_all_discarded_no_longer_count():
    stale = ReadRecord(step=3, result_set="/r?drifted=1", pages_covered=[1], pages=4, site_total=40, rows=4,
                       filtered=False, complete=False)
    report = verify(plan=None, columns=COLUMNS, rows=[row("1"), row("2")], reads=[stale, read([1, 2], total=2)], step=9)
    assert report["ok"]


def test_a_complete_read_covers_every_page_even_when_the_last_page_hides_the_pagination():
    reads = [read([1], pages=2), read([1], pages=None, complete=True)]
    assert verify(plan=None, columns=COLUMNS, rows=[row("1"), row("2")], reads=reads, step=9)["ok"]


def test_detail_pages_the_plan_needs_must_all_be_opened():
    plan = Plan(detail_pages=True)
    page1 = Listing(step=2, url="http://x/r?q=a", result_set="/r?q=a", row_links=["http://x/d/1", "http://x/d/2"])
    page2 = Listing(step=6, url="http://x/r?q=a&page=2", result_set="/r?q=a", row_links=["http://x/d/3"])
    visited = ["http://x/r?q=a", "http://x/d/1/", "http://x/d/3"]
    report = verify(plan=plan, columns=COLUMNS, rows=[row("1")], reads=[read([1, 2])], step=9,
                    listings=[page1, page2], opened=shown(visited, [page1, page2]))
    assert checks(report) == ["details"]
    assert "1 of 3 listed result(s) were not opened: http://x/d/2;" in report["repair_goal"]
    done = verify(plan=plan, columns=COLUMNS, rows=[row("1")], reads=[read([1, 2])], step=9,
                  listings=[page1, page2], opened=shown([*visited, "http://x/d/2"], [page1, page2]))
    assert done["ok"]
    not_needed = verify(plan=Plan(), columns=COLUMNS, rows=[row("1")], reads=[read([1, 2])], step=9,
                        listings=[page1], opened=[])
    assert not_needed["ok"]


def test_an_answer_whose_rows_were_all_discarded_is_not_verified_as_empty():
    discarded_all = verify(plan=None, columns=COLUMNS, rows=[], reads=[read([1, 2])], step=9)
    assert checks(discarded_all) == ["schema"] and "every row read was discarded" in discarded_all["repair_goal"]
    read_none = read([1], pages=None, rows=0)
    assert verify(plan=None, columns=COLUMNS, rows=[], reads=[read([1, 2]), read_none], step=9)["ok"]


def test_a_filtered_read_of_a_table_short_of_the_site_count_is_refused_until_read_whole():
    """Rows lost by a read: the table held fewer rows than the site counts, and a `where` then filtered that part.
    The [count] check refuses on that evidence (the read's `untaken`) unless the set was read whole later."""
    from graph.checks.finish_checks import check_counts

    short = {"step": 7, "result_set": "/search?q=x", "pages_covered": [1], "pages": 1, "site_total": 12, "rows": 3,
             "filtered": True, "complete": False, "untaken": 2}
    (refusal,) = check_counts([], [short])
    assert refusal["check"] == "count" and "step 7" in refusal["message"] and "all_pages=true" in refusal["message"]
    whole = {**short, "step": 9, "untaken": 0, "complete": True}
    assert check_counts([], [short, whole]) == []


def test_a_failure_names_its_gate_control_and_result_set_in_typed_fields():
    """What a refusal is about is in fields a program reads (a fault-injection count, a policy), not in its text:
    a gate refusal names the plan's gate and the control read; a pages or count refusal, its result set."""
    wrong = verify(plan=PLAN, columns=COLUMNS, rows=[row("1", state={"agency": {"label": "Agency", "value": "FDA"}})],
                   reads=[read([1, 2])], step=9)
    (gate,) = wrong["failures"]
    assert gate["gates"] == ["Agency"] and gate["labels"] == ["Agency"], gate
    (pages,) = verify(plan=None, columns=COLUMNS, rows=[row("1")], reads=[read([1])], step=9)["failures"]
    assert pages["check"] == "pages" and pages["result_set"] == "/r?agency=epa", pages
    cut = {**read([1], pages=None), "truncated": True}
    (count,) = verify(plan=None, columns=COLUMNS, rows=[row("1"), row("2")], reads=[cut], step=9)["failures"]
    assert count["check"] == "count" and count["result_set"] == "/r?agency=epa", count
