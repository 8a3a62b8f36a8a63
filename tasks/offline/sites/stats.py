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
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair

PREFIX = "stats"
FAMILY = "Official statistics"
DOMAIN = "OFFLINE_CENSUS"
STATES = {"NL": "Northland", "EM": "Eastmarch", "SV": "Southvale", "WR": "Westreach", "LS": "Lakeshore"}
COUNTY_WORDS = ["Ashford", "Briar", "Cedar", "Dunmore", "Elk", "Fallow", "Granite", "Hollis", "Iron", "Juniper",
                "Kestrel", "Larch", "Millbrook", "Nettle", "Oakum", "Pine", "Quarry", "Raven", "Sable", "Thorn",
                "Umber", "Vale", "Willow", "Yarrow"]
VINTAGES = (2019, 2020, 2021, 2022, 2023)
PRODUCTS = {"acs1": "1-year estimates", "acs5": "5-year estimates"}
ONE_YEAR_MIN_POPULATION = 65_000
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


@dataclass(frozen=True)
class County:
    id: str  # e.g. "NL-03"
    state: str  # state code
    name: str
    population: int


@dataclass(frozen=True)
class Cell:
    """One geography's row of one table: the estimates and their margins of error (90%)."""

    values: tuple[tuple[str, str], ...]  # (column header, shown text), in table order
    primary: float  # the value compared with the state
    primary_moe: float


@dataclass(frozen=True)
class StatsData:
    counties: list[County]
    cells: dict[tuple[str, str, int, str], Cell]  # (table, product, vintage, geo id) -> cell
    births: dict[tuple[str, int, str], int]  # (county id, year, age group) -> births
    profiles: dict[tuple[str, str, int], Profile] = field(default_factory=dict)  # (geo id, product, vintage)
    mortality: Mortality = field(default=None)  # type: ignore[assignment]  # set by build

    def counties_in(self, state: str) -> list[County]:
        return sorted((c for c in self.counties if c.state == state), key=lambda c: c.name)


def _relative_moe(population: int, product: str) -> float:
    base = 0.3 / math.sqrt(population / 1000)
    return base * (2.0 if product == "acs1" else 1.0)


def _cells_for(table: str, level: float, population: int, product: str, rng: random.Random) -> Cell:
    rel = _relative_moe(population, product)
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
    profiles = _profiles(counties, random.Random(f"{PREFIX}:{seed}:profiles"))
    mortality = _mortality(counties, random.Random(f"{PREFIX}:{seed}:mortality"))
    return StatsData(counties, cells, births, profiles, mortality)


# ---------------------------------------------------------------- geography profiles (task 004)

EDUCATION, EMPLOYMENT = "Educational attainment", "Employment status"
POP_25, BACHELOR = "Population 25 years and over", "Bachelor's degree or higher"
POP_16, LABOR_FORCE, UNEMPLOYED = "Population 16 years and over", "In labor force", "Unemployed"
EDUCATION_ROWS = (POP_25, "Less than high school graduate", "High school graduate (includes equivalency)",
                  "Some college or associate's degree", BACHELOR)
EMPLOYMENT_ROWS = (POP_16, LABOR_FORCE, "Employed", UNEMPLOYED, "Not in labor force")


@dataclass(frozen=True)
class ProfileTable:
    rows: tuple[tuple[str, int, int], ...]  # (label, estimate, margin of error), in table order

    def estimate(self, label: str) -> int:
        return next(est for name, est, _ in self.rows if name == label)


@dataclass(frozen=True)
class Profile:
    """One geography's profile in one release (product + vintage): two tables of counts."""

    education: ProfileTable
    employment: ProfileTable

    def counts(self) -> dict[str, tuple[int, int]]:
        """metric -> (numerator, denominator) of the three shares task 004 computes."""
        e, m = self.education, self.employment
        return {"bachelor": (e.estimate(BACHELOR), e.estimate(POP_25)),
                "unemployment": (m.estimate(UNEMPLOYED), m.estimate(LABOR_FORCE)),
                "participation": (m.estimate(LABOR_FORCE), m.estimate(POP_16))}

    def shares(self) -> dict[str, float]:
        """Percentages exactly as a SQL `100.0 * a / b` computes them (same double)."""
        return {k: 100 * a / b for k, (a, b) in self.counts().items()}


