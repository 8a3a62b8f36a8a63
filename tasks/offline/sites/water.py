"""Environmental monitoring (Water Office / Water Quality Portal style).

Mechanics: a station search whose status defaults to real-time (discontinued stations only appear with
"Historical"), results paged by "Next" links only; station pages with year x month availability grids in
separate Flow and Level sections (codes C complete / P partial / - none) whose year window defaults to the
last five years of record; a water-quality query form whose results are fetched after a delay and rendered
client-side by JavaScript as a paged table, plus a CSV download of the same results.
"""

from __future__ import annotations

import asyncio
import csv
import io
import random
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._record_pair import TaskDraft, record_pair

PREFIX = "water"
FAMILY = "Environmental monitoring"
DOMAIN = "OFFLINE_WATER"
STATION_PAGE_SIZE = 10
DEFAULT_GRID_YEARS = 5
FETCH_DELAY_S = 0.7  # the query results arrive late: an agent that reads at once sees an empty table
SAMPLE_DAYS = (date(2015, 1, 1), date(2024, 12, 31))
DEFAULT_QUERY_WINDOW = ("2024-01-01", "2024-12-31")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

REGIONS = {"NB": "North Basin", "CP": "Coastal Plain", "UH": "Upper Highlands", "LD": "Lake District", "PS": "Prairie South"}
RIVER_NAMES = [
    "Alder", "Birch", "Cedar", "Dunlin", "Elk", "Fallow", "Granite", "Heron", "Ibis", "Juniper", "Kestrel", "Larch",
    "Marten", "Nettle", "Osprey", "Pike", "Quill", "Rowan", "Sedge", "Teal", "Umber", "Vole", "Willow", "Yarrow",
]
TOWNS = ["Ashford", "Brookvale", "Carrow", "Dunmore", "Eastleigh", "Fernhill", "Glenby", "Holloway", "Inverby", "Kelso"]
RELATIONS = ["NEAR", "AT", "ABOVE", "BELOW"]
SITE_TYPES = ["Stream", "Lake", "Well", "Spring"]
CHARACTERISTICS = {
    "Nutrient": [("Nitrate", "mg/L"), ("Total phosphorus", "mg/L"), ("Ammonia", "mg/L")],
    "Physical": [("Temperature, water", "deg C"), ("pH", "std units"), ("Turbidity", "NTU")],
    "Inorganics": [("Chloride", "mg/L"), ("Sulfate", "mg/L")],
    "Microbiological": [("Escherichia coli", "cfu/100mL")],
}
STATUSES = {"realtime": "Real-time (active)", "historical": "Historical (discontinued)", "all": "All stations"}
DATA_TYPES = {"any": "Any", "flow": "Flow", "level": "Level"}


@dataclass(frozen=True)
class Station:
    id: str
    name: str
    region: str
    river: str
    active: bool
    records: dict[str, tuple[int, int]]  # "Flow"/"Level" -> (first year, last year)
    grid: dict[str, dict[int, tuple[str, ...]]]  # "Flow"/"Level" -> year -> 12 codes

    @property
    def status(self) -> str:
        return "Real-time" if self.active else "Historical"

    @property
    def data_types(self) -> str:
        return ", ".join(kind for kind in ("Flow", "Level") if kind in self.records)

    @property
    def last_year(self) -> int:
        return max(end for _, end in self.records.values())


@dataclass(frozen=True)
class Location:
    id: str
    name: str
    region: str
    site_type: str


@dataclass(frozen=True)
class Sample:
    location: str
    day: date
    group: str
    characteristic: str
    value: str
    unit: str


@dataclass(frozen=True)
class WaterData:
    stations: tuple[Station, ...]
    locations: tuple[Location, ...]
    samples: tuple[Sample, ...]  # sorted by date, location, characteristic

    def station(self, sid: str) -> Station | None:
        return next((s for s in self.stations if s.id == sid), None)


def _grid(rng: random.Random, first: int, last: int) -> dict[int, tuple[str, ...]]:
    return {year: tuple(rng.choices(["C", "P", "-"], weights=[70, 24, 6], k=12)) for year in range(first, last + 1)}


