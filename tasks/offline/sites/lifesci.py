"""Life-science resources (Reptile Database / KEGG BRITE style): a taxonomic hierarchy and species entries.

Mechanics: a hierarchy browser whose nodes expand client-side (JavaScript fetches the children after a
delay, so the agent must wait); counts per node (valid species vs all taxa incl. subspecies); genus node
pages; species pages with synonyms, type material and created / last-updated dates; an advanced search whose
synonym (old name) back-search is off by default; page numbers plus a page-size selector. An expanded
order lists its families as a table (both counts), an expanded family its genera in display order (not
alphabetical); species pages carry a taxon ID numbered by entry creation. Historical type catalogues (linked
from the home page only) list specimens under the names and statuses they were catalogued with, beside the
current species; most of one catalogue's species have since moved genus and carry designed synonym lists.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish, record_pair

PREFIX = "lifesci"
FAMILY = "Life-science resources"
DOMAIN = "OFFLINE_TAXONDB"
PAGE_SIZES = (10, 25, 50)
CHILDREN_DELAY_S = 0.4

SYLLABLES = ["cal", "dry", "phis", "sau", "chel", "myx", "bor", "ten", "lep", "ast", "gon", "ur", "pel",
             "tri", "zon", "ach", "mel", "rhin", "oph", "cty", "ler", "dax", "pty", "vor"]
EPITHETS = ["minor", "major", "vittatus", "maculatus", "ornatus", "fasciatus", "gracilis", "robustus",
            "elegans", "striatus", "montanus", "sylvaticus", "lineatus", "punctatus", "nigriceps", "viridis",
            "brevicauda", "longicauda", "tenuis", "insularis", "occidentalis", "orientalis", "borealis",
            "australis", "similis", "affinis", "pulcher", "concolor", "variabilis", "annectens"]
JUNIOR_EPITHETS = ["obscurus", "fuscus", "rufescens", "pallidus", "bicolor", "cinereus", "modestus", "dubius",
                   "anomalus", "intermedius", "nanus", "crassus"]
AUTHORS = ["Boulenger", "Gray", "Duméril", "Peters", "Cope", "Günther", "Werner", "Mertens", "Smith", "Taylor",
           "Loveridge", "Schmidt", "Wagler", "Fitzinger", "Andersson", "Nikolsky", "Darevsky", "Vanzolini"]
MUSEUMS = ["MZX", "NHMB", "ZMV", "CASR", "USNX"]
COUNTRIES = ["Brazil", "Peru", "Kenya", "Tanzania", "India", "Sri Lanka", "Vietnam", "Madagascar", "Mexico",
             "Australia", "Indonesia", "Cameroon"]
TYPE_STATUSES = ["holotype", "lectotype", "neotype", "syntypes"]


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class Synonym:
    name: str
    author: str
    year: int


@dataclass(frozen=True)
class Species:
    slug: str
    genus: str
    epithet: str
    author: str
    year: int
    family: str
    order: str
    subspecies: int
    type_status: str
    catalogue: str
    type_locality: str
    created: date
    updated: date
    distribution: tuple[str, ...]
    synonyms: tuple[Synonym, ...]
    taxon_id: str = ""  # numbered in order of entry creation (older entries have smaller ids)

    @property
    def name(self) -> str:
        return f"{self.genus} {self.epithet}"


@dataclass(frozen=True)
class Node:
    id: str
    rank: str  # Order / Family / Genus
    name: str
    parent: str | None


@dataclass(frozen=True)
class Specimen:
    catalogue: str
    catalogued_as: str  # the binomial the historical catalogue files it under
    status: str  # type status as catalogued (may differ from the species page's current designation)
    species: str  # slug of the current accepted species


@dataclass(frozen=True)
class SpecimenSet:
    slug: str
    title: str
    museum: str
    period: str
    specimens: tuple[Specimen, ...]


@dataclass(frozen=True)
class TaxonData:
    nodes: dict[str, Node]
    species: list[Species]  # sorted by name
    specimen_sets: tuple[SpecimenSet, ...] = ()

    def children(self, node_id: str | None) -> list[Node]:
        return [n for n in self.nodes.values() if n.parent == node_id]

    def species_under(self, node: Node) -> list[Species]:
        return list(self._members.get((node.rank, node.name), ()))

    @cached_property
    def _members(self) -> dict[tuple[str, str], list[Species]]:
        """(rank, name) -> its species in name order, built once (the task pickers ask thousands of times)."""
        members: dict[tuple[str, str], list[Species]] = {}
        for sp in self.species:
            for rank, name in (("Order", sp.order), ("Family", sp.family), ("Genus", sp.genus)):
                members.setdefault((rank, name), []).append(sp)
        return members


def _word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


def _unique_names(rng: random.Random, count: int, parts: int, suffix: str, taken: set[str]) -> list[str]:
    """Names none of which contains another (so a substring name search never hits a neighbour)."""
    names: list[str] = []
    while len(names) < count:
        name = (_word(rng, parts) + suffix).capitalize()
        low = name.lower()
        if any(low in t or t in low for t in taken) or any(low in e for e in EPITHETS + JUNIOR_EPITHETS):
            continue
        taken.add(low)
        names.append(name)
    return names


def _day(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randrange((end - start).days + 1))


def build(seed: int) -> TaxonData:
    rng = random.Random(f"{PREFIX}:{seed}")
    taken: set[str] = set()
    nodes: dict[str, Node] = {}
    genus_family: dict[str, tuple[str, str]] = {}
    for order in _unique_names(rng, 3, 2, "iformes", taken):
        nodes[f"o-{order.lower()}"] = Node(f"o-{order.lower()}", "Order", order, None)
        for family in _unique_names(rng, rng.randint(3, 5), 2, "idae", taken):
            nodes[f"f-{family.lower()}"] = Node(f"f-{family.lower()}", "Family", family, f"o-{order.lower()}")
            for genus in _unique_names(rng, rng.randint(5, 9), 3, "", taken):
                nodes[f"g-{genus.lower()}"] = Node(f"g-{genus.lower()}", "Genus", genus, f"f-{family.lower()}")
                genus_family[genus] = (family, order)
    genera = sorted(genus_family)
    epithets = {genus: sorted(rng.sample(EPITHETS, rng.randint(2, 14))) for genus in genera}
    used_names = {f"{genus} {epithet}" for genus in genera for epithet in epithets[genus]}
    species: list[Species] = []
    for genus in genera:
        family, order = genus_family[genus]
        for epithet in epithets[genus]:
            year = rng.randint(1790, 2020)
            author = rng.choice(AUTHORS)
            synonyms: list[Synonym] = []
            # A name is either accepted or a synonym of exactly one species, never both.
            if rng.random() < 0.3:
                donor = rng.choice([g for g in genera if g != genus and f"{g} {epithet}" not in used_names])
                synonyms.append(Synonym(f"{donor} {epithet}", author, year))
                used_names.add(f"{donor} {epithet}")
            for _ in range(rng.choice([0, 0, 1, 2])):
                junior = f"{genus} {rng.choice(JUNIOR_EPITHETS)}"
                if junior not in used_names:
                    synonyms.append(Synonym(junior, rng.choice(AUTHORS), rng.randint(year, 2021)))
                    used_names.add(junior)
            created = _day(rng, date(max(1996, year), 1, 1), date(2024, 6, 30))
            species.append(Species(
                slug=f"{genus}-{epithet}".lower(), genus=genus, epithet=epithet, author=author, year=year,
                family=family, order=order, subspecies=rng.choice([0, 0, 0, 2, 3, 4]),
                type_status=rng.choices(TYPE_STATUSES, [50, 20, 8, 22])[0],
                catalogue=f"{rng.choice(MUSEUMS)} {rng.randint(1000, 99999)}",
                type_locality=rng.choice(COUNTRIES),
                created=created, updated=_day(rng, created, date(2024, 12, 31)),
                distribution=tuple(sorted(rng.sample(COUNTRIES, rng.randint(1, 3)))),
                synonyms=tuple(sorted(synonyms, key=lambda s: (s.year, s.name))),
            ))
    species.sort(key=lambda s: s.name)
    numbered = sorted(species, key=lambda s: (s.created, s.name))
    ids = {s.slug: str(10001 + i) for i, s in enumerate(numbered)}
    species = [replace(s, taxon_id=ids[s.slug]) for s in species]
    species, sets = _specimen_sets(random.Random(f"{PREFIX}:specimens:{seed}"), genera, species)
    return TaxonData(nodes, species, sets)


# ---------------------------------------------------------------- designed data of task 005 (specimen sets)

SET_MUSEUM = "NHMB"
REASSIGNED, STAYED = 8, 3  # specimens of the target set whose species left / kept the catalogued genus
CATALOGUE_STATUSES = {"holotype": ("holotype", "type"), "lectotype": ("syntype", "holotype"),
                      "neotype": ("type",), "syntypes": ("syntype",)}


def _specimen_sets(rng: random.Random, genera: list[str], species: list[Species]
                   ) -> tuple[list[Species], tuple[SpecimenSet, ...]]:
    """A historical type catalogue whose species were mostly moved to other genera since, with designed
    synonym lists: an older synonym in the current genus, a catalogued name that is a later combination (the
    original one is older), and old names shared with another species (their back-search is ambiguous);
    plus a second, unrelated catalogue. Species keep their place in the hierarchy (counts do not change)."""
    used = {s.name for s in species} | {syn.name for s in species for syn in s.synonyms}
    by_slug = {s.slug: s for s in species}
    picked: list[Species] = []
    for sp in rng.sample(species, len(species)):
        if sp.genus not in {p.genus for p in picked} and len(picked) < REASSIGNED + STAYED + 6:
            picked.append(sp)
    target, decoy = picked[:REASSIGNED + STAYED], picked[REASSIGNED + STAYED:]
    others = [s for s in species if s not in picked]

    def fresh(genus_pool: list[str], epithets: list[str]) -> str:
        """A binomial no species uses yet (not even as part of a longer name)."""
        for genus in rng.sample(genus_pool, len(genus_pool)):
            for epithet in epithets:
                name = f"{genus} {epithet}"
                if not any(name.lower() in u.lower() or u.lower() in name.lower() for u in used):
                    used.add(name)
                    return name
        raise ValueError(f"lifesci: no free combination among {genus_pool[:3]}... {epithets}")

    def add_synonym(slug: str, synonym: Synonym) -> None:
        sp = by_slug[slug]
        by_slug[slug] = replace(sp, synonyms=tuple(sorted((*sp.synonyms, synonym), key=lambda s: (s.year, s.name))))

    flags: list[set[str]] = [set() for _ in range(REASSIGNED)]
    for i in rng.sample(range(REASSIGNED), 3):
        flags[i].add("older_current")
    for i in rng.sample(range(REASSIGNED), 2):
        flags[i].add("later_catalogued")
    for i in rng.sample(range(REASSIGNED), 3):
        flags[i].add("ambiguous")
    statuses = ["holotype", "holotype", "holotype", "lectotype", "lectotype", "lectotype", "syntypes", "neotype"]
    rng.shuffle(statuses)
    specimens: list[Specimen] = []
    for n, sp in enumerate(target):
        year, author = rng.randint(1852, 1905), rng.choice(AUTHORS)
        number = f"{SET_MUSEUM} {rng.randint(100, 4999)}"
        if n >= REASSIGNED:  # still in the catalogued genus: not part of the answer
            later = tuple(replace(syn, year=max(syn.year, year + 1)) for syn in sp.synonyms)
            by_slug[sp.slug] = replace(sp, year=year, author=author, catalogue=number,
                                       synonyms=tuple(sorted(later, key=lambda s: (s.year, s.name))))
            specimens.append(Specimen(number, sp.name, rng.choice(["holotype", "type", "syntype"]), sp.slug))
            continue
        foreign = [g for g in genera if g != sp.genus]
        original = fresh(foreign, [sp.epithet])
        synonyms = [Synonym(original, author, year),
                    Synonym(sp.name, rng.choice(AUTHORS), rng.randint(year + 20, 2015))]
        catalogued = original
        if "later_catalogued" in flags[n]:
            later = Synonym(fresh(foreign, [sp.epithet]), rng.choice(AUTHORS), rng.randint(year + 3, year + 18))
            synonyms.append(later)
            catalogued = later.name
            add_synonym(rng.choice(others).slug, Synonym(later.name, rng.choice(AUTHORS), rng.randint(1880, 1990)))
        if "older_current" in flags[n]:
            junior = fresh([sp.genus], rng.sample(JUNIOR_EPITHETS, len(JUNIOR_EPITHETS)))
            synonyms.append(Synonym(junior, rng.choice(AUTHORS), year - rng.randint(2, 30)))
        if "ambiguous" in flags[n]:
            add_synonym(rng.choice(others).slug, Synonym(original, rng.choice(AUTHORS), rng.randint(year + 1, 1990)))
        status = statuses[n]
        shown = "holotype" if status == "lectotype" and n == min(
            i for i in range(REASSIGNED) if statuses[i] == "lectotype") else rng.choice(CATALOGUE_STATUSES[status])
        by_slug[sp.slug] = replace(sp, year=year, author=author, type_status=status, catalogue=number,
                                   synonyms=tuple(sorted(synonyms, key=lambda s: (s.year, s.name))))
        specimens.append(Specimen(number, catalogued, shown, sp.slug))
    decoy_specimens = tuple(
        Specimen(by_slug[sp.slug].catalogue, (sp.synonyms[0].name if sp.synonyms else sp.name),
                 rng.choice(["holotype", "syntype", "type"]), sp.slug) for sp in decoy)
    sets = (
        SpecimenSet("westwood-1868-1904", "Westwood expeditions type catalogue", SET_MUSEUM, "1868–1904",
                    tuple(sorted(specimens, key=lambda s: int(s.catalogue.split()[1])))),
        SpecimenSet("harlan-bequest", "Harlan bequest type catalogue", "various museums", "1921–1958", tuple(sorted(decoy_specimens, key=lambda s: s.catalogued_as))),
    )
    return [by_slug[s.slug] for s in species], sets


# ---------------------------------------------------------------- search


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


# ---------------------------------------------------------------- pages


def routes(data: TaxonData) -> list[Route]:
    by_slug = {s.slug: s for s in data.species}
    families = sorted(n.name for n in data.nodes.values() if n.rank == "Family")

    def counts(node: Node) -> dict[str, int]:
        under = data.species_under(node)
        return {"species": len(under), "taxa": len(under) + sum(s.subspecies for s in under)}

    async def home(request: Request) -> HTMLResponse:
        return render("lifesci/home.html", site_title="Taxon database", total=len(data.species))

    async def browse(request: Request) -> HTMLResponse:
        roots = [(n, counts(n)) for n in data.children(None)]
        return render("lifesci/browse.html", site_title="Browse the hierarchy", roots=roots)

    async def children(request: Request) -> JSONResponse:
        node_id = request.path_params["node_id"]
        if node_id not in data.nodes:
            return JSONResponse({"error": f"unknown node {node_id}"}, status_code=404)
        await asyncio.sleep(CHILDREN_DELAY_S)
        kids = [{"id": n.id, "rank": n.rank, "name": n.name, **counts(n),
                 "href": f"/{PREFIX}/node/{n.id}" if n.rank == "Genus" else None}
                for n in data.children(node_id)]
        return JSONResponse({"node": node_id, "children": kids})

    async def node_page(request: Request) -> HTMLResponse:
        node = data.nodes.get(request.path_params["node_id"])
        if node is None or node.rank != "Genus":
            return render("lifesci/missing.html", status_code=404, what=request.path_params["node_id"])
        return render("lifesci/node.html", site_title=f"Genus {node.name}", node=node,
                      family=data.nodes[node.parent or ""], species=data.species_under(node),
                      taxa=counts(node)["taxa"])

    async def species_page(request: Request) -> HTMLResponse:
        sp = by_slug.get(request.path_params["slug"])
        if sp is None:
            return render("lifesci/missing.html", status_code=404, what=request.path_params["slug"])
        return render("lifesci/species.html", site_title=sp.name, sp=sp)

    sets = {st.slug: st for st in data.specimen_sets}

    async def collections_page(request: Request) -> HTMLResponse:
        return render("lifesci/collections.html", site_title="Type collections", sets=list(sets.values()))

    async def collection_page(request: Request) -> HTMLResponse:
        st = sets.get(request.path_params["slug"])
        if st is None:
            return render("lifesci/missing.html", status_code=404, what=request.path_params["slug"])
        rows = [(sp, by_slug[sp.species]) for sp in st.specimens]
        return render("lifesci/collection.html", site_title=st.title, st=st, rows=rows)

    async def search_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = Query.from_params(params)
        size = int(params["size"]) if params.get("size", "").isdigit() and int(params["size"]) in PAGE_SIZES else 10
        page = int(params["page"]) if params.get("page", "").isdigit() and int(params["page"]) > 0 else 1
        submitted = bool(params)
        results = search(data, query) if submitted else []
        pages = max(1, -(-len(results) // size))
        page = min(page, pages)
        shown = results[(page - 1) * size: page * size]
        page_links = [(n, "?" + urlencode({**params, "page": str(n)})) for n in range(1, pages + 1)]
        return render("lifesci/search.html", site_title="Advanced search", query=query, families=families,
                      size=size, sizes=PAGE_SIZES, submitted=submitted, rows=shown, total=len(results),
                      page=page, pages=pages, page_links=page_links)

    return [
        Route("/", home),
        Route("/browse", browse),
        Route("/api/children/{node_id}", children),
        Route("/node/{node_id}", node_page),
        Route("/species/{slug}", species_page),
        Route("/search", search_page),
        Route("/collections", collections_page),
        Route("/collections/{slug}", collection_page),
    ]


# ---------------------------------------------------------------- tasks

SEARCH_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/search"
BROWSE_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/browse"
CREATED_WINDOWS = [("2005-01-01", "2019-12-31"), ("2000-01-01", "2014-12-31"), ("2010-01-01", "2024-06-30"),
                   ("1996-01-01", "2012-12-31")]


@dataclass(frozen=True)
class Chosen:
    synonym_query: Query
    count_family: Node
    type_genus: Node
    hierarchy_rule: HierarchyRule


def choose(data: TaxonData) -> Chosen:
    """The first candidate (in a fixed order) whose answer has the size and the trap the task needs."""
    by_name = sorted(data.nodes.values(), key=lambda n: n.name)
    genera = [n for n in by_name if n.rank == "Genus"]

    def fits_synonym(q: Query) -> bool:
        rows = search(data, q)
        via_synonym = sum(matched != "accepted name" for _, matched in rows)
        window_matters = len(search(data, replace(q, created_from="", created_to=""))) > len(rows)
        return 11 <= len(rows) <= 16 and via_synonym >= 2 and window_matters

    def fits_counts(family: Node) -> bool:
        children = data.children(family.id)
        counts = [len(data.species_under(g)) for g in children]
        taxa_differ = any(s.subspecies for g in children for s in data.species_under(g))
        return len(children) >= 5 and len(set(counts)) >= 3 and taxa_differ

    synonym_query = first_fit(
        (Query(name=g.name, synonyms=True, created_from=start, created_to=end)
         for g in genera for start, end in CREATED_WINDOWS), fits_synonym, "lifesci synonym search")
    count_family = first_fit((n for n in by_name if n.rank == "Family"), fits_counts, "lifesci family")

    def fits_types(genus: Node) -> bool:
        under = data.species_under(genus)
        holotypes = sum(s.type_status == "holotype" for s in under)
        return genus.name != synonym_query.name and 3 <= holotypes <= 6 and len(under) - holotypes >= 2

    rules = (HierarchyRule(t, m, n) for t in dict.fromkeys(THRESHOLDS) for m in (8, 9, 10, 11, 12, 7, 6, 13, 14, 5)
             for n in (12, 14, 10, 16, 11, 13, 15, *range(17, 30), *range(6, 10)))
    rule = first_fit(rules, lambda r: _hierarchy_fits(data, r), "lifesci hierarchy rule")
    return Chosen(synonym_query, count_family, first_fit(genera, fits_types, "lifesci genus"), rule)


def _path_to(data: TaxonData, node: Node) -> list[Node]:
    path = [node]
    while path[0].parent:
        path.insert(0, data.nodes[path[0].parent])
    return path


def tasks(data: TaxonData) -> list[dict[str, Any]]:
    c = choose(data)
    sq, fam, gen = c.synonym_query, c.count_family, c.type_genus
    gen_family = data.nodes[gen.parent or ""]
    synonym_rows = sorted((sp.name, sp.created.isoformat()) for sp, _ in search(data, sq))
    count_rows = sorted(((g.name, str(len(data.species_under(g)))) for g in data.children(fam.id)),
                        key=lambda r: (-int(r[1]), r[0]))
    holotype_rows = sorted(((s.name, s.catalogue, s.created.isoformat()) for s in data.species_under(gen)
                            if s.type_status == "holotype"), key=lambda r: (r[2], r[0]))
    drafts = [
        TaskDraft(
            task_id="offline_lifesci_001", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"In the taxon database's advanced search, enter \"{sq.name}\" as the name, tick 'Include "
                f"synonyms (old names)', and restrict the entry created date to {sq.created_from} through "
                f"{sq.created_to}. Make sure every result is read (raise results per page or visit each page). "
                f"List each accepted species name with its entry created date."
            ),
            goal_instruction=(
                f"Which species have ever been placed in the genus {sq.name}, whether they are still there or "
                f"were moved to another genus since, and had their database entry created between "
                f"{sq.created_from} and {sq.created_to}? Give accepted name and created date."
            ),
            columns=("species", "created"), rows=synonym_rows, record_separator=";",
            sorting="species name ascending",
            gates=[f"name = {sq.name}", "synonym back-search on",
                   f"created date {sq.created_from}..{sq.created_to}", "all result pages"],
            data_dependency="Old combinations in the synonym lists extend the candidate set beyond the genus.",
            control_dependency="The synonym option must be on before searching; the created window filters.",
            inclusion=[f"accepted name in {sq.name}, or a synonym in {sq.name}",
                       f"entry created {sq.created_from}..{sq.created_to} inclusive"],
            exclusion=["the synonym names themselves (report the accepted name)", "last-updated dates"],
            traps=["drift: synonym back-search is off by default and silently drops moved species",
                   "dependency not closed: more results than the default 10 per page"],
            column_notes={"created": "ISO date of the database entry's creation"},
        ),
        TaskDraft(
            task_id="offline_lifesci_002", domain=DOMAIN, family=FAMILY, start_url=BROWSE_URL,
            constraint_instruction=(
                f"In the hierarchy browser expand order {data.nodes[fam.parent or ''].name}, then family "
                f"{fam.name} (children load after a short delay). For every genus of the family report the number "
                f"of valid species shown in its node count (the Species column, not taxa incl. subspecies)."
            ),
            goal_instruction=(
                f"How many valid species does each genus of the family {fam.name} hold according to the taxon "
                f"database's hierarchy?"
            ),
            columns=("genus", "species"), rows=count_rows, header=True,
            sorting="species count descending (numeric), then genus ascending",
            gates=[f"order {data.nodes[fam.parent or ''].name} expanded", f"family {fam.name} expanded",
                   "wait for the client-side children to load"],
            data_dependency="The family's expanded node lists its genera and their counts.",
            control_dependency="Counts are read only after both levels are expanded.",
            inclusion=[f"every genus under {fam.name}"],
            exclusion=["taxa counts including subspecies", "genera of other families"],
            traps=["in-page misreading: each node shows both a species count and a taxa count",
                   "state: children render client-side after a delayed fetch (the agent must wait)"],
            column_notes={"species": "integer count of valid species"},
        ),
        TaskDraft(
            task_id="offline_lifesci_003", domain=DOMAIN, family=FAMILY, start_url=BROWSE_URL,
            constraint_instruction=(
                f"In the hierarchy browser expand order {_path_to(data, gen)[0].name} and family "
                f"{gen_family.name}, open genus {gen.name}, then open every species page of the genus. Keep the "
                f"species whose type status is exactly 'holotype' (not lectotype, neotype or syntypes) and "
                f"report the species name, the type's catalogue number and the entry's created date (not the "
                f"last-updated date)."
            ),
            goal_instruction=(
                f"For the genus {gen.name}, which species have a holotype as name-bearing type? Give the species, "
                f"the holotype's catalogue number and when the species' database entry was created."
            ),
            columns=("species", "catalogue", "created"), rows=holotype_rows,
            sorting="created date ascending, then species ascending",
            gates=[f"hierarchy expanded to genus {gen.name}", "every species page of the genus"],
            data_dependency="The genus page lists the species whose entry pages hold type material and dates.",
            control_dependency="Only type status 'holotype' qualifies.",
            inclusion=[f"species of genus {gen.name} with type status holotype"],
            exclusion=["lectotype, neotype and syntypes", "last-updated dates", "synonym authorities"],
            traps=["criterion mismatch: lectotype/neotype/syntypes are name-bearing types but not holotypes",
                   "dependency not closed: type status is only on each species page",
                   "in-page misreading: created vs last-updated dates on the same page"],
            column_notes={"catalogue": "as shown, e.g. MZX 12345", "created": "ISO date"},
            dedup_key=("species",),
        ),
    ]
    drafts += [_hierarchy_draft(data, c.hierarchy_rule), _specimen_draft(data)]
    return [record for draft in drafts for record in record_pair(draft)]


# ---------------------------------------------------------------- task 004: hierarchy shares (derived)

COLLECTIONS_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/collections"
MAX_WALK_STEPS = 58  # the offline protocol's step budget is 60
THRESHOLDS = (50, 55, 60, 45, 65, 40, 70, *range(30, 100))  # round thresholds first


@dataclass(frozen=True)
class HierarchyRule:
    threshold: int  # a family qualifies with at least this many valid species
    max_species: int  # the genus: at most this many valid species ...
    min_taxa: int  # ... and at least this many taxa incl. subspecies


def _taxa(data: TaxonData, node: Node) -> int:
    under = data.species_under(node)
    return len(under) + sum(s.subspecies for s in under)


def _genus_conditions(data: TaxonData, rule: HierarchyRule, genus: Node) -> tuple[bool, bool]:
    return len(data.species_under(genus)) <= rule.max_species, _taxa(data, genus) >= rule.min_taxa


def _families(data: TaxonData) -> list[Node]:
    """Families in the hierarchy's display order (orders as listed, families as listed under each)."""
    return [f for order in data.children(None) for f in data.children(order.id)]


