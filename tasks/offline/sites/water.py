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
import random
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish, record_pair

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
    grid: dict[str, dict[int, tuple[str, ...]]]  # "Flow"/"Level" -> year -> 12 codes (a year may be missing: a gap)
    river_km: float = 0.0  # distance upstream of the river mouth: the order along the river

    @property
    def km(self) -> str:
        return f"{self.river_km:.1f}"

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
    huc: str = ""  # basin unit code (hydrologic unit)


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
    reach: ReachPlan = field(default=None)  # type: ignore[assignment]  # 004's river and years (set by build)
    quality: QualityPlan = field(default=None)  # type: ignore[assignment]  # 005's basin units and window

    def station(self, sid: str) -> Station | None:
        return next((s for s in self.stations if s.id == sid), None)

    def location(self, lid: str) -> Location | None:
        return next((loc for loc in self.locations if loc.id == lid), None)


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
    # Everything below draws from its own generators, so the data of tasks 001-003 stays as it was.
    extra = random.Random(seed * 11 + 7)
    stations = [replace(s, river_km=round(extra.uniform(3, 420), 1)) for s in stations]
    reach, reach_stations = _reach(random.Random(seed * 11 + 8), len(RIVER_NAMES))
    stations = sorted([*stations, *reach_stations], key=lambda s: s.id)
    locations = [replace(loc, huc=extra.choice(BASIN_UNITS[loc.region][:-1])[0]) for loc in locations]
    quality, designed, designed_samples = _quality(random.Random(seed * 11 + 9))
    samples = sorted([*samples, *designed_samples], key=lambda s: (s.day, s.location, s.characteristic, s.value))
    return WaterData(tuple(stations), tuple([*locations, *designed]), tuple(samples), reach, quality)


# ---------------------------------------------------------------- designed data of the derived tasks (004, 005)

TARGET_MONTHS = (4, 9)  # May..Sep (0-based, end exclusive): the months a usable flow year must have complete
REACH_RIVER, REACH_TRIBUTARY = "Kingfisher River", "Little Kingfisher River"
VERDICT_PASS, VERDICT_LEVEL_ONLY, VERDICT_FLOW_GAP = "PASS", "LEVEL_ONLY", "FLOW_GAP"


@dataclass(frozen=True)
class ReachPlan:
    river: str
    tributary: str
    years: tuple[int, int]  # the two target years
    downstream_anchor: str  # station names bounding the reach (both included)
    upstream_anchor: str


def _basin_units() -> dict[str, list[tuple[str, str]]]:
    """Three basin units per region, HUC-style 8-digit codes; a fourth per region holds only designed sites."""
    units: dict[str, list[tuple[str, str]]] = {}
    for r, region in enumerate(REGIONS.values()):
        river = RIVER_NAMES[r * 4]
        units[region] = [(f"{r + 1:02d}{u + 1:02d}0{u + 2}0{r + 1}", f"{part} {river}")
                         for u, part in enumerate(("Upper", "Middle", "Lower", "Headwaters"))]
    return units


BASIN_UNITS = _basin_units()  # region -> [(code, name)]; the last unit of each region holds the designed sites
UNIT_NAMES = {code: name for units in BASIN_UNITS.values() for code, name in units}


def _codes(rng: random.Random, first: int, last: int) -> dict[int, list[str]]:
    return {y: rng.choices(["C", "P", "-"], weights=[70, 24, 6], k=12) for y in range(first, last + 1)}


def _set_target(codes: list[str], value: str = "C") -> None:
    codes[TARGET_MONTHS[0]:TARGET_MONTHS[1]] = [value] * (TARGET_MONTHS[1] - TARGET_MONTHS[0])


