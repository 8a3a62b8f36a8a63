"""The vulnerability records site (NVD style), one module per part: `data` (built from the seed), `search` (shared
by pages and oracles), `pages` (routes; its docstring describes the site), `oracles` (task records, answers),
`scripted` (walkthroughs). The package re-exports their public names."""

from __future__ import annotations

from tasks.offline.registry import Site
from tasks.offline.sites.vulns.data import (
    ACTORS,
    DOMAIN,
    END,
    FAMILY,
    PAGE_SIZE,
    PREFIX,
    PRODUCT_WORDS,
    RECORD_COUNT,
    SEVERITIES,
    START,
    VENDORS,
    WEAKNESSES,
    Change,
    Milestone,
    Product,
    Vuln,
    VulnData,
    build,
    cpe,
    fixed_before,
    legacy_of,
    milestone_of,
    product_milestones,
    severity_of,
)
from tasks.offline.sites.vulns.oracles import (
    SEARCH_URL,
    Chosen,
    choose,
    remap_event,
    tasks,
)
from tasks.offline.sites.vulns.pages import (
    routes,
)
from tasks.offline.sites.vulns.scripted import (
    walkthroughs,
)
from tasks.offline.sites.vulns.search import (
    Query,
    allowed_identifiers,
    search,
)

__all__ = [
    "ACTORS",
    "Change",
    "Chosen",
    "DOMAIN",
    "END",
    "FAMILY",
    "Milestone",
    "PAGE_SIZE",
    "PREFIX",
    "PRODUCT_WORDS",
    "Product",
    "Query",
    "RECORD_COUNT",
    "SEARCH_URL",
    "SEVERITIES",
    "SITE",
    "START",
    "VENDORS",
    "Vuln",
    "VulnData",
    "WEAKNESSES",
    "allowed_identifiers",
    "build",
    "choose",
    "cpe",
    "fixed_before",
    "legacy_of",
    "milestone_of",
    "product_milestones",
    "remap_event",
    "routes",
    "search",
    "severity_of",
    "tasks",
    "walkthroughs",
]


SITE = Site(
    prefix=PREFIX, title="Vulnerability records", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
