"""The deterministic extractor: column mapping, filters, shared values, PDF patterns, provenance on and off."""

from __future__ import annotations

import pytest

from browser.delta import render_observation
from graph.evidence.row_extraction import ExtractionError, extract
from graph.state import RetrievalState, StateValue
from graph.tools.agent_tools import ExtractRows

URL = "http://x/results?agency=epa&page=2"
OBSERVATION = {
    "url": URL, "outline": ["# Station Lake Vale (ST-77)", "..."], "outline_total": 2, "result_count": 3,
    "pagination": {"page": 2, "pages": 2, "total": 3},
    "tables": [{"index": 0, "headers": ["ID", "Agency name", "Year"], "rows": [["A1", "EPA", "2020"],
                                                                         ["A2", "EPA", "2021"],
                                                                         ["A3", "FDA", "2021"]],
                "total_rows": 3}],
}
RETRIEVAL = RetrievalState(url=URL, path="/results", page=2, pages=2, result_count=3, step=4, values={
    "agency": StateValue(value="EPA", label="Agency", evidence=["url"], set_at_step=2, set_by="select"),
    "sort": StateValue(value="", label="Sort", evidence=["control"], set_at_step=None, set_by=None)})


def run(args: ExtractRows, columns=("id", "agency", "year"), *, provenance=True, last_read=None, flags=None,
        observation=None):
    observation = observation or OBSERVATION
    return extract(args, columns=columns, observation=observation, last_read=last_read, retrieval=RETRIEVAL,
                   drift_flags=flags or [], provenance=provenance, step=5,
                   page_text=lambda: render_observation(observation, 1500).text)  # as the page is shown


def test_headers_map_to_columns_with_provenance():
    result = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "year"}))
    assert [r["values"] for r in result.rows][0] == {"id": "A1", "agency": "EPA", "year": "2020"}
    prov = result.rows[1]["provenance"]
    assert prov["state"] == {"agency": {"label": "Agency", "value": "EPA"}, "sort": {"label": "Sort", "value": ""}}
    assert prov["url"] == URL
    assert prov["locator"] == "table 0 row 2 (page 2 of 2)" and prov["result_set"] == "/results?agency=epa"
    assert result.record["site_total"] == 3 and result.record["pages_covered"] == [2]


def test_where_keeps_exact_matches_and_marks_the_read_filtered():
    result = run(ExtractRows(columns={"id": "ID", "agency": "Agency name", "year": "Year"}, where={"Year": "2021"}))
    assert [r["values"]["id"] for r in result.rows] == ["A2", "A3"]
    assert result.record["filtered"]


def test_shared_values_from_page_text_and_url():
    result = run(ExtractRows(columns={"id": r"re:\((ST-\d+)\)", "agency": "url:agency", "year": "Year"}))
    assert {r["values"]["id"] for r in result.rows} == {"ST-77"}
    assert {r["values"]["agency"] for r in result.rows} == {"epa"}


def test_a_regex_on_a_header_reads_each_rows_own_cell():
    """`re:<header>:<regex>` matches in that row's cell (two players' `re:` gave every row the page's first match);
    a row whose cell has no match gets nothing, and `where` filters on the matched value."""
    result = run(ExtractRows(columns={"id": r"re:ID:A(\d)", "agency": r"re:Agency name:^[A-Z]", "year": "Year"}))
    assert [(r["values"]["id"], r["values"]["agency"]) for r in result.rows] == [("1", "E"), ("2", "E"), ("3", "F")]
    missing = run(ExtractRows(columns={"id": r"re:Year:19\d\d", "agency": "Agency", "year": "Year"}))
    assert {r["values"]["id"] for r in missing.rows} == {""}
    kept = run(ExtractRows(columns={"id": r"re:ID:A(\d)", "agency": "Agency", "year": "Year"}, where={"id": "3"}))
    assert [r["values"]["year"] for r in kept.rows] == ["2021"]
    page_wide = run(ExtractRows(columns={"id": r"re:\(ST:?-(\d+)\)", "agency": "Agency", "year": "Year"}))
    assert {r["values"]["id"] for r in page_wide.rows} == {"77"}  # '\(ST' is no header: the page text's first match
    with pytest.raises(ExtractionError, match="does not compile"):
        run(ExtractRows(columns={"id": "re:ID:(", "agency": "Agency", "year": "Year"}))