def _reach(rng: random.Random, number_base: int) -> tuple[ReachPlan, list[Station]]:
    """A river with stations along it, historical and active, whose Flow/Level grids in two target years give
    every verdict, plus near-misses: stations just outside the reach and on a tributary of the same name."""
    y1 = rng.randrange(1958, 1965)
    years = (y1, y1 + rng.randrange(5, 9))
    # (role, Flow status in y1, in y2); mainstem from the mouth upwards
    roles = [("below", VERDICT_PASS, VERDICT_PASS), ("below", VERDICT_PASS, VERDICT_PASS)]
    inside = [("keep", VERDICT_PASS, VERDICT_PASS), ("keep_p", VERDICT_PASS, VERDICT_PASS),
              ("level", VERDICT_PASS, VERDICT_LEVEL_ONLY), ("gap", VERDICT_FLOW_GAP, VERDICT_PASS),
              ("gap", VERDICT_PASS, VERDICT_FLOW_GAP)]
    rng.shuffle(inside)
    roles += inside + [("above", VERDICT_PASS, VERDICT_PASS), ("above", VERDICT_LEVEL_ONLY, VERDICT_PASS)]
    places = rng.sample([(rel, town) for rel in RELATIONS for town in TOWNS], len(roles) + 2)
    stations, km = [], rng.uniform(4, 15)
    for i, ((role, *statuses), (relation, town)) in enumerate(zip(roles, places, strict=False)):
        km += rng.uniform(18, 55)
        stations.append(_reach_station(rng, f"03UH{600 + i * 7 + rng.randrange(7):03d}",
                                       f"KINGFISHER RIVER {relation} {town.upper()}", REACH_RIVER, round(km, 1),
                                       years, statuses, near_miss=role == "keep_p"))
    for j, (relation, town) in enumerate(places[len(roles):]):
        stations.append(_reach_station(rng, f"03UH{700 + j * 7 + rng.randrange(7):03d}",
                                       f"LITTLE KINGFISHER RIVER {relation} {town.upper()}", REACH_TRIBUTARY,
                                       round(rng.uniform(5, 60), 1), years, (VERDICT_PASS, VERDICT_PASS)))
    inside_names = [s.name for s in stations[2:2 + len(inside)]]
    return ReachPlan(REACH_RIVER, REACH_TRIBUTARY, years, inside_names[0], inside_names[-1]), stations


def _reach_station(rng: random.Random, sid: str, name: str, river: str, km: float, years: tuple[int, int],
                   statuses: tuple[str, ...], near_miss: bool = False) -> Station:
    active = rng.random() < 0.3
    last = 2024 if active else rng.randrange(max(years) + 8, 1996)
    first = rng.randrange(1938, min(years) - 2)
    grid = {"Flow": _codes(rng, first, last), "Level": _codes(rng, first, last)}
    for year, status in zip(years, statuses, strict=True):
        _set_target(grid["Level"][year])  # Level is complete in the target months: reading it instead of Flow misleads
        if status == VERDICT_PASS:
            _set_target(grid["Flow"][year])
        elif status == VERDICT_FLOW_GAP:
            _set_target(grid["Flow"][year])
            grid["Flow"][year][rng.randrange(*TARGET_MONTHS)] = rng.choice(["P", "-"])
        else:  # LEVEL_ONLY: the flow record has a gap in this year
            del grid["Flow"][year]
    if near_miss:  # a usable year that is not complete all year round: 'complete months' < 12 must not reject it
        grid["Flow"][years[0]][rng.choice([0, 1, 2, 10, 11])] = "P"
    return Station(
        id=sid, name=name, region=REGIONS["UH"], river=river, active=active,
        records={kind: (first, last) for kind in ("Flow", "Level")},
        grid={kind: {y: tuple(codes) for y, codes in by_year.items()} for kind, by_year in grid.items()},
        river_km=km,
    )


def flow_status(station: Station, year: int) -> str:
    """The availability rule of task 004: the year in the Flow table with May-Sep all complete -> PASS;
    in the Flow table but a target month not C -> FLOW_GAP; only in the Level table -> LEVEL_ONLY."""
    codes = station.grid["Flow"].get(year)
    if codes is None:
        return VERDICT_LEVEL_ONLY if year in station.grid.get("Level", {}) else "NO_DATA"
    return VERDICT_PASS if all(c == "C" for c in codes[TARGET_MONTHS[0]:TARGET_MONTHS[1]]) else VERDICT_FLOW_GAP


GROUPS = tuple(sorted(CHARACTERISTICS))  # Inorganics, Microbiological, Nutrient, Physical
ALL_GROUPS = "All groups"


@dataclass(frozen=True)
class QualityPlan:
    units: tuple[str, ...]  # basin unit codes of task 005
    window: tuple[int, int]  # every group must cover these years


