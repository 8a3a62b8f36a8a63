"""Vulnerability records (NVD style): keyword/severity/date/vendor/product search with state in the URL.

Mechanics: state in URL query parameters; pagination by a "Next" link only; a date-range widget with a
"date type" switch (last modified by default, published on request); deprecated product identifiers that
only become selectable and matchable with "include deprecated"; detail pages with score vector, weakness,
references and a dated change history (score revisions, identifier remaps); a product dictionary (deprecated
identifiers on request) whose product pages list release milestones, with legacy identifiers only when asked for.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish, record_pair

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


# ---------------------------------------------------------------- search


@dataclass(frozen=True)
class Query:
    keyword: str = ""
    severity: str = ""
    date_type: str = "modified"
    start: str = ""
    end: str = ""
    vendor: str = ""
    product: str = ""
    include_deprecated: bool = False

    @classmethod
    def from_params(cls, params: dict[str, str]) -> Query:
        return cls(
            keyword=params.get("keyword", "").strip(),
            severity=params.get("severity", ""),
            date_type="published" if params.get("date_type") == "published" else "modified",
            start=params.get("from", ""),
            end=params.get("to", ""),
            vendor=params.get("vendor", ""),
            product=params.get("product", ""),
            include_deprecated=params.get("include_deprecated") == "on",
        )


def _parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def allowed_identifiers(data: VulnData, query: Query) -> set[str] | None:
    """Product identifiers a record must carry; None = no product scope. Deprecated ids need the flag."""
    if not (query.vendor or query.product):
        return None
    visible = {p.id for p in data.products.values() if query.include_deprecated or not p.deprecated}
    if query.product:
        chosen = {query.product} & visible
        if query.include_deprecated:
            chosen |= {p.id for p in data.products.values() if p.replaced_by == query.product}
        return chosen
    return {pid for pid in visible if data.products[pid].vendor == query.vendor}


def search(data: VulnData, query: Query) -> list[Vuln]:
    scope = allowed_identifiers(data, query)
    start, end = _parse_day(query.start), _parse_day(query.end)
    keyword = query.keyword.lower()
    found = []
    for vuln in data.vulns:
        day = vuln.published if query.date_type == "published" else vuln.modified
        if (start and day < start) or (end and day > end):
            continue
        if query.severity and vuln.severity != query.severity:
            continue
        if keyword and keyword not in vuln.summary.lower() and keyword != vuln.id.lower():
            continue
        if scope is not None and not scope.intersection(vuln.products):
            continue
        found.append(vuln)
    return found


# ---------------------------------------------------------------- pages


def routes(data: VulnData) -> list[Route]:
    by_id = data.by_id()

    async def home(request: Request) -> HTMLResponse:
        return render("vulns/home.html", site_title="Vulnerability records", count=len(data.vulns))

    async def search_page(request: Request) -> HTMLResponse:
        params = dict(request.query_params)
        query = Query.from_params(params)
        submitted = bool(params)
        results = search(data, query) if submitted else []
        start = params.get("start", "0")
        offset = int(start) if start.isdigit() else 0
        page = results[offset: offset + PAGE_SIZE]
        next_url = None
        if offset + PAGE_SIZE < len(results):
            next_url = "?" + urlencode({**params, "start": str(offset + PAGE_SIZE)})
        return render(
            "vulns/search.html", site_title="Vulnerability search", query=query, submitted=submitted,
            vendors=data.vendors, products=list(data.products.values()), severities=SEVERITIES,
            rows=page, total=len(results), first=offset + 1, last=offset + len(page), next_url=next_url,
        )

    async def detail(request: Request) -> HTMLResponse:
        vuln = by_id.get(request.path_params["vid"])
        if vuln is None:
            return render("vulns/missing.html", status_code=404, vid=request.path_params["vid"])
        return render(
            "vulns/detail.html", site_title=vuln.id, vuln=vuln, weakness_name=WEAKNESSES[vuln.weakness][0],
            products=[data.products[p] for p in vuln.products], milestone=milestone_of(vuln),
        )

    async def dictionary(request: Request) -> HTMLResponse:
        """The product dictionary: current identifiers by default, deprecated ones only when asked for."""
        include = request.query_params.get("include_deprecated") == "on"
        vendor = request.query_params.get("vendor", "")
        shown = [p for p in data.products.values()
                 if (include or not p.deprecated) and (not vendor or p.vendor == vendor)]
        return render("vulns/products.html", site_title="Product dictionary", products=shown, vendors=data.vendors,
                      vendor=vendor, include_deprecated=include)

    async def product_page(request: Request) -> HTMLResponse:
        product = data.products.get(request.path_params["pid"])
        if product is None:
            return render("vulns/missing.html", status_code=404, vid=request.path_params["pid"])
        show_legacy = request.query_params.get("legacy") == "on"
        milestones = [] if product.deprecated else product_milestones(data, product.id)
        return render("vulns/product.html", site_title=product.id, product=product, vendors=data.vendors,
                      milestones=milestones, show_legacy=show_legacy, legacy=legacy_of(data, product.id))

    return [
        Route("/", home),
        Route("/search", search_page),
        Route("/detail/{vid}", detail),
        Route("/products", dictionary),
        Route("/products/{pid}", product_page),
    ]


# ---------------------------------------------------------------- tasks


SEARCH_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/search"


@dataclass(frozen=True)
class Chosen:
    """The search each base task is built on, chosen from the data so that cardinality and traps hold."""

    deprecated_query: Query
    history_query: Query
    date_type_query: Query
    remap_query: Query  # 004: a product incl. deprecated ids, every record's change history (derived)
    milestone_query: Query  # 005: per milestone of a renamed product, legacy/current ids and remapped records


def _windows() -> list[tuple[str, str]]:
    out = []
    for year in range(2021, 2026):
        for first, last in (("01-01", "06-30"), ("07-01", "12-31")):
            out.append((f"{year}-{first}", f"{year}-{last}"))
    for year in range(2021, 2025):
        out.append((f"{year}-01-01", f"{year}-12-31"))
    out.extend((f"{y}-01-01", f"{y + 1}-12-31") for y in range(2021, 2024))
    return out


def choose(data: VulnData) -> Chosen:
    """The first candidate search (in a fixed order) whose answer has the size and the trap the task needs."""

    def ids(q: Query) -> set[str]:
        return {v.id for v in search(data, q)}

    def revised(q: Query) -> int:
        return sum(any(c.field == "CVSS base score" for c in v.history) for v in search(data, q))

    renamed = sorted(p.replaced_by for p in data.products.values() if p.replaced_by)
    renamed_vendors = {p.vendor for p in data.products.values() if p.deprecated}
    deprecated_query = first_fit(
        (Query(severity=severity, date_type="published", start=start, end=end, product=product,
               include_deprecated=True)
         for product in renamed for severity in ("HIGH", "CRITICAL") for start, end in _windows()),
        lambda q: 11 <= len(ids(q)) <= 20 and len(ids(q) - ids(replace(q, include_deprecated=False))) >= 2,
        "vulns deprecated-product search",
    )
    history_query = first_fit(
        (Query(date_type="published", start=start, end=end, vendor=vendor)
         for vendor in sorted(set(data.vendors) - renamed_vendors) for start, end in _windows()),
        lambda q: 11 <= len(ids(q)) <= 20 and 3 <= revised(q) <= 8,
        "vulns score-history search",
    )
    date_type_query = first_fit(
        (Query(keyword=actor, severity=severity, date_type="published", start=start, end=end)
         for actor in ("local user", "adjacent attacker", "authenticated user")
         for severity in ("MEDIUM", "HIGH") for start, end in _windows()),
        lambda q: 11 <= len(ids(q)) <= 18 and ids(q) != ids(replace(q, date_type="modified")),
        "vulns date-type search",
    )
    others_first = sorted(renamed, key=lambda product: product == deprecated_query.product)
    remap_query = first_fit(
        (Query(date_type="published", start=start, end=end, product=product, include_deprecated=True)
         for product in others_first for start, end in _quarters()),
        lambda q: _remap_fits(data, q), "vulns remap-history search",
    )
    used = {deprecated_query.product, remap_query.product}
    vendor_renames = {v: sum(p.vendor == v for p in data.products.values() if p.deprecated) for v in data.vendors}
    # products not used by the other tasks first; among them, a vendor with another renamed product first (a
    # vendor-wide search then lists remaps of that other product: the different-product trap)
    ordered = sorted(renamed, key=lambda pid: (pid in used, -vendor_renames[data.products[pid].vendor]))
    milestone_query = first_fit(
        (Query(date_type="published", start=start, end=end, product=product, include_deprecated=True)
         for product in ordered for start, end in _quarters()),
        lambda q: _milestone_fits(data, q), "vulns milestone remap search",
    )
    return Chosen(deprecated_query, history_query, date_type_query, remap_query, milestone_query)


def _quarters() -> list[tuple[str, str]]:
    return [(f"{y}-{a}", f"{y}-{b}") for y in (2021, 2022, 2023)
            for a, b in (("01-01", "06-30"), ("07-01", "12-31"), ("01-01", "03-31"), ("04-01", "06-30"),
                         ("07-01", "09-30"), ("10-01", "12-31"))]


def fixed_before(vuln: Vuln) -> tuple[int, ...]:
    """The summary's 'before X.Y.Z': the first unaffected version, as a comparable tuple."""
    match = re.search(r"before (\d+\.\d+\.\d+)", vuln.summary)
    assert match, vuln.summary
    return tuple(int(part) for part in match.group(1).split("."))


