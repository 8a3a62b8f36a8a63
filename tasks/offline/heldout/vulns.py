"""Held-out vulns task: a vendor's records of one year grouped by weakness (an aggregation over every page).

New against the suite: a vendor-wide scope that must include deprecated identifiers, published dates, every
Next page, then a group-by with a threshold, a maximum and an arg-max with tie-breaks.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from tasks.offline.registry import Step
from tasks.offline.sites._first_fit import first_fit
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish
from tasks.offline.sites.vulns.data import DOMAIN, FAMILY, PREFIX, Vuln, VulnData
from tasks.offline.sites.vulns.oracles import SEARCH_URL
from tasks.offline.sites.vulns.scripted import _search_steps
from tasks.offline.sites.vulns.search import Query, search

TASK_ID = "offline_heldout_vulns_001"
MIN_RECORDS = 4  # a weakness is reported when the vendor has at least this many records of it


def _groups(found: list[Vuln]) -> dict[str, list[Vuln]]:
    groups: dict[str, list[Vuln]] = defaultdict(list)
    for v in found:
        groups[v.weakness].append(v)
    return {w: vs for w, vs in groups.items() if len(vs) >= MIN_RECORDS}


def _cwe(weakness: str) -> int:
    return int(weakness.split("-")[1])


def rows_of(found: list[Vuln]) -> list[tuple[str, ...]]:
    out = []
    for weakness, vs in _groups(found).items():
        top = min(vs, key=lambda v: (-v.score, v.published, v.id))
        out.append((weakness, str(len(vs)), f"{top.score:.1f}", top.id))
    return sorted(out, key=lambda r: (-int(r[1]), _cwe(r[0])))


def choose_query(data: VulnData) -> Query:
    """A vendor with deprecated identifiers whose year spans three or more Next pages; the grouped answer
    changes without the deprecated identifiers and under the default Last-modified dates."""
    def fits(q: Query) -> bool:
        rows = rows_of(search(data, q))
        plain = rows_of(search(data, Query(vendor=q.vendor, date_type="published", start=q.start, end=q.end)))
        modified = rows_of(search(data, Query(vendor=q.vendor, include_deprecated=True, start=q.start, end=q.end)))
        counts = Counter(v.weakness for v in search(data, q))
        tied = [r[0] for r in rows if [x[1] for x in rows].count(r[1]) > 1]
        return (len(search(data, q)) > 20 and 3 <= len(rows) <= 8 and rows != plain and rows != modified
                and MIN_RECORDS - 1 in counts.values()  # a weakness just under the threshold
                and sorted(tied, key=_cwe) != sorted(tied))  # tied counts: numeric CWE order differs from text

    candidates = (Query(vendor=vendor, include_deprecated=True, date_type="published", start=f"{y}-01-01",
                        end=f"{y}-12-31") for vendor in ("corvid", "arcturus", "dunmore") for y in (2022, 2021, 2023))
    return first_fit(candidates, fits, "vulns held-out vendor year")


def draft(data: VulnData) -> TaskDraft:
    q = choose_query(data)
    vendor, year = data.vendors[q.vendor], q.start[:4]
    return TaskDraft(
        task_id=TASK_ID, domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the vulnerability search, choose vendor {vendor} with 'Include deprecated product identifiers' "
            f"ticked, date type Published and the range {q.start} to {q.end}; read every result page (Next). Group "
            f"the records by their Weakness (CWE id) and keep the weaknesses with at least {MIN_RECORDS} records. "
            f"For each report the weakness, the number of records, the highest score and the record with that "
            f"score (on equal scores the earlier Published date, then the smaller record id)."
        ),
        goal_instruction=(
            f"Which weaknesses account for at least {MIN_RECORDS} of the vulnerability records published in "
            f"{year} that affect any {vendor} product, old product identifiers included? For each, how many "
            f"records, the highest score, and which record has it (ties: published first, then smaller id)?"
        ),
        columns=("weakness", "records", "max_score", "top_record"),
        rows=rows_of(search(data, q)),
        sorting="records descending, then the CWE number ascending as a number (CWE-89 before CWE-352)",
        gates=[f"vendor = {vendor} with deprecated identifiers included (default: excluded)",
               f"date type = Published (default: Last modified), {q.start}..{q.end}", "every result page (Next)"],
        data_dependency="Every result page supplies weakness, score, published date and id of each record; the "
                        "answer is aggregated from all of them.",
        control_dependency="The any-product criterion decides the deprecated-identifier box; the publication "
                           "criterion decides the date type; the Next link decides how many pages to read.",
        inclusion=[f"a product of {vendor}, under a current or a deprecated identifier",
                   f"published {q.start}..{q.end}", f"weaknesses with >= {MIN_RECORDS} records"],
        exclusion=["records only modified (not published) in the window",
                   f"weaknesses with fewer than {MIN_RECORDS} records"],
        traps=["criterion mismatch: without deprecated identifiers the records still filed under the vendor's old "
               "product identifiers are missing, and the counts change",
               "drift: the date type defaults to Last modified, which lists another set",
               "dependency not closed: results continue over several Next pages",
               f"near miss: a weakness with {MIN_RECORDS - 1} records, just under the threshold",
               "tie-break: weaknesses with equal counts are ordered by the CWE number as a number (CWE-89 before "
               "CWE-352), not as text"],
        column_notes={
            "records": "integer number of the vendor's records of that weakness in the window",
            "max_score": "the highest score among them as shown, e.g. 9.8",
            "top_record": "the record with max_score (ties: earlier Published date, then smaller id)",
        },
        shape="derived",
        mirrors="Vulnerabilities: a vendor-wide search with deprecated identifiers over a publication year, "
                "grouped by weakness with a count threshold, a maximum and its arg-max",
        phases=("search the vendor with deprecated identifiers, Published window; every result page",
                "derive: group by weakness, keep >= the threshold, count, max score, top record with tie-breaks"),
        derived=("records", "max_score", "top_record"),
    )


def walkthrough(data: VulnData) -> list[Step]:
    q = choose_query(data)
    sql = (
        "WITH r AS (SELECT id, weakness, published, num(score) AS s, score FROM listed), "
        f"g AS (SELECT weakness, count(*) AS n FROM r GROUP BY weakness HAVING count(*) >= {MIN_RECORDS}), "
        "t AS (SELECT weakness, id, score FROM r QUALIFY row_number() OVER (PARTITION BY weakness "
        "ORDER BY s DESC, published, id) = 1) "
        "SELECT g.weakness, CAST(g.n AS VARCHAR) AS records, t.score AS max_score, t.id AS top_record "
        "FROM g JOIN t USING (weakness) "
        "ORDER BY g.n DESC, CAST(split_part(g.weakness, '-', 2) AS INTEGER)"
    )
    return [
        *_search_steps(q, data.vendors),
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "follow Next to the end"},
        {"tool": "extract_rows", "args": {"into": "listed", "columns": {
            "id": "ID", "published": "Published", "score": "Score", "weakness": "Weakness"}},
         "why": "every listed record"},
        *derive_then_finish(sql, "group by weakness, threshold, max score and its record"),
    ]


__all__ = ["PREFIX", "TASK_ID", "draft", "walkthrough"]
