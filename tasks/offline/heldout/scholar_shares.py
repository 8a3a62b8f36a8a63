"""Held-out scholar task 2: a title term in one category incl. cross-listings, split by primary category.

New against the suite and the first held-out set: the cross-listing box must STAY ticked (a filter kept at its
site default: unticking keeps only one primary category), the date basis switched to the original submission,
every result page, then a per-group count and a share a/b of revised papers per primary category.
"""

from __future__ import annotations

from collections import defaultdict

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.scholar.data import CATEGORIES, DOMAIN, FAMILY, METHODS, PREFIX, Paper, ScholarData
from tasks.offline.sites.scholar.oracles import SEARCH_URL, choose
from tasks.offline.sites.scholar.scripted import _search_steps
from tasks.offline.sites.scholar.search import Query, search

TASK_ID = "offline_heldout_scholar_002"


def rows_of(found: list[Paper]) -> list[tuple[str, ...]]:
    groups: dict[str, list[Paper]] = defaultdict(list)
    for p in found:
        groups[p.primary].append(p)
    out = [(cat, str(len(ps)), f"{sum(len(p.versions) >= 2 for p in ps)}/{len(ps)}") for cat, ps in groups.items()]
    return sorted(out, key=lambda r: (-int(r[1]), r[0]))


def choose_query(data: ScholarData) -> Query:
    """Two or three result pages; cross-listed papers of several other primary categories, none a majority, the
    top two tied (the name decides); the latest-version
    basis and the All-fields scope each change the table; no category/term of the suite's scholar tasks."""
    used = {(q.category, q.terms) for q in vars(choose(data)).values()}

    def fits(q: Query) -> bool:
        found = search(data, q)
        rows = rows_of(found)
        latest = rows_of(search(data, Query(terms=q.terms, field=q.field, category=q.category, start=q.start,
                                            end=q.end)))
        everywhere = rows_of(search(data, Query(terms=q.terms, category=q.category, basis=q.basis, start=q.start,
                                                end=q.end)))
        return (11 <= len(found) <= 30 and 4 <= len(rows) <= 8 and 2 * int(rows[0][1]) <= len(found)
                and rows[0][1] == rows[1][1] and rows != latest and rows != everywhere
                and (q.category, q.terms) not in used)

    candidates = (Query(terms=t, field="title", category=c, basis="original", start=f"{y}-01-01", end=f"{y}-12-31")
                  for y in (2022, 2020, 2023, 2021) for c in CATEGORIES for t in METHODS)
    return first_fit(candidates, fits, "scholar held-out title term by primary category")


def draft(data: ScholarData) -> TaskDraft:
    q = choose_query(data)
    year, cat = q.start[:4], f"{q.category} ({CATEGORIES[q.category]})"
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the scholarly archive's advanced search, search the Title field only for \"{q.terms}\", category "
            f"{cat} with 'Include cross-listed papers' left TICKED (papers cross-listed in {q.category} count too), "
            f"date basis 'Original submission (v1)' with the range {q.start} to {q.end}. Read every result page. "
            f"Group the listed papers by their Primary category and report per primary category the number of "
            f"papers and revised_share = a/b, a the papers with two or more versions, b the papers of the group."
        ),
        goal_instruction=(
            f"Papers first submitted in {year} with \"{q.terms}\" in the title that are listed in {q.category}, "
            f"primarily or as a cross-listing: how many does each primary category contribute, and what share of "
            f"them (as a/b) has been revised at least once?"
        ),
        columns=("primary_category", "papers", "revised_share"),
        rows=rows_of(search(data, q)),
        sorting="papers descending, then primary_category ascending",
        gates=[f"Title field contains \"{q.terms}\" (default: All fields)",
               f"category = {q.category}, cross-listed included (the default, kept)",
               f"date basis = original submission (v1), {q.start}..{q.end} (default: latest version)",
               "all result pages"],
        data_dependency="The result list (all pages) supplies each paper's primary category and version count; "
                        "the answer counts them per primary category.",
        control_dependency="The title criterion decides the term field; the cross-listing criterion keeps the box "
                           "ticked; the first-submission criterion decides the date basis.",
        inclusion=[f"\"{q.terms}\" in the title", f"listed in {q.category} (primary or cross-listed)",
                   f"v1 dated {q.start}..{q.end}"],
        exclusion=[f"papers with \"{q.terms}\" only in the abstract", "papers whose v1 lies outside the window"],
        traps=["criterion mismatch: unticking 'Include cross-listed papers' leaves only the primary category",
               "drift: the date basis defaults to the latest version, which lists another set",
               "criterion mismatch: the term field defaults to All fields, which adds abstract matches",
               "dependency not closed: results continue on page 2",
               "tie-break: the two largest groups have equal counts (the category name decides)"],
        column_notes={
            "primary_category": "the Primary category as listed, e.g. cs.LG",
            "papers": "integer number of listed papers with that primary category",
            "revised_share": "a/b: papers with Versions >= 2 over the group's papers, unreduced, e.g. 2/6",
        },
        shape="derived",
        mirrors="Scholarly: a title term in a category with its cross-listings over a first-submission year, "
                "broken down by primary category with a share a/b of revised papers",
        phases=("search the term in the Title field, cross-listed kept, v1 window; every result page",
                "derive: group by primary category; count and the revised share a/b"),
        derived=("papers", "revised_share"),
    )


def walkthrough(data: ScholarData) -> list[Step]:
    q = choose_query(data)
    sql = (
        "SELECT primary_category, CAST(count(*) AS VARCHAR) AS papers, "
        "CAST(count(*) FILTER (WHERE CAST(versions AS INTEGER) >= 2) AS VARCHAR) || '/' || "
        "CAST(count(*) AS VARCHAR) AS revised_share FROM listed GROUP BY primary_category "
        "ORDER BY count(*) DESC, primary_category"
    )
    return [
        *_search_steps(q),
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span several pages"},
        {"tool": "extract_rows", "args": {"into": "listed", "columns": {
            "arxiv_id": "Identifier", "primary_category": "Primary category", "versions": "Versions"}},
         "why": "primary category and version count of every listed paper"},
        *derive_then_finish(sql, "per primary category: papers and the revised share"),
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