def remap_event(vuln: Vuln) -> Change | None:
    return next((c for c in vuln.history if c.action == "Identifier remapped"), None)


def _remap_fits(data: VulnData, q: Query) -> bool:
    """Two result pages; 3-8 remapped records; records still filed under the old identifier (only listed with
    deprecated identifiers included) must move the common bound; the default date type lists another set."""
    found = search(data, q)
    current_only = search(data, replace(q, include_deprecated=False))
    remapped = [v for v in found if remap_event(v)]
    if not (PAGE_SIZE < len(found) <= 16 and 2 <= len(remapped) <= 10 and current_only):
        return False
    moved = min(map(fixed_before, found)) != min(map(fixed_before, current_only))
    by_modified = {v.id for v in search(data, replace(q, date_type="modified"))}
    return moved and by_modified != {v.id for v in found}


def _oracle_remaps(data: VulnData, q: Query) -> list[tuple[str, ...]]:
    found = search(data, q)
    bound = "before " + ".".join(map(str, min(map(fixed_before, found))))
    rows = []
    for vuln in found:
        event = remap_event(vuln)
        if event:
            rows.append((event.on, vuln.id, event.old, str((event.on - vuln.published).days)))
    return [(vid, old, on.isoformat(), days, bound) for on, vid, old, days in sorted(rows)]