def build(seed: int) -> WaterData:
    rng = random.Random(seed * 11 + 3)
    codes = list(REGIONS)
    rivers = {name: codes[i % len(codes)] for i, name in enumerate(RIVER_NAMES)}
    stations: list[Station] = []
    numbers: dict[str, int] = {}
    for name, region in rivers.items():
        for _ in range(rng.randrange(9, 22)):
            numbers[region] = numbers.get(region, 0) + 1
            sid = f"0{codes.index(region) + 1}{region}{numbers[region] * 3 + rng.randrange(3):03d}"
            active = rng.random() < 0.62
            last = 2024 if active else rng.randrange(1995, 2021)
            records: dict[str, tuple[int, int]] = {}
            kinds = rng.choices([("Flow",), ("Level",), ("Flow", "Level")], weights=[35, 20, 45])[0]
            for kind in kinds:
                first = last - rng.randrange(6, 40)
                end = last if kind == kinds[-1] or rng.random() < 0.5 else last - rng.randrange(1, 5)
                records[kind] = (first, end)
            stations.append(Station(
                id=sid, name=f"{name.upper()} RIVER {rng.choice(RELATIONS)} {rng.choice(TOWNS).upper()}",
                region=REGIONS[region], river=f"{name} River", active=active, records=records,
                grid={kind: _grid(rng, *span) for kind, span in records.items()},
            ))
    stations.sort(key=lambda s: s.id)

    locations: list[Location] = []
    for region_code, region in REGIONS.items():
        for n in range(1, 31):
            site_type = rng.choices(SITE_TYPES, weights=[45, 30, 15, 10])[0]
            locations.append(Location(
                id=f"WQX-{region_code}-{n * 13 + rng.randrange(13):04d}",
                name=f"{rng.choice(RIVER_NAMES)} {site_type.lower()} site {n}", region=region, site_type=site_type,
            ))
    samples: list[Sample] = []
    span = (SAMPLE_DAYS[1] - SAMPLE_DAYS[0]).days
    for loc in locations:
        for _ in range(rng.randrange(20, 60)):
            day = SAMPLE_DAYS[0] + timedelta(days=rng.randrange(span + 1))
            group = rng.choices(list(CHARACTERISTICS), weights=[35, 35, 20, 10])[0]
            characteristic, unit = rng.choice(CHARACTERISTICS[group])
            value = f"{rng.uniform(0.01, 40):.2f}" if unit != "cfu/100mL" else str(rng.randrange(1, 900))
            samples.append(Sample(loc.id, day, group, characteristic, value, unit))
    samples.sort(key=lambda s: (s.day, s.location, s.characteristic, s.value))
    return WaterData(tuple(stations), tuple(locations), tuple(samples))


# ---------------------------------------------------------------- station search


@dataclass(frozen=True)
class StationQuery:
    text: str = ""
    region: str = ""
    river: str = ""
    data_type: str = "any"
    status: str = "realtime"

    @classmethod
    def from_params(cls, params: dict[str, str]) -> StationQuery:
        return cls(
            text=params.get("q", "").strip(),
            region=params.get("region", "") if params.get("region") in REGIONS.values() else "",
            river=params.get("river", "").strip(),
            data_type=params.get("type", "any") if params.get("type") in DATA_TYPES else "any",
            status=params.get("status", "realtime") if params.get("status") in STATUSES else "realtime",
        )


def search_stations(data: WaterData, q: StationQuery) -> list[Station]:
    found = []
    for s in data.stations:
        if q.status == "realtime" and not s.active or q.status == "historical" and s.active:
            continue
        if q.region and s.region != q.region:
            continue
        if q.river and q.river.lower() not in s.river.lower():
            continue
        if q.data_type != "any" and DATA_TYPES[q.data_type] not in s.records:
            continue
        if q.text and q.text.lower() not in f"{s.id} {s.name}".lower():
            continue
        found.append(s)
    return found


def grid_window(station: Station, params: dict[str, str]) -> tuple[int, int]:
    """The year window shown on the availability page: the last five years of record unless chosen."""
    last = station.last_year
    first_year = min(start for start, _ in station.records.values())

    def year(name: str, default: int) -> int:
        raw = params.get(name, "")
        return int(raw) if raw.isdigit() else default

    return max(first_year, year("from", last - DEFAULT_GRID_YEARS + 1)), min(last, year("to", last))


# ---------------------------------------------------------------- water-quality query