def hierarchy_choice(data: TaxonData, rule: HierarchyRule) -> list[tuple[Node, Node | None]]:
    """(family, its first genus in display order meeting both conditions) for every qualifying family."""
    return [(fam, next((g for g in data.children(fam.id) if all(_genus_conditions(data, rule, g))), None))
            for fam in _families(data) if len(data.species_under(fam)) >= rule.threshold]


def ranked_by_share(data: TaxonData, genus: Node) -> list[Species]:
    """Species by share of the genus's taxa (1 + subspecies), then more distribution countries, then smaller id."""
    return sorted(data.species_under(genus),
                  key=lambda s: (-(1 + s.subspecies), -len(s.distribution), int(s.taxon_id)))


def _hierarchy_fits(data: TaxonData, rule: HierarchyRule) -> bool:
    """3-5 families qualify and one is just under the threshold; each qualifying family has a genus, and in
    two of them an earlier genus fails one condition only; the tie-breaks decide in two families (the id in
    one); few enough species pages for a walkthrough within the default step budget."""
    families = _families(data)
    if not any(rule.threshold - 3 <= len(data.species_under(f)) < rule.threshold <= _taxa(data, f)
               for f in families):
        return False
    chosen = hierarchy_choice(data, rule)
    if not 3 <= len(chosen) <= 5 or any(g is None for _, g in chosen):
        return False
    near_genus = ties = id_ties = pages = 0
    for fam, genus in chosen:
        assert genus is not None
        listed = data.children(fam.id)
        near_genus += any(sum(_genus_conditions(data, rule, g)) == 1 for g in listed[:listed.index(genus)])
        ranked = ranked_by_share(data, genus)
        pages += len(ranked)
        pairs = [(a, b) for a, b in zip(ranked[:2], ranked[1:3], strict=False) if a.subspecies == b.subspecies]
        ties += bool(pairs)
        id_ties += any(len(a.distribution) == len(b.distribution) for a, b in pairs)
    steps = 1 + 3 * len(data.children(None)) + 3 * len(chosen) + pages + 2  # walkthrough within 60 steps
    return near_genus >= 2 and ties >= 2 and id_ties >= 1 and steps <= MAX_WALK_STEPS


