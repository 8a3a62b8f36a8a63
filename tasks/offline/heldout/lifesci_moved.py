"""Held-out lifesci task 2: the species once placed in one genus that now sit in another (a copy with a
selection over the synonym search).

New against the suite and the first held-out set: an old genus name searched with the synonym back-search
(off by default: every moved species vanishes), no family or date scope, several result pages, and only the
rows matched on an old name kept (the genus's current species match on their accepted name: the near miss).
"""

from __future__ import annotations

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft
from tasks.offline.sites.lifesci.data import DOMAIN, FAMILY, PREFIX, TaxonData
from tasks.offline.sites.lifesci.oracles import SEARCH_URL, choose
from tasks.offline.sites.lifesci.search import Query, search

TASK_ID = "offline_heldout_lifesci_002"
ACCEPTED = "accepted name"


def rows_of(data: TaxonData, q: Query) -> list[tuple[str, ...]]:
    return sorted((sp.name, sp.family, matched) for sp, matched in search(data, q)
                  if matched != ACCEPTED and sp.genus != q.name)


def choose_query(data: TaxonData) -> Query:
    """A genus the suite's lifesci tasks do not name; two result pages; 4-8 moved species, every match on an
    old name in exactly that genus; current species of the genus listed too; no other genus contains it."""
    used = repr(choose(data))
    genera = sorted({sp.genus for sp in data.species})

    def fits(q: Query) -> bool:
        found = search(data, q)
        moved = [(sp, m) for sp, m in found if m != ACCEPTED]
        return (10 < len(found) <= 20 and 4 <= len(moved) <= 8 and len(moved) < len(found)
                and all(m.startswith(q.name + " ") and sp.genus != q.name for sp, m in moved)
                and not any(q.name in g and g != q.name for g in genera) and q.name not in used)

    return first_fit((Query(name=g, synonyms=True) for g in genera), fits, "lifesci held-out old genus")


def draft(data: TaxonData) -> TaskDraft:
    q = choose_query(data)
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the taxon database's advanced search, enter \"{q.name}\" as Name contains and tick 'Include "
            f"synonyms (old names)' (off by default); keep All families and no created dates. Read every result "
            f"page. Keep only the rows whose 'Matched on' is an old name (not 'accepted name'): report the species "
            f"as listed, its family and the old name it matched on."
        ),
        goal_instruction=(
            f"Which species were once placed in the genus {q.name} but are now classified in another genus? Give "
            f"each current species name, its family and its former name in {q.name}."
        ),
        columns=("species", "family", "former_name"),
        rows=rows_of(data, q),
        sorting="species ascending",
        gates=[f"name contains \"{q.name}\"", "synonym back-search on (default: off)", "all families, no dates",
               "all result pages (or a larger page size)", "rows matched on an old name only"],
        data_dependency="The result list (every page) names each species, its family and the name it matched on.",
        control_dependency="The former-placement criterion decides the synonym box and which rows to keep; the "
                           "result count how many pages to read.",
        inclusion=[f"a synonym in {q.name}", f"current genus other than {q.name}"],
        exclusion=[f"the current species of {q.name} (matched on the accepted name)"],
        traps=["drift: the synonym back-search is off by default; without it no moved species is listed",
               "dependency not closed: more results than the default 10 per page",
               f"near miss: the current species of {q.name} are listed too (matched on the accepted name)",
               "in-page misreading: 'Matched on' gives the old name, the Species column the current one"],
        column_notes={"species": "the current name as listed", "former_name": "the old name in 'Matched on', as listed"},
    )


def walkthrough(data: TaxonData) -> list[Step]:
    q = choose_query(data)
    return [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "advanced search"},
        {"tool": "fill", "args": {"target": {"label": "Name contains"}, "value": q.name}, "why": "the old genus"},
        {"tool": "check", "args": {"target": {"label": "Include synonyms (old names)"}},
         "why": "old names too (off by default)"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "every result page"},
        {"tool": "extract_rows", "args": {"columns": {"species": "Species", "family": "Family",
                                                      "former_name": "Matched on"}},
         "why": "rows as listed"},
        {"tool": "discard_rows", "args": {"where": {"former_name": ACCEPTED}},
         "why": "the genus's current species are not moved ones"},
        {"tool": "finish", "args": {"order_by": ["species"]}, "why": "only the moved species left"},
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
