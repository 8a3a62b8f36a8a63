"""What counts as opened, which listed results the answer uses, and the turn's bookkeeping (graph/checks/details.py,
graph/checks/list_filters.py, graph/prompting/render.py). The paths through the graph are in tests/test_details_e2e.py."""

from __future__ import annotations

from graph.checks.details import HOW_TO_OPEN, Opened, dropped_links, phase_progress, switch_off_refusal
from graph.checks.finish_checks import verify
from graph.checks.list_filters import ListReads, list_reads
from graph.evidence.evidence_tables import append_rows
from graph.evidence.workspace_tools import derive
from graph.plan.targets import Value, Window
from graph.prompting.render import pending_gates, rows_collected, split_state_values
from graph.state import EvidenceRow, Gate, Listing, Phase, Plan, Provenance, ReadRecord
from graph.tools.agent_tools import Derive
from tests.fixtures.opened import shown

LIST = "http://s/catalogue"
SPECIES = {"A-1": ("Alpha major", "Beta major"), "A-2": ("Gamma minor", "Gamma minor"),
           "A-3": ("Delta alba", "Eps alba"), "A-4": ("Zeta nana", "Zeta nana"),
           "A-5": ("Eta rosea", "Theta rosea")}  # id -> (catalogued as, current)
KEEP_SQL = ("WITH kept AS (SELECT current FROM catalogue WHERE split_part(catalogued, ' ', 1) <> "
            "split_part(current, ' ', 1)) SELECT k.current AS species, p.status FROM kept k JOIN pages p "
            "ON p.species = k.current ORDER BY 1")


def test_opened_means_a_read_under_the_link():
    read = Opened(["http://s/profile/EM-01?product=acs5&vintage=2022", "http://s/station/X-7/availability",
                   "http://s/record?id=rec-42", "http://s/list?year=2022"])
    assert "http://s/profile/EM-01" in read  # same path, the site's state in the query
    assert "http://s/station/X-7" in read  # a sub-page
    assert "http://s/items/rec-42" in read  # the same key
    assert "http://s/profile/EM-02" not in read and "http://s/profile/EM" not in read  # a sibling, a prefix
    assert "http://s/reports/2022" not in read  # a year names no item
    assert "http://t/profile/EM-01" not in read  # another site
    by_query = Opened(["http://s/item?id=7&tab=history"])
    assert "http://s/item?id=7" in by_query and "http://s/item?id=8" not in by_query  # the query names the item


def _row(values: dict[str, str], url: str, step: int) -> EvidenceRow:
    return EvidenceRow(values=values, provenance=Provenance(url=url, state={}, drift=[], locator="t",
                                                            result_set="", page=None, pages=None, step=step))


def _workspace(opened: list[str], sql: str = KEEP_SQL) -> tuple[dict, list[Listing]]:
    listing = Listing(step=2, url=LIST, result_set="/catalogue", kind="links",
                      row_links=[f"http://s/sp/{i}" for i in SPECIES],
                      row_cells=[[i, a, c] for i, (a, c) in SPECIES.items()])
    read = ReadRecord(step=3, result_set="/catalogue", pages_covered=[1], pages=1, site_total=None, rows=4,
                      filtered=False, complete=True)
    catalogue = [_row({"id": i, "catalogued": a, "current": c}, LIST, 3) for i, (a, c) in SPECIES.items()]
    tables = {"catalogue": append_rows(None, "catalogue", ["id", "catalogued", "current"], catalogue,
                                       read, 3)}
    pages = [_row({"species": SPECIES[i][1], "status": "holotype"}, f"http://s/sp/{i}?tab=types", 5 + n)
             for n, i in enumerate(opened)]
    tables["pages"] = append_rows(None, "pages", ["species", "status"], pages, None, 5)
    tables.update(derive(Derive(sql=sql), tables=tables, schema=("species", "status"), step=9).tables)
    return tables, [listing]


PLAN = Plan(phases=[Phase(read="catalogue", into="catalogue"), Phase(read="each kept species", into="pages",
                                                                     detail_pages=True)])


def _details(tables: dict, listings: list[Listing]) -> list[str]:
    report = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings)
    return [f["message"] for f in report["failures"] if f["check"] == "details"]


def test_results_the_sql_drops_by_list_values_need_no_visit():
    tables, listings = _workspace(["A-1", "A-3", "A-5"])  # keep their genus: the WHERE drops them
    assert dropped_links(tables, listings) == {"http://s/sp/A-2", "http://s/sp/A-4"}
    assert _details(tables, listings) == []


