"""Observations that hold up on real pages (issue 13): the saved real-page corpus, and one page written
here with the structures real benchmark sites have (a long station dropdown among 12, twin Search
buttons in two forms, site menus, a layout table, a table footer total, a dated abstract page)."""

from __future__ import annotations

import pytest
from playwright.async_api import async_playwright

from browser.delta import render_observation
from browser.launch import launch_chromium
from browser.policy import OriginPolicy
from browser.render import render
from browser.types import Goto, ListLinks, ListOptions, ReadSection, Target
from tests.fixtures.realpages import CorpusServer, load_corpus, measure_corpus_page, offline_route

pytestmark = pytest.mark.slow
BUDGET = 1500


def _line(text: str, ref: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"[{ref}] "))


async def test_corpus_observations_hold_every_control_and_the_values_a_task_needs_within_budget() -> None:
    """The issue's bar on the saved real pages, all of them and the benchmark-kind ones alone: every DOM control
    addressable and >= 98% named in the text, every option reachable, >= 95% of the value probes in the text or
    one documented read away, every observation within its budget and nothing left out without a note."""
    corpus = load_corpus()
    assert len(corpus) >= 20 and sum(1 for p in corpus if p.benchmark) >= 10
    samples = []
    async with async_playwright() as pw:
        browser = await launch_chromium(pw.chromium)
        try:
            with CorpusServer() as server:
                for entry in corpus:
                    context = await browser.new_context(viewport={"width": 1280, "height": 900})
                    await offline_route(context, server.origin)
                    page = await context.new_page()
                    await page.goto(server.url(entry))
                    samples.append(await measure_corpus_page(page, entry, BUDGET))
                    await context.close()
        finally:
            await browser.close()
    for group in (samples, [x for x in samples if x.benchmark]):
        controls = sum(x.controls_dom for x in group)
        assert sum(x.controls_addressable for x in group) == controls
        assert sum(x.controls_named for x in group) >= 0.98 * controls
        assert sum(x.options_reachable for x in group) >= sum(x.options_dom for x in group)
        on_page = sum(x.probes_on_page for x in group)
        reached = sum(x.probes_in_text + x.probes_one_call for x in group)
        assert reached >= 0.95 * on_page, [(x.page, x.probes_missed) for x in group if x.probes_missed]
    assert on_page >= 0.95 * sum(x.probes for x in samples if x.benchmark)  # the probes are on the pages
    assert [x.page for x in samples if x.obs_tokens > BUDGET] == []
    # issue 27: the main content's links addressable by ref, in the text or one read away (before: 68.7%; the
    # saved news front page 7.4%: its story links were table text without refs)
    assert sum(x.main_links_reached for x in samples) >= 0.95 * sum(x.main_links for x in samples)
    news = next(x for x in samples if x.page == "l-news.ycombinator.com.front")
    assert news.main_links >= 100 and news.main_links_reached == news.main_links
    assert [(x.page, x.silent_cuts) for x in samples if x.silent_cuts] == []
    # the reads the offer is decided from (Rendering.reads, from the layout) are the ones the text names
    assert [(x.page, x.reads_unrecorded) for x in samples if x.reads_unrecorded] == []
    # issue 20: the main content first. Measured 2026-11-25: 95.9% of the benchmark-kind pages' probes in the
    # text (70 of 73; 84.9% before the budget was spent whole; see benchmarks/bench_observation.py --corpus).
    # Issue 27 (2026-11-26): 67 of 73 (91.8%): each row link's ref costs ~4 tokens, so the station name index
    # shows 42 of its 57 linked rows instead of all (3 probes are in the 15 rows one read_table away)
    bench = [x for x in samples if x.benchmark]
    assert sum(x.probes_in_text for x in bench) >= 0.9 * sum(x.probes_on_page for x in bench)
    assert sum(x.controls_named for x in bench) == sum(x.controls_dom for x in bench)


def text_of(obs) -> str:
    """The observation as a prompt with the worker's budget of room shows it."""
    return render(obs, BUDGET).text


def tokens_of(obs) -> int:
    return render(obs, BUDGET).tokens


async def _corpus_page(browser, server: CorpusServer, name: str):
    """A corpus page opened through the agent's own browser session (policy: the corpus origin only)."""
    entry = next(p for p in load_corpus() if p.name == name)
    result = await browser.act(Goto(url=server.url(entry)))
    assert result.ok, result.message
    return result.observation


async def test_a_chrome_menu_gives_way_to_the_main_content_and_stays_one_read_away(chromium_worker, tmp_path) -> None:
    """A government data page: its site menu (15 buttons in the header) is one line naming their refs and the
    read that lists them, because the page's tables do not fit whole; list_options on that line lists every
    button with its ref, and a listed ref works."""
    with CorpusServer() as server:
        async with chromium_worker.task_browser(str(tmp_path), [server.origin]) as browser:
            obs = await _corpus_page(browser, server, "b-hydro-monthly-table")
            panel = next(line for line in text_of(obs).splitlines() if " panel " in line and "15 controls" in line)
            head = panel.split("]", 1)[0][1:]
            menu = [c for c in obs.controls if c.rank == 2 and c.kind == "button" and c.label != "Main Menu"]
            assert len(menu) == 15 and all(f'[{c.ref}] button' not in text_of(obs) for c in menu)
            assert f"list_options {head} lists them" in panel
            listed = await browser.act(ListOptions(target=Target(ref=head)))
            assert listed.ok and listed.message.startswith(f"15 of 15 controls of the line [{head}]")
            for control in menu:
                assert f'[{control.ref}] button "{control.label}"' in listed.message
            # the main content it gave way to: the station's details and the table's summary rows
            assert "| Publishing Office:; VANCOUVER;" in text_of(obs) and "(end) | Mean |" in text_of(obs)
            assert tokens_of(obs) <= BUDGET


