"""The water site's tasks: each search chosen from the data, its oracle rows and both record wordings."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites.water.data import (
    DEFAULT_GRID_YEARS,
    DEFAULT_QUERY_WINDOW,
    DOMAIN,
    FAMILY,
    GROUPS,
    MONTHS,
    PREFIX,
    REGIONS,
    RIVER_NAMES,
    TARGET_MONTHS,
    UNIT_NAMES,
    VERDICT_FLOW_GAP,
    VERDICT_LEVEL_ONLY,
    VERDICT_PASS,
    Station,
    WaterData,
    flow_status,
    period_of_record,
)
from tasks.offline.sites.water.search import SampleQuery, StationQuery, query_samples, search_stations

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
