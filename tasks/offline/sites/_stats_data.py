"""The statistics site's records, shared by every part so none imports another for a type: the explorer's
table cells, the geography profiles, the mortality counts, and `StatsData` holding them (`stats.build` fills
it; the profile and mortality modules build and read their parts)."""

from __future__ import annotations

from dataclasses import dataclass

from tasks.offline.sites._stats_base import County

# deaths per 100,000 residents by specific cause (the rest is "other"); `Mortality.count` sums them
BASE_RATES = {"heart": 205.0, "cancer": 185.0, "clrd": 46.0, "stroke": 44.0, "accidents": 52.0, "diabetes": 27.0}


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


@dataclass(frozen=True)
class Mortality:
    deaths: dict[tuple[str, int, str], int]  # (county id, year, cause key) -> deaths (specific causes)
    population: dict[tuple[str, int], int]  # (county id, year) -> residents
    age_factor: dict[str, float]  # county id -> age-adjusted / crude rate

    def count(self, county: str, year: int, cause: str) -> int:
        if cause == "all":
            return sum(self.deaths[(county, year, k)] for k in (*BASE_RATES, "other"))
        return self.deaths[(county, year, cause)]


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
    profiles: dict[tuple[str, str, int], Profile]  # (geo id, product, vintage) -> profile (task 004)
    mortality: Mortality  # deaths by county, year and cause (task 005)

    def counties_in(self, state: str) -> list[County]:
        return sorted((c for c in self.counties if c.state == state), key=lambda c: c.name)