def _milestone_groups(data: VulnData, q: Query) -> list[tuple[Milestone, list[tuple[date, str]], int]]:
    """Per milestone of the product: the listed records remapped from its legacy identifier (date, id), and
    how many listed records are still filed under the legacy identifier."""
    old = legacy_of(data, q.product)
    assert old is not None, q.product
    found = search(data, q)
    groups = []
    for milestone in product_milestones(data, q.product):
        records = [v for v in found if milestone_of(v) == milestone.label]
        events = [(remap_event(v), v.id) for v in records]
        remapped = sorted((e.on, vid) for e, vid in events if e and e.old == old.id and e.new == q.product)
        groups.append((milestone, remapped, sum(old.id in v.products for v in records)))
    return groups


def _milestone_fits(data: VulnData, q: Query) -> bool:
    """Two result pages; several remaps spread over milestones (one with two or more, legacy milestones with
    none); records still under the legacy id (hidden without deprecated ids); the default date type lists
    another set."""
    found = search(data, q)
    if not PAGE_SIZE < len(found) <= 16:
        return False
    groups = _milestone_groups(data, q)
    counts = [len(remapped) for _, remapped, _ in groups]
    legacy_without = [m for m, remapped, _ in groups if m.legacy and not remapped]
    by_modified = {v.id for v in search(data, replace(q, date_type="modified"))}
    return (sum(counts) >= 3 and max(counts) >= 2 and legacy_without and sum(p for *_, p in groups) >= 1
            and by_modified != {v.id for v in found})


def _oracle_milestones(data: VulnData, q: Query) -> list[tuple[str, ...]]:
    rows = []
    for milestone, remapped, pending in _milestone_groups(data, q):
        rows.append((milestone.label, milestone.legacy or "NONE", milestone.current,
                     " ".join(sorted(vid for _, vid in remapped)) or "NONE", str(len(remapped)),
                     min(remapped)[0].isoformat() if remapped else "NONE", str(pending)))
    return rows


