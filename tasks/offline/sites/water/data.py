"""The water site's data, built from the seed: stations, monitoring locations, samples and the designed data
of the derived tasks (004, 005)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

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
