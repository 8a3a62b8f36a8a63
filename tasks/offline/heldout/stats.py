"""Held-out stats task: one state's crude death rates by cause for one past year (a copy behind four form
defaults).

New against the suite: the mortality form grouped by cause (default: by state) with the crude rate (default:
the age-adjusted rate) for a past year (default: the latest), without the Total row (on by default; it sums
every cause, not only the listed ones).
"""

from __future__ import annotations

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft
from tasks.offline.sites._stats_base import DOMAIN, FAMILY, PREFIX, STATES
from tasks.offline.sites._stats_mortality import (
    DEATH_GROUP_BY,
    MEASURES,
    MORTALITY_URL,
    MORTALITY_YEARS,
    DeathQuery,
    choose_deaths,
    mortality_table,
)

TASK_ID = "offline_heldout_stats_001"


def _rate(cell: str) -> float:
    return float(cell.split()[0])


def rows_of(table: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    body = [(label, value) for label, value, _ in table if label != "Total"]
    return sorted(body, key=lambda r: -_rate(r[1]))


def choose_query(data: object) -> DeathQuery:
    """A state other than the suite's mortality task's and a year before the default one; no tie among the
    rates; every rate differs from the age-adjusted one and from the default year's."""
    taken = choose_deaths(data).state  # type: ignore[arg-type]

    def fits(q: DeathQuery) -> bool:
        crude = rows_of(mortality_table(data, q))  # type: ignore[arg-type]
        adjusted = dict(rows_of(mortality_table(data, DeathQuery("cause", q.state, q.year, "all", "adjusted",  # type: ignore[arg-type]
                                                                False))))
        latest = dict(rows_of(mortality_table(data, DeathQuery("cause", q.state, MORTALITY_YEARS[-1], "all",  # type: ignore[arg-type]
                                                              "crude", False))))
        values = [r[1] for r in crude]
        return (all(v[0].isdigit() for v in values) and len(set(values)) == len(values)
                and all(adjusted[c] != v and latest[c] != v for c, v in crude))

    candidates = (DeathQuery("cause", code, year, "all", "crude", False)
                  for year in (2020, 2019, 2021) for code in STATES if code != taken)
    return first_fit(candidates, fits, "stats held-out state and year")


def draft(data: object) -> TaskDraft:
    q = choose_query(data)
    state = STATES[q.state]
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=MORTALITY_URL,
        constraint_instruction=(
            f"In the statistics site's mortality query form, group the results by '{DEATH_GROUP_BY['cause']}' "
            f"(default: State), choose state {state}, year {q.year} (default: {MORTALITY_YEARS[-1]}), keep cause "
            f"of death 'All causes' so every cause gets its row, set the measure to '{MEASURES['crude']}' (default: "
            f"the age-adjusted rate) and untick 'Show totals'. Send the form and report each cause of death with "
            f"its crude rate exactly as shown."
        ),
        goal_instruction=(
            f"What was the crude death rate per 100,000 in {state} in {q.year} for each cause of death the "
            f"mortality statistics list? Give the cause as labelled and the rate as shown, highest first."
        ),
        columns=("cause_of_death", "crude_rate"),
        rows=rows_of(mortality_table(data, q)),  # type: ignore[arg-type]
        sorting="crude_rate descending (numeric)",
        gates=[f"group by = {DEATH_GROUP_BY['cause']} (default: State)", f"state = {state}",
               f"year = {q.year} (default: {MORTALITY_YEARS[-1]})",
               f"measure = {MEASURES['crude']} (default: age-adjusted rate)", "totals off; POST form submitted"],
        data_dependency="The submitted query's result table supplies one row per cause.",
        control_dependency="The per-cause criterion decides the grouping; the crude-rate criterion the measure; "
                           "the year criterion the year.",
        inclusion=[f"state {state}", f"year {q.year}", "every listed cause of death", "crude rate per 100,000"],
        exclusion=["the Total row (it sums every cause, also the unlisted ones)", "age-adjusted rates"],
        traps=["criterion mismatch: the default measure is the age-adjusted rate (every value differs)",
               f"drift: the form opens on {MORTALITY_YEARS[-1]} grouped by state; opening it again resets every "
               "control and drops the results",
               "in-page misreading: the Total row is not the sum of the listed causes",
               "state only in a POSTed form (URL unchanged)"],
        column_notes={"cause_of_death": "the cause label as listed, with its ICD codes",
                      "crude_rate": "crude rate per 100,000 as shown, one decimal"},
    )


def walkthrough(data: object) -> list[Step]:
    q = choose_query(data)
    return [
        {"tool": "goto", "args": {"url": MORTALITY_URL}, "why": "mortality query form"},
        {"tool": "select", "args": {"target": {"label": "Group results by"}, "option": DEATH_GROUP_BY["cause"]},
         "why": "default groups by state"},
        {"tool": "select", "args": {"target": {"label": "Measure"}, "option": MEASURES["crude"]},
         "why": "the crude rate, not the default age-adjusted one"},
        {"tool": "select", "args": {"target": {"label": "State"}, "option": STATES[q.state]}, "why": "state"},
        {"tool": "select", "args": {"target": {"label": "Year"}, "option": str(q.year)}, "why": "a past year"},
        {"tool": "check", "args": {"target": {"label": "Show totals"}, "checked": False}, "why": "no Total row"},
        {"tool": "click", "args": {"target": {"text": "Send"}}, "why": "results appear only after the POST"},
        {"tool": "read_table", "args": {"table": 0}, "why": "one row per cause"},
        {"tool": "extract_rows", "args": {"columns": {"cause_of_death": "Cause of death",
                                                      "crude_rate": MEASURES["crude"]}},
         "why": "rows as listed"},
        {"tool": "finish", "args": {"order_by": ["crude_rate num desc"]}, "why": "ordered by the rate"},
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
