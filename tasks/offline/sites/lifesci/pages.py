"""Life-science resources (Reptile Database / KEGG BRITE style): a taxonomic hierarchy and species entries.

Mechanics: a hierarchy browser whose nodes expand client-side (JavaScript fetches the children after a
delay, so the agent must wait); counts per node (valid species vs all taxa incl. subspecies); genus node
pages; species pages with synonyms, type material and created / last-updated dates; an advanced search whose
synonym (old name) back-search is off by default; page numbers plus a page-size selector. An expanded
order lists its families as a table (both counts), an expanded family its genera in display order (not
alphabetical); species pages carry a taxon ID numbered by entry creation. Historical type catalogues (linked
from the home page only) list specimens under the names and statuses they were catalogued with, beside the
current species; most of one catalogue's species have since moved genus and carry designed synonym lists.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.sites.lifesci.data import CHILDREN_DELAY_S, PAGE_SIZES, PREFIX, Node, TaxonData
from tasks.offline.sites.lifesci.search import Query, search


def routes(data: TaxonData) -> list[Route]:
    by_slug = {s.slug: s for s in data.species}
    families = sorted(n.name for n in data.nodes.values() if n.rank == "Family")

    def counts(node: Node) -> dict[str, int]:
        under = data.species_under(node)
        return {"species": len(under), "taxa": len(under) + sum(s.subspecies for s in under)}

    async def home(request: Request) -> HTMLResponse:
        return render("lifesci/home.html", site_title="Taxon database", total=len(data.species))

    async def browse(request: Request) -> HTMLResponse:
        roots = [(n, counts(n)) for n in data.children(None)]
        return render("lifesci/browse.html", site_title="Browse the hierarchy", roots=roots)

    async def children(request: Request) -> JSONResponse:
        node_id = request.path_params["node_id"]
        if node_id not in data.nodes:
            return JSONResponse({"error": f"unknown node {node_id}"}, status_code=404)
        await asyncio.sleep(CHILDREN_DELAY_S)
        kids = [{"id": n.id, "rank": n.rank, "name": n.name, **counts(n),
                 "href": f"/{PREFIX}/node/{n.id}" if n.rank == "Genus" else None}
                for n in data.children(node_id)]
        return JSONResponse({"node": node_id, "children": kids})

    async def node_page(request: Request) -> HTMLResponse:
        node = data.nodes.get(request.path_params["node_id"])
        if node is None or node.rank != "Genus":
            return render("lifesci/missing.html", status_code=404, what=request.path_params["node_id"])
        return render("lifesci/node.html", site_title=f"Genus {node.name}", node=node,
                      family=data.nodes[node.parent or ""], species=data.species_under(node),
                      taxa=counts(node)["taxa"])

    async def species_page(request: Request) -> HTMLResponse:
        sp = by_slug.get(request.path_params["slug"])
        if sp is None:
            return render("lifesci/missing.html", status_code=404, what=request.path_params["slug"])
        return render("lifesci/species.html", site_title=sp.name, sp=sp)

    sets = {st.slug: st for st in data.specimen_sets}

    async def collections_page(request: Request) -> HTMLResponse:
        return render("lifesci/collections.html", site_title="Type collections", sets=list(sets.values()))

    async def collection_page(request: Request) -> HTMLResponse:
        st = sets.get(request.path_params["slug"])
        if st is None:
            return render("lifesci/missing.html", status_code=404, what=request.path_params["slug"])
        rows = [(sp, by_slug[sp.species]) for sp in st.specimens]
        return render("lifesci/collection.html", site_title=st.title, st=st, rows=rows)

    async def search_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = Query.from_params(params)
        size = int(params["size"]) if params.get("size", "").isdigit() and int(params["size"]) in PAGE_SIZES else 10
        page = int(params["page"]) if params.get("page", "").isdigit() and int(params["page"]) > 0 else 1
        submitted = bool(params)
        results = search(data, query) if submitted else []
        pages = max(1, -(-len(results) // size))
        page = min(page, pages)
        shown = results[(page - 1) * size: page * size]
        page_links = [(n, "?" + urlencode({**params, "page": str(n)})) for n in range(1, pages + 1)]
        return render("lifesci/search.html", site_title="Advanced search", query=query, families=families,
                      size=size, sizes=PAGE_SIZES, submitted=submitted, rows=shown, total=len(results),
                      page=page, pages=pages, page_links=page_links)

    return [
        Route("/", home),
        Route("/browse", browse),
        Route("/api/children/{node_id}", children),
        Route("/node/{node_id}", node_page),
        Route("/species/{slug}", species_page),
        Route("/search", search_page),
        Route("/collections", collections_page),
        Route("/collections/{slug}", collection_page),
    ]
