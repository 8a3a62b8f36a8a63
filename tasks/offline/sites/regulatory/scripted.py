"""The regulator's scripted walkthroughs: the steps that solve each task."""

from __future__ import annotations

from tasks.offline.registry import Step
from tasks.offline.sites._record_pair import derive_then_finish
from tasks.offline.sites.regulatory.data import DATE_FIELDS, PAGE_SIZES, STAGES, RegulatoryData
from tasks.offline.sites.regulatory.oracles import (
    ACTION_STATUS,
    COMPLAINTS_URL,
    DOCUMENTS_URL,
    ENFORCEMENT_URL,
    choose,
    choose_action_window,
)
from tasks.offline.sites.regulatory.search import (
    FACET_LABELS,
    ActionQuery,
    ComplaintQuery,
    search_actions,
    search_documents,
)


def complaint_steps(q: ComplaintQuery) -> list[Step]:
    """The complaint search set as the query says: each control it names (a company only when it names one), the
    date window, the page size, then Apply (the held-out tasks reuse it)."""
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": COMPLAINTS_URL}, "why": "open the complaint database"},
        {"tool": "click", "args": {"target": {"text": "Accept all cookies"}}, "why": "the banner blocks clicks"},
    ]
    if q.value("company"):
        steps.append({"tool": "select", "args": {"target": {"label": "Company"}, "option": q.value("company")},
                      "why": "custom company dropdown"})
    for facet in ("product", "state", "response", "tag"):
        if q.value(facet):
            steps.append({"tool": "select", "args": {"target": {"label": FACET_LABELS[facet]}, "option": q.value(facet)},
                          "why": f"{FACET_LABELS[facet]} facet"})
    steps.append({"tool": "set_range", "args": {
        "start_target": {"label": "Date received from"}, "end_target": {"label": "Date received to"},
        "start": q.start, "end": q.end}, "why": "the default window is only the last three years"})
    if q.size != PAGE_SIZES[0]:
        steps.append({"tool": "select", "args": {"target": {"label": "Rows per page"}, "option": str(q.size)},
                      "why": "all rows on one page"})
    steps.append({"tool": "click", "args": {"target": {"text": "Apply filters"}}, "why": "apply"})
    return steps


