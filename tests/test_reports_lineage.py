"""The HTML report shows, for a derived answer, its SQL and where / in which state each input table was read
(from the run's retrieval_state.json lineage, as written by agent/solve.py)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.reports.write import write_run_reports
from agent.rundir.cells import cell_dir
from graph.evidence import derive
from graph.state import EvidenceRow, Provenance
from graph.tools import Derive
from graph.workspace import append_rows, evidence_rows, lineage
from tests.test_reports_summary import RECORDS, run_dir  # noqa: F401  (fixture)


def _tables():
    rows = [EvidenceRow(values={"name": n, "n": c}, provenance=Provenance(
        url=f"http://site/list?page={p}", state={"agency": "EPA"}, drift=[], locator=f"table 0 row {i}",
        result_set="/list", page=p, pages=2, step=3 + p)) for i, (n, c, p) in enumerate(
        [("a", "2", 1), ("b", "3", 2)])]
    stations = append_rows(None, "stations", ["name", "n"], evidence_rows(rows), None, 4)
    tables = {"stations": stations}
    tables.update(derive(Derive(sql="SELECT name, n || '/' || sum(num(n)) OVER () AS share FROM stations "
                                    "ORDER BY name"), tables=tables, schema=("name", "share"), step=9).tables)
    return tables


def test_lineage_names_the_sql_and_each_input_state():
    lin = lineage(_tables())
    assert lin["sql"].startswith("SELECT name") and lin["rows"] == 2 and lin["step"] == 9
    (stations,) = lin["inputs"]
    assert stations["table"] == "stations" and stations["rows"] == 2 and stations["url_count"] == 2
    assert stations["states"] == [{"agency": "EPA"}] and stations["drifted_rows"] == 0
    assert lineage(_tables(), "stations") is None  # an evidence table has no derivation


def test_report_shows_the_lineage(run_dir: Path):  # noqa: F811
    folder = cell_dir(run_dir, RECORDS[0].key)
    (folder / "retrieval_state.json").write_text(json.dumps({"lineage": lineage(_tables())}))
    write_run_reports(run_dir, html=True)
    html = (run_dir / "report.html").read_text()
    assert html.count('data-role="lineage"') == 1
    assert "n || &#39;/&#39; || sum(num(n))" in html and "agency=EPA" in html and "http://site/list?page=2" in html


def _clamped_tables():
    clamp = {"planned": "1969", "evidence": "'To year' offers 1958..1966"}
    state = {"to": {"label": "To year", "value": "1966", "clamped": clamp}, "q": {"label": "q", "value": ""}}
    row = EvidenceRow(values={"yr": "1966"}, provenance=Provenance(
        url="http://site/st/1", state=state, drift=[], locator="table 0 row 1", result_set="/st/1", page=None,
        pages=None, step=3))
    flow = append_rows(None, "flow", ["yr"], [*evidence_rows([row]), {**evidence_rows([row])[0], "yr": None,
                                                                        "_empty": True}], None, 3)
    tables = {"flow": flow}
    tables.update(derive(Derive(sql="SELECT count(yr) AS n FROM flow"), tables=tables, schema=("n",), step=5).tables)
    return tables


def test_lineage_and_report_show_clamps_and_empty_reads(run_dir: Path):  # noqa: F811
    (flow,) = lineage(_clamped_tables())["inputs"]
    assert flow["states"] == [{"To year": "1966"}]  # labels as the page shows them, set values only
    assert flow["clamps"] == ["To year = '1966' for the plan's '1969': 'To year' offers 1958..1966"]
    assert flow["empty_reads"] == 1
    folder = cell_dir(run_dir, RECORDS[0].key)
    (folder / "retrieval_state.json").write_text(json.dumps({"lineage": lineage(_clamped_tables())}))
    write_run_reports(run_dir, html=True)
    html = (run_dir / "report.html").read_text()
    assert "clamped: To year = &#39;1966&#39; for the plan&#39;s &#39;1969&#39;" in html
    assert "1 read(s) of 0 rows" in html