def test_latest_read_table_wins_and_all_pages_count_only_when_rows_add_up():
    table = {**OBSERVATION["tables"][0], "rows": OBSERVATION["tables"][0]["rows"][:2]}
    partial = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
                  last_read={"table": table, "table_index": 0, "all_pages": True})
    assert len(partial.rows) == 2 and partial.record["pages_covered"] == [2] and not partial.record["complete"]
    full = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
               last_read={"table": OBSERVATION["tables"][0], "table_index": 0, "all_pages": True})
    assert full.record["pages_covered"] == [1, 2] and full.record["complete"]


def test_pdf_pattern_rows_carry_their_page():
    pages = [{"page": 1, "text": "intro"}, {"page": 3, "text": "Region North revenue 120.\nRegion South revenue 95."}]
    result = run(ExtractRows(source="pdf", pattern=r"Region (?P<region>\w+) revenue (?P<amount>\d+)",
                             columns={"id": "region", "agency": "url:agency", "year": "amount"}),
                 last_read={"pdf_pages": pages})
    # the PDF's page, not the HTML pager's, is the row's `_page`
    assert [(r["values"]["id"], r["values"]["year"], r["provenance"]["locator"], r["provenance"]["page"])
            for r in result.rows] == [("North", "120", "pdf page 3", 3), ("South", "95", "pdf page 3", 3)]


def test_provenance_ablation_drops_the_state_snapshot():
    result = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}), provenance=False,
                 flags=[{"rule": "gate_lost", "gate": "agency", "path": "/results"}])
    assert result.rows[0]["provenance"]["state"] is None and result.rows[0]["provenance"]["drift"] == []
    kept = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
               flags=[{"rule": "gate_lost", "gate": "agency", "path": "/results"}])
    assert kept.rows[0]["provenance"]["drift"] == ["gate_lost:agency"]


@pytest.mark.parametrize(("args", "message"), [
    (ExtractRows(columns={"id": "Identifier"}), r"column 'id': no header 'Identifier'; headers are \['ID'"),
    (ExtractRows(table=3, columns={"id": "ID"}), "no table 3: the page shows 1 table"),
    (ExtractRows(source="pdf", columns={"id": "x"}), "needs a `pattern`"),
    (ExtractRows(source="pdf", pattern="(?P<x>.)", columns={"id": "x"}), "no PDF was read"),
    (ExtractRows(columns={"id": "re:("}), r"regex '\(' does not compile"),
])
def test_mapping_errors_tell_the_actor_what_exists(args: ExtractRows, message: str):
    with pytest.raises(ExtractionError, match=message):
        run(args, columns=("id",))


def test_a_page_count_is_not_a_second_tables_total():
    observation = {**OBSERVATION, "pagination": None, "tables": [
        OBSERVATION["tables"][0], {**OBSERVATION["tables"][0], "index": 1, "rows": [["Z9", "EPA", "2022"]]}]}
    result = extract(ExtractRows(table=1, columns={"id": "ID", "agency": "Agency", "year": "Year"}),
                     columns=("id", "agency", "year"), observation=observation, last_read=None, retrieval=RETRIEVAL,
                     drift_flags=[], provenance=True, step=5)
    assert result.record["site_total"] is None
    assert run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"})).record["site_total"] == 3


# ---------------------------------------------------------------- issue 27: sources and the default table


LINKED = {"headers": ["County", "Population"], "rows": [["Cedar County", "1,204"], ["Ash County", "880"]],
          "row_links": [["/p/C-01", "/x"], ["/p/A-02"]],
          "cell_links": [[[{"text": "Cedar County", "href": "/p/C-01", "ref": "e4"}], [{"text": "1,204", "href": "/x", "ref": ""}]],
                         [[{"text": "Ash County", "href": "/p/A-02", "ref": "e5"}], []]],
          "total_rows": 2}


def test_link_source_takes_the_url_of_the_cells_link():
    result = run(ExtractRows(columns={"id": "County", "agency": "link:County", "year": "link:Population"}),
                 last_read={"table": LINKED, "table_index": 0})
    assert [(r["values"]["id"], r["values"]["agency"], r["values"]["year"]) for r in result.rows] == [
        ("Cedar County", "http://x/p/C-01", "http://x/x"), ("Ash County", "http://x/p/A-02", "")]


