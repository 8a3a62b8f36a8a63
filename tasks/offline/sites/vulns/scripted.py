"""The vulnerability site's scripted walkthroughs: the steps that solve each task."""

from __future__ import annotations

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._record_pair import derive_then_finish
from tasks.offline.sites.vulns.data import PAGE_SIZE, PREFIX, VulnData, legacy_of
from tasks.offline.sites.vulns.oracles import SEARCH_URL, choose
from tasks.offline.sites.vulns.search import Query, search


def _search_steps(q: Query, vendors: dict[str, str]) -> list[Step]:
    steps: list[Step] = [{"tool": "goto", "args": {"url": SEARCH_URL}, "why": "open the search form"}]
    if q.keyword:
        steps.append({"tool": "fill", "args": {"target": {"label": "Keyword"}, "value": q.keyword},
                      "why": "keyword scope"})
    if q.include_deprecated:
        steps.append({"tool": "check", "args": {"target": {"label": "Include deprecated product identifiers"}},
                      "why": "old filings use the deprecated identifier"})
    if q.vendor:
        steps.append({"tool": "select", "args": {"target": {"label": "Vendor"}, "option": vendors[q.vendor]},
                      "why": "vendor scope"})
    if q.product:
        steps.append({"tool": "select", "args": {"target": {"label": "Product"}, "option": q.product},
                      "why": "product scope"})
    if q.severity:
        steps.append({"tool": "select", "args": {"target": {"label": "Severity"}, "option": q.severity},
                      "why": "severity filter"})
    steps += [
        {"tool": "select", "args": {"target": {"label": "Date type"}, "option": "Published"},
         "why": "the default date type is Last modified"},
        {"tool": "set_range", "args": {"start_target": {"label": "From date"}, "end_target": {"label": "To date"},
                                       "start": q.start, "end": q.end}, "why": "publication window"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
    ]
    return steps


def walkthroughs(data: VulnData) -> dict[str, list[Step]]:
    c = choose(data)
    read_all: Step = {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"}
    history_steps: list[Step] = []
    listed = search(data, c.history_query)
    for index, vuln in enumerate(listed):
        if index and index % PAGE_SIZE == 0:
            history_steps.append({"tool": "click", "args": {"target": {"text": "Next >"}},
                                  "why": "the next result page"})
        history_steps += [
            {"tool": "click", "args": {"target": {"text": vuln.id}}, "why": "open the record's detail page"},
            {"tool": "read_table", "args": {"table": 4}, "why": "change history table"},
            {"tool": "extract_rows", "args": {
                "table": 4, "where": {"Field": "CVSS base score"},
                "columns": {"id": r"re:Record (OVR-\d{4}-\d{5})", "changed": "Date",
                            "old_score": "Old value", "new_score": "New value"}}, "why": "score revisions only"},
            {"tool": "back", "args": {}, "why": "return to the result list"},
        ]
    remap_steps: list[Step] = []
    for vuln in search(data, c.remap_query):
        remap_steps += [
            {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/detail/{vuln.id}"},
             "why": "the record's detail page"},
            {"tool": "extract_rows", "args": {
                "into": "history", "section": "Change history",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "day": "Date", "action": "Action",
                            "old": "Old value", "new": "New value"}}, "why": "every change of the record"},
        ]
    version = "CAST(split_part(v, '.', {}) AS INTEGER)"
    remap_sql = (
        "WITH vers AS (SELECT regexp_extract(summary, 'before ([0-9]+[.][0-9]+[.][0-9]+)', 1) AS v FROM records), "
        f"low AS (SELECT v FROM vers ORDER BY {version.format(1)}, {version.format(2)}, {version.format(3)} LIMIT 1) "
        "SELECT h.record_id, h.old AS old_identifier, h.day AS remapped_on, "
        "CAST(date_diff('day', CAST(r.published AS DATE), CAST(h.day AS DATE)) AS VARCHAR) AS days_to_remap, "
        "'before ' || (SELECT v FROM low) AS common_affected_bound "
        "FROM history h JOIN records r USING (record_id) WHERE h.action = 'Identifier remapped' "
        "ORDER BY h.day, h.record_id"
    )
    mq = c.milestone_query
    legacy = legacy_of(data, mq.product)
    assert legacy is not None
    milestone_steps: list[Step] = []
    for vuln in search(data, mq):
        milestone_steps += [
            {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/detail/{vuln.id}"},
             "why": "the record's detail page"},
            {"tool": "extract_rows", "args": {
                "into": "affected", "section": "Known affected products",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "identifier": "Identifier",
                            "milestone": "Milestone"}}, "why": "the record's milestone and filed identifier"},
            {"tool": "extract_rows", "args": {
                "into": "history", "section": "Change history",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "day": "Date", "action": "Action",
                            "old": "Old value", "new": "New value"}}, "why": "every change of the record"},
        ]
    milestone_sql = (
        "WITH rem AS (SELECT a.milestone, h.record_id, h.day FROM history h JOIN affected a USING (record_id) "
        f"WHERE h.action = 'Identifier remapped' AND h.old = '{legacy.id}' AND h.new = '{mq.product}'), "
        f"pending AS (SELECT milestone, count(*) AS n FROM affected WHERE identifier = '{legacy.id}' GROUP BY 1) "
        "SELECT m.milestone, CASE WHEN m.legacy LIKE 'cpe:%' THEN m.legacy ELSE 'NONE' END AS legacy_identifier, "
        "m.current AS current_identifier, "
        "coalesce((SELECT string_agg(record_id, ' ' ORDER BY record_id) FROM rem r WHERE r.milestone = m.milestone), "
        "'NONE') AS remapped_records, "
        "CAST((SELECT count(*) FROM rem r WHERE r.milestone = m.milestone) AS VARCHAR) AS remap_count, "
        "coalesce((SELECT min(day) FROM rem r WHERE r.milestone = m.milestone), 'NONE') AS earliest_remap, "
        "CAST(coalesce((SELECT n FROM pending p WHERE p.milestone = m.milestone), 0) AS VARCHAR) AS pending_remap "
        "FROM milestones m ORDER BY CAST(split_part(m.milestone, '.', 1) AS INTEGER)"
    )
    return {
        "offline_vulns_005": [
            {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "start page"},
            {"tool": "click", "args": {"target": {"text": "Product dictionary"}}, "why": "product identifiers"},
            {"tool": "click", "args": {"target": {"text": mq.product}}, "why": "the product's page"},
            {"tool": "check", "args": {"target": {"label": "Show legacy identifiers"}},
             "why": "legacy identifiers are hidden by default"},
            {"tool": "click", "args": {"target": {"text": "Show"}}, "why": "apply"},
            {"tool": "extract_rows", "args": {
                "into": "milestones", "section": "Milestones",
                "columns": {"milestone": "Milestone", "current": "Current identifier", "legacy": "Legacy identifier"}},
             "why": "every milestone with both identifiers"},
            *_search_steps(mq, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"into": "records", "columns": {"record_id": "ID", "product": "Product"}},
             "why": "every listed record"},
            *milestone_steps,
            *derive_then_finish(milestone_sql, "per milestone: remapped records, count, earliest remap, pending", "every record page read"),
        ],
        "offline_vulns_004": [
            *_search_steps(c.remap_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"into": "records", "columns": {
                "record_id": "ID", "published": "Published", "summary": "Summary"}}, "why": "every listed record"},
            *remap_steps,
            *derive_then_finish(remap_sql, "remap rows, days, common bound", "every record's history read"),
        ],
        "offline_vulns_001": [
            *_search_steps(c.deprecated_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"columns": {"id": "ID", "published": "Published", "score": "Score"}},
             "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["published", "id"]}, "why": "all pages read"},
        ],
        "offline_vulns_002": [
            *_search_steps(c.history_query, data.vendors),
            *history_steps,
            {"tool": "finish", "args": {"order_by": ["changed", "id"]}, "why": "every detail page read"},
        ],
        "offline_vulns_003": [
            *_search_steps(c.date_type_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {
                "columns": {"id": "ID", "published": "Published", "weakness": "Weakness"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["published", "id"]}, "why": "all pages read"},
        ],
    }
