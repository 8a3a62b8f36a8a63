"""The archive's advanced search, shared by the pages and the oracles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from tasks.offline.sites.scholar.data import ALL_CATEGORIES, PAGE_SIZES, Paper, ScholarData

FIELDS = {"all": "All fields", "title": "Title", "abstract": "Abstract"}
BASES = {"latest": "Latest version", "original": "Original submission (v1)"}
ORDERS = {"newest": "Newest first", "oldest": "Oldest first"}


@dataclass(frozen=True)
class Query:
    terms: str = ""
    field: str = "all"
    category: str = ""
    cross: bool = True  # include cross-listed papers (the default scope)
    basis: str = "latest"
    start: str = ""
    end: str = ""
    size: int = PAGE_SIZES[0]
    order: str = "newest"
    page: int = 1

    @classmethod
    def from_params(cls, params: QueryParams) -> Query:
        size = params.get("size", "")
        page = params.get("page", "")
        cross_values = params.getlist("cross")
        return cls(
            terms=params.get("terms", "").strip(),
            field=params.get("field", "all") if params.get("field") in FIELDS else "all",
            category=params.get("category", "") if params.get("category") in ALL_CATEGORIES else "",
            cross=(not cross_values) or "1" in cross_values,
            basis="original" if params.get("basis") == "original" else "latest",
            start=params.get("from", ""),
            end=params.get("to", ""),
            size=int(size) if size.isdigit() and int(size) in PAGE_SIZES else PAGE_SIZES[0],
            order="oldest" if params.get("order") == "oldest" else "newest",
            page=max(1, int(page)) if page.isdigit() else 1,
        )

    @property
    def active(self) -> bool:
        return bool(self.terms or self.category or self.start or self.end)

    def params(self, **changes: object) -> str:
        values = {
            "terms": self.terms, "field": self.field, "category": self.category, "cross": "1" if self.cross else "0",
            "basis": self.basis, "from": self.start, "to": self.end, "size": str(self.size), "order": self.order,
            "page": str(self.page),
        }
        values.update({k: str(v) for k, v in changes.items()})
        return urlencode(values)


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _matches_terms(paper: Paper, query: Query) -> bool:
    haystack = {
        "title": paper.title,
        "abstract": paper.abstract,
        "all": f"{paper.title} {paper.abstract} {' '.join(paper.authors)}",
    }[query.field].lower()
    words = haystack.replace(".", " ").replace(",", " ").split()
    return all(term in words for term in query.terms.lower().split())


def search(data: ScholarData, query: Query) -> list[Paper]:
    start, end = _day(query.start), _day(query.end)
    found = []
    for paper in data.papers:
        if query.category and not (
            paper.primary == query.category or (query.cross and query.category in paper.cross)
        ):
            continue
        day = paper.first_day if query.basis == "original" else paper.latest_day
        if (start and day < start) or (end and day > end):
            continue
        if query.terms and not _matches_terms(paper, query):
            continue
        found.append(paper)
    basis_day = (lambda p: p.first_day) if query.basis == "original" else (lambda p: p.latest_day)
    found.sort(key=lambda p: (basis_day(p), p.id), reverse=query.order == "newest")
    return found