def _oracle_deprecated(data: VulnData, q: Query) -> list[tuple[str, ...]]:
    rows = sorted(search(data, q), key=lambda v: (v.published, v.id))
    return [(v.id, v.published.isoformat(), f"{v.score:.1f}") for v in rows]


def _oracle_history(data: VulnData, q: Query) -> list[tuple[str, ...]]:
    out = []
    for v in search(data, q):
        for c in v.history:
            if c.field == "CVSS base score":
                out.append((v.id, c.on.isoformat(), c.old, c.new))
    return sorted(out, key=lambda r: (r[1], r[0]))


def _oracle_date_type(data: VulnData, q: Query) -> list[tuple[str, ...]]:
    rows = sorted(search(data, q), key=lambda v: (v.published, v.id))
    return [(v.id, v.published.isoformat(), v.weakness) for v in rows]


def tasks(data: VulnData) -> list[dict[str, Any]]:
    c = choose(data)
    dq, hq, tq = c.deprecated_query, c.history_query, c.date_type_query
    product = data.products[dq.product]
    old_ids = sorted(p.id for p in data.products.values() if p.replaced_by == dq.product)
    vendor_name = data.vendors[hq.vendor]
    drafts = [
        TaskDraft(
            task_id="offline_vulns_001", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"On the vulnerability records search, find every record affecting product `{product.id}` "
                f"including records still filed under its deprecated identifier ({', '.join(old_ids)}): tick "
                f"'Include deprecated product identifiers', select product {product.id}, severity {dq.severity}, "
                f"date type 'Published' and published dates {dq.start} to {dq.end}. Follow 'Next' until the last "
                f"page. Report record id, published date and current base score."
            ),
            goal_instruction=(
                f"I need the complete list of {dq.severity}-severity vulnerability records published between "
                f"{dq.start} and {dq.end} for the {data.vendors[product.vendor]} product {product.id}, "
                f"including those filed before it was renamed. Give id, published date and base score."
            ),
            columns=("id", "published", "score"),
            rows=_oracle_deprecated(data, dq),
            sorting="published date ascending, then id ascending",
            gates=[f"product = {product.id} with deprecated identifiers included",
                   f"severity = {dq.severity}", f"date type = Published, {dq.start}..{dq.end}",
                   "all result pages via Next"],
            data_dependency="The deprecated identifier named on the product's records widens the product scope.",
            control_dependency="Include-deprecated must be set before the product scope matches old filings.",
            inclusion=[f"records whose affected product is {product.id} or its deprecated identifier",
                       f"current severity {dq.severity}", f"published {dq.start}..{dq.end} inclusive"],
            exclusion=["records of other products of the same vendor", "dates taken from Last modified"],
            traps=["drift: deprecated identifiers are excluded by default, silently dropping older records",
                   "criterion mismatch: the date filter defaults to Last modified, not Published",
                   "dependency not closed: results continue on Next pages"],
            column_notes={"published": "ISO date YYYY-MM-DD", "score": "one decimal, current base score"},
        ),
        TaskDraft(
            task_id="offline_vulns_002", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"Search vulnerability records of vendor {vendor_name} with date type 'Published' and published "
                f"dates {hq.start} to {hq.end} (all pages via 'Next'). Open each record's detail page and read its "
                f"change history: for every 'CVSS base score' modification report the record id, the change date, "
                f"the old score and the new score."
            ),
            goal_instruction=(
                f"Which {vendor_name} vulnerability records published between {hq.start} and {hq.end} had their "
                f"CVSS base score revised after publication? For each revision give id, date, old and new score."
            ),
            columns=("id", "changed", "old_score", "new_score"),
            rows=_oracle_history(data, hq),
            record_separator=";", header=True,
            sorting="change date ascending, then id ascending",
            gates=[f"vendor = {vendor_name}", f"date type = Published, {hq.start}..{hq.end}",
                   "all result pages via Next", "change history table on every detail page"],
            data_dependency="The result list supplies the records whose detail pages must each be read.",
            control_dependency="Only history rows whose field is the CVSS base score qualify.",
            inclusion=["one row per CVSS base score modification in the change history"],
            exclusion=["weakness changes, identifier remaps and reference additions",
                       "records whose score never changed"],
            traps=["dependency not closed: the revisions are only on detail pages, across two result pages",
                   "in-page misreading: the Scores table shows only the current score; old values are in history"],
            column_notes={"changed": "ISO date of the history entry", "old_score": "one decimal",
                          "new_score": "one decimal"},
            dedup_key=("id", "changed"),
        ),
        TaskDraft(
            task_id="offline_vulns_003", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"Search vulnerability records with keyword \"{tq.keyword}\", severity {tq.severity}, and "
                f"date type 'Published' (not the default 'Last modified') from {tq.start} to {tq.end}; follow "
                f"'Next' to the end. Report record id, published date and weakness id."
            ),
            goal_instruction=(
                f"List the {tq.severity}-severity vulnerability records first published between {tq.start} and "
                f"{tq.end} whose description mentions \"{tq.keyword}\", with their weakness ids."
            ),
            columns=("id", "published", "weakness"),
            rows=_oracle_date_type(data, tq),
            record_separator=",",
            sorting="published date ascending, then id ascending",
            gates=[f"keyword = {tq.keyword}", f"severity = {tq.severity}",
                   f"date type = Published, {tq.start}..{tq.end}", "all result pages via Next"],
            data_dependency="Rows come from the complete paged result list.",
            control_dependency="The date window applies to the publication date, not the modification date.",
            inclusion=[f"description contains \"{tq.keyword}\"", f"current severity {tq.severity}",
                       f"published {tq.start}..{tq.end} inclusive"],
            exclusion=["records only modified (not published) in the window"],
            traps=["criterion mismatch: the date range defaults to Last modified",
                   "dependency not closed: results continue on Next pages"],
            column_notes={"weakness": "CWE id as shown, e.g. CWE-79"},
        ),
    ]
    drafts.append(_remap_draft(data, c.remap_query))
    drafts.append(_milestone_draft(data, c.milestone_query))
    return [record for draft in drafts for record in record_pair(draft)]