def _profile_tables(population: int, shares: dict[str, float], ages: tuple[float, float, float, float],
                    product: str, rng: random.Random) -> Profile:
    rel = _relative_moe(population, product)

    def moe(est: int) -> int:
        return max(12, round(est * rel * rng.uniform(0.7, 1.3)))

    pop25 = round(population * ages[0])
    bachelor = round(pop25 * shares["bachelor"] / 100)
    rest = pop25 - bachelor
    less, high = round(rest * ages[2]), round(rest * ages[3])
    pop16 = round(population * ages[1])
    labor = round(pop16 * shares["participation"] / 100)
    unemployed = round(labor * shares["unemployment"] / 100)
    education = (POP_25, pop25), (EDUCATION_ROWS[1], less), (EDUCATION_ROWS[2], high), \
        (EDUCATION_ROWS[3], rest - less - high), (BACHELOR, bachelor)
    employment = (POP_16, pop16), (LABOR_FORCE, labor), (EMPLOYMENT_ROWS[2], labor - unemployed), \
        (UNEMPLOYED, unemployed), (EMPLOYMENT_ROWS[4], pop16 - labor)
    return Profile(ProfileTable(tuple((label, est, moe(est)) for label, est in education)),
                   ProfileTable(tuple((label, est, moe(est)) for label, est in employment)))


def _state_profile(members: list[Profile]) -> Profile:
    """A state's counts are the sums of its counties' (margins combined as a root sum of squares)."""
    def combine(tables: list[ProfileTable]) -> ProfileTable:
        return ProfileTable(tuple(
            (label, sum(t.rows[i][1] for t in tables), round(math.sqrt(sum(t.rows[i][2] ** 2 for t in tables))))
            for i, (label, _, _) in enumerate(tables[0].rows)))

    return Profile(combine([m.education for m in members]), combine([m.employment for m in members]))


def _profiles(counties: list[County], rng: random.Random) -> dict[tuple[str, str, int], Profile]:
    """Per county a level and a trend for each share; each release adds sampling noise (larger for 1-year)."""
    levels = {c.id: {"bachelor": rng.uniform(15, 45), "unemployment": rng.uniform(3.0, 8.5),
                     "participation": rng.uniform(56, 70)} for c in counties}
    trends = {c.id: {"bachelor": rng.gauss(0.3, 0.5), "unemployment": rng.gauss(-0.1, 0.4),
                     "participation": rng.gauss(0, 0.5)} for c in counties}
    ages = {c.id: (rng.uniform(0.64, 0.72), rng.uniform(0.76, 0.83), rng.uniform(0.1, 0.2), rng.uniform(0.45, 0.55))
            for c in counties}
    growth = {c.id: rng.gauss(0.004, 0.01) for c in counties}
    profiles: dict[tuple[str, str, int], Profile] = {}
    for product in PRODUCTS:
        for vintage in VINTAGES:
            for code in STATES:
                members = []
                for c in (c for c in counties if c.state == code):
                    spread = (1.6 if product == "acs1" else 0.7) * min(2.5, math.sqrt(60_000 / c.population))
                    shares = {k: level + trends[c.id][k] * (vintage - 2019) + rng.gauss(0, spread * (0.4 if k == "unemployment" else 1))
                              for k, level in levels[c.id].items()}
                    shares["unemployment"] = max(1.0, shares["unemployment"])
                    population = round(c.population * (1 + growth[c.id]) ** (vintage - 2019))
                    profile = _profile_tables(population, shares, ages[c.id], product, rng)
                    profiles[(c.id, product, vintage)] = profile
                    members.append(profile)
                profiles[(code, product, vintage)] = _state_profile(members)
    return profiles


# ---------------------------------------------------------------- mortality (task 005)

CAUSES = {
    "all": "All causes",
    "heart": "Diseases of heart (I00-I09,I11,I13,I20-I51)",
    "cancer": "Malignant neoplasms (C00-C97)",
    "clrd": "Chronic lower respiratory diseases (J40-J47)",
    "stroke": "Cerebrovascular diseases (I60-I69)",
    "accidents": "Accidents (unintentional injuries) (V01-X59,Y85-Y86)",
    "diabetes": "Diabetes mellitus (E10-E14)",
}
BASE_RATES = {"heart": 205.0, "cancer": 185.0, "clrd": 46.0, "stroke": 44.0, "accidents": 52.0, "diabetes": 27.0}
OTHER_CAUSES_RATE = 330.0
MORTALITY_YEARS = tuple(range(2018, 2024))
MEASURES = {"deaths": "Deaths", "crude": "Crude rate per 100,000", "adjusted": "Age-adjusted rate per 100,000"}
DEATH_GROUP_BY = {"state": "State", "county": "County", "cause": "Cause of death"}
SUPPRESSED, UNRELIABLE = "Suppressed", "Unreliable"
SUPPRESSED_MAX, RELIABLE_MIN = 9, 20  # counts 1-9 are withheld; rates on fewer than 20 deaths are unreliable


@dataclass(frozen=True)
class Mortality:
    deaths: dict[tuple[str, int, str], int]  # (county id, year, cause key) -> deaths (specific causes)
    population: dict[tuple[str, int], int]  # (county id, year) -> residents
    age_factor: dict[str, float]  # county id -> age-adjusted / crude rate

    def count(self, county: str, year: int, cause: str) -> int:
        if cause == "all":
            return sum(self.deaths[(county, year, k)] for k in (*BASE_RATES, "other"))
        return self.deaths[(county, year, cause)]


