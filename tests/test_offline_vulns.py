import json
import re
from dataclasses import replace
from datetime import date
from urllib.parse import urlencode

import pytest
from bs4 import BeautifulSoup
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from browser.types import Check, Click, Goto, Select, Target
from tasks.offline.app import DEFAULT_SEED, site_data
from tasks.offline.sites.vulns import data as vulns_data
from tasks.offline.sites.vulns import oracles as vulns_oracles
from tasks.offline.sites.vulns import pages as vulns_pages
from tasks.offline.sites.vulns import scripted as vulns_scripted
from tasks.offline.sites.vulns import search as vulns_search

DATA = vulns_data.build(DEFAULT_SEED)


@pytest.fixture(scope="module")
def client():
    app = Starlette(routes=[Mount("/vulns", routes=vulns_pages.routes(DATA))])
    with TestClient(app) as test_client:
        yield test_client


def table_rows(html: str, index: int = 0) -> tuple[list[str], list[list[str]]]:
    table = BeautifulSoup(html, "lxml").find_all("table")[index]
    headers = [th.get_text(strip=True) for th in table.find("thead").find_all("th")]
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    return headers, rows


def read_all_pages(client, url: str) -> list[dict[str, str]]:
    """Follow the Next link like a user until it disappears."""
    out: list[dict[str, str]] = []
    while url:
        html = client.get(url).text
        if "<table" not in html:
            return out
        headers, rows = table_rows(html)
        out += [dict(zip(headers, row, strict=True)) for row in rows]
        nxt = BeautifulSoup(html, "lxml").find("a", rel="next")
        url = "/vulns/search" + nxt["href"] if nxt else ""
    return out


def params_of(query: vulns_search.Query) -> dict[str, str]:
    params = {"keyword": query.keyword, "severity": query.severity, "date_type": query.date_type,
              "from": query.start, "to": query.end, "vendor": query.vendor, "product": query.product}
    if query.include_deprecated:
        params["include_deprecated"] = "on"
    return params


def test_same_seed_same_data_and_answers():
    again = vulns_data.build(DEFAULT_SEED)
    assert again == DATA
    assert json.dumps(vulns_oracles.tasks(again)) == json.dumps(vulns_oracles.tasks(DATA))
    assert vulns_data.build(DEFAULT_SEED + 1) != DATA


def test_default_search_page_shows_form_but_no_records(client):
    html = client.get("/vulns/search").text
    assert 'name="keyword"' in html
    assert "OVR-" not in html


def test_deprecated_identifiers_need_the_flag(client):
    q = vulns_oracles.choose(DATA).deprecated_query
    with_flag = read_all_pages(client, "/vulns/search?" + "&".join(f"{k}={v}" for k, v in params_of(q).items()))
    params = params_of(q)
    params.pop("include_deprecated")
    without = read_all_pages(client, "/vulns/search?" + "&".join(f"{k}={v}" for k, v in params.items()))
    assert len(with_flag) > len(without) > 0
    old_ids = {p.id for p in DATA.products.values() if p.replaced_by == q.product}
    assert any(row["Product"] in old_ids for row in with_flag)
    assert not any(row["Product"] in old_ids for row in without)
    soup = BeautifulSoup(client.get("/vulns/search").text, "lxml")
    assert not soup.select("#product option[data-deprecated]")
    template = BeautifulSoup(client.get("/vulns/search").text, "html.parser").find("template")
    assert old_ids <= {o["value"] for o in template.find_all("option")}
    flagged = BeautifulSoup(client.get("/vulns/search?include_deprecated=on").text, "lxml")
    assert {o["value"] for o in flagged.select("#product option[data-deprecated]")} >= old_ids


def test_next_link_pagination_covers_every_result_without_page_numbers(client):
    rows = read_all_pages(client, "/vulns/search?severity=CRITICAL")
    expected = [v.id for v in DATA.vulns if v.severity == "CRITICAL"]
    assert [r["ID"] for r in rows] == expected
    first_page = client.get("/vulns/search?severity=CRITICAL").text
    assert "page=" not in first_page and re.search(r">\s*2\s*<", first_page) is None


def test_date_type_switches_between_modified_and_published(client):
    window = "from=2023-01-01&to=2023-03-31"
    published = read_all_pages(client, f"/vulns/search?date_type=published&{window}")
    modified = read_all_pages(client, f"/vulns/search?{window}")
    assert all("2023-01-01" <= r["Published"] <= "2023-03-31" for r in published)
    assert all("2023-01-01" <= r["Last modified"] <= "2023-03-31" for r in modified)
    assert {r["ID"] for r in published} != {r["ID"] for r in modified}


def test_detail_page_history_holds_score_revisions_and_remaps(client):
    remapped = next(v for v in DATA.vulns if any(c.action == "Identifier remapped" for c in v.history))
    headers, rows = table_rows(client.get(f"/vulns/detail/{remapped.id}").text, index=4)
    assert headers == ["Date", "Action", "Field", "Old value", "New value"]
    remap = next(r for r in rows if r[1] == "Identifier remapped")
    assert DATA.products[remap[3]].replaced_by == remap[4]
    assert client.get("/vulns/detail/OVR-1999-00000").status_code == 404


