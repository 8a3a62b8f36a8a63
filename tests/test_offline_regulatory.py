"""Regulatory site: default 3-year window, facets and counts, custom dropdown, page size, CSV, cookie banner,
filter-resetting detail links, POSTed library filters and PDF orders."""

from __future__ import annotations

import csv
import io
import re

import pytest
from pypdf import PdfReader
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from tasks.offline.app import DEFAULT_SEED
from tasks.offline.sites.regulatory import data as reg_data
from tasks.offline.sites.regulatory import oracles as reg_oracles
from tasks.offline.sites.regulatory import pages as reg_pages
from tasks.offline.sites.regulatory import scripted as reg_scripted
from tasks.offline.sites.regulatory import search as reg_search


@pytest.fixture(scope="module")
def data() -> reg_data.RegulatoryData:
    return reg_data.build(DEFAULT_SEED)


@pytest.fixture()
def client(data) -> TestClient:
    return TestClient(Starlette(routes=[Mount("/regulatory", routes=reg_pages.routes(data))]))


def complaint_ids(html: str) -> list[str]:
    return re.findall(r'<td><a href="/regulatory/complaints/(\d+)">', html)


def test_same_seed_same_data_and_answers(data):
    again = reg_data.build(DEFAULT_SEED)
    assert again == data and reg_oracles.tasks(again) == reg_oracles.tasks(data)


def test_default_window_drops_older_complaints(client, data):
    q = reg_oracles.choose(data).history_query
    params = {k: v for k, v in q.filters}
    default_csv = client.get("/regulatory/complaints.csv", params=params).text
    all_csv = client.get("/regulatory/complaints.csv", params={**params, "date_received_min": q.start,
                                                                "date_received_max": q.end}).text
    default_rows = list(csv.DictReader(io.StringIO(default_csv)))
    all_rows = list(csv.DictReader(io.StringIO(all_csv)))
    assert all(r["Date received"] >= reg_data.DEFAULT_WINDOW[0] for r in default_rows)
    assert len(all_rows) > len(default_rows) and any(r["Date received"] < "2022" for r in all_rows)
    assert [r["Complaint ID"] for r in all_rows] == [c.id for c in reg_search.search_complaints(data, q)]


def test_page_size_and_numbered_pages(client, data):
    q = reg_oracles.choose(data).relief_query
    params = {**dict(q.filters), "date_received_min": q.start, "date_received_max": q.end}
    page1 = client.get("/regulatory/complaints", params=params).text
    big = client.get("/regulatory/complaints", params={**params, "size": "50"}).text
    assert len(complaint_ids(page1)) == 10 and 'rel="next"' in page1
    assert len(complaint_ids(big)) == len(reg_search.search_complaints(data, q)) > 10


def test_facet_counts_follow_filters(client, data):
    html = client.get("/regulatory/complaints", params={"company": reg_data.COMPANIES[0]}).text
    counts = dict(re.findall(r"<li>([A-Z][^<]*?) <span class=\"count\">\((\d+)\)</span>", html))
    window = reg_search.ComplaintQuery(filters=(("company", reg_data.COMPANIES[0]),))
    assert int(counts["Mortgage"]) == sum(c.product == "Mortgage" for c in reg_search.search_complaints(data, window))


def test_custom_company_dropdown_is_aria_listbox(client):
    html = client.get("/regulatory/complaints").text
    assert 'role="combobox"' in html and 'role="listbox"' in html
    assert '<select id="company"' not in html and 'type="hidden" name="company"' in html
    assert html.count('role="option"') == len(reg_data.ALL_COMPANIES) + 1


def test_cookie_banner_until_consent(client):
    assert 'id="cookie-banner"' in client.get("/regulatory/complaints").text
    client.cookies.set(reg_data.CONSENT_COOKIE, "1")
    assert 'id="cookie-banner"' not in client.get("/regulatory/complaints").text


def test_detail_links_reset_filters(client, data):
    complaint = data.complaints[0]
    html = client.get(f"/regulatory/complaints/{complaint.id}").text
    assert '<a href="/regulatory/complaints">Back to results</a>' in html
    assert "New search" in html


