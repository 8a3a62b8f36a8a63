"""Regulatory resources (CFPB style): a complaint database and a document library with PDF orders.

Mechanics: facets (product, sub-product, issue, state, company, company response, tag) with counts; the
company facet is a custom ARIA listbox, not a native select; a date-received range widget whose default is
only the last three years of the data (older complaints silently dropped); a page-size selector (10 rows
by default) with page-number pagination; CSV export of the filtered set; a cookie banner that blocks clicks
until dismissed; complaint pages whose "Back to results" / "New search" links RESET all filters. The
document library filters by year, topic, status and type through a POSTed form (the URL never changes);
detail pages link generated PDF orders whose relief table holds the answer-bearing amounts. An enforcement
actions list filters by a date range applied to "Last updated" by default (or to the initial filing date),
status and product, ten actions per page; each action page links a multi-page consent order PDF (page
header "File No. ... | Page i of n") and a look-alike stipulation PDF, and its "Back to enforcement actions"
link resets the filters. The complaint database also holds a credit-reporting product bucket whose
monthly volume has spikes driven by single companies.
"""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish, record_pair

PREFIX = "regulatory"
FAMILY = "Regulatory resources"
DOMAIN = "OFFLINE_REGULATORY"
COMPLAINT_COUNT = 3000
DOCUMENT_COUNT = 90
FIRST_DAY, LAST_DAY = date(2014, 1, 1), date(2024, 12, 31)
DEFAULT_WINDOW = ("2022-01-01", "2024-12-31")  # the widget's default: the last three years of data
ALL_DATES_FROM = "2011-12-01"
PAGE_SIZES = (10, 25, 50, 100)
DEFAULT_DOCUMENTS_SHOWN = 10
CONSENT_COOKIE = "reg_consent"

PRODUCTS = {
    "Mortgage": ["Conventional home mortgage", "FHA mortgage", "Home equity loan"],
    "Debt collection": ["Medical debt", "Credit card debt", "Auto debt"],
    "Credit card": ["General-purpose credit card", "Store credit card"],
    "Checking or savings account": ["Checking account", "Savings account"],
    "Student loan": ["Federal student loan", "Private student loan"],
    "Vehicle loan or lease": ["Loan", "Lease"],
}
ISSUES = {
    "Mortgage": ["Trouble during payment process", "Applying for a mortgage", "Closing on a mortgage"],
    "Debt collection": ["Attempts to collect debt not owed", "Written notification about debt", "False statements"],
    "Credit card": ["Problem with a purchase", "Fees or interest", "Billing disputes"],
    "Checking or savings account": ["Managing an account", "Opening an account", "Closing an account"],
    "Student loan": ["Dealing with your lender", "Struggling to repay", "Getting a loan"],
    "Vehicle loan or lease": ["Managing the loan or lease", "Problems at the end of the loan", "Getting a loan"],
}
COMPANIES = [
    "Arbor Point Bank", "Bluestem Lending", "Carrow Financial", "Delmar Credit Union", "Eastgate Servicing",
    "Foxglove Capital", "Greyline Collections", "Harbor Trust Co.", "Ivy Lane Mortgage", "Juniper Auto Finance",
    "Keystone Card Services", "Lakeshore Student Aid",
]
STATES = ["AZ", "CA", "CO", "FL", "GA", "IL", "MI", "NC", "NY", "OH", "TX", "WA"]
RESPONSES = [
    "Closed with explanation", "Closed with monetary relief", "Closed with non-monetary relief",
    "In progress", "Untimely response",
]
TAGS = ["Older American", "Servicemember", "Older American, Servicemember"]
TOPICS = ["Mortgages", "Debt collection", "Credit reporting", "Student loans", "Payday lending", "Deposits"]
DOC_STATUSES = ["Active", "Terminated", "Pending"]
DOC_TYPES = ["Enforcement action", "Report"]
FIRM_WORDS = ["Atlas", "Beacon", "Cobalt", "Drummond", "Everly", "Fulton", "Garnet", "Hollis", "Ingram", "Jasper",
              "Kingsley", "Lowell", "Meridian", "Norland", "Orchard", "Preston", "Quarry", "Redwood"]
FIRM_KINDS = ["Financial LLC", "Lending Inc.", "Recovery Group", "Servicing Corp.", "Credit Partners"]


@dataclass(frozen=True)
class Complaint:
    id: str
    received: date
    product: str
    sub_product: str
    issue: str
    state: str
    company: str
    response: str
    tags: str
    timely: str
    narrative: str


@dataclass(frozen=True)
class Document:
    slug: str
    title: str
    doc_type: str
    respondent: str
    issued: date
    topic: str
    status: str
    penalty: int
    redress: int
    summary: str


