"""The taxon database site (Reptile Database / KEGG BRITE style), one module per part: `data` (built from the
seed), `search` (shared by pages and oracles), `pages` (routes; its docstring describes the site), `oracles`
(task records, answers), `scripted` (walkthroughs). The package re-exports their public names."""

from __future__ import annotations

from tasks.offline.registry import Site
from tasks.offline.sites.lifesci.data import (
    AUTHORS,
    CATALOGUE_STATUSES,
    CHILDREN_DELAY_S,
    COUNTRIES,
    DOMAIN,
    EPITHETS,
    FAMILY,
    JUNIOR_EPITHETS,
    MUSEUMS,
    PAGE_SIZES,
    PREFIX,
    REASSIGNED,
    SET_MUSEUM,
    STAYED,
    SYLLABLES,
    TYPE_STATUSES,
    Node,
    Species,
    Specimen,
    SpecimenSet,
    Synonym,
    TaxonData,
    build,
)
from tasks.offline.sites.lifesci.oracles import (
    BROWSE_URL,
    COLLECTIONS_URL,
    CREATED_WINDOWS,
    MAX_WALK_STEPS,
    SEARCH_URL,
    THRESHOLDS,
    Chosen,
    HierarchyRule,
    choose,
    hierarchy_choice,
    hierarchy_rows,
    oldest_other_genus,
    ranked_by_share,
    reassigned,
    specimen_rows,
    tasks,
)
from tasks.offline.sites.lifesci.pages import (
    routes,
)
from tasks.offline.sites.lifesci.scripted import (
    walkthroughs,
)
from tasks.offline.sites.lifesci.search import (
    Query,
    search,
)

__all__ = [
    "AUTHORS",
    "BROWSE_URL",
    "CATALOGUE_STATUSES",
    "CHILDREN_DELAY_S",
    "COLLECTIONS_URL",
    "COUNTRIES",
    "CREATED_WINDOWS",
    "Chosen",
    "DOMAIN",
    "EPITHETS",
    "FAMILY",
    "HierarchyRule",
    "JUNIOR_EPITHETS",
    "MAX_WALK_STEPS",
    "MUSEUMS",
    "Node",
    "PAGE_SIZES",
    "PREFIX",
    "Query",
    "REASSIGNED",
    "SEARCH_URL",
    "SET_MUSEUM",
    "SITE",
    "STAYED",
    "SYLLABLES",
    "Species",
    "Specimen",
    "SpecimenSet",
    "Synonym",
    "THRESHOLDS",
    "TYPE_STATUSES",
    "TaxonData",
    "build",
    "choose",
    "hierarchy_choice",
    "hierarchy_rows",
    "oldest_other_genus",
    "ranked_by_share",
    "reassigned",
    "routes",
    "search",
    "specimen_rows",
    "tasks",
    "walkthroughs",
]


SITE = Site(
    prefix=PREFIX, title="Taxon database", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