def test_link_source_on_a_card_list_takes_the_rows_first_link():
    cards = {**LINKED, "cell_links": []}
    result = run(ExtractRows(columns={"id": "County", "agency": "link:County", "year": "Population"}),
                 last_read={"table": cards, "table_index": 0})
    assert [r["values"]["agency"] for r in result.rows] == ["http://x/p/C-01", "http://x/p/A-02"]


def test_without_table_the_table_last_read_is_taken():
    """read_table(table=2) then extract_rows without `table`: table 2's rows, not the observation's table 0."""
    result = run(ExtractRows(columns={"id": "County", "agency": "Population", "year": "url:agency"}),
                 last_read={"table": LINKED, "table_index": 2})
    assert [r["values"]["id"] for r in result.rows] == ["Cedar County", "Ash County"]
    assert result.rows[0]["provenance"]["locator"].startswith("table 2 row 1")
    with pytest.raises(ExtractionError, match="no table 3"):
        run(ExtractRows(table=3, columns={"id": "County", "agency": "Population", "year": "url:agency"}),
            last_read={"table": LINKED, "table_index": 2})


@pytest.mark.parametrize(("source", "value"), [("path:1", "vulns"), ("path:-1", "CVE-2021-0001"),
                                                ("path:2", "detail"), ("path:9", "")])
def test_path_source_reads_a_url_path_segment(source, value):
    observation = {**OBSERVATION, "url": "http://site/vulns/detail/CVE-2021-0001?tab=1"}
    result = run(ExtractRows(columns={"id": "ID", "agency": source, "year": "Year"}), observation=observation)
    assert {r["values"]["agency"] for r in result.rows} == {value}


def test_path_source_needs_a_number():
    with pytest.raises(ExtractionError, match="segment number"):
        run(ExtractRows(columns={"id": "ID", "agency": "path:last", "year": "Year"}))


def test_rows_a_read_could_not_take_are_counted():
    """An all-pages read holding fewer rows than the site counts, or a one-page table short of the count, says
    how many it could not take, a read filtered by `where` too (the filter ran on the part the table held: a
    faulted real path lost rows this way unseen); a page of a paged set read alone does not (the [pages] check
    owns that)."""
    table = {**OBSERVATION["tables"][0], "rows": OBSERVATION["tables"][0]["rows"][:2]}
    partial = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
                  last_read={"table": table, "table_index": 0, "all_pages": True})
    assert partial.record["untaken"] == 1
    one_page = {**OBSERVATION, "pagination": None, "result_count": 12}
    assert run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
               observation=one_page).record["untaken"] == 9
    paged = {**OBSERVATION, "pagination": {"page": 1, "pages": 4, "total": 12}, "result_count": 12}
    assert "untaken" not in run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}),
                                observation=paged).record
    assert run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"},
                           where={"Year": "2021"}), observation=one_page).record["untaken"] == 9


def test_an_empty_read_is_no_row_in_the_count_a_reply_gives():
    """A read of 0 rows leaves a marker row (read, none); the reply's count of the rows held leaves it out."""
    from graph.evidence.workspace_tools import ReadContext, extract_into

    empty = {**OBSERVATION, "tables": [], "result_count": 0, "pagination": None, "outline": ["No results."]}
    ctx = ReadContext(observation=empty, last_read=None, retrieval=RETRIEVAL, drift_flags=[], provenance=True, step=5)
    written = extract_into(ExtractRows(into="hits", columns={"id": "ID"}), ctx, schema=("id",), tables={},
                           page_facts=None)
    assert written.message.startswith("extracted 0 row(s) into hits (read, none") and "(0 now)" in written.message
    assert len(written.tables["hits"]["rows"]) == 1 and written.tables["hits"]["rows"][0]["empty"]


def test_a_table_the_browser_cut_at_a_row_cap_is_recorded_as_truncated():
    """Where the page states no total, the browser's own fact that it cut the table (`truncated`) is what says
    rows were lost: the read records it, and its reply says so."""
    table = {**OBSERVATION["tables"][0], "truncated": True}
    no_total = {**OBSERVATION, "pagination": None, "result_count": None}
    cut = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}), observation=no_total,
              last_read={"table": table, "table_index": 0})
    assert cut.record.get("truncated") is True and "untaken" not in cut.record
    whole = run(ExtractRows(columns={"id": "ID", "agency": "Agency", "year": "Year"}), observation=no_total,
                last_read={"table": {**table, "truncated": False}, "table_index": 0})
    assert "truncated" not in whole.record