@dataclass(frozen=True)
class RegulatoryData:
    complaints: tuple[Complaint, ...]  # newest first
    documents: tuple[Document, ...]  # newest first
    actions: tuple[Action, ...] = ()  # enforcement actions, most recently updated first
    cohort: CohortPlan | None = None  # 005's product bucket and window

    def action(self, slug: str) -> Action | None:
        return next((a for a in self.actions if a.slug == slug), None)

    def complaint(self, cid: str) -> Complaint | None:
        return next((c for c in self.complaints if c.id == cid), None)

    def document(self, slug: str) -> Document | None:
        return next((d for d in self.documents if d.slug == slug), None)


def money(amount: int) -> str:
    return f"${amount:,}"


def build(seed: int) -> RegulatoryData:
    rng = random.Random(seed * 13 + 5)
    span = (LAST_DAY - FIRST_DAY).days
    days = sorted(FIRST_DAY + timedelta(days=rng.randrange(span + 1)) for _ in range(COMPLAINT_COUNT))
    complaints = []
    number = 1_400_000
    for day in days:
        number += rng.randrange(50, 400)
        product = rng.choice(list(PRODUCTS))
        tag = rng.choices(["", *TAGS], weights=[70, 15, 12, 3])[0]
        complaints.append(Complaint(
            id=str(number), received=day, product=product, sub_product=rng.choice(PRODUCTS[product]),
            issue=rng.choice(ISSUES[product]), state=rng.choice(STATES), company=rng.choice(COMPANIES),
            response=rng.choices(RESPONSES, weights=[55, 12, 18, 8, 7])[0], tags=tag,
            timely=rng.choices(["Yes", "No"], weights=[92, 8])[0],
            narrative=rng.choice(["Consumer did not consent to publish a narrative.",
                                  "The consumer described repeated contact about the account."]),
        ))
    complaints.reverse()

    documents = []
    firms = sorted({f"{a} {b}" for a in FIRM_WORDS for b in FIRM_KINDS})
    rng.shuffle(firms)
    doc_span = (LAST_DAY - date(2012, 1, 1)).days
    for i in range(DOCUMENT_COUNT):
        issued = date(2012, 1, 1) + timedelta(days=rng.randrange(doc_span + 1))
        doc_type = rng.choices(DOC_TYPES, weights=[75, 25])[0]
        topic = rng.choice(TOPICS)
        respondent = firms[i]
        penalty = rng.randrange(5, 400) * 25_000 if doc_type == "Enforcement action" else 0
        redress = rng.randrange(0, 300) * 10_000 if doc_type == "Enforcement action" else 0
        if doc_type == "Enforcement action":
            title = f"{respondent}: consent order"
            summary = (f"The Bureau issued a consent order against {respondent} concerning {topic.lower()}. "
                       f"The order requires total relief of {money(penalty + redress)}.")
        else:
            title = f"{topic} market report: {respondent} supervision findings"
            summary = f"A report on supervisory findings in {topic.lower()}, citing practices of {respondent}."
        documents.append(Document(
            slug=f"{issued.year}-{i + 1:03d}", title=title, doc_type=doc_type, respondent=respondent, issued=issued,
            topic=topic, status=rng.choices(DOC_STATUSES, weights=[50, 35, 15])[0], penalty=penalty,
            redress=redress, summary=summary,
        ))
    documents.sort(key=lambda d: (d.issued, d.slug), reverse=True)
    # Everything below draws from its own generators, so the data of tasks 001-003 stays as it was.
    actions = _actions(random.Random(seed * 13 + 7))
    cohort, credit = _credit_cohort(seed)
    merged = sorted([*complaints, *credit], key=lambda c: c.received, reverse=True)  # stable: old order kept
    return RegulatoryData(tuple(merged), tuple(documents), actions, cohort)


# ---------------------------------------------------------------- enforcement actions (task 004)

ACTION_STATUSES = ["Active", "Expired", "Terminated", "Pending litigation"]
ACTION_PRODUCTS = ["Mortgages", "Deposits", "Credit cards", "Debt collection", "Prepaid cards", "Student loans",
                   "Payday loans", "Credit reporting"]
FORUMS = ["Administrative proceeding", "Federal district court"]
DATE_FIELDS = {"updated": "Last updated", "filed": "Initial filing date"}
ACTION_PAGE_SIZE = 10
ACTION_COUNT = 80
ACTION_WORDS = ["Allied", "Bayview", "Crescent", "Dominion", "Emerald", "Frontier", "Gateway", "Heritage", "Imperial",
                "Jubilee", "Keystone", "Landmark", "Monarch", "Northgate", "Oakmont", "Pioneer", "Regent", "Sterling"]
