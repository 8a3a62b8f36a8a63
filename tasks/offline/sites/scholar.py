"""Scholarly archive (arXiv / Europe PMC style): advanced search whose whole state lives in the URL.

Mechanics: term field (Title / Abstract / All fields), classification with an "include cross-listed" box
that is ON by default, a date filter on the *latest version* by default (original submission on request),
date range, results per page (10 by default), sort, page-number pagination; record pages with primary
category, cross-lists, submission history v1..vN, comments, journal reference, DOI, withdrawn notices;
full-text HTML with result tables on some records; a yearly review series (its own category) whose full text,
per version (`/html/<id>v<n>`, linked from the submission history), lists registered benchmarks by registry id.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tasks.offline.app import render
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step
from tasks.offline.sites import _census as census
from tasks.offline.sites._record_pair import TaskDraft, derive_then_finish, record_pair

PREFIX = "scholar"
FAMILY = "Scholarly archives"
DOMAIN = "OFFLINE_SCHOLAR"
PAPER_COUNT = 2000
PAGE_SIZES = (10, 25, 50)
FIRST_DAY, LAST_V1_DAY, LAST_DAY = date(2018, 1, 1), date(2024, 6, 30), date(2024, 12, 31)

CATEGORIES = {
    "cs.LG": "Machine Learning",
    "cs.CL": "Computation and Language",
    "cs.CV": "Computer Vision",
    "stat.ML": "Machine Learning (Statistics)",
    "math.OC": "Optimization and Control",
    "q-bio.NC": "Neurons and Cognition",
    "eess.SP": "Signal Processing",
    "physics.optics": "Optics",
}
# Categories the search offers: the research categories above plus the review series' own (kept apart so the
# research papers' random categories, and the tasks chosen over them, do not depend on it).
ALL_CATEGORIES = {**CATEGORIES, census.CATEGORY[0]: census.CATEGORY[1]}
METHODS = [
    "spiking", "kernel", "transformer", "convex", "sparse", "diffusion", "graph", "bayesian",
    "contrastive", "recurrent",
]
TOPICS = [
    "networks", "inference", "estimation", "models", "representations", "control", "regression", "filtering",
]
SETTINGS = [
    "cortical recordings", "speech corpora", "satellite imagery", "power grids", "clinical notes",
    "photonic circuits", "robot arms", "gene panels", "traffic sensors", "protein structures",
]
ABSTRACT_TERMS = [
    "benchmark", "calibration", "robustness", "interpretability", "scalability", "uncertainty",
    "generalization", "compression",
]
SURNAMES = [
    "Abara", "Bello", "Castell", "Dunne", "Eklund", "Farrow", "Gorski", "Haldane", "Ibarra", "Jovanic",
    "Kaur", "Lindqvist", "Moreau", "Nakata", "Okafor", "Petrov", "Quist", "Rasmussen", "Sato", "Tembo",
]
JOURNALS = ["J. Synth. Learn.", "Trans. Offline Signal Proc.", "Ann. Appl. Optim.", "Neural Comp. Lett."]


@dataclass(frozen=True)
class Version:
    number: int
    day: date
    size_kb: int


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    authors: tuple[str, ...]
    abstract: str
    primary: str
    cross: tuple[str, ...]
    versions: tuple[Version, ...]
    comments: str
    journal_ref: str
    doi: str
    withdrawn: bool
    fulltext: tuple[tuple[str, str, str], ...]  # (dataset, metric, score) rows of Table 1

    @property
    def first_day(self) -> date:
        return self.versions[0].day

    @property
    def latest_day(self) -> date:
        return self.versions[-1].day


@dataclass(frozen=True)
class ScholarData:
    papers: tuple[Paper, ...]  # newest original submission first
    reviews: tuple[census.Review, ...] = ()  # the yearly review series (their papers are among `papers`)

    def by_id(self) -> dict[str, Paper]:
        return {p.id: p for p in self.papers}


def _paper_text(rng: random.Random) -> tuple[str, str]:
    m1, m2 = rng.sample(METHODS, 2)
    title = f"{m1.capitalize()} {rng.choice(TOPICS)} for {rng.choice(SETTINGS)}"
    if rng.random() < 0.45:
        title = f"{m1.capitalize()} and {m2} {rng.choice(TOPICS)} for {rng.choice(SETTINGS)}"
    terms = rng.sample(ABSTRACT_TERMS, 2)
    method = rng.choice(METHODS)
    abstract = (
        f"We study {method} {rng.choice(TOPICS)} applied to {rng.choice(SETTINGS)}. "
        f"Our analysis focuses on {terms[0]} and {terms[1]}, and we report results on {rng.randrange(2, 9)} datasets."
    )
    return title, abstract


def build(seed: int) -> ScholarData:
    rng = random.Random(seed * 7 + 1)
    codes = list(CATEGORIES)
    span = (LAST_V1_DAY - FIRST_DAY).days
    drafts = []
    for _ in range(PAPER_COUNT):
        first = FIRST_DAY + timedelta(days=rng.randrange(span + 1))
        drafts.append((first, rng.random()))
    drafts.sort()
    per_month: dict[str, int] = {}
    papers: list[Paper] = []
    for first, _ in drafts:
        month = f"{first.year % 100:02d}{first.month:02d}"
        per_month[month] = per_month.get(month, 0) + 1
        pid = f"{month}.{per_month[month] * 7 + rng.randrange(7):05d}"
        title, abstract = _paper_text(rng)
        primary = rng.choice(codes)
        cross = tuple(sorted(rng.sample([c for c in codes if c != primary], rng.choice([0, 0, 1, 1, 2]))))
        versions = [Version(1, first, rng.randrange(120, 4000))]
        for number in range(2, 1 + rng.choices([1, 2, 3, 4], weights=[45, 30, 17, 8])[0]):
            day = versions[-1].day + timedelta(days=rng.randrange(20, 420))
            if day > LAST_DAY:
                break
            versions.append(Version(number, day, rng.randrange(120, 4000)))
        withdrawn = len(versions) > 1 and rng.random() < 0.06
        journal = ""
        if rng.random() < 0.35:
            journal = f"{rng.choice(JOURNALS)} {rng.randrange(3, 40)} ({versions[-1].day.year}) {rng.randrange(1, 900)}"
        doi = f"10.5555/sgr.{pid}" if journal else ""
        fulltext: tuple[tuple[str, str, str], ...] = ()
        if rng.random() < 0.2:
            fulltext = tuple(
                (f"{rng.choice(SETTINGS).title()} {chr(65 + i)}", rng.choice(["accuracy", "F1", "RMSE"]),
                 f"{rng.uniform(0.5, 0.99):.3f}")
                for i in range(rng.randrange(2, 5))
            )
        papers.append(Paper(
            id=pid, title=title, abstract=abstract,
            authors=tuple(f"{chr(65 + rng.randrange(26))}. {s}" for s in rng.sample(SURNAMES, rng.randrange(1, 4))),
            primary=primary, cross=cross, versions=tuple(versions),
            comments="This paper has been withdrawn by the authors" if withdrawn
            else f"{rng.randrange(6, 40)} pages, {rng.randrange(1, 12)} figures",
            journal_ref=journal, doi=doi, withdrawn=withdrawn, fulltext=fulltext,
        ))
    reviews, series_papers = census.build_series(seed, {p.id for p in papers})
    papers += [_series_paper(p) for p in series_papers]
    papers.sort(key=lambda p: (p.first_day, p.id), reverse=True)
    return ScholarData(tuple(papers), tuple(reviews))


def _series_paper(p: census.CensusPaper) -> Paper:
    versions = tuple(Version(n, day, 700 + 53 * n) for n, day in enumerate(p.days, 1))
    return Paper(id=p.paper_id, title=p.title, authors=p.authors, abstract=p.abstract, primary=census.CATEGORY[0],
                 cross=(), versions=versions, comments=p.comments, journal_ref="", doi="", withdrawn=False,
                 fulltext=())


# ---------------------------------------------------------------- search


FIELDS = {"all": "All fields", "title": "Title", "abstract": "Abstract"}
BASES = {"latest": "Latest version", "original": "Original submission (v1)"}
ORDERS = {"newest": "Newest first", "oldest": "Oldest first"}


@dataclass(frozen=True)
class Query:
    terms: str = ""
    field: str = "all"
    category: str = ""
    cross: bool = True  # include cross-listed papers (the default scope)
    basis: str = "latest"
    start: str = ""
    end: str = ""
    size: int = PAGE_SIZES[0]
    order: str = "newest"
    page: int = 1

    @classmethod
    def from_params(cls, params: QueryParams) -> Query:
        size = params.get("size", "")
        page = params.get("page", "")
        cross_values = params.getlist("cross")
        return cls(
            terms=params.get("terms", "").strip(),
            field=params.get("field", "all") if params.get("field") in FIELDS else "all",
            category=params.get("category", "") if params.get("category") in ALL_CATEGORIES else "",
            cross=(not cross_values) or "1" in cross_values,
            basis="original" if params.get("basis") == "original" else "latest",
            start=params.get("from", ""),
            end=params.get("to", ""),
            size=int(size) if size.isdigit() and int(size) in PAGE_SIZES else PAGE_SIZES[0],
            order="oldest" if params.get("order") == "oldest" else "newest",
            page=max(1, int(page)) if page.isdigit() else 1,
        )

    @property
    def active(self) -> bool:
        return bool(self.terms or self.category or self.start or self.end)

    def params(self, **changes: object) -> str:
        values = {
            "terms": self.terms, "field": self.field, "category": self.category, "cross": "1" if self.cross else "0",
            "basis": self.basis, "from": self.start, "to": self.end, "size": str(self.size), "order": self.order,
            "page": str(self.page),
        }
        values.update({k: str(v) for k, v in changes.items()})
        return urlencode(values)


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _matches_terms(paper: Paper, query: Query) -> bool:
    haystack = {
        "title": paper.title,
        "abstract": paper.abstract,
        "all": f"{paper.title} {paper.abstract} {' '.join(paper.authors)}",
    }[query.field].lower()
    words = haystack.replace(".", " ").replace(",", " ").split()
    return all(term in words for term in query.terms.lower().split())


def search(data: ScholarData, query: Query) -> list[Paper]:
    start, end = _day(query.start), _day(query.end)
    found = []
    for paper in data.papers:
        if query.category and not (
            paper.primary == query.category or (query.cross and query.category in paper.cross)
        ):
            continue
        day = paper.first_day if query.basis == "original" else paper.latest_day
        if (start and day < start) or (end and day > end):
            continue
        if query.terms and not _matches_terms(paper, query):
            continue
        found.append(paper)
    basis_day = (lambda p: p.first_day) if query.basis == "original" else (lambda p: p.latest_day)
    found.sort(key=lambda p: (basis_day(p), p.id), reverse=query.order == "newest")
    return found


# ---------------------------------------------------------------- pages


def routes(data: ScholarData) -> list[Route]:
    by_id = data.by_id()

    async def home(request: Request) -> HTMLResponse:
        return render("scholar/home.html", site_title="Scholarly archive", count=len(data.papers),
                      newest=data.papers[:5], categories=ALL_CATEGORIES)

    async def search_page(request: Request) -> HTMLResponse:
        query = Query.from_params(request.query_params)
        results = search(data, query) if query.active else []
        pages = max(1, math.ceil(len(results) / query.size))
        page = min(query.page, pages)
        shown = results[(page - 1) * query.size: page * query.size]
        page_links = [(n, "?" + query.params(page=n)) for n in range(1, pages + 1)]
        return render(
            "scholar/search.html", site_title="Advanced search", query=query, results=shown, total=len(results),
            page=page, pages=pages, page_links=page_links, first=(page - 1) * query.size + 1,
            categories=ALL_CATEGORIES, fields=FIELDS, bases=BASES, orders=ORDERS, sizes=PAGE_SIZES,
        )

    reviews = {r.paper_id: r for r in data.reviews}

    async def abstract_page(request: Request) -> HTMLResponse:
        paper = by_id.get(request.path_params["pid"])
        if paper is None:
            return render("scholar/missing.html", status_code=404, pid=request.path_params["pid"])
        return render("scholar/abs.html", site_title=paper.title, paper=paper, categories=ALL_CATEGORIES,
                      review=reviews.get(paper.id))

    async def fulltext_page(request: Request) -> HTMLResponse:
        """`/html/<id>` is the latest version's full text; `/html/<id>v<n>` a given version (review series)."""
        asked = request.path_params["pid"]
        pid, _, number = asked.partition("v")
        paper, review = by_id.get(pid), reviews.get(pid)
        if review is not None and paper is not None:
            version = int(number) if number.isdigit() else len(paper.versions)
            if not 1 <= version <= len(paper.versions):
                return render("scholar/missing.html", status_code=404, pid=asked)
            return render("scholar/review_fulltext.html", site_title=paper.title, paper=paper, review=review,
                          version=version, items=review.table(version), caption=census.TABLE_CAPTION)
        if paper is None or not paper.fulltext or number:
            return render("scholar/missing.html", status_code=404, pid=asked)
        return render("scholar/fulltext.html", site_title=paper.title, paper=paper)

    return [
        Route("/", home),
        Route("/search", search_page),
        Route("/abs/{pid}", abstract_page),
        Route("/html/{pid}", fulltext_page),
    ]