def test_a_kept_result_left_unopened_is_still_refused():
    tables, listings = _workspace(["A-1", "A-5"])  # A-3 is kept by the WHERE, never read (the join hides it)
    assert _details(tables, listings) == ["table pages: 1 of 5 listed result(s) were not opened: http://s/sp/A-3; "
                                          f"{HOW_TO_OPEN}"]


def test_a_result_list_shown_only_after_the_detail_reads_is_not_the_one_they_came_from():
    """A later search that lists a page read earlier (a back-search's results) is not the list the detail phase
    went through: before, its unopened second result was asked for (a real model's clean path, refused twice)."""
    tables, listings = _workspace(["A-1"])  # one page read into the phase's table (step 5)
    later = Listing(step=20, url="http://s/search?name=x", result_set="/search?name=x", kind="results",
                    row_links=["http://s/sp/A-1", "http://s/sp/B-9"], row_cells=[["A-1"], ["B-9"]])
    assert _details(tables, [*listings, later]) == []
    early = Listing(**{**later, "step": 4})  # the same list seen before the read: its unopened result counts
    assert _details(tables, [*listings, early]) == [
        f"table pages: 1 of 2 listed result(s) were not opened: http://s/sp/B-9; {HOW_TO_OPEN}"]


def test_a_filter_that_could_consult_another_table_drops_nothing():
    """A row kept or dropped by what was read on the results' pages (here: `OR` it was read) is not dropped by the
    list's values: not reading it is what would drop it. A condition over the list alone, `AND`-ed with such a
    one, still drops by itself."""
    by_details = KEEP_SQL.replace("split_part(current, ' ', 1))", "split_part(current, ' ', 1) OR current IN "
                                  "(SELECT species FROM pages))")
    tables, listings = _workspace(["A-1", "A-3", "A-5"], by_details)
    assert dropped_links(tables, listings) == set()
    assert "2 of 5 listed result(s) were not opened" in _details(tables, listings)[0]
    anded = KEEP_SQL.replace("split_part(current, ' ', 1))", "split_part(current, ' ', 1) AND current IN "
                             "(SELECT species FROM pages))")
    tables, listings = _workspace(["A-1", "A-3", "A-5"], anded)
    assert dropped_links(tables, listings) == {"http://s/sp/A-2", "http://s/sp/A-4"}
    joined = "SELECT c.current AS species, p.status FROM catalogue c JOIN pages p ON p.species = c.current"
    columns = ["id", "catalogued", "current"]
    assert list_reads(joined, "catalogue", columns) == ListReads(every=True)  # joined unfiltered: every row
    assert list_reads(KEEP_SQL, "pages", ["species"]) == ListReads(every=True)
    assert list_reads("SELECT 1", "catalogue", columns) == ListReads()  # never read: nothing dropped by it


def test_switching_the_check_off_is_refused_only_while_it_would_hide_results():
    tables, listings = _workspace(["A-1", "A-5"])
    off = Plan(phases=[PLAN.phases[0], Phase(read="each kept species", into="pages")])
    refused = switch_off_refusal(PLAN, off, tables=tables, listings=listings, opened=[])
    assert refused and refused.startswith("revise_plan refused") and "http://s/sp/A-3" in refused
    done, _ = _workspace(["A-1", "A-3", "A-5"])
    assert switch_off_refusal(PLAN, off, tables=done, listings=listings, opened=[]) is None
    unread = {k: v for k, v in tables.items() if k != "pages"}  # nothing read from any result: a plan correction
    assert switch_off_refusal(PLAN, off, tables=unread, listings=listings, opened=[]) is None
    flat = Plan(detail_pages=True)
    assert switch_off_refusal(flat, Plan(), tables={}, listings=listings, opened=shown([LIST], listings)) is None  # none opened
    assert switch_off_refusal(flat, Plan(), tables={}, listings=listings,
                              opened=shown([LIST, "http://s/sp/A-1", "http://s/sp/A-5"], listings))


