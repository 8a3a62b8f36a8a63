"""SGR-Bench source families and ecosystems (dataset card): the axes the paper's tables aggregate over."""

from __future__ import annotations

import re

SCHOLARLY = "Scholarly archives"
STATISTICS = "Official statistics"
ENVIRONMENT = "Environmental monitoring"
REGULATORY = "Regulatory resources"
VULNERABILITY = "Vulnerability records"
LIFE_SCIENCE = "Life-science resources"
OTHER = "other"

FAMILIES: tuple[str, ...] = (SCHOLARLY, STATISTICS, ENVIRONMENT, REGULATORY, VULNERABILITY, LIFE_SCIENCE)

FAMILY_BY_DOMAIN: dict[str, str] = {
    "ARXIV": SCHOLARLY,
    "EUROPEPMC_PMC": SCHOLARLY,
    "CENSUS_GOV": STATISTICS,
    "CDC_WONDER": STATISTICS,
    "WATER_OFFICE": ENVIRONMENT,
    "WATER_QUALITY_PORTAL": ENVIRONMENT,
    "NOAA_NCEI_CLIMATE_AT_A_GLANCE": ENVIRONMENT,
    "CFPB_COMPLAINT_DATABASE": REGULATORY,
    "CFPB_REPORTS": REGULATORY,
    "COMPTOX_CHEMEXPO": REGULATORY,
    "NVD": VULNERABILITY,
    "KEGG_BRITE": LIFE_SCIENCE,
    "KEGG_GENOME": LIFE_SCIENCE,
    "REPTILE_DATABASE": LIFE_SCIENCE,
}

# The card counts 12 ecosystems over 14 domains: the two CFPB and the two KEGG domains are one site each.
_ECOSYSTEM_PREFIXES = ("CFPB", "KEGG")


def family_of(domain: str) -> str:
    """Unknown domains (e.g. offline sites or a newer release) are kept as "other", never rejected."""
    return FAMILY_BY_DOMAIN.get(domain.strip().upper(), OTHER)


def ecosystem_of(domain: str) -> str:
    upper = domain.strip().upper()
    for prefix in _ECOSYSTEM_PREFIXES:
        if upper.startswith(prefix + "_"):
            return prefix
    return domain


def family_slug(name: str) -> str:
    """Lets filters accept "life-science", "Life-science resources" or "LIFE_SCIENCE_RESOURCES" alike."""
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def resolve_family(name: str) -> str:
    """The canonical family for a user-typed name or unique prefix of one; ValueError names the choices."""
    wanted = family_slug(name)
    choices = (*FAMILIES, OTHER)
    exact = [f for f in choices if family_slug(f) == wanted]
    if exact:
        return exact[0]
    prefixed = [f for f in choices if wanted and family_slug(f).startswith(wanted)]
    if len(prefixed) == 1:
        return prefixed[0]
    raise ValueError(f"unknown source family {name!r}; choose one of: {', '.join(choices)}")