def test_history_oracle_matches_detail_pages(client):
    q = vulns_oracles.choose(DATA).history_query
    listed = read_all_pages(client, "/vulns/search?" + "&".join(f"{k}={v}" for k, v in params_of(q).items()))
    revisions = []
    for row in listed:
        _, history = table_rows(client.get(f"/vulns/detail/{row['ID']}").text, index=4)
        revisions += [(row["ID"], h[0], h[3], h[4]) for h in history if h[2] == "CVSS base score"]
    record = next(t for t in vulns_oracles.tasks(DATA) if t["task_id"] == "offline_vulns_002")
    lines = record["oracle_answer"].split(";")
    assert lines[0] == "id|changed|old_score|new_score"
    assert sorted(revisions, key=lambda r: (r[1], r[0])) == [tuple(x.split("|")) for x in lines[1:]]


def test_paged_oracles_match_what_the_pages_show(client):
    chosen = vulns_oracles.choose(DATA)
    records = {t["task_id"]: t for t in vulns_oracles.tasks(DATA)}
    for task_id, q, columns, sep in (
        ("offline_vulns_001", chosen.deprecated_query, ("ID", "Published", "Score"), "\n"),
        ("offline_vulns_003", chosen.date_type_query, ("ID", "Published", "Weakness"), ","),
    ):
        rows = read_all_pages(client, "/vulns/search?" + "&".join(f"{k}={v}" for k, v in params_of(q).items()))
        assert len(rows) > vulns_data.PAGE_SIZE, "the answer must need the Next link"
        shown = sorted("|".join(r[c] for c in columns) for r in rows)
        assert shown == sorted(records[task_id]["oracle_answer"].split(sep))


def test_answers_absent_from_default_pages(client):
    default_text = client.get("/vulns/").text + client.get("/vulns/search").text
    for record in vulns_oracles.tasks(DATA):
        for row_id in re.findall(r"OVR-\d{4}-\d{5}", record["oracle_answer"]):
            assert row_id not in default_text


@pytest.mark.parametrize("seed", [1, 7, 99])
def test_other_seeds_still_yield_valid_tasks(seed):
    """`sgr sites serve --seed N` must work for any seed: targets are chosen from the data, not hard-coded."""
    data = vulns_data.build(seed)
    records = vulns_oracles.tasks(data)
    assert all(2 <= r["oracle_output_cardinality"] <= 20 for r in records)
    assert set(vulns_scripted.walkthroughs(data)) == {r["task_id"] for r in records[::2]}


def test_first_fit_names_what_it_could_not_find():
    from tasks.offline.sites._first_fit import first_fit

    assert first_fit([1, 5, 9], lambda n: n > 3, "number") == 5
    with pytest.raises(ValueError, match="no vulns date-type search fits"):
        first_fit([], lambda q: True, "vulns date-type search")


@pytest.mark.slow
async def test_deprecated_products_appear_only_after_ticking_the_box(offline_server, chromium_worker, tmp_path):
    data = site_data("vulns", DEFAULT_SEED)
    old = next(p for p in data.products.values() if p.deprecated)

    def product_options(observation) -> list[str]:
        control = next(c for c in observation.controls if c.label.endswith("Product"))
        return [o.label for o in control.options]

    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        opened = await driver.act(Goto(url=f"{offline_server.origin}/vulns/search"))
        assert f"{old.id} (deprecated)" not in product_options(opened.observation)
        missing = await driver.act(Select(target=Target(label="Product"), option=old.id))
        assert not missing.ok and missing.error == "option_not_found"
        ticked = await driver.act(Check(target=Target(label="Include deprecated product identifiers")))
        assert ticked.ok and f"{old.id} (deprecated)" in product_options(ticked.observation)
        chosen = await driver.act(Select(target=Target(label="Product"), option=f"{old.id} (deprecated)"))
        assert chosen.ok, chosen.message
        searched = await driver.act(Click(target=Target(text="Search")))
        assert searched.ok and searched.observation is not None
        [table] = searched.observation.tables
        assert table.rows and {row[table.headers.index("Product")] for row in table.rows} == {old.id}


def test_remap_oracle_recomputed_from_served_pages(client):
    """004's answer follows from the pages: every result page (Next), each record's change history, and the
    'before X.Y.Z' of every listed summary; leaving deprecated identifiers out moves the common bound."""
    q = vulns_oracles.choose(DATA).remap_query

    def listed(query: vulns_search.Query) -> list[dict[str, str]]:
        return read_all_pages(client, "/vulns/search?" + urlencode(params_of(query)))

    def bound(rows: list[dict[str, str]]) -> str:
        versions = [re.search(r"before (\d+\.\d+\.\d+)", r["Summary"]).group(1) for r in rows]
        return "before " + min(versions, key=lambda v: tuple(map(int, v.split("."))))

    records = listed(q)
    assert len(records) > vulns_data.PAGE_SIZE, "the results must continue after Next"
    rows = []
    for record in records:
        headers, history = table_rows(client.get(f"/vulns/detail/{record['ID']}").text, 4)
        for change in (dict(zip(headers, h, strict=True)) for h in history):
            if change["Action"] == "Identifier remapped":
                days = (date.fromisoformat(change["Date"]) - date.fromisoformat(record["Published"])).days
                rows.append((change["Date"], record["ID"], change["Old value"], str(days)))
    expected = [f"{rid}|{old}|{day}|{days}|{bound(records)}" for day, rid, old, days in sorted(rows)]
    record = next(r for r in vulns_oracles.tasks(DATA) if r["task_id"] == "offline_vulns_004")
    assert record["oracle_answer"] == "\n".join(expected)
    assert 0 < len(rows) < len(records), "never-remapped filings are near misses"
    assert bound(listed(replace(q, include_deprecated=False))) != bound(records)