def _remap_draft(data: VulnData, q: Query) -> TaskDraft:
    old = next(p.id for p in data.products.values() if p.replaced_by == q.product)
    return TaskDraft(
        task_id="offline_vulns_004", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the vulnerability search, tick 'Include deprecated product identifiers', choose product {q.product}, "
            f"set Date type to Published (the default is Last modified) and the range {q.start} to {q.end}; follow "
            f"Next through every result page. Open every listed record's detail page and read its Change history. "
            f"Report the records whose history has an 'Identifier remapped' event: the record id, the old (remapped) "
            f"identifier, the remap date, days_to_remap = days from publication to the remap, and "
            f"common_affected_bound = the intersection of the affected version ranges of ALL listed records (each "
            f"summary says 'before X.Y.Z'; the intersection is 'before' the lowest such version), the same on every row."
        ),
        goal_instruction=(
            f"Records on {q.product} published between {q.start} and {q.end}, including those filed under its "
            f"retired identifier: which were later remapped from the old identifier, when, and how many days after "
            f"publication? Also give the version bound below which every one of these records (remapped or not) "
            f"applies."
        ),
        columns=("record_id", "old_identifier", "remapped_on", "days_to_remap", "common_affected_bound"),
        rows=_oracle_remaps(data, q),
        sorting="remapped_on ascending, then record_id",
        gates=[f"product = {q.product} with deprecated identifiers included", "date type = Published",
               f"published {q.start}..{q.end}", "every result page (Next)", "every record's change history"],
        data_dependency="The result list supplies the records and their summaries; each detail page's change "
                        "history supplies the remap events; the bound is computed over all listed records.",
        control_dependency=f"Records still filed under {old} are only listed with deprecated identifiers included.",
        inclusion=["records with an 'Identifier remapped' history event", "bound over every listed record"],
        exclusion=["records never remapped (current or still-deprecated filings)", "score or reference changes"],
        traps=["drift: the date type defaults to Last modified, which lists another set",
               f"criterion mismatch: without deprecated identifiers the records still filed under {old} are "
               "missing, and the common bound changes",
               "near miss: records filed under the old identifier but never remapped",
               "dependency not closed: results continue after Next; remaps only in each change history"],
        column_notes={
            "days_to_remap": "integer days from the Published date to the remap date",
            "common_affected_bound": "'before ' + the lowest 'before X.Y.Z' version among all listed records "
                                     "(numeric comparison of each part)",
            "remapped_on": "ISO date of the remap event",
        },
        shape="derived",
        mirrors="Vulnerabilities: a product searched including deprecated identifiers; remap events (old -> new) "
                "with timestamps from each record's change history; affected version range intersected across records",
        phases=("search the product with deprecated identifiers, published window, every result page",
                "open every listed record: change history table",
                "derive: remap rows, days to remap, bound over all records"),
        derived=("days_to_remap", "common_affected_bound"),
    )


