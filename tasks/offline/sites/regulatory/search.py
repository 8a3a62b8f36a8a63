"""The regulator's searches, shared by the pages and the oracles: complaint facets and CSV rows, the document
library, the enforcement-action list."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.offline.sites.regulatory.data import (
    ALL_COMPANIES,
    ALL_ISSUES,
    ALL_PRODUCTS,
    DATE_FIELDS,
    DEFAULT_WINDOW,
    PAGE_SIZES,
    RESPONSES,
    STATES,
    TAGS,
    Action,
    Complaint,
    Document,
    RegulatoryData,
)


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