# ---------------------------------------------------------------- tasks


SEARCH_URL = f"{PLACEHOLDER_ORIGIN}/{PREFIX}/search"


def _ids(papers: list[Paper]) -> set[str]:
    return {p.id for p in papers}


@dataclass(frozen=True)
class Chosen:
    """The searches behind the base tasks, chosen from the data so that cardinality and traps hold."""

    primary_query: Query  # 001: primary only, original-submission dates
    paged_query: Query  # 002: abstract terms, cross-listed included, two result pages
    history_query: Query  # 003: detail pages for the v1 date
    trail_query: Query  # 004: v1 window, record pages, next-year version and publication trail (derived)


def _first_fit(candidates, fits) -> Query:
    for query in candidates:
        if fits(query):
            return query
    raise ValueError("scholar: this seed gives no task search with the required cardinality and traps")


def choose(data: ScholarData) -> Chosen:
    """Each task gets its own category; the newest papers (on the home page) are never in an answer."""
    windows = [(f"{y}-01-01", f"{y}-12-31") for y in (2021, 2020, 2022, 2019)]
    grid = [(start, end, cat) for start, end in windows for cat in CATEGORIES]

    def primary_fits(q: Query) -> bool:
        found = _ids(search(data, q))
        drifted = _ids(search(data, Query(terms=q.terms, field="title", category=q.category, start=q.start, end=q.end)))
        return 4 <= len(found) <= 9 and len(drifted - found) >= 2 and len(found - drifted) >= 1

    primary = _first_fit((Query(terms=t, field="title", category=c, cross=False, basis="original", start=s, end=e)
                          for s, e, c in grid for t in METHODS), primary_fits)

    def paged_fits(q: Query) -> bool:
        found = _ids(search(data, q))
        by_title = _ids(search(data, Query(terms=q.terms, field="title", category=q.category, start=q.start, end=q.end)))
        return 13 <= len(found) <= 19 and found != by_title

    paged = _first_fit((Query(terms=t, field="abstract", category=c, start=s, end=e)
                        for s, e, c in grid if c != primary.category for t in ABSTRACT_TERMS), paged_fits)

    def history_fits(q: Query) -> bool:
        found = search(data, q)
        revised = [p for p in found if len(p.versions) > 1 and p.first_day.year != p.latest_day.year]
        return 4 <= len(found) <= 9 and len(revised) >= 2

    used = {primary.category, paged.category}
    history = _first_fit((Query(terms=t, field="title", category=c, start=s, end=e)
                          for s, e, c in grid if c not in used for t in METHODS), history_fits)
    used.add(history.category)
    trail = _first_fit((Query(terms=t, field="all", category=c, basis="original", start=f"{y}-01-01",
                              end=f"{y}-12-31")
                        for y in (2021, 2020, 2022) for c in CATEGORIES if c not in used for t in METHODS),
                       lambda q: _trail_fits(data, q))
    newest_ids = _ids(list(data.papers[:5]))
    for q in (primary, paged, history, trail):
        if _ids(search(data, q)) & newest_ids:
            raise ValueError("scholar: a task answer overlaps the home page's newest papers")
    return Chosen(primary, paged, history, trail)


