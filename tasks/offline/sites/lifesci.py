"""Life-science resources (Reptile Database / KEGG BRITE style): a taxonomic hierarchy and species entries.

Mechanics: a hierarchy browser whose nodes expand client-side (JavaScript fetches the children after a
delay, so the agent must wait); counts per node (valid species vs all taxa incl. subspecies); genus node
pages; species pages with synonyms, type material and created / last-updated dates; an advanced search whose
synonym (old name) back-search is off by default; page numbers plus a page-size selector.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair

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
class TaxonData:
    nodes: dict[str, Node]
    species: list[Species]  # sorted by name

    def children(self, node_id: str | None) -> list[Node]:
        return [n for n in self.nodes.values() if n.parent == node_id]

    def species_under(self, node: Node) -> list[Species]:
        key = {"Order": "order", "Family": "family", "Genus": "genus"}[node.rank]
        return [s for s in self.species if getattr(s, key) == node.name]


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
    return TaxonData(nodes, species)


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

    return Chosen(synonym_query, count_family, first_fit(genera, fits_types, "lifesci genus"))


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
    return [record for draft in drafts for record in record_pair(draft)]


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
            {"tool": "read_table", "args": {"table": 1}, "why": "the genera table (table 0 is the node list)"},
            {"tool": "extract_rows", "args": {"table": 1, "columns": {"genus": "Genus", "species": "Species"}},
             "why": "species counts, not taxa"},
            {"tool": "finish", "args": {"order_by": ["species desc num", "genus"]}, "why": "all genera read"},
        ],
        "offline_lifesci_003": [
            {"tool": "goto", "args": {"url": BROWSE_URL}, "why": "hierarchy browser"},
            *_expand(gen_path[0]), *_expand(gen_path[1]),
            {"tool": "click", "args": {"target": {"text": gen.name}}, "why": "open the genus page"},
            *species_steps,
            {"tool": "finish", "args": {"order_by": ["created", "species"]}, "why": "every species page read"},
        ],
    }


SITE = Site(
    prefix=PREFIX, title="Taxon database", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