def test_library_filters_are_posted_and_pdf_holds_penalty(client, data):
    form = dict(reg_oracles.choose(data).document_form)
    assert len(re.findall(r'href="/regulatory/documents/[\d-]+"', client.get("/regulatory/documents").text)) \
        == reg_data.DEFAULT_DOCUMENTS_SHOWN
    html = client.post("/regulatory/documents", data=form).text
    docs = reg_search.search_documents(data, form)
    assert f"{len(docs)} matching documents" in html
    steps = reg_scripted.walkthroughs(data)["offline_regulatory_003"]
    pattern = next(s["args"]["pattern"] for s in steps if s["tool"] == "extract_rows")
    rows = []
    for doc in sorted(docs, key=lambda d: d.respondent):
        page = client.get(f"/regulatory/documents/{doc.slug}").text
        assert f"/regulatory/documents/{doc.slug}.pdf" in page and reg_data.money(doc.penalty) not in page
        response = client.get(f"/regulatory/documents/{doc.slug}.pdf")
        assert response.headers["content-type"] == "application/pdf"
        text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(response.content)).pages)
        match = re.search(pattern, text)
        assert match, text
        rows.append(f"{match['respondent']}|{match['civil_money_penalty']}")
    oracle = next(r for r in reg_oracles.tasks(data) if r["task_id"] == "offline_regulatory_003")["oracle_answer"]
    assert ";".join(rows) == oracle


def test_pdf_bytes_are_deterministic(data):
    doc = data.documents[0]
    reg_pages.document_pdf.cache_clear()
    first = reg_pages.document_pdf(doc)
    reg_pages.document_pdf.cache_clear()
    assert reg_pages.document_pdf(doc) == first


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_still_give_tasks_with_effective_traps(seed):
    data = reg_data.build(seed)
    records = reg_oracles.tasks(data)
    assert len(records) == 10 and all(2 <= r["oracle_output_cardinality"] <= 20 for r in records)
    assert set(reg_scripted.walkthroughs(data)) == {r["task_id"] for r in records if not r["task_id"].endswith("-g")}


# ---------------------------------------------------------------- derived tasks 004 (enforcement) and 005 (cohort)


def _record(data, task_id: str) -> dict:
    return next(r for r in reg_oracles.tasks(data) if r["task_id"] == task_id)


def _action_slugs(html: str) -> list[str]:
    return re.findall(r'<td><a href="/regulatory/enforcement/([\w-]+)">', html)


def test_enforcement_dates_filter_last_updated_by_default(client, data):
    start, end = reg_oracles.choose_action_window(data)
    default = client.get("/regulatory/enforcement").text
    assert len(_action_slugs(default)) == reg_data.ACTION_PAGE_SIZE and 'rel="next"' in default
    assert '<option value="updated" selected>Last updated</option>' in default
    by_update = _action_slugs(client.get("/regulatory/enforcement", params={
        "from": start, "to": end, "status": "Terminated"}).text)
    by_filing = _action_slugs(client.get("/regulatory/enforcement", params={
        "date_field": "filed", "from": start, "to": end, "status": "Terminated"}).text)
    wanted = [a.slug for a in reg_search.search_actions(data, reg_search.ActionQuery("filed", start, end, status="Terminated"))]
    assert by_filing == wanted and set(by_update) != set(by_filing)  # the date-field trap changes the set
    assert not set(wanted) & set(_action_slugs(default))
    page = client.get(f"/regulatory/enforcement/{wanted[0]}").text
    assert '<a href="/regulatory/enforcement">Back to enforcement actions</a>' in page  # resets every filter


def _pages(body: bytes) -> list[str]:
    return [p.extract_text() for p in PdfReader(io.BytesIO(body)).pages]


def test_consent_order_pages_give_the_oracle(client, data):
    """Redress and penalty pages of 004 are the first pages of the served consent order that print the amounts."""
    start, end = reg_oracles.choose_action_window(data)
    rows = []
    for action in sorted(reg_search.search_actions(data, reg_search.ActionQuery("filed", start, end, status="Terminated")),
                         key=lambda a: (a.filed, a.docket)):
        detail = client.get(f"/regulatory/enforcement/{action.slug}").text
        assert "Consent Order (PDF)" in detail and "Stipulation (PDF)" in detail
        pages = _pages(client.get(f"/regulatory/enforcement/{action.slug}/consent-order.pdf").content)
        assert all(f"Page {i} of {len(pages)}" in text for i, text in enumerate(pages, 1))

        def first(amount: str, texts: list[str]) -> str:
            return next((str(i) for i, text in enumerate(texts, 1) if amount in text), "NONE")

        redress = reg_data.money(action.redress) if action.redress else "NONE"
        penalty = reg_data.money(action.penalty)
        rows.append("|".join([action.respondent, action.docket, action.filed.isoformat(), redress,
                              first(redress, pages) if action.redress else "NONE", penalty, first(penalty, pages)]))
        assert sum(reg_data.money(action.redress) in t for t in pages) >= (2 if action.redress else 0)  # printed again
        stipulation = _pages(client.get(f"/regulatory/enforcement/{action.slug}/stipulation.pdf").content)
        assert first(penalty, stipulation) == "1" != first(penalty, pages)  # the look-alike document
    record = _record(data, "offline_regulatory_004")
    assert record["oracle_answer"].split("\n")[1:] == rows
    assert any("|NONE|NONE|" in row for row in rows)


