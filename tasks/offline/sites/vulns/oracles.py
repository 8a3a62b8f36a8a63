"""The vulnerability site's tasks: each search chosen from the data, its oracle rows and both record wordings."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, record_pair
from tasks.offline.sites.vulns.data import (
    DOMAIN,
    FAMILY,
    PAGE_SIZE,
    PREFIX,
    Change,
    Milestone,
    Vuln,
    VulnData,
    fixed_before,
    legacy_of,
    milestone_of,
    product_milestones,
)
from tasks.offline.sites.vulns.search import Query, search

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