def _next_year_version(paper: Paper) -> Version | None:
    """The first version submitted in the calendar year after v1 (None when there is none)."""
    return next((v for v in paper.versions if v.day.year == paper.first_day.year + 1), None)


def _trail_fits(data: ScholarData, q: Query) -> bool:
    """Two result pages; cross-listed near misses; next-year versions for some, later-only revisions for
    others; a different set under the default (latest-version) date basis or a title-only search."""
    found = search(data, q)
    primaries = [p for p in found if p.primary == q.category]
    with_next = [p for p in primaries if _next_year_version(p)]
    later_only = [p for p in primaries if not _next_year_version(p) and len(p.versions) > 1]
    latest = search(data, Query(terms=q.terms, field=q.field, category=q.category, start=q.start, end=q.end))
    title_only = search(data, Query(terms=q.terms, field="title", category=q.category, basis=q.basis,
                                    start=q.start, end=q.end))
    return (11 <= len(found) <= 14 and 5 <= len(primaries) <= 9 and len(with_next) >= 2 and len(later_only) >= 1
            and any(p.doi for p in primaries) and any(not p.doi for p in primaries)
            and _ids(latest) != _ids(found) and len(title_only) < len(found))


def trail_rows(data: ScholarData, q: Query) -> list[tuple[str, str, str, str]]:
    rows = []
    for paper in sorted(search(data, q), key=lambda p: p.id):
        if paper.primary != q.category:
            continue
        version = _next_year_version(paper)
        rows.append((paper.id, f"v{version.number}" if version else "NONE",
                     version.day.isoformat() if version else "NONE", paper.doi or "NONE"))
    return rows