def _mortality(counties: list[County], rng: random.Random) -> Mortality:
    """Deaths around a county-specific rate with its own yearly trend (Poisson-like noise); populations grow
    or shrink by county, so a count's change and a rate's change differ."""
    deaths: dict[tuple[str, int, str], int] = {}
    population: dict[tuple[str, int], int] = {}
    for c in counties:
        growth = rng.gauss(0.0, 0.02)
        factors = {k: rng.uniform(0.7, 1.4) for k in (*BASE_RATES, "other")}
        trends = {k: rng.gauss(0.0, 0.02) for k in (*BASE_RATES, "other")}
        for year in MORTALITY_YEARS:
            residents = round(c.population * (1 + growth) ** (year - 2018))
            population[(c.id, year)] = residents
            for cause in (*BASE_RATES, "other"):
                mean = residents * BASE_RATES.get(cause, OTHER_CAUSES_RATE) / 100_000 * factors[cause] \
                    * (1 + trends[cause]) ** (year - 2018)
                deaths[(c.id, year, cause)] = max(0, round(rng.gauss(mean, math.sqrt(mean) + 0.3)))
    return Mortality(deaths, population, {c.id: round(rng.uniform(0.82, 1.18), 3) for c in counties})


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


# ---------------------------------------------------------------- profile pages and mortality query


def release_of(params: dict[str, str]) -> tuple[str, int]:
    """(product, vintage) of a profile page: the 1-year product of the latest vintage unless chosen."""
    vintage = params.get("vintage", "")
    return (params["product"] if params.get("product") in PRODUCTS else "acs1",
            int(vintage) if vintage.isdigit() and int(vintage) in VINTAGES else VINTAGES[-1])


def release_title(product: str, vintage: int) -> str:
    first = vintage - 4 if product == "acs5" else vintage
    years = f"{first}-{vintage}" if first != vintage else str(vintage)
    return f"American Community Survey {years} {PRODUCTS[product]}"


@dataclass(frozen=True)
class DeathQuery:
    group_by: str = "state"
    state: str = ""
    year: int = MORTALITY_YEARS[-1]
    cause: str = "all"
    measure: str = "adjusted"  # the form's default measure is a rate
    totals: bool = True


def measure_text(deaths: int, residents: int, factor: float, measure: str) -> str:
    """A result cell as the site shows it: counts of 1-9 suppressed, rates on < 20 deaths flagged."""
    if 1 <= deaths <= SUPPRESSED_MAX:
        return SUPPRESSED
    if measure == "deaths":
        return str(deaths)
    rate = f"{deaths / residents * 100_000 * (factor if measure == 'adjusted' else 1.0):.1f}"
    return f"{rate} ({UNRELIABLE})" if deaths < RELIABLE_MIN else rate


def mortality_table(data: StatsData, q: DeathQuery) -> list[tuple[str, str, str]]:
    """(group label, measure cell, population): states in the site's order, counties as '<name>, <state code>'
    alphabetically within their state."""
    m = data.mortality
    order = list(STATES)
    members = sorted((c for c in data.counties if not q.state or c.state == q.state),
                     key=lambda c: (order.index(c.state), c.name))
    groups: dict[str, list[float]] = {}  # label -> [deaths, residents, residents x age factor]

    def add(label: str, deaths: int, residents: int, factor: float) -> None:
        acc = groups.setdefault(label, [0, 0, 0.0])
        acc[0] += deaths
        acc[1] += residents
        acc[2] += residents * factor

    for c in members:
        residents, factor = m.population[(c.id, q.year)], m.age_factor[c.id]
        if q.group_by == "cause":
            for key in (list(BASE_RATES) if q.cause == "all" else [q.cause]):
                add(CAUSES[key], m.count(c.id, q.year, key), residents, factor)
        else:
            label = STATES[c.state] if q.group_by == "state" else f"{c.name}, {c.state}"
            add(label, m.count(c.id, q.year, q.cause), residents, factor)
    if q.group_by == "cause":  # every cause row covers the same residents
        people = sum(m.population[(c.id, q.year)] for c in members)
        weighted = sum(m.population[(c.id, q.year)] * m.age_factor[c.id] for c in members)
        for acc in groups.values():
            acc[1], acc[2] = people, weighted

    def row(label: str, acc: list[float]) -> tuple[str, str, str]:
        deaths, residents = int(acc[0]), int(acc[1])
        return label, measure_text(deaths, residents, acc[2] / max(1, residents), q.measure), str(residents)

    rows = [row(label, acc) for label, acc in groups.items()]
    if q.totals and rows:
        total = [sum(m.count(c.id, q.year, q.cause) for c in members),
                 sum(m.population[(c.id, q.year)] for c in members),
                 sum(m.population[(c.id, q.year)] * m.age_factor[c.id] for c in members)]
        rows.append(row("Total", total))
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
            form = await request.form()
            try:
                q = DeathQuery(
                    group_by=str(form.get("group_by", "state")), state=str(form.get("state", "")),
                    year=int(str(form.get("year", MORTALITY_YEARS[-1]))), cause=str(form.get("cause", "all")),
                    measure=str(form.get("measure", "adjusted")), totals=form.get("totals") == "on",
                )
            except ValueError:
                error = "The year must be a number."
            if not error and (q.group_by not in DEATH_GROUP_BY or (q.state and q.state not in STATES)
                              or q.year not in MORTALITY_YEARS or q.cause not in CAUSES
                              or q.measure not in MEASURES):
                error = "Unknown grouping, state, year, cause or measure."
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
PROFILES_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/profiles"
PROFILE_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/profile"
MORTALITY_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/mortality"


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
        _profile_draft(data),
        _deaths_draft(data),
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
        "offline_stats_004": _profile_walkthrough(data),
        "offline_stats_005": _deaths_walkthrough(data),
    }


