"""The archive's scripted walkthroughs: the steps that solve each task."""

from __future__ import annotations

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites import _census as census
from tasks.offline.sites._record_pair import derive_then_finish
from tasks.offline.sites.scholar.data import ALL_CATEGORIES, PREFIX, ScholarData
from tasks.offline.sites.scholar.oracles import CENSUS_QUERY, SEARCH_URL, choose
from tasks.offline.sites.scholar.search import BASES, FIELDS, Query, search


def _search_steps(q: Query) -> list[Step]:
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "open the advanced search"},
        {"tool": "fill", "args": {"target": {"label": "Search terms"}, "value": q.terms}, "why": "term"},
        {"tool": "select", "args": {"target": {"label": "Search field"}, "option": FIELDS[q.field]},
         "why": "the term field defaults to All fields"},
        {"tool": "select", "args": {"target": {"label": "Category"},
                                    "option": f"{q.category} ({ALL_CATEGORIES[q.category]})"},
         "why": "classification"},
    ]
    if not q.cross:
        steps.append({"tool": "check", "args": {"target": {"label": "Include cross-listed papers"}, "checked": False},
                      "why": "primary category only"})
    if q.basis == "original":
        steps.append({"tool": "select", "args": {"target": {"label": "Date basis"}, "option": BASES["original"]},
                      "why": "dates of the original submission, not the latest version"})
    if q.start or q.end:
        steps.append({"tool": "set_range", "args": {"start_target": {"label": "From date"},
                                                    "end_target": {"label": "To date"}, "start": q.start,
                                                    "end": q.end}, "why": "date window"})
    steps.append({"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"})
    return steps


def walkthroughs(data: ScholarData) -> dict[str, list[Step]]:
    c = choose(data)
    history_steps: list[Step] = []
    for paper in sorted(search(data, c.history_query), key=lambda p: p.id):
        history_steps += [
            {"tool": "click", "args": {"target": {"text": paper.id}}, "why": "open the record page"},
            {"tool": "extract_rows", "args": {
                "source": "page_text",
                "pattern": r"Identifier: (?P<arxiv_id>\d{4}\.\d{5})[\s\S]*?\[v1\] (?P<v1_date>\d{4}-\d{2}-\d{2})"
                           r"[\s\S]*?Versions: (?P<versions>\d+)",
                "columns": {"arxiv_id": "arxiv_id", "v1_date": "v1_date", "versions": "versions"}},
             "why": "v1 date from the submission history, not the header date"},
            {"tool": "back", "args": {}, "why": "return to the results"},
        ]
    identifier = r"re:Identifier: (\d{4}\.\d{5})"
    trail_steps: list[Step] = []
    for paper in search(data, c.trail_query):
        trail_steps += [
            {"tool": "read_facts", "args": {
                "url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/abs/{paper.id}", "into": "records", "allow_missing": True,
                "fields": {"arxiv_id": identifier, "primary_cat": "Primary category", "doi": "DOI"}},
             "why": "record page: primary category and DOI (absent when unpublished)"},
            {"tool": "extract_rows", "args": {
                "into": "versions", "source": "page_text",
                "pattern": r"\[v(?P<version>\d+)\] (?P<day>\d{4}-\d{2}-\d{2})",
                "columns": {"arxiv_id": identifier, "version": "version", "day": "day"}},
             "why": "every version of the submission history"},
        ]
    trail_sql = (
        "WITH first AS (SELECT arxiv_id, year_of(day) AS y FROM versions WHERE version = '1'), "
        "next AS (SELECT v.arxiv_id, 'v' || v.version AS ver, v.day FROM versions v JOIN first f USING (arxiv_id) "
        "WHERE year_of(v.day) = f.y + 1 QUALIFY row_number() OVER (PARTITION BY v.arxiv_id "
        "ORDER BY CAST(v.version AS INTEGER)) = 1) "
        "SELECT r.arxiv_id, coalesce(n.ver, 'NONE') AS next_year_version, coalesce(n.day, 'NONE') AS next_year_date, "
        "CASE WHEN r.doi = '' THEN 'NONE' ELSE r.doi END AS publication_trail "
        f"FROM records r LEFT JOIN next n USING (arxiv_id) WHERE r.primary_cat = '{c.trail_query.category}' "
        "ORDER BY r.arxiv_id"
    )
    census_steps: list[Step] = []
    for year in census.JOINED:
        review = census.edition(data.reviews, year)
        census_steps += [
            {"tool": "click", "args": {"target": {"text": review.paper_id}}, "why": f"the {year} edition's record"},
            {"tool": "click", "args": {"target": {"text": "HTML (v1)"}},
             "why": "first version's full text (the plain full-text link shows the latest)"},
            {"tool": "extract_rows", "args": {
                "into": f"edition_{year}", "section": census.TABLE_CAPTION,
                "columns": {"registry_id": "Registry ID", "name": "Benchmark", "downloads": "Downloads (thousands)"}},
             "why": "Table 2 of this edition"},
            {"tool": "back", "args": {}, "why": "record page"},
            {"tool": "back", "args": {}, "why": "result list"},
        ]
    old, new = census.JOINED
    census_sql = (
        f"SELECT a.registry_id, a.name AS name_{old}, b.name AS name_{new}, "
        f"CAST(CAST(num(a.downloads) AS BIGINT) AS VARCHAR) AS downloads_{old}, "
        f"CAST(CAST(num(b.downloads) AS BIGINT) AS VARCHAR) AS downloads_{new}, "
        f"CAST(CAST(num(b.downloads) - num(a.downloads) AS BIGINT) AS VARCHAR) AS change, "
        f"CASE WHEN a.name = b.name THEN 'NO' ELSE 'YES' END AS renamed "
        f"FROM edition_{old} a JOIN edition_{new} b USING (registry_id) "
        f"ORDER BY num(b.downloads) - num(a.downloads) DESC, a.registry_id"
    )
    return {
        "offline_scholar_005": [
            *_search_steps(CENSUS_QUERY),
            {"tool": "read_table", "args": {"table": 0}, "why": "the series' papers: pick the editions by title"},
            *census_steps,
            *derive_then_finish(census_sql, "join by registry id; change; renamed flag", "both editions' v1 tables joined"),
        ],
        "offline_scholar_004": [
            *_search_steps(c.trail_query),
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span two pages"},
            {"tool": "extract_rows", "args": {"into": "candidates", "columns": {"arxiv_id": "Identifier"}},
             "why": "the records to open"},
            *trail_steps,
            *derive_then_finish(trail_sql, "primary only; next-year version; DOI or NONE", "answer derived from every record page"),
        ],
        "offline_scholar_001": [
            *_search_steps(c.primary_query),
            {"tool": "read_table", "args": {"table": 0}, "why": "single page of results"},
            {"tool": "extract_rows", "args": {"columns": {"arxiv_id": "Identifier", "title": "Title"}},
             "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["arxiv_id"]}, "why": "all results read"},
        ],
        "offline_scholar_002": [
            *_search_steps(c.paged_query),
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span two pages"},
            {"tool": "extract_rows", "args": {"columns": {
                "arxiv_id": "Identifier", "primary_category": "Primary category",
                "latest_version_date": "Latest version"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["latest_version_date desc", "arxiv_id"]}, "why": "all pages read"},
        ],
        "offline_scholar_003": [
            *_search_steps(c.history_query),
            {"tool": "read_table", "args": {"table": 0}, "why": "the records to open"},
            *history_steps,
            {"tool": "finish", "args": {"order_by": ["arxiv_id"]}, "why": "every record page read"},
        ],
    }
