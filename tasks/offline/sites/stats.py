"""Official statistics (census table explorer / CDC WONDER style).

Mechanics: a table explorer whose survey product defaults to 1-year estimates (which omit counties under
65,000 residents: the drift trap), a vintage selector inside an iframe, a custom (non-native) geography
dropdown ("All states" by default, "All counties in <state>" on request), a table id selector, cells with
margins of error next to the estimates and a statewide baseline row; plus a POST-only query form with
group-by options whose results appear only after submit (the URL never changes).
Geography profiles (one page per state and per county, each with an educational-attainment and an
employment-status table of counts) open on the 1-year product of the latest vintage, and a page reached by a
plain link opens on that default again; small counties have no 1-year profile. A POST-only mortality query
form (group by state, county or cause, one year per query) shows its default measure as an age-adjusted rate,
and marks counts of 1-9 deaths "Suppressed" and rates on fewer than 20 deaths "Unreliable", as CDC WONDER does.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites._stats_base import (
    COUNTY_WORDS,
    DOMAIN,
    FAMILY,
    ONE_YEAR_MIN_POPULATION,
    PREFIX,
    PRODUCTS,
    STATES,
    VINTAGES,
    County,
    relative_moe,
)
from tasks.offline.sites._stats_data import EDUCATION, EMPLOYMENT, Cell, StatsData
from tasks.offline.sites._stats_mortality import (
    CAUSES,
    DEATH_GROUP_BY,
    MEASURES,
    MORTALITY_YEARS,
    RELIABLE_MIN,
    SUPPRESSED_MAX,
    DeathQuery,
    build_mortality,
    deaths_draft,
    deaths_walkthrough,
    mortality_table,
)
from tasks.offline.sites._stats_profiles import (
    build_profiles,
    profile_draft,
    profile_walkthrough,
    release_of,
    release_title,
)

TABLES = {
    "T101": "Median household income (dollars)",
    "T102": "Poverty status in the past 12 months",
    "T103": "Educational attainment: bachelor's degree or higher (age 25+)",
}
BIRTH_YEARS = tuple(range(2016, 2024))
AGE_GROUPS = ("Under 20", "20-24", "25-29", "30-34", "35-39", "40 and over")
AGE_SHARES = (0.06, 0.18, 0.29, 0.29, 0.14, 0.04)
GROUP_BY = {"state": "State", "county": "County", "year": "Year", "age": "Mother's age group"}


# ---------------------------------------------------------------- data


def _cells_for(table: str, level: float, population: int, product: str, rng: random.Random) -> Cell:
    rel = relative_moe(population, product)
    noise = 1 + rng.gauss(0, rel / 3)
    if table == "T101":
        est = round(level * noise)
        moe = max(150, round(est * rel))
        return Cell((("Estimate", str(est)), ("Margin of error", f"±{moe}")), est, moe)
    if table == "T102":
        pct = round(level * noise, 1)
        pct_moe = max(0.3, round(pct * rel * 1.5, 1))
        count = round(population * pct / 100)
        count_moe = max(20, round(count * rel * 1.5))
        return Cell((("Count", str(count)), ("Count MOE", f"±{count_moe}"), ("Percent", f"{pct:.1f}"),
                     ("Percent MOE", f"±{pct_moe:.1f}")), pct, pct_moe)
    pct = round(level * noise, 1)
    pct_moe = max(0.3, round(pct * rel * 1.2, 1))
    return Cell((("Percent", f"{pct:.1f}"), ("Margin of error", f"±{pct_moe:.1f}")), pct, pct_moe)


def build(seed: int) -> StatsData:
    rng = random.Random(f"{PREFIX}:{seed}")
    counties: list[County] = []
    for code in STATES:
        for i, word in enumerate(sorted(rng.sample(COUNTY_WORDS, rng.randint(9, 15))), start=1):
            population = int(min(1_500_000, max(6_000, math.exp(rng.gauss(10.9, 1.1)))))
            counties.append(County(f"{code}-{i:02d}", code, f"{word} County", population))
    levels = {c.id: {"T101": rng.gauss(60_000, 11_000), "T102": rng.uniform(7, 26), "T103": rng.uniform(14, 48)}
              for c in counties}
    cells: dict[tuple[str, str, int, str], Cell] = {}
    for table in TABLES:
        for product in PRODUCTS:
            for vintage in VINTAGES:
                growth = 1.03 ** (vintage - 2019) if table == "T101" else 1 + 0.01 * (vintage - 2019)
                for code in STATES:
                    members = [c for c in counties if c.state == code]
                    total = sum(c.population for c in members)
                    state_level = sum(levels[c.id][table] * c.population for c in members) / total
                    cells[(table, product, vintage, code)] = _cells_for(table, state_level * growth, total * 4,
                                                                        product, rng)
                    for c in members:
                        cells[(table, product, vintage, c.id)] = _cells_for(
                            table, levels[c.id][table] * growth, c.population, product, rng)
    births: dict[tuple[str, int, str], int] = {}
    for c in counties:
        for year in BIRTH_YEARS:
            for group, share in zip(AGE_GROUPS, AGE_SHARES, strict=True):
                births[(c.id, year, group)] = max(0, round(c.population * 0.011 * share * rng.uniform(0.85, 1.15)))
    # The profiles and the mortality data draw from their own generators: tasks 001-003 keep their data.
    profiles = build_profiles(counties, random.Random(f"{PREFIX}:{seed}:profiles"))
    mortality = build_mortality(counties, random.Random(f"{PREFIX}:{seed}:mortality"))
    return StatsData(counties, cells, births, profiles, mortality)


# ---------------------------------------------------------------- explorer


@dataclass(frozen=True)
class TableQuery:
    product: str = "acs1"
    vintage: int = VINTAGES[-1]
    geo: str = "state"  # "state" or "county:<code>"
    table: str = "T101"

    @classmethod
    def from_params(cls, params: dict[str, str]) -> TableQuery:
        vintage = params.get("vintage", "")
        geo = params.get("geo", "state")
        return cls(
            product=params.get("product") if params.get("product") in PRODUCTS else "acs1",
            vintage=int(vintage) if vintage.isdigit() and int(vintage) in VINTAGES else VINTAGES[-1],
            geo=geo if geo == "state" or geo.removeprefix("county:") in STATES else "state",
            table=params.get("table") if params.get("table") in TABLES else "T101",
        )


@dataclass(frozen=True)
class TableRow:
    geography: str
    level: str
    cell: Cell
    compared: str


def comparison(county: Cell, state: Cell) -> str:
    """Significant at 90% when the difference exceeds the combined margin of error."""
    if abs(county.primary - state.primary) <= math.hypot(county.primary_moe, state.primary_moe):
        return "No significant difference"
    return "Higher" if county.primary > state.primary else "Lower"


def explore(data: StatsData, q: TableQuery) -> list[TableRow]:
    def cell(geo_id: str) -> Cell:
        return data.cells[(q.table, q.product, q.vintage, geo_id)]

    if q.geo == "state":
        return [TableRow(name, "State", cell(code), "") for code, name in STATES.items()]
    code = q.geo.removeprefix("county:")
    state_cell = cell(code)
    rows = [TableRow(f"{STATES[code]} (statewide)", "State", state_cell, "")]
    for c in data.counties_in(code):
        if q.product == "acs1" and c.population < ONE_YEAR_MIN_POPULATION:
            continue
        rows.append(TableRow(c.name, "County", cell(c.id), comparison(cell(c.id), state_cell)))
    return rows


# ---------------------------------------------------------------- query form (POST only)


@dataclass(frozen=True)
class BirthQuery:
    group_by: str = "state"
    state: str = ""
    year_from: int = BIRTH_YEARS[-1]
    year_to: int = BIRTH_YEARS[-1]
    totals: bool = True


def births_table(data: StatsData, q: BirthQuery) -> list[tuple[str, int, str]]:
    """(group label, births, rate per 1,000 women 15-44), in the group's natural order."""
    years = [y for y in BIRTH_YEARS if q.year_from <= y <= q.year_to]
    members = [c for c in data.counties if not q.state or c.state == q.state]
    if q.group_by == "county":
        members = sorted(members, key=lambda c: (c.state, c.name))
    groups: dict[str, tuple[int, int]] = {}  # label -> (births, women)

    def add(label: str, births: int, women: int) -> None:
        b, w = groups.get(label, (0, 0))
        groups[label] = (b + births, w + women)

    for c in members:
        women = round(c.population * 0.2)
        for year in years:
            for group in AGE_GROUPS:
                births = data.births[(c.id, year, group)]
                label = {"state": STATES[c.state], "county": f"{c.name}, {STATES[c.state]}", "year": str(year),
                         "age": group}[q.group_by]
                add(label, births, round(women * AGE_SHARES[AGE_GROUPS.index(group)] * 6))
    order = {"state": list(STATES.values()), "age": list(AGE_GROUPS)}.get(q.group_by)
    labels = [g for g in order if g in groups] if order else list(groups)
    rows = [(g, groups[g][0], f"{1000 * groups[g][0] / max(1, groups[g][1]):.1f}") for g in labels]
    if q.totals and rows:
        births = sum(r[1] for r in rows)
        women = sum(groups[g][1] for g in labels)
        rows.append(("Total", births, f"{1000 * births / max(1, women):.1f}"))
    return rows


