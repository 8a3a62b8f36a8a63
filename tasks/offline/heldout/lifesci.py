"""Held-out lifesci task: a family's species entered in a created-date window that occur in one country,
with the time from entry to last update.

New against the suite: the Family filter of the advanced search with a created window over several result
pages, then every species page for distribution (selection), both entry dates (a computed span) and the
taxon id; the type locality names countries too (a near miss for the distribution criterion).
"""

from __future__ import annotations

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.lifesci.data import COUNTRIES, DOMAIN, FAMILY, PREFIX, Species, TaxonData
from tasks.offline.sites.lifesci.oracles import SEARCH_URL, choose
from tasks.offline.sites.lifesci.search import Query, search

TASK_ID = "offline_heldout_lifesci_001"
WINDOWS = [(f"{y}-01-01", f"{y + 3}-12-31") for y in (2008, 2004, 2012, 2000, 2016)]


def _listed(data: TaxonData, q: Query) -> list[Species]:
    return [sp for sp, _ in search(data, q)]


def _kept(data: TaxonData, q: Query, country: str) -> list[Species]:
    return [sp for sp in _listed(data, q) if country in sp.distribution]


def rows(data: TaxonData, q: Query, country: str) -> list[tuple[str, ...]]:
    kept = _kept(data, q, country)
    days = {sp.slug: (sp.updated - sp.created).days for sp in kept}
    return [(sp.name, sp.taxon_id, str(sp.subspecies), str(days[sp.slug]))
            for sp in sorted(kept, key=lambda sp: (-days[sp.slug], sp.name))]


def choose_task(data: TaxonData) -> tuple[Query, str]:
    """A family the suite's lifesci tasks do not use; more than one result page; 3-8 species in the country;
    a listed species whose type locality (but not distribution) is that country."""
    c = choose(data)
    used = {c.count_family.name, c.type_genus.name}
    used |= {sp.family for sp in data.species_under(c.type_genus)}
    families = sorted({sp.family for sp in data.species} - used)

    def fits(pick: tuple[Query, str]) -> bool:
        q, country = pick
        listed = _listed(data, q)
        kept = _kept(data, q, country)
        decoy = [sp for sp in listed if sp.type_locality == country and country not in sp.distribution]
        spans = [(sp.updated - sp.created).days for sp in kept]
        return 11 <= len(listed) <= 25 and 3 <= len(kept) <= 8 and bool(decoy) and len(set(spans)) == len(spans)

    candidates = ((Query(family=f, created_from=start, created_to=end), country)
                  for start, end in WINDOWS for f in families for country in COUNTRIES)
    return first_fit(candidates, fits, "lifesci held-out family, window and country")


def draft(data: TaxonData) -> TaskDraft:
    q, country = choose_task(data)
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the taxon database's advanced search choose family {q.family} and the created range "
            f"{q.created_from} to {q.created_to}; read every result page (or raise 'Results per page'). Open each "
            f"listed species page and keep the species whose Distribution includes {country} (the type locality "
            f"does not count). Report the accepted name, the Taxon ID, the number of subspecies and "
            f"days_to_update = days from the entry's Created date to its Last updated date."
        ),
        goal_instruction=(
            f"Which species of the family {q.family} whose entries were created between {q.created_from} and "
            f"{q.created_to} are distributed in {country}? For each give its taxon id, its number of subspecies "
            f"and how many days passed between the entry's creation and its last update."
        ),
        columns=("species", "taxon_id", "subspecies", "days_to_update"),
        rows=rows(data, q, country),
        sorting="days_to_update descending (numeric), then species ascending",
        gates=[f"family = {q.family}", f"created date {q.created_from}..{q.created_to}",
               "all result pages (or a larger page size)",
               "every listed species page (distribution, taxon id, subspecies, entry dates)"],
        data_dependency="The result list (all pages) names the species; each species page supplies the "
                        "distribution the selection uses and the values and dates the answer is computed from.",
        control_dependency="The family and created criteria decide the search; the page count decides how many "
                           "pages to read; the distribution, only on species pages, decides which rows remain.",
        inclusion=[f"family {q.family}", f"entry created {q.created_from}..{q.created_to}",
                   f"{country} in the species' distribution"],
        exclusion=[f"species whose type locality is {country} but whose distribution does not include it",
                   "species of other families or created outside the window"],
        traps=["dependency not closed: more results than the default 10 per page",
               "dependency not closed: distribution, taxon id and entry dates are only on species pages",
               f"criterion mismatch: a listed species has its type locality in {country} without being "
               "distributed there",
               "in-page misreading: the species page shows Last updated above Created"],
        column_notes={
            "species": "accepted name, e.g. Genus epithet",
            "taxon_id": "the Taxon ID as shown on the species page",
            "subspecies": "integer number of subspecies",
            "days_to_update": "integer days from the Created date to the Last updated date of the entry",
        },
        shape="derived",
        mirrors="Reptile Database style: an advanced search by family and entry window over several pages; per "
                "species the distribution (selection), counts and the two entry dates (a computed span)",
        phases=("advanced search: family and created window, every result page",
                "open each listed species page: distribution, taxon id, subspecies, created and last updated",
                f"derive: keep those distributed in {country}; days from created to last updated; order"),
        derived=("days_to_update",),
    )


def walkthrough(data: TaxonData) -> list[Step]:
    q, country = choose_task(data)
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "advanced search"},
        {"tool": "select", "args": {"target": {"label": "Family"}, "option": q.family}, "why": "family scope"},
        {"tool": "set_range", "args": {"start_target": {"label": "Created from"}, "end_target": {"label": "Created to"},
                                       "start": q.created_from, "end": q.created_to}, "why": "created window"},
        {"tool": "select", "args": {"target": {"label": "Results per page"}, "option": "50"},
         "why": "more results than one default page"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "every result"},
        {"tool": "extract_rows", "args": {"into": "listed", "columns": {"species": "Species", "created": "Created"}},
         "why": "the species to open"},
    ]
    for sp in _listed(data, q):
        steps.append({"tool": "read_facts", "args": {
            "url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/species/{sp.slug}", "into": "entries",
            "fields": {"species": r"re:Accepted name: ([A-Z][a-z]+ [a-z]+)", "taxon_id": "Taxon ID",
                       "subspecies": "Subspecies", "distribution": "Distribution",
                       "created": r"re:Created: (\d{4}-\d{2}-\d{2})",
                       "updated": r"re:Last updated: (\d{4}-\d{2}-\d{2})"}},
            "why": "species page: distribution, ids and both entry dates"})
    span = "date_diff('day', CAST(created AS DATE), CAST(updated AS DATE))"
    sql = (
        f"SELECT species, taxon_id, subspecies, CAST({span} AS VARCHAR) AS days_to_update FROM entries "
        f"WHERE list_contains(string_split(distribution, ', '), '{country}') ORDER BY {span} DESC, species"
    )
    return [*steps, *derive_then_finish(sql, f"distributed in {country}; entry span in days")]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