ACTION_KINDS = ["Bank, N.A.", "Lending, LLC", "Servicing, Inc.", "Payments Corp.", "Financial Group", "Credit Co."]


@dataclass(frozen=True)
class Action:
    slug: str
    respondent: str
    docket: str
    filed: date
    updated: date
    status: str
    products: tuple[str, ...]
    forum: str
    redress: int  # 0: the order requires no consumer redress
    penalty: int
    decoy: int  # fees found charged (an amount in the findings that is not relief)
    layout: tuple[str, ...]  # section key per consent-order page

    @property
    def redress_text(self) -> str:
        return money(self.redress) if self.redress else "NONE"

    def first_page(self, section: str) -> int | None:
        """The consent-order page where the amount of `section` ('redress'/'penalty') is first printed."""
        return next((i for i, key in enumerate(self.layout, 1) if key == section), None)


def _actions(rng: random.Random) -> tuple[Action, ...]:
    firms = sorted({f"{a} {b}" for a in ACTION_WORDS for b in ACTION_KINDS})
    rng.shuffle(firms)
    actions = []
    for i in range(ACTION_COUNT):
        filed = date(2012, 1, 1) + timedelta(days=rng.randrange((LAST_DAY - date(2012, 1, 1)).days - 400))
        updated = min(LAST_DAY, filed + timedelta(days=rng.randrange(30, 2600)))
        forum = rng.choices(FORUMS, weights=[75, 25])[0]
        docket = "" if forum == FORUMS[0] else f"1:{filed.year % 100:02d}-cv-{rng.randrange(1000, 9999)}"
        redress = 0 if rng.random() < 0.25 else rng.randrange(4, 900) * 25_000
        penalty = rng.randrange(2, 400) * 25_000
        penalty += 25_000 if penalty == redress else 0  # each amount printed is distinct
        layout = ["caption"] + ["background"] * rng.randrange(1, 3) + ["findings"] * rng.randrange(1, 3)
        if redress:
            layout += ["redress"] + ["conduct"] * rng.randrange(0, 2)
        layout += ["penalty"] + (["administration"] if redress else []) + ["conduct"] * rng.randrange(0, 2)
        layout += ["signatures"]
        actions.append(Action(
            slug=f"{rng.choice(ACTION_WORDS).lower()}-{i + 1:03d}", respondent=firms[i], docket=docket, filed=filed,
            updated=updated, status=rng.choices(ACTION_STATUSES, weights=[30, 25, 35, 10])[0],
            products=tuple(sorted(rng.sample(ACTION_PRODUCTS, rng.choice((1, 1, 1, 2))))), forum=forum,
            redress=redress, penalty=penalty, decoy=rng.randrange(40, 900) * 1_000 + 500, layout=tuple(layout),
        ))
    numbers: dict[int, int] = {}
    for i, a in sorted(enumerate(actions), key=lambda ia: (ia[1].filed, ia[1].slug)):
        if not a.docket:  # administrative dockets are numbered per year in filing order
            numbers[a.filed.year] = numbers.get(a.filed.year, 0) + 1
            actions[i] = replace(a, docket=f"{a.filed.year}-CFPB-{numbers[a.filed.year]:04d}")
    actions.sort(key=lambda a: (a.updated, a.slug), reverse=True)
    return tuple(actions)


@dataclass(frozen=True)
class ActionQuery:
    date_field: str = "updated"
    start: str = ""
    end: str = ""
    status: str = ""
    product: str = ""
    page: int = 1

    @classmethod
    def from_params(cls, params: dict[str, str]) -> ActionQuery:
        page = params.get("page", "")
        return cls(date_field=params.get("date_field", "updated") if params.get("date_field") in DATE_FIELDS
                   else "updated", start=params.get("from", ""), end=params.get("to", ""),
                   status=params.get("status", ""), product=params.get("product", ""),
                   page=max(1, int(page)) if page.isdigit() else 1)

    def params(self, **changes: object) -> dict[str, str]:
        values = {"date_field": self.date_field, "from": self.start, "to": self.end, "status": self.status,
                  "product": self.product, "page": str(self.page)}
        values.update({k: str(v) for k, v in changes.items()})
        return values


def search_actions(data: RegulatoryData, q: ActionQuery) -> list[Action]:
    found = []
    for a in data.actions:
        day = (a.filed if q.date_field == "filed" else a.updated).isoformat()
        if q.start and day < q.start or q.end and day > q.end:
            continue
        if q.status and a.status != q.status or q.product and q.product not in a.products:
            continue
        found.append(a)
    return found