def hierarchy_rows(data: TaxonData, rule: HierarchyRule) -> list[tuple[str, ...]]:
    rows = []
    for fam, genus in hierarchy_choice(data, rule):
        assert genus is not None
        taxa = _taxa(data, genus)
        first, second = ranked_by_share(data, genus)[:2]
        rows.append((fam.name, genus.name, first.name, f"{1 + first.subspecies}/{taxa}", second.name,
                     f"{1 + second.subspecies}/{taxa}"))
    return sorted(rows)


def _hierarchy_draft(data: TaxonData, rule: HierarchyRule) -> TaskDraft:
    t, m, n = rule.threshold, rule.max_species, rule.min_taxa
    near = [f.name for f in _families(data) if t - 3 <= len(data.species_under(f)) < t]
    return TaskDraft(
        task_id="offline_lifesci_004", domain=DOMAIN, family=FAMILY, start_url=BROWSE_URL,
        constraint_instruction=(
            f"In the hierarchy browser expand every order (children load after a short delay). Keep the families "
            f"whose count of valid species (the species figure, not taxa incl. subspecies) is at least {t}. Expand "
            f"each kept family and, in the genera table's order as displayed (not alphabetical), take the FIRST genus "
            f"that has at most {m} valid species AND at least {n} taxa incl. subspecies. Open that genus and every "
            f"species page of it: a species' taxa are the species itself plus its subspecies (1 + Subspecies on its "
            f"page); its share is those taxa over the genus's taxa incl. subspecies, written a/b (not reduced, not a "
            f"percentage). Report the two species with the largest share (leader, then runner_up); ties go to the "
            f"species with more countries in its Distribution, then to the smaller Taxon ID. Report family, genus, "
            f"leader, leader_share, runner_up and runner_up_share."
        ),
        goal_instruction=(
            f"For every family in the taxon database's hierarchy with at least {t} valid species: which is the first "
            f"genus, in the order the hierarchy lists them, with no more than {m} valid species but at least {n} taxa "
            f"counting subspecies, and which two of its species make up the largest share of that genus's taxa (a "
            f"species with its subspecies, out of all taxa of the genus, as a/b)? Break ties by the number of "
            f"countries in the species' distribution, then by the smaller taxon ID."
        ),
        columns=("family", "genus", "leader", "leader_share", "runner_up", "runner_up_share"),
        rows=hierarchy_rows(data, rule), sorting="family ascending",
        gates=["every order expanded (client-side children)", f"families with >= {t} valid species expanded",
               "each species page of the chosen genus"],
        data_dependency=("The expanded orders give the families' counts; each kept family's genera table (display "
                         "order and both counts) gives the genus; that genus's species pages give subspecies, "
                         "distribution and taxon id for the shares and the tie-breaks."),
        control_dependency=("Families are only listed after their order is expanded, genera after the family is; "
                            "the tree is collapsed again whenever the browse page is reopened."),
        inclusion=[f"families with at least {t} valid species",
                   f"per family the first listed genus with <= {m} valid species and >= {n} taxa"],
        exclusion=[f"families under {t} valid species even if their taxa count reaches {t}",
                   "genera failing either condition, or listed after the first fitting one"],
        traps=[f"near miss: {', '.join(near)} just under {t} valid species (its taxa figure is far above)",
               "near miss: an earlier-listed genus meets one condition but not the other",
               "criterion mismatch: shares over the genus's valid species count instead of its taxa",
               "drift: the hierarchy is collapsed again whenever the browse page is reopened (e.g. after a genus page)",
               "tie-break: equal shares decided by distribution countries, then by the smaller taxon id"],
        column_notes={
            "genus": "per family the first genus in display order with both conditions",
            "leader": "species with the largest share (ties: more distribution countries, then smaller Taxon ID)",
            "leader_share": "(1 + subspecies of the leader)/(taxa incl. subspecies of the genus), e.g. 5/37",
            "runner_up": "the second species in the same order",
            "runner_up_share": "(1 + subspecies)/(genus taxa), as a/b",
        },
        shape="derived",
        mirrors=("KEGG BRITE style hierarchy: categories over a count threshold, the first family in default order "
                 "meeting attribute conditions, two types compared by share a/b with tie-breaks on a second count "
                 "then the smaller id"),
        phases=("expand every order: families with valid-species and taxa counts",
                "expand each qualifying family: genera in display order with both counts",
                "open the chosen genus's species pages: subspecies, distribution, taxon id",
                "derive: first fitting genus, shares a/b, leader and runner-up with tie-breaks"),
        derived=("genus", "leader", "leader_share", "runner_up", "runner_up_share"),
    )


