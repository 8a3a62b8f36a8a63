"""What every part of the statistics site shares: the states, the survey products and vintages, a county,
the sampling error model and the rounding guard the derived tasks use."""

from __future__ import annotations

import math
from dataclasses import dataclass

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


@dataclass(frozen=True)
class County:
    id: str  # e.g. "NL-03"
    state: str  # state code
    name: str
    population: int


def relative_moe(population: int, product: str) -> float:
    base = 0.3 / math.sqrt(population / 1000)
    return base * (2.0 if product == "acs1" else 1.0)


def half_tie(a: int, b: int) -> bool:
    """100*a/b lies exactly halfway between two one-decimal values (rounding conventions would disagree)."""
    return (2000 * a) % b == 0 and (2000 * a // b) % 2 == 1