def _page_sections(a: Action, styles: object) -> list[list[object]]:
    from reportlab.platypus import Paragraph, Spacer

    s = styles  # type: ignore[assignment]
    r, topic = a.respondent, ", ".join(a.products).lower()
    text = {
        "caption": [Paragraph("UNITED STATES OFFLINE CONSUMER BUREAU", s["Title"]),
                    Paragraph(f"In the matter of: {r}", s["Heading2"]), Paragraph("CONSENT ORDER", s["Heading1"]),
                    Paragraph(f"The Bureau has reviewed the practices of {r} in {topic} and has identified "
                              "violations of Federal consumer financial law. Respondent consents to this Order.",
                              s["Normal"])],
        "background": [Paragraph("Jurisdiction and definitions", s["Heading2"]),
                       Paragraph("The Bureau has jurisdiction over this matter. Terms used in this Order have the "
                                 "meanings given in the Consumer Financial Protection Act. " * 3, s["Normal"])],
        "findings": [Paragraph("Bureau findings and conclusions", s["Heading2"]),
                     Paragraph(f"Respondent charged affected consumers {money(a.decoy)} in fees that were not "
                               "disclosed as required. " + "Respondent's systems did not prevent the practice. " * 3,
                               s["Normal"])],
        "redress": [Paragraph("Order to pay redress", s["Heading2"]),
                    Paragraph(f"Within 30 days of the Effective Date, Respondent must pay {money(a.redress)} for "
                              "consumer redress to affected consumers, as set out in the redress plan.", s["Normal"])],
        "conduct": [Paragraph("Conduct provisions", s["Heading2"]),
                    Paragraph("Respondent and its officers must not misrepresent the terms of any product. " * 4,
                              s["Normal"])],
        "penalty": [Paragraph("Civil money penalty", s["Heading2"]),
                    Paragraph(f"Under section 1055(c) of the CFPA, Respondent must pay a civil money penalty of "
                              f"{money(a.penalty)} to the Bureau within 10 days of the Effective Date.", s["Normal"])],
        "administration": [Paragraph("Administration of redress", s["Heading2"]),
                           Paragraph(f"The {money(a.redress)} for consumer redress will be distributed by a "
                                     "redress administrator approved by the Bureau.", s["Normal"])],
        "signatures": [Paragraph("Summary of monetary provisions", s["Heading2"]),
                       Paragraph(f"Consumer redress: {money(a.redress) if a.redress else 'none'}. "
                                 f"Penalty: {money(a.penalty)}. Total relief: {money(a.redress + a.penalty)}.",
                                 s["Normal"]), Spacer(1, 24),
                       Paragraph("IT IS SO ORDERED. Director, Offline Consumer Bureau.", s["Normal"])],
    }
    return [text[key] for key in a.layout]


def _pdf(pages: list[list[object]], header: str, title: str) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.platypus import PageBreak, SimpleDocTemplate

    buffer = io.BytesIO()
    total = len(pages)

    def draw_header(canvas: object, doc: object) -> None:
        canvas.saveState()  # type: ignore[attr-defined]
        canvas.setFont("Helvetica", 8)  # type: ignore[attr-defined]
        canvas.drawString(72, 750, f"{header} | Page {doc.page} of {total}")  # type: ignore[attr-defined]
        canvas.restoreState()  # type: ignore[attr-defined]

    pdf = SimpleDocTemplate(buffer, pagesize=letter, title=title, author="Offline Bureau", creator="sgr offline",
                            producer="sgr offline", invariant=1)
    story: list[object] = []
    for i, flowables in enumerate(pages):
        story += [*flowables, *([PageBreak()] if i < total - 1 else [])]
    pdf.build(story, onFirstPage=draw_header, onLaterPages=draw_header)
    return buffer.getvalue()


@lru_cache(maxsize=256)
def consent_order_pdf(a: Action) -> bytes:
    from reportlab.lib.styles import getSampleStyleSheet

    return _pdf(_page_sections(a, getSampleStyleSheet()), f"File No. {a.docket}", f"{a.respondent}: consent order")