def walkthroughs(data: RegulatoryData) -> dict[str, list[Step]]:
    c = choose(data)
    form = dict(c.document_form)
    filter_steps: list[Step] = [
        {"tool": "goto", "args": {"url": DOCUMENTS_URL}, "why": "open the document library"},
        {"tool": "click", "args": {"target": {"text": "Accept all cookies"}}, "why": "banner (shown until accepted)"},
        {"tool": "select", "args": {"target": {"label": "Document type"}, "option": form["doc_type"]}, "why": "type"},
        {"tool": "select", "args": {"target": {"label": "Topic"}, "option": form["topic"]}, "why": "topic"},
        {"tool": "select", "args": {"target": {"label": "Status"}, "option": form["status"]}, "why": "status"},
        {"tool": "click", "args": {"target": {"text": "Filter documents"}}, "why": "post the filter form"},
    ]
    pdf_steps: list[Step] = []
    for i, doc in enumerate(sorted(search_documents(data, form), key=lambda d: d.respondent)):
        pdf_steps += [
            *(filter_steps[2:] if i else []),
            {"tool": "click", "args": {"target": {"text": doc.title}}, "why": "open the document page"},
            {"tool": "read_pdf", "args": {"target": {"text": "Download PDF"}}, "why": "the order holds the penalty"},
            {"tool": "extract_rows", "args": {
                "source": "pdf", "pattern": r"In the matter of: (?P<respondent>[^\n]+?)\s*\n[\s\S]*?"
                                            r"Civil money penalty\s+(?P<civil_money_penalty>\$[\d,]+)",
                "columns": {"respondent": "respondent", "civil_money_penalty": "civil_money_penalty"}},
             "why": "penalty row of the relief table"},
            {"tool": "goto", "args": {"url": DOCUMENTS_URL}, "why": "the filtered list was a POST; start over"},
        ]
    return {
        "offline_regulatory_001": [
            *complaint_steps(c.history_query),
            {"tool": "download", "args": {"target": {"text": "Export CSV"}}, "why": "every matching row"},
            {"tool": "extract_rows", "args": {"columns": {
                "complaint_id": "Complaint ID", "date_received": "Date received", "state": "State", "issue": "Issue"}},
             "why": "CSV rows"},
            {"tool": "finish", "args": {"order_by": ["date_received", "complaint_id"]}, "why": "all rows read"},
        ],
        "offline_regulatory_002": [
            *complaint_steps(c.relief_query),
            {"tool": "read_table", "args": {"table": 0}, "why": "all rows on one page of 50"},
            {"tool": "extract_rows", "args": {"columns": {
                "complaint_id": "Complaint ID", "date_received": "Date received", "product": "Product",
                "issue": "Issue"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["complaint_id"]}, "why": "all rows read"},
        ],
        "offline_regulatory_003": [
            *filter_steps, *pdf_steps,
            {"tool": "finish", "args": {"order_by": ["respondent"]}, "why": "every PDF read"},
        ],
        "offline_regulatory_004": _actions_walkthrough(data),
        "offline_regulatory_005": _cohort_walkthrough(data),
    }


REDRESS_PATTERN = (r"File No\. (?P<docket>\S+) \| Page (?P<page>\d+) of \d+[\s\S]*?"
                   r"(?P<amount>\$[\d,]+)\s+for\s+consumer\s+redress")
PENALTY_PATTERN = (r"File No\. (?P<docket>\S+) \| Page (?P<page>\d+) of \d+[\s\S]*?"
                   r"civil\s+money\s+penalty\s+of\s+(?P<amount>\$[\d,]+)")


def _actions_walkthrough(data: RegulatoryData) -> list[Step]:
    start, end = choose_action_window(data)
    found = search_actions(data, ActionQuery("filed", start, end, status=ACTION_STATUS))
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": ENFORCEMENT_URL}, "why": "open the enforcement actions"},
        {"tool": "click", "args": {"target": {"text": "Accept all cookies"}}, "why": "the banner blocks clicks"},
        {"tool": "select", "args": {"target": {"label": "Filter dates by"}, "option": DATE_FIELDS["filed"]},
         "why": "the window is on the initial filing date, not Last updated"},
        {"tool": "set_range", "args": {"start_target": {"label": "Date from"}, "end_target": {"label": "Date to"},
                                       "start": start, "end": end}, "why": "filing window"},
        {"tool": "select", "args": {"target": {"label": "Status"}, "option": ACTION_STATUS}, "why": "status"},
        {"tool": "click", "args": {"target": {"text": "Apply filters"}}, "why": "apply"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "every matching action"},
        {"tool": "extract_rows", "args": {"into": "actions", "columns": {
            "respondent": "Respondent", "docket": "Docket number", "filed": "Initial filing date"}},
         "why": "the candidate actions"},
    ]
    for action in sorted(found, key=lambda a: (not a.redress, a.docket)):  # a redress-bearing order first
        steps += [
            {"tool": "read_facts", "args": {"url": f"{ENFORCEMENT_URL}/{action.slug}", "into": "details",
                                            "fields": {"docket": "Docket number", "status": "Status"}},
             "why": f"action page of {action.docket}"},
            {"tool": "read_pdf", "args": {"target": {"text": "Consent Order (PDF)"}}, "why": "the consent order"},
            {"tool": "extract_rows", "args": {"into": "redress_hits", "source": "pdf", "pattern": REDRESS_PATTERN,
                                              "columns": {"docket": "docket", "page": "page", "amount": "amount"}},
             "why": "every page that prints the redress amount"},
            {"tool": "extract_rows", "args": {"into": "penalty_hits", "source": "pdf", "pattern": PENALTY_PATTERN,
                                              "columns": {"docket": "docket", "page": "page", "amount": "amount"}},
             "why": "every page that prints the penalty amount"},
        ]
    sql = (
        "WITH r AS (SELECT docket, arg_min(amount, CAST(page AS INTEGER)) AS amount, min(CAST(page AS INTEGER)) "
        "AS page FROM redress_hits GROUP BY docket), "
        "p AS (SELECT docket, arg_min(amount, CAST(page AS INTEGER)) AS amount, min(CAST(page AS INTEGER)) AS page "
        "FROM penalty_hits GROUP BY docket) "
        "SELECT a.respondent, a.docket, a.filed AS initial_filing_date, coalesce(r.amount, 'NONE') AS redress_usd, "
        "coalesce(CAST(r.page AS VARCHAR), 'NONE') AS redress_page, p.amount AS penalty_usd, "
        "CAST(p.page AS VARCHAR) AS penalty_page "
        "FROM actions a JOIN details d ON d.docket = a.docket AND d.status = 'Terminated' "
        "LEFT JOIN r ON r.docket = a.docket LEFT JOIN p ON p.docket = a.docket "
        "ORDER BY a.filed, a.docket"
    )
    return [*steps, *derive_then_finish(sql, "first page per amount, NONE without redress")]


