"""Scholarly archive (arXiv / Europe PMC style): advanced search whose whole state lives in the URL.

Mechanics: term field (Title / Abstract / All fields), classification with an "include cross-listed" box
that is ON by default, a date filter on the *latest version* by default (original submission on request),
date range, results per page (10 by default), sort, page-number pagination; record pages with primary
category, cross-lists, submission history v1..vN, comments, journal reference, DOI, withdrawn notices;
full-text HTML with result tables on some records; a yearly review series (its own category) whose full text,
per version (`/html/<id>v<n>`, linked from the submission history), lists registered benchmarks by registry id.
"""

from __future__ import annotations

import math

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.sites import _census as census
from tasks.offline.sites.scholar.data import ALL_CATEGORIES, PAGE_SIZES, ScholarData
from tasks.offline.sites.scholar.search import BASES, FIELDS, ORDERS, Query, search


def routes(data: ScholarData) -> list[Route]:
    by_id = data.by_id()

    async def home(request: Request) -> HTMLResponse:
        return render("scholar/home.html", site_title="Scholarly archive", count=len(data.papers),
                      newest=data.papers[:5], categories=ALL_CATEGORIES)

    async def search_page(request: Request) -> HTMLResponse:
        query = Query.from_params(request.query_params)
        results = search(data, query) if query.active else []
        pages = max(1, math.ceil(len(results) / query.size))
        page = min(query.page, pages)
        shown = results[(page - 1) * query.size: page * query.size]
        page_links = [(n, "?" + query.params(page=n)) for n in range(1, pages + 1)]
        return render(
            "scholar/search.html", site_title="Advanced search", query=query, results=shown, total=len(results),
            page=page, pages=pages, page_links=page_links, first=(page - 1) * query.size + 1,
            categories=ALL_CATEGORIES, fields=FIELDS, bases=BASES, orders=ORDERS, sizes=PAGE_SIZES,
        )

    reviews = {r.paper_id: r for r in data.reviews}

    async def abstract_page(request: Request) -> HTMLResponse:
        paper = by_id.get(request.path_params["pid"])
        if paper is None:
            return render("scholar/missing.html", status_code=404, pid=request.path_params["pid"])
        return render("scholar/abs.html", site_title=paper.title, paper=paper, categories=ALL_CATEGORIES,
                      review=reviews.get(paper.id))

    async def fulltext_page(request: Request) -> HTMLResponse:
        """`/html/<id>` is the latest version's full text; `/html/<id>v<n>` a given version (review series)."""
        asked = request.path_params["pid"]
        pid, _, number = asked.partition("v")
        paper, review = by_id.get(pid), reviews.get(pid)
        if review is not None and paper is not None:
            version = int(number) if number.isdigit() else len(paper.versions)
            if not 1 <= version <= len(paper.versions):
                return render("scholar/missing.html", status_code=404, pid=asked)
            return render("scholar/review_fulltext.html", site_title=paper.title, paper=paper, review=review,
                          version=version, items=review.table(version), caption=census.TABLE_CAPTION)
        if paper is None or not paper.fulltext or number:
            return render("scholar/missing.html", status_code=404, pid=asked)
        return render("scholar/fulltext.html", site_title=paper.title, paper=paper)

    return [
        Route("/", home),
        Route("/search", search_page),
        Route("/abs/{pid}", abstract_page),
        Route("/html/{pid}", fulltext_page),
    ]
