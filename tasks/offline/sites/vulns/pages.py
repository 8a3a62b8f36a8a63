"""Vulnerability records (NVD style): keyword/severity/date/vendor/product search with state in the URL.

Mechanics: state in URL query parameters; pagination by a "Next" link only; a date-range widget with a
"date type" switch (last modified by default, published on request); deprecated product identifiers that
only become selectable and matchable with "include deprecated"; detail pages with score vector, weakness,
references and a dated change history (score revisions, identifier remaps); a product dictionary (deprecated
identifiers on request) whose product pages list release milestones, with legacy identifiers only when asked for.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.sites.vulns.data import (
    PAGE_SIZE,
    SEVERITIES,
    WEAKNESSES,
    VulnData,
    legacy_of,
    milestone_of,
    product_milestones,
)
from tasks.offline.sites.vulns.search import Query, search


def routes(data: VulnData) -> list[Route]:
    by_id = data.by_id()

    async def home(request: Request) -> HTMLResponse:
        return render("vulns/home.html", site_title="Vulnerability records", count=len(data.vulns))

    async def search_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = Query.from_params(params)
        submitted = bool(params)
        results = search(data, query) if submitted else []
        start = params.get("start", "0")
        offset = int(start) if start.isdigit() else 0
        page = results[offset: offset + PAGE_SIZE]
        next_url = None
        if offset + PAGE_SIZE < len(results):
            next_url = "?" + urlencode({**params, "start": str(offset + PAGE_SIZE)})
        return render(
            "vulns/search.html", site_title="Vulnerability search", query=query, submitted=submitted,
            vendors=data.vendors, products=list(data.products.values()), severities=SEVERITIES,
            rows=page, total=len(results), first=offset + 1, last=offset + len(page), next_url=next_url,
        )

    async def detail(request: Request) -> HTMLResponse:
        vuln = by_id.get(request.path_params["vid"])
        if vuln is None:
            return render("vulns/missing.html", status_code=404, vid=request.path_params["vid"])
        return render(
            "vulns/detail.html", site_title=vuln.id, vuln=vuln, weakness_name=WEAKNESSES[vuln.weakness][0],
            products=[data.products[p] for p in vuln.products], milestone=milestone_of(vuln),
        )

    async def dictionary(request: Request) -> HTMLResponse:
        """The product dictionary: current identifiers by default, deprecated ones only when asked for."""
        include = request.query_params.get("include_deprecated") == "on"
        vendor = request.query_params.get("vendor", "")
        shown = [p for p in data.products.values()
                 if (include or not p.deprecated) and (not vendor or p.vendor == vendor)]
        return render("vulns/products.html", site_title="Product dictionary", products=shown, vendors=data.vendors,
                      vendor=vendor, include_deprecated=include)

    async def product_page(request: Request) -> HTMLResponse:
        product = data.products.get(request.path_params["pid"])
        if product is None:
            return render("vulns/missing.html", status_code=404, vid=request.path_params["pid"])
        show_legacy = request.query_params.get("legacy") == "on"
        milestones = [] if product.deprecated else product_milestones(data, product.id)
        return render("vulns/product.html", site_title=product.id, product=product, vendors=data.vendors,
                      milestones=milestones, show_legacy=show_legacy, legacy=legacy_of(data, product.id))

    return [
        Route("/", home),
        Route("/search", search_page),
        Route("/detail/{vid}", detail),
        Route("/products", dictionary),
        Route("/products/{pid}", product_page),
    ]
