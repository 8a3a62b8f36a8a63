"""Geography profiles of the statistics site and task 004 (shape 3 of the released census tasks): one page per
state and per county with an educational-attainment and an employment-status table of counts, in a release
(survey product + vintage) that defaults to the 1-year product of the latest vintage. The task compares every
county's shares, computed from the counts, with the statewide baseline of the same 5-year release."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from tasks.offline.registry import PLACEHOLDER_ORIGIN, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites._stats_base import (
    DOMAIN,
    FAMILY,
    ONE_YEAR_MIN_POPULATION,
    PREFIX,
    PRODUCTS,
    STATES,
    VINTAGES,
    County,
    half_tie,
    relative_moe,
)
from tasks.offline.sites._stats_data import (
    BACHELOR,
    EDUCATION,
    EDUCATION_ROWS,
    EMPLOYMENT,
    EMPLOYMENT_ROWS,
    LABOR_FORCE,
    POP_16,
    POP_25,
    UNEMPLOYED,
    Profile,
    ProfileTable,
    StatsData,
)

PROFILES_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/profiles"
PROFILE_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/profile"
METRICS = ("bachelor", "unemployment", "participation")
LABEL_ALL, LABEL_TWO = "STRONG", "MIXED"
MIN_CONDITIONS = 2


def _profile_tables(population: int, shares: dict[str, float], ages: tuple[float, float, float, float],
                    product: str, rng: random.Random) -> Profile:
    rel = relative_moe(population, product)

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


def build_profiles(counties: list[County], rng: random.Random) -> dict[tuple[str, str, int], Profile]:
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
                    shares = {k: level + trends[c.id][k] * (vintage - 2019)
                              + rng.gauss(0, spread * (0.4 if k == "unemployment" else 1.0))
                              for k, level in levels[c.id].items()}
                    shares["unemployment"] = max(1.0, shares["unemployment"])
                    population = round(c.population * (1 + growth[c.id]) ** (vintage - 2019))
                    profile = _profile_tables(population, shares, ages[c.id], product, rng)
                    profiles[(c.id, product, vintage)] = profile
                    members.append(profile)
                profiles[(code, product, vintage)] = _state_profile(members)
    return profiles


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
            if any(half_tie(a, b) for a, b in profile.counts().values()):
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


def profile_draft(data: StatsData) -> TaskDraft:
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


def profile_walkthrough(data: StatsData) -> list[Step]:
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
    return [*steps, *derive_then_finish(sql, "shares, conditions and labels from the counts", "answer = the derived table, in its order")]