def tasks(data: ScholarData) -> list[dict]:
    c = choose(data)
    pq, gq, hq = c.primary_query, c.paged_query, c.history_query
    p_cat, g_cat, h_cat = (f"{q.category} ({CATEGORIES[q.category]})" for q in (pq, gq, hq))
    p_year, g_year, h_year = pq.start[:4], gq.start[:4], hq.start[:4]
    drafts = [
        TaskDraft(
            task_id="offline_scholar_001", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"In the scholarly archive's advanced search, search the Title field for \"{pq.terms}\", choose "
                f"category {p_cat}, UNTICK 'Include cross-listed papers' so that only papers whose primary "
                f"category is {pq.category} remain, set the date filter to 'Original submission (v1)' and the "
                f"range {pq.start} to {pq.end}. Report each paper's identifier and title."
            ),
            goal_instruction=(
                f"Which papers with \"{pq.terms}\" in the title were first submitted in {p_year} with "
                f"{pq.category} as their primary category? Give identifier and title."
            ),
            columns=("arxiv_id", "title"),
            rows=[(p.id, p.title) for p in sorted(search(data, pq), key=lambda p: p.id)],
            sorting="arxiv_id ascending",
            gates=[f"Title field contains \"{pq.terms}\"", f"category = {pq.category}, cross-listed excluded",
                   f"date basis = original submission (v1), {pq.start}..{pq.end}"],
            data_dependency="The filtered result table supplies identifiers and titles.",
            control_dependency="The primary-category criterion decides the cross-listing switch; the v1 criterion "
                               "decides the date basis.",
            inclusion=[f"primary category {pq.category}", f"v1 submitted {pq.start}..{pq.end} inclusive",
                       f"title contains the word \"{pq.terms}\""],
            exclusion=[f"papers only cross-listed in {pq.category}",
                       f"papers whose latest version (but not v1) falls in {p_year}"],
            traps=["criterion mismatch: 'Include cross-listed papers' is ticked by default",
                   "drift: the date filter defaults to the latest version's date"],
            column_notes={"arxiv_id": "identifier as shown, e.g. 2103.00042"},
        ),
        TaskDraft(
            task_id="offline_scholar_002", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"In the advanced search, search the Abstract field (not Title, not All fields) for \"{gq.terms}\", "
                f"category {g_cat} with cross-listed papers included (primary or cross-list), latest-version dates "
                f"{gq.start} to {gq.end}. The results span more than one page of 10: read every page (or raise "
                f"'Results per page'). Report identifier, primary category and latest-version date."
            ),
            goal_instruction=(
                f"List every {gq.category} paper (primary or cross-listed) whose abstract mentions "
                f"\"{gq.terms}\" and whose current version dates from {g_year}, with its primary category and the "
                f"date of that version."
            ),
            columns=("arxiv_id", "primary_category", "latest_version_date"),
            rows=[(p.id, p.primary, p.latest_day.isoformat())
                  for p in sorted(search(data, gq), key=lambda p: (-p.latest_day.toordinal(), p.id))],
            record_separator=";", header=True,
            sorting="latest_version_date descending, then arxiv_id ascending",
            gates=[f"Abstract field contains \"{gq.terms}\"", f"category = {gq.category} incl. cross-listed",
                   f"latest version {gq.start}..{gq.end}", "all result pages"],
            data_dependency="Rows come from every page of the result list.",
            control_dependency="The page count shown under the table decides how many pages must be read.",
            inclusion=[f"abstract contains the word \"{gq.terms}\"",
                       f"primary or cross-listed category {gq.category}",
                       f"latest version dated {gq.start}..{gq.end}"],
            exclusion=["papers matching only in the title", "rows missing because only page 1 was read"],
            traps=["dependency not closed: results continue on page 2",
                   "criterion mismatch: the term field defaults to All fields"],
            column_notes={"latest_version_date": "ISO date YYYY-MM-DD"},
        ),
        TaskDraft(
            task_id="offline_scholar_003", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
            constraint_instruction=(
                f"Search the Title field for \"{hq.terms}\" in category {h_cat} (cross-listed included), "
                f"latest-version dates {hq.start} to {hq.end}. Open each result's record page and read the "
                f"submission history: report the identifier, the date of v1 (original submission) and the "
                f"number of versions."
            ),
            goal_instruction=(
                f"For the {hq.category} papers (including cross-lists) with \"{hq.terms}\" in the title whose "
                f"current version appeared in {h_year}, when was each originally submitted and how many versions "
                f"does it have?"
            ),
            columns=("arxiv_id", "v1_date", "versions"),
            rows=[(p.id, p.first_day.isoformat(), str(len(p.versions)))
                  for p in sorted(search(data, hq), key=lambda p: p.id)],
            record_separator=",",
            sorting="arxiv_id ascending",
            gates=[f"Title field contains \"{hq.terms}\"", f"category = {hq.category} incl. cross-listed",
                   f"latest version {hq.start}..{hq.end}", "submission history on every record page"],
            data_dependency="The result list supplies the records whose pages hold the v1 dates.",
            control_dependency="Each record page's history decides the v1 date and the version count.",
            inclusion=["every paper of the result list", "v1 date from the submission history"],
            exclusion=["the latest-version date shown in the result list"],
            traps=["in-page misreading: the result list and the record header show the latest version's date",
                   "dependency not closed: the v1 date is only on record pages"],
            column_notes={"v1_date": "ISO date YYYY-MM-DD of [v1]", "versions": "integer count of versions"},
        ),
        _trail_draft(data, c.trail_query),
        _census_draft(data),
    ]
    return [record for draft in drafts for record in record_pair(draft)]


