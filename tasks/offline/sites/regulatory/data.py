"""The regulator's data, built from the seed: complaints, documents, enforcement actions and the
credit-reporting cohorts of task 005."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta

PREFIX = "regulatory"
FAMILY = "Regulatory resources"
DOMAIN = "OFFLINE_REGULATORY"
COMPLAINT_COUNT = 3000
DOCUMENT_COUNT = 90
FIRST_DAY, LAST_DAY = date(2014, 1, 1), date(2024, 12, 31)
DEFAULT_WINDOW = ("2022-01-01", "2024-12-31")  # the widget's default: the last three years of data
ALL_DATES_FROM = "2011-12-01"
PAGE_SIZES = (10, 25, 50, 100)
DEFAULT_DOCUMENTS_SHOWN = 10
CONSENT_COOKIE = "reg_consent"

PRODUCTS = {
    "Mortgage": ["Conventional home mortgage", "FHA mortgage", "Home equity loan"],
    "Debt collection": ["Medical debt", "Credit card debt", "Auto debt"],
    "Credit card": ["General-purpose credit card", "Store credit card"],
    "Checking or savings account": ["Checking account", "Savings account"],
    "Student loan": ["Federal student loan", "Private student loan"],
    "Vehicle loan or lease": ["Loan", "Lease"],
}
ISSUES = {
    "Mortgage": ["Trouble during payment process", "Applying for a mortgage", "Closing on a mortgage"],
    "Debt collection": ["Attempts to collect debt not owed", "Written notification about debt", "False statements"],
    "Credit card": ["Problem with a purchase", "Fees or interest", "Billing disputes"],
    "Checking or savings account": ["Managing an account", "Opening an account", "Closing an account"],
    "Student loan": ["Dealing with your lender", "Struggling to repay", "Getting a loan"],
    "Vehicle loan or lease": ["Managing the loan or lease", "Problems at the end of the loan", "Getting a loan"],
}
COMPANIES = [
    "Arbor Point Bank", "Bluestem Lending", "Carrow Financial", "Delmar Credit Union", "Eastgate Servicing",
    "Foxglove Capital", "Greyline Collections", "Harbor Trust Co.", "Ivy Lane Mortgage", "Juniper Auto Finance",
    "Keystone Card Services", "Lakeshore Student Aid",
]
STATES = ["AZ", "CA", "CO", "FL", "GA", "IL", "MI", "NC", "NY", "OH", "TX", "WA"]
RESPONSES = [
    "Closed with explanation", "Closed with monetary relief", "Closed with non-monetary relief",
    "In progress", "Untimely response",
]
TAGS = ["Older American", "Servicemember", "Older American, Servicemember"]
TOPICS = ["Mortgages", "Debt collection", "Credit reporting", "Student loans", "Payday lending", "Deposits"]
DOC_STATUSES = ["Active", "Terminated", "Pending"]
DOC_TYPES = ["Enforcement action", "Report"]
FIRM_WORDS = ["Atlas", "Beacon", "Cobalt", "Drummond", "Everly", "Fulton", "Garnet", "Hollis", "Ingram", "Jasper",
              "Kingsley", "Lowell", "Meridian", "Norland", "Orchard", "Preston", "Quarry", "Redwood"]
FIRM_KINDS = ["Financial LLC", "Lending Inc.", "Recovery Group", "Servicing Corp.", "Credit Partners"]


@dataclass(frozen=True)
class Complaint:
    id: str
    received: date
    product: str
    sub_product: str
    issue: str
    state: str
    company: str
    response: str
    tags: str
    timely: str
    narrative: str


@dataclass(frozen=True)
class Document:
    slug: str
    title: str
    doc_type: str
    respondent: str
    issued: date
    topic: str
    status: str
    penalty: int
    redress: int
    summary: str


@dataclass(frozen=True)
class RegulatoryData:
    complaints: tuple[Complaint, ...]  # newest first
    documents: tuple[Document, ...]  # newest first
    actions: tuple[Action, ...] = ()  # enforcement actions, most recently updated first
    cohort: CohortPlan | None = None  # 005's product bucket and window

    def action(self, slug: str) -> Action | None:
        return next((a for a in self.actions if a.slug == slug), None)

    def complaint(self, cid: str) -> Complaint | None:
        return next((c for c in self.complaints if c.id == cid), None)

    def document(self, slug: str) -> Document | None:
        return next((d for d in self.documents if d.slug == slug), None)


def money(amount: int) -> str:
    return f"${amount:,}"


def build(seed: int) -> RegulatoryData:
    rng = random.Random(seed * 13 + 5)
    span = (LAST_DAY - FIRST_DAY).days
    days = sorted(FIRST_DAY + timedelta(days=rng.randrange(span + 1)) for _ in range(COMPLAINT_COUNT))
    complaints = []
    number = 1_400_000
    for day in days:
        number += rng.randrange(50, 400)
        product = rng.choice(list(PRODUCTS))
        tag = rng.choices(["", *TAGS], weights=[70, 15, 12, 3])[0]
        complaints.append(Complaint(
            id=str(number), received=day, product=product, sub_product=rng.choice(PRODUCTS[product]),
            issue=rng.choice(ISSUES[product]), state=rng.choice(STATES), company=rng.choice(COMPANIES),
            response=rng.choices(RESPONSES, weights=[55, 12, 18, 8, 7])[0], tags=tag,
            timely=rng.choices(["Yes", "No"], weights=[92, 8])[0],
            narrative=rng.choice(["Consumer did not consent to publish a narrative.",
                                  "The consumer described repeated contact about the account."]),
        ))
    complaints.reverse()

    documents = []
    firms = sorted({f"{a} {b}" for a in FIRM_WORDS for b in FIRM_KINDS})
    rng.shuffle(firms)
    doc_span = (LAST_DAY - date(2012, 1, 1)).days
    for i in range(DOCUMENT_COUNT):
        issued = date(2012, 1, 1) + timedelta(days=rng.randrange(doc_span + 1))
        doc_type = rng.choices(DOC_TYPES, weights=[75, 25])[0]
        topic = rng.choice(TOPICS)
        respondent = firms[i]
        penalty = rng.randrange(5, 400) * 25_000 if doc_type == "Enforcement action" else 0
        redress = rng.randrange(0, 300) * 10_000 if doc_type == "Enforcement action" else 0
        if doc_type == "Enforcement action":
            title = f"{respondent}: consent order"
            summary = (f"The Bureau issued a consent order against {respondent} concerning {topic.lower()}. "
                       f"The order requires total relief of {money(penalty + redress)}.")
        else:
            title = f"{topic} market report: {respondent} supervision findings"
            summary = f"A report on supervisory findings in {topic.lower()}, citing practices of {respondent}."
        documents.append(Document(
            slug=f"{issued.year}-{i + 1:03d}", title=title, doc_type=doc_type, respondent=respondent, issued=issued,
            topic=topic, status=rng.choices(DOC_STATUSES, weights=[50, 35, 15])[0], penalty=penalty,
            redress=redress, summary=summary,
        ))
    documents.sort(key=lambda d: (d.issued, d.slug), reverse=True)
    # Everything below draws from its own generators, so the data of tasks 001-003 stays as it was.
    actions = _actions(random.Random(seed * 13 + 7))
    cohort, credit = _credit_cohort(seed)
    merged = sorted([*complaints, *credit], key=lambda c: c.received, reverse=True)  # stable: old order kept
    return RegulatoryData(tuple(merged), tuple(documents), actions, cohort)


# ---------------------------------------------------------------- enforcement actions (task 004)

ACTION_STATUSES = ["Active", "Expired", "Terminated", "Pending litigation"]
ACTION_PRODUCTS = ["Mortgages", "Deposits", "Credit cards", "Debt collection", "Prepaid cards", "Student loans",
                   "Payday loans", "Credit reporting"]
FORUMS = ["Administrative proceeding", "Federal district court"]
DATE_FIELDS = {"updated": "Last updated", "filed": "Initial filing date"}
ACTION_PAGE_SIZE = 10
ACTION_COUNT = 80
ACTION_WORDS = ["Allied", "Bayview", "Crescent", "Dominion", "Emerald", "Frontier", "Gateway", "Heritage", "Imperial",
                "Jubilee", "Keystone", "Landmark", "Monarch", "Northgate", "Oakmont", "Pioneer", "Regent", "Sterling"]
ACTION_KINDS = ["Bank, N.A.", "Lending, LLC", "Servicing, Inc.", "Payments Corp.", "Financial Group", "Credit Co."]


@dataclass(frozen=True)
class Action:
    slug: str
    respondent: str
    docket: str
    filed: date
    updated: date
    status: str
    products: tuple[str, ...]
    forum: str
    redress: int  # 0: the order requires no consumer redress
    penalty: int
    decoy: int  # fees found charged (an amount in the findings that is not relief)
    layout: tuple[str, ...]  # section key per consent-order page

    @property
    def redress_text(self) -> str:
        return money(self.redress) if self.redress else "NONE"

    def first_page(self, section: str) -> int | None:
        """The consent-order page where the amount of `section` ('redress'/'penalty') is first printed."""
        return next((i for i, key in enumerate(self.layout, 1) if key == section), None)


def _actions(rng: random.Random) -> tuple[Action, ...]:
    firms = sorted({f"{a} {b}" for a in ACTION_WORDS for b in ACTION_KINDS})
    rng.shuffle(firms)
    actions = []
    for i in range(ACTION_COUNT):
        filed = date(2012, 1, 1) + timedelta(days=rng.randrange((LAST_DAY - date(2012, 1, 1)).days - 400))
        updated = min(LAST_DAY, filed + timedelta(days=rng.randrange(30, 2600)))
        forum = rng.choices(FORUMS, weights=[75, 25])[0]
        docket = "" if forum == FORUMS[0] else f"1:{filed.year % 100:02d}-cv-{rng.randrange(1000, 9999)}"
        redress = 0 if rng.random() < 0.25 else rng.randrange(4, 900) * 25_000
        penalty = rng.randrange(2, 400) * 25_000
        penalty += 25_000 if penalty == redress else 0  # each amount printed is distinct
        layout = ["caption"] + ["background"] * rng.randrange(1, 3) + ["findings"] * rng.randrange(1, 3)
        if redress:
            layout += ["redress"] + ["conduct"] * rng.randrange(0, 2)
        layout += ["penalty"] + (["administration"] if redress else []) + ["conduct"] * rng.randrange(0, 2)
        layout += ["signatures"]
        actions.append(Action(
            slug=f"{rng.choice(ACTION_WORDS).lower()}-{i + 1:03d}", respondent=firms[i], docket=docket, filed=filed,
            updated=updated, status=rng.choices(ACTION_STATUSES, weights=[30, 25, 35, 10])[0],
            products=tuple(sorted(rng.sample(ACTION_PRODUCTS, rng.choice((1, 1, 1, 2))))), forum=forum,
            redress=redress, penalty=penalty, decoy=rng.randrange(40, 900) * 1_000 + 500, layout=tuple(layout),
        ))
    numbers: dict[int, int] = {}
    for i, a in sorted(enumerate(actions), key=lambda ia: (ia[1].filed, ia[1].slug)):
        if not a.docket:  # administrative dockets are numbered per year in filing order
            numbers[a.filed.year] = numbers.get(a.filed.year, 0) + 1
            actions[i] = replace(a, docket=f"{a.filed.year}-CFPB-{numbers[a.filed.year]:04d}")
    actions.sort(key=lambda a: (a.updated, a.slug), reverse=True)
    return tuple(actions)


# ---------------------------------------------------------------- credit-reporting complaints (task 005)

CREDIT_PRODUCT = "Credit reporting or other personal consumer reports"
CREDIT_SUB_PRODUCTS = ["Credit reporting", "Other personal consumer report"]
CREDIT_ISSUES = ["Incorrect information on your report", "Improper use of your report",
                 "Problem with a company's investigation"]
BUREAUS = ["Northstar Credit Bureau", "Veritas Data Reporting", "Pinnacle Consumer Reports",
           "Clearpath Tenant Screening", "Summit Check Services"]
ALL_PRODUCTS = {**PRODUCTS, CREDIT_PRODUCT: CREDIT_SUB_PRODUCTS}
ALL_ISSUES = {**ISSUES, CREDIT_PRODUCT: CREDIT_ISSUES}
ALL_COMPANIES = [*COMPANIES, *BUREAUS]
STAGES = 3  # the peak, then two rounds of removing the peak month's top company from the whole cohort


@dataclass(frozen=True)
class CohortPlan:
    product: str
    start: str
    end: str


def _month_days(year: int, month: int) -> int:
    return ((date(year + month // 12, month % 12 + 1, 1)) - date(year, month, 1)).days


def _credit_cohort(seed: int) -> tuple[CohortPlan, list[Complaint]]:
    """Background volume all through the data, plus spikes inside the cohort window, each driven by one company
    and one state, so the peak moves when its company is removed; a larger spike just after the window."""
    for variant in range(40):
        rng = random.Random(seed * 13 + 11 + variant * 101)
        first_year = rng.randrange(2016, 2019)
        plan = CohortPlan(CREDIT_PRODUCT, f"{first_year}-01-01", f"{first_year + 2}-06-30")
        complaints = _credit_complaints(rng, first_year)
        if _stages_are_unique(complaints, plan):
            return plan, complaints
    raise ValueError("regulatory: no credit-reporting cohort with unique peaks for this seed")


def _credit_complaints(rng: random.Random, first_year: int) -> list[Complaint]:
    weights = [38, 16, 14, 12, 20]  # Northstar leads the whole cohort, never a spike month
    months = [(y, m) for y in range(2016, 2025) for m in range(1, 13)]
    window = [(y, m) for (y, m) in months if (first_year, 1) <= (y, m) <= (first_year + 2, 6)]
    spike_months = rng.sample(window, 3)
    spikes = {spike_months[0]: (1, 22), spike_months[1]: (2, 16), spike_months[2]: (3, 11)}
    spikes[(first_year + 2, 7 + rng.randrange(2))] = (4, 34)  # the near-miss just outside the window
    drafts: list[tuple[date, str, str]] = []  # (day, state, company)
    for (y, m) in months:
        days = _month_days(y, m)
        for _ in range(rng.randrange(6, 12)):
            drafts.append((date(y, m, rng.randrange(1, days + 1)), rng.choice(STATES),
                           rng.choices(BUREAUS, weights=weights)[0]))
        if (y, m) in spikes:
            company_index, size = spikes[(y, m)]
            state = rng.choice(STATES)
            for _ in range(size):
                company = BUREAUS[company_index] if rng.random() < 0.75 else rng.choice(BUREAUS[2:])
                drafts.append((date(y, m, rng.randrange(1, days + 1)),
                               state if rng.random() < 0.6 else rng.choice(STATES), company))
    drafts.sort()
    complaints, number = [], 3_100_000
    for day, state, company in drafts:
        number += rng.randrange(20, 90)
        complaints.append(Complaint(
            id=str(number), received=day, product=CREDIT_PRODUCT, sub_product=rng.choice(CREDIT_SUB_PRODUCTS),
            issue=rng.choice(CREDIT_ISSUES), state=state, company=company,
            response=rng.choices(RESPONSES, weights=[60, 5, 20, 8, 7])[0],
            tags=rng.choices(["", *TAGS], weights=[75, 12, 10, 3])[0], timely=rng.choices(["Yes", "No"], [93, 7])[0],
            narrative="Consumer did not consent to publish a narrative.",
        ))
    return complaints


@dataclass(frozen=True)
class Stage:
    excluded: tuple[str, ...]
    month: str
    month_count: int
    state: str
    state_count: int
    company: str
    company_count: int
    earliest: Complaint


def _top(counts: dict[str, int]) -> tuple[str, int, bool]:
    """(value, count, unique) of the largest count; ties resolved by the smaller value."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[0][0], ranked[0][1], len(ranked) == 1 or ranked[1][1] < ranked[0][1]