# ---------------------------------------------------------------- derived tasks 004 (profiles) and 005 (mortality)

METRICS = ("bachelor", "unemployment", "participation")
LABEL_ALL, LABEL_TWO = "STRONG", "MIXED"
MIN_CONDITIONS = 2
CHANGE_THRESHOLD = 20.0  # percent, either direction


def _half_tie(a: int, b: int) -> bool:
    """100*a/b lies exactly halfway between two one-decimal values (rounding conventions would disagree)."""
    return (2000 * a) % b == 0 and (2000 * a // b) % 2 == 1


@dataclass(frozen=True)
class ProfilePlan:
    state: str
    vintage: int


@dataclass(frozen=True)
class CountyVerdict:
    county: County
    shares: dict[str, float]
    met: int  # conditions met out of three


def profile_verdicts(data: StatsData, state: str, product: str, vintage: int) -> list[CountyVerdict]:
    """Every county published in the release, with its three shares and how many beat the state's:
    bachelor's share higher, unemployment rate lower, labor force participation higher."""
    base = data.profiles[(state, product, vintage)].shares()
    out = []
    for c in data.counties_in(state):
        if product == "acs1" and c.population < ONE_YEAR_MIN_POPULATION:
            continue
        own = data.profiles[(c.id, product, vintage)].shares()
        met = sum((own["bachelor"] > base["bachelor"], own["unemployment"] < base["unemployment"],
                   own["participation"] > base["participation"]))
        out.append(CountyVerdict(c, own, met))
    return out


def profile_rows(data: StatsData, state: str, vintage: int, product: str = "acs5") -> list[tuple[str, ...]]:
    kept = sorted((v for v in profile_verdicts(data, state, product, vintage) if v.met >= MIN_CONDITIONS),
                  key=lambda v: (-v.met, v.county.name))
    return [(v.county.name, *(f"{v.shares[k]:.1f}" for k in METRICS), str(v.met),
             LABEL_ALL if v.met == len(METRICS) else LABEL_TWO) for v in kept]


def choose_profile(data: StatsData) -> ProfilePlan:
    """A state and a 5-year vintage whose answer has both labels, a county meeting one condition fewer than
    needed, a kept county without a 1-year profile, and an answer the default release would change."""
    def clean(plan: ProfilePlan) -> bool:
        geos = [plan.state, *(c.id for c in data.counties_in(plan.state))]
        base = data.profiles[(plan.state, "acs5", plan.vintage)].shares()
        for geo in geos:
            profile = data.profiles[(geo, "acs5", plan.vintage)]
            if any(_half_tie(a, b) for a, b in profile.counts().values()):
                return False
            if geo != plan.state and any(f"{v:.1f}" == f"{base[k]:.1f}" for k, v in profile.shares().items()):
                return False
        return True

    def fits(plan: ProfilePlan) -> bool:
        if len(data.counties_in(plan.state)) > 11:
            return False  # every county page is read: keep the walk within the step budget
        verdicts = profile_verdicts(data, plan.state, "acs5", plan.vintage)
        rows = profile_rows(data, plan.state, plan.vintage)
        small = {c.name for c in data.counties_in(plan.state) if c.population < ONE_YEAR_MIN_POPULATION}
        return (3 <= len(rows) <= 10 and any(v.met == MIN_CONDITIONS - 1 for v in verdicts)
                and {LABEL_ALL, LABEL_TWO} <= {r[-1] for r in rows} and bool(small & {r[0] for r in rows})
                and profile_rows(data, plan.state, plan.vintage, "acs1") != rows
                and profile_rows(data, plan.state, VINTAGES[-1]) != rows and clean(plan))

    return first_fit((ProfilePlan(code, vintage) for vintage in (2022, 2021, 2020) for code in STATES), fits,
                     "stats profile comparison")


def _profile_draft(data: StatsData) -> TaskDraft:
    plan = choose_profile(data)
    state, release = STATES[plan.state], release_title("acs5", plan.vintage)
    years = f"{plan.vintage - 4}-{plan.vintage}"
    rule = (f"bachelor_pct = {BACHELOR} / {POP_25} x 100; unemployment_pct = {UNEMPLOYED} / {LABOR_FORCE} x 100; "
            f"participation_pct = {LABOR_FORCE} / {POP_16} x 100")
    return TaskDraft(
        task_id="offline_stats_004", domain=DOMAIN, family=FAMILY, start_url=PROFILES_URL,
        constraint_instruction=(
            f"In the geography profiles open {state}'s profile and set Survey product '5-year estimates' and "
            f"Vintage {plan.vintage} (profiles open on the 1-year estimates of the latest vintage, and every profile "
            f"reached by a link opens on that default again); this statewide profile of the {release} is the "
            f"baseline. Then open the profile of every county listed under 'Counties in {state}' in the same "
            f"release. From the estimates (counts, not margins of error) of the '{EDUCATION}' and '{EMPLOYMENT}' "
            f"tables compute, for each county and for the state: {rule}. A county meets a condition when its "
            f"unrounded percentage beats the state's: bachelor_pct higher, unemployment_pct lower, "
            f"participation_pct higher. Keep the counties meeting at least {MIN_CONDITIONS} of the 3 conditions. "
            f"Report county, the three percentages rounded to one decimal, conditions_met (2 or 3) and label "
            f"{LABEL_ALL} when all 3 are met, else {LABEL_TWO}."
        ),
        goal_instruction=(
            f"According to the {years} 5-year American Community Survey estimates, which counties of {state} do "
            f"better than the state as a whole on at least two of these three: a higher share of adults 25 and over "
            f"with a bachelor's degree or higher, a lower unemployment rate, a higher labor force participation "
            f"rate (people 16 and over)? For each give the three percentages, how many of the three it beats the "
            f"state on, and {LABEL_ALL} if all three, else {LABEL_TWO}."
        ),
        columns=("county", "bachelor_pct", "unemployment_pct", "participation_pct", "conditions_met", "label"),
        rows=profile_rows(data, plan.state, plan.vintage),
        header=True,
        sorting="conditions_met descending, then county ascending",
        gates=["survey product = 5-year estimates (default 1-year)", f"vintage = {plan.vintage} (default "
               f"{VINTAGES[-1]})", f"the same release on the {state} statewide profile and on every county profile"],
        data_dependency=("The statewide profile lists the counties and gives the baseline shares; each county's "
                         "own profile gives its counts in two tables; the shares, the conditions and the labels "
                         "are computed from those counts."),
        control_dependency=("The release (product and vintage) must be set on the state page and kept on every "
                            "county page: a profile reached by a link opens on the 1-year product of the latest "
                            "vintage, where small counties have no profile at all."),
        inclusion=[f"counties of {state} meeting at least {MIN_CONDITIONS} of the 3 conditions in the {release}"],
        exclusion=["counties meeting fewer conditions", "the state itself", "margins of error",
                   "1-year estimates and other vintages"],
        traps=[f"near-miss: a county meets exactly {MIN_CONDITIONS - 1} of the 3 conditions",
               f"drift: every profile reached by a link reopens on the 1-year estimates of {VINTAGES[-1]}; a kept "
               f"county has no 1-year profile, and the 1-year or {VINTAGES[-1]} figures change the answer",
               "criterion mismatch: the tables give counts; shares must be computed against the right denominator "
               f"({POP_25}, {LABOR_FORCE}, {POP_16}), and 'Not in labor force' sits next to '{LABOR_FORCE}'",
               "in-page misreading: estimate vs margin of error columns"],
        column_notes={
            "bachelor_pct": f"{BACHELOR} / {POP_25} x 100, one decimal",
            "unemployment_pct": f"{UNEMPLOYED} / {LABOR_FORCE} x 100, one decimal",
            "participation_pct": f"{LABOR_FORCE} / {POP_16} x 100, one decimal",
            "conditions_met": "how many of the 3 unrounded shares beat the state's (bachelor higher, unemployment "
                              "lower, participation higher); kept only if >= 2",
            "label": f"{LABEL_ALL} if conditions_met = 3, else {LABEL_TWO}",
        },
        inter_chain=True,
        shape="derived",
        mirrors=("CENSUS shape 3: 5-year product, all counties + statewide baseline of the same release, two "
                 "tables per county, percentages computed from cells and compared with the baseline, a rule-based "
                 "label, counties meeting N of M conditions"),
        phases=(f"state profile of {state}, 5-year {plan.vintage}: baseline counts and the county list",
                "each county's profile in the same release: the two tables of counts",
                "derive: shares, conditions met against the baseline, keep >= 2 of 3, label"),
        derived=("bachelor_pct", "unemployment_pct", "participation_pct", "conditions_met", "label"),
    )


def _profile_walkthrough(data: StatsData) -> list[Step]:
    plan = choose_profile(data)
    state = STATES[plan.state]
    columns = {"geo": "fact:Geography", "level": "fact:Geography level", "item": "Label", "estimate": "Estimate"}
    tables = [{"tool": "extract_rows", "args": {"into": into, "section": title, "columns": columns},
               "why": f"{title} counts"} for into, title in (("edu", EDUCATION), ("emp", EMPLOYMENT))]
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": PROFILES_URL}, "why": "geography profiles"},
        {"tool": "click", "args": {"target": {"text": state}}, "why": "the statewide profile lists the counties"},
        {"tool": "select", "args": {"target": {"label": "Survey product"}, "option": PRODUCTS["acs5"]},
         "why": "profiles open on the 1-year product"},
        {"tool": "select", "args": {"target": {"label": "Vintage"}, "option": str(plan.vintage)},
         "why": "the release the task names"},
        {"tool": "click", "args": {"target": {"text": "Update profile"}}, "why": "apply the release"},
        *tables,
        {"tool": "extract_rows", "args": {"into": "counties", "section": f"Counties in {state}",
                                          "columns": {"county": "County"}}, "why": "the candidate counties"},
    ]
    for c in data.counties_in(plan.state):
        steps.append({"tool": "goto", "args": {"url": f"{PROFILE_URL}/{c.id}?product=acs5&vintage={plan.vintage}"},
                      "why": f"{c.name} in the same release (a plain link would reset it)"})
        steps += tables
    share = "100.0 * max(CASE WHEN item = '{a}' THEN v END) / max(CASE WHEN item = '{b}' THEN v END)"
    sql = (
        "WITH e AS (SELECT geo, level, item, num(estimate) AS v FROM edu "
        "UNION ALL SELECT geo, level, item, num(estimate) FROM emp), "
        "p AS (SELECT geo, any_value(level) AS level, "
        + share.format(a=BACHELOR.replace("'", "''"), b=POP_25) + " AS bachelor, "
        + share.format(a=UNEMPLOYED, b=LABOR_FORCE) + " AS unemployment, "
        + share.format(a=LABOR_FORCE, b=POP_16) + " AS participation FROM e GROUP BY geo), "
        "s AS (SELECT * FROM p WHERE level = 'State'), "
        "c AS (SELECT p.geo AS county, p.bachelor, p.unemployment, p.participation, "
        "CAST(p.bachelor > s.bachelor AS INTEGER) + CAST(p.unemployment < s.unemployment AS INTEGER) "
        "+ CAST(p.participation > s.participation AS INTEGER) AS met "
        "FROM p CROSS JOIN s WHERE p.level = 'County' AND p.geo IN (SELECT county FROM counties)) "
        "SELECT county, printf('%.1f', bachelor) AS bachelor_pct, printf('%.1f', unemployment) AS unemployment_pct, "
        "printf('%.1f', participation) AS participation_pct, CAST(met AS VARCHAR) AS conditions_met, "
        f"CASE WHEN met = 3 THEN '{LABEL_ALL}' ELSE '{LABEL_TWO}' END AS label "
        f"FROM c WHERE met >= {MIN_CONDITIONS} ORDER BY met DESC, county"
    )
    return [*steps, {"tool": "derive", "args": {"sql": sql}, "why": "shares, conditions and labels from the counts"},
            {"tool": "finish", "args": {}, "why": "answer = the derived table, in its order"}]


