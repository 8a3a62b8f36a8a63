"""The HTML report shows, for a derived answer, its SQL and where / in which state each input table was read
(from the run's retrieval_state.json lineage, as written by agent/solve.py)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.reports.write import write_run_reports
from agent.rundir.atomic import write_json_atomic
from agent.rundir.cells import cell_dir
from graph.evidence.evidence_tables import append_rows, lineage
from graph.evidence.workspace_tools import derive
from graph.state import EvidenceRow, Provenance
from graph.tools.agent_tools import Derive
from tests.test_reports_summary import RECORDS, run_dir  # noqa: F401  (fixture)


def _tables():
    rows = [EvidenceRow(values={"name": n, "n": c}, provenance=Provenance(
        url=f"http://site/list?page={p}", state={"agency": "EPA"}, drift=[], locator=f"table 0 row {i}",
        result_set="/list", page=p, pages=2, step=3 + p)) for i, (n, c, p) in enumerate(
        [("a", "2", 1), ("b", "3", 2)])]
    stations = append_rows(None, "stations", ["name", "n"], rows, None, 4)
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
    flow = append_rows(None, "flow", ["yr"], [row, EvidenceRow(values={"yr": None}, provenance=row["provenance"],
                                                                empty=True)], None, 3)
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


def test_report_shows_the_verifiers_notes_of_a_copied_answer(tmp_path: Path):
    """A clamp accepted on rows copied into the answer (no derivation, so no lineage) is shown too."""
    note = "[gate] clamped, accepted: End = '2010': End = '2008' ('End' offers 2001..2008)"
    record = RECORDS[0].model_copy(update={"outcome": RECORDS[0].outcome.model_copy(update={
        "verifier_reports": [{"step": 9, "ok": True, "failures": [], "repair_goal": None, "notes": [note]}]})})
    write_json_atomic(cell_dir(tmp_path, record.key) / "cell.json", record.model_dump(mode="json"))
    write_run_reports(tmp_path, html=True)
    html = (tmp_path / "report.html").read_text()
    assert html.count('data-role="verifier-note"') == 1 and "clamped, accepted: End = &#39;2010&#39;" in html
