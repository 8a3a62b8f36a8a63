"""The detail check: a plan that needs each listed result's own page had the results the answer uses opened.

What counts as opened (docs/graph_checks.md, "What counts as opened"): a listed result is opened when its own page was
opened from its row (`OpenedPage`, recorded when the browser showed it: set membership, graph/checks/listings.py) and,
for a phase of a derived answer, no other phase read that page (it held nothing of the kind read, or was the phase's
own), or when rows or facts were read, into the phase's table (any table while it read none of the list), on a page
under its link (rows discarded since do not count): the same path with any query
(`/item/7?year=2022`: the site's state travels in the query), a sub-page of it (`/item/7/history`), or a page
whose path or query names the link's key (its last path segment, or a query value, when that looks like an
identifier). Which results must be opened: every listed result, except, for a
derived answer, the results its SQL drops by the list's own values (graph/checks/list_filters.py): a list row that
no list-only part of the derivation uses needs no visit.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from graph.checks.failures import Failure, failure
from graph.checks.list_filters import CHECK_SECONDS, carried_conditions, kept_rows
from graph.checks.result_pages import pages_read
from graph.evidence.evidence_tables import ANSWER, WorkspaceError, computed_from, evidence_inputs, rows_used
from graph.state import Listing, OpenedPage, Phase, Plan
from graph.tools.agent_tools import MAX_URLS
from graph.tracking.state_reading import result_set_key

# The repair, in tools offered where it happens (graph/tools/offers.py): read_facts whenever a plan reads results' pages
# (it opens each URL itself, on any page); read_table / read_pdf on a page with a table / a PDF, and extract_rows
# after such a read. Not extract_rows alone: a result's page without a table (a PDF, a profile) does not offer it.
HOW_TO_OPEN = ("open each and read it: read_facts(url=[these links], into=a table) opens each page in turn; on a "
               "page with a table or a PDF, read_table or read_pdf, then extract_rows; one left out on purpose: "
               "finish(skip={link: why})")
_KEYLIKE = re.compile(r"\d|[-_.~]")  # an identifier: a digit or a joiner in it (a plain word names a section)
_SMALL_NUMBER = re.compile(r"^\d{1,4}$")  # a page number, a year: in too many URLs to name one item


def _key(token: str) -> str | None:
    token = unquote(token).strip().casefold()
    return token if len(token) >= 3 and _KEYLIKE.search(token) and not _SMALL_NUMBER.match(token) else None


def _link_keys(url: str) -> set[str]:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    keys = {_key(segments[-1])} if segments else set()
    keys |= {_key(v) for _, v in parse_qsl(parts.query)}
    return {k for k in keys if k}


class Opened:
    """The pages read (their URLs), asked whether a listed link is among them in the sense above. A link whose
    query names the item (`/item?id=7`: every item has the same path) is opened only by a read holding that query
    too (any more parameters allowed)."""

    def __init__(self, urls: Iterable[str | None]) -> None:
        self.pages: dict[tuple[str, str], list[set[tuple[str, str]]]] = {}
        self.tokens: set[tuple[str, str]] = set()
        for url in urls:
            if not url:
                continue
            parts = urlsplit(url)
            query = parse_qsl(parts.query)
            self.pages.setdefault((parts.netloc, parts.path.rstrip("/")), []).append(set(query))
            self.tokens |= {(parts.netloc, unquote(s).casefold()) for s in parts.path.split("/") if s}
            self.tokens |= {(parts.netloc, v.strip().casefold()) for _, v in query}

    @classmethod
    def read_on(cls, rows: Iterable[dict[str, Any]]) -> Opened:
        """The pages evidence `rows` were read on."""
        return cls(r["provenance"]["url"] for r in rows)

    def __contains__(self, link: object) -> bool:
        if not isinstance(link, str):
            return False
        parts = urlsplit(link)
        path, wanted = parts.path.rstrip("/"), set(parse_qsl(parts.query))
        for (host, read), queries in self.pages.items():
            if host == parts.netloc and (read == path or read.startswith(path + "/")) and any(
                    wanted <= query for query in queries):
                return True
        return any((parts.netloc, key) in self.tokens for key in _link_keys(link))


class Seen:
    """The listed links counted as opened: those whose page was opened from their row (`OpenedPage.link`), and
    those `reads` opened (rows read on a page under the link)."""

    def __init__(self, links: Iterable[str], reads: Container[str] | None = None) -> None:
        self.links = set(links)
        self.reads = reads

    def __contains__(self, link: object) -> bool:
        return link in self.links or (self.reads is not None and link in self.reads)


def check_details(plan: Plan | None, listings: list[Listing], opened: list[OpenedPage],
                  skipped: dict[str, str] | None = None, notes: list[str] | None = None,
                  tables: dict[str, Any] | None = None) -> list[Failure]:
    """A plan that needs each result's own page: every row link of the list it works through was opened from its
    row or read (into any evidence table), or declared skipped on purpose (`finish(skip=...)`: noted with the
    model's reason)."""
    if plan is None or not plan.detail_pages or not listings:
        return []
    seen = Seen((o["link"] for o in opened), read_pages(tables or {}))
    links = detail_list(listings, seen)
    return _unopened(links, _declared([link for link in links if link not in seen], skipped, notes))


def _declared(missing: list[str], skipped: dict[str, str] | None, notes: list[str] | None) -> list[str]:
    """The links still missing once those the model declared skipped (link -> why) are set aside; each set
    aside is said in `notes` with its reason (the report shows it)."""
    if not skipped or not missing:
        return missing
    left: list[str] = []
    for link in missing:
        reason = next((why for url, why in skipped.items() if link in Opened([url])), None)
        if reason is None:
            left.append(link)
        elif notes is not None and (note := f"[details] skipped on purpose: {link} ({reason})") not in notes:
            notes.append(note)
    return left


def _unopened(links: list[str], missing: list[str], table: str | None = None) -> list[Failure]:
    """The `[details]` failure naming the listed links not opened (`missing`), or none."""
    if not missing:
        return []
    # as many as one read_facts call opens: the model can act on every link it is shown (the rest follow)
    shown = ", ".join(missing[:MAX_URLS]) + (f" and {len(missing) - MAX_URLS} more, named once these are read"
                                             if len(missing) > MAX_URLS else "")
    return [failure("details", (
        f"{len(missing)} of {len(links)} listed result(s) were not opened: {shown}; {HOW_TO_OPEN}"),
        table=table, links=missing)]


def detail_list(listings: list[Listing], opened: Container[str], *, latest_opened: bool = False) -> list[str]:
    """The row links (every page) of the list whose items must each be opened: the latest result list (with
    `latest_opened`, the latest one some of whose items were opened), unless a page's table of item links had
    more of its items opened, two at least: then that is the list the agent went through, read as links and
    never as a result list (a category page listing its members)."""
    def links(result_set: str, kind: str) -> list[str]:
        return list(dict.fromkeys(link for item in listings if item["result_set"] == result_set
                                  and item.get("kind", "results") == kind for link in item["row_links"]))

    def hits(row_links: list[str]) -> int:
        return sum(link in opened for link in row_links)

    results = [item for item in listings if item.get("kind", "results") == "results"]
    chosen: list[str] = []
    if results:
        latest = next((i for i in reversed(results) if hits(i["row_links"])), results[-1]) if latest_opened \
            else results[-1]
        chosen = links(latest["result_set"], "results")
    link_lists = [links(key, "links") for key in dict.fromkeys(i["result_set"] for i in listings
                                                                if i.get("kind") == "links")]
    best = max(link_lists, key=hits, default=[])
    return best if hits(best) >= 2 and hits(best) > hits(chosen) else chosen


def _seen_before(listings: list[Listing], rows: list[dict[str, Any]]) -> list[Listing]:
    """The lists shown before the table's first read: a list seen only afterwards (a later search that happens
    to list a page read earlier) cannot be the one the agent went through."""
    steps = [r["provenance"]["step"] for r in rows]
    first = min(steps, default=None)
    return [item for item in listings if first is None or item["step"] <= first]


def read_pages(tables: dict[str, Any]) -> Opened:
    """The pages rows or facts were read on, into any evidence table: a result's page read into another table
    than its phase's (the planner's table names are blind) was still read. Rows discarded are gone from their
    table, so a discarded read opens nothing (the agent judged it wrong: a drifted state, a wrong page)."""
    return Opened.read_on(r for table in tables.values() if not table["derived"] for r in table["rows"])


def phase_reads(rows: list[dict[str, Any]], listings: list[Listing], tables: dict[str, Any]) -> tuple[list[str], Opened]:
    """The listed links a detail phase's rows went through (of the lists shown before its first read), and the
    reads that open them: its own once it read some of them (so a result one phase read does not cover the same
    result another phase skipped), else reads into any table (the phase's pages read under another table's
    name: the planner's table names are blind). The check and the phase's progress line count alike."""
    own = Opened.read_on(rows)
    links = detail_list(_seen_before(listings, rows), own, latest_opened=True)
    return links, own if any(link in own for link in links) else read_pages(tables)


def check_input_details(plan: Plan | None, tables: dict[str, Any], inputs: list[str],
                        listings: list[Listing], opened: list[OpenedPage] | None = None,
                        skipped: dict[str, str] | None = None, notes: list[str] | None = None,
                        lineage: list[str] | None = None) -> list[Failure]:
    """A phase that reads each listed result's own page: every row link of that list the answer uses was opened:
    read by the phase (`phase_reads`), or its page opened from its row with no other phase reading it
    (`opened_for`: a result opened that holds nothing of the kind read is opened; a played run was refused for
    three such), or declared skipped with a reason. The list is the one the phase's table (or the tables standing
    in for it) went through. With `lineage` (the answer's evidence tables and those the plan's phases read), a list
    no table of it read is not the answer's: its unopened results are a note (`_list_read_by`)."""
    if plan is None or not listings:
        return []
    failures: list[Failure] = []
    siblings = _same_phase(plan, tables, listings)
    for name in detail_tables(plan, tables, listings):
        if name not in inputs:
            continue
        same = siblings.get(name, set())  # the phase's reads under its other stand-ins' names are its own
        rows = [r for n in [name, *sorted(same)] for r in tables[n]["rows"]]
        links, seen = phase_reads(rows, listings, tables)
        shown = opened_for(name, opened or [], tables, same)
        missing = [link for link in links if link not in seen and link not in shown]
        if missing:
            dropped = (dropped_links(tables, listings, notes) | filtered_out_links(tables, listings)
                       | carried_links(tables, listings, name, notes))
            missing = [link for link in missing if link not in dropped]
        if missing and lineage is not None and not _list_read_by(links, listings, tables, lineage):
            if notes is not None:
                notes.append(f"[details] table {name}: {len(missing)} of {len(links)} listed result(s) not opened "
                             f"({', '.join(missing[:MAX_URLS])}); the answer reads no table of that list, so the "
                             "results it uses are those opened (noted, not refused)")
            continue
        failures += _unopened(links, _declared(missing, skipped, notes), table=name)
    return failures


def _list_read_by(links: list[str], listings: list[Listing], tables: dict[str, Any], names: list[str]) -> bool:
    """Some table of `names` (the answer's lineage, the phases' tables) holds rows read on the list these links come
    from: only then
    are the answer's results that list's rows (issue 37 stage 4: the results the answer uses are those of the
    listing rows its lineage reads). A list looked at and picked from by eye leaves the answer's results those
    it opened; a missing one is then no evidence of a result the answer needs."""
    wanted = set(links)
    lists = [item for item in listings if wanted & set(item["row_links"])]
    keys = {item["result_set"] for item in lists} | {_page(item["url"]) for item in lists}
    return any({r["provenance"].get("result_set"), result_set_key(r["provenance"]["url"]),
                _page(r["provenance"]["url"])} & keys - {""} for name in names if name in tables for r in tables[name]["rows"])


def _page(url: str) -> str:
    return url.split("#")[0].rstrip("/")


def opened_for(name: str, opened: list[OpenedPage], tables: dict[str, Any], siblings: set[str] | None = None) -> set[str]:
    """The listed links whose page, opened from their row, counts for table `name`'s phase: a page no other table
    read rows on. A page another phase read is that phase's: this one skipped it (a phase is asked for a result
    page it never read, though another phase showed it), unless it read there too (`phase_reads`). A table
    standing in for the same phase (`siblings`: the page's flow section read into one, its level section into
    another) is this phase's own read, not another phase's."""
    others = {_page(r["provenance"]["url"]) for other, table in tables.items() if other != name
              and other not in (siblings or set())
              and not table["derived"] for r in table["rows"] if not r.get("empty")}
    return {o["link"] for o in opened if _page(o["url"]) not in others}


def detail_tables(plan: Plan, tables: dict[str, Any], listings: list[Listing]) -> list[str]:
    """The tables read from listed results' own pages as a detail phase says: each such phase's table, or, when
    the agent read those pages into tables of its own naming, those (`stand_ins`)."""
    names: list[str] = []
    for phase in plan.phases:
        if phase.detail_pages:
            names += [phase.into] if phase.into in tables else stand_ins(plan, phase, tables, listings)
    return list(dict.fromkeys(names))


def _same_phase(plan: Plan, tables: dict[str, Any], listings: list[Listing]) -> dict[str, set[str]]:
    """Each table standing in for a detail phase -> the other tables standing in for that same phase."""
    groups = [stand_ins(plan, phase, tables, listings) for phase in plan.phases if phase.detail_pages]
    return {name: set(group) - {name} for group in groups for name in group}


def stand_ins(plan: Plan, phase: Phase, tables: dict[str, Any], listings: list[Listing], *,
              answer_only: bool = True) -> list[str]:
    """For a detail phase whose own table was never read: the evidence tables the answer is computed from, named by
    no phase, whose rows were read on the listed results' own pages. They are what the phase read, under the
    agent's names (a species page read into `types` and `synonyms` for a phase named `species_pages`). Before
    the answer is derived (`answer_only` false: a phase's progress), any evidence table counts."""
    if phase.into in tables or not phase.detail_pages:
        return []
    named = {p.into for p in plan.phases}
    found: list[str] = []
    candidates = evidence_inputs(tables) if answer_only else [n for n, t in tables.items() if not t["derived"]]
    for name in candidates:
        table = tables[name]
        if name in named:
            continue
        read = Opened.read_on(table["rows"])
        if any(link in read for link in detail_list(listings, read, latest_opened=True)):
            found.append(name)
    return found


def _norm(text: Any) -> str:
    return " ".join(str(text or "").split()).casefold()


def _lineage_sql(tables: dict[str, Any]) -> list[str]:
    """The SQL of the answer and of every derived table it was computed from."""
    return [tables[n]["sql"] or "" for n in [ANSWER, *computed_from(tables)] if n in tables and tables[n]["derived"]]


def _cells(listings: list[Listing]) -> list[tuple[str, set[str]]]:
    """(link, its row's cells normalised) of each listed row that shows its cells."""
    return [(link, {_norm(c) for c in row}) for item in listings
            for link, row in zip(item["row_links"], item.get("row_cells") or [], strict=False)]


def _row_link(values: Iterable[Any], cells: list[tuple[str, set[str]]], every_cell: set[str]) -> str | None:
    """The one listed link a table row stands for (its values among that row's cells), else None."""
    known = {_norm(v) for v in values} & every_cell
    matches = {link for link, row_cells in cells if known and known <= row_cells}
    return matches.pop() if len(matches) == 1 else None


def dropped_links(tables: dict[str, Any], listings: list[Listing], notes: list[str] | None = None) -> set[str]:
    """Listed links the derived answer drops by a value the list shows: each of the list-table rows that stand
    for the link (matched by the list's cells) is not used by the derivation (graph/checks/list_filters.py), and
    the link has no row that is used. A list table is an evidence table with rows read on a listing's page. When
    the derivation's use of a list table's rows cannot be determined, its rows count as dropped (said in
    `notes`): nothing is refused without evidence."""
    cells = _cells(listings)
    if not cells:
        return set()
    list_pages = {_norm(item["url"].split("#")[0]) for item in listings}
    sqls = _lineage_sql(tables)
    every_cell = set().union(*(c for _, c in cells))
    kept_links: set[str] = set()
    dropped: set[str] = set()
    for name, table in tables.items():
        if table["derived"] or not any(_norm(r["provenance"]["url"]) in list_pages for r in table["rows"]):
            continue
        use = kept_rows(sqls, name, table)
        note = (f"[details] which rows of {name} the answer uses is unknown ({use.unknown}): its listed results "
                "were not asked for")
        if use.unknown is not None and notes is not None and note not in notes:  # refusals need evidence
            notes.append(note)
        if use.kept is None and use.unknown is None:
            continue
        kept = use.kept or frozenset()
        for index, row in enumerate(table["rows"]):
            link = None if row.get("empty") else _row_link((row["values"].get(c) for c in table["columns"]),
                                                           cells, every_cell)
            if link is not None:
                (kept_links if index in kept else dropped).add(link)
    return dropped - kept_links


def carried_links(tables: dict[str, Any], listings: list[Listing], detail: str, notes: list[str] | None = None
                  ) -> set[str]:
    """Listed links the derivation drops by its own condition on the detail table, read on each link's list row
    (`list_filters.carried_conditions`: `WHERE versions >= 2` over the pages read, where the list shows a Versions
    column too). Only where every column the condition reads holds on the list what it holds on the page, for
    each result the agent opened: then the list row is evidence of what the page would say, and a result its row
    rules out is not one the answer needs (a played model was refused for five such)."""
    cells = _cells(listings)
    if not cells or detail not in tables:
        return set()
    list_pages = {_norm(item["url"].split("#")[0]) for item in listings}
    every_cell = set().union(*(c for _, c in cells))
    pages = tables[detail]
    on_page = {c.casefold(): c for c in pages["columns"]}
    sqls = _lineage_sql(tables)
    dropped: set[str] = set()
    for name, table in tables.items():
        if name == detail or table["derived"] or not any(_norm(r["provenance"]["url"]) in list_pages
                                                          for r in table["rows"]):
            continue
        on_list = {c.casefold(): c for c in table["columns"]}
        carried = carried_conditions(sqls, detail, name, set(on_list) & set(on_page))
        if not carried:
            continue
        columns = set().union(*(c.columns for c in carried))
        links = {i: _row_link((r["values"].get(c) for c in table["columns"]), cells, every_cell)
                 for i, r in enumerate(table["rows"]) if not r.get("empty")}
        pairs = [(table["rows"][i]["values"], page["values"]) for i, link in links.items() if link is not None
                 for page in pages["rows"] if not page.get("empty") and link in Opened([page["provenance"]["url"]])]
        if not pairs or any(_norm(listed.get(on_list[c])) != _norm(read.get(on_page[c]))
                            for listed, read in pairs for c in columns):
            if pairs and notes is not None:
                notes.append(f"[details] {name} and {detail} disagree on {', '.join(sorted(columns))} for a result "
                             "opened: its list rows are not taken for what their pages say")
            continue
        try:
            kept = set(rows_used({name: table}, name, [c.sql for c in carried], seconds=CHECK_SECONDS))
        except WorkspaceError:
            continue
        dropped |= {link for i, link in links.items() if link is not None and i not in kept}
    return dropped


def filtered_out_links(tables: dict[str, Any], listings: list[Listing]) -> set[str]:
    """Listed links the agent left out of its list table by the list's own values: a read of that listing's page
    with a `where` filter (`ReadRecord.filtered`) took some rows, and no row of any such table stands for the link.
    The answer reads the list table, not the listing, so those results are not among those it uses (a played run
    was refused for two stations its `where River=...` had rightly left out). A row that stands for no one link
    leaves the listing as it is: which results were taken is then unknown."""
    filtered_pages = {_norm(str(read.get("url", "")).split("#")[0]) for table in tables.values()
                      if not table["derived"] for read in table.get("reads") or [] if read.get("filtered")}
    out: set[str] = set()
    for item in listings:
        page = _norm(item["url"].split("#")[0])
        cells = _cells([item])
        if page not in filtered_pages or not cells:
            continue
        every_cell = set().union(*(c for _, c in cells))
        taken = [_row_link(row["values"].values(), cells, every_cell) for table in tables.values()
                 if not table["derived"] for row in table["rows"]
                 if not row.get("empty") and _norm(row["provenance"]["url"].split("#")[0]) == page]
        if taken and None not in taken:
            out |= {link for link, _ in cells} - set(taken)
    return out


def switch_off_refusal(old: Plan, new: Plan, *, tables: dict[str, Any], listings: list[Listing],
                       opened: list[OpenedPage]) -> str | None:
    """Why a plan revision that stops needing results' own pages is refused, or None. Switching the need off is
    a plan correction while no listed result was opened (the list holds what the answer needs); once the agent
    has opened some, it would only hide the ones it left out: refused while the check fails."""
    failures: list[Failure] = []
    if old.detail_pages and not new.detail_pages and listings:
        seen = Seen((o["link"] for o in opened), read_pages(tables))
        links = detail_list(listings, seen)
        if any(link in seen for link in links):
            failures += check_details(old, listings, opened, tables=tables)
    for phase in old.phases:
        still = new.phase_for(phase.into)
        if phase.detail_pages and not (still and still.detail_pages) and phase.into in tables:
            failures += check_input_details(old, tables, [phase.into], listings, opened)
    if not failures:
        return None
    return ("revise_plan refused: it stops requiring the listed results' own pages while results the answer "
            f"uses are not opened ({'; '.join(f['message'] for f in failures)}). A result the answer drops by a "
            "value the list shows needs no visit once the derive's SQL drops it (WHERE over the list table)")


def phase_progress(phase: Phase, tables: dict[str, Any], listings: list[Listing]) -> str:
    """How far a phase's read is, for the actor's plan lines: a phase that reads each listed result's page counts
    the list's results opened ("3 of 12 listed results opened": which of them the answer needs is the model's to say,
    and the detail check asks only for those); another counts its result pages when the site numbers them,
    else says it was read. Empty while nothing was read into its table."""
    table = tables.get(phase.into)
    if phase.detail_pages:
        names = [phase.into] if table else stand_ins(Plan(phases=[phase]), phase, tables, listings, answer_only=False)
        rows = [r for name in names for r in tables[name]["rows"]]
        links, seen = phase_reads(rows, listings, tables) if rows else ([], Opened([]))
        if links:
            return f"{sum(link in seen for link in links)} of {len(links)} listed results opened"  # a fact, not a quota
        return f"{len({r['provenance']['url'] for r in rows})} pages read" if rows else ""
    if not table or not table["rows"]:
        return ""
    covered, pages = pages_read(table["reads"])
    if pages and sum(pages.values()) > 1:
        done = sum(len(covered[k] & set(range(1, n + 1))) for k, n in pages.items())
        return f"{done} of {sum(pages.values())} pages read"
    return "read"
