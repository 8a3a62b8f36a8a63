"""The taxon database's data, built from the seed: the hierarchy, species with synonyms, and the designed
specimen sets of task 005."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import cached_property

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