def test_cohort_stages_recomputed_from_the_csv_export(client, data):
    """Hand-rolled recount of 005 over the served CSV: peak month, its top state/company, earliest complaint,
    then the top company removed from the whole cohort, twice."""
    plan = data.cohort
    text = client.get("/regulatory/complaints.csv", params={
        "product": plan.product, "date_received_min": plan.start, "date_received_max": plan.end}).text
    cohort = list(csv.DictReader(io.StringIO(text)))
    assert cohort and all(plan.start <= r["Date received"] <= plan.end for r in cohort)
    excluded: list[str] = []
    rows = []
    for stage in (1, 2, 3):
        rest = [r for r in cohort if r["Company"] not in excluded]
        months: dict[str, int] = {}
        for r in rest:
            months[r["Date received"][:7]] = months.get(r["Date received"][:7], 0) + 1
        month = max(sorted(months), key=lambda m: months[m])
        in_month = [r for r in rest if r["Date received"].startswith(month)]
        states = {r["State"]: sum(x["State"] == r["State"] for x in in_month) for r in in_month}
        companies = {r["Company"]: sum(x["Company"] == r["Company"] for x in in_month) for r in in_month}
        state = max(sorted(states), key=lambda k: states[k])
        company = max(sorted(companies), key=lambda k: companies[k])
        earliest = min((r for r in in_month if r["Company"] == company),
                       key=lambda r: (r["Date received"], int(r["Complaint ID"])))
        rows.append("|".join([str(stage), "; ".join(excluded) or "NONE", month, str(months[month]), state,
                              str(states[state]), company, str(companies[company]), earliest["Complaint ID"],
                              earliest["Date received"]]))
        excluded.append(company)
    assert _record(data, "offline_regulatory_005")["oracle_answer"].split("\n")[1:] == rows
    default = client.get("/regulatory/complaints.csv", params={"product": plan.product}).text
    assert not {r["Complaint ID"] for r in csv.DictReader(io.StringIO(default))} & {r["Complaint ID"] for r in cohort}


def test_old_complaint_tasks_keep_their_companies(data):
    """The credit-reporting cohort uses its own companies, so the old tasks' searches are unchanged by it."""
    chosen = reg_oracles.choose(data)
    for q in (chosen.history_query, chosen.relief_query):
        assert all(c.product != reg_data.CREDIT_PRODUCT for c in reg_search.search_complaints(data, q))
    assert not set(reg_data.BUREAUS) & set(reg_data.COMPANIES)


# ---------------------------------------------------------------- the same mechanics in real Chromium


@pytest.mark.slow
async def test_banner_blocks_then_back_link_resets_filters(offline_server, chromium_worker, tmp_path):
    """Clicks fail under the cookie banner; after consent the filters apply, and a complaint page's
    'Back to results' link silently returns to the default three-year window."""
    start = f"{offline_server.origin}/regulatory/complaints"
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin], start_url=start) as driver:
        blocked = await driver.act({"kind": "click", "target": {"text": "Apply filters"}})
        assert not blocked.ok
        assert (await driver.act({"kind": "click", "target": {"text": "Accept all cookies"}})).ok
        steps = [
            {"kind": "select", "target": {"label": "Company"}, "option": reg_data.COMPANIES[2]},
            {"kind": "set_range", "start_target": {"label": "Date received from"},
             "end_target": {"label": "Date received to"}, "start": reg_data.ALL_DATES_FROM, "end": "2024-12-31"},
            {"kind": "click", "target": {"text": "Apply filters"}},
        ]
        for step in steps:
            result = await driver.act(step)
            assert result.ok, (step, result.error, result.message)
        filtered = await driver.observe()
        assert filtered.query_state["company"] == [reg_data.COMPANIES[2]]
        assert filtered.query_state["date_received_min"] == [reg_data.ALL_DATES_FROM]
        first_id = filtered.tables[0].rows[0][0]
        assert (await driver.act({"kind": "click", "target": {"text": first_id}})).ok
        assert (await driver.act({"kind": "click", "target": {"text": "Back to results"}})).ok
        reset = await driver.observe()
        assert reset.query_state == {}
        values = {c.label: c.value for c in reset.controls}
        date_from = next(value for label, value in values.items() if label.endswith("Date received from"))
        assert date_from == reg_data.DEFAULT_WINDOW[0]
        assert values["Company"] == "All companies"
