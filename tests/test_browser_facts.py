"""The page-facts read against real Chromium: every kind of labelled value, with its section, and tables by
section; the graph's label matching over the result (exact, whole words, ambiguous, missing)."""

from __future__ import annotations

import pytest

from browser.types import Goto, ReadPageFacts
from graph.evidence.fact_match import FactError, find_fact, section_table, source_value

pytestmark = pytest.mark.slow


async def _facts(task_browser, fixture_site) -> dict:
    result = await task_browser.act(ReadPageFacts(url=fixture_site.url("facts_detail.html")))
    assert result.ok and result.facts is not None, result.message
    return result.facts.model_dump()


async def test_page_facts_reads_every_kind_of_labelled_value(task_browser, fixture_site):
    facts = await _facts(task_browser, fixture_site)
    pairs = {(f["label"], f["value"]) for f in facts["facts"]}
    assert {("Status", "Active"), ("Last updated", "3 Mar 2021"), ("Drainage area", "1,234.5 km²"),
            ("Aliases", "Cedar Ck; Millbrook gauge"), ("Operator", "Water Survey"), ("Units", "Imperial"),
            ("View", "Graph")} <= pairs
    assert not any(f["label"] == "Secret" for f in facts["facts"])  # hidden text is not a fact
    assert facts["heading"] == "Cedar Creek at Millbrook (01AB123)"
    assert facts["title"].startswith("Record 01AB123")
    records = {tuple(f["section"]): f["value"] for f in facts["facts"] if f["label"] == "Record"}
    assert records == {("Cedar Creek at Millbrook (01AB123)", "Flow"): "1998–2015",
                       ("Cedar Creek at Millbrook (01AB123)", "Level"): "2003–2015"}


async def test_the_url_is_opened_first_and_policy_applies(task_browser, fixture_site):
    await task_browser.act(Goto(url=fixture_site.url("act_form.html")))
    result = await task_browser.act(ReadPageFacts(url=fixture_site.url("facts_detail.html")))
    assert result.ok and result.observation.url.endswith("facts_detail.html")
    refused = await task_browser.act(ReadPageFacts(url=fixture_site.foreign_url("facts_detail.html")))
    assert not refused.ok and refused.error == "blocked_by_policy"


async def test_labels_match_whole_and_never_guess(task_browser, fixture_site):
    facts = await _facts(task_browser, fixture_site)
    assert find_fact(facts, "drainage area")[0] == "1,234.5 km²"  # exact beats the longer look-alike
    assert find_fact(facts, "Gross drainage area:")[0] == "1,500 km²"
    assert find_fact(facts, "Record", section="level")[0] == "2003–2015"
    with pytest.raises(FactError, match="ambiguous"):
        find_fact(facts, "Record")  # two sections show it: the caller must say which
    with pytest.raises(FactError, match="page shows") as missing:
        find_fact(facts, "Area code")
    assert "Drainage area" in str(missing.value)
    assert source_value("heading", facts, url="", page_text="")[0].endswith("(01AB123)")
    assert source_value("url:id", facts, url="http://x/p?id=7", page_text="")[0] == "7"


async def test_tables_are_found_by_section(task_browser, fixture_site):
    facts = await _facts(task_browser, fixture_site)
    level, _ = section_table(facts, "Level")
    assert level["rows"] == [["2015", "7"]]
    flow, _ = section_table(facts, "flow data availability")
    assert flow["rows"][0] == ["2015", "11"]
    with pytest.raises(FactError, match="Flow"):
        section_table(facts, "Discharge")


async def test_tables_of_labelled_values_and_links_by_text(task_browser, fixture_site):
    """A Label|Estimate|Margin table gives each label its estimate; a header row over one data row gives each
    header its cell; a table of numbers gives no labels; a link is found by its text (its absolute URL)."""
    result = await task_browser.act(ReadPageFacts(url=fixture_site.url("facts_tables.html")))
    assert result.ok and result.facts is not None, result.message
    facts = result.facts.model_dump()
    assert find_fact(facts, "Population 25 years and over")[0] == "788,259"
    assert find_fact(facts, "Bachelor's degree or higher", section="Educational attainment")[0] == "233,150"
    assert find_fact(facts, "Type status")[0] == "lectotype" and find_fact(facts, "Catalogue no.")[0] == "NHMB 1097"
    assert not any(f["label"] in ("2019", "2020") for f in facts["facts"])  # a year column labels nothing
    exact = source_value("link:Consent Order (PDF)", facts, url="", page_text="")
    assert exact == (fixture_site.url("files/order.pdf"), "link 'Consent Order (PDF)'")
    assert source_value("link:consent order", facts, url="", page_text="")[0] == exact[0]  # its words
    with pytest.raises(FactError, match="ambiguous"):
        source_value("link:PDF", facts, url="", page_text="")  # two links: never a guess
