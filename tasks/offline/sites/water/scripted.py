"""The water site's scripted walkthroughs: the steps that solve each task."""

from __future__ import annotations

from urllib.parse import urlencode

from tasks.offline.registry import Step
from tasks.offline.sites._record_pair import derive_then_finish
from tasks.offline.sites.water.data import GROUPS, STATUSES, WaterData
from tasks.offline.sites.water.oracles import (
    LOCATIONS_URL,
    MONTH_COLUMNS,
    QUERY_URL,
    STATIONS_URL,
    choose,
    reach_candidates,
)
from tasks.offline.sites.water.search import LocationQuery, search_locations


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