def _quality(rng: random.Random) -> tuple[QualityPlan, list[Location], list[Sample]]:
    """Designed monitoring locations in one basin unit of three regions: per unit a winner, a location whose
    earliest overall record hides a late group (loses on the common start), one whose group stops before the
    window ends (excluded), and a spring (wrong site type) with the earliest common start of all."""
    w1 = rng.randrange(2005, 2009)
    window = (w1, w1 + 10)
    regions = rng.sample(list(REGIONS), 3)
    locations: list[Location] = []
    samples: list[Sample] = []
    units = []
    for n, code in enumerate(regions):
        region = REGIONS[code]
        unit = BASIN_UNITS[region][-1][0]
        units.append(unit)
        common = rng.randrange(w1 - 9, w1 - 3)  # the winner's common start year
        designs = {
            "winner": _starts(rng, common, forced=rng.choice(GROUPS)),
            "late": {**_starts(rng, common - 4, forced=None), "Microbiological": rng.randrange(common + 1, w1 + 1)},
            "short": _starts(rng, common - 2, forced=rng.choice(GROUPS)),
            "spring": _starts(rng, common - 3, forced=rng.choice(GROUPS)),
        }
        if min(designs["late"].values()) >= min(designs["winner"].values()):  # earliest overall, latest common
            designs["late"]["Nutrient"] = min(designs["winner"].values()) - 1
        if n == 1:
            del designs["short"]
        order = list(designs)
        rng.shuffle(order)
        for k, role in enumerate(order):
            site_type = "Spring" if role == "spring" else "Stream"
            loc = Location(id=f"WQX-{code}-{5000 + n * 100 + k * 11 + rng.randrange(11)}",
                           name=f"{UNIT_NAMES[unit].split()[-1]} {site_type.lower()} site {70 + n * 10 + k}",
                           region=region, site_type=site_type, huc=unit)
            locations.append(loc)
            for group, start in designs[role].items():
                end = window[1] - 2 if role == "short" and group == "Physical" else rng.randrange(window[1] + 1, 2025)
                for year in range(start, end + 1):
                    for _ in range(rng.choice((1, 1, 2))):
                        characteristic, unit_label = rng.choice(CHARACTERISTICS[group])
                        day = date(year, 1, 1) + timedelta(days=rng.randrange(365))
                        value = f"{rng.uniform(0.01, 40):.2f}" if unit_label != "cfu/100mL" else str(rng.randrange(1, 900))
                        samples.append(Sample(loc.id, day, group, characteristic, value, unit_label))
    return QualityPlan(tuple(units), window), locations, samples


def _starts(rng: random.Random, common: int, forced: str | None) -> dict[str, int]:
    """Start year per group whose latest is `common` (one group, `forced` or random, starts exactly then)."""
    starts = {g: rng.randrange(common - 8, common) for g in GROUPS}
    starts[forced or rng.choice(GROUPS)] = common
    return starts


def period_of_record(data: WaterData, location_id: str, group: str = ALL_GROUPS) -> tuple[int, int, int] | None:
    """(start year, end year, results) of a location's samples in one characteristic group (or all)."""
    years = [s.day.year for s in data.samples
             if s.location == location_id and (group == ALL_GROUPS or s.group == group)]
    return (min(years), max(years), len(years)) if years else None


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


# ---------------------------------------------------------------- monitoring-location search

LOCATION_PAGE_SIZE = 20


@dataclass(frozen=True)
class LocationQuery:
    area: str = ""
    huc: str = ""
    site_type: str = ""
    submitted: bool = False

    @classmethod
    def from_params(cls, params: dict[str, str]) -> LocationQuery:
        return cls(area=params.get("area", ""), huc=params.get("huc", ""), site_type=params.get("siteType", ""),
                   submitted=any(k in params for k in ("area", "huc", "siteType")))


    @property
    def hucs(self) -> set[str]:
        """Basin-unit codes: the field takes several, separated by ';' (or commas/spaces), like the real portal."""
        return set(re.findall(r"\d{8}", self.huc))


def search_locations(data: WaterData, q: LocationQuery) -> list[Location]:
    return sorted((loc for loc in data.locations
                   if (not q.area or loc.region == q.area) and (not q.hucs or loc.huc in q.hucs)
                   and (not q.site_type or loc.site_type == q.site_type)), key=lambda loc: loc.id)


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
        _reach_draft(data),
        _quality_draft(data),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


LOCATIONS_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/locations"
MONTH_COLUMNS = tuple(m.lower() for m in MONTHS[TARGET_MONTHS[0]:TARGET_MONTHS[1]])  # may..sep


