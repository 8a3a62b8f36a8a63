"""The scholarly archive site (arXiv / Europe PMC style), one module per part: `data` (built from the seed),
`search` (shared by pages and oracles), `pages` (routes; its docstring describes the site), `oracles` (task
records, answers), `scripted` (walkthroughs). The package re-exports their public names."""

from __future__ import annotations

from tasks.offline.registry import Site
from tasks.offline.sites.scholar.data import (
    ABSTRACT_TERMS,
    ALL_CATEGORIES,
    CATEGORIES,
    DOMAIN,
    FAMILY,
    FIRST_DAY,
    JOURNALS,
    LAST_DAY,
    LAST_V1_DAY,
    METHODS,
    PAGE_SIZES,
    PAPER_COUNT,
    PREFIX,
    SETTINGS,
    SURNAMES,
    TOPICS,
    Paper,
    ScholarData,
    Version,
    build,
)
from tasks.offline.sites.scholar.oracles import (
    CENSUS_QUERY,
    SEARCH_URL,
    Chosen,
    choose,
    tasks,
    trail_rows,
)
from tasks.offline.sites.scholar.pages import (
    routes,
)
from tasks.offline.sites.scholar.scripted import (
    walkthroughs,
)
from tasks.offline.sites.scholar.search import (
    BASES,
    FIELDS,
    ORDERS,
    Query,
    search,
)

__all__ = [
    "ABSTRACT_TERMS",
    "ALL_CATEGORIES",
    "BASES",
    "CATEGORIES",
    "CENSUS_QUERY",
    "Chosen",
    "DOMAIN",
    "FAMILY",
    "FIELDS",
    "FIRST_DAY",
    "JOURNALS",
    "LAST_DAY",
    "LAST_V1_DAY",
    "METHODS",
    "ORDERS",
    "PAGE_SIZES",
    "PAPER_COUNT",
    "PREFIX",
    "Paper",
    "Query",
    "SEARCH_URL",
    "SETTINGS",
    "SITE",
    "SURNAMES",
    "ScholarData",
    "TOPICS",
    "Version",
    "build",
    "choose",
    "routes",
    "search",
    "tasks",
    "trail_rows",
    "walkthroughs",
]


SITE = Site(
    prefix=PREFIX, title="Scholarly archive", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
