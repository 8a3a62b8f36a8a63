"""Held-out regulatory task: one company's complaints about one product, counted per year over all dates.

New against the suite: a per-year aggregation of the whole history (the default date window keeps only the
last three years) with a conditional count whose response value has a near-miss twin.
"""

from __future__ import annotations

from collections import Counter

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.regulatory.data import (
    ALL_DATES_FROM,
    COMPANIES,
    DEFAULT_WINDOW,
    DOMAIN,
    FAMILY,
    LAST_DAY,
    PREFIX,
    PRODUCTS,
    Complaint,
    RegulatoryData,
)
from tasks.offline.sites.regulatory.oracles import COMPLAINTS_URL, choose
from tasks.offline.sites.regulatory.scripted import complaint_steps
from tasks.offline.sites.regulatory.search import ComplaintQuery, search_complaints

TASK_ID = "offline_heldout_regulatory_001"
RELIEF, NEAR_MISS = "Closed with monetary relief", "Closed with non-monetary relief"


def rows_of(found: list[Complaint]) -> list[tuple[str, ...]]:
    per_year = Counter(c.received.year for c in found)
    relief = Counter(c.received.year for c in found if c.response == RELIEF)
    return [(str(y), str(per_year[y]), str(relief[y])) for y in sorted(per_year)]


def choose_query(data: RegulatoryData) -> ComplaintQuery:
    """A company the suite's complaint tasks do not use; most years before the default window; some years
    without monetary relief; the non-monetary near-miss present."""
    c = choose(data)
    used = {c.history_query.value("company"), c.relief_query.value("company")}

    def fits(q: ComplaintQuery) -> bool:
        found = search_complaints(data, q)
        rows = rows_of(found)
        old = [r for r in rows if r[0] < DEFAULT_WINDOW[0][:4]]
        return (9 <= len(rows) <= 12 and len(old) >= 6 and sum(r[2] == "0" for r in rows) >= 2
                and any(r[2] != "0" for r in old) and sum(x.response == NEAR_MISS for x in found) >= 3)

    candidates = (ComplaintQuery(filters=(("product", product), ("company", company)), start=ALL_DATES_FROM,
                                 end=LAST_DAY.isoformat())
                  for company in COMPANIES if company not in used for product in PRODUCTS)
    return first_fit(candidates, fits, "regulatory held-out company and product")


def draft(data: RegulatoryData) -> TaskDraft:
    q = choose_query(data)
    company, product = q.value("company"), q.value("product")
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=COMPLAINTS_URL,
        constraint_instruction=(
            f"In the complaint database (dismiss the cookie banner first), choose company {company} and product "
            f"{product}, and widen the date-received range to all dates ({q.start} to {q.end}; the default is only "
            f"the last three years). Take every matching complaint (CSV export, or every page). Per year of the "
            f"date received report the number of complaints and how many of them have the company response "
            f"'{RELIEF}' (0 if none; '{NEAR_MISS}' does not count)."
        ),
        goal_instruction=(
            f"Year by year, over the whole history of the complaint database, how many {product} complaints were "
            f"filed against {company}, and how many of them closed with monetary relief? List only the years with "
            f"at least one such complaint."
        ),
        columns=("year", "complaints", "monetary_relief"),
        rows=rows_of(search_complaints(data, q)),
        sorting="year ascending",
        gates=[f"company = {company} (custom dropdown)", f"product = {product}",
               f"date received = all dates, {q.start}..{q.end} (default: the last three years)",
               "every matching complaint (CSV export or all pages)"],
        data_dependency="Every matching complaint supplies its date received and company response; the answer "
                        "counts them per year.",
        control_dependency="The whole-history criterion decides the date range; the result count decides how many "
                           "rows must be read.",
        inclusion=[f"company {company}", f"product {product}", "any date received",
                   f"monetary_relief counts only '{RELIEF}'"],
        exclusion=["years without any complaint (no row)", f"'{NEAR_MISS}' in the monetary_relief count"],
        traps=["drift: the date-received range defaults to the last three years, dropping most years",
               f"criterion mismatch: '{NEAR_MISS}' is a near-miss response",
               "dependency not closed: more complaints than the default 10 rows per page",
               "drift: a complaint page's 'Back to results' link resets every filter"],
        column_notes={
            "year": "calendar year of the date received, YYYY",
            "complaints": "integer number of matching complaints received that year",
            "monetary_relief": f"integer number of them with company response '{RELIEF}', 0 if none",
        },
        shape="derived",
        mirrors="CFPB complaint database: a company x product cohort over the full history, counted per year with "
                "a conditional count on the company response",
        phases=("complaint search: company, product, all dates -> every complaint (CSV)",
                "derive: group by year received; count all and those closed with monetary relief"),
        derived=("complaints", "monetary_relief"),
    )


def walkthrough(data: RegulatoryData) -> list[Step]:
    q = choose_query(data)
    sql = (
        "SELECT substr(date_received, 1, 4) AS year, CAST(count(*) AS VARCHAR) AS complaints, "
        f"CAST(count(*) FILTER (WHERE response = '{RELIEF}') AS VARCHAR) AS monetary_relief "
        "FROM complaints GROUP BY 1 ORDER BY 1"
    )
    return [
        *complaint_steps(q),
        {"tool": "download", "args": {"target": {"text": "Export CSV"}}, "why": "every matching row"},
        {"tool": "extract_rows", "args": {"into": "complaints", "columns": {
            "complaint_id": "Complaint ID", "date_received": "Date received", "response": "Company response"}},
         "why": "CSV rows"},
        *derive_then_finish(sql, "per-year counts and the monetary-relief count"),
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
