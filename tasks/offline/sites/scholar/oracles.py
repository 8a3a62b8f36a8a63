"""The archive's tasks: each search chosen from the data, its oracle rows and both record wordings."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites import _census as census
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites.scholar.data import (
    ABSTRACT_TERMS,
    CATEGORIES,
    DOMAIN,
    FAMILY,
    METHODS,
    PREFIX,
    Paper,
    ScholarData,
    Version,
)
from tasks.offline.sites.scholar.search import Query, search

SEARCH_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/search"


def _ids(papers: list[Paper]) -> set[str]:
    return {p.id for p in papers}


@dataclass(frozen=True)
class Chosen:
    """The searches behind the base tasks, chosen from the data so that cardinality and traps hold."""

    primary_query: Query  # 001: primary only, original-submission dates
    paged_query: Query  # 002: abstract terms, cross-listed included, two result pages
    history_query: Query  # 003: detail pages for the v1 date
    trail_query: Query  # 004: v1 window, record pages, next-year version and publication trail (derived)


def _first_fit(candidates, fits) -> Query:
    for query in candidates:
        if fits(query):
            return query
    raise ValueError("scholar: this seed gives no task search with the required cardinality and traps")


def choose(data: ScholarData) -> Chosen:
    """Each task gets its own category; the newest papers (on the home page) are never in an answer."""
    windows = [(f"{y}-01-01", f"{y}-12-31") for y in (2021, 2020, 2022, 2019)]
    grid = [(start, end, cat) for start, end in windows for cat in CATEGORIES]

    def primary_fits(q: Query) -> bool:
        found = _ids(search(data, q))
        drifted = _ids(search(data, Query(terms=q.terms, field="title", category=q.category, start=q.start, end=q.end)))
        return 4 <= len(found) <= 9 and len(drifted - found) >= 2 and len(found - drifted) >= 1

    primary = _first_fit((Query(terms=t, field="title", category=c, cross=False, basis="original", start=s, end=e)
                          for s, e, c in grid for t in METHODS), primary_fits)

    def paged_fits(q: Query) -> bool:
        found = _ids(search(data, q))
        by_title = _ids(search(data, Query(terms=q.terms, field="title", category=q.category, start=q.start, end=q.end)))
        return 13 <= len(found) <= 19 and found != by_title

    paged = _first_fit((Query(terms=t, field="abstract", category=c, start=s, end=e)
                        for s, e, c in grid if c != primary.category for t in ABSTRACT_TERMS), paged_fits)

    def history_fits(q: Query) -> bool:
        found = search(data, q)
        revised = [p for p in found if len(p.versions) > 1 and p.first_day.year != p.latest_day.year]
        return 4 <= len(found) <= 9 and len(revised) >= 2

    used = {primary.category, paged.category}
    history = _first_fit((Query(terms=t, field="title", category=c, start=s, end=e)
                          for s, e, c in grid if c not in used for t in METHODS), history_fits)
    used.add(history.category)
    trail = _first_fit((Query(terms=t, field="all", category=c, basis="original", start=f"{y}-01-01",
                              end=f"{y}-12-31")
                        for y in (2021, 2020, 2022) for c in CATEGORIES if c not in used for t in METHODS),
                       lambda q: _trail_fits(data, q))
    newest_ids = _ids(list(data.papers[:5]))
    for q in (primary, paged, history, trail):
        if _ids(search(data, q)) & newest_ids:
            raise ValueError("scholar: a task answer overlaps the home page's newest papers")
    return Chosen(primary, paged, history, trail)


def _next_year_version(paper: Paper) -> Version | None:
    """The first version submitted in the calendar year after v1 (None when there is none)."""
    return next((v for v in paper.versions if v.day.year == paper.first_day.year + 1), None)


def _trail_fits(data: ScholarData, q: Query) -> bool:
    """Two result pages; cross-listed near misses; next-year versions for some, later-only revisions for
    others; a different set under the default (latest-version) date basis or a title-only search."""
    found = search(data, q)
    primaries = [p for p in found if p.primary == q.category]
    with_next = [p for p in primaries if _next_year_version(p)]
    later_only = [p for p in primaries if not _next_year_version(p) and len(p.versions) > 1]
    latest = search(data, Query(terms=q.terms, field=q.field, category=q.category, start=q.start, end=q.end))
    title_only = search(data, Query(terms=q.terms, field="title", category=q.category, basis=q.basis,
                                    start=q.start, end=q.end))
    return (11 <= len(found) <= 14 and 5 <= len(primaries) <= 9 and len(with_next) >= 2 and len(later_only) >= 1
            and any(p.doi for p in primaries) and any(not p.doi for p in primaries)
            and _ids(latest) != _ids(found) and len(title_only) < len(found))


def trail_rows(data: ScholarData, q: Query) -> list[tuple[str, str, str, str]]:
    rows = []
    for paper in sorted(search(data, q), key=lambda p: p.id):
        if paper.primary != q.category:
            continue
        version = _next_year_version(paper)
        rows.append((paper.id, f"v{version.number}" if version else "NONE",
                     version.day.isoformat() if version else "NONE", paper.doi or "NONE"))
    return rows


def tasks(data: ScholarData) -> list[dict]:
    c = choose(data)
    pq, gq, hq = c.primary_query, c.paged_query, c.history_query
    p_cat, g_cat, h_cat = (f"{q.category} ({CATEGORIES[q.category]})" for q in (pq, gq, hq))
    p_year, g_year, h_year = pq.start[:4], gq.start[:4], hq.start[:4]
    drafts = [
        TaskDraft(
            task_id="offline_scholar_001", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"In the scholarly archive's advanced search, search the Title field for \"{pq.terms}\", choose "
                f"category {p_cat}, UNTICK 'Include cross-listed papers' so that only papers whose primary "
                f"category is {pq.category} remain, set the date filter to 'Original submission (v1)' and the "
                f"range {pq.start} to {pq.end}. Report each paper's identifier and title."
            ),
            goal_instruction=(
                f"Which papers with \"{pq.terms}\" in the title were first submitted in {p_year} with "
                f"{pq.category} as their primary category? Give identifier and title."
            ),
            columns=("arxiv_id", "title"),
            rows=[(p.id, p.title) for p in sorted(search(data, pq), key=lambda p: p.id)],
            sorting="arxiv_id ascending",
            gates=[f"Title field contains \"{pq.terms}\"", f"category = {pq.category}, cross-listed excluded",
                   f"date basis = original submission (v1), {pq.start}..{pq.end}"],
            data_dependency="The filtered result table supplies identifiers and titles.",
            control_dependency="The primary-category criterion decides the cross-listing switch; the v1 criterion "
                               "decides the date basis.",
            inclusion=[f"primary category {pq.category}", f"v1 submitted {pq.start}..{pq.end} inclusive",
                       f"title contains the word \"{pq.terms}\""],
            exclusion=[f"papers only cross-listed in {pq.category}",
                       f"papers whose latest version (but not v1) falls in {p_year}"],
            traps=["criterion mismatch: 'Include cross-listed papers' is ticked by default",
                   "drift: the date filter defaults to the latest version's date"],
            column_notes={"arxiv_id": "identifier as shown, e.g. 2103.00042"},
        ),
        TaskDraft(
            task_id="offline_scholar_002", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"In the advanced search, search the Abstract field (not Title, not All fields) for \"{gq.terms}\", "
                f"category {g_cat} with cross-listed papers included (primary or cross-list), latest-version dates "
                f"{gq.start} to {gq.end}. The results span more than one page of 10: read every page (or raise "
                f"'Results per page'). Report identifier, primary category and latest-version date."
            ),
            goal_instruction=(
                f"List every {gq.category} paper (primary or cross-listed) whose abstract mentions "
                f"\"{gq.terms}\" and whose current version dates from {g_year}, with its primary category and the "
                f"date of that version."
            ),
            columns=("arxiv_id", "primary_category", "latest_version_date"),
            rows=[(p.id, p.primary, p.latest_day.isoformat())
                  for p in sorted(search(data, gq), key=lambda p: (-p.latest_day.toordinal(), p.id))],
            record_separator=";", header=True,
            sorting="latest_version_date descending, then arxiv_id ascending",
            gates=[f"Abstract field contains \"{gq.terms}\"", f"category = {gq.category} incl. cross-listed",
                   f"latest version {gq.start}..{gq.end}", "all result pages"],
            data_dependency="Rows come from every page of the result list.",
            control_dependency="The page count shown under the table decides how many pages must be read.",
            inclusion=[f"abstract contains the word \"{gq.terms}\"",
                       f"primary or cross-listed category {gq.category}",
                       f"latest version dated {gq.start}..{gq.end}"],
            exclusion=["papers matching only in the title", "rows missing because only page 1 was read"],
            traps=["dependency not closed: results continue on page 2",
                   "criterion mismatch: the term field defaults to All fields"],
            column_notes={"latest_version_date": "ISO date YYYY-MM-DD"},
        ),
        TaskDraft(
            task_id="offline_scholar_003", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"Search the Title field for \"{hq.terms}\" in category {h_cat} (cross-listed included), "
                f"latest-version dates {hq.start} to {hq.end}. Open each result's record page and read the "
                f"submission history: report the identifier, the date of v1 (original submission) and the "
                f"number of versions."
            ),
            goal_instruction=(
                f"For the {hq.category} papers (including cross-lists) with \"{hq.terms}\" in the title whose "
                f"current version appeared in {h_year}, when was each originally submitted and how many versions "
                f"does it have?"
            ),
            columns=("arxiv_id", "v1_date", "versions"),
            rows=[(p.id, p.first_day.isoformat(), str(len(p.versions)))
                  for p in sorted(search(data, hq), key=lambda p: p.id)],
            record_separator=",",
            sorting="arxiv_id ascending",
            gates=[f"Title field contains \"{hq.terms}\"", f"category = {hq.category} incl. cross-listed",
                   f"latest version {hq.start}..{hq.end}", "submission history on every record page"],
            data_dependency="The result list supplies the records whose pages hold the v1 dates.",
            control_dependency="Each record page's history decides the v1 date and the version count.",
            inclusion=["every paper of the result list", "v1 date from the submission history"],
            exclusion=["the latest-version date shown in the result list"],
            traps=["in-page misreading: the result list and the record header show the latest version's date",
                   "dependency not closed: the v1 date is only on record pages"],
            column_notes={"v1_date": "ISO date YYYY-MM-DD of [v1]", "versions": "integer count of versions"},
        ),
        _trail_draft(data, c.trail_query),
        _census_draft(data),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


CENSUS_QUERY = Query(terms=census.TERM, field="title", category=census.CATEGORY[0])


def _census_draft(data: ScholarData) -> TaskDraft:
    old, new = census.JOINED
    later = census.edition(data.reviews, new)
    series = census.SERIES
    return TaskDraft(
        task_id="offline_scholar_005", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the advanced search, search the Title field for \"{census.TERM}\" in category "
            f"{census.CATEGORY[0]} ({census.CATEGORY[1]}). Of the \"{series}\" papers listed, use the full "
            f"editions for {old} and {new} (the edition year is in the title; not the {new} preliminary report, not "
            f"other editions). On each one's record page open the full text (HTML) of its FIRST version, v1, from "
            f"the submission history (the 'Full text (HTML)' link shows the latest version, and the {new} edition "
            f"was revised in v{len(later.tables)}). Table 2 of each lists the registered benchmarks by Registry ID. "
            f"Join the two tables by Registry ID (names change between editions; never match by name) and keep the "
            f"ids present in both. Report registry id, the benchmark's name in {old} and in {new}, downloads in "
            f"{old} and in {new} (thousands, as integers without separators), change = downloads {new} minus "
            f"downloads {old}, and renamed = YES if the two names differ, else NO."
        ),
        goal_instruction=(
            f"Using the figures as first published in the {old} and {new} editions of the {series}, which "
            f"registered benchmarks appear in both editions? For each, give its registry id, its name in each "
            f"edition, its downloads in each, how much they changed, and whether it was renamed."
        ),
        columns=("registry_id", f"name_{old}", f"name_{new}", f"downloads_{old}", f"downloads_{new}", "change",
                 "renamed"),
        rows=census.joined_rows(data.reviews),
        record_separator=";", header=True,
        sorting="change descending (numeric), then registry_id ascending",
        gates=[f"Title field contains \"{census.TERM}\", category = {census.CATEGORY[0]}",
               f"full text (HTML) of version v1 of the {old} and {new} editions (the default view is the latest)",
               "Table 2 (registered benchmarks) of each edition"],
        data_dependency="The result list identifies the two editions; each edition's v1 full text supplies Table 2; "
                        "the answer joins the two tables by registry id.",
        control_dependency=f"The edition year in the title (not the submission year) picks the papers; the "
                           f"first-published criterion decides the version of the {new} edition's full text.",
        inclusion=[f"registry ids listed in both the {old} and the {new} edition (v1 tables)"],
        exclusion=["ids in only one of the two editions", f"the {new} preliminary report and the "
                   f"{census.EDITIONS[0]} edition", f"figures of the {new} edition's later version"],
        traps=[f"criterion mismatch: the {new} preliminary report and the {census.EDITIONS[0]} edition (published "
               f"in {old}) look like the wanted editions",
               f"drift: every 'Full text (HTML)' link (also after returning to the record page) opens the latest "
               f"version; the {new} edition's v{len(later.tables)} corrects figures",
               "near miss: a benchmark renamed between editions keeps its id (join by id, not by name)",
               f"near miss: a name dropped after {old} reappears under a new id in {new} (a name join pairs them)"],
        column_notes={
            "registry_id": "the Registry ID as shown, e.g. OB-0123",
            f"downloads_{old}": "integer thousands without separators, as in the v1 table",
            f"downloads_{new}": "integer thousands without separators, as in the v1 table",
            "change": f"downloads_{new} - downloads_{old}, an integer (negative when they fell)",
            "renamed": f"YES if name_{old} differs from name_{new}, else NO",
        },
        shape="derived",
        mirrors="Scholarly, full text: two yearly review articles whose tables list items by an id; join them by "
                "id across years with a name that drifted; report per id values from both years",
        phases=("search the review series in its category and pick the two editions by the year in the title",
                "open each edition's record page and its first version's full text: Table 2",
                "derive: join by registry id, both years' values, the change and the renamed flag"),
        derived=("change", "renamed"),
    )


def _trail_draft(data: ScholarData, tq: Query) -> TaskDraft:
    year, cat = int(tq.start[:4]), f"{tq.category} ({CATEGORIES[tq.category]})"
    return TaskDraft(
        task_id="offline_scholar_004", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the advanced search, search \"{tq.terms}\" in both titles and abstracts (All fields), category "
            f"{cat}, with the date filter on 'Original submission (v1)' and the range {tq.start} to {tq.end} (the "
            f"default filters on the latest version's date). Read every result page. Open each result's record page: "
            f"keep only papers whose Primary category is {tq.category} (papers merely cross-listed in it are "
            f"excluded). From each kept record's submission history take the FIRST version submitted in {year + 1} "
            f"(the year after v1) and its date (NONE and NONE if no version was submitted in {year + 1}, even if "
            f"later versions exist); publication_trail is the DOI shown on the record page, NONE if there is none."
        ),
        goal_instruction=(
            f"For the papers with primary category {tq.category} that mention \"{tq.terms}\" in their title or "
            f"abstract and were originally submitted in {year}: which revision, if any, did each receive first in "
            f"{year + 1}, on what date, and has it a DOI?"
        ),
        columns=("arxiv_id", "next_year_version", "next_year_date", "publication_trail"),
        rows=trail_rows(data, tq),
        sorting="arxiv_id ascending",
        gates=[f"All fields contain \"{tq.terms}\"", f"category = {tq.category} (cross-listed may be listed)",
               f"date basis = original submission (v1), {tq.start}..{tq.end}", "all result pages",
               "every listed record page (primary category, submission history, DOI)"],
        data_dependency="The result list (all pages) supplies the records; each record page supplies the primary "
                        "category, the submission history and the DOI the answer is computed from.",
        control_dependency="The v1 criterion decides the date basis; the primary-category criterion is only "
                           "checkable on record pages.",
        inclusion=[f"v1 submitted in {year}", f"primary category {tq.category}",
                   f"\"{tq.terms}\" in title or abstract"],
        exclusion=[f"papers only cross-listed in {tq.category}", "versions submitted two or more years after v1"],
        traps=["drift: the date filter defaults to the latest version's date",
               "criterion mismatch: cross-listed papers appear in the category's results",
               "near miss: papers revised only in a later year get NONE, not their next version",
               "dependency not closed: results continue on page 2; history only on record pages"],
        column_notes={
            "next_year_version": "'v<N>' of the first version dated in the year after v1, else NONE",
            "next_year_date": "ISO date of that version, else NONE",
            "publication_trail": "the record's DOI, else NONE",
        },
        shape="derived",
        mirrors="Scholarly: term family over title and abstract, v1 window; per record the first version of the "
                "following year and its date, primary category (cross-lists excluded), a publication-trail column",
        phases=("search the term over all fields with the v1 date window and read every result page",
                "open each listed record page: primary category, DOI and the submission history",
                "derive: keep primary-category papers; first version dated in the next year; DOI or NONE"),
        derived=("next_year_version", "next_year_date", "publication_trail"),
    )
