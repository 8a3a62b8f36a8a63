"""Environmental monitoring (Water Office / Water Quality Portal style).

Mechanics: a station search whose status defaults to real-time (discontinued stations only appear with
"Historical"), results paged by "Next" links only; station pages with year x month availability grids in
separate Flow and Level sections (codes C complete / P partial / - none) whose year window defaults to the
last five years of record; a water-quality query form whose results are fetched after a delay and rendered
client-side by JavaScript as a paged table, plus a CSV download of the same results; a monitoring-location
search by basin unit (HUC-style code) and location pages whose period of record is shown for one
characteristic group at a time (default: all groups together, which hides each group's own start year).
Station lists and pages show the river km (distance upstream of the mouth), the order along a river.
"""

from __future__ import annotations

import asyncio
import csv
import io
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.sites.water.data import (
    ALL_GROUPS,
    BASIN_UNITS,
    CHARACTERISTICS,
    DATA_TYPES,
    FETCH_DELAY_S,
    GROUPS,
    MONTHS,
    REGIONS,
    SITE_TYPES,
    STATION_PAGE_SIZE,
    STATUSES,
    UNIT_NAMES,
    WaterData,
    period_of_record,
)
from tasks.offline.sites.water.search import (
    LOCATION_PAGE_SIZE,
    SAMPLE_COLUMNS,
    LocationQuery,
    SampleQuery,
    StationQuery,
    grid_window,
    query_samples,
    search_locations,
    search_stations,
)


def routes(data: WaterData) -> list[Route]:
    async def home(request: Request) -> HTMLResponse:
        return render("water/home.html", site_title="Water monitoring", stations=len(data.stations),
                      locations=len(data.locations), samples=len(data.samples))

    async def stations_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = StationQuery.from_params(params)
        submitted = "status" in params or "q" in params
        results = search_stations(data, query) if submitted else []
        start = int(params["start"]) if params.get("start", "").isdigit() else 0
        shown = results[start: start + STATION_PAGE_SIZE]
        next_url = prev_url = None
        if start + STATION_PAGE_SIZE < len(results):
            next_url = "?" + urlencode({**params, "start": str(start + STATION_PAGE_SIZE)})
        if start > 0:
            prev_url = "?" + urlencode({**params, "start": str(max(0, start - STATION_PAGE_SIZE))})
        return render(
            "water/stations.html", site_title="Station search", query=query, submitted=submitted, rows=shown,
            total=len(results), first=start + 1, next_url=next_url, prev_url=prev_url, regions=REGIONS.values(),
            statuses=STATUSES, data_types=DATA_TYPES,
        )

    async def station_page(request: Request) -> HTMLResponse:
        station = data.station(request.path_params["sid"])
        if station is None:
            return render("water/missing.html", status_code=404, what=request.path_params["sid"])
        return render("water/station.html", site_title=station.name, station=station)

    async def availability_page(request: Request) -> HTMLResponse:
        station = data.station(request.path_params["sid"])
        if station is None:
            return render("water/missing.html", status_code=404, what=request.path_params["sid"])
        first, last = grid_window(station, dict(request.query_params))
        all_years = range(min(a for a, _ in station.records.values()), station.last_year + 1)
        sections = [
            (kind, [(y, station.grid[kind][y]) for y in range(last, first - 1, -1) if y in station.grid[kind]])
            for kind in ("Flow", "Level") if kind in station.records
        ]
        return render("water/availability.html", site_title=f"{station.name} availability", station=station,
                      sections=sections, first=first, last=last, years=list(all_years), months=MONTHS)

    async def query_page(request: Request) -> HTMLResponse:
        return render("water/query.html", site_title="Water-quality query", regions=REGIONS.values(),
                      site_types=SITE_TYPES, groups=CHARACTERISTICS, default=SampleQuery())

    async def results_json(request: Request) -> JSONResponse:
        await asyncio.sleep(FETCH_DELAY_S)
        query = SampleQuery.from_params(dict(request.query_params))
        return JSONResponse({"columns": SAMPLE_COLUMNS, "rows": query_samples(data, query),
                             "csv": "results.csv?" + urlencode(query.params())})

    async def results_csv(request: Request) -> Response:
        query = SampleQuery.from_params(dict(request.query_params))
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(SAMPLE_COLUMNS)
        writer.writerows(query_samples(data, query))
        return Response(buffer.getvalue(), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="wq-results.csv"'})

    async def locations_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = LocationQuery.from_params(params)
        results = search_locations(data, query) if query.submitted else []
        start = int(params["start"]) if params.get("start", "").isdigit() else 0
        shown = results[start: start + LOCATION_PAGE_SIZE]
        next_url = "?" + urlencode({**params, "start": str(start + LOCATION_PAGE_SIZE)}) \
            if start + LOCATION_PAGE_SIZE < len(results) else None
        return render("water/locations.html", site_title="Monitoring locations", query=query, rows=shown,
                      total=len(results), first=start + 1, next_url=next_url, regions=REGIONS.values(),
                      units=BASIN_UNITS, site_types=SITE_TYPES)

    async def location_page(request: Request) -> HTMLResponse:
        loc = data.location(request.path_params["lid"])
        if loc is None:
            return render("water/missing.html", status_code=404, what=request.path_params["lid"])
        group = request.query_params.get("group", ALL_GROUPS)
        group = group if group in GROUPS else ALL_GROUPS
        return render("water/location.html", site_title=loc.name, loc=loc, unit_name=UNIT_NAMES.get(loc.huc, ""),
                      group=group, groups=(ALL_GROUPS, *GROUPS), period=period_of_record(data, loc.id, group))

    return [
        Route("/", home),
        Route("/locations", locations_page),
        Route("/locations/{lid}", location_page),
        Route("/stations", stations_page),
        Route("/stations/{sid}", station_page),
        Route("/stations/{sid}/availability", availability_page),
        Route("/query", query_page),
        Route("/api/results", results_json),
        Route("/api/results.csv", results_csv),
    ]