def test_phase_progress_counts_the_lists_results_read():
    tables, listings = _workspace(["A-1", "A-3", "A-5"])
    assert phase_progress(PLAN.phases[1], tables, listings) == "3 of 5 listed results opened"
    assert phase_progress(PLAN.phases[0], tables, listings) == "read"
    assert phase_progress(Phase(read="x", into="missing"), tables, listings) == ""
    # a search shown after the phase's reads, listing the pages read and another, is not the list it went through:
    # the progress line counts the list the detail check counts
    later = Listing(step=20, url="http://s/search", result_set="/search",
                    row_links=["http://s/sp/A-1", "http://s/sp/A-3", "http://s/sp/A-5", "http://s/sp/B-7"])
    assert phase_progress(PLAN.phases[1], tables, [*listings, later]) == "3 of 5 listed results opened"


def test_rows_collected_are_live_rows_per_table():
    tables, _ = _workspace(["A-1", "A-5"])
    assert rows_collected(tables) == "catalogue 5; pages 2"
    answer = {"answer": append_rows(None, "answer", ["id"], [_row({"id": "1"}, LIST, 3)], None, 3)}
    assert rows_collected(answer) == "1"
    assert rows_collected({**tables, **answer}) == "answer 1; catalogue 5; pages 2"
    assert rows_collected({}) == "0"


def _value(value: str, step: int | None, evidence=("url", "control")) -> dict:
    return {"value": value, "label": "Synonyms", "evidence": list(evidence), "set_at_step": step, "set_by": None}


def test_a_value_the_agent_set_is_not_untouched_after_the_submit_that_carried_it():
    form = {"url": "http://s/search", "path": "/search", "page": None, "pages": None, "result_count": None,
            "step": 4, "values": {"synonyms": _value("on", 4), "family": _value("Any", None)}}
    results = {**form, "url": "http://s/search?synonyms=on", "step": 5,
               "values": {"synonyms": _value("on", None), "family": _value("Any", None)}}
    shown, rest = split_state_values(None, results, [form])
    assert [k for k, _ in shown] == ["synonyms"] and shown[0][1]["set_at_step"] == 4
    assert rest == ["family"]  # neither set nor named by a gate: "not in plan"


def test_a_gate_seen_on_an_earlier_page_is_not_pending_on_a_results_own_page():
    plan = Plan(gates=[Gate(kind="filter", name="Site type", target=Value(value="Stream"))])
    search = {"url": "http://s/loc", "path": "/loc", "page": None, "pages": None, "result_count": 8, "step": 4,
              "values": {"site_type": {**_value("Stream", 3), "label": "Site type"}}}
    detail = {**search, "url": "http://s/loc/X-1", "path": "/loc/X-1", "step": 6, "values": {}}
    assert pending_gates(plan, detail) == ["Site type=Stream"]
    assert pending_gates(plan, detail, [search]) == []


def test_a_detail_phase_read_under_other_names_is_read_and_checked_under_them():
    named_otherwise = Plan(phases=[PLAN.phases[0], Phase(read="each kept species page", into="species_pages",
                                                         detail_pages=True)])
    tables, listings = _workspace(["A-1", "A-3", "A-5"])  # the pages went into `pages`, no phase's name
    report = verify(plan=named_otherwise, tables=tables, columns=("species", "status"), step=10,
                            listings=listings)
    assert report["ok"], report["repair_goal"]
    assert phase_progress(named_otherwise.phases[1], tables, listings) == "3 of 5 listed results opened"
    short, _ = _workspace(["A-1", "A-5"])
    report = verify(plan=named_otherwise, tables=short, columns=("species", "status"), step=10,
                            listings=listings)
    assert [f["check"] for f in report["failures"]] == ["details"] and "table pages: 1 of 5" in report["repair_goal"]
    del tables["pages"]  # nothing read on any result's page: the phase was never read
    tables.update(derive(Derive(sql="SELECT current AS species, '' AS status FROM catalogue"), tables=tables,
                         schema=("species", "status"), step=11).tables)
    report = verify(plan=named_otherwise, tables=tables, columns=("species", "status"), step=12,
                            listings=listings)
    assert "species_pages" in report["repair_goal"] and report["failures"][0]["check"] == "schema"


def test_a_planned_windows_bounds_are_not_said_to_be_outside_the_plan():
    """A played run was told 'not in plan: year_from, year_to' while the plan's window on them showed held."""
    plan = Plan(gates=[Gate(kind="window", name="From year / To year", target=Window(start="2018", end="2021")),
                       Gate(kind="filter", name="State", target=Value(value="Southvale"))])
    state = {"url": "http://s/q?state=SV", "path": "/q", "page": None, "pages": None, "result_count": None, "step": 8,
             "values": {"year_from": {**_value("2018", None), "label": "From year"},
                        "year_to": {**_value("2021", None), "label": "To year"},
                        "state": {**_value("Southvale", None), "label": "State"},
                        "totals": {**_value("on", None), "label": "Show totals"}}}
    shown, rest = split_state_values(plan, state, [])
    assert [k for k, _ in shown] == ["year_from", "year_to", "state"] and rest == ["totals"]


