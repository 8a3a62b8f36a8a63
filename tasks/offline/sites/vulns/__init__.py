"""The vulnerability records site (NVD style), one module per part: `data` (built from the seed), `search` (shared
by pages and oracles), `pages` (routes; its docstring describes the site), `oracles` (task records, answers),
`scripted` (walkthroughs). The package exports only `SITE`;
import the parts' names from the part."""

from __future__ import annotations

from tasks.offline.registry import Site
from tasks.offline.sites.vulns.data import FAMILY, PREFIX, build
from tasks.offline.sites.vulns.oracles import tasks
from tasks.offline.sites.vulns.pages import routes
from tasks.offline.sites.vulns.scripted import walkthroughs

__all__ = ["SITE"]

SITE = Site(
    prefix=PREFIX, title="Vulnerability records", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