@dataclass(frozen=True)
class DeathPlan:
    state: str
    cause: str
    years: tuple[int, int]


@dataclass(frozen=True)
class CountyChange:
    county: str  # as the results table labels it
    first: str  # cells as shown (a count or the suppression marker)
    second: str
    change: float | None  # percent; None when a cell is suppressed


def _number(cell: str) -> float:
    return float(cell.split()[0])


def county_changes(data: StatsData, plan: DeathPlan, measure: str = "deaths") -> list[CountyChange]:
    """Per county row of the two queries (one per year), in the results table's order."""
    first, second = (mortality_table(data, DeathQuery("county", plan.state, year, plan.cause, measure, False))
                     for year in plan.years)
    out = []
    for (label, a, _), (label_b, b, _) in zip(first, second, strict=True):
        assert label == label_b
        change = None if SUPPRESSED in (a, b) else 100 * (_number(b) - _number(a)) / _number(a) \
            if measure != "deaths" else 100 * (int(b) - int(a)) / int(a) if int(a) else math.inf
        out.append(CountyChange(label, a, b, change))
    return out


def death_rows(data: StatsData, plan: DeathPlan, measure: str = "deaths") -> list[tuple[str, ...]]:
    rows = []
    for row in county_changes(data, plan, measure):
        if row.change is None:
            rows.append((row.county, row.first, row.second, SUPPRESSED, SUPPRESSED))
        elif abs(row.change) >= CHANGE_THRESHOLD:
            rows.append((row.county, row.first, row.second, f"{row.change:.1f}", "UP" if row.change > 0 else "DOWN"))
    return rows


