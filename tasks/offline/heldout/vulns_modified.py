"""Held-out vulns task 2: high-severity records of one attacker kind last modified in a half-year (a copy task).

New against the suite and the first held-out set: the date type must STAY on its default, Last modified (a
filter kept at its site default: switching to Published, as most date tasks require, lists another set), with
a keyword naming the attacker, the HIGH severity (MEDIUM records scored just under 7.0 are the near miss),
over several Next pages.
"""

from __future__ import annotations

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft
from tasks.offline.sites.vulns.data import ACTORS, DOMAIN, FAMILY, PAGE_SIZE, PREFIX, VulnData
from tasks.offline.sites.vulns.oracles import SEARCH_URL
from tasks.offline.sites.vulns.search import Query, search

TASK_ID = "offline_heldout_vulns_002"


def choose_query(data: VulnData) -> Query:
    """Two result pages; the Published date type lists another set; a MEDIUM record scored 6.5-6.9 in scope; an
    actor the suite's keyword task does not use."""
    def fits(q: Query) -> bool:
        found = {v.id for v in search(data, q)}
        published = {v.id for v in search(data, Query(keyword=q.keyword, severity=q.severity,
                                                       date_type="published", start=q.start, end=q.end))}
        medium = search(data, Query(keyword=q.keyword, severity="MEDIUM", start=q.start, end=q.end))
        return (PAGE_SIZE < len(found) <= 20 and found != published and any(v.score >= 6.5 for v in medium))

    candidates = (Query(keyword=actor, severity="HIGH", start=f"{y}-{a}", end=f"{y}-{b}")
                  for actor in ACTORS if actor != "a local user"
                  for y in (2023, 2022, 2024) for a, b in (("01-01", "06-30"), ("07-01", "12-31")))
    return first_fit(candidates, fits, "vulns held-out actor and modified window")


def draft(data: VulnData) -> TaskDraft:
    q = choose_query(data)
    found = sorted(search(data, q), key=lambda v: v.id)
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the vulnerability search, enter the keyword \"{q.keyword}\", choose severity HIGH, keep the "
            f"date type on Last modified (do not switch it to Published) and set the range {q.start} to {q.end}; "
            f"read every result page (Next). Report each record's ID, last modified date, score and product "
            f"identifier as listed."
        ),
        goal_instruction=(
            f"Which HIGH-severity vulnerability records whose summary mentions \"{q.keyword}\" were last modified between "
            f"{q.start} and {q.end}, whenever they were published? Give ID, last modified date, score and product."
        ),
        columns=("record_id", "last_modified", "score", "product"),
        rows=[(v.id, v.modified.isoformat(), f"{v.score:.1f}", v.products[0]) for v in found],
        sorting="record_id ascending",
        gates=[f"keyword = {q.keyword}", "severity = HIGH",
               f"date type = Last modified (the default, kept), {q.start}..{q.end}", "all result pages via Next"],
        data_dependency="The filtered record list (every page) supplies the rows.",
        control_dependency="The last-modified criterion keeps the date type; the high-severity criterion decides the "
                           "severity; the Next link how many pages to read.",
        inclusion=[f"\"{q.keyword}\" in the summary", "severity HIGH (score 7.0 to 8.9)",
                   f"last modified {q.start}..{q.end}, any publication date"],
        exclusion=["MEDIUM records (score below 7.0)", "CRITICAL records (9.0 or more)", "records only published (not last modified) in the window"],
        traps=["criterion mismatch: switching the date type to Published lists another set of records",
               "near miss: MEDIUM records scored just under 7.0 with the same keyword and window",
               "dependency not closed: results continue on a second page reached by Next"],
        column_notes={"last_modified": "ISO date as listed", "score": "as listed, one decimal",
                      "product": "the product identifier as listed, vendor:product"},
    )


def walkthrough(data: VulnData) -> list[Step]:
    q = choose_query(data)
    return [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "open the search form"},
        {"tool": "fill", "args": {"target": {"label": "Keyword"}, "value": q.keyword}, "why": "attacker kind"},
        {"tool": "select", "args": {"target": {"label": "Severity"}, "option": "HIGH"}, "why": "severity"},
        {"tool": "set_range", "args": {"start_target": {"label": "From date"}, "end_target": {"label": "To date"},
                                       "start": q.start, "end": q.end},
         "why": "last-modified window (the default date type)"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
        {"tool": "extract_rows", "args": {"columns": {
            "record_id": "ID", "last_modified": "Last modified", "score": "Score", "product": "Product"}},
         "why": "rows as listed"},
        {"tool": "finish", "args": {"order_by": ["record_id"]}, "why": "all pages read"},
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
