"""The vulnerability site's data, built from the seed: products, records with change histories, and the
product dictionary's release milestones."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, timedelta

PREFIX = "vulns"
FAMILY = "Vulnerability records"
DOMAIN = "OFFLINE_VULNDB"
PAGE_SIZE = 10
RECORD_COUNT = 1400

VENDORS = [
    "Arcturus Systems", "Borealis Soft", "Corvid Networks", "Dunmore Labs", "Elmwood IO",
    "Fenwick Data", "Galena Works", "Halcyon Tech", "Ironbark Security", "Juniper Vale",
]
PRODUCT_WORDS = [
    "gateway", "portal", "mail_relay", "vpn_client", "cms", "db_server", "analytics", "forms",
    "sso_bridge", "backup_agent", "print_server", "router_os",
]
WEAKNESSES = {
    "CWE-79": ("Cross-site scripting", "a stored cross-site scripting flaw", "inject arbitrary web script"),
    "CWE-89": ("SQL injection", "an SQL injection flaw", "read or modify database contents"),
    "CWE-787": ("Out-of-bounds write", "an out-of-bounds write", "execute arbitrary code"),
    "CWE-22": ("Path traversal", "a path traversal flaw", "read arbitrary files"),
    "CWE-502": ("Deserialization of untrusted data", "unsafe deserialization", "execute arbitrary code"),
    "CWE-352": ("Cross-site request forgery", "a cross-site request forgery flaw", "change account settings"),
    "CWE-287": ("Improper authentication", "an authentication bypass", "gain administrative access"),
    "CWE-918": ("Server-side request forgery", "a server-side request forgery flaw", "reach internal services"),
    "CWE-400": ("Uncontrolled resource consumption", "unbounded resource consumption", "cause a denial of service"),
    "CWE-20": ("Improper input validation", "improper input validation", "crash the service"),
}
ACTORS = ["a remote attacker", "a local user", "an authenticated user", "an adjacent attacker"]
SEVERITIES = ["LOW", "MEDIUM", "HIGH", "CRITICAL"]
START, END = date(2021, 1, 1), date(2025, 6, 30)


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class Product:
    id: str
    vendor: str
    deprecated: bool = False
    replaced_by: str | None = None
    deprecated_on: date | None = None


@dataclass(frozen=True)
class Change:
    on: date
    action: str
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class Vuln:
    id: str
    published: date
    modified: date
    summary: str
    score: float
    vector: str
    weakness: str
    products: tuple[str, ...]
    references: tuple[str, ...]
    history: tuple[Change, ...]

    @property
    def severity(self) -> str:
        return severity_of(self.score)


@dataclass(frozen=True)
class VulnData:
    vendors: dict[str, str]  # slug -> display name
    products: dict[str, Product]
    vulns: list[Vuln]  # newest published first

    def by_id(self) -> dict[str, Vuln]:
        return {v.id: v for v in self.vulns}


def severity_of(score: float) -> str:
    if score >= 9.0:
        return "CRITICAL"
    if score >= 7.0:
        return "HIGH"
    if score >= 4.0:
        return "MEDIUM"
    return "LOW"


def _vector(rng: random.Random) -> str:
    parts = [
        ("AV", ["N", "A", "L"]), ("AC", ["L", "H"]), ("PR", ["N", "L", "H"]), ("UI", ["N", "R"]),
        ("S", ["U", "C"]), ("C", ["H", "L", "N"]), ("I", ["H", "L", "N"]), ("A", ["H", "L", "N"]),
    ]
    return "CVSS:3.1/" + "/".join(f"{k}:{rng.choice(vs)}" for k, vs in parts)


def _day(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randrange((end - start).days + 1))


def _products(rng: random.Random) -> tuple[dict[str, str], dict[str, Product]]:
    vendors = {name.split()[0].lower(): name for name in VENDORS}
    products: dict[str, Product] = {}
    for slug in vendors:
        for word in rng.sample(PRODUCT_WORDS, 3):
            products[f"{slug}:{word}"] = Product(f"{slug}:{word}", slug)
    renamed = rng.sample(sorted(p for p in products if not p.startswith(("halcyon", "ironbark"))), 4)
    for current in renamed:
        vendor, word = current.split(":")
        old_id = f"{vendor}:{word.replace('_', '')}_suite"
        on = _day(rng, date(2022, 3, 1), date(2023, 6, 30))
        products[old_id] = Product(old_id, vendor, deprecated=True, replaced_by=current, deprecated_on=on)
    return vendors, dict(sorted(products.items()))


def build(seed: int) -> VulnData:
    rng = random.Random(f"{PREFIX}:{seed}")
    vendors, products = _products(rng)
    current = [p for p in products.values() if not p.deprecated]
    old_of = {p.replaced_by: p for p in products.values() if p.deprecated}
    weights = [4 if p.id in old_of else 1 for p in current]
    published_days = sorted(_day(rng, START, END) for _ in range(RECORD_COUNT))
    seq_by_year: dict[int, int] = {}
    vulns: list[Vuln] = []
    for published in published_days:
        seq_by_year[published.year] = seq_by_year.get(published.year, 1000 + rng.randrange(50)) + rng.randrange(1, 9)
        vid = f"OVR-{published.year}-{seq_by_year[published.year]:05d}"
        product = rng.choices(current, weights)[0]
        weakness = rng.choice(sorted(WEAKNESSES))
        score = round(rng.triangular(2.0, 10.0, 7.2), 1)
        history = [Change(published, "Initial analysis", "Record", "", "Published")]
        filed_as = product.id
        old = old_of.get(product.id)
        if old and old.deprecated_on and published < old.deprecated_on:
            filed_as = old.id
            if rng.random() < 0.5:
                on = old.deprecated_on + timedelta(days=rng.randrange(1, 200))
                history.append(Change(on, "Identifier remapped", "Product", old.id, product.id))
                filed_as = product.id
        if rng.random() < 0.22:
            revised = round(min(10.0, max(1.0, score + rng.choice([-1, 1]) * rng.uniform(0.5, 2.5))), 1)
            if revised != score:
                on = published + timedelta(days=rng.randrange(5, 300))
                history.append(Change(on, "Modified", "CVSS base score", f"{score:.1f}", f"{revised:.1f}"))
                score = revised
        if rng.random() < 0.08:
            new_weakness = rng.choice(sorted(set(WEAKNESSES) - {weakness}))
            on = published + timedelta(days=rng.randrange(5, 400))
            history.append(Change(on, "Modified", "Weakness", weakness, new_weakness))
            weakness = new_weakness
        slug = product.vendor
        refs = [f"https://advisories.{slug}.example/{vid}"]
        if rng.random() < 0.6:
            on = published + timedelta(days=rng.randrange(1, 120))
            ref = f"https://tracker.example.org/issues/{rng.randrange(10000, 99999)}"
            refs.append(ref)
            history.append(Change(on, "Reference added", "References", "", ref))
        history.sort(key=lambda c: (c.on, c.action))
        _, phrase, impact = WEAKNESSES[weakness]
        version = f"{rng.randrange(1, 9)}.{rng.randrange(0, 20)}.{rng.randrange(0, 10)}"
        display = product.id.split(":")[1].replace("_", " ")
        summary = f"{phrase[0].upper()}{phrase[1:]} in {vendors[slug]} {display} before {version} allows {rng.choice(ACTORS)} to {impact}."
        vulns.append(Vuln(
            id=vid, published=published, modified=history[-1].on, summary=summary, score=score,
            vector=_vector(rng), weakness=weakness, products=(filed_as,), references=tuple(refs),
            history=tuple(history),
        ))
    vulns.sort(key=lambda v: (v.published, v.id), reverse=True)
    return VulnData(vendors, products, vulns)


# ---------------------------------------------------------------- product dictionary


@dataclass(frozen=True)
class Milestone:
    """A release line of a product (the major version of the records' fixed versions) with its identifiers:
    the current one and, for lines that shipped before a rename, the legacy one under the old product name."""

    label: str  # e.g. "3.x"
    current: str
    legacy: str | None
    legacy_deprecated_on: date | None


def milestone_of(vuln: Vuln) -> str:
    """The release line a record affects: the major version of its 'before X.Y.Z' fixed version."""
    return f"{fixed_before(vuln)[0]}.x"


def cpe(product_id: str, label: str) -> str:
    vendor, word = product_id.split(":")
    return f"cpe:2.3:a:{vendor}:{word}:{label}"


def legacy_of(data: VulnData, product_id: str) -> Product | None:
    return next((p for p in data.products.values() if p.replaced_by == product_id), None)


def product_milestones(data: VulnData, product_id: str) -> list[Milestone]:
    """Every release line with records, plus the next line (released after the last record, so after any
    rename: it has no legacy identifier). A line has a legacy identifier when records of it were filed before
    the product was renamed."""
    old = legacy_of(data, product_id)
    names = {product_id, *([old.id] if old else [])}
    records = [v for v in data.vulns if names.intersection(v.products)]
    majors = sorted({fixed_before(v)[0] for v in records})
    out = []
    for major in [*majors, (majors[-1] if majors else 0) + 1]:
        label = f"{major}.x"
        shipped_before = old is not None and any(
            old.deprecated_on and v.published < old.deprecated_on and fixed_before(v)[0] == major for v in records)
        out.append(Milestone(label, cpe(product_id, label), cpe(old.id, label) if old and shipped_before else None,
                             old.deprecated_on if old and shipped_before else None))
    return out


def fixed_before(vuln: Vuln) -> tuple[int, ...]:
    """The summary's 'before X.Y.Z': the first unaffected version, as a comparable tuple."""
    match = re.search(r"before (\d+\.\d+\.\d+)", vuln.summary)
    assert match, vuln.summary
    return tuple(int(part) for part in match.group(1).split("."))