CENSUS_QUERY = Query(terms=census.TERM, field="title", category=census.CATEGORY[0])


def _census_draft(data: ScholarData) -> TaskDraft:
    old, new = census.JOINED
    later = census.edition(data.reviews, new)
    series = census.SERIES
    return TaskDraft(
        task_id="offline_scholar_005", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the advanced search, search the Title field for \"{census.TERM}\" in category "
            f"{census.CATEGORY[0]} ({census.CATEGORY[1]}). Of the \"{series}\" papers listed, use the full "
            f"editions for {old} and {new} (the edition year is in the title; not the {new} preliminary report, not "
            f"other editions). On each one's record page open the full text (HTML) of its FIRST version, v1, from "
            f"the submission history (the 'Full text (HTML)' link shows the latest version, and the {new} edition "
            f"was revised in v{len(later.tables)}). Table 2 of each lists the registered benchmarks by Registry ID. "
            f"Join the two tables by Registry ID (names change between editions; never match by name) and keep the "
            f"ids present in both. Report registry id, the benchmark's name in {old} and in {new}, downloads in "
            f"{old} and in {new} (thousands, as integers without separators), change = downloads {new} minus "
            f"downloads {old}, and renamed = YES if the two names differ, else NO."
        ),
        goal_instruction=(
            f"Using the figures as first published in the {old} and {new} editions of the {series}, which "
            f"registered benchmarks appear in both editions? For each, give its registry id, its name in each "
            f"edition, its downloads in each, how much they changed, and whether it was renamed."
        ),
        columns=("registry_id", f"name_{old}", f"name_{new}", f"downloads_{old}", f"downloads_{new}", "change",
                 "renamed"),
        rows=census.joined_rows(data.reviews),
        record_separator=";", header=True,
        sorting="change descending (numeric), then registry_id ascending",
        gates=[f"Title field contains \"{census.TERM}\", category = {census.CATEGORY[0]}",
               f"full text (HTML) of version v1 of the {old} and {new} editions (the default view is the latest)",
               "Table 2 (registered benchmarks) of each edition"],
        data_dependency="The result list identifies the two editions; each edition's v1 full text supplies Table 2; "
                        "the answer joins the two tables by registry id.",
        control_dependency=f"The edition year in the title (not the submission year) picks the papers; the "
                           f"first-published criterion decides the version of the {new} edition's full text.",
        inclusion=[f"registry ids listed in both the {old} and the {new} edition (v1 tables)"],
        exclusion=["ids in only one of the two editions", f"the {new} preliminary report and the "
                   f"{census.EDITIONS[0]} edition", f"figures of the {new} edition's later version"],
        traps=[f"criterion mismatch: the {new} preliminary report and the {census.EDITIONS[0]} edition (published "
               f"in {old}) look like the wanted editions",
               f"drift: every 'Full text (HTML)' link (also after returning to the record page) opens the latest "
               f"version; the {new} edition's v{len(later.tables)} corrects figures",
               "near miss: a benchmark renamed between editions keeps its id (join by id, not by name)",
               f"near miss: a name dropped after {old} reappears under a new id in {new} (a name join pairs them)"],
        column_notes={
            "registry_id": "the Registry ID as shown, e.g. OB-0123",
            f"downloads_{old}": "integer thousands without separators, as in the v1 table",
            f"downloads_{new}": "integer thousands without separators, as in the v1 table",
            "change": f"downloads_{new} - downloads_{old}, an integer (negative when they fell)",
            "renamed": f"YES if name_{old} differs from name_{new}, else NO",
        },
        shape="derived",
        mirrors="Scholarly, full text: two yearly review articles whose tables list items by an id; join them by "
                "id across years with a name that drifted; report per id values from both years",
        phases=("search the review series in its category and pick the two editions by the year in the title",
                "open each edition's record page and its first version's full text: Table 2",
                "derive: join by registry id, both years' values, the change and the renamed flag"),
        derived=("change", "renamed"),
    )