@dataclass(frozen=True)
class SampleQuery:
    area: str = ""
    site_type: str = ""
    group: str = ""
    start: str = DEFAULT_QUERY_WINDOW[0]
    end: str = DEFAULT_QUERY_WINDOW[1]

    @classmethod
    def from_params(cls, params: dict[str, str]) -> SampleQuery:
        return cls(
            area=params.get("area", ""), site_type=params.get("siteType", ""),
            group=params.get("group", ""), start=params.get("startDate") or DEFAULT_QUERY_WINDOW[0],
            end=params.get("endDate") or DEFAULT_QUERY_WINDOW[1],
        )

    def params(self) -> dict[str, str]:
        return {"area": self.area, "siteType": self.site_type, "group": self.group,
                "startDate": self.start, "endDate": self.end}


SAMPLE_COLUMNS = ("Location ID", "Location name", "Site type", "Activity date", "Characteristic", "Value", "Unit")


def query_samples(data: WaterData, q: SampleQuery) -> list[list[str]]:
    locations = {loc.id: loc for loc in data.locations}
    rows = []
    for s in data.samples:
        loc = locations[s.location]
        if q.area and loc.region != q.area or q.site_type and loc.site_type != q.site_type:
            continue
        if q.group and s.group != q.group:
            continue
        if not q.start <= s.day.isoformat() <= q.end:
            continue
        rows.append([loc.id, loc.name, loc.site_type, s.day.isoformat(), s.characteristic, s.value, s.unit])
    return rows


# ---------------------------------------------------------------- pages


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

    return [
        Route("/", home),
        Route("/stations", stations_page),
        Route("/stations/{sid}", station_page),
        Route("/stations/{sid}/availability", availability_page),
        Route("/query", query_page),
        Route("/api/results", results_json),
        Route("/api/results.csv", results_csv),
    ]


# ---------------------------------------------------------------- tasks


STATIONS_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/stations"
QUERY_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/query"


@dataclass(frozen=True)
class Chosen:
    river_query: StationQuery  # 001: every flow station on a river, active or not, two pages
    grid_station: Station  # 002: level availability of a discontinued station
    grid_years: tuple[int, int]
    sample_query: SampleQuery  # 003: client-side rendered water-quality results


def _level_rows(station: Station, years: tuple[int, int]) -> list[tuple[str, str]]:
    return [(str(y), str(station.grid["Level"][y].count("C"))) for y in range(years[0], years[1] + 1)]


def choose(data: WaterData) -> Chosen:
    river_query = None
    for name in RIVER_NAMES:
        q = StationQuery(river=f"{name} River", data_type="flow", status="all")
        found = search_stations(data, q)
        historical = [s for s in found if not s.active]
        level_only = search_stations(data, StationQuery(river=q.river, status="all"))
        if 11 <= len(found) <= 20 and len(historical) >= 2 and len(level_only) > len(found):
            river_query = q
            break
    grid_station = grid_years = None
    for s in data.stations:
        if s.active or set(s.records) != {"Flow", "Level"}:
            continue
        level_first, level_last = s.records["Level"]
        flow_first, flow_last = s.records["Flow"]
        years = (s.last_year - DEFAULT_GRID_YEARS - 6, s.last_year - DEFAULT_GRID_YEARS)
        if not (level_first <= years[0] and years[1] <= level_last and flow_first <= years[0] and years[1] <= flow_last):
            continue
        flow_counts = [str(s.grid["Flow"][y].count("C")) for y in range(years[0], years[1] + 1)]
        if sum(a != b for a, (_, b) in zip(flow_counts, _level_rows(s, years), strict=True)) >= 4:
            grid_station, grid_years = s, years
            break
    sample_query = None
    for region in REGIONS.values():
        for year in range(2016, 2023):
            for quarter_start, quarter_end in (("04-01", "09-30"), ("01-01", "12-31")):
                q = SampleQuery(area=region, site_type="Lake", group="Nutrient",
                                start=f"{year}-{quarter_start}", end=f"{year}-{quarter_end}")
                rows = query_samples(data, q)
                if sample_query is None and 11 <= len(rows) <= 18:
                    sample_query = q
    if river_query is None or grid_station is None or grid_years is None or sample_query is None:
        raise ValueError("water: this seed gives no task with the required cardinality and traps")
    return Chosen(river_query, grid_station, grid_years, sample_query)


