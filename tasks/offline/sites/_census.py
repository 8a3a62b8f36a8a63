"""The scholarly archive's yearly review series: an annual census of shared benchmarks whose full text lists the
registered benchmarks by a stable registry id (names drift between editions), in every version of the paper.

Kept apart from `scholar.py` because it is its own data (its own random stream, so the archive's other papers
and tasks do not move) and its own oracle: join two editions' tables by id, as first published (v1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

SERIES = "Open Benchmarks Census"
CATEGORY = ("cs.DL", "Digital Libraries")
TERM = "census"
TABLE_CAPTION = "Table 2: Registered benchmarks"
EDITIONS = (2021, 2022, 2023)
JOINED = (2022, 2023)  # the two editions a task joins; 2021 and the preliminary 2023 report are look-alikes
NAME_HEADS = [
    "Cortex", "Lexis", "Orbit", "Grid", "Ward", "Lumen", "Gripper", "Helix", "Transit", "Fold", "Echo", "Prism",
    "Delta", "Sable", "Quarry", "Vesper", "Tessel", "Nimbus",
]
NAME_TAILS = ["Bench", "Suite", "Arena", "Set", "Eval"]
MAINTAINERS = ["Abara lab", "Bello group", "Castell consortium", "Dunne institute", "Eklund lab", "Farrow group"]
FILLER_TITLES = [
    "Persistent identifiers for research software in preprint archives",
    "Citation drift in versioned preprints",
    "Metadata quality of dataset landing pages",
    "Deduplicating author records across scholarly archives",
    "Licensing statements in shared evaluation datasets",
]


@dataclass(frozen=True)
class RegistryItem:
    item_id: str  # stable across editions (the join key)
    name: str  # may change between editions
    maintainer: str
    downloads: int  # thousands


@dataclass(frozen=True)
class Review:
    """One paper of the series: its edition year, whether it is the preliminary report, and Table 2 per version
    (index 0 = v1)."""

    paper_id: str
    edition: int
    preliminary: bool
    title: str
    tables: tuple[tuple[RegistryItem, ...], ...]

    def table(self, version: int) -> tuple[RegistryItem, ...]:
        return self.tables[version - 1]


@dataclass(frozen=True)
class CensusPaper:
    """What the archive needs to list a series paper like any other (a paper record is built from it)."""

    paper_id: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    days: tuple[date, ...]  # one per version
    comments: str


def _name(rng: random.Random, used: set[str]) -> str:
    while True:
        name = f"{rng.choice(NAME_HEADS)} {rng.choice(NAME_TAILS)}"
        if name not in used:
            used.add(name)
            return name


def _revised(rng: random.Random, items: list[RegistryItem], among: list[RegistryItem]) -> list[RegistryItem]:
    """A later version: three download figures of items `among` corrected (the trap for readers of the default,
    latest-version view)."""
    out = list(items)
    ids = {i.item_id for i in rng.sample(among, 3)}
    for index in (n for n, item in enumerate(out) if item.item_id in ids):
        item = out[index]
        out[index] = RegistryItem(item.item_id, item.name, item.maintainer,
                                  item.downloads + rng.choice([-1, 1]) * rng.randrange(5, 60))
    return out


def build_series(seed: int, taken_ids: set[str]) -> tuple[list[Review], list[CensusPaper]]:
    """The three full editions, a preliminary report for the last one, and a few unrelated papers of the
    same category; ids avoid `taken_ids` (the archive's other papers)."""
    rng = random.Random(f"scholar-census:{seed}")
    used_names: set[str] = set()
    pool = [RegistryItem(f"OB-{n:04d}", _name(rng, used_names), rng.choice(MAINTAINERS), rng.randrange(20, 900))
            for n in sorted(rng.sample(range(100, 999), 16))]
    per_edition: dict[int, list[RegistryItem]] = {}
    per_edition[2021] = rng.sample(pool[:12], 9)
    shared = pool[2:11]  # in both joined editions (9 ids)
    only_2022, only_2023 = pool[0:2], pool[11:13]
    renamed = rng.sample(shared, 3)
    # the name of an item dropped after 2022 reappears under a new id in 2023: joining by name pairs them wrongly
    reused = RegistryItem(pool[13].item_id, only_2022[0].name, pool[13].maintainer, pool[13].downloads)
    per_edition[2022] = sorted([*shared, *only_2022], key=lambda i: i.item_id)
    edition_2023 = []
    for item in [*shared, *only_2023, reused]:
        name = _name(rng, used_names) if item in renamed else item.name
        downloads = max(5, item.downloads + rng.randrange(-120, 260))
        edition_2023.append(RegistryItem(item.item_id, name, item.maintainer, downloads))
    per_edition[2023] = sorted(edition_2023, key=lambda i: i.item_id)
    preliminary = [RegistryItem(i.item_id, i.name, i.maintainer, max(5, i.downloads - rng.randrange(10, 90)))
                   for i in per_edition[2023][:-2]]

    def new_id(day: date) -> str:
        while True:
            pid = f"{day.year % 100:02d}{day.month:02d}.{rng.randrange(9000, 9999):05d}"
            if pid not in taken_ids:
                taken_ids.add(pid)
                return pid

    reviews: list[Review] = []
    papers: list[CensusPaper] = []

    def add(edition: int, preliminary_report: bool, tables: list[list[RegistryItem]], days: list[date]) -> None:
        pid = new_id(days[0])
        label = f"{edition} (preliminary report)" if preliminary_report else str(edition)
        title = f"{SERIES} {label}: an annual review of shared evaluation benchmarks"
        reviews.append(Review(pid, edition, preliminary_report, title, tuple(tuple(t) for t in tables)))
        scope = "interim figures for the first three quarters" if preliminary_report else "figures for the full year"
        papers.append(CensusPaper(
            pid, title, f"We review the shared benchmarks registered in {edition}, with {scope}: registry ids, "
                        f"names, maintainers and downloads of each benchmark.",
            ("F. Farrow", "K. Kaur"), tuple(days),
            f"{rng.randrange(12, 30)} pages; the {edition} edition of the census series"))

    def day_in(year: int, month: int) -> date:
        return date(year, month, 1) + timedelta(days=rng.randrange(25))

    for edition in EDITIONS:
        v1 = day_in(edition + 1, 2)
        if edition == JOINED[1]:
            add(edition, False, [per_edition[edition], _revised(rng, per_edition[edition], shared)], [v1, day_in(2024, 4)])
        else:
            add(edition, False, [per_edition[edition]], [v1])
    add(JOINED[1], True, [preliminary], [day_in(JOINED[1], 10)])
    for title in FILLER_TITLES:
        day = date(2019, 1, 1) + timedelta(days=rng.randrange(1800))
        papers.append(CensusPaper(new_id(day), title, f"We study {title.lower()}.", ("M. Moreau",), (day,),
                                  f"{rng.randrange(6, 20)} pages"))
    return reviews, papers


def edition(reviews: list[Review] | tuple[Review, ...], year: int) -> Review:
    return next(r for r in reviews if r.edition == year and not r.preliminary)


def joined_rows(reviews: list[Review] | tuple[Review, ...]) -> list[tuple[str, ...]]:
    """Ids in both joined editions' v1 tables, joined by id: names, downloads, change, renamed flag;
    change descending, then id."""
    old = {i.item_id: i for i in edition(reviews, JOINED[0]).table(1)}
    new = {i.item_id: i for i in edition(reviews, JOINED[1]).table(1)}
    rows = []
    for item_id in sorted(old.keys() & new.keys()):
        a, b = old[item_id], new[item_id]
        rows.append((b.downloads - a.downloads, item_id, a.name, b.name, a.downloads, b.downloads))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [(item_id, n1, n2, str(d1), str(d2), str(change), "NO" if n1 == n2 else "YES")
            for change, item_id, n1, n2, d1, d2 in rows]
