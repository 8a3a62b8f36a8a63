"""The taxon database site (Reptile Database / KEGG BRITE style), one module per part: `data` (built from the
seed), `search` (shared by pages and oracles), `pages` (routes; its docstring describes the site), `oracles`
(task records, answers), `scripted` (walkthroughs). The package exports only `SITE`;
import the parts' names from the part."""

from __future__ import annotations

from tasks.offline.registry import Site
from tasks.offline.sites.lifesci.data import FAMILY, PREFIX, build
from tasks.offline.sites.lifesci.oracles import tasks
from tasks.offline.sites.lifesci.pages import routes
from tasks.offline.sites.lifesci.scripted import walkthroughs

__all__ = ["SITE"]

SITE = Site(
    prefix=PREFIX, title="Taxon database", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