# ---------------------------------------------------------------- task 005: specimen set back-search (derived)


def _genus_of(name: str) -> str:
    return name.split()[0]


def reassigned(data: TaxonData) -> list[tuple[Specimen, Species]]:
    by_slug = {s.slug: s for s in data.species}
    target = data.specimen_sets[0]
    return [(sp, by_slug[sp.species]) for sp in target.specimens
            if _genus_of(sp.catalogued_as) != by_slug[sp.species].genus]


def oldest_other_genus(sp: Species) -> Synonym:
    return min((s for s in sp.synonyms if _genus_of(s.name) != sp.genus), key=lambda s: (s.year, s.name))


def specimen_rows(data: TaxonData) -> list[tuple[str, ...]]:
    rows = []
    for _, sp in reassigned(data):
        old = oldest_other_genus(sp)
        found = search(data, Query(name=old.name, synonyms=True))
        if sp not in [f for f, _ in found]:
            raise ValueError(f"lifesci: the back-search for {old.name} misses {sp.name}")
        verdict = "UNIQUE" if len(found) == 1 else "AMBIG"
        rows.append((sp.name, old.name, str(old.year), verdict, sp.type_status))
    return sorted(rows)


def _specimen_draft(data: TaxonData) -> TaskDraft:
    st = data.specimen_sets[0]
    rows = specimen_rows(data)
    pairs = reassigned(data)
    traps_present = (
        {"UNIQUE", "AMBIG"} <= {r[3] for r in rows}
        and any(min(s.year for s in sp.synonyms) < oldest_other_genus(sp).year for _, sp in pairs)
        and any(spec.catalogued_as != oldest_other_genus(sp).name for spec, sp in pairs)
        and any(spec.status == "holotype" and sp.type_status == "lectotype" for spec, sp in pairs)
        and len(pairs) < len(st.specimens))
    if not traps_present:
        raise ValueError("lifesci: the specimen set of task 005 lacks a trap for this seed")
    return TaskDraft(
        task_id="offline_lifesci_005", domain=DOMAIN, family=FAMILY, start_url=COLLECTIONS_URL,
        constraint_instruction=(
            f"Open the type collection '{st.title}'. Keep the specimens whose 'Catalogued as' genus differs from "
            f"the genus of their current name (species since reassigned to another genus). Open each kept species' "
            f"page: from its synonym list take the OLDEST name whose genus is not the species' current genus (names "
            f"in the current genus do not count, even when older; equal years: alphabetical) and that name's year. "
            f"Then run the advanced search with that name and 'Include synonyms (old names)' ticked (unticked on "
            f"every fresh search form): back_search is UNIQUE if the results list only this species, AMBIG if they "
            f"list any other species too. type_status is the Type status in the species page's type material block "
            f"(not the catalogue's 'Status as catalogued'). Report species (current name), "
            f"oldest_other_genus_name, year, back_search and type_status."
        ),
        goal_instruction=(
            f"Which species of the {st.title} ({st.museum}, {st.period}) are now placed in a different genus than "
            f"the one they were catalogued under? For each, give its current name, the oldest name it has carried "
            f"outside its current genus and that name's year, whether that old name leads back to this species "
            f"alone in the database (UNIQUE) or is also an old name of another species (AMBIG), and its current "
            f"name-bearing type status."
        ),
        columns=("species", "oldest_other_genus_name", "year", "back_search", "type_status"),
        rows=rows, sorting="species ascending",
        gates=[f"type collection '{st.title}' opened", "each reassigned species' page (synonyms, type material)",
               "advanced search per old name with the synonym back-search on (off by default)"],
        data_dependency=("The catalogue selects the reassigned species; each species page gives the synonym list "
                         "(the old name) and the type status; a second search with the old name gives the verdict."),
        control_dependency=("The second search depends on the name found on the species page and only finds old "
                            "names with 'Include synonyms' ticked; a fresh search form starts unticked."),
        inclusion=["specimens whose catalogued genus differs from the current genus"],
        exclusion=["specimens still in the genus they were catalogued under", "synonyms in the current genus",
                   "the other type collection"],
        traps=["near miss: some specimens were never moved (catalogued genus = current genus)",
               "criterion mismatch: an older synonym in the current genus; a catalogued name that is a later "
               "combination (the original one is older)",
               "drift: the synonym back-search is off on every fresh search form; without it no old name is found",
               "criterion mismatch: the catalogue's status (e.g. holotype) versus the species page's lectotype",
               "near miss: a later combination shared with another species makes the catalogued name AMBIG"],
        column_notes={
            "oldest_other_genus_name": "the earliest synonym whose genus differs from the current genus "
                                       "(equal years: alphabetical)",
            "year": "that synonym's year",
            "back_search": "UNIQUE if a synonym-inclusive name search lists only this species, else AMBIG",
            "type_status": "as in the species page's type material (holotype, lectotype, neotype, syntypes)",
        },
        shape="derived",
        mirrors=("Reptile Database style taxonomy: species of a historical specimen set reassigned to another "
                 "genus; the oldest binomial outside the current genus; a second search with it (UNIQUE/AMBIG); "
                 "type status from the types block"),
        phases=("type collection: the catalogued name and the current name of every specimen",
                "each reassigned species' page: synonym list and type material",
                "advanced search with each oldest other-genus name, synonyms included",
                "derive: oldest name outside the current genus, UNIQUE/AMBIG, type status"),
        derived=("oldest_other_genus_name", "year", "back_search"),
    )