def _trail_draft(data: ScholarData, tq: Query) -> TaskDraft:
    year, cat = int(tq.start[:4]), f"{tq.category} ({CATEGORIES[tq.category]})"
    return TaskDraft(
        task_id="offline_scholar_004", domain=DOMAIN, family=FAMILY, start_url=SEARCH_URL,
        constraint_instruction=(
            f"In the advanced search, search \"{tq.terms}\" in both titles and abstracts (All fields), category "
            f"{cat}, with the date filter on 'Original submission (v1)' and the range {tq.start} to {tq.end} (the "
            f"default filters on the latest version's date). Read every result page. Open each result's record page: "
            f"keep only papers whose Primary category is {tq.category} (papers merely cross-listed in it are "
            f"excluded). From each kept record's submission history take the FIRST version submitted in {year + 1} "
            f"(the year after v1) and its date (NONE and NONE if no version was submitted in {year + 1}, even if "
            f"later versions exist); publication_trail is the DOI shown on the record page, NONE if there is none."
        ),
        goal_instruction=(
            f"For the papers with primary category {tq.category} that mention \"{tq.terms}\" in their title or "
            f"abstract and were originally submitted in {year}: which revision, if any, did each receive first in "
            f"{year + 1}, on what date, and has it a DOI?"
        ),
        columns=("arxiv_id", "next_year_version", "next_year_date", "publication_trail"),
        rows=trail_rows(data, tq),
        sorting="arxiv_id ascending",
        gates=[f"All fields contain \"{tq.terms}\"", f"category = {tq.category} (cross-listed may be listed)",
               f"date basis = original submission (v1), {tq.start}..{tq.end}", "all result pages",
               "every listed record page (primary category, submission history, DOI)"],
        data_dependency="The result list (all pages) supplies the records; each record page supplies the primary "
                        "category, the submission history and the DOI the answer is computed from.",
        control_dependency="The v1 criterion decides the date basis; the primary-category criterion is only "
                           "checkable on record pages.",
        inclusion=[f"v1 submitted in {year}", f"primary category {tq.category}",
                   f"\"{tq.terms}\" in title or abstract"],
        exclusion=[f"papers only cross-listed in {tq.category}", "versions submitted two or more years after v1"],
        traps=["drift: the date filter defaults to the latest version's date",
               "criterion mismatch: cross-listed papers appear in the category's results",
               "near miss: papers revised only in a later year get NONE, not their next version",
               "dependency not closed: results continue on page 2; history only on record pages"],
        column_notes={
            "next_year_version": "'v<N>' of the first version dated in the year after v1, else NONE",
            "next_year_date": "ISO date of that version, else NONE",
            "publication_trail": "the record's DOI, else NONE",
        },
        shape="derived",
        mirrors="Scholarly: term family over title and abstract, v1 window; per record the first version of the "
                "following year and its date, primary category (cross-lists excluded), a publication-trail column",
        phases=("search the term over all fields with the v1 date window and read every result page",
                "open each listed record page: primary category, DOI and the submission history",
                "derive: keep primary-category papers; first version dated in the next year; DOI or NONE"),
        derived=("next_year_version", "next_year_date", "publication_trail"),
    )


