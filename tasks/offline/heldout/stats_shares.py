"""Held-out stats task 2: one cause's share of all deaths per state in one past year (two POSTed queries).

New against the suite and the first held-out set: the grouping kept at its default (State), the measure
switched to death counts, a past year, and two queries (one cause, then all causes) joined per state into a
share a/b that orders the states; the Total row of each query is not a state.
"""

from __future__ import annotations

from fractions import Fraction

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites._stats_base import DOMAIN, FAMILY, PREFIX
from tasks.offline.sites._stats_mortality import (
    CAUSES,
    DEATH_GROUP_BY,
    MEASURES,
    MORTALITY_URL,
    MORTALITY_YEARS,
    DeathQuery,
    mortality_table,
)

TASK_ID = "offline_heldout_stats_002"


def _counts(data: object, cause: str, year: int) -> dict[str, int]:
    table = mortality_table(data, DeathQuery("state", "", year, cause, "deaths", False))  # type: ignore[arg-type]
    return {label: int(value) for label, value, _ in table}


def rows_of(data: object, cause: str, year: int) -> list[tuple[str, ...]]:
    part, whole = _counts(data, cause, year), _counts(data, "all", year)
    ordered = sorted(part, key=lambda s: (-Fraction(part[s], whole[s]), s))
    return [(s, str(part[s]), str(whole[s]), f"{part[s]}/{whole[s]}") for s in ordered]


def choose_query(data: object) -> tuple[str, int]:
    """A cause and a past year whose state order by share differs from the order by count and from the
    default year's order; no tied shares."""
    def fits(pick: tuple[str, int]) -> bool:
        cause, year = pick
        rows = rows_of(data, cause, year)
        by_count = sorted(rows, key=lambda r: (-int(r[1]), r[0]))
        latest = rows_of(data, cause, MORTALITY_YEARS[-1])
        shares = [Fraction(int(r[1]), int(r[2])) for r in rows]
        return (rows != by_count and [r[0] for r in rows] != [r[0] for r in latest]
                and len(set(shares)) == len(shares) and all(int(r[1]) > 9 for r in rows))

    candidates = ((cause, year) for year in (2019, 2021, 2020, 2018) for cause in ("stroke", "diabetes", "accidents",
                                                                                   "cancer", "heart"))
    return first_fit(candidates, fits, "stats held-out cause share")


def draft(data: object) -> TaskDraft:
    cause, year = choose_query(data)
    label = CAUSES[cause]
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=MORTALITY_URL,
        constraint_instruction=(
            f"In the statistics site's mortality query form, keep the grouping on '{DEATH_GROUP_BY['state']}' and "
            f"the state on all states, choose year {year} (default: {MORTALITY_YEARS[-1]}) and the measure "
            f"'{MEASURES['deaths']}' (default: the age-adjusted rate). Send it once with cause of death '{label}' "
            f"and once with 'All causes'. Per state (not the Total row) report the deaths from that cause, the "
            f"deaths from all causes and share = cause deaths/all deaths as a/b with both counts as shown."
        ),
        goal_instruction=(
            f"In {year}, what share of all deaths in each state was due to {label}? Give the state, both death "
            f"counts and the share as deaths from that cause/deaths from all causes, largest share first."
        ),
        columns=("state", "cause_deaths", "all_deaths", "share"),
        rows=rows_of(data, cause, year),
        sorting="share descending (as a number), then state ascending",
        gates=[f"group by = {DEATH_GROUP_BY['state']} (the default, kept)", f"year = {year} (default: "
               f"{MORTALITY_YEARS[-1]})", f"measure = {MEASURES['deaths']} (default: age-adjusted rate)",
               f"cause of death = {label}, then All causes; POST form submitted twice"],
        data_dependency="Two submitted queries (one cause, all causes) supply the two counts per state; the share "
                        "and the order are computed from them.",
        control_dependency="The death-count criterion decides the measure; the year criterion the year; the "
                           "share criterion requires a second query with All causes.",
        inclusion=["every state listed", f"deaths from {label} in {year}", f"deaths from all causes in {year}"],
        exclusion=["the Total row", "rates (age-adjusted or crude)"],
        traps=["criterion mismatch: the default measure is the age-adjusted rate, not a death count",
               f"drift: the form opens on {MORTALITY_YEARS[-1]} and All causes; opening it again resets every "
               "control and drops the results",
               "in-page misreading: the Total row is not a state",
               "dependency not closed: the all-cause counts need a second query; ordering by the cause count "
               "gives another order than by share"],
        column_notes={"cause_deaths": "deaths from the cause as shown, an integer",
                      "all_deaths": "deaths from all causes as shown, an integer",
                      "share": "cause_deaths/all_deaths, unreduced, e.g. 412/9870"},
        shape="derived",
        mirrors="CDC WONDER style: two POSTed queries of the same grouping (one cause, all causes) joined per "
                "state into a share a/b that ranks the states",
        phases=(f"mortality form: by state, {year}, deaths, cause '{label}' -> counts",
                "the same form with All causes -> counts", "derive: join per state, share a/b, order by share"),
        derived=("share",),
    )


def walkthrough(data: object) -> list[Step]:
    cause, year = choose_query(data)
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": MORTALITY_URL}, "why": "mortality query form"},
        {"tool": "select", "args": {"target": {"label": "Measure"}, "option": MEASURES["deaths"]},
         "why": "counts, not the default age-adjusted rate"},
        {"tool": "select", "args": {"target": {"label": "Year"}, "option": str(year)}, "why": "a past year"},
    ]
    for option, into in ((CAUSES[cause], "part"), (CAUSES["all"], "whole")):
        steps += [
            {"tool": "select", "args": {"target": {"label": "Cause of death"}, "option": option}, "why": option},
            {"tool": "click", "args": {"target": {"text": "Send"}}, "why": "results appear only after the POST"},
            {"tool": "read_table", "args": {"table": 0}, "why": "one row per state"},
            {"tool": "extract_rows", "args": {"into": into, "columns": {"state": "State", "deaths": "Deaths"}},
             "why": f"deaths per state ({into})"},
        ]
    sql = (
        "SELECT a.state, a.deaths AS cause_deaths, b.deaths AS all_deaths, a.deaths || '/' || b.deaths AS share "
        "FROM part a JOIN whole b USING (state) WHERE a.state <> 'Total' "
        "ORDER BY num(a.deaths) / num(b.deaths) DESC, a.state"
    )
    return [*steps, *derive_then_finish(sql, "share per state, ordered by share")]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
