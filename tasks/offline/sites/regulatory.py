"""Regulatory resources (CFPB style): a complaint database and a document library with PDF orders.

Mechanics: facets (product, sub-product, issue, state, company, company response, tag) with counts; the
company facet is a custom ARIA listbox, not a native select; a date-received range widget whose default is
only the last three years of the data (older complaints silently dropped); a page-size selector (10 rows
by default) with page-number pagination; CSV export of the filtered set; a cookie banner that blocks clicks
until dismissed; complaint pages whose "Back to results" / "New search" links RESET all filters. The
document library filters by year, topic, status and type through a POSTed form (the URL never changes);
detail pages link generated PDF orders whose relief table holds the answer-bearing amounts.
"""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._record_pair import TaskDraft, record_pair

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
    return RegulatoryData(tuple(complaints), tuple(documents))


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
    options = {"product": list(PRODUCTS), "sub_product": sorted({s for v in PRODUCTS.values() for s in v}),
               "issue": sorted({i for v in ISSUES.values() for i in v}), "state": STATES, "company": COMPANIES,
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
            products=PRODUCTS, issues=ISSUES, states=STATES, companies=COMPANIES, responses=RESPONSES,
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

    return [
        Route("/", home),
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
    ]
    return [record for draft in drafts for record in record_pair(draft)]


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
    }


SITE = Site(
    prefix=PREFIX, title="Consumer finance regulator", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
