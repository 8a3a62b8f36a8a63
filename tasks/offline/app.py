"""The offline suite as one Starlette application: each site mounted under its own path prefix."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route

from tasks.offline.registry import Site

DEFAULT_SEED = 20260521
TEMPLATE_DIR = Path(__file__).parent / "templates"

templates = Environment(loader=FileSystemLoader(TEMPLATE_DIR), autoescape=select_autoescape(["html"]))


def render(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render a template from `tasks/offline/templates` (site templates live in a folder named after the prefix)."""
    return HTMLResponse(templates.get_template(template).render(**context), status_code=status_code)


def discover_sites() -> list[Site]:
    """Every module in `tasks.offline.sites` that defines `SITE`, in prefix order."""
    from tasks.offline import sites as sites_pkg

    found: list[Site] = []
    for info in pkgutil.iter_modules(sites_pkg.__path__):
        module = importlib.import_module(f"{sites_pkg.__name__}.{info.name}")
        site = getattr(module, "SITE", None)
        if isinstance(site, Site):
            found.append(site)
    return sorted(found, key=lambda s: s.prefix)


@lru_cache(maxsize=4)
def site_data(prefix: str, seed: int) -> Any:
    """Site data is deterministic in the seed; build it once per process."""
    site = next(s for s in discover_sites() if s.prefix == prefix)
    return site.build(seed)


def create_app(seed: int = DEFAULT_SEED) -> Starlette:
    sites = discover_sites()

    async def index(request: Request) -> HTMLResponse:
        return render("index.html", sites=sites)

    routes: list[Any] = [Route("/", index)]
    for site in sites:
        routes.append(Mount(f"/{site.prefix}", routes=site.routes(site_data(site.prefix, seed))))
    return Starlette(routes=routes)