@lru_cache(maxsize=256)
def stipulation_pdf(a: Action) -> bytes:
    """The look-alike document: the same amounts, printed on its first page."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph

    s = getSampleStyleSheet()
    redress = f"{money(a.redress)} for consumer redress and " if a.redress else ""
    pages = [[Paragraph("STIPULATION AND CONSENT TO THE ISSUANCE OF A CONSENT ORDER", s["Title"]),
              Paragraph(f"{a.respondent} consents to pay {redress}a civil money penalty of {money(a.penalty)}, "
                        "as set out in the Consent Order.", s["Normal"])],
             [Paragraph("Waivers", s["Heading2"]), Paragraph("Respondent waives all rights to seek judicial review. " * 3,
                                                             s["Normal"])]]
    return _pdf(pages, f"File No. {a.docket}", f"{a.respondent}: stipulation")


# ---------------------------------------------------------------- credit-reporting complaints (task 005)

CREDIT_PRODUCT = "Credit reporting or other personal consumer reports"
CREDIT_SUB_PRODUCTS = ["Credit reporting", "Other personal consumer report"]
CREDIT_ISSUES = ["Incorrect information on your report", "Improper use of your report",
                 "Problem with a company's investigation"]
BUREAUS = ["Northstar Credit Bureau", "Veritas Data Reporting", "Pinnacle Consumer Reports",
           "Clearpath Tenant Screening", "Summit Check Services"]
ALL_PRODUCTS = {**PRODUCTS, CREDIT_PRODUCT: CREDIT_SUB_PRODUCTS}
ALL_ISSUES = {**ISSUES, CREDIT_PRODUCT: CREDIT_ISSUES}
ALL_COMPANIES = [*COMPANIES, *BUREAUS]
STAGES = 3  # the peak, then two rounds of removing the peak month's top company from the whole cohort


@dataclass(frozen=True)
class CohortPlan:
    product: str
    start: str
    end: str


def _month_days(year: int, month: int) -> int:
    return ((date(year + month // 12, month % 12 + 1, 1)) - date(year, month, 1)).days


def _credit_cohort(seed: int) -> tuple[CohortPlan, list[Complaint]]:
    """Background volume all through the data, plus spikes inside the cohort window, each driven by one company
    and one state, so the peak moves when its company is removed; a larger spike just after the window."""
    for variant in range(40):
        rng = random.Random(seed * 13 + 11 + variant * 101)
        first_year = rng.randrange(2016, 2019)
        plan = CohortPlan(CREDIT_PRODUCT, f"{first_year}-01-01", f"{first_year + 2}-06-30")
        complaints = _credit_complaints(rng, first_year)
        if _stages_are_unique(complaints, plan):
            return plan, complaints
    raise ValueError("regulatory: no credit-reporting cohort with unique peaks for this seed")


def _credit_complaints(rng: random.Random, first_year: int) -> list[Complaint]:
    weights = [38, 16, 14, 12, 20]  # Northstar leads the whole cohort, never a spike month
    months = [(y, m) for y in range(2016, 2025) for m in range(1, 13)]
    window = [(y, m) for (y, m) in months if (first_year, 1) <= (y, m) <= (first_year + 2, 6)]
    spike_months = rng.sample(window, 3)
    spikes = {spike_months[0]: (1, 22), spike_months[1]: (2, 16), spike_months[2]: (3, 11)}
    spikes[(first_year + 2, 7 + rng.randrange(2))] = (4, 34)  # the near-miss just outside the window
    drafts: list[tuple[date, str, str]] = []  # (day, state, company)
    for (y, m) in months:
        days = _month_days(y, m)
        for _ in range(rng.randrange(6, 12)):
            drafts.append((date(y, m, rng.randrange(1, days + 1)), rng.choice(STATES),
                           rng.choices(BUREAUS, weights=weights)[0]))
        if (y, m) in spikes:
            company_index, size = spikes[(y, m)]
            state = rng.choice(STATES)
            for _ in range(size):
                company = BUREAUS[company_index] if rng.random() < 0.75 else rng.choice(BUREAUS[2:])
                drafts.append((date(y, m, rng.randrange(1, days + 1)),
                               state if rng.random() < 0.6 else rng.choice(STATES), company))
    drafts.sort()
    complaints, number = [], 3_100_000
    for day, state, company in drafts:
        number += rng.randrange(20, 90)
        complaints.append(Complaint(
            id=str(number), received=day, product=CREDIT_PRODUCT, sub_product=rng.choice(CREDIT_SUB_PRODUCTS),
            issue=rng.choice(CREDIT_ISSUES), state=state, company=company,
            response=rng.choices(RESPONSES, weights=[60, 5, 20, 8, 7])[0],
            tags=rng.choices(["", *TAGS], weights=[75, 12, 10, 3])[0], timely=rng.choices(["Yes", "No"], [93, 7])[0],
            narrative="Consumer did not consent to publish a narrative.",
        ))
    return complaints


@dataclass(frozen=True)
class Stage:
    excluded: tuple[str, ...]
    month: str
    month_count: int
    state: str
    state_count: int
    company: str
    company_count: int
    earliest: Complaint


def _top(counts: dict[str, int]) -> tuple[str, int, bool]:
    """(value, count, unique) of the largest count; ties resolved by the smaller value."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[0][0], ranked[0][1], len(ranked) == 1 or ranked[1][1] < ranked[0][1]