def _expand(node: Node) -> list[Step]:
    return [
        {"tool": "click", "args": {"target": {"text": f"Expand {node.name}"}}, "why": f"open {node.rank} {node.name}"},
        {"tool": "wait_for", "args": {"text": f"Loaded children of {node.name}"},
         "why": "children are fetched client-side after a delay"},
    ]


def walkthroughs(data: TaxonData) -> dict[str, list[Step]]:
    c = choose(data)
    sq, fam, gen = c.synonym_query, c.count_family, c.type_genus
    order_of_fam = data.nodes[fam.parent or ""]
    gen_path = _path_to(data, gen)
    species_steps: list[Step] = []
    for sp in data.species_under(gen):
        species_steps += [
            {"tool": "click", "args": {"target": {"text": sp.name}}, "why": "open the species entry"},
            {"tool": "read_table", "args": {"table": 0}, "why": "type material table"},
            {"tool": "extract_rows", "args": {
                "table": 0, "where": {"Type status": "holotype"},
                "columns": {"species": r"re:Accepted name: ([A-Z][a-z]+ [a-z]+)", "catalogue": "Catalogue no.",
                            "created": r"re:Created: (\d{4}-\d{2}-\d{2})"}}, "why": "holotypes only"},
            {"tool": "back", "args": {}, "why": "back to the genus page"},
        ]
    return {
        "offline_lifesci_001": [
            {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "advanced search"},
            {"tool": "fill", "args": {"target": {"label": "Name contains"}, "value": sq.name}, "why": "genus name"},
            {"tool": "check", "args": {"target": {"label": "Include synonyms (old names)"}},
             "why": "moved species only match on their old names"},
            {"tool": "set_range", "args": {"start_target": {"label": "Created from"},
                                           "end_target": {"label": "Created to"},
                                           "start": sq.created_from, "end": sq.created_to}, "why": "created window"},
            {"tool": "select", "args": {"target": {"label": "Results per page"}, "option": "50"},
             "why": "more results than one default page"},
            {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "every result"},
            {"tool": "extract_rows", "args": {"columns": {"species": "Species", "created": "Created"}},
             "why": "accepted names with created dates"},
            {"tool": "finish", "args": {"order_by": ["species"]}, "why": "all rows read"},
        ],
        "offline_lifesci_002": [
            {"tool": "goto", "args": {"url": BROWSE_URL}, "why": "hierarchy browser"},
            *_expand(order_of_fam), *_expand(fam),
            {"tool": "extract_rows", "args": {"section": f"Genera of {fam.name}",
                                              "columns": {"genus": "Genus", "species": "Species"}},
             "why": "species counts, not taxa"},
            {"tool": "finish", "args": {"order_by": ["species desc num", "genus"]}, "why": "all genera read"},
        ],
        "offline_lifesci_004": _hierarchy_walkthrough(data, c.hierarchy_rule),
        "offline_lifesci_005": _specimen_walkthrough(data),
        "offline_lifesci_003": [
            {"tool": "goto", "args": {"url": BROWSE_URL}, "why": "hierarchy browser"},
            *_expand(gen_path[0]), *_expand(gen_path[1]),
            {"tool": "click", "args": {"target": {"text": gen.name}}, "why": "open the genus page"},
            *species_steps,
            {"tool": "finish", "args": {"order_by": ["created", "species"]}, "why": "every species page read"},
        ],
    }


