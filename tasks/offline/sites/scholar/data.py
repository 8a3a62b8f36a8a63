"""The scholarly archive's data, built from the seed: papers with their versions, and the yearly review series."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from tasks.offline.sites import _census as census

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
