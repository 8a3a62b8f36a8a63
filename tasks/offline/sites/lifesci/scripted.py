"""The taxon database's scripted walkthroughs: the steps that solve each task."""

from __future__ import annotations

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._record_pair import derive_then_finish
from tasks.offline.sites.lifesci.data import PREFIX, Node, TaxonData
from tasks.offline.sites.lifesci.oracles import (
    BROWSE_URL,
    COLLECTIONS_URL,
    SEARCH_URL,
    HierarchyRule,
    _path_to,
    choose,
    hierarchy_choice,
    oldest_other_genus,
    reassigned,
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