def reach_candidates(data: WaterData) -> list[Station]:
    """Mainstem stations whose river km lies between the two anchor stations', downstream first."""
    plan = data.reach
    mainstem = [s for s in data.stations if s.river == plan.river]
    low, high = (next(s.river_km for s in mainstem if s.name == name)
                 for name in (plan.downstream_anchor, plan.upstream_anchor))
    return sorted((s for s in mainstem if low <= s.river_km <= high), key=lambda s: s.river_km)


def reach_rows(data: WaterData) -> list[tuple[str, ...]]:
    rows = []
    for rank, station in enumerate(reach_candidates(data), 1):
        statuses = [flow_status(station, y) for y in data.reach.years]
        verdict = "KEEP" if all(v == VERDICT_PASS for v in statuses) else "REJECT"
        rows.append((str(rank), station.id, station.name, *statuses, verdict))
    return rows


def quality_rows(data: WaterData) -> list[tuple[str, ...]]:
    """Per basin unit the stream location covering the window in every group with the earliest common start."""
    first, last = data.quality.window
    rows = []
    for unit in data.quality.units:
        scored = []
        for loc in (x for x in data.locations if x.huc == unit and x.site_type == "Stream"):
            periods = [period_of_record(data, loc.id, g) for g in GROUPS]
            if any(p is None or p[0] > first or p[1] < last for p in periods):
                continue
            starts = [p[0] for p in periods if p]
            scored.append((max(starts), loc.id, min(p[1] for p in periods if p), starts))
        if not scored:
            raise ValueError(f"water: basin unit {unit} has no location covering {first}-{last}")
        best = min(scored)
        rows.append((unit, best[1], str(best[0]), str(best[2]), *(str(y) for y in best[3])))
    return sorted(rows)


def _reach_draft(data: WaterData) -> TaskDraft:
    plan, (y1, y2) = data.reach, data.reach.years
    candidates = reach_candidates(data)
    verdicts = {r[-1] for r in reach_rows(data)} | {v for r in reach_rows(data) for v in r[3:5]}
    if not ({"KEEP", "REJECT", VERDICT_LEVEL_ONLY, VERDICT_FLOW_GAP} <= verdicts
            and {s.active for s in candidates} == {True, False}):
        raise ValueError("water: the reach of task 004 lacks a verdict or a status trap for this seed")
    months = f"{MONTHS[TARGET_MONTHS[0]]}-{MONTHS[TARGET_MONTHS[1] - 1]}"
    return TaskDraft(
        task_id="offline_water_004", domain=DOMAIN, family=FAMILY, start_url=STATIONS_URL,
        constraint_instruction=(
            f"In the hydrometric station search enter river \"{plan.river}\" and set Station status to 'All "
            f"stations' (the default lists only real-time stations; discontinued ones are hidden); follow 'Next' "
            f"through every result page. The candidates are the {plan.river} mainstem stations (River column exactly "
            f"\"{plan.river}\", not the {plan.tributary}) whose River km lies from that of {plan.downstream_anchor} up "
            f"to that of {plan.upstream_anchor}, both included. Open each candidate's data availability page, set From "
            f"year {y1} and To year {y2} and click 'Show years' (the page shows only the last five years of record "
            f"by default), and read the FLOW section, not Level. For each of {y1} and {y2}: PASS if the year is a row "
            f"of the Flow table and {months} are all coded C; FLOW_GAP if it is a row of the Flow table but any of "
            f"{months} is not C; LEVEL_ONLY if the year is only in the Level table. final_verdict is KEEP when both "
            f"years are PASS, else REJECT. Rank the candidates from downstream to upstream (increasing River km, "
            f"rank 1 = most downstream) and report rank, station number, station name, the {y1} status, the {y2} "
            f"status and final_verdict."
        ),
        goal_instruction=(
            f"On the {plan.river} mainstem, from the station {plan.downstream_anchor} up to {plan.upstream_anchor} "
            f"(both included, discontinued stations too), which hydrometric stations have usable daily flow records "
            f"for {months} of both {y1} and {y2}? Rank every station of that reach from downstream to upstream and "
            f"give its number and name, the status of each year (PASS: flow complete in every one of those months; "
            f"FLOW_GAP: flow recorded that year but a month incomplete; LEVEL_ONLY: only water level recorded that "
            f"year) and KEEP (both years PASS) or REJECT."
        ),
        columns=("rank", "station_number", "station_name", f"may_sep_{y1}", f"may_sep_{y2}", "final_verdict"),
        rows=reach_rows(data),
        header=True,
        sorting="rank ascending (downstream to upstream: increasing river km)",
        gates=[f"river = {plan.river} (mainstem only)", "station status = All stations (historical and real-time)",
               "all result pages via Next", f"availability years {y1}..{y2} on every candidate's page",
               "Flow section of the grid (not Level)"],
        data_dependency=(f"The station list supplies the mainstem stations and their river km; the two named "
                         f"stations' river km bound the reach; each reach station's availability page supplies the "
                         f"Flow and Level rows of {y1} and {y2}; statuses, verdicts and ranks are computed from them."),
        control_dependency=("The status scope decides which stations are listed at all; the reach bounds decide "
                             "which availability pages must be opened; on each page the year window must be reset "
                             "before the target years exist."),
        inclusion=[f"{plan.river} mainstem stations with river km between the two named stations (inclusive)",
                   "real-time and discontinued stations", "every station of the reach, KEEP or REJECT"],
        exclusion=[f"{plan.tributary} stations", "mainstem stations below or above the reach",
                   "statuses read from the Level section"],
        traps=[f"near-miss: the river search also lists {plan.tributary} stations and mainstem stations outside the "
               f"reach, all with complete flow records",
               f"near-miss: a KEEP station has an incomplete month outside {months} ('Complete months' < 12)",
               "criterion mismatch: Level is complete in every target month; only the Flow section decides "
               "(LEVEL_ONLY, FLOW_GAP)",
               "drift: the search defaults to real-time stations; every availability page resets to the last five "
               "years of record"],
        column_notes={
            "rank": "1 = most downstream station of the reach; ordered by increasing river km",
            f"may_sep_{y1}": f"PASS / FLOW_GAP / LEVEL_ONLY for {y1} from the Flow and Level tables ({months} all C)",
            f"may_sep_{y2}": f"PASS / FLOW_GAP / LEVEL_ONLY for {y2}, same rule",
            "final_verdict": "KEEP if both years are PASS, else REJECT",
        },
        dedup_key=("station_number",),
        inter_chain=True,
        shape="derived",
        mirrors=("WATER_OFFICE wateroffice_003/004: rank|station_number|station_name|<year>_MayJul|...|"
                 "final_verdict, PASS/LEVEL_ONLY/FLOW_GAP per year from each station's availability page, "
                 "downstream to upstream"),
        phases=(f"station search: {plan.river}, all statuses, every page -> mainstem stations with river km",
                "reach: stations whose river km lies between the two named stations'",
                f"each reach station's availability page, years {y1}..{y2} -> Flow and Level rows",
                "derive: per-year status, final verdict, rank by river km"),
        derived=("rank", f"may_sep_{y1}", f"may_sep_{y2}", "final_verdict"),
    )


