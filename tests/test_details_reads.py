"""The detail check counts a result's page read into any table, and its repair goal names tools offered where the
repair happens (graph/checks/details.py, graph/tools/offers.py). A played run of offline_regulatory_004-g (issue 31): the
model marked its result-list phase as reading each result's page (its plan error), read the six pages into
another table, and was refused twice, told to `extract_rows` on PDF pages that do not offer it."""

from __future__ import annotations

import re

import graph.nodes  # noqa: F401  (the nodes before graph.tools.offers, which their actor imports)
from browser.types import Link, Observation, TableData
from graph.checks.details import HOW_TO_OPEN, phase_progress, switch_off_refusal
from graph.checks.finish_checks import verify
from graph.evidence.evidence_tables import append_rows
from graph.evidence.workspace_tools import derive, discard_from
from graph.state import EvidenceRow, Listing, Phase, Plan, Provenance, ReadRecord
from graph.tools.agent_tools import Derive, DiscardRows
from graph.tools.offers import offered_tool_names
from graph.tools.tool_schemas import tool_schemas

LIST = "http://s/enforcement?status=Terminated"
ACTIONS = {"acme-015": "2013-04-02", "bolt-018": "2013-09-10", "crest-047": "2014-05-30"}
PLAN = Plan(phases=[Phase(read="the list of actions", into="actions", detail_pages=True),  # the plan error
                    Phase(read="each action's order", into="orders", detail_pages=True)])
SQL = ("SELECT a.docket, a.filed, o.penalty FROM actions a JOIN orders o ON o.docket = a.docket "
       "JOIN details d ON d.docket = a.docket ORDER BY 1")


def _rows(rows: list[tuple[dict[str, str], str]], step: int) -> list[EvidenceRow]:
    return [EvidenceRow(values=values, provenance=Provenance(url=url, state={}, drift=[], locator="t",
                                                             result_set="", page=None, pages=None, step=step + n))
            for n, (values, url) in enumerate(rows)]


def _table(tables: dict, name: str, rows: list[tuple[dict[str, str], str]], step: int) -> None:
    read = ReadRecord(step=step, result_set=name, pages_covered=[1], pages=1, site_total=None, rows=len(rows),
                      filtered=False, complete=True)
    tables[name] = append_rows(None, name, list(rows[0][0]), _rows(rows, step), read, step)


def _workspace(pages_read: list[str]) -> tuple[dict, list[Listing]]:
    """The list read on the list page into `actions`, each order's PDF (on a path of its own) into `orders`,
    and the results' own pages, `pages_read` of them, into `details` (a table no phase names)."""
    links = [f"http://s/enforcement/{d}" for d in ACTIONS]
    listing = Listing(step=2, url=LIST, result_set="/enforcement", kind="results", row_links=links,
                      row_cells=[[d, f] for d, f in ACTIONS.items()])
    tables: dict = {}
    _table(tables, "actions", [({"docket": d, "filed": f}, LIST) for d, f in ACTIONS.items()], 3)
    _table(tables, "orders", [({"docket": d, "penalty": "$1,000"}, f"http://s/docs/{d}-order.pdf") for d in ACTIONS], 6)
    _table(tables, "details", [({"docket": d, "status": "Terminated"}, f"http://s/enforcement/{d}")
                               for d in pages_read], 10)
    tables.update(derive(Derive(sql=SQL), tables=tables, schema=("docket", "filed", "penalty"), step=20).tables)
    return tables, [listing]


def _details(tables: dict, listings: list[Listing]) -> list[str]:
    report = verify(plan=PLAN, tables=tables, columns=("docket", "filed", "penalty"), step=21,
                            listings=listings)
    return [f["message"] for f in report["failures"] if f["check"] == "details"]


def _missing(docket: str) -> list[str]:
    """Both detail phases' failures: the orders' PDFs (not under the results' links) open none of them."""
    return [f"table {name}: 1 of 3 listed result(s) were not opened: http://s/enforcement/{docket}; {HOW_TO_OPEN}"
            for name in ("actions", "orders")]


