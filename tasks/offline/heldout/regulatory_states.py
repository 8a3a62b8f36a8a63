"""Held-out regulatory task 2: one product's complaints from one state, ranked by company over two scopes.

New against the suite and the first held-out set: a product x state cohort over the whole history (the default
date window keeps only the last three years), ranked per company with a tie-break, and compared with the
recent scope (the default window's years) plus each company's first complaint date.
"""

from __future__ import annotations

from collections import defaultdict

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.regulatory.data import (
    ALL_DATES_FROM,
    DEFAULT_WINDOW,
    DOMAIN,
    FAMILY,
    LAST_DAY,
    PREFIX,
    PRODUCTS,
    STATES,
    Complaint,
    RegulatoryData,
)
from tasks.offline.sites.regulatory.oracles import COMPLAINTS_URL
from tasks.offline.sites.regulatory.scripted import complaint_steps
from tasks.offline.sites.regulatory.search import ComplaintQuery, search_complaints

TASK_ID = "offline_heldout_regulatory_002"
RECENT_FROM = DEFAULT_WINDOW[0]


def rows_of(found: list[Complaint]) -> list[tuple[str, ...]]:
    companies: dict[str, list[Complaint]] = defaultdict(list)
    for c in found:
        companies[c.company].append(c)
    out = [(company, str(len(cs)), str(sum(c.received.isoformat() >= RECENT_FROM for c in cs)),
            min(c.received for c in cs).isoformat()) for company, cs in companies.items()]
    return sorted(out, key=lambda r: (-int(r[1]), r[0]))


def choose_query(data: RegulatoryData) -> ComplaintQuery:
    """More than two pages of complaints; several companies; equal totals decided by the name; the default
    window changes the ranking; a company without any recent complaint."""
    def fits(q: ComplaintQuery) -> bool:
        rows = rows_of(search_complaints(data, q))
        recent = rows_of(search_complaints(data, ComplaintQuery(filters=q.filters)))
        totals = [r[1] for r in rows]
        return (6 <= len(rows) <= 12 and len(set(totals)) < len(totals) and any(r[2] == "0" for r in rows)
                and [r[0] for r in rows] != [r[0] for r in recent] and len(search_complaints(data, q)) > 25)

    candidates = (ComplaintQuery(filters=(("product", product), ("state", state)), start=ALL_DATES_FROM,
                                 end=LAST_DAY.isoformat())
                  for state in reversed(STATES) for product in PRODUCTS)
    return first_fit(candidates, fits, "regulatory held-out product and state")


def draft(data: RegulatoryData) -> TaskDraft:
    q = choose_query(data)
    product, state = q.value("product"), q.value("state")
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=COMPLAINTS_URL,
        constraint_instruction=(
            f"In the complaint database (dismiss the cookie banner first), leave the company unset, choose product "
            f"{product} and state {state}, and widen the date-received range to all dates ({q.start} to {q.end}; "
            f"the default is only the last three years). Take every matching complaint (CSV export, or every "
            f"page). Per company report the number of complaints, how many of them were received on or after "
            f"{RECENT_FROM}, and the date received of its earliest complaint."
        ),
        goal_instruction=(
            f"Over the whole history of the complaint database, which companies received {product} complaints from "
            f"consumers in {state}? For each: how many in total, how many since {RECENT_FROM}, and when the first "
            f"one came in. Most complaints first; equal totals alphabetically by company."
        ),
        columns=("company", "complaints", "since_" + RECENT_FROM[:4], "first_received"),
        rows=rows_of(search_complaints(data, q)),
        sorting="complaints descending, then company ascending",
        gates=[f"product = {product}", f"state = {state}",
               f"date received = all dates, {q.start}..{q.end} (default: the last three years)",
               "every matching complaint (CSV export or all pages)"],
        data_dependency="Every matching complaint supplies its company and date received; the answer counts them "
                        "per company in two scopes and takes the earliest date.",
        control_dependency="The whole-history criterion decides the date range; the result count decides how many "
                           "rows must be read.",
        inclusion=[f"product {product}", f"state {state}", "any date received, any company"],
        exclusion=["companies without a matching complaint (no row)"],
        traps=["drift: the date-received range defaults to the last three years (totals = the recent counts, "
               "another ranking, later first dates)",
               "dependency not closed: more complaints than the default 10 rows per page",
               "tie-break: equal totals are ordered by the company name",
               "near miss: a company with complaints only before the recent scope (since count 0)",
               "drift: a complaint page's 'Back to results' link resets every filter"],
        column_notes={
            "complaints": "integer number of matching complaints of that company, all dates",
            "since_" + RECENT_FROM[:4]: f"integer number of them received on or after {RECENT_FROM}, 0 if none",
            "first_received": "ISO date received of the company's earliest matching complaint",
        },
        shape="derived",
        mirrors="CFPB complaint database: a product x state cohort over the full history, ranked by company with "
                "a recent-scope count and the first complaint date",
        phases=("complaint search: product, state, all dates -> every complaint (CSV)",
                "derive: group by company; total, recent count, earliest date; rank with a name tie-break"),
        derived=("complaints", "since_" + RECENT_FROM[:4], "first_received"),
    )


def walkthrough(data: RegulatoryData) -> list[Step]:
    q = choose_query(data)
    sql = (
        "SELECT company, CAST(count(*) AS VARCHAR) AS complaints, "
        f"CAST(count(*) FILTER (WHERE date_received >= '{RECENT_FROM}') AS VARCHAR) AS since_{RECENT_FROM[:4]}, "
        "min(date_received) AS first_received FROM complaints GROUP BY company ORDER BY count(*) DESC, company"
    )
    return [
        *complaint_steps(q),
        {"tool": "download", "args": {"target": {"text": "Export CSV"}}, "why": "every matching row"},
        {"tool": "extract_rows", "args": {"into": "complaints", "columns": {
            "complaint_id": "Complaint ID", "date_received": "Date received", "company": "Company"}},
         "why": "CSV rows"},
        *derive_then_finish(sql, "per company: total, recent count and first date, ranked"),
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