def tasks(data: WaterData) -> list[dict]:
    c = choose(data)
    rq, st, years, sq = c.river_query, c.grid_station, c.grid_years, c.sample_query
    drafts = [
        TaskDraft(
            task_id="offline_water_001", domain=DOMAIN, family=FAMILY, start_url=STATIONS_URL,
            constraint_instruction=(
                f"In the hydrometric station search, enter river \"{rq.river}\", set Data type to Flow and "
                f"Station status to 'All stations' (the default shows only real-time stations, discontinued ones "
                f"are hidden). Follow 'Next' through every result page. Report station number, station name and "
                f"status (Real-time or Historical)."
            ),
            goal_instruction=(
                f"List every hydrometric station that has ever measured flow on the {rq.river}, whether still "
                f"operating or discontinued, with its name and whether it is real-time or historical."
            ),
            columns=("station_id", "station_name", "status"),
            rows=[(s.id, s.name, s.status) for s in sorted(search_stations(data, rq), key=lambda s: s.id)],
            sorting="station_id ascending",
            gates=[f"river = {rq.river}", "data type = Flow", "station status = All (incl. historical)",
                   "all result pages via Next"],
            data_dependency="Rows come from every page of the station list.",
            control_dependency="Discontinued stations only appear once the status scope is widened.",
            inclusion=[f"stations on the {rq.river} with a Flow record", "real-time and historical stations"],
            exclusion=["level-only stations", "stations on other rivers"],
            traps=["drift: the status defaults to real-time, silently dropping discontinued stations",
                   "dependency not closed: results continue on a second page reached by Next",
                   "criterion mismatch: level-only stations on the same river"],
        ),
        TaskDraft(
            task_id="offline_water_002", domain=DOMAIN, family=FAMILY, start_url=STATIONS_URL,
            constraint_instruction=(
                f"Find the discontinued station {st.id} ({st.name}): station status 'Historical (discontinued)'. "
                f"Open its data availability page, set the years {years[0]} to {years[1]} (the page shows only the "
                f"last {DEFAULT_GRID_YEARS} years of record by default) and, in the LEVEL section (not Flow), "
                f"report for each year the number of complete months."
            ),
            goal_instruction=(
                f"For the discontinued station {st.id} ({st.name}), how many months of water LEVEL data are "
                f"complete in each year from {years[0]} to {years[1]}?"
            ),
            columns=("year", "complete_months"),
            rows=_level_rows(st, years),
            header=True,
            sorting="year ascending",
            gates=["station status = Historical", f"station = {st.id}",
                   f"availability years {years[0]}..{years[1]}", "Level section of the grid"],
            data_dependency="The station found in the historical list supplies the availability page.",
            control_dependency="The year window decides which grid rows exist on the page.",
            inclusion=[f"years {years[0]}..{years[1]}", "Level data availability"],
            exclusion=["counts read from the Flow section", "years outside the window"],
            traps=["in-page misreading: the Flow section comes first with different counts",
                   "drift: the grid window defaults to the last five years of record",
                   "drift: the station search defaults to real-time stations"],
            column_notes={"complete_months": "integer 0-12, months coded C"},
        ),
        TaskDraft(
            task_id="offline_water_003", domain=DOMAIN, family=FAMILY, start_url=QUERY_URL,
            constraint_instruction=(
                f"In the water-quality query form choose area {sq.area}, site type {sq.site_type}, characteristic "
                f"group {sq.group} and the date range {sq.start} to {sq.end} (the default range is {DEFAULT_QUERY_WINDOW[0]} "
                f"to {DEFAULT_QUERY_WINDOW[1]}). Wait for the results table to load and read all its pages (or "
                f"download the CSV). Report location id, activity date, characteristic and value."
            ),
            goal_instruction=(
                f"Which nutrient measurements were taken at {sq.site_type.lower()} sites in the {sq.area} area "
                f"between {sq.start} and {sq.end}? Give location id, date, characteristic and value."
            ),
            columns=("location_id", "activity_date", "characteristic", "value"),
            rows=[(r[0], r[3], r[4], r[5]) for r in sorted(query_samples(data, sq), key=lambda r: (r[3], r[0], r[4], r[5]))],
            record_separator=";",
            sorting="activity_date ascending, then location_id, then characteristic",
            gates=[f"area = {sq.area}", f"site type = {sq.site_type}", f"characteristic group = {sq.group}",
                   f"date range {sq.start}..{sq.end}", "results loaded after the delayed fetch; every page"],
            data_dependency="Rows come from the complete result set (all pages or the CSV).",
            control_dependency="The table only exists after the query returns.",
            inclusion=[f"{sq.site_type} locations in {sq.area}", f"{sq.group} characteristics",
                       f"activity date {sq.start}..{sq.end}"],
            exclusion=["stream, well or spring locations", "rows from the default date window"],
            traps=["drift: the date range defaults to the last year of data",
                   "dependency not closed: results are rendered late and paged client-side"],
            column_notes={"value": "as listed, two decimals"},
            dedup_key=("location_id", "activity_date", "characteristic", "value"),
        ),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


def walkthroughs(data: WaterData) -> dict[str, list[Step]]:
    c = choose(data)
    rq, st, years, sq = c.river_query, c.grid_station, c.grid_years, c.sample_query
    return {
        "offline_water_001": [
            {"tool": "goto", "args": {"url": STATIONS_URL}, "why": "open the station search"},
            {"tool": "fill", "args": {"target": {"label": "River"}, "value": rq.river}, "why": "river scope"},
            {"tool": "select", "args": {"target": {"label": "Data type"}, "option": "Flow"}, "why": "flow stations"},
            {"tool": "select", "args": {"target": {"label": "Station status"}, "option": STATUSES["all"]},
             "why": "the default hides discontinued stations"},
            {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
            {"tool": "extract_rows", "args": {"columns": {
                "station_id": "Station", "station_name": "Name", "status": "Status"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["station_id"]}, "why": "all pages read"},
        ],
        "offline_water_002": [
            {"tool": "goto", "args": {"url": STATIONS_URL}, "why": "open the station search"},
            {"tool": "fill", "args": {"target": {"label": "Station name or number"}, "value": st.id}, "why": "station"},
            {"tool": "select", "args": {"target": {"label": "Station status"}, "option": STATUSES["historical"]},
             "why": "discontinued stations only appear in the historical list"},
            {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
            {"tool": "click", "args": {"target": {"text": st.name}}, "why": "open the station page"},
            {"tool": "click", "args": {"target": {"text": "Data availability"}}, "why": "availability grid"},
            {"tool": "select", "args": {"target": {"label": "From year"}, "option": str(years[0])}, "why": "window"},
            {"tool": "select", "args": {"target": {"label": "To year"}, "option": str(years[1])}, "why": "window"},
            {"tool": "click", "args": {"target": {"text": "Show years"}}, "why": "apply the window"},
            {"tool": "read_table", "args": {"table": 1}, "why": "the Level section is the second table"},
            {"tool": "extract_rows", "args": {"table": 1, "columns": {
                "year": "Year", "complete_months": "Complete months"}}, "why": "Level rows only"},
            {"tool": "finish", "args": {"order_by": ["year num"]}, "why": "window read"},
        ],
        "offline_water_003": [
            {"tool": "goto", "args": {"url": QUERY_URL}, "why": "open the query form"},
            {"tool": "select", "args": {"target": {"label": "Area"}, "option": sq.area}, "why": "area"},
            {"tool": "select", "args": {"target": {"label": "Site type"}, "option": sq.site_type}, "why": "site type"},
            {"tool": "select", "args": {"target": {"label": "Characteristic group"}, "option": sq.group},
             "why": "characteristic group"},
            {"tool": "set_range", "args": {"start_target": {"label": "Start date"}, "end_target": {"label": "End date"},
                                           "start": sq.start, "end": sq.end}, "why": "default is the last year"},
            {"tool": "click", "args": {"target": {"text": "Run query"}}, "why": "fetch the results"},
            {"tool": "wait_for", "args": {"text": "Download CSV"}, "why": "results render after a delayed fetch"},
            {"tool": "download", "args": {"target": {"text": "Download CSV"}}, "why": "all result rows at once"},
            {"tool": "extract_rows", "args": {"columns": {
                "location_id": "Location ID", "activity_date": "Activity date", "characteristic": "Characteristic",
                "value": "Value"}}, "why": "CSV rows"},
            {"tool": "finish", "args": {"order_by": ["activity_date", "location_id", "characteristic"]},
             "why": "complete result set"},
        ],
    }


SITE = Site(
    prefix=PREFIX, title="Water monitoring", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
