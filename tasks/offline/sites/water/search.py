"""The water site's searches, shared by the pages and the oracles: stations, water-quality samples, monitoring
locations."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.offline.sites.water.data import (
    DATA_TYPES,
    DEFAULT_GRID_YEARS,
    DEFAULT_QUERY_WINDOW,
    REGIONS,
    STATUSES,
    Location,
    Station,
    WaterData,
)


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