def test_a_list_phase_never_read_is_a_note_a_detail_phase_never_read_is_refused():
    """Refuse only on evidence (issue 37): a phase reading a list whose table was never read, while the answer
    stands on tables read, is noted (a played run was refused for a phase whose columns another read held); a phase
    reading each listed result's page with nothing read is listed results never opened, and refused."""
    tables, listings = _workspace(["A-1", "A-3", "A-5"])
    extra = Plan(phases=[*PLAN.phases, Phase(read="the genus list", into="genera")])
    report = verify(plan=extra, tables=tables, columns=("species", "status"), step=10, listings=listings)
    assert report["ok"], report["repair_goal"]
    assert any(n.startswith("[schema] the plan's phase 'the genus list' reads into 'genera'") for n in report["notes"])
    detail = Plan(phases=[*PLAN.phases, Phase(read="each genus page", into="genus_pages", detail_pages=True)])
    report = verify(plan=detail, tables=tables, columns=("species", "status"), step=10, listings=listings)
    assert not report["ok"] and "genus_pages" in report["repair_goal"]


def test_a_listed_result_opened_with_nothing_read_is_opened_and_a_declared_skip_is_noted():
    """Opened is membership of the pages opened from the list's rows (a played run was refused for three results
    opened that held nothing of the kind read); a result the model skips on purpose is declared with a reason, set
    aside and noted; one neither opened nor declared is still refused."""
    tables, listings = _workspace(["A-1", "A-5"])  # A-3 is kept by the derivation, never read
    assert not verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings)["ok"]
    opened = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings,
                    opened=shown([LIST, "http://s/sp/A-3?tab=types"], listings))
    assert opened["ok"], opened["repair_goal"]
    declared = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings,
                      skipped={"http://s/sp/A-3": "withdrawn name, no page of its own"})
    assert declared["ok"], declared["repair_goal"]
    assert "[details] skipped on purpose: http://s/sp/A-3 (withdrawn name, no page of its own)" in declared["notes"]
    other = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings,
                   skipped={"http://s/sp/A-2": "not needed"})
    assert [f["links"] for f in other["failures"]] == [["http://s/sp/A-3"]]


def _filtered_workspace(taken: list[str], opened: list[str], *, filtered: bool) -> tuple[dict, list[Listing]]:
    """A list read with a `where` filter (the agent's choice by the list's own values) into `catalogue`, then the
    pages of some of its rows read into `pages`; the answer is computed from `pages` alone."""
    listing = Listing(step=2, url=LIST, result_set="/catalogue", kind="links",
                      row_links=[f"http://s/sp/{i}" for i in SPECIES],
                      row_cells=[[i, a, c] for i, (a, c) in SPECIES.items()])
    read = ReadRecord(step=3, result_set="/catalogue", pages_covered=[1], pages=1, site_total=None,
                      rows=len(taken), filtered=filtered, complete=True, url=LIST)
    catalogue = [_row({"id": i, "catalogued": SPECIES[i][0]}, LIST, 3) for i in taken]
    tables = {"catalogue": append_rows(None, "catalogue", ["id", "catalogued"], catalogue, read, 3)}
    pages = [_row({"species": SPECIES[i][1], "status": "holotype"}, f"http://s/sp/{i}?tab=types", 5 + n)
             for n, i in enumerate(opened)]
    tables["pages"] = append_rows(None, "pages", ["species", "status"], pages, None, 5)
    tables.update(derive(Derive(sql="SELECT species, status FROM pages ORDER BY 1"), tables=tables,
                         schema=("species", "status"), step=9).tables)
    return tables, [listing]


def test_results_a_filtered_list_read_left_out_are_not_asked_for():
    """The answer uses the list table's rows, not the listing's: a `where` read that took A-1, A-3 and A-5 (by the
    list's own values) needs those three opened, not the two it left out; a kept row left unopened is still
    refused, and an unfiltered read that took three rows proves nothing about the other two."""
    taken = ["A-1", "A-3", "A-5"]
    tables, listings = _filtered_workspace(taken, taken, filtered=True)
    assert _details(tables, listings) == []
    tables, listings = _filtered_workspace(taken, ["A-1", "A-5"], filtered=True)
    assert [m.split(": ")[1] for m in _details(tables, listings)] == ["1 of 5 listed result(s) were not opened"]
    tables, listings = _filtered_workspace(taken, taken, filtered=False)
    assert len(_details(tables, listings)) == 1  # still asked for


