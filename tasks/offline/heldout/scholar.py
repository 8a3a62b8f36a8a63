"""Held-out scholar task: primary-category papers whose abstract names a method, revised more than once.

New against the suite: the Abstract field (not All fields, which also matches titles) with the cross-listing
box UNticked and the default latest-version basis, then every kept record page for the v1 date, the revision
span and the withdrawal notice.
"""

from __future__ import annotations

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.scholar.data import CATEGORIES, DOMAIN, FAMILY, METHODS, PREFIX, Paper, ScholarData
from tasks.offline.sites.scholar.oracles import SEARCH_URL, choose
from tasks.offline.sites.scholar.scripted import _search_steps
from tasks.offline.sites.scholar.search import Query, search

TASK_ID = "offline_heldout_scholar_001"


def _ids(papers: list[Paper]) -> set[str]:
    return {p.id for p in papers}


def _kept(papers: list[Paper]) -> list[Paper]:
    return [p for p in papers if len(p.versions) >= 2]


def choose_query(data: ScholarData) -> Query:
    """Two result pages; revised papers among them incl. a withdrawn one; the cross-listed scope and the All
    fields scope both list other papers; no category/term of the suite's own scholar tasks."""
    used = {(q.category, q.terms) for q in vars(choose(data)).values()}
    newest = _ids(list(data.papers[:5]))

    def fits(q: Query) -> bool:
        found = search(data, q)
        kept = _kept(found)
        crossed = search(data, Query(terms=q.terms, field=q.field, category=q.category, start=q.start, end=q.end))
        everywhere = search(data, Query(terms=q.terms, category=q.category, cross=False, start=q.start, end=q.end))
        return (11 <= len(found) <= 20 and 4 <= len(kept) <= 9 and any(p.withdrawn for p in kept)
                and _ids(crossed) != _ids(found) and _ids(everywhere) != _ids(found)
                and (q.category, q.terms) not in used and not _ids(found) & newest)

    candidates = (Query(terms=t, field="abstract", category=c, cross=False, start=f"{y}-01-01", end=f"{y}-12-31")
                  for y in (2022, 2021, 2023, 2020) for c in CATEGORIES for t in METHODS)
    return first_fit(candidates, fits, "scholar held-out query")


def rows(data: ScholarData, q: Query) -> list[tuple[str, ...]]:
    kept = _kept(search(data, q))
    span = {p.id: (p.latest_day - p.first_day).days for p in kept}
    return [(p.id, p.first_day.isoformat(), f"v{len(p.versions)}", str(span[p.id]), "YES" if p.withdrawn else "NO")
            for p in sorted(kept, key=lambda p: (-span[p.id], p.id))]