# ---------------------------------------------------------------- pages


def routes(data: StatsData) -> list[Route]:
    geo_options = [("state", "All states")] + [(f"county:{code}", f"All counties in {name}")
                                               for code, name in STATES.items()]

    async def home(request: Request) -> HTMLResponse:
        return render("stats/home.html", site_title="Official statistics")

    async def explorer(request: Request) -> HTMLResponse:
        q = TableQuery.from_params(dict(request.query_params))
        return render(
            "stats/explore.html", site_title="Table explorer", q=q, products=PRODUCTS, tables=TABLES,
            geo_options=geo_options, geo_label=dict(geo_options)[q.geo], rows=explore(data, q),
            headers=[h for h, _ in explore(data, q)[0].cell.values], min_population=ONE_YEAR_MIN_POPULATION,
        )

    async def vintage_frame(request: Request) -> HTMLResponse:
        selected = request.query_params.get("selected", str(VINTAGES[-1]))
        return render("stats/vintage_frame.html", vintages=VINTAGES, selected=selected)

    async def query_form(request: Request) -> HTMLResponse:
        q, rows, error = BirthQuery(), None, ""
        if request.method == "POST":
            form = await request.form()
            try:
                q = BirthQuery(
                    group_by=str(form.get("group_by", "state")), state=str(form.get("state", "")),
                    year_from=int(str(form.get("year_from", BIRTH_YEARS[-1]))),
                    year_to=int(str(form.get("year_to", BIRTH_YEARS[-1]))), totals=form.get("totals") == "on",
                )
            except ValueError:
                error = "Years must be numbers."
            if not error and (q.group_by not in GROUP_BY or (q.state and q.state not in STATES)):
                error = "Unknown grouping or state."
            if not error and q.year_from > q.year_to:
                error = "The first year must not be after the last year."
            if not error:
                rows = births_table(data, q)
        return render("stats/query.html", site_title="Natality query", q=q, rows=rows, error=error,
                      group_by=GROUP_BY, states=STATES, years=BIRTH_YEARS)

    async def profiles_index(request: Request) -> HTMLResponse:
        return render("stats/profiles.html", site_title="Geography profiles", states=STATES)

    async def profile_page(request: Request) -> HTMLResponse:
        geo = request.path_params["geo"]
        county = next((c for c in data.counties if c.id == geo), None)
        if county is None and geo not in STATES:
            return render("stats/missing.html", status_code=404, site_title="Not found", what=geo)
        product, vintage = release_of(dict(request.query_params))
        state = county.state if county else geo
        available = not (county and product == "acs1" and county.population < ONE_YEAR_MIN_POPULATION)
        return render(
            "stats/profile.html", site_title=f"{county.name if county else STATES[geo]} profile", county=county,
            state=state, state_name=STATES[state], product=product, vintage=vintage, products=PRODUCTS,
            vintages=VINTAGES, release=release_title(product, vintage), min_population=ONE_YEAR_MIN_POPULATION,
            profile=data.profiles[(geo, product, vintage)] if available else None,
            tables=((EDUCATION, "education"), (EMPLOYMENT, "employment")),
            counties=[] if county else data.counties_in(state),
        )

    async def mortality_form(request: Request) -> HTMLResponse:
        q, rows, error = DeathQuery(), None, ""
        if request.method == "POST":
            q, error = DeathQuery.from_form(await request.form())
            if not error:
                rows = mortality_table(data, q)
        return render("stats/mortality.html", site_title="Mortality query", q=q, rows=rows, error=error,
                      group_by=DEATH_GROUP_BY, states=STATES, years=MORTALITY_YEARS, causes=CAUSES,
                      measures=MEASURES, suppressed_max=SUPPRESSED_MAX, reliable_min=RELIABLE_MIN)

    return [
        Route("/", home),
        Route("/explore", explorer),
        Route("/frame/vintage", vintage_frame),
        Route("/query", query_form, methods=["GET", "POST"]),
        Route("/profiles", profiles_index),
        Route("/profile/{geo}", profile_page),
        Route("/mortality", mortality_form, methods=["GET", "POST"]),
    ]