def _search_steps(q: Query) -> list[Step]:
    steps: list[Step] = [
        {"tool": "goto", "args": {"url": SEARCH_URL}, "why": "open the advanced search"},
        {"tool": "fill", "args": {"target": {"label": "Search terms"}, "value": q.terms}, "why": "term"},
        {"tool": "select", "args": {"target": {"label": "Search field"}, "option": FIELDS[q.field]},
         "why": "the term field defaults to All fields"},
        {"tool": "select", "args": {"target": {"label": "Category"},
                                    "option": f"{q.category} ({ALL_CATEGORIES[q.category]})"},
         "why": "classification"},
    ]
    if not q.cross:
        steps.append({"tool": "check", "args": {"target": {"label": "Include cross-listed papers"}, "checked": False},
                      "why": "primary category only"})
    if q.basis == "original":
        steps.append({"tool": "select", "args": {"target": {"label": "Date basis"}, "option": BASES["original"]},
                      "why": "dates of the original submission, not the latest version"})
    if q.start or q.end:
        steps.append({"tool": "set_range", "args": {"start_target": {"label": "From date"},
                                                    "end_target": {"label": "To date"}, "start": q.start,
                                                    "end": q.end}, "why": "date window"})
    steps.append({"tool": "click", "args": {"target": {"text": "Search"}}, "why": "run the search"})
    return steps


