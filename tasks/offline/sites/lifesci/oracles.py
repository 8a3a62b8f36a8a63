"""The taxon database's tasks: each search chosen from the data, its oracle rows and both record wordings."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites.lifesci.data import (
    DOMAIN,
    FAMILY,
    PREFIX,
    Node,
    Species,
    Specimen,
    Synonym,
    TaxonData,
)
from tasks.offline.sites.lifesci.search import Query, search

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
