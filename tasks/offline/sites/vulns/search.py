"""The vulnerability search, shared by the pages and the oracles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from tasks.offline.sites.vulns.data import Vuln, VulnData


@dataclass(frozen=True)
class Query:
    keyword: str = ""
    severity: str = ""
    date_type: str = "modified"
    start: str = ""
    end: str = ""
    vendor: str = ""
    product: str = ""
    include_deprecated: bool = False

    @classmethod
    def from_params(cls, params: dict[str, str]) -> Query:
        return cls(
            keyword=params.get("keyword", "").strip(),
            severity=params.get("severity", ""),
            date_type="published" if params.get("date_type") == "published" else "modified",
            start=params.get("from", ""),
            end=params.get("to", ""),
            vendor=params.get("vendor", ""),
            product=params.get("product", ""),
            include_deprecated=params.get("include_deprecated") == "on",
        )


def _parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def allowed_identifiers(data: VulnData, query: Query) -> set[str] | None:
    """Product identifiers a record must carry; None = no product scope. Deprecated ids need the flag."""
    if not (query.vendor or query.product):
        return None
    visible = {p.id for p in data.products.values() if query.include_deprecated or not p.deprecated}
    if query.product:
        chosen = {query.product} & visible
        if query.include_deprecated:
            chosen |= {p.id for p in data.products.values() if p.replaced_by == query.product}
        return chosen
    return {pid for pid in visible if data.products[pid].vendor == query.vendor}


def search(data: VulnData, query: Query) -> list[Vuln]:
    scope = allowed_identifiers(data, query)
    start, end = _parse_day(query.start), _parse_day(query.end)
    keyword = query.keyword.lower()
    found = []
    for vuln in data.vulns:
        day = vuln.published if query.date_type == "published" else vuln.modified
        if (start and day < start) or (end and day > end):
            continue
        if query.severity and vuln.severity != query.severity:
            continue
        if keyword and keyword not in vuln.summary.lower() and keyword != vuln.id.lower():
            continue
        if scope is not None and not scope.intersection(vuln.products):
            continue
        found.append(vuln)
    return found