def cohort_stages(complaints: list[Complaint] | tuple[Complaint, ...], plan: CohortPlan) -> list[tuple[Stage, bool]]:
    """The iterative exclusion of task 005: each stage's peak month (count), its top state and top company
    (counts) and that company's earliest complaint in the month; the company is then removed from the whole
    cohort. The flag says every maximum was unique."""
    cohort = [c for c in complaints if c.product == plan.product and plan.start <= c.received.isoformat() <= plan.end]
    excluded: tuple[str, ...] = ()
    stages = []
    for _ in range(STAGES):
        rest = [c for c in cohort if c.company not in excluded]
        by_month: dict[str, int] = {}
        for c in rest:
            by_month[c.received.isoformat()[:7]] = by_month.get(c.received.isoformat()[:7], 0) + 1
        month, month_count, u1 = _top(by_month)
        in_month = [c for c in rest if c.received.isoformat()[:7] == month]
        state, state_count, u2 = _top({s: sum(c.state == s for c in in_month) for s in {c.state for c in in_month}})
        company, company_count, u3 = _top({k: sum(c.company == k for c in in_month)
                                           for k in {c.company for c in in_month}})
        earliest = min((c for c in in_month if c.company == company), key=lambda c: (c.received, int(c.id)))
        stages.append((Stage(excluded, month, month_count, state, state_count, company, company_count, earliest),
                       u1 and u2 and u3))
        excluded = (*excluded, company)
    return stages


def _stages_are_unique(complaints: list[Complaint], plan: CohortPlan) -> bool:
    stages = cohort_stages(complaints, plan)
    return all(ok for _, ok in stages) and len({s.month for s, _ in stages}) == STAGES