async def test_the_abstract_page_shows_its_abstract_whole_and_ranks_the_tool_panel_as_chrome(chromium_worker,
                                                                                        tmp_path) -> None:
    with CorpusServer() as server:
        async with chromium_worker.task_browser(str(tmp_path), [server.origin]) as browser:
            obs = await _corpus_page(browser, server, "b-arxiv-abs-2101.01097")
    toggles = [c for c in obs.controls if c.kind == "toggle"]
    assert len(toggles) == 15 and {c.rank for c in toggles} == {2} and len({c.box for c in toggles}) == 1
    assert "We have found that the proposed TRIQ architecture achieves outstanding performance." in text_of(obs)
    outline = obs.outline[: obs.outline_main]  # main content lines come first; the tool panel's text after them
    assert any(line.startswith("Abstract:") for line in outline)
    assert not any("Bibliographic Explorer (What is the Explorer?)" in line for line in outline)


async def test_a_long_description_shows_its_last_lines_with_its_longest_lines_cut_to_a_read(chromium_worker,
                                                                                          tmp_path) -> None:
    """A database's description page whose text is a little over the budget: every line is in the text, the
    closing ones too, and the long lists are cut, each with the ref that read_section returns whole."""
    with CorpusServer() as server:
        async with chromium_worker.task_browser(str(tmp_path), [server.origin]) as browser:
            obs = await _corpus_page(browser, server, "b-cellosaurus-description")
            assert tokens_of(obs) <= BUDGET and "more outline lines not shown" not in text_of(obs)
            assert obs.outline[-1] in text_of(obs)  # the last line of the main text
            cut = [line for line in text_of(obs).splitlines() if line.endswith("]") and "… [read_section " in line]
            assert cut
            for line in cut:
                ref = line.rsplit("[read_section ", 1)[1].rstrip("]")
                whole = next(o for o, r in zip(obs.outline, obs.outline_refs, strict=True) if r == ref)
                section = await browser.act(ReadSection(target=Target(ref=ref)))
                assert section.ok and whole.split(" [read_section")[0].rstrip("…")[-30:] in section.message


async def test_a_heavy_qa_page_spends_its_budget_on_the_question_not_on_per_post_widgets(chromium_worker,
                                                                                        tmp_path) -> None:
    """A question with 39 answers and 354 controls (issue 20): the vote, share, flag and comment widgets of every
    post are one line whose refs run on (e12-e15, e17-e27, e32-e350), not three lines of scattered refs named after a
    heading in the question's text or a comment's id; vote and flag buttons are toggles; the site's menus shown
    without its styles are no notices; the comment lists have no class-name header; the question's text is in
    the text, and the title's section reads on into the answers."""
    with CorpusServer() as server:
        async with chromium_worker.task_browser(str(tmp_path), [server.origin]) as browser:
            obs = await _corpus_page(browser, server, "q-stackoverflow.com.import-module")
            title = obs.outline[0].lstrip("# ")
            section = await browser.act(ReadSection(heading=title, max_chars=25_000))
            listed = await browser.act(ListOptions(target=Target(ref="e12")))
    assert listed.ok and listed.message.startswith("334 of 334 controls of the line [e12]")
    assert '] toggle "Up vote' in listed.message
    lines = text_of(obs).splitlines()
    posts = [line for line in lines if " panel " in line and "39 Answers (39 items)" in line]
    assert len(posts) == 1 and ": 334 controls" in posts[0] and "refs e12-e15, e17-e27, e32-e350 —" in posts[0]
    assert not any("comment-1" in line or "File milsymbol.js" in line for line in lines if " panel " in line)
    assert {c.kind for c in obs.controls if c.label in ("Up vote", "Down vote")} == {"toggle"}
    assert not any("Tour Start here" in n or "Server Fault" in n for n in obs.notices)
    assert "comment-copy" not in text_of(obs) and "ai-center" not in text_of(obs)
    assert "I'm using ArcGIS JSAPI 4.12 and wish to use Spatial Illusions" in text_of(obs) and tokens_of(obs) <= BUDGET
    assert section.ok and 'I got this error because I forgot the type="module" inside the script tag:' in section.message


async def test_realish_page_observation(task_browser, fixture_site) -> None:
    result = await task_browser.act(Goto(url=fixture_site.url("obs_realish.html")))
    obs = result.observation
    text = text_of(obs)
    assert tokens_of(obs) <= 1500
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
    seen = render_observation(result.observation.model_dump(), 1500).text
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
