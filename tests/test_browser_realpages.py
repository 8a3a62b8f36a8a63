"""Observations that hold up on real pages (issue 13): the saved real-page corpus, and one page written
here with the structures real benchmark sites have (a long station dropdown among 12, twin Search
buttons in two forms, site menus, a layout table, a table footer total, a dated abstract page)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import async_playwright

from browser.launch import launch_chromium
from browser.observe import observe_page
from browser.policy import OriginPolicy
from browser.types import Goto, ListLinks, ListOptions, ReadSection, Target
from graph.render import observation_text
from tests.fixtures.realpages import CorpusServer, load_corpus, offline_route

pytestmark = pytest.mark.slow


def _line(text: str, ref: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"[{ref}] "))


async def test_every_corpus_page_is_observed_within_budget_with_every_control_and_honest_notes() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 20
    async with async_playwright() as pw:
        browser = await launch_chromium(pw.chromium)
        try:
            with CorpusServer() as server:
                for entry in corpus:
                    context = await browser.new_context()
                    await offline_route(context, server.origin)
                    page = await context.new_page()
                    await page.goto(server.url(entry))
                    obs = await observe_page(page, page_id=1, token_budget=1500)
                    assert obs.tokens <= 1500, entry.name
                    refs: list[Any] = await page.evaluate(
                        "() => [...document.querySelectorAll('select,textarea,button,input:not([type=hidden])')]"
                        ".filter(e => e.checkVisibility()).map(e => e.getAttribute('data-sgr-group')"
                        " || e.getAttribute('data-sgr-ref'))")
                    known = {c.ref for c in obs.controls}
                    assert all(r in known for r in refs), entry.name
                    shown_links = sum(1 for line in obs.text.splitlines() if " -> " in line)
                    if obs.links_total > shown_links:  # links were left out: the text says so, and where
                        assert "more links not shown — list_links" in obs.text, entry.name
                    await context.close()
        finally:
            await browser.close()


async def test_realish_page_observation(task_browser, fixture_site) -> None:
    result = await task_browser.act(Goto(url=fixture_site.url("obs_realish.html")))
    obs = result.observation
    text = obs.text
    assert obs.tokens <= 1500
    # markup in a label is not shown as markup
    group = next(c for c in obs.controls if c.kind == "radio_group")
    assert group.label == "Search by Station"
    # menus are controls
    assert any(c.kind == "button" and c.label == "Data" for c in obs.controls)
    assert any(c.kind == "checkbox" and c.label == "French" and c.checked for c in obs.controls)
    # twin Search buttons say which form they submit
    searches = [c for c in obs.controls if c.label == "Search" and c.kind == "submit"]
    assert {c.form for c in searches} == {"site-search", "station-search"}
    for c in searches:
        assert f'(form "{c.form}")' in _line(text, c.ref)
    # a table footer total is no result count
    assert obs.result_count is None
    # the dateline div and the layout table's text reach the model; the data table is a table
    assert "[Submitted on 30 Dec 2020 (v1), last revised 8 Jan 2021 (this version, v2)]" in text
    assert "Layout cell with the location paragraph: 49.25 N, 123.1 W." in text
    assert "| 2020-01-02 | 13.1 |" in text
    # the abstract is cut with a read that returns the rest; main content precedes the footer links
    cut = next(line for line in obs.outline if line.startswith("Flow records"))
    assert "[read_section " in cut
    assert "Footer link 0" not in text or text.index("Submission history") < text.index("Footer link 0")
    # the long dropdown: summarised with the one call that lists it
    station = next(c for c in obs.controls if c.label == "Station")
    assert len(station.options) == 84 and f"list_options {station.ref} for all" in _line(text, station.ref)

    options = await task_browser.act(ListOptions(target=Target(ref=station.ref)))
    assert options.ok and "84 of 84 options" in options.message and "Station 83 River (value s83)" in options.message
    only = await task_browser.act(ListOptions(target=Target(label="Station"), contains="Station 7"))
    assert only.ok and "10 of 84 options matching" in only.message and "Station 07 River" not in only.message
    ref = cut.rsplit("[read_section ", 1)[1].rstrip("]")
    section = await task_browser.act(ReadSection(target=Target(ref=ref)))
    assert section.ok and "sentence 119 about discharge." in section.message
    history = await task_browser.act(ReadSection(heading="Submission history"))
    assert history.ok and "[v2] Fri, 8 Jan 2021 12:12:32 UTC (376 KB)" in history.message
    links = await task_browser.act(ListLinks(contains="Footer link 14"))
    assert links.ok and "11 links matching" in links.message and "Footer link 149" in links.message


async def test_twelve_dropdowns_reach_the_model_through_the_graph_rendering(task_browser, fixture_site) -> None:
    """The graph shows the browser's rendering as it is: one budget, owned by the browser renderer."""
    result = await task_browser.act(Goto(url=fixture_site.url("obs_realish.html")))
    selects = [c for c in result.observation.controls if c.kind == "select"]
    assert len(selects) == 12
    seen = observation_text(result.observation.model_dump(), token_budget=1500)
    for control in selects:
        assert f"[{control.ref}] select {control.label!r}".replace("'", '"') in seen


def test_static_assets_from_other_origins_decision() -> None:
    policy = OriginPolicy.for_task(["http://site.test"])
    cdn = "https://cdn.example/jquery.min.js"
    assert policy.static_asset_allowed(cdn, "script", "GET", navigation=False)
    assert policy.static_asset_allowed("https://cdn.example/a.css", "stylesheet", "GET", navigation=False)
    assert not policy.static_asset_allowed("https://cdn.example/p.gif", "image", "GET", navigation=False)
    assert not policy.static_asset_allowed("https://api.example/data", "fetch", "GET", navigation=False)
    assert not policy.static_asset_allowed(cdn, "script", "POST", navigation=False)
    assert not policy.static_asset_allowed(cdn, "document", "GET", navigation=True)
    assert not OriginPolicy({"http://site.test"}, static_assets=False).static_asset_allowed(
        cdn, "script", "GET", navigation=False)
