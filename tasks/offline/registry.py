"""How an offline site plugs into the suite: data built from a seed, routes, tasks and walkthroughs.

Every site module under `tasks.offline.sites` exposes one `SITE: Site` (a large site is a package split into
`data`, `search`, `pages`, `oracles` and `scripted`, its `__init__` defining `SITE`). Tasks are SGR-Bench records
(plain dicts in the release's per-task JSON shape) whose URLs use `PLACEHOLDER_ORIGIN`; loaders replace
it with the running server's origin. Walkthroughs are the scripted policy for a task: a list of
`{"tool": kind, "args": {...}}` steps using `browser.types` actions and `graph.tools.agent_tools` tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute

PLACEHOLDER_ORIGIN = "http://sgr-offline.local"

Step = dict[str, Any]


@dataclass(frozen=True)
class Site:
    prefix: str  # path prefix without slashes, e.g. "scholar"
    title: str
    family: str  # SGR-Bench source family this site models
    build: Callable[[int], Any]  # seed -> site data (deterministic)
    routes: Callable[[Any], list[BaseRoute]]  # data -> routes mounted under /<prefix>
    tasks: Callable[[Any], list[dict[str, Any]]]  # data -> SGR-Bench records (constraint and goal)
    walkthroughs: Callable[[Any], dict[str, list[Step]]]  # data -> base task id -> steps