def _quality_draft(data: WaterData) -> TaskDraft:
    units, (first, last) = data.quality.units, data.quality.window
    named = ", ".join(f"{u} ({UNIT_NAMES[u]})" for u in units)
    groups = ", ".join(GROUPS)
    return TaskDraft(
        task_id="offline_water_005", domain=DOMAIN, family=FAMILY, start_url=LOCATIONS_URL,
        constraint_instruction=(
            f"In the monitoring-location search enter the basin units {named} (codes separated by ';') with site "
            f"type Stream; the candidates are the Stream locations listed. Open each candidate's page (it confirms "
            f"the site type and basin unit). Its period of record is shown for all characteristic groups "
            f"together by default: choose each characteristic group ({groups}) separately and read that group's Start "
            f"year and End year. Keep the locations where every one of the four groups starts in or before {first} "
            f"and ends in or after {last}. common_start_year is the latest of the four group start years and "
            f"common_end_year the earliest of the four end years. In each basin unit keep only the location with the "
            f"earliest common_start_year (tie: the smaller location id). Report basin unit, location id, "
            f"common_start_year, common_end_year and the start year of each group in the order {groups}."
        ),
        goal_instruction=(
            f"In each of the basin units {named}, which stream monitoring location has had inorganic, "
            f"microbiological, nutrient and physical measurements together the longest, with all four groups "
            f"recorded from {first} through {last}? Give per unit the location, the first and last year of the "
            f"period all four groups share, and the first year of each group."
        ),
        columns=("huc", "location_id", "common_start_year", "common_end_year", "inorganics_start",
                 "microbiological_start", "nutrient_start", "physical_start"),
        rows=quality_rows(data),
        sorting="huc ascending",
        gates=[f"basin units = {';'.join(units)}", "site type = Stream",
               "characteristic group = each of the four groups, on every location page (default: all groups)"],
        data_dependency=("The location search supplies the candidates and their basin units; each location page, "
                         "once per characteristic group, supplies that group's start and end years; the common "
                         "period, the window filter and the per-unit winner are computed from them."),
        control_dependency=("The basin units decide which location pages are opened; each group needs its own state "
                            "of the location page; "
                            "a location is kept only after all four groups are read for it."),
        inclusion=[f"Stream locations of basin units {', '.join(units)}",
                   f"every group starting in or before {first} and ending in or after {last}"],
        exclusion=["springs, lakes and wells", f"locations where any group ends before {last}",
                   "all but the earliest common start per unit"],
        traps=["criterion mismatch: the default 'All groups' period starts at the EARLIEST group, not the common "
               "start; a location with the earliest overall start loses on its late Microbiological record",
               f"near-miss (two of the units): a location with an earlier common start whose Physical record stops "
               f"before {last}",
               "near-miss: a spring in the same unit has the earliest common start (wrong site type)",
               "drift: every location page opens on 'All groups' again"],
        column_notes={
            "common_start_year": "the latest of the four group start years",
            "common_end_year": "the earliest of the four group end years",
            "location_id": "per unit, the covering Stream location with the earliest common start (tie: smaller id)",
        },
        inter_chain=True,
        shape="derived",
        mirrors=("WATER_QUALITY_PORTAL waterquality_003: HUC|MonitoringLocationIdentifier|common_start_year|"
                 "<group>_start..., groups searched separately, common start = latest group start, one station "
                 "per HUC"),
        phases=("location search: the basin units, site type Stream -> candidate locations",
                "each candidate's page once per characteristic group -> start and end years",
                "derive: common start/end, window filter, earliest common start per unit"),
        derived=("location_id", "common_start_year", "common_end_year"),
    )


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
        "offline_water_004": _reach_walkthrough(data),
        "offline_water_005": _quality_walkthrough(data),
    }