def _milestone_draft(data: VulnData, q: Query) -> TaskDraft:
    old = legacy_of(data, q.product)
    assert old is not None and old.deprecated_on is not None
    vendor = data.products[q.product].vendor
    others = sorted(p.id for p in data.products.values() if p.deprecated and p.vendor == vendor and p != old)
    traps = [
        f"criterion mismatch: without deprecated identifiers the records still filed under {old.id} are not "
        "listed (pending_remap drops to 0)",
        "drift: the date type defaults to Last modified, which lists another set of records; the 'Search form' "
        "link from a record page resets the form (deprecated identifiers off, Last modified)",
        "near miss: milestones with a legacy identifier but no remap in the window, and the newest milestone "
        "(no legacy identifier) stay in the answer with NONE and 0",
        "dependency not closed: legacy identifiers only with 'Show legacy identifiers'; remaps only in each "
        "record's change history; results continue after Next",
    ]
    if others:
        traps.append(f"near miss: a vendor-wide search also lists records remapped from {', '.join(others)} "
                     "(another product of the same vendor)")
    return TaskDraft(
        task_id="offline_vulns_005", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"Open the Product dictionary and the page of product {q.product}; tick 'Show legacy identifiers' to "
            f"see, for every milestone in its Milestones table, the current identifier and the legacy identifier "
            f"(from before the product was renamed from {old.id}; NONE where a milestone has none). Then, in the "
            f"vulnerability search, tick 'Include deprecated product identifiers', choose product {q.product}, set "
            f"Date type to Published (the default is Last modified) and the range {q.start} to {q.end}; follow "
            f"Next through every result page and open every listed record. A record belongs to the milestone shown "
            f"in its Known affected products table. Per milestone (every milestone of the table, in its order), "
            f"report: milestone, legacy_identifier, current_identifier, remapped_records = the ids of the listed "
            f"records whose Change history has an 'Identifier remapped' event from {old.id} to {q.product} "
            f"(ascending, separated by one space; NONE if none), remap_count = how many, earliest_remap = the "
            f"earliest such remap date (NONE if none), and pending_remap = how many listed records are still filed "
            f"under {old.id}."
        ),
        goal_instruction=(
            f"For every release milestone of {q.product}, what are its legacy identifier (from before the rename "
            f"from {old.id}) and its current identifier, and which records on this product published between "
            f"{q.start} and {q.end} had to be remapped from the legacy to the current identifier: their ids, how "
            f"many, the earliest remap date, and how many of that period's records still await the remap?"
        ),
        columns=("milestone", "legacy_identifier", "current_identifier", "remapped_records", "remap_count",
                 "earliest_remap", "pending_remap"),
        rows=_oracle_milestones(data, q),
        sorting="milestone in the product page's order (ascending release line)",
        gates=[f"product page of {q.product} with legacy identifiers shown",
               f"product = {q.product} with deprecated identifiers included", "date type = Published",
               f"published {q.start}..{q.end}", "every result page (Next)",
               "every record's affected milestone and change history"],
        data_dependency="The product page supplies the milestones and their identifiers; the result list (all pages) "
                        "supplies the records; each record page supplies its milestone and its remap event.",
        control_dependency=f"Legacy identifiers appear only with 'Show legacy identifiers'; records still filed under "
                           f"{old.id} are listed only with deprecated identifiers included.",
        inclusion=["every milestone of the product page", f"remap events from {old.id} to {q.product} of records "
                   f"published {q.start}..{q.end}"],
        exclusion=["score, weakness and reference changes", "remaps of other products",
                   "records published outside the window"],
        traps=traps,
        column_notes={
            "legacy_identifier": "as shown on the product page with legacy identifiers, NONE for a milestone without",
            "remapped_records": "record ids ascending, separated by one space, NONE if none",
            "remap_count": "integer number of remapped_records",
            "earliest_remap": "ISO date of the earliest remap among remapped_records, NONE if none",
            "pending_remap": f"integer number of the milestone's listed records still filed under {old.id}",
        },
        shape="derived",
        mirrors="Vulnerabilities: for each milestone of a product, the legacy and current identifier and the "
                "records that required the remap",
        phases=("product page with legacy identifiers: milestones, legacy and current identifiers",
                "search the product with deprecated identifiers, published window, every result page",
                "open every listed record: affected milestone and change history",
                "derive: per milestone the remapped records, their count, earliest remap and the pending ones"),
        derived=("remapped_records", "remap_count", "earliest_remap", "pending_remap"),
    )