def test_a_results_page_read_into_another_table_counts_as_opened():
    tables, listings = _workspace(list(ACTIONS))
    assert _details(tables, listings) == []  # before: "table actions: 3 of 3 listed result(s) were not opened"
    assert phase_progress(PLAN.phases[0], tables, listings) == "3 of 3 listed results opened"
    short, _ = _workspace(["acme-015", "crest-047"])
    assert _details(short, listings) == _missing("bolt-018")
    assert phase_progress(PLAN.phases[0], short, listings) == "2 of 3 listed results opened"


def test_a_read_discarded_since_opens_nothing():
    tables, listings = _workspace(list(ACTIONS))
    tables["details"], gone = discard_from(DiscardRows(table="details", where={"docket": "bolt-018"}),
                                           tables["details"])
    assert gone == 1
    assert _details(tables, listings) == _missing("bolt-018")


def test_switching_the_check_off_is_refused_while_results_read_elsewhere_are_missing():
    """The anti-bypass rule holds under the wider count: the played model's revise_plan (its list phase no longer
    reading each result's page) is taken once every result was read, into whatever table, and refused before."""
    off = Plan(phases=[Phase(read="the list of actions", into="actions"), PLAN.phases[1]])
    short, listings = _workspace(["acme-015", "crest-047"])
    refused = switch_off_refusal(PLAN, off, tables=short, listings=listings, opened=[])
    assert refused and "http://s/enforcement/bolt-018" in refused
    done, _ = _workspace(list(ACTIONS))
    assert switch_off_refusal(PLAN, off, tables=done, listings=listings, opened=[]) is None


def _page(url: str, *, tables: bool = False, pdf_link: bool = False) -> dict:
    """A result's page as the observation shows it: a profile (no table), one with a table, one linking a PDF."""
    return Observation(url=url, title="t", text=f"URL: {url}\n" + "x " * 400, tokens=400,
                       links=[Link(ref="e1", href=f"{url}/order.pdf", text="Consent order")] if pdf_link else [],
                       tables=[TableData(index=0, headers=["a"], rows=[["1"]], total_rows=1)] if tables else [],
                       ).model_dump()


def test_the_details_repair_goal_names_only_tools_offered_where_the_repair_happens():
    """Every tool the goal names is offered on the result pages where it says to use it: read_facts (it opens
    each page itself) on any of them, a page without a table included; read_table / read_pdf on a page with a
    table / a PDF; extract_rows after such a read. Before, the goal named extract_rows alone, not offered on a
    PDF or profile page."""
    all_names = {t["function"]["name"] for t in tool_schemas(search=False)}
    tables, listings = _workspace(["acme-015"])
    goal = "[details] " + _details(tables, listings)[0]
    named = {n for n in all_names if re.search(rf"\b{n}\b", goal)}
    assert named == {"read_facts", "read_table", "read_pdf", "extract_rows", "finish"}  # finish: skip= or dispute=

    def offered(observation: dict, **extra) -> set[str]:
        state = {"observation": observation, "plan": PLAN.model_dump(), "tables": tables, "repair_goal": goal,
                 **extra}
        return offered_tool_names(state, ablated=frozenset(), all_names=all_names)

    result = "http://s/enforcement/bolt-018"
    bare, with_table, with_pdf = offered(_page(result)), offered(_page(result, tables=True)), \
        offered(_page(result, pdf_link=True))
    assert {"read_facts", "finish"} <= bare and "extract_rows" not in bare  # offered on any result page
    assert {"read_facts", "read_table", "extract_rows"} <= with_table and {"read_facts", "read_pdf"} <= with_pdf
    after_pdf = offered(_page(f"{result}/order.pdf"), last_read={"pdf_pages": [], "url": f"{result}/order.pdf"})
    assert {"read_pdf", "extract_rows"} <= after_pdf
    rows_mode = offered(_page(result), plan=Plan(detail_pages=True).model_dump(), tables=None)  # no phases
    assert "read_facts" in rows_mode