def choose_deaths(data: StatsData) -> DeathPlan:
    """A state, cause and pair of years whose answer mixes rises, falls and suppressed counties, with a county
    just under the threshold and a selection the default (rate) measure would change."""
    def fits(plan: DeathPlan) -> bool:
        changes = county_changes(data, plan)
        numeric = [c for c in changes if c.change is not None]
        rows = death_rows(data, plan)
        if any(c.first == "0" for c in numeric) or not 3 <= len(rows) <= min(12, 0.75 * len(changes)):
            return False
        if any(_half_tie(abs(int(c.second) - int(c.first)), int(c.first)) for c in numeric):
            return False
        sizes = [abs(c.change) for c in numeric if c.change is not None]
        rate_rows = {r[0] for r in death_rows(data, plan, "adjusted")}
        return (1 <= sum(r[3] == SUPPRESSED for r in rows) < len(rows) - 1
                and {"UP", "DOWN"} <= {r[4] for r in rows}
                and any(0.75 * CHANGE_THRESHOLD <= x < CHANGE_THRESHOLD - 0.05 for x in sizes)
                and not any(CHANGE_THRESHOLD - 0.05 <= x < CHANGE_THRESHOLD + 0.05 for x in sizes)
                and rate_rows != {r[0] for r in rows})

    return first_fit((DeathPlan(code, cause, years) for cause in ("clrd", "stroke", "diabetes", "accidents")
                      for years in ((2019, 2023), (2018, 2022), (2019, 2022), (2020, 2023)) for code in STATES),
                     fits, "stats mortality comparison")


