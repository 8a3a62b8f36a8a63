"""The widget lab as one Starlette app: each page folder at `/<name>/`, the pinned libraries at `/vendor/<pkg>/`,
the shared page helper at `/static/lab.js`.

A page's `data.json` is served beside it; endpoints named in its `page.json` `api` answer `?q=` with the entries
of a data.json list that contain the term (after `api_delay_ms`), the remote source a typeahead queries.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tasks.widget_lab.registry import LAB_DIR, NODE_MODULES, LabPage, lab_pages


def _index(pages: tuple[LabPage, ...]):  # noqa: ANN202 - a Starlette endpoint
    items = "".join(f'<li><a href="{p.path()}">{p.name}</a> ({p.library}, {p.category}): {p.gates}</li>'
                    for p in pages)

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(f"<!doctype html><title>Widget lab</title><h1>Widget lab</h1><ul>{items}</ul>")

    return index


def _text(entry: Any) -> str:
    if isinstance(entry, dict):
        return str(entry.get("label") or entry.get("name") or entry.get("text") or "")
    return str(entry)


def _api(page: LabPage, key: str):  # noqa: ANN202 - a Starlette endpoint
    async def search(request: Request) -> JSONResponse:
        term = request.query_params.get("q", request.query_params.get("term", "")).strip().lower()
        if page.api_delay_ms:
            await asyncio.sleep(page.api_delay_ms / 1000)
        entries = (page.data() or {}).get(key, [])
        return JSONResponse([e for e in entries if term and term in _text(e).lower()][:20])

    return search


def create_app() -> Starlette:
    pages = lab_pages()
    routes: list[Any] = [Route("/", _index(pages))]
    for page in pages:
        for name, key in page.api.items():
            routes.append(Route(f"/{page.name}/api/{name}", _api(page, key)))
        routes.append(Mount(f"/{page.name}", app=StaticFiles(directory=page.folder, html=True)))
    routes.append(Mount("/static", app=StaticFiles(directory=LAB_DIR / "static")))
    if NODE_MODULES.is_dir():
        routes.append(Mount("/vendor", app=StaticFiles(directory=NODE_MODULES)))
    return Starlette(routes=routes)