def _hierarchy_walkthrough(data: TaxonData, rule: HierarchyRule) -> list[Step]:
    steps: list[Step] = [{"tool": "goto", "args": {"url": BROWSE_URL}, "why": "hierarchy browser"}]
    for order in data.children(None):
        steps += [*_expand(order), {"tool": "extract_rows", "args": {
            "into": "families", "section": f"Families of {order.name}",
            "columns": {"family": "Family", "species": "Species", "taxa": "Taxa incl. subspecies"}},
            "why": "families with their valid-species and taxa counts"}]
    chosen = hierarchy_choice(data, rule)
    for fam, _ in chosen:
        steps += [*_expand(fam),
                  {"tool": "extract_rows", "args": {
                      "into": "genera", "section": f"Genera of {fam.name}", "columns": {
                          "genus": "Genus", "species": "Species", "taxa": "Taxa incl. subspecies"}},
                   "why": "this family's genera in display order with both counts"}]
    for _, genus in chosen:
        assert genus is not None
        steps += [{"tool": "read_facts", "args": {
            "url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/species/{sp.slug}", "into": "species_pages", "fields": {
                "species": r"re:Accepted name: ([A-Z][a-z]+ [a-z]+)", "family": r"re:· Family ([A-Z][a-z]+)",
                "genus": r"re:· Genus ([A-Z][a-z]+)", "subspecies": "Subspecies", "distribution": "Distribution",
                "taxon_id": "Taxon ID"}},
            "why": f"species of genus {genus.name}: subspecies, distribution, id"} for sp in data.species_under(genus)]
    sql = (
        f"WITH fam AS (SELECT family FROM families WHERE CAST(species AS INTEGER) >= {rule.threshold}), "
        "g AS (SELECT genus, CAST(taxa AS INTEGER) AS taxa, row_number() OVER (PARTITION BY _step "
        r"ORDER BY CAST(regexp_extract(_locator, 'row (\d+)', 1) AS INTEGER)) AS pos FROM genera "
        f"WHERE CAST(species AS INTEGER) <= {rule.max_species} AND CAST(taxa AS INTEGER) >= {rule.min_taxa}), "
        "ranked AS (SELECT s.family, s.genus, s.species, (1 + CAST(s.subspecies AS INTEGER)) || '/' || g.taxa AS share, "
        "row_number() OVER (PARTITION BY s.family ORDER BY CAST(s.subspecies AS INTEGER) DESC, "
        "len(string_split(s.distribution, ', ')) DESC, CAST(s.taxon_id AS INTEGER)) AS r "
        "FROM g JOIN species_pages s ON s.genus = g.genus WHERE g.pos = 1 AND s.family IN (SELECT family FROM fam)) "
        "SELECT a.family, a.genus, a.species AS leader, a.share AS leader_share, b.species AS runner_up, "
        "b.share AS runner_up_share FROM ranked a JOIN ranked b ON b.family = a.family AND b.r = 2 "
        "WHERE a.r = 1 ORDER BY a.family"
    )
    return [*steps, *derive_then_finish(sql, "first fitting genus, shares, tie-breaks")]