def _deaths_draft(data: StatsData) -> TaskDraft:
    plan = choose_deaths(data)
    (y1, y2), state, cause = plan.years, STATES[plan.state], CAUSES[plan.cause]
    short = cause.split(" (")[0]
    return TaskDraft(
        task_id="offline_stats_005", domain=DOMAIN, family=FAMILY, start_url=MORTALITY_URL,
        constraint_instruction=(
            f"On the mortality query form group results by County, choose state {state}, cause of death '{cause}' "
            f"and measure Deaths (the form's default measure is the age-adjusted rate), and send the query once "
            f"with year {y1} and once with year {y2} (one year per query). Per county take the Deaths cell of each "
            f"year as shown: the site shows counts of 1-9 as '{SUPPRESSED}'; report that marker as it is. "
            f"change_pct = (deaths {y2} - deaths {y1}) / deaths {y1} x 100, rounded to one decimal; direction UP if "
            f"it is positive, DOWN if negative. When either year's cell is {SUPPRESSED}, write {SUPPRESSED} as "
            f"change_pct and as direction. Keep the counties whose unrounded change is at least "
            f"{CHANGE_THRESHOLD:.0f} percent in either direction, plus every county with a {SUPPRESSED} cell; leave "
            f"out the Total row. Report county (as the results table labels it), deaths_{y1}, deaths_{y2}, "
            f"change_pct and direction."
        ),
        goal_instruction=(
            f"In which counties of {state} did the number of deaths from {short.lower()} change by "
            f"{CHANGE_THRESHOLD:.0f} percent or more (up or down) between {y1} and {y2}? Also list the counties where "
            f"either year's number is withheld for confidentiality, marked the way the source marks it (that marker "
            f"also as their change and direction). Give both years' numbers of deaths, the percent change and UP or "
            f"DOWN."
        ),
        columns=("county", f"deaths_{y1}", f"deaths_{y2}", "change_pct", "direction"),
        rows=death_rows(data, plan),
        record_separator=";",
        sorting="counties in the results table's order (alphabetical)",
        gates=["group by = County (default State)", f"state = {state}", f"cause of death = {short}",
               "measure = Deaths (default: age-adjusted rate)", f"year = {y1}, then year = {y2} (default "
               f"{MORTALITY_YEARS[-1]}; one POSTed query each)"],
        data_dependency=(f"The {y1} query gives each county's first count and the county rows; the {y2} query the "
                         f"second; the change, the direction and the selection are computed from the pair."),
        control_dependency=("Grouping, state, cause and measure must be set before sending; the year is changed "
                            "between the two queries, which are POSTed (the URL never changes)."),
        inclusion=[f"counties of {state} whose count of {short.lower()} deaths changed by at least "
                   f"{CHANGE_THRESHOLD:.0f}% from {y1} to {y2}", f"counties with a {SUPPRESSED} count in either year"],
        exclusion=["the Total row", f"counties changing by less than {CHANGE_THRESHOLD:.0f}%", "rates instead of counts",
                   "other causes of death"],
        traps=[f"near-miss: a county changes by just under {CHANGE_THRESHOLD:.0f}%",
               "criterion mismatch: the default measure is the age-adjusted rate; the change in rates selects other "
               "counties than the change in counts",
               f"suppression: counts of 1-9 are shown as '{SUPPRESSED}' and must be reported with that marker",
               f"drift: the form opens on all causes, grouped by state, for {MORTALITY_YEARS[-1]} only; a second "
               f"query that forgets a control mixes states"],
        column_notes={
            f"deaths_{y1}": f"Deaths cell of the {y1} query as shown (integer or {SUPPRESSED})",
            f"deaths_{y2}": f"Deaths cell of the {y2} query as shown (integer or {SUPPRESSED})",
            "change_pct": f"(deaths_{y2} - deaths_{y1}) / deaths_{y1} x 100, one decimal, minus sign for decreases; "
                          f"{SUPPRESSED} if either count is",
            "direction": f"UP if change_pct > 0, DOWN if < 0; {SUPPRESSED} if either count is",
        },
        inter_chain=True,
        shape="derived",
        mirrors=("CDC WONDER shape 4: query form grouped by one variable for two years, relative change between "
                 "years per group, rate vs count trap, suppressed cells marked as the site marks them"),
        phases=(f"query: county x {short}, Deaths, {y1} -> first counts",
                f"the same query with year {y2} -> second counts",
                "derive: relative change, direction, threshold selection, suppression carried through"),
        derived=("change_pct", "direction"),
    )