# ---------------------------------------------------------------- tasks

EXPLORE_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/explore"
QUERY_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/query"


@dataclass(frozen=True)
class Chosen:
    higher_query: TableQuery
    poverty_query: TableQuery
    births_query: BirthQuery


def _higher_rows(data: StatsData, q: TableQuery) -> list[TableRow]:
    return [r for r in explore(data, q) if r.compared == "Higher"]


def choose(data: StatsData) -> Chosen:
    """The first candidate table (in a fixed order) whose answer has the size and the traps the task needs;
    each task uses a different state."""
    population = {(c.state, c.name): c.population for c in data.counties}

    def small(q: TableQuery, rows: list[TableRow]) -> int:
        code = q.geo.removeprefix("county:")
        return sum(population.get((code, r.geography), 10**9) < ONE_YEAR_MIN_POPULATION for r in rows)

    def fits_higher(q: TableQuery) -> bool:
        rows, higher = explore(data, q), _higher_rows(data, q)
        near_miss = any(r.compared != "Higher" and r.cell.primary > rows[0].cell.primary for r in rows[1:])
        return 3 <= len(higher) <= 12 and small(q, higher) >= 1 and near_miss

    def fits_poverty(q: TableQuery) -> bool:
        counties = explore(data, q)[1:]
        return q.geo != higher_query.geo and len(counties) <= 20 and small(q, counties) >= 2

    higher_query = first_fit((TableQuery("acs5", vintage, f"county:{code}", "T101")
                           for code in STATES for vintage in (2021, 2020, 2022, 2019)), fits_higher, "stats income table")
    poverty_query = first_fit((TableQuery("acs5", 2022, f"county:{code}", "T102") for code in STATES),
                           fits_poverty, "stats poverty table")
    used = {higher_query.geo, poverty_query.geo}
    births_query = first_fit((BirthQuery(group_by="age", state=code, year_from=2018, year_to=2021, totals=False)
                           for code in STATES), lambda q: f"county:{q.state}" not in used, "stats natality query")
    return Chosen(higher_query, poverty_query, births_query)


