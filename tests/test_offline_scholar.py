"""Scholarly archive site: deterministic data, URL-state search mechanics, traps that really change answers."""

from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from tasks.offline.app import DEFAULT_SEED
from tasks.offline.sites import _census as census
from tasks.offline.sites.scholar import data as scholar_data
from tasks.offline.sites.scholar import oracles as scholar_oracles
from tasks.offline.sites.scholar import pages as scholar_pages
from tasks.offline.sites.scholar import scripted as scholar_scripted
from tasks.offline.sites.scholar import search as scholar_search


@pytest.fixture(scope="module")
def data() -> scholar_data.ScholarData:
    return scholar_data.build(DEFAULT_SEED)


@pytest.fixture(scope="module")
def client(data) -> TestClient:
    return TestClient(Starlette(routes=[Mount("/scholar", routes=scholar_pages.routes(data))]))


def result_ids(html: str) -> list[str]:
    return re.findall(r'<td><a href="/scholar/abs/([\d.]+)">', html)


def test_same_seed_same_data_and_answers(data):
    again = scholar_data.build(DEFAULT_SEED)
    assert again == data
    assert scholar_oracles.tasks(again) == scholar_oracles.tasks(data)
    assert scholar_data.build(DEFAULT_SEED + 1) != data


def test_default_search_page_shows_no_results(client):
    html = client.get("/scholar/search").text
    assert "Enter search terms" in html and result_ids(html) == []


def test_cross_listing_switch_and_date_basis_change_results(client, data):
    q = scholar_oracles.choose(data).primary_query
    base = {"terms": q.terms, "field": "title", "category": q.category, "from": q.start, "to": q.end}
    strict = result_ids(client.get("/scholar/search", params={**base, "cross": "0", "basis": "original"}).text)
    default = result_ids(client.get("/scholar/search", params=base).text)
    by_id = data.by_id()
    assert strict and all(by_id[i].primary == q.category for i in strict)
    assert all(q.start <= by_id[i].first_day.isoformat() <= q.end for i in strict)
    assert set(default) - set(strict), "the default scope (cross-listed, latest version) must add rows"
    assert any(q.category in by_id[i].cross for i in default)


def test_form_checkbox_unticked_excludes_cross_lists(client, data):
    q = scholar_oracles.choose(data).primary_query
    params = [("terms", q.terms), ("field", "title"), ("category", q.category), ("cross", "0"),
              ("basis", "original"), ("from", q.start), ("to", q.end), ("size", "50")]
    ticked = result_ids(client.get("/scholar/search", params=[*params, ("cross", "1")]).text)
    unticked = result_ids(client.get("/scholar/search", params=params).text)
    assert set(unticked) < set(ticked)


def test_page_numbers_and_page_size(client, data):
    q = scholar_oracles.choose(data).paged_query
    params = {"terms": q.terms, "field": "abstract", "category": q.category, "from": q.start, "to": q.end}
    page1 = client.get("/scholar/search", params=params).text
    page2 = client.get("/scholar/search", params={**params, "page": "2"}).text
    everything = client.get("/scholar/search", params={**params, "size": "25"}).text
    assert len(result_ids(page1)) == 10 and "page 1 of 2" in page1
    assert re.search(r'<a href="\?[^"]*page=2">2</a>', page1)
    assert result_ids(page1) + result_ids(page2) == result_ids(everything)
    assert len(result_ids(everything)) == len(scholar_search.search(data, q))


def test_record_page_has_history_and_v1_date(client, data):
    paper = next(p for p in data.papers if len(p.versions) >= 3 and p.withdrawn)
    html = client.get(f"/scholar/abs/{paper.id}").text
    assert f"[v1] {paper.first_day.isoformat()}" in html
    assert f"[Submitted {paper.latest_day.isoformat()}" in html
    assert "Withdrawn" in html and paper.primary in html
    assert client.get("/scholar/abs/0000.00000").status_code == 404


def test_fulltext_table(client, data):
    paper = next(p for p in data.papers if p.fulltext)
    html = client.get(f"/scholar/html/{paper.id}").text
    assert "Table 1" in html and paper.fulltext[0][2] in html


def test_history_walkthrough_pattern_reads_record_pages(client, data):
    """The page-text pattern of the walkthrough yields the oracle row on every record page."""
    from bs4 import BeautifulSoup

    steps = scholar_scripted.walkthroughs(data)["offline_scholar_003"]
    pattern = next(s["args"]["pattern"] for s in steps if s["tool"] == "extract_rows")
    oracle = next(r for r in scholar_oracles.tasks(data) if r["task_id"] == "offline_scholar_003")["oracle_answer"]
    rows = []
    for paper in sorted(scholar_search.search(data, scholar_oracles.choose(data).history_query), key=lambda p: p.id):
        text = BeautifulSoup(client.get(f"/scholar/abs/{paper.id}").text, "lxml").get_text("\n")
        match = re.search(pattern, text)
        assert match, paper.id
        rows.append("|".join(match.group("arxiv_id", "v1_date", "versions")))
    assert ",".join(rows) == oracle


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_still_give_tasks_with_effective_traps(seed):
    data = scholar_data.build(seed)
    records = scholar_oracles.tasks(data)
    assert len(records) == 10 and all(2 <= r["oracle_output_cardinality"] <= 20 for r in records)
    assert set(scholar_scripted.walkthroughs(data)) == {r["task_id"] for r in records if not r["task_id"].endswith("-g")}