def _stage_sql(k: int) -> str:
    prior = [f"stage{i}" for i in range(1, k)]
    where = ("WHERE company NOT IN (" + " UNION ALL ".join(f"SELECT top_company FROM {t}" for t in prior) + ")"
             if prior else "")
    excluded = " || '; ' || ".join(f"(SELECT top_company FROM {t})" for t in prior) or "'NONE'"
    return (
        "WITH base AS (SELECT complaint_id, date_received, substr(date_received, 1, 7) AS month, state, company "
        f"FROM complaints {where}), "
        "peak AS (SELECT month, count(*) AS n FROM base GROUP BY month ORDER BY n DESC, month LIMIT 1), "
        "m AS (SELECT * FROM base WHERE month = (SELECT month FROM peak)), "
        "ts AS (SELECT state, count(*) AS n FROM m GROUP BY state ORDER BY n DESC, state LIMIT 1), "
        "tc AS (SELECT company, count(*) AS n FROM m GROUP BY company ORDER BY n DESC, company LIMIT 1), "
        "e AS (SELECT complaint_id, date_received FROM m WHERE company = (SELECT company FROM tc) "
        "ORDER BY date_received, CAST(complaint_id AS BIGINT) LIMIT 1) "
        f"SELECT '{k}' AS stage, {excluded} AS excluded_companies, peak.month AS peak_month, "
        "CAST(peak.n AS VARCHAR) AS month_complaints, ts.state AS top_state, CAST(ts.n AS VARCHAR) AS state_complaints, "
        "tc.company AS top_company, CAST(tc.n AS VARCHAR) AS company_complaints, "
        "e.complaint_id AS earliest_complaint_id, e.date_received AS earliest_date FROM peak, ts, tc, e"
    )


def _cohort_walkthrough(data: RegulatoryData) -> list[Step]:
    plan = data.cohort
    assert plan is not None
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": COMPLAINTS_URL}, "why": "open the complaint database"},
        {"tool": "click", "args": {"target": {"text": "Accept all cookies"}}, "why": "the banner blocks clicks"},
        {"tool": "select", "args": {"target": {"label": "Product"}, "option": plan.product}, "why": "product bucket"},
        {"tool": "set_range", "args": {"start_target": {"label": "Date received from"},
                                       "end_target": {"label": "Date received to"}, "start": plan.start,
                                       "end": plan.end}, "why": "the default is only the last three years"},
        {"tool": "click", "args": {"target": {"text": "Apply filters"}}, "why": "apply"},
        {"tool": "download", "args": {"target": {"text": "Export CSV"}}, "why": "every complaint of the cohort"},
        {"tool": "extract_rows", "args": {"into": "complaints", "columns": {
            "complaint_id": "Complaint ID", "date_received": "Date received", "state": "State", "company": "Company"}},
         "why": "the cohort"},
    ]
    for k in range(1, STAGES + 1):
        steps.append({"tool": "derive", "args": {"sql": _stage_sql(k), "into": f"stage{k}"},
                      "why": f"stage {k}: peak month, top state/company, earliest complaint"})
    columns = ("stage, excluded_companies, peak_month, month_complaints, top_state, state_complaints, top_company, "
               "company_complaints, earliest_complaint_id, earliest_date")
    union = " UNION ALL ".join(f"SELECT {columns} FROM stage{k}" for k in range(1, STAGES + 1))
    return [*steps, *derive_then_finish(f"{union} ORDER BY stage", "the three stages")]