def cohort_stages(complaints: list[Complaint] | tuple[Complaint, ...], plan: CohortPlan) -> list[tuple[Stage, bool]]:
    """The iterative exclusion of task 005: each stage's peak month (count), its top state and top company
    (counts) and that company's earliest complaint in the month; the company is then removed from the whole
    cohort. The flag says every maximum was unique."""
    cohort = [c for c in complaints if c.product == plan.product and plan.start <= c.received.isoformat() <= plan.end]
    excluded: tuple[str, ...] = ()
    stages = []
    for _ in range(STAGES):
        rest = [c for c in cohort if c.company not in excluded]
        by_month: dict[str, int] = {}
        for c in rest:
            by_month[c.received.isoformat()[:7]] = by_month.get(c.received.isoformat()[:7], 0) + 1
        month, month_count, u1 = _top(by_month)
        in_month = [c for c in rest if c.received.isoformat()[:7] == month]
        state, state_count, u2 = _top({s: sum(c.state == s for c in in_month) for s in {c.state for c in in_month}})
        company, company_count, u3 = _top({k: sum(c.company == k for c in in_month)
                                           for k in {c.company for c in in_month}})
        earliest = min((c for c in in_month if c.company == company), key=lambda c: (c.received, int(c.id)))
        stages.append((Stage(excluded, month, month_count, state, state_count, company, company_count, earliest),
                       u1 and u2 and u3))
        excluded = (*excluded, company)
    return stages


def _stages_are_unique(complaints: list[Complaint], plan: CohortPlan) -> bool:
    stages = cohort_stages(complaints, plan)
    return all(ok for _, ok in stages) and len({s.month for s, _ in stages}) == STAGES


# ---------------------------------------------------------------- complaint search

FACETS = ("product", "sub_product", "issue", "state", "company", "response", "tag")
FACET_LABELS = {"product": "Product", "sub_product": "Sub-product", "issue": "Issue", "state": "State",
                "company": "Company", "response": "Company response", "tag": "Tags"}


@dataclass(frozen=True)
class ComplaintQuery:
    filters: tuple[tuple[str, str], ...] = ()
    start: str = DEFAULT_WINDOW[0]
    end: str = DEFAULT_WINDOW[1]
    size: int = PAGE_SIZES[0]
    page: int = 1

    @classmethod
    def from_params(cls, params: dict[str, str]) -> ComplaintQuery:
        size, page = params.get("size", ""), params.get("page", "")
        return cls(
            filters=tuple((f, params[f]) for f in FACETS if params.get(f)),
            start=params.get("date_received_min", DEFAULT_WINDOW[0]),
            end=params.get("date_received_max", DEFAULT_WINDOW[1]),
            size=int(size) if size.isdigit() and int(size) in PAGE_SIZES else PAGE_SIZES[0],
            page=max(1, int(page)) if page.isdigit() else 1,
        )

    def value(self, facet: str) -> str:
        return dict(self.filters).get(facet, "")

    def params(self, **changes: object) -> dict[str, str]:
        values = {**dict(self.filters), "date_received_min": self.start, "date_received_max": self.end,
                  "size": str(self.size), "page": str(self.page)}
        values.update({k: str(v) for k, v in changes.items()})
        return values


def _facet_value(c: Complaint, facet: str) -> str:
    return c.tags if facet == "tag" else getattr(c, facet)


def _matches(c: Complaint, q: ComplaintQuery, skip: str = "") -> bool:
    day = c.received.isoformat()
    if (q.start and day < q.start) or (q.end and day > q.end):
        return False
    for facet, wanted in q.filters:
        if facet == skip:
            continue
        value = _facet_value(c, facet)
        if facet == "tag" and wanted in value.split(", ") or value == wanted:
            continue
        return False
    return True


def search_complaints(data: RegulatoryData, q: ComplaintQuery) -> list[Complaint]:
    return [c for c in data.complaints if _matches(c, q)]


def facet_counts(data: RegulatoryData, q: ComplaintQuery) -> dict[str, list[tuple[str, int]]]:
    """Counts per option under every other active filter (the facet's own choice does not narrow it)."""
    options = {"product": list(ALL_PRODUCTS), "sub_product": sorted({s for v in ALL_PRODUCTS.values() for s in v}),
               "issue": sorted({i for v in ALL_ISSUES.values() for i in v}), "state": STATES, "company": ALL_COMPANIES,
               "response": RESPONSES, "tag": TAGS[:2]}
    counts: dict[str, list[tuple[str, int]]] = {}
    for facet, values in options.items():
        tally = dict.fromkeys(values, 0)
        for c in data.complaints:
            if _matches(c, q, skip=facet):
                for v in (c.tags.split(", ") if facet == "tag" else [_facet_value(c, facet)]):
                    if v in tally:
                        tally[v] += 1
        counts[facet] = list(tally.items())
    return counts


CSV_COLUMNS = ("Complaint ID", "Date received", "Product", "Sub-product", "Issue", "State", "Company",
               "Company response", "Tags", "Timely response?")


