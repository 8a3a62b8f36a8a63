"""The mortality query form of the statistics site (CDC WONDER style) and task 005 (shape 4 of the released
tasks): grouped results for one year per POSTed query, a default measure that is a rate, counts of 1-9 shown
as "Suppressed"; the task reads two years and computes the relative change per county."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites._stats_base import DOMAIN, FAMILY, PREFIX, STATES, County, half_tie
from tasks.offline.sites._stats_data import BASE_RATES, Mortality, StatsData

MORTALITY_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/mortality"
CHANGE_THRESHOLD = 20.0  # percent, either direction

CAUSES = {
    "all": "All causes",
    "heart": "Diseases of heart (I00-I09,I11,I13,I20-I51)",
    "cancer": "Malignant neoplasms (C00-C97)",
    "clrd": "Chronic lower respiratory diseases (J40-J47)",
    "stroke": "Cerebrovascular diseases (I60-I69)",
    "accidents": "Accidents (unintentional injuries) (V01-X59,Y85-Y86)",
    "diabetes": "Diabetes mellitus (E10-E14)",
}
OTHER_CAUSES_RATE = 330.0
MORTALITY_YEARS = tuple(range(2018, 2024))
MEASURES = {"deaths": "Deaths", "crude": "Crude rate per 100,000", "adjusted": "Age-adjusted rate per 100,000"}
DEATH_GROUP_BY = {"state": "State", "county": "County", "cause": "Cause of death"}
SUPPRESSED, UNRELIABLE = "Suppressed", "Unreliable"
SUPPRESSED_MAX, RELIABLE_MIN = 9, 20  # counts 1-9 are withheld; rates on fewer than 20 deaths are unreliable


def build_mortality(counties: list[County], rng: random.Random) -> Mortality:
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


@dataclass(frozen=True)
class DeathQuery:
    group_by: str = "state"
    state: str = ""
    year: int = MORTALITY_YEARS[-1]
    cause: str = "all"
    measure: str = "adjusted"  # the form's default measure is a rate
    totals: bool = True

    @classmethod
    def from_form(cls, form: Mapping[str, Any]) -> tuple[DeathQuery, str]:
        """The POSTed query and an error message ('' when the query is valid)."""
        year = str(form.get("year", MORTALITY_YEARS[-1]))
        if not year.isdigit():
            return cls(), "The year must be a number."
        q = cls(group_by=str(form.get("group_by", "state")), state=str(form.get("state", "")), year=int(year),
                cause=str(form.get("cause", "all")), measure=str(form.get("measure", "adjusted")),
                totals=form.get("totals") == "on")
        if q.group_by not in DEATH_GROUP_BY or (q.state and q.state not in STATES) or q.year not in MORTALITY_YEARS \
                or q.cause not in CAUSES or q.measure not in MEASURES:
            return q, "Unknown grouping, state, year, cause or measure."
        return q, ""


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
        if label != label_b:
            raise ValueError(f"stats: the two years list different groups ({label!r} vs {label_b!r})")
        if SUPPRESSED in (a, b):
            change = None
        elif measure == "deaths":  # integer arithmetic: the same double as SQL's 100.0 * (b - a) / a
            change = 100 * (int(b) - int(a)) / int(a) if int(a) else math.inf
        else:
            change = 100 * (_number(b) - _number(a)) / _number(a)
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
        if any(half_tie(abs(int(c.second) - int(c.first)), int(c.first)) for c in numeric):
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


def deaths_draft(data: StatsData) -> TaskDraft:
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
               f"drift: the form opens grouped by state, on all causes, the age-adjusted rate and {MORTALITY_YEARS[-1]}; "
               "opening it again (a link, a reload) resets every control and drops the results"],
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


def deaths_walkthrough(data: StatsData) -> list[Step]:
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
    return [*steps, *derive_then_finish(sql, "change, direction and selection", "answer = the derived table, in the results' order")]