def _search_steps(q: Query, vendors: dict[str, str]) -> list[Step]:
    steps: list[Step] = [{"tool": "goto", "args": {"url": SEARCH_URL}, "why": "open the search form"}]
    if q.keyword:
        steps.append({"tool": "fill", "args": {"target": {"label": "Keyword"}, "value": q.keyword},
                      "why": "keyword scope"})
    if q.include_deprecated:
        steps.append({"tool": "check", "args": {"target": {"label": "Include deprecated product identifiers"}},
                      "why": "old filings use the deprecated identifier"})
    if q.vendor:
        steps.append({"tool": "select", "args": {"target": {"label": "Vendor"}, "option": vendors[q.vendor]},
                      "why": "vendor scope"})
    if q.product:
        steps.append({"tool": "select", "args": {"target": {"label": "Product"}, "option": q.product},
                      "why": "product scope"})
    if q.severity:
        steps.append({"tool": "select", "args": {"target": {"label": "Severity"}, "option": q.severity},
                      "why": "severity filter"})
    steps += [
        {"tool": "select", "args": {"target": {"label": "Date type"}, "option": "Published"},
         "why": "the default date type is Last modified"},
        {"tool": "set_range", "args": {"start_target": {"label": "From date"}, "end_target": {"label": "To date"},
                                       "start": q.start, "end": q.end}, "why": "publication window"},
        {"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"},
    ]
    return steps