def _reach_walkthrough(data: WaterData) -> list[Step]:
    plan, (y1, y2) = data.reach, data.reach.years
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": STATIONS_URL}, "why": "open the station search"},
        {"tool": "fill", "args": {"target": {"label": "River"}, "value": plan.river}, "why": "river scope"},
        {"tool": "select", "args": {"target": {"label": "Station status"}, "option": STATUSES["all"]},
         "why": "discontinued stations are hidden by default"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
        {"tool": "extract_rows", "args": {"into": "stations", "columns": {
            "station_id": "Station", "station_name": "Name", "river": "River", "km": "River km"}},
         "why": "candidate list with the order along the river"},
    ]
    for station in reach_candidates(data):
        steps += [
            {"tool": "goto", "args": {"url": f"{STATIONS_URL}/{station.id}/availability"},
             "why": f"availability of {station.id}, inside the reach"},
            {"tool": "select", "args": {"target": {"label": "From year"}, "option": str(y1)}, "why": "window start"},
            {"tool": "select", "args": {"target": {"label": "To year"}, "option": str(y2)}, "why": "window end"},
            {"tool": "click", "args": {"target": {"text": "Show years"}}, "why": "the default shows the last 5 years"},
            {"tool": "extract_rows", "args": {"into": "flow", "section": "Flow", "columns": {
                "station_id": "fact:Station number", "yr": "Year", **{m: m.capitalize() for m in MONTH_COLUMNS}}},
             "why": "Flow rows in the window"},
            {"tool": "extract_rows", "args": {"into": "level", "section": "Level", "columns": {
                "station_id": "fact:Station number", "yr": "Year"}}, "why": "which years only have Level data"},
        ]
    complete = " AND ".join(f"f.{m} = 'C'" for m in MONTH_COLUMNS)
    sql = (
        "WITH reach AS (SELECT station_id, station_name, num(km) AS km FROM stations "
        f"WHERE river = '{plan.river}' AND num(km) BETWEEN "
        f"(SELECT num(km) FROM stations WHERE station_name = '{plan.downstream_anchor}') AND "
        f"(SELECT num(km) FROM stations WHERE station_name = '{plan.upstream_anchor}')), "
        f"target(yr) AS (VALUES ('{y1}'), ('{y2}')), "
        "status AS (SELECT r.station_id, t.yr, CASE WHEN f.station_id IS NULL THEN "
        "CASE WHEN l.station_id IS NULL THEN 'NO_DATA' ELSE 'LEVEL_ONLY' END "
        f"WHEN {complete} THEN 'PASS' ELSE 'FLOW_GAP' END AS verdict "
        "FROM reach r CROSS JOIN target t "
        "LEFT JOIN flow f ON f.station_id = r.station_id AND f.yr = t.yr "
        "LEFT JOIN level l ON l.station_id = r.station_id AND l.yr = t.yr) "
        "SELECT CAST(row_number() OVER (ORDER BY r.km) AS VARCHAR) AS rank, r.station_id AS station_number, "
        f"r.station_name, a.verdict AS may_sep_{y1}, b.verdict AS may_sep_{y2}, "
        "CASE WHEN a.verdict = 'PASS' AND b.verdict = 'PASS' THEN 'KEEP' ELSE 'REJECT' END AS final_verdict "
        f"FROM reach r JOIN status a ON a.station_id = r.station_id AND a.yr = '{y1}' "
        f"JOIN status b ON b.station_id = r.station_id AND b.yr = '{y2}' ORDER BY r.km"
    )
    return [*steps, *derive_then_finish(sql, "verdicts and ranks from the read rows", "answer = the derived table, in its order")]


