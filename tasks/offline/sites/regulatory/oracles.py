"""The regulator's tasks: each search chosen from the data, its oracle rows and both record wordings."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites.regulatory.data import (
    ACTION_PAGE_SIZE,
    ALL_DATES_FROM,
    BUREAUS,
    COMPANIES,
    DEFAULT_DOCUMENTS_SHOWN,
    DEFAULT_WINDOW,
    DOMAIN,
    FAMILY,
    LAST_DAY,
    PAGE_SIZES,
    PREFIX,
    PRODUCTS,
    TAGS,
    TOPICS,
    Complaint,
    RegulatoryData,
    cohort_stages,
    money,
)
from tasks.offline.sites.regulatory.search import (
    ActionQuery,
    ComplaintQuery,
    search_actions,
    search_complaints,
    search_documents,
)

COMPLAINTS_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/complaints"
DOCUMENTS_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/documents"


@dataclass(frozen=True)
class Chosen:
    history_query: ComplaintQuery  # 001: company + product + tag over all dates (default window drops rows)
    relief_query: ComplaintQuery  # 002: company + state + monetary relief in an older window, > 1 page
    document_form: tuple[tuple[str, str], ...]  # 003: POSTed library filter whose PDFs hold the penalties


def _ids(complaints: list[Complaint]) -> set[str]:
    return {c.id for c in complaints}


def choose(data: RegulatoryData) -> Chosen:
    default_page = _ids(search_complaints(data, ComplaintQuery())[: PAGE_SIZES[-1]])
    history = relief = None
    for company in COMPANIES:
        for product in PRODUCTS:
            for tag in TAGS[:2]:
                q = ComplaintQuery(filters=(("product", product), ("company", company), ("tag", tag)),
                                   start=ALL_DATES_FROM, end=LAST_DAY.isoformat())
                found = search_complaints(data, q)
                old = [c for c in found if c.received.isoformat() < DEFAULT_WINDOW[0]]
                if history is None and 5 <= len(found) <= 10 and len(old) >= 3 and len(old) < len(found) \
                        and not _ids(found) & default_page:
                    history = q
        for start, end in (("2016-01-01", "2020-12-31"), ("2015-01-01", "2019-12-31"), ("2017-01-01", "2021-12-31"),
                           ("2018-01-01", "2021-12-31")):
            q = ComplaintQuery(filters=(("company", company), ("response", "Closed with monetary relief")),
                               start=start, end=end, size=50)
            near = ComplaintQuery(filters=(("company", company), ("response", "Closed with non-monetary relief")),
                                  start=start, end=end)
            if relief is None and company != (history.value("company") if history else "") \
                    and 11 <= len(search_complaints(data, q)) <= 18 and search_complaints(data, near):
                relief = q
    document_form = None
    newest = {d.slug for d in data.documents[:DEFAULT_DOCUMENTS_SHOWN]}
    for topic in TOPICS:
        form = {"topic": topic, "status": "Terminated", "doc_type": "Enforcement action"}
        found = search_documents(data, form)
        if document_form is None and 3 <= len(found) <= 7 and not {d.slug for d in found} & newest:
            document_form = tuple(form.items())
    if history is None or relief is None or document_form is None:
        raise ValueError("regulatory: this seed gives no task with the required cardinality and traps")
    return Chosen(history, relief, document_form)


def tasks(data: RegulatoryData) -> list[dict]:
    c = choose(data)
    hq, rq, form = c.history_query, c.relief_query, dict(c.document_form)
    docs = search_documents(data, form)
    drafts = [
        TaskDraft(
            task_id="offline_regulatory_001", domain=DOMAIN, family=FAMILY, start_url=COMPLAINTS_URL,
            constraint_instruction=(
                f"In the complaint database, close the cookie banner, choose company \"{hq.value('company')}\" in "
                f"the Company dropdown, product \"{hq.value('product')}\" and tag \"{hq.value('tag')}\", and widen "
                f"the Date received range to all dates (the default covers only {DEFAULT_WINDOW[0]} to "
                f"{DEFAULT_WINDOW[1]}). Report complaint id, date received, state and issue of every complaint."
            ),
            goal_instruction=(
                f"Every complaint ever filed about {hq.value('company')} for {hq.value('product').lower()} products "
                f"that carries the \"{hq.value('tag')}\" tag: give complaint id, date received, state and issue."
            ),
            columns=("complaint_id", "date_received", "state", "issue"),
            rows=[(x.id, x.received.isoformat(), x.state, x.issue)
                  for x in sorted(search_complaints(data, hq), key=lambda x: (x.received, x.id))],
            sorting="date_received ascending, then complaint_id",
            gates=[f"company = {hq.value('company')} (custom dropdown)", f"product = {hq.value('product')}",
                   f"tag = {hq.value('tag')}", "date received = all dates"],
            data_dependency="Rows come from the filtered complaint list (or its CSV export).",
            control_dependency="The all-dates requirement decides the date widget; the cookie banner must be "
                               "closed before any filter can be applied.",
            inclusion=[f"company {hq.value('company')}", f"product {hq.value('product')}",
                       f"tag includes {hq.value('tag')}", "any date received"],
            exclusion=["complaints dropped by the default three-year window are NOT to be excluded"],
            traps=["drift: the date-received range defaults to the last three years, dropping older complaints",
                   "drift: a complaint page's 'Back to results' link resets every filter"],
            column_notes={"date_received": "ISO date YYYY-MM-DD", "state": "two-letter code"},
        ),
        TaskDraft(
            task_id="offline_regulatory_002", domain=DOMAIN, family=FAMILY, start_url=COMPLAINTS_URL,
            constraint_instruction=(
                f"In the complaint database (close the cookie banner first), filter company "
                f"\"{rq.value('company')}\", company response exactly \"Closed with "
                f"monetary relief\" (not non-monetary relief), date received {rq.start} to {rq.end}. The table shows "
                f"10 rows per page: raise 'Rows per page' or read every page. Report complaint id, date received, "
                f"product and issue."
            ),
            goal_instruction=(
                f"Which complaints against {rq.value('company')}, received between "
                f"{rq.start} and {rq.end}, ended with monetary relief for the consumer? Give complaint id, date, "
                f"product and issue."
            ),
            columns=("complaint_id", "date_received", "product", "issue"),
            rows=[(x.id, x.received.isoformat(), x.product, x.issue)
                  for x in sorted(search_complaints(data, rq), key=lambda x: x.id)],
            record_separator=",", header=True,
            sorting="complaint_id ascending",
            gates=[f"company = {rq.value('company')} (custom dropdown)",
                   "company response = Closed with monetary relief", f"date received {rq.start}..{rq.end}",
                   "all rows (page size or every page)"],
            data_dependency="Rows come from every page of the filtered table.",
            control_dependency="The row count decides whether the page size must be raised.",
            inclusion=["company response Closed with monetary relief", f"received {rq.start}..{rq.end}"],
            exclusion=["Closed with non-monetary relief", "rows beyond the first page of 10"],
            traps=["criterion mismatch: 'Closed with non-monetary relief' is a near-miss response",
                   "dependency not closed: results exceed the default 10 rows per page",
                   "drift: the date range defaults to the last three years"],
            column_notes={"date_received": "ISO date YYYY-MM-DD"},
        ),
        TaskDraft(
            task_id="offline_regulatory_003", domain=DOMAIN, family=FAMILY, start_url=DOCUMENTS_URL,
            constraint_instruction=(
                f"In the document library, filter type \"Enforcement action\", topic \"{form['topic']}\" and status "
                f"\"Terminated\" (the filter form is posted; the URL does not change). Open each document and its "
                f"PDF order; from the PDF's relief table report the respondent and the civil money penalty "
                f"(not consumer redress, not total relief)."
            ),
            goal_instruction=(
                f"For the terminated enforcement actions about {form['topic'].lower()}, what civil money penalty "
                f"did each order impose on its respondent?"
            ),
            columns=("respondent", "civil_money_penalty"),
            rows=[(d.respondent, money(d.penalty)) for d in sorted(docs, key=lambda d: d.respondent)],
            record_separator=";",
            sorting="respondent ascending",
            gates=["document type = Enforcement action", f"topic = {form['topic']}", "status = Terminated",
                   "relief table of each PDF order"],
            data_dependency="The filtered list supplies the documents whose PDFs hold the penalties.",
            control_dependency="Only the civil money penalty row of each relief table counts.",
            inclusion=[f"terminated enforcement actions on {form['topic']}"],
            exclusion=["reports", "consumer redress or total relief amounts", "the detail page's total relief"],
            traps=["in-page misreading: the PDF relief table lists redress, penalty and total",
                   "dependency not closed: the penalty is only in the linked PDF, not on the detail page"],
            column_notes={"civil_money_penalty": "US dollars as printed, e.g. $1,250,000"},
        ),
        _actions_draft(data),
        _cohort_draft(data),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


ENFORCEMENT_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/enforcement"
ACTION_STATUS = "Terminated"


def choose_action_window(data: RegulatoryData) -> tuple[str, str]:
    """A two-year initial-filing window whose terminated actions are 4-7, include an order without redress,
    are all off the default first page, and sit next to both near-misses (an Expired action filed in the
    window; a Terminated action filed before it but updated inside it)."""
    default_page = {a.slug for a in data.actions[:ACTION_PAGE_SIZE]}

    def fits(window: tuple[str, str]) -> bool:
        found = search_actions(data, ActionQuery("filed", *window, status=ACTION_STATUS))
        by_update = search_actions(data, ActionQuery("updated", *window, status=ACTION_STATUS))
        expired = search_actions(data, ActionQuery("filed", *window, status="Expired"))
        return (4 <= len(found) <= 7 and any(not a.redress for a in found) and any(a.redress for a in found)
                and not {a.slug for a in found} & default_page and bool(expired)
                and bool({a.slug for a in by_update} - {a.slug for a in found}))

    windows = [(f"{y}-{m:02d}-01", f"{y + 2}-{m:02d}-01") for y in range(2013, 2021) for m in (1, 4, 7, 10)]
    return first_fit(windows, fits, "enforcement-action filing window")


def action_rows(data: RegulatoryData) -> list[tuple[str, ...]]:
    start, end = choose_action_window(data)
    found = sorted(search_actions(data, ActionQuery("filed", start, end, status=ACTION_STATUS)),
                   key=lambda a: (a.filed, a.docket))
    return [(a.respondent, a.docket, a.filed.isoformat(), a.redress_text, str(a.first_page("redress") or "NONE"),
             money(a.penalty), str(a.first_page("penalty"))) for a in found]


def _actions_draft(data: RegulatoryData) -> TaskDraft:
    start, end = choose_action_window(data)
    return TaskDraft(
        task_id="offline_regulatory_004", domain=DOMAIN, family=FAMILY, start_url=ENFORCEMENT_URL,
        constraint_instruction=(
            f"In the enforcement actions list (accept the cookie banner first) set 'Filter dates by' to 'Initial "
            f"filing date' (the default filters by Last updated), the dates {start} to {end} and Status "
            f"'{ACTION_STATUS}' (not Expired), and apply the filters. For every listed action open its page and its "
            f"Consent Order PDF (not the Stipulation). From the consent order report the consumer redress amount and "
            f"the civil money penalty amount and, for each, the number of the PDF page (as printed in the page "
            f"header 'Page i of n') where that amount first appears; an order without consumer redress gets NONE in "
            f"both redress fields. Report respondent, docket number, initial filing date, redress amount, redress "
            f"page, penalty amount and penalty page."
        ),
        goal_instruction=(
            f"For the enforcement actions initially filed between {start} and {end} that are now terminated, how "
            f"much consumer redress and what civil money penalty did each consent order impose, and on which page "
            f"of the consent order does each amount first appear? Give respondent, docket number and initial filing "
            f"date too, and NONE where an order imposes no redress."
        ),
        columns=("respondent", "docket", "initial_filing_date", "redress_usd", "redress_page", "penalty_usd",
                 "penalty_page"),
        rows=action_rows(data),
        header=True,
        sorting="initial_filing_date ascending, then docket",
        gates=["cookie banner dismissed", "date filter applied to the initial filing date (not Last updated)",
               f"initial filing date {start}..{end}", f"status = {ACTION_STATUS}",
               "each action's Consent Order PDF, every page"],
        data_dependency=("The filtered list supplies the actions; each action page supplies its documents; each "
                         "consent order's pages supply the amounts and the page of their first appearance."),
        control_dependency=("The date field and status decide the action set; only the consent order (not the "
                            "stipulation) counts, and only the first page an amount appears on."),
        inclusion=[f"actions initially filed {start}..{end}", f"status {ACTION_STATUS}"],
        exclusion=["actions selected by their Last updated date", "Expired actions",
                   "amounts or pages read from the Stipulation PDF", "the fee amount in the findings"],
        traps=["criterion mismatch: 'Filter dates by' defaults to Last updated; a terminated action filed before the "
               "window but updated inside it is a near-miss",
               "criterion mismatch: status 'Expired' is a look-alike of 'Terminated'",
               "in-page misreading: the findings print an unrelated fee amount; the redress amount is printed "
               "again on a later page; the Stipulation PDF prints both amounts on its first page",
               "drift: 'Back to enforcement actions' on an action page resets every filter"],
        column_notes={
            "redress_usd": "US dollars as printed in the consent order, e.g. $1,250,000; NONE without redress",
            "redress_page": "the consent-order page (header 'Page i of n') where the redress amount first appears; "
                            "NONE without redress",
            "penalty_page": "the consent-order page where the civil money penalty amount first appears",
            "initial_filing_date": "ISO date YYYY-MM-DD",
        },
        dedup_key=("docket",),
        inter_chain=True,
        shape="derived",
        mirrors=("CFPB_REPORTS consumerfinance_008: Respondent|Docket|FilingDate|RedressUSD|RedressPage|PenaltyUSD|"
                 "PenaltyPage from the enforcement-actions list, each action page and its consent-order PDF"),
        phases=("enforcement list: initial filing date window and status -> actions",
                "each action's page -> its Consent Order PDF (not the Stipulation)",
                "each consent order, page by page -> amounts and the page each first appears on",
                "derive: first page per amount, NONE where there is no redress, join to the actions"),
        derived=("redress_page", "penalty_page", "redress_usd"),
    )


def cohort_rows(data: RegulatoryData) -> list[tuple[str, ...]]:
    assert data.cohort is not None
    rows = []
    for k, (st, _) in enumerate(cohort_stages(data.complaints, data.cohort), 1):
        rows.append((str(k), "; ".join(st.excluded) or "NONE", st.month, str(st.month_count), st.state,
                     str(st.state_count), st.company, str(st.company_count), st.earliest.id,
                     st.earliest.received.isoformat()))
    return rows


def _cohort_draft(data: RegulatoryData) -> TaskDraft:
    plan = data.cohort
    assert plan is not None
    cohort = [c for c in data.complaints if c.product == plan.product and plan.start <= c.received.isoformat() <= plan.end]
    overall = max(BUREAUS, key=lambda b: sum(c.company == b for c in cohort))
    stages = cohort_stages(data.complaints, plan)
    after = [c for c in data.complaints if c.product == plan.product and c.received.isoformat() > plan.end]
    months_after = {c.received.isoformat()[:7] for c in after}
    spike_after = max(sum(c.received.isoformat()[:7] == m for c in after) for m in months_after)
    if overall == stages[0][0].company or spike_after <= stages[0][0].month_count:
        raise ValueError("regulatory: the credit-reporting cohort lacks its traps for this seed")
    return TaskDraft(
        task_id="offline_regulatory_005", domain=DOMAIN, family=FAMILY, start_url=COMPLAINTS_URL,
        constraint_instruction=(
            f"In the complaint database (accept the cookie banner first) choose product \"{plan.product}\" and "
            f"Date received {plan.start} to {plan.end} (the default covers only the last three years), apply, and "
            f"export the CSV of every matching complaint. Stage 1: the peak month is the calendar month with the "
            f"most complaints (tie: the earlier month); in that month find the state with the most complaints and "
            f"the company with the most complaints (ties: alphabetical), and that company's earliest complaint in "
            f"the month (earliest date, then smaller complaint id). Stage 2: remove every complaint of stage 1's top "
            f"company from the WHOLE cohort (not only from the peak month) and recompute everything; stage 3: also "
            f"remove stage 2's top company and recompute again. Report per stage: stage number, the companies "
            f"excluded so far (NONE, or names joined by '; '), peak month (YYYY-MM), its complaint count, top "
            f"state and its count, top company and its count, the earliest complaint's id and date received."
        ),
        goal_instruction=(
            f"Among complaints about credit reporting or other personal consumer reports received from "
            f"{plan.start} to {plan.end}, in which month did they peak, and in which state and against which "
            f"company did that peak concentrate, starting with which complaint? Then set aside every complaint "
            f"against the company that drove the peak and find the next peak the same way, and do it once more: "
            f"three rounds, each with the month and its volume, the leading state and company with their counts, "
            f"and the leading company's first complaint of that month (id and date)."
        ),
        columns=("stage", "excluded_companies", "peak_month", "month_complaints", "top_state", "state_complaints",
                 "top_company", "company_complaints", "earliest_complaint_id", "earliest_date"),
        rows=cohort_rows(data),
        header=True,
        sorting="stage ascending",
        gates=["cookie banner dismissed", f"product = {plan.product}",
               f"date received {plan.start}..{plan.end} (not the default last three years)",
               "every matching complaint (CSV export or all pages)"],
        data_dependency=("The filtered complaints supply the monthly counts; the peak month's complaints supply "
                         "the top state, top company and earliest complaint; each stage's top company is removed "
                         "from the whole cohort before the next stage is computed."),
        control_dependency=("Each stage depends on the previous stage's top company; the product bucket and "
                            "window decide the cohort."),
        inclusion=[f"product {plan.product}", f"received {plan.start}..{plan.end}"],
        exclusion=["complaints outside the window", "other products",
                   "complaints of companies removed in earlier stages (from every month)"],
        traps=["near-miss: the month just after the window has a larger spike than the peak inside it",
               f"criterion mismatch: the Counts panel's top company for the whole cohort ({overall}) is not the "
               f"peak month's top company",
               "dependency not closed: removing a company only from the peak month gives wrong later stages",
               "drift: the date range defaults to the last three years; a complaint page's 'Back to results' "
               "resets every filter"],
        column_notes={
            "peak_month": "YYYY-MM with the most complaints among those not excluded (tie: earlier month)",
            "month_complaints": "number of complaints in the peak month",
            "top_state": "state with the most complaints in the peak month (tie: alphabetical)",
            "state_complaints": "that state's complaints in the peak month",
            "top_company": "company with the most complaints in the peak month (tie: alphabetical)",
            "company_complaints": "that company's complaints in the peak month",
            "earliest_complaint_id": "the top company's earliest complaint in the peak month (date, then id)",
            "excluded_companies": "top companies of the earlier stages, removed from the whole cohort; NONE first",
        },
        inter_chain=True,
        shape="derived",
        mirrors=("CFPB_COMPLAINT_DATABASE consumerfinance_013/014: Cluster|Month|MonthComplaints|Excluded...|"
                 "TopState|StateComplaints|TopCompany|CompanyComplaints|EarliestComplaintID|EarliestDate, "
                 "iterative removal of the dominant company from the whole cohort"),
        phases=(f"complaint search: {plan.product}, {plan.start}..{plan.end} -> every complaint (CSV)",
                "stage 1: peak month -> its top state, top company and that company's earliest complaint",
                "stages 2 and 3: remove the previous top company from the whole cohort and recompute"),
        derived=("excluded_companies", "peak_month", "month_complaints", "top_state", "state_complaints",
                 "top_company", "company_complaints", "earliest_complaint_id"),
    )