def draft(data: ScholarData) -> TaskDraft:
    q = choose_query(data)
    year, cat = q.start[:4], f"{q.category} ({CATEGORIES[q.category]})"
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the scholarly archive's advanced search, search the Abstract field only (not Title, not All fields) "
            f"for \"{q.terms}\", category {cat} with 'Include cross-listed papers' UNTICKED (primary category "
            f"{q.category} only), and keep the date filter on the latest version with the range {q.start} to "
            f"{q.end}. Read every result page. Keep the papers with at least two versions and open each kept "
            f"record page: report the identifier, the date of v1 from the submission history, the latest version "
            f"as v<N>, revision_span_days = days from the v1 date to the latest version's date, and withdrawn = YES "
            f"if the record page says the paper has been withdrawn, else NO."
        ),
        goal_instruction=(
            f"Among the papers whose primary category is {q.category}, whose abstract mentions \"{q.terms}\" and "
            f"whose current version dates from {year}, which were revised at least once? For each give the original "
            f"submission date, the latest version, how many days separate the two, and whether it was withdrawn."
        ),
        columns=("arxiv_id", "v1_date", "latest_version", "revision_span_days", "withdrawn"),
        rows=rows(data, q),
        sorting="revision_span_days descending (numeric), then arxiv_id ascending",
        gates=[f"Abstract field contains \"{q.terms}\" (default: All fields)",
               f"category = {q.category}, cross-listed excluded (default: included)",
               f"latest version {q.start}..{q.end}", "all result pages",
               "every kept record page (submission history, withdrawal notice)"],
        data_dependency="The result list (all pages) names the papers and their version counts; each record page "
                        "supplies the v1 date and the withdrawal notice the answer is computed from.",
        control_dependency="The abstract-only criterion decides the term field; the primary-category criterion "
                           "decides the cross-listing box; the version count decides which record pages to open.",
        inclusion=[f"primary category {q.category}", f"\"{q.terms}\" in the abstract",
                   f"latest version dated {q.start}..{q.end}", "at least two versions"],
        exclusion=[f"papers only cross-listed in {q.category}", f"papers with \"{q.terms}\" only in the title",
                   "papers with a single version"],
        traps=["criterion mismatch: the term field defaults to All fields, which also matches titles",
               "criterion mismatch: 'Include cross-listed papers' is ticked by default",
               "dependency not closed: results continue on page 2; the v1 date and the withdrawal notice are only "
               "on record pages",
               "in-page misreading: the record header and the result list show the latest version's date, not v1"],
        column_notes={
            "v1_date": "ISO date of [v1] in the submission history",
            "latest_version": "'v<N>', N the number of versions",
            "revision_span_days": "integer days from the v1 date to the latest version's date",
            "withdrawn": "YES if the record page carries the withdrawal notice, else NO",
        },
        shape="derived",
        mirrors="Scholarly: a term in one field, primary category only, latest-version window; per revised record "
                "the original date, the revision span and a status flag from the record page",
        phases=("search the term in the Abstract field, primary category only, latest-version window; every page",
                "keep the papers with two or more versions; open each record page: history and notice",
                "derive: v1 date, latest version, span in days, withdrawn flag; order by span"),
        derived=("v1_date", "latest_version", "revision_span_days", "withdrawn"),
    )


def walkthrough(data: ScholarData) -> list[Step]:
    q = choose_query(data)
    identifier = r"re:Identifier: (\d{4}\.\d{5})"
    steps: list[Step] = [
        *_search_steps(q),
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span two pages"},
        {"tool": "extract_rows", "args": {"into": "listed", "columns": {"arxiv_id": "Identifier",
                                                                       "versions": "Versions"}},
         "why": "the version count picks the records to open"},
    ]
    for paper in _kept(search(data, q)):
        steps += [
            {"tool": "read_facts", "args": {
                "url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/abs/{paper.id}", "into": "records",
                "fields": {"arxiv_id": identifier, "comments": "Comments"}},
             "why": "record page: the comments say whether it was withdrawn"},
            {"tool": "extract_rows", "args": {
                "into": "versions", "source": "page_text",
                "pattern": r"\[v(?P<version>\d+)\] (?P<day>\d{4}-\d{2}-\d{2})",
                "columns": {"arxiv_id": identifier, "version": "version", "day": "day"}},
             "why": "every version of the submission history"},
        ]
    sql = (
        "WITH v AS (SELECT arxiv_id, CAST(version AS INTEGER) AS n, CAST(day AS DATE) AS d FROM versions), "
        "s AS (SELECT arxiv_id, max(n) AS n, min(d) AS first_day, max(d) AS last_day FROM v GROUP BY arxiv_id "
        "HAVING max(n) >= 2) "
        "SELECT s.arxiv_id, CAST(s.first_day AS VARCHAR) AS v1_date, 'v' || CAST(s.n AS VARCHAR) AS latest_version, "
        "CAST(date_diff('day', s.first_day, s.last_day) AS VARCHAR) AS revision_span_days, "
        "CASE WHEN lower(r.comments) LIKE '%withdrawn%' THEN 'YES' ELSE 'NO' END AS withdrawn "
        "FROM s JOIN records r USING (arxiv_id) "
        "ORDER BY date_diff('day', s.first_day, s.last_day) DESC, s.arxiv_id"
    )
    return [*steps, *derive_then_finish(sql, "span, latest version and withdrawal flag per revised paper")]

__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