def _quality_walkthrough(data: WaterData) -> list[Step]:
    units, (first, last) = data.quality.units, data.quality.window
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": LOCATIONS_URL}, "why": "open the location search"},
        {"tool": "fill", "args": {"target": {"label": "Basin unit (HUC)"}, "value": ";".join(units)},
         "why": "the three basin units in one search"},
        {"tool": "select", "args": {"target": {"label": "Site type"}, "option": "Stream"}, "why": "streams only"},
        {"tool": "click", "args": {"target": {"text": "Find locations"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "every candidate location"},
        {"tool": "extract_rows", "args": {"into": "locations", "columns": {
            "location_id": "Location ID", "site_type": "Site type", "huc": "Basin unit"}},
         "why": "candidate locations with their basin unit"},
    ]
    for unit in units:
        for loc in search_locations(data, LocationQuery(huc=unit, site_type="Stream", submitted=True)):
            steps.append({"tool": "read_facts", "args": {
                "url": f"{LOCATIONS_URL}/{loc.id}", "into": "sites",
                "fields": {"location_id": "Location ID", "site_type": "Site type", "huc": "Basin unit"}},
                "why": f"{loc.id}'s own page confirms its site type and unit"})
            steps += [{"tool": "read_facts", "args": {
                "url": f"{LOCATIONS_URL}/{loc.id}?{urlencode({'group': group})}", "into": "periods",
                "fields": {"location_id": "Location ID", "grp": "url:group", "start_year": "Start year",
                           "end_year": "End year"}}, "why": f"{group} period of {loc.id}"} for group in GROUPS]
    starts = ", ".join(f"CAST(max(CASE WHEN grp = '{g}' THEN s END) AS VARCHAR) AS {g.lower()}_start" for g in GROUPS)
    sql = (
        "WITH p AS (SELECT location_id, grp, CAST(start_year AS INTEGER) AS s, CAST(end_year AS INTEGER) AS e "
        "FROM periods), "
        f"per AS (SELECT location_id, max(s) AS common_start, min(e) AS common_end, count(DISTINCT grp) AS n, "
        f"bool_and(s <= {first} AND e >= {last}) AS covers, {starts} FROM p GROUP BY location_id), "
        "c AS (SELECT DISTINCT s.huc, per.* FROM locations l JOIN sites s ON s.location_id = l.location_id "
        "JOIN per ON per.location_id = l.location_id "
        f"WHERE s.site_type = 'Stream' AND s.huc IN ({', '.join(repr(u) for u in units)}) "
        f"AND per.n = {len(GROUPS)} AND per.covers) "
        "SELECT huc, location_id, CAST(common_start AS VARCHAR) AS common_start_year, "
        "CAST(common_end AS VARCHAR) AS common_end_year, "
        + ", ".join(f"{g.lower()}_start" for g in GROUPS)
        + " FROM c QUALIFY row_number() OVER (PARTITION BY huc ORDER BY common_start, location_id) = 1 ORDER BY huc"
    )
    return [*steps, *derive_then_finish(sql, "common period, window, one per unit")]


SITE = Site(
    prefix=PREFIX, title="Water monitoring", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