def walkthroughs(data: VulnData) -> dict[str, list[Step]]:
    c = choose(data)
    read_all: Step = {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"}
    history_steps: list[Step] = []
    listed = search(data, c.history_query)
    for index, vuln in enumerate(listed):
        if index and index % PAGE_SIZE == 0:
            history_steps.append({"tool": "click", "args": {"target": {"text": "Next >"}},
                                  "why": "the next result page"})
        history_steps += [
            {"tool": "click", "args": {"target": {"text": vuln.id}}, "why": "open the record's detail page"},
            {"tool": "read_table", "args": {"table": 4}, "why": "change history table"},
            {"tool": "extract_rows", "args": {
                "table": 4, "where": {"Field": "CVSS base score"},
                "columns": {"id": r"re:Record (OVR-\d{4}-\d{5})", "changed": "Date",
                            "old_score": "Old value", "new_score": "New value"}}, "why": "score revisions only"},
            {"tool": "back", "args": {}, "why": "return to the result list"},
        ]
    remap_steps: list[Step] = []
    for vuln in search(data, c.remap_query):
        remap_steps += [
            {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/detail/{vuln.id}"},
             "why": "the record's detail page"},
            {"tool": "extract_rows", "args": {
                "into": "history", "section": "Change history",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "day": "Date", "action": "Action",
                            "old": "Old value", "new": "New value"}}, "why": "every change of the record"},
        ]
    version = "CAST(split_part(v, '.', {}) AS INTEGER)"
    remap_sql = (
        "WITH vers AS (SELECT regexp_extract(summary, 'before ([0-9]+[.][0-9]+[.][0-9]+)', 1) AS v FROM records), "
        f"low AS (SELECT v FROM vers ORDER BY {version.format(1)}, {version.format(2)}, {version.format(3)} LIMIT 1) "
        "SELECT h.record_id, h.old AS old_identifier, h.day AS remapped_on, "
        "CAST(date_diff('day', CAST(r.published AS DATE), CAST(h.day AS DATE)) AS VARCHAR) AS days_to_remap, "
        "'before ' || (SELECT v FROM low) AS common_affected_bound "
        "FROM history h JOIN records r USING (record_id) WHERE h.action = 'Identifier remapped' "
        "ORDER BY h.day, h.record_id"
    )
    mq = c.milestone_query
    legacy = legacy_of(data, mq.product)
    assert legacy is not None
    milestone_steps: list[Step] = []
    for vuln in search(data, mq):
        milestone_steps += [
            {"tool": "goto", "args": {"url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/detail/{vuln.id}"},
             "why": "the record's detail page"},
            {"tool": "extract_rows", "args": {
                "into": "affected", "section": "Known affected products",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "identifier": "Identifier",
                            "milestone": "Milestone"}}, "why": "the record's milestone and filed identifier"},
            {"tool": "extract_rows", "args": {
                "into": "history", "section": "Change history",
                "columns": {"record_id": r"re:Record (OVR-\d{4}-\d{5})", "day": "Date", "action": "Action",
                            "old": "Old value", "new": "New value"}}, "why": "every change of the record"},
        ]
    milestone_sql = (
        "WITH rem AS (SELECT a.milestone, h.record_id, h.day FROM history h JOIN affected a USING (record_id) "
        f"WHERE h.action = 'Identifier remapped' AND h.old = '{legacy.id}' AND h.new = '{mq.product}'), "
        f"pending AS (SELECT milestone, count(*) AS n FROM affected WHERE identifier = '{legacy.id}' GROUP BY 1) "
        "SELECT m.milestone, CASE WHEN m.legacy LIKE 'cpe:%' THEN m.legacy ELSE 'NONE' END AS legacy_identifier, "
        "m.current AS current_identifier, "
        "coalesce((SELECT string_agg(record_id, ' ' ORDER BY record_id) FROM rem r WHERE r.milestone = m.milestone), "
        "'NONE') AS remapped_records, "
        "CAST((SELECT count(*) FROM rem r WHERE r.milestone = m.milestone) AS VARCHAR) AS remap_count, "
        "coalesce((SELECT min(day) FROM rem r WHERE r.milestone = m.milestone), 'NONE') AS earliest_remap, "
        "CAST(coalesce((SELECT n FROM pending p WHERE p.milestone = m.milestone), 0) AS VARCHAR) AS pending_remap "
        "FROM milestones m ORDER BY CAST(split_part(m.milestone, '.', 1) AS INTEGER)"
    )
    return {
        "offline_vulns_005": [
            {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "start page"},
            {"tool": "click", "args": {"target": {"text": "Product dictionary"}}, "why": "product identifiers"},
            {"tool": "click", "args": {"target": {"text": mq.product}}, "why": "the product's page"},
            {"tool": "check", "args": {"target": {"label": "Show legacy identifiers"}},
             "why": "legacy identifiers are hidden by default"},
            {"tool": "click", "args": {"target": {"text": "Show"}}, "why": "apply"},
            {"tool": "extract_rows", "args": {
                "into": "milestones", "section": "Milestones",
                "columns": {"milestone": "Milestone", "current": "Current identifier", "legacy": "Legacy identifier"}},
             "why": "every milestone with both identifiers"},
            *_search_steps(mq, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"into": "records", "columns": {"record_id": "ID", "product": "Product"}},
             "why": "every listed record"},
            *milestone_steps,
            *derive_then_finish(milestone_sql, "per milestone: remapped records, count, earliest remap, pending", "every record page read"),
        ],
        "offline_vulns_004": [
            *_search_steps(c.remap_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"into": "records", "columns": {
                "record_id": "ID", "published": "Published", "summary": "Summary"}}, "why": "every listed record"},
            *remap_steps,
            *derive_then_finish(remap_sql, "remap rows, days, common bound", "every record's history read"),
        ],
        "offline_vulns_001": [
            *_search_steps(c.deprecated_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {"columns": {"id": "ID", "published": "Published", "score": "Score"}},
             "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["published", "id"]}, "why": "all pages read"},
        ],
        "offline_vulns_002": [
            *_search_steps(c.history_query, data.vendors),
            *history_steps,
            {"tool": "finish", "args": {"order_by": ["changed", "id"]}, "why": "every detail page read"},
        ],
        "offline_vulns_003": [
            *_search_steps(c.date_type_query, data.vendors), read_all,
            {"tool": "extract_rows", "args": {
                "columns": {"id": "ID", "published": "Published", "weakness": "Weakness"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["published", "id"]}, "why": "all pages read"},
        ],
    }


SITE = Site(
    prefix=PREFIX, title="Vulnerability records", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