def walkthroughs(data: ScholarData) -> dict[str, list[Step]]:
    c = choose(data)
    history_steps: list[Step] = []
    for paper in sorted(search(data, c.history_query), key=lambda p: p.id):
        history_steps += [
            {"tool": "click", "args": {"target": {"text": paper.id}}, "why": "open the record page"},
            {"tool": "extract_rows", "args": {
                "source": "page_text",
                "pattern": r"Identifier: (?P<arxiv_id>\d{4}\.\d{5})[\s\S]*?\[v1\] (?P<v1_date>\d{4}-\d{2}-\d{2})"
                           r"[\s\S]*?Versions: (?P<versions>\d+)",
                "columns": {"arxiv_id": "arxiv_id", "v1_date": "v1_date", "versions": "versions"}},
             "why": "v1 date from the submission history, not the header date"},
            {"tool": "back", "args": {}, "why": "return to the results"},
        ]
    identifier = r"re:Identifier: (\d{4}\.\d{5})"
    trail_steps: list[Step] = []
    for paper in search(data, c.trail_query):
        trail_steps += [
            {"tool": "read_facts", "args": {
                "url": f"{PLACEHOLDER_ORIGIN}/{PREFIX}/abs/{paper.id}", "into": "records", "allow_missing": True,
                "fields": {"arxiv_id": identifier, "primary_cat": "Primary category", "doi": "DOI"}},
             "why": "record page: primary category and DOI (absent when unpublished)"},
            {"tool": "extract_rows", "args": {
                "into": "versions", "source": "page_text",
                "pattern": r"\[v(?P<version>\d+)\] (?P<day>\d{4}-\d{2}-\d{2})",
                "columns": {"arxiv_id": identifier, "version": "version", "day": "day"}},
             "why": "every version of the submission history"},
        ]
    trail_sql = (
        "WITH first AS (SELECT arxiv_id, year_of(day) AS y FROM versions WHERE version = '1'), "
        "next AS (SELECT v.arxiv_id, 'v' || v.version AS ver, v.day FROM versions v JOIN first f USING (arxiv_id) "
        "WHERE year_of(v.day) = f.y + 1 QUALIFY row_number() OVER (PARTITION BY v.arxiv_id "
        "ORDER BY CAST(v.version AS INTEGER)) = 1) "
        "SELECT r.arxiv_id, coalesce(n.ver, 'NONE') AS next_year_version, coalesce(n.day, 'NONE') AS next_year_date, "
        "CASE WHEN r.doi = '' THEN 'NONE' ELSE r.doi END AS publication_trail "
        f"FROM records r LEFT JOIN next n USING (arxiv_id) WHERE r.primary_cat = '{c.trail_query.category}' "
        "ORDER BY r.arxiv_id"
    )
    census_steps: list[Step] = []
    for year in census.JOINED:
        review = census.edition(data.reviews, year)
        census_steps += [
            {"tool": "click", "args": {"target": {"text": review.paper_id}}, "why": f"the {year} edition's record"},
            {"tool": "click", "args": {"target": {"text": "HTML (v1)"}},
             "why": "first version's full text (the plain full-text link shows the latest)"},
            {"tool": "extract_rows", "args": {
                "into": f"edition_{year}", "section": census.TABLE_CAPTION,
                "columns": {"registry_id": "Registry ID", "name": "Benchmark", "downloads": "Downloads (thousands)"}},
             "why": "Table 2 of this edition"},
            {"tool": "back", "args": {}, "why": "record page"},
            {"tool": "back", "args": {}, "why": "result list"},
        ]
    old, new = census.JOINED
    census_sql = (
        f"SELECT a.registry_id, a.name AS name_{old}, b.name AS name_{new}, "
        f"CAST(CAST(num(a.downloads) AS BIGINT) AS VARCHAR) AS downloads_{old}, "
        f"CAST(CAST(num(b.downloads) AS BIGINT) AS VARCHAR) AS downloads_{new}, "
        f"CAST(CAST(num(b.downloads) - num(a.downloads) AS BIGINT) AS VARCHAR) AS change, "
        f"CASE WHEN a.name = b.name THEN 'NO' ELSE 'YES' END AS renamed "
        f"FROM edition_{old} a JOIN edition_{new} b USING (registry_id) "
        f"ORDER BY num(b.downloads) - num(a.downloads) DESC, a.registry_id"
    )
    return {
        "offline_scholar_005": [
            *_search_steps(CENSUS_QUERY),
            {"tool": "read_table", "args": {"table": 0}, "why": "the series' papers: pick the editions by title"},
            *census_steps,
            *derive_then_finish(census_sql, "join by registry id; change; renamed flag", "both editions' v1 tables joined"),
        ],
        "offline_scholar_004": [
            *_search_steps(c.trail_query),
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span two pages"},
            {"tool": "extract_rows", "args": {"into": "candidates", "columns": {"arxiv_id": "Identifier"}},
             "why": "the records to open"},
            *trail_steps,
            *derive_then_finish(trail_sql, "primary only; next-year version; DOI or NONE", "answer derived from every record page"),
        ],
        "offline_scholar_001": [
            *_search_steps(c.primary_query),
            {"tool": "read_table", "args": {"table": 0}, "why": "single page of results"},
            {"tool": "extract_rows", "args": {"columns": {"arxiv_id": "Identifier", "title": "Title"}},
             "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["arxiv_id"]}, "why": "all results read"},
        ],
        "offline_scholar_002": [
            *_search_steps(c.paged_query),
            {"tool": "read_table", "args": {"table": 0, "all_pages": True}, "why": "results span two pages"},
            {"tool": "extract_rows", "args": {"columns": {
                "arxiv_id": "Identifier", "primary_category": "Primary category",
                "latest_version_date": "Latest version"}}, "why": "rows as listed"},
            {"tool": "finish", "args": {"order_by": ["latest_version_date desc", "arxiv_id"]}, "why": "all pages read"},
        ],
        "offline_scholar_003": [
            *_search_steps(c.history_query),
            {"tool": "read_table", "args": {"table": 0}, "why": "the records to open"},
            *history_steps,
            {"tool": "finish", "args": {"order_by": ["arxiv_id"]}, "why": "every record page read"},
        ],
    }


SITE = Site(
    prefix=PREFIX, title="Scholarly archive", family=FAMILY, build=build, routes=routes,
    tasks=tasks, walkthroughs=walkthroughs,
)