def tasks(data: StatsData) -> list[dict[str, Any]]:
    c = choose(data)
    hq, pq, bq = c.higher_query, c.poverty_query, c.births_query
    h_state, p_state = STATES[hq.geo.removeprefix("county:")], STATES[pq.geo.removeprefix("county:")]
    higher = sorted(_higher_rows(data, hq), key=lambda r: (-r.cell.primary, r.geography))
    poverty = sorted(explore(data, pq)[1:], key=lambda r: (-r.cell.primary, r.geography))
    births = births_table(data, bq)
    drafts = [
        TaskDraft(
            task_id="offline_stats_001", domain=DOMAIN, family=FAMILY, start_url=EXPLORE_URL,
            constraint_instruction=(
                f"In the table explorer choose survey product '5-year estimates' (not the default 1-year), vintage "
                f"{hq.vintage} (the selector is inside the vintage frame), geography 'All counties in {h_state}' "
                f"and table {hq.table} ({TABLES[hq.table]}), then show the table. List the counties whose "
                f"'Compared with state' column says Higher (significantly above the statewide baseline row), "
                f"with their median household income estimate (not the margin of error)."
            ),
            goal_instruction=(
                f"Which counties of {h_state} had a median household income significantly higher than the "
                f"statewide figure in the {hq.vintage} 5-year estimates, and what was each county's estimate?"
            ),
            columns=("county", "median_income"), rows=[(r.geography, r.cell.values[0][1]) for r in higher],
            header=True, sorting="median income estimate descending (numeric), then county ascending",
            gates=["survey product = 5-year estimates", f"vintage = {hq.vintage} (iframe control)",
                   f"geography = All counties in {h_state} (custom dropdown)", f"table = {hq.table}"],
            data_dependency="The statewide baseline row is the reference each county is compared with.",
            control_dependency="Only counties flagged significantly Higher qualify.",
            inclusion=[f"counties of {h_state} flagged Higher than the state in the {hq.vintage} 5-year table"],
            exclusion=["counties with a higher estimate but no significant difference",
                       "the statewide row", "margins of error", "1-year estimates (omit small counties)"],
            traps=["drift: the default 1-year product silently omits counties under 65,000 residents",
                   "criterion mismatch: a higher estimate is not a significant difference",
                   "in-page misreading: estimate vs margin of error columns"],
            column_notes={"median_income": "integer dollars as shown, no thousands separators"},
            inter_chain=True,
        ),
        TaskDraft(
            task_id="offline_stats_002", domain=DOMAIN, family=FAMILY, start_url=EXPLORE_URL,
            constraint_instruction=(
                f"In the table explorer set survey product '5-year estimates', vintage {pq.vintage} (in the vintage "
                f"frame), geography 'All counties in {p_state}' and table {pq.table} ({TABLES[pq.table]}). For "
                f"every county (not the statewide row) report the Percent estimate of people below poverty — not "
                f"the count and not a margin of error."
            ),
            goal_instruction=(
                f"What share of people lived below the poverty level in each county of {p_state}, per the "
                f"{pq.vintage} 5-year estimates?"
            ),
            columns=("county", "poverty_percent"), rows=[(r.geography, r.cell.values[2][1]) for r in poverty],
            record_separator=";", sorting="poverty percent descending (numeric), then county ascending",
            gates=["survey product = 5-year estimates", f"vintage = {pq.vintage} (iframe control)",
                   f"geography = All counties in {p_state} (custom dropdown)", f"table = {pq.table}"],
            data_dependency="All county rows of the chosen table form the answer.",
            control_dependency="Every county appears only in the 5-year product.",
            inclusion=[f"every county of {p_state}"],
            exclusion=["the statewide baseline row", "Count, Count MOE and Percent MOE columns"],
            traps=["drift: the 1-year product drops the small counties without an error",
                   "in-page misreading: Count / Count MOE / Percent / Percent MOE sit side by side"],
            column_notes={"poverty_percent": "one decimal as shown"},
        ),
        TaskDraft(
            task_id="offline_stats_003", domain=DOMAIN, family=FAMILY, start_url=QUERY_URL,
            constraint_instruction=(
                f"On the natality query form group results by \"Mother's age group\", restrict the state to "
                f"{STATES[bq.state]}, set the years from {bq.year_from} to {bq.year_to}, untick 'Show totals' and "
                f"send the query. Report each age group with its number of births (not the birth rate)."
            ),
            goal_instruction=(
                f"How many births were there in {STATES[bq.state]} in {bq.year_from}-{bq.year_to} combined, "
                f"broken down by the mother's age group?"
            ),
            columns=("age_group", "births"), rows=[(r[0], str(r[1])) for r in births],
            record_separator=",", header=True, sorting="age groups in the form's order (youngest first)",
            gates=["group by = Mother's age group", f"state = {STATES[bq.state]}",
                   f"years {bq.year_from}..{bq.year_to}", "totals off", "POST form submitted"],
            data_dependency="The submitted query's result table supplies the rows.",
            control_dependency="Grouping, state and year range must all be set before sending.",
            inclusion=["one row per mother's age group"],
            exclusion=["the Total row", "birth rates", "other states", "years outside the range"],
            traps=["drift: the form defaults to the latest year only and to grouping by state",
                   "in-page misreading: births vs birth rate", "state only in a POSTed form (URL unchanged)"],
            column_notes={"births": "integer count"},
        ),
        profile_draft(data),
        deaths_draft(data),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


def _explorer_steps(q: TableQuery) -> list[Step]:
    state = STATES[q.geo.removeprefix("county:")]
    return [
        {"tool": "goto", "args": {"url": EXPLORE_URL}, "why": "table explorer"},
        {"tool": "select", "args": {"target": {"label": "Survey product"}, "option": PRODUCTS[q.product]},
         "why": "1-year estimates omit small counties"},
        {"tool": "select", "args": {"target": {"label": "Vintage", "frame": "vintage-frame"},
                                    "option": str(q.vintage)}, "why": "the vintage control lives in an iframe"},
        {"tool": "select", "args": {"target": {"label": "Geography"}, "option": f"All counties in {state}"},
         "why": "county level (custom dropdown)"},
        {"tool": "select", "args": {"target": {"label": "Table"}, "option": f"{q.table} — {TABLES[q.table]}"},
         "why": "table id"},
        {"tool": "click", "args": {"target": {"text": "Show table"}}, "why": "apply the selection"},
        {"tool": "read_table", "args": {"table": 0}, "why": "the estimates table"},
    ]


def walkthroughs(data: StatsData) -> dict[str, list[Step]]:
    c = choose(data)
    bq = c.births_query
    return {
        "offline_stats_001": [
            *_explorer_steps(c.higher_query),
            {"tool": "extract_rows", "args": {
                "columns": {"county": "Geography", "median_income": "Estimate"},
                "where": {"Compared with state": "Higher"}}, "why": "significantly higher counties only"},
            {"tool": "finish", "args": {"order_by": ["median_income desc num", "county"]}, "why": "table read"},
        ],
        "offline_stats_002": [
            *_explorer_steps(c.poverty_query),
            {"tool": "extract_rows", "args": {
                "columns": {"county": "Geography", "poverty_percent": "Percent"}, "where": {"Level": "County"}},
             "why": "county rows, Percent column"},
            {"tool": "finish", "args": {"order_by": ["poverty_percent desc num", "county"]}, "why": "table read"},
        ],
        "offline_stats_003": [
            {"tool": "goto", "args": {"url": QUERY_URL}, "why": "natality query form"},
            {"tool": "select", "args": {"target": {"label": "Group results by"}, "option": "Mother's age group"},
             "why": "default groups by state"},
            {"tool": "select", "args": {"target": {"label": "State"}, "option": STATES[bq.state]}, "why": "state"},
            {"tool": "select", "args": {"target": {"label": "From year"}, "option": str(bq.year_from)},
             "why": "default is the latest year only"},
            {"tool": "select", "args": {"target": {"label": "To year"}, "option": str(bq.year_to)}, "why": "range end"},
            {"tool": "check", "args": {"target": {"label": "Show totals"}, "checked": False}, "why": "no Total row"},
            {"tool": "click", "args": {"target": {"text": "Send"}}, "why": "results appear only after the POST"},
            {"tool": "read_table", "args": {"table": 0}, "why": "the grouped results"},
            {"tool": "extract_rows", "args": {"columns": {"age_group": "Mother's age group", "births": "Births"}},
             "why": "births, not rates"},
            {"tool": "finish", "args": {"order_by": []}, "why": "rows already in the form's order"},
        ],
        "offline_stats_004": profile_walkthrough(data),
        "offline_stats_005": deaths_walkthrough(data),
    }


SITE = Site(
    prefix=PREFIX, title="Official statistics", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