def test_finish_advertises_skip_and_dispute_only_while_a_refusal_stands():
    """A refusal tells the model to finish with skip= or dispute=: then finish's schema has them (a played model
    found them in no schema); on every other call they cost nothing."""
    from graph.tools.tool_schemas import tool_schemas

    def fields(repair: bool) -> set[str]:
        (finish,) = tool_schemas(search=False, names={"finish"}, repair=repair)
        return set(finish["function"]["parameters"]["properties"])

    assert {"skip", "dispute"} <= fields(True) and not {"skip", "dispute"} & fields(False)


def test_a_page_shown_but_not_opened_from_its_row_or_read_by_another_phase_is_asked_for():
    """Per phase, not by URL likeness: a sub-page of a result (its availability page) does not open the result,
    and a result page another phase read rows on is that phase's: the phase that skipped it is asked for it."""
    tables, listings = _workspace(["A-1", "A-5"])
    sub = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings,
                 opened=shown([LIST, "http://s/sp/A-3/history"], listings))
    assert [f["links"] for f in sub["failures"]] == [["http://s/sp/A-3"]]
    other = append_rows(None, "notes", ["note"], [_row({"note": "x"}, "http://s/sp/A-3?tab=types", 8)], None, 8)
    elsewhere = verify(plan=PLAN, tables={**tables, "notes": other}, columns=("species", "status"), step=10,
                       listings=listings, opened=shown([LIST, "http://s/sp/A-3?tab=types"], listings))
    assert [(f["table"], f["links"]) for f in elsewhere["failures"]] == [("pages", ["http://s/sp/A-3"])]


def test_a_list_only_looked_at_leaves_the_answers_results_those_opened():
    """A played model picked two of a list's results by eye (the task excluded the others), never read the list
    into a table, and derived the answer from the two pages: the answer's lineage reads no row of that list, so
    its unopened results are a note, not a refusal. Read the list into a phase's table and they are asked for."""
    tables, listings = _filtered_workspace(["A-1", "A-3", "A-5"], ["A-1", "A-5"], filtered=False)
    del tables["catalogue"]
    report = verify(plan=PLAN, tables=tables, columns=("species", "status"), step=10, listings=listings)
    assert report["ok"], report["repair_goal"]
    assert any(n.startswith("[details] table pages: 3 of 5 listed result(s) not opened") for n in report["notes"])
    tables, listings = _filtered_workspace(["A-1", "A-3", "A-5"], ["A-1", "A-5"], filtered=False)
    assert [m.split(": ")[1] for m in _details(tables, listings)] == ["3 of 5 listed result(s) were not opened"]


def test_a_detail_phase_never_read_is_a_note_when_every_listed_result_was_read_under_another():
    """A played plan marked its list phase as reading each result's page ('documents', never read) and read every
    result's order under the next phase ('relief'): no listed result is unopened, so the unread phase is a note;
    leave one result unread and it is refused again."""
    plan = Plan(phases=[Phase(read="the filtered list", into="documents", detail_pages=True),
                        Phase(read="each result's order", into="relief", detail_pages=True)])
    links = [f"http://s/doc/{i}" for i in SPECIES]
    listing = Listing(step=2, url=LIST, result_set="/catalogue", kind="results", row_links=links,
                      row_cells=[[i] for i in SPECIES])

    def report(read: list[str]) -> dict:
        rows = [_row({"respondent": i, "penalty": "$1"}, f"http://s/doc/{i}/order.pdf", 5 + n) for n, i in enumerate(read)]
        tables = {"relief": append_rows(None, "relief", ["respondent", "penalty"], rows, None, 5)}
        tables.update(derive(Derive(sql="SELECT respondent AS species, penalty AS status FROM relief ORDER BY 1"),
                             tables=tables, schema=("species", "status"), step=9).tables)
        return verify(plan=plan, tables=tables, columns=("species", "status"), step=10, listings=[listing])

    every = report(list(SPECIES))
    assert every["ok"], every["repair_goal"]
    assert any("every listed result was read under another phase" in n for n in every["notes"])
    assert not report(list(SPECIES)[:4])["ok"]
