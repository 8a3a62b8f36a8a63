"""Held-out water task 2: the flow stations of one region summarised per river (a per-group aggregate).

New against the suite and the first held-out set: a region scope over ALL stations (the default lists only
real-time ones) with the Flow data type, every Next page, then a group-by river with a conditional count and an
arg-max (the most upstream station, by river km read as a number).
"""

from __future__ import annotations

from collections import defaultdict

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.water.data import (
    DOMAIN,
    FAMILY,
    PREFIX,
    REGIONS,
    STATION_PAGE_SIZE,
    STATUSES,
    Station,
    WaterData,
)
from tasks.offline.sites.water.oracles import STATIONS_URL
from tasks.offline.sites.water.search import StationQuery, search_stations

TASK_ID = "offline_heldout_water_002"


def rows_of(found: list[Station]) -> list[tuple[str, ...]]:
    rivers: dict[str, list[Station]] = defaultdict(list)
    for s in found:
        rivers[s.river].append(s)
    out = []
    for river, stations in rivers.items():
        top = min(stations, key=lambda s: (-s.river_km, s.id))
        out.append((river, str(len(stations)), str(sum(not s.active for s in stations)), top.id, top.km))
    return sorted(out, key=lambda r: (-int(r[1]), r[0]))


def choose_query(data: WaterData) -> StationQuery:
    """Several Next pages; the real-time default and the Any data type (level-only stations) both change the
    table; the most upstream station is a historical one somewhere and km values sort differently as text."""
    def fits(q: StationQuery) -> bool:
        found = search_stations(data, q)
        rows = rows_of(found)
        realtime = rows_of(search_stations(data, StationQuery(region=q.region, data_type="flow")))
        any_type = rows_of(search_stations(data, StationQuery(region=q.region, status="all")))
        upstream_hist = any(not s.active and s.id in {r[3] for r in rows} for s in found)
        as_text = any(max(ss, key=lambda s: s.km).km != r[4]
                      for r in rows for ss in [[s for s in found if s.river == r[0]]])
        return (len(found) > STATION_PAGE_SIZE and 3 <= len(rows) <= 12 and rows != realtime and rows != any_type
                and upstream_hist and as_text)

    candidates = (StationQuery(region=region, data_type="flow", status="all") for region in sorted(REGIONS.values()))
    return first_fit(candidates, fits, "water held-out region per river")


def draft(data: WaterData) -> TaskDraft:
    q = choose_query(data)
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=STATIONS_URL,
        constraint_instruction=(
            f"In the station search choose region {q.region}, data type Flow and station status "
            f"'{STATUSES['all']}' (the default lists only real-time stations). Read every result page (Next). Group "
            f"the listed stations by River and report per river the number of stations, how many of them are "
            f"Historical, and the most upstream station (the largest river km, compared as a number; ties: the "
            f"smaller station number) with its river km."
        ),
        goal_instruction=(
            f"For each river in the {q.region} region, how many stations, active or discontinued, have recorded "
            f"flow, how many of those are discontinued, and which of them lies furthest upstream (largest river km) "
            f"at which river km?"
        ),
        columns=("river", "stations", "historical", "upstream_station", "upstream_km"),
        rows=rows_of(search_stations(data, q)),
        sorting="stations descending, then river ascending",
        gates=[f"region = {q.region}", "data type = Flow (default: Any)",
               f"station status = {STATUSES['all']} (default: real-time)", "all result pages via Next"],
        data_dependency="Every listed station (all pages) supplies river, status and river km; the answer is "
                        "aggregated per river.",
        control_dependency="The active-or-discontinued criterion decides the status; the flow criterion the data "
                           "type; the Next link how many pages to read.",
        inclusion=[f"region {q.region}", "Flow among the data types", "real-time and historical stations"],
        exclusion=["level-only stations", "stations of other regions"],
        traps=["drift: the status defaults to real-time, dropping the historical stations (counts and upstream "
               "station change)",
               "criterion mismatch: data type Any adds level-only stations",
               "dependency not closed: results continue over Next pages",
               "in-page misreading: river km compared as text picks another upstream station"],
        column_notes={
            "stations": "integer number of listed flow stations on that river in the region",
            "historical": "integer number of them with status Historical",
            "upstream_station": "station number with the largest river km (ties: smaller number)",
            "upstream_km": "its river km as listed, one decimal",
        },
        shape="derived",
        mirrors="Water Office station search: a region over all statuses and one data type, aggregated per river "
                "with a conditional count and an arg-max along the river",
        phases=("station search: region, Flow, all stations; every Next page",
                "derive: group by river; count, historical count, most upstream station by river km"),
        derived=("stations", "historical", "upstream_station", "upstream_km"),
    )


def walkthrough(data: WaterData) -> list[Step]:
    q = choose_query(data)
    sql = (
        "WITH s AS (SELECT station_id, river, status, river_km, num(river_km) AS km FROM listed), "
        "t AS (SELECT river, station_id, river_km FROM s QUALIFY row_number() OVER (PARTITION BY river "
        "ORDER BY km DESC, station_id) = 1), "
        "g AS (SELECT river, count(*) AS n, count(*) FILTER (WHERE status = 'Historical') AS h FROM s GROUP BY river) "
        "SELECT g.river, CAST(g.n AS VARCHAR) AS stations, CAST(g.h AS VARCHAR) AS historical, "
        "t.station_id AS upstream_station, t.river_km AS upstream_km FROM g JOIN t USING (river) "
        "ORDER BY g.n DESC, g.river"
    )
    return [
        {"tool": "goto", "args": {"url": STATIONS_URL}, "why": "open the station search"},
        {"tool": "select", "args": {"target": {"label": "Region"}, "option": q.region}, "why": "region scope"},
        {"tool": "select", "args": {"target": {"label": "Data type"}, "option": "Flow"}, "why": "flow stations"},
        {"tool": "select", "args": {"target": {"label": "Station status"}, "option": STATUSES["all"]},
         "why": "active and discontinued stations"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
        {"tool": "extract_rows", "args": {"into": "listed", "columns": {
            "station_id": "Station", "river": "River", "river_km": "River km", "status": "Status"}},
         "why": "every listed station"},
        *derive_then_finish(sql, "per river: count, historical count, most upstream station"),
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
