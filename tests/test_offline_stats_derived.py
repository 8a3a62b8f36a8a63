"""Derived statistics tasks 004 (geography profiles vs the statewide baseline) and 005 (mortality query, two
years): the oracles are recomputed from the SERVED pages (HTML parsed over HTTP), and the traps are checked
to change the answer."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from tasks.offline.app import DEFAULT_SEED
from tasks.offline.sites import _stats_mortality as mortality
from tasks.offline.sites import _stats_profiles as profiles
from tasks.offline.sites import stats

DATA = stats.build(DEFAULT_SEED)
RECORDS = {t["task_id"]: t for t in stats.tasks(DATA)}
PROFILE = profiles.choose_profile(DATA)
DEATHS = mortality.choose_deaths(DATA)


@pytest.fixture(scope="module")
def client():
    app = Starlette(routes=[Mount("/stats", routes=stats.routes(DATA))])
    with TestClient(app) as test_client:
        yield test_client


def sections(html: str) -> dict[str, list[dict[str, str]]]:
    """Each table of a page under its h2 heading ('' when it has none), rows as header -> cell text."""
    out = {}
    for table in BeautifulSoup(html, "lxml").find_all("table"):
        heading = table.find_previous("h2")
        headers = [th.get_text(strip=True) for th in table.find("thead").find_all("th")]
        out[heading.get_text(strip=True) if heading else ""] = [
            dict(zip(headers, [td.get_text(strip=True) for td in tr.find_all("td")], strict=True))
            for tr in table.find("tbody").find_all("tr")]
    return out


# ---------------------------------------------------------------- 004: profiles


def served_shares(client: TestClient, geo: str, product: str, vintage: int) -> dict[str, float] | None:
    """The three percentages computed from the counts a profile page shows (None: no profile published)."""
    page = sections(client.get(f"/stats/profile/{geo}", params={"product": product, "vintage": vintage}).text)
    if profiles.EDUCATION not in page:
        return None
    cells = {r["Label"]: int(r["Estimate"].replace(",", ""))
             for title in (profiles.EDUCATION, profiles.EMPLOYMENT) for r in page[title]}
    return {"bachelor": 100 * cells[profiles.BACHELOR] / cells[profiles.POP_25],
            "unemployment": 100 * cells[profiles.UNEMPLOYED] / cells[profiles.LABOR_FORCE],
            "participation": 100 * cells[profiles.LABOR_FORCE] / cells[profiles.POP_16]}


def served_profile_answer(client: TestClient, product: str, vintage: int) -> tuple[list[str], list[int]]:
    """(answer lines, conditions met by every county) read off the state's page and each county's page."""
    state_page = client.get(f"/stats/profile/{PROFILE.state}", params={"product": product, "vintage": vintage}).text
    listed = sections(state_page)[f"Counties in {stats.STATES[PROFILE.state]}"]
    links = {a.get_text(strip=True): a["href"] for a in BeautifulSoup(state_page, "lxml").select("td a")}
    base = served_shares(client, PROFILE.state, product, vintage)
    assert base is not None
    kept, met_all = [], []
    for row in listed:
        href = links[row["County"]]
        assert "?" not in href  # a plain link: it opens the county on the default release
        own = served_shares(client, href.rsplit("/", 1)[1], product, vintage)
        if own is None:
            continue
        met = sum((own["bachelor"] > base["bachelor"], own["unemployment"] < base["unemployment"],
                   own["participation"] > base["participation"]))
        met_all.append(met)
        if met >= 2:
            kept.append((-met, row["County"], "|".join([row["County"], *(f"{own[k]:.1f}" for k in profiles.METRICS),
                                                        str(met), "STRONG" if met == 3 else "MIXED"])))
    return [line for *_, line in sorted(kept)], met_all


def test_profiles_open_on_the_default_release_and_small_counties_lack_one_year(client):
    html = client.get(f"/stats/profile/{PROFILE.state}").text
    soup = BeautifulSoup(html, "lxml")
    assert soup.select_one("#product option[selected]")["value"] == "acs1"
    assert soup.select_one("#vintage option[selected]")["value"] == str(stats.VINTAGES[-1])
    assert f"{stats.VINTAGES[-1]} 1-year estimates" in soup.select_one("p.release").get_text()
    small = [c for c in DATA.counties_in(PROFILE.state) if c.population < stats.ONE_YEAR_MIN_POPULATION]
    assert small
    one_year = client.get(f"/stats/profile/{small[0].id}").text
    assert "Not available" in one_year and profiles.EDUCATION not in sections(one_year)
    five_year = client.get(f"/stats/profile/{small[0].id}", params={"product": "acs5", "vintage": PROFILE.vintage})
    assert set(sections(five_year.text)) == {profiles.EDUCATION, profiles.EMPLOYMENT}
    assert client.get("/stats/profile/ZZ-99").status_code == 404
    index = BeautifulSoup(client.get("/stats/profiles").text, "lxml")
    assert [a.get_text() for a in index.select("main li a")] == list(stats.STATES.values())


def test_state_counts_are_the_sums_of_the_county_counts(client):
    state = sections(client.get(f"/stats/profile/{PROFILE.state}",
                                params={"product": "acs5", "vintage": PROFILE.vintage}).text)
    total = 0
    for c in DATA.counties_in(PROFILE.state):
        page = sections(client.get(f"/stats/profile/{c.id}", params={"product": "acs5", "vintage": PROFILE.vintage}).text)
        total += int(page[profiles.EDUCATION][-1]["Estimate"].replace(",", ""))
    assert int(state[profiles.EDUCATION][-1]["Estimate"].replace(",", "")) == total


def test_profile_oracle_recomputed_from_the_served_pages(client):
    record = RECORDS["offline_stats_004"]
    lines, met = served_profile_answer(client, "acs5", PROFILE.vintage)
    assert record["oracle_answer"].split("\n") == [
        "county|bachelor_pct|unemployment_pct|participation_pct|conditions_met|label", *lines]
    assert 1 in met, "near-miss: a county meets one condition fewer than needed"
    assert {"STRONG", "MIXED"} <= {line.rsplit("|", 1)[1] for line in lines}


def test_profile_traps_change_the_answer(client):
    """The default product (1-year) drops a kept small county; the default vintage gives other rows."""
    lines, _ = served_profile_answer(client, "acs5", PROFILE.vintage)
    one_year, _ = served_profile_answer(client, "acs1", PROFILE.vintage)
    latest, _ = served_profile_answer(client, "acs5", stats.VINTAGES[-1])
    assert one_year != lines and latest != lines
    small = {c.name for c in DATA.counties_in(PROFILE.state) if c.population < stats.ONE_YEAR_MIN_POPULATION}
    assert small & {line.split("|")[0] for line in lines}


# ---------------------------------------------------------------- 005: mortality query


def query(client: TestClient, **form: str) -> list[dict[str, str]]:
    """The result rows of one POSTed query (the page's only table; none before a valid query)."""
    return next(iter(sections(client.post("/stats/mortality", data=form).text).values()), [])


def served_changes(client: TestClient, measure: str) -> list[tuple[str, str, str, float | None]]:
    """(county, first cell, second cell, percent change or None when suppressed) from the two POSTed queries."""
    header = mortality.MEASURES[measure]
    first, second = (query(client, group_by="county", state=DEATHS.state, year=str(year), cause=DEATHS.cause,
                           measure=measure) for year in DEATHS.years)
    out = []
    for a, b in zip(first, second, strict=True):
        assert a["County"] == b["County"]
        if a["County"] == "Total":
            continue
        cells = a[header], b[header]
        change = None if "Suppressed" in cells else \
            100 * (float(cells[1].split()[0]) - float(cells[0].split()[0])) / float(cells[0].split()[0])
        out.append((a["County"], *cells, change))
    return out


def test_mortality_form_defaults_post_only_and_marks_small_counts(client):
    page = BeautifulSoup(client.get("/stats/mortality").text, "lxml")
    assert page.find("table") is None  # results only after the POST
    assert page.select_one("#measure option[selected]")["value"] == "adjusted"
    assert page.select_one("#year option[selected]")["value"] == str(mortality.MORTALITY_YEARS[-1])
    default = query(client, totals="on")
    assert [r["State"] for r in default] == [*stats.STATES.values(), "Total"]
    counts = query(client, group_by="county", state=DEATHS.state, year=str(DEATHS.years[0]), cause=DEATHS.cause,
                   measure="deaths")
    shown = [r["Deaths"] for r in counts]
    assert "Suppressed" in shown
    assert all(not cell.isdigit() or not 1 <= int(cell) <= 9 for cell in shown)
    rates = query(client, group_by="county", state=DEATHS.state, year=str(DEATHS.years[0]), cause=DEATHS.cause,
                  measure="adjusted")
    assert any(r["Age-adjusted rate per 100,000"].endswith("(Unreliable)") for r in rates)
    bad = client.post("/stats/mortality", data={"measure": "median"}).text
    assert "Unknown grouping" in bad and "<table" not in bad
    assert "must be a number" in client.post("/stats/mortality", data={"year": "last"}).text


def test_deaths_oracle_recomputed_from_the_served_pages(client):
    rows = []
    for county, a, b, change in served_changes(client, "deaths"):
        if change is None:
            rows.append("|".join([county, a, b, "Suppressed", "Suppressed"]))
        elif abs(change) >= mortality.CHANGE_THRESHOLD:
            rows.append("|".join([county, a, b, f"{change:.1f}", "UP" if change > 0 else "DOWN"]))
    assert RECORDS["offline_stats_005"]["oracle_answer"] == ";".join(rows)
    assert {r.rsplit("|", 1)[1] for r in rows} == {"UP", "DOWN", "Suppressed"}
    assert any(r.split("|")[1].isdigit() and r.split("|")[2] == "Suppressed" for r in rows), \
        "a county with one suppressed year carries the marker into its change"


def test_deaths_traps_are_real(client):
    counts = served_changes(client, "deaths")
    sizes = [abs(c[3]) for c in counts if c[3] is not None]
    assert any(0.75 * mortality.CHANGE_THRESHOLD <= s < mortality.CHANGE_THRESHOLD for s in sizes), "near-miss county"
    kept = {c[0] for c in counts if c[3] is None or abs(c[3]) >= mortality.CHANGE_THRESHOLD}
    rates = served_changes(client, "adjusted")
    kept_by_rate = {c[0] for c in rates if c[3] is None or abs(c[3]) >= mortality.CHANGE_THRESHOLD}
    assert kept != kept_by_rate, "the default rate measure must select other counties"
    assert len(kept) < len(counts)
