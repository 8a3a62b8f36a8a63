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
from functools import lru_cache
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.sites.regulatory.data import (
    ACTION_PAGE_SIZE,
    ACTION_PRODUCTS,
    ACTION_STATUSES,
    ALL_COMPANIES,
    ALL_DATES_FROM,
    ALL_ISSUES,
    ALL_PRODUCTS,
    CONSENT_COOKIE,
    DATE_FIELDS,
    DEFAULT_DOCUMENTS_SHOWN,
    DEFAULT_WINDOW,
    DOC_STATUSES,
    DOC_TYPES,
    PAGE_SIZES,
    RESPONSES,
    STATES,
    TAGS,
    TOPICS,
    Action,
    Document,
    RegulatoryData,
    money,
)
from tasks.offline.sites.regulatory.search import (
    CSV_COLUMNS,
    FACET_LABELS,
    ActionQuery,
    ComplaintQuery,
    _csv_row,
    facet_counts,
    search_actions,
    search_complaints,
    search_documents,
)


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