def test_trail_oracle_recomputed_from_served_pages(data, client):
    """004's answer follows from the pages alone: every result page under the v1 window, then each record page's
    primary category, submission history and DOI; and the traps change it."""
    q = scholar_oracles.choose(data).trail_query
    year = int(q.start[:4])
    ids: list[str] = []
    for page in (1, 2):
        ids += result_ids(client.get(f"/scholar/search?{q.params(page=page)}").text)
    assert len(ids) > q.size, "the results must span two pages"
    rows = []
    for pid in sorted(ids):
        html = client.get(f"/scholar/abs/{pid}").text
        primary = re.search(r"<dt>Primary category</dt><dd>([^<]+)</dd>", html).group(1)
        if primary != q.category:
            continue
        history = re.findall(r"\[v(\d+)\] (\d{4}-\d{2}-\d{2})", html)
        nxt = next(((f"v{n}", day) for n, day in history if int(day[:4]) == year + 1), ("NONE", "NONE"))
        doi = re.search(r"<dt>DOI</dt><dd>([^<]+)</dd>", html)
        rows.append("|".join((pid, *nxt, doi.group(1) if doi else "NONE")))
    record = next(r for r in scholar_oracles.tasks(data) if r["task_id"] == "offline_scholar_004")
    assert record["oracle_answer"] == "\n".join(rows)
    assert len(rows) < len(ids), "cross-listed near misses must be among the results"
    assert any(r.split("|")[1] == "NONE" for r in rows) and any(r.split("|")[1] != "NONE" for r in rows)
    latest_basis = result_ids(client.get(f"/scholar/search?{q.params(basis='latest')}").text)
    assert set(latest_basis) != set(ids[: len(latest_basis)]), "the default date basis lists other papers"


def _registry_table(client: TestClient, url: str) -> dict[str, tuple[str, int]]:
    """Table 2 of a census full-text page: registry id -> (name, downloads)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(client.get(url).text, "lxml")
    table = next(t for t in soup.find_all("table") if t.caption.get_text().startswith("Table 2:"))
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.tbody.find_all("tr")]
    return {r[0]: (r[1], int(r[3].replace(",", ""))) for r in rows}


def _joined(old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]]) -> list[str]:
    rows = sorted(((new[i][1] - old[i][1], i) for i in old.keys() & new.keys()), key=lambda r: (-r[0], r[1]))
    return ["|".join((i, old[i][0], new[i][0], str(old[i][1]), str(new[i][1]), str(change),
                      "NO" if old[i][0] == new[i][0] else "YES")) for change, i in rows]


def test_census_oracle_recomputed_from_served_pages(data, client):
    """005's answer follows from the pages alone: the title search in the series' category, each edition's record
    page and the v1 full text linked from its submission history, joined by registry id; and every trap (the
    latest version, the preliminary report, the earlier edition, a join by name) changes it."""
    from bs4 import BeautifulSoup

    html = client.get(f"/scholar/search?{scholar_oracles.CENSUS_QUERY.params()}").text
    listed = {tr.find("a").get_text(): tr.find_all("td")[1].get_text()
              for tr in BeautifulSoup(html, "lxml").select("#results tbody tr")}
    assert len(listed) == 4, listed  # editions 2021-2023 and the 2023 preliminary report

    def edition_id(year: int, preliminary: bool = False) -> str:
        return next(pid for pid, title in listed.items()
                    if f"Census {year}" in title and ("preliminary" in title) == preliminary)

    def version_url(pid: str, label: str) -> str:
        abstract = BeautifulSoup(client.get(f"/scholar/abs/{pid}").text, "lxml")
        return next(a["href"] for a in abstract.find_all("a") if a.get_text() == label)

    old, new = (edition_id(y) for y in census.JOINED)
    v1_old, v1_new = (_registry_table(client, version_url(pid, "HTML (v1)")) for pid in (old, new))
    expected = _joined(v1_old, v1_new)
    record = next(r for r in scholar_oracles.tasks(data) if r["task_id"] == "offline_scholar_005")
    lines = record["oracle_answer"].split(";")
    assert lines[0] == "registry_id|name_2022|name_2023|downloads_2022|downloads_2023|change|renamed"
    assert lines[1:] == expected
    assert {line.rsplit("|", 1)[1] for line in expected} == {"YES", "NO"}, "renamed ids must be in the answer"
    latest = _registry_table(client, version_url(new, "Full text (HTML)"))
    assert latest != v1_new and _joined(v1_old, latest) != expected, "the default full text is the revised v2"
    preliminary = _registry_table(client, f"/scholar/html/{edition_id(2023, preliminary=True)}")
    assert _joined(v1_old, preliminary) != expected
    earlier = _registry_table(client, f"/scholar/html/{edition_id(2021)}")
    assert _joined(earlier, v1_new) != expected
    by_name_old = {name: i for i, (name, _) in v1_old.items()}
    by_name_pairs = {(by_name_old[name], i) for i, (name, _) in v1_new.items() if name in by_name_old}
    assert any(a != b for a, b in by_name_pairs), "a name reused under a new id: a name join pairs wrong ids"
    assert client.get(f"/scholar/html/{new}v9").status_code == 404


def test_review_series_stays_out_of_research_searches(data):
    """The series lives in its own category, so the research tasks' searches (and answers) never include it."""
    series = {r.paper_id for r in data.reviews}
    chosen = scholar_oracles.choose(data)
    for q in (chosen.primary_query, chosen.paged_query, chosen.history_query, chosen.trail_query):
        assert not series & {p.id for p in scholar_search.search(data, q)}
    assert len(series) == 4 and len({p.id for p in data.papers}) == len(data.papers)