def _deaths_walkthrough(data: StatsData) -> list[Step]:
    plan = choose_deaths(data)
    (y1, y2) = plan.years
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": MORTALITY_URL}, "why": "mortality query form"},
        {"tool": "select", "args": {"target": {"label": "Group results by"}, "option": DEATH_GROUP_BY["county"]},
         "why": "default groups by state"},
        {"tool": "select", "args": {"target": {"label": "Measure"}, "option": MEASURES["deaths"]},
         "why": "counts, not the default age-adjusted rate"},
        {"tool": "select", "args": {"target": {"label": "State"}, "option": STATES[plan.state]}, "why": "state"},
        {"tool": "select", "args": {"target": {"label": "Cause of death"}, "option": CAUSES[plan.cause]},
         "why": "the cause (default all causes)"},
    ]
    for year, into in ((y1, "first"), (y2, "second")):
        steps += [
            {"tool": "select", "args": {"target": {"label": "Year"}, "option": str(year)}, "why": f"year {year}"},
            {"tool": "click", "args": {"target": {"text": "Send"}}, "why": "results appear only after the POST"},
            {"tool": "read_table", "args": {"table": 0}, "why": f"the {year} results"},
            {"tool": "extract_rows", "args": {"into": into, "columns": {"county": "County", "deaths": "Deaths"}},
             "why": f"deaths per county in {year}"},
        ]
    sql = (
        "WITH j AS (SELECT a.county, a.deaths AS d1, b.deaths AS d2, "
        f"CASE WHEN a.deaths = '{SUPPRESSED}' OR b.deaths = '{SUPPRESSED}' THEN NULL "
        "ELSE 100.0 * (num(b.deaths) - num(a.deaths)) / num(a.deaths) END AS change "
        "FROM first a JOIN second b ON a.county = b.county WHERE a.county <> 'Total') "
        f"SELECT county, d1 AS deaths_{y1}, d2 AS deaths_{y2}, "
        f"CASE WHEN change IS NULL THEN '{SUPPRESSED}' ELSE printf('%.1f', change) END AS change_pct, "
        f"CASE WHEN change IS NULL THEN '{SUPPRESSED}' WHEN change > 0 THEN 'UP' ELSE 'DOWN' END AS direction "
        f"FROM j WHERE change IS NULL OR abs(change) >= {CHANGE_THRESHOLD} ORDER BY county"
    )
    return [*steps, {"tool": "derive", "args": {"sql": sql}, "why": "change, direction and selection"},
            {"tool": "finish", "args": {}, "why": "answer = the derived table, in the results' order"}]


SITE = Site(
    prefix=PREFIX, title="Official statistics", family=FAMILY, build=build, routes=routes, tasks=tasks,
    walkthroughs=walkthroughs,
)