def _csv_row(c: Complaint) -> list[str]:
    return [c.id, c.received.isoformat(), c.product, c.sub_product, c.issue, c.state, c.company, c.response,
            c.tags, c.timely]


# ---------------------------------------------------------------- documents


def search_documents(data: RegulatoryData, form: dict[str, str]) -> list[Document]:
    found = []
    for d in data.documents:
        if form.get("year") and str(d.issued.year) != form["year"]:
            continue
        if form.get("topic") and d.topic != form["topic"] or form.get("status") and d.status != form["status"]:
            continue
        if form.get("doc_type") and d.doc_type != form["doc_type"]:
            continue
        found.append(d)
    return found


@lru_cache(maxsize=256)
def document_pdf(doc: Document) -> bytes:
    """A consent order (or report) with text and a relief table; reportlab output is deterministic."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    buffer = io.BytesIO()
    pdf = SimpleDocTemplate(buffer, pagesize=letter, title=doc.title, author="Offline Bureau",
                            creator="sgr offline", producer="sgr offline", invariant=1)
    styles = getSampleStyleSheet()
    story = [
        Paragraph("UNITED STATES OFFLINE CONSUMER BUREAU", styles["Title"]),
        Paragraph(f"Document number {doc.slug}", styles["Normal"]),
        Paragraph(f"In the matter of: {doc.respondent}", styles["Heading2"]),
        Paragraph(f"Issued: {doc.issued.isoformat()} | Topic: {doc.topic} | Status: {doc.status}", styles["Normal"]),
        Spacer(1, 12),
    ]
    if doc.doc_type == "Enforcement action":
        story += [
            Paragraph("CONSENT ORDER", styles["Heading1"]),
            Paragraph(f"The Bureau finds that {doc.respondent} engaged in unfair practices in {doc.topic.lower()}. "
                      "Respondent shall pay the amounts set out in the relief table below within 30 days.",
                      styles["Normal"]),
            Spacer(1, 12),
            Paragraph("Relief ordered", styles["Heading3"]),
        ]
        table = Table([["Relief type", "Amount"], ["Consumer redress", money(doc.redress)],
                       ["Civil money penalty", money(doc.penalty)], ["Total relief", money(doc.penalty + doc.redress)]])
    else:
        story += [Paragraph("SUPERVISORY REPORT", styles["Heading1"]),
                  Paragraph(f"Examiners reviewed {doc.topic.lower()} practices.", styles["Normal"])]
        table = Table([["Finding", "Institutions"], ["Disclosure errors", "4"], ["Fee errors", "2"]])
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]))
    story.append(table)
    pdf.build(story)
    return buffer.getvalue()


# ---------------------------------------------------------------- pages


def _consented(request: Request) -> bool:
    return request.cookies.get(CONSENT_COOKIE) == "1"


def routes(data: RegulatoryData) -> list[Route]:
    async def home(request: Request) -> HTMLResponse:
        return render("regulatory/home.html", site_title="Consumer finance regulator", banner=not _consented(request),
                      complaints=len(data.complaints), documents=len(data.documents))

    async def complaints_page(request: Request) -> HTMLResponse:
        query = ComplaintQuery.from_params(dict(request.query_params))
        results = search_complaints(data, query)
        pages = max(1, math.ceil(len(results) / query.size))
        page = min(query.page, pages)
        shown = results[(page - 1) * query.size: page * query.size]
        page_links = [(n, "?" + urlencode(query.params(page=n))) for n in range(1, pages + 1)]
        return render(
            "regulatory/complaints.html", site_title="Complaint database", banner=not _consented(request),
            query=query, rows=shown, total=len(results), page=page, pages=pages, page_links=page_links,
            first=(page - 1) * query.size + 1, counts=facet_counts(data, query), labels=FACET_LABELS,
            products=ALL_PRODUCTS, issues=ALL_ISSUES, states=STATES, companies=ALL_COMPANIES, responses=RESPONSES,
            tags=TAGS[:2], sizes=PAGE_SIZES, default_window=DEFAULT_WINDOW, all_from=ALL_DATES_FROM,
            csv_href="complaints.csv?" + urlencode(query.params()),
            next_href=page_links[page][1] if page < pages else None,
        )

    async def complaints_csv(request: Request) -> Response:
        query = ComplaintQuery.from_params(dict(request.query_params))
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerows(_csv_row(c) for c in search_complaints(data, query))
        return Response(buffer.getvalue(), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="complaints.csv"'})

    async def complaint_page(request: Request) -> HTMLResponse:
        complaint = data.complaint(request.path_params["cid"])
        if complaint is None:
            return render("regulatory/missing.html", status_code=404, what=request.path_params["cid"])
        return render("regulatory/complaint.html", site_title=f"Complaint {complaint.id}", c=complaint,
                      banner=not _consented(request))

    async def documents_page(request: Request) -> HTMLResponse:
        form: dict[str, str] = {}
        if request.method == "POST":
            form = {k: str(v) for k, v in (await request.form()).items()}
            shown = search_documents(data, form)
        else:
            shown = list(data.documents[:DEFAULT_DOCUMENTS_SHOWN])
        years = sorted({d.issued.year for d in data.documents}, reverse=True)
        return render("regulatory/documents.html", site_title="Document library", banner=not _consented(request),
                      form=form, rows=shown, filtered=request.method == "POST", years=years, topics=TOPICS,
                      statuses=DOC_STATUSES, doc_types=DOC_TYPES, total=len(data.documents))

    async def document_page(request: Request) -> HTMLResponse:
        doc = data.document(request.path_params["slug"])
        if doc is None:
            return render("regulatory/missing.html", status_code=404, what=request.path_params["slug"])
        return render("regulatory/document.html", site_title=doc.title, d=doc, banner=not _consented(request))

    async def document_pdf_file(request: Request) -> Response:
        doc = data.document(request.path_params["slug"])
        if doc is None:
            return Response("not found", status_code=404)
        return Response(document_pdf(doc), media_type="application/pdf",
                        headers={"Content-Disposition": f'inline; filename="{doc.slug}.pdf"'})

    async def actions_page(request: Request) -> HTMLResponse:
        query = ActionQuery.from_params(dict(request.query_params))
        results = search_actions(data, query)
        pages = max(1, math.ceil(len(results) / ACTION_PAGE_SIZE))
        page = min(query.page, pages)
        shown = results[(page - 1) * ACTION_PAGE_SIZE: page * ACTION_PAGE_SIZE]
        page_links = [(n, "?" + urlencode(query.params(page=n))) for n in range(1, pages + 1)]
        return render("regulatory/actions.html", site_title="Enforcement actions", banner=not _consented(request),
                      query=query, rows=shown, total=len(results), page=page, pages=pages, page_links=page_links,
                      first=(page - 1) * ACTION_PAGE_SIZE + 1, date_fields=DATE_FIELDS, statuses=ACTION_STATUSES,
                      products=ACTION_PRODUCTS, next_href=page_links[page][1] if page < pages else None)

    async def action_page(request: Request) -> HTMLResponse:
        action = data.action(request.path_params["slug"])
        if action is None:
            return render("regulatory/missing.html", status_code=404, what=request.path_params["slug"])
        return render("regulatory/action.html", site_title=action.respondent, a=action, money=money,
                      banner=not _consented(request))

    async def action_pdf(request: Request) -> Response:
        action = data.action(request.path_params["slug"])
        kind = request.path_params["kind"]
        if action is None or kind not in ("consent-order", "stipulation"):
            return Response("not found", status_code=404)
        body = consent_order_pdf(action) if kind == "consent-order" else stipulation_pdf(action)
        return Response(body, media_type="application/pdf",
                        headers={"Content-Disposition": f'inline; filename="{action.slug}-{kind}.pdf"'})

    return [
        Route("/", home),
        Route("/enforcement", actions_page),
        Route("/enforcement/{slug}/{kind}.pdf", action_pdf),
        Route("/enforcement/{slug}", action_page),
        Route("/complaints", complaints_page),
        Route("/complaints.csv", complaints_csv),
        Route("/complaints/{cid}", complaint_page),
        Route("/documents", documents_page, methods=["GET", "POST"]),
        Route("/documents/{slug}.pdf", document_pdf_file),
        Route("/documents/{slug}", document_page),
    ]


# ---------------------------------------------------------------- tasks


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


def _complaint_steps(q: ComplaintQuery) -> list[Step]:
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": COMPLAINTS_URL}, "why": "open the complaint database"},
        {"tool": "click", "args": {"target": {"text": "Accept all cookies"}}, "why": "the banner blocks clicks"},
        {"tool": "select", "args": {"target": {"label": "Company"}, "option": q.value("company")},
         "why": "custom company dropdown"},
    ]
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
            *_complaint_steps(c.history_query),
            {"tool": "download", "args": {"target": {"text": "Export CSV"}}, "why": "every matching row"},
            {"tool": "extract_rows", "args": {"columns": {
                "complaint_id": "Complaint ID", "date_received": "Date received", "state": "State", "issue": "Issue"}},
             "why": "CSV rows"},
            {"tool": "finish", "args": {"order_by": ["date_received", "complaint_id"]}, "why": "all rows read"},
        ],
        "offline_regulatory_002": [
            *_complaint_steps(c.relief_query),
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


SITE = Site(
    prefix=PREFIX, title="Consumer finance regulator", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