def test_milestone_oracle_recomputed_from_served_pages(client):
    """005's answer follows from the pages: the product page's milestones (legacy identifiers only behind the
    toggle), every result page (Next), and each listed record's milestone and change history; the traps (no
    deprecated ids, the default date type, a vendor-wide search) change it."""
    q = vulns_oracles.choose(DATA).milestone_query
    product_url = f"/vulns/products/{q.product}"
    default_headers, _ = table_rows(client.get(product_url).text)
    assert "Legacy identifier" not in default_headers, "legacy identifiers are hidden by default"
    headers, table = table_rows(client.get(product_url, params={"legacy": "on"}).text)
    milestones = [dict(zip(headers, row, strict=True)) for row in table]
    legacy_ids = {":".join(m["Legacy identifier"].split(":")[3:5]) for m in milestones
                  if m["Legacy identifier"] != "—"}
    [old] = legacy_ids  # the product's one former name (vendor:product), as its legacy identifiers show

    def per_milestone(query: vulns_search.Query) -> list[str]:
        listed = read_all_pages(client, "/vulns/search?" + urlencode(params_of(query)))
        remaps: dict[str, list[tuple[str, str]]] = {}
        pending: dict[str, int] = {}
        for record in listed:
            html = client.get(f"/vulns/detail/{record['ID']}").text
            affected_headers, [affected] = table_rows(html, 2)
            filed = dict(zip(affected_headers, affected, strict=True))
            history_headers, history = table_rows(html, 4)
            for change in (dict(zip(history_headers, h, strict=True)) for h in history):
                if change["Action"] == "Identifier remapped" and change["Old value"] == old \
                        and change["New value"] == q.product:
                    remaps.setdefault(filed["Milestone"], []).append((change["Date"], record["ID"]))
            pending[filed["Milestone"]] = pending.get(filed["Milestone"], 0) + (filed["Identifier"] == old)
        rows = []
        for m in milestones:
            found = remaps.get(m["Milestone"], [])
            rows.append("|".join((
                m["Milestone"], "NONE" if m["Legacy identifier"] == "—" else m["Legacy identifier"],
                m["Current identifier"], " ".join(sorted(rid for _, rid in found)) or "NONE", str(len(found)),
                min(found)[0] if found else "NONE", str(pending.get(m["Milestone"], 0)))))
        return rows

    expected = per_milestone(q)
    record = next(r for r in vulns_oracles.tasks(DATA) if r["task_id"] == "offline_vulns_005")
    assert record["oracle_answer"] == "\n".join(expected)
    assert len(read_all_pages(client, "/vulns/search?" + urlencode(params_of(q)))) > vulns_data.PAGE_SIZE
    assert any(row.split("|")[4] == "0" and row.split("|")[1] != "NONE" for row in expected)
    assert expected[-1].split("|")[1] == "NONE", "the newest milestone has no legacy identifier"
    assert per_milestone(replace(q, include_deprecated=False)) != expected
    assert per_milestone(replace(q, date_type="modified")) != expected
    vendor_query = replace(q, product="", vendor=DATA.products[q.product].vendor)
    vendor_wide = read_all_pages(client, "/vulns/search?" + urlencode(params_of(vendor_query)))
    assert {r["ID"] for r in vendor_wide} > {r["ID"] for r in read_all_pages(
        client, "/vulns/search?" + urlencode(params_of(q)))}
    others = {p.id for p in DATA.products.values() if p.deprecated and p.vendor == vendor_query.vendor} - {old}
    if any("another product of the same vendor" in trap for trap in record["metadata"]["traps"]):
        assert any((e := vulns_oracles.remap_event(v)) and e.old in others for v in vulns_search.search(DATA, vendor_query))


def test_product_dictionary_lists_deprecated_ids_only_when_asked(client):
    old = next(p for p in DATA.products.values() if p.deprecated)
    _, default = table_rows(client.get("/vulns/products").text)
    _, flagged = table_rows(client.get("/vulns/products", params={"include_deprecated": "on"}).text)
    assert old.id not in {r[0] for r in default} and old.id in {r[0] for r in flagged}
    assert "replaced by" in client.get(f"/vulns/products/{old.id}").text
    assert client.get("/vulns/products/nobody:nothing").status_code == 404
