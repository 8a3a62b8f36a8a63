"""The taxon database's advanced search, shared by the pages and the oracles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from tasks.offline.sites.lifesci.data import Species, TaxonData


@dataclass(frozen=True)
class Query:
    name: str = ""
    synonyms: bool = False
    family: str = ""
    created_from: str = ""
    created_to: str = ""

    @classmethod
    def from_params(cls, params: dict[str, str]) -> Query:
        return cls(params.get("name", "").strip(), params.get("synonyms") == "on", params.get("family", ""),
                   params.get("created_from", ""), params.get("created_to", ""))


def _parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def search(data: TaxonData, query: Query) -> list[tuple[Species, str]]:
    """(species, what matched): 'accepted name' or the synonym that matched."""
    needle = query.name.lower()
    start, end = _parse_day(query.created_from), _parse_day(query.created_to)
    found = []
    for sp in data.species:
        if query.family and sp.family != query.family:
            continue
        if (start and sp.created < start) or (end and sp.created > end):
            continue
        matched = "accepted name" if needle in sp.name.lower() else None
        if matched is None and query.synonyms:
            matched = next((s.name for s in sp.synonyms if needle in s.name.lower()), None)
        if matched is not None:
            found.append((sp, matched))
    return found
