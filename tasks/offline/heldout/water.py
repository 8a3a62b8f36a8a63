"""Held-out water task: the discontinued level stations of one region (a copy task behind three defaults).

New against the suite: the region scope, the Level data type and the Historical-only status (the default
real-time list holds none of the answer; 'All stations' adds the active ones), over Next pages.
"""

from __future__ import annotations

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft
from tasks.offline.sites.water.data import (
    DOMAIN,
    FAMILY,
    PREFIX,
    REGIONS,
    STATION_PAGE_SIZE,
    STATUSES,
    WaterData,
)
from tasks.offline.sites.water.oracles import STATIONS_URL
from tasks.offline.sites.water.search import StationQuery, search_stations

TASK_ID = "offline_heldout_water_001"


def choose_query(data: WaterData) -> StationQuery:
    """More than one page of historical level stations; flow-only historical stations and active level
    stations in the same region (the near misses)."""
    def fits(q: StationQuery) -> bool:
        found = search_stations(data, q)
        any_type = search_stations(data, StationQuery(region=q.region, status="historical"))
        active = search_stations(data, StationQuery(region=q.region, data_type="level"))
        return STATION_PAGE_SIZE < len(found) <= 20 and len(any_type) > len(found) and bool(active)

    candidates = (StationQuery(region=region, data_type="level", status="historical")
                  for region in sorted(REGIONS.values()))
    return first_fit(candidates, fits, "water held-out region")


def draft(data: WaterData) -> TaskDraft:
    q = choose_query(data)
    found = sorted(search_stations(data, q), key=lambda s: s.id)
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=STATIONS_URL,
        constraint_instruction=(
            f"In the station search choose region {q.region}, data type Level and station status "
            f"'{STATUSES['historical']}' (the default lists only real-time stations; 'All stations' would add the "
            f"active ones). Read every result page (Next). Report each station's number, name, river and river km."
        ),
        goal_instruction=(
            f"Which discontinued stations in the {q.region} region recorded water level? Give number, name, river "
            f"and river km."
        ),
        columns=("station_id", "station_name", "river", "river_km"),
        rows=[(s.id, s.name, s.river, s.km) for s in found],
        sorting="station_id ascending",
        gates=[f"region = {q.region}", "data type = Level (default: Any)",
               f"station status = {STATUSES['historical']} (default: real-time)", "all result pages via Next"],
        data_dependency="The filtered station list (every page) supplies the rows.",
        control_dependency="The discontinued criterion decides the status; the level criterion the data type; "
                           "the Next link how many pages to read.",
        inclusion=[f"region {q.region}", "Level among the data types", "status Historical"],
        exclusion=["real-time (active) stations", "flow-only stations"],
        traps=["drift: the status defaults to real-time, which lists none of the discontinued stations",
               "criterion mismatch: 'All stations' adds active level stations",
               "criterion mismatch: flow-only historical stations in the same region",
               "dependency not closed: results continue on a second page reached by Next"],
        column_notes={"river_km": "as listed, one decimal"},
    )


def walkthrough(data: WaterData) -> list[Step]:
    q = choose_query(data)
    return [
        {"tool": "goto", "args": {"url": STATIONS_URL}, "why": "open the station search"},
        {"tool": "select", "args": {"target": {"label": "Region"}, "option": q.region}, "why": "region scope"},
        {"tool": "select", "args": {"target": {"label": "Data type"}, "option": "Level"}, "why": "level stations"},
        {"tool": "select", "args": {"target": {"label": "Station status"}, "option": STATUSES["historical"]},
         "why": "discontinued stations only"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
        {"tool": "extract_rows", "args": {"columns": {
            "station_id": "Station", "station_name": "Name", "river": "River", "river_km": "River km"}},
         "why": "rows as listed"},
        {"tool": "finish", "args": {"order_by": ["station_id"]}, "why": "all pages read"},
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