def _specimen_walkthrough(data: TaxonData) -> list[Step]:
    st = data.specimen_sets[0]
    accepted = r"re:Accepted name: ([A-Z][a-z]+ [a-z]+)"
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": COLLECTIONS_URL}, "why": "type collections"},
        {"tool": "click", "args": {"target": {"text": st.title}}, "why": "the historical set"},
        {"tool": "extract_rows", "args": {"into": "specimens", "columns": {
            "catalogued_as": "Catalogued as", "current": "Current name"}}, "why": "catalogued vs current names"},
    ]
    pairs = reassigned(data)
    for _, sp in pairs:
        steps += [
            {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/species/{sp.slug}"},
             "why": f"{sp.name} moved genus"},
            {"tool": "extract_rows", "args": {"into": "synonyms", "section": "Synonyms and earlier combinations",
                                              "columns": {"species": accepted, "synonym": "Synonym", "yr": "Year"}},
             "why": "every old name with its year"},
            {"tool": "extract_rows", "args": {"into": "types", "section": "Name-bearing type",
                                              "columns": {"species": accepted, "type_status": "Type status"}},
             "why": "type status from the type material block"},
        ]
    steps += [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "a fresh search form (synonyms unticked)"},
        {"tool": "check", "args": {"target": {"label": "Include synonyms (old names)"}},
         "why": "old names only match with the back-search on (the results page keeps it ticked)"},
    ]
    for _, sp in pairs:
        steps += [
            {"tool": "fill", "args": {"target": {"label": "Name contains"}, "value": oldest_other_genus(sp).name},
             "why": "the oldest name outside the current genus"},
            {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the back-search"},
            {"tool": "extract_rows", "args": {"into": "back", "columns": {"query": "url:name", "species": "Species"}},
             "why": "species found by the old name"},
        ]
    sql = (
        "WITH moved AS (SELECT current FROM specimens WHERE split_part(catalogued_as, ' ', 1) <> "
        "split_part(current, ' ', 1)), "
        "o AS (SELECT species, synonym, CAST(yr AS INTEGER) AS yr FROM synonyms "
        "WHERE split_part(synonym, ' ', 1) <> split_part(species, ' ', 1) "
        "QUALIFY row_number() OVER (PARTITION BY species ORDER BY CAST(yr AS INTEGER), synonym) = 1), "
        "v AS (SELECT o.species, bool_and(b.species = o.species) AS alone FROM o JOIN back b ON b.query = o.synonym "
        "GROUP BY o.species) "
        "SELECT o.species, o.synonym AS oldest_other_genus_name, CAST(o.yr AS VARCHAR) AS year, "
        "CASE WHEN v.alone THEN 'UNIQUE' ELSE 'AMBIG' END AS back_search, t.type_status "
        "FROM o JOIN v USING (species) JOIN (SELECT DISTINCT species, type_status FROM types) t USING (species) "
        "WHERE o.species IN (SELECT current FROM moved) ORDER BY o.species"
    )
    return [*steps, *derive_then_finish(sql, "oldest other-genus name, verdict, type")]


SITE = Site(
    prefix=PREFIX, title="Taxon database", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
