"""Observations of real pages in real Chromium: every control and option, refs, tables, pagination, notices."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, async_playwright

from browser.launch import launch_chromium
from browser.listing import SECTION_TEXT_JS
from browser.observe import observe_page
from browser.refs import locate_ref
from browser.render import LONG_OPTION_LIST, collapsed_controls, render
from browser.types import Control, Observation, Option

pytestmark = pytest.mark.slow

OBS_PAGES = [
    "obs_select.html", "obs_aria_dropdown.html", "obs_form_controls.html", "obs_iframe.html", "obs_shadow.html",
    "obs_delayed_table.html", "obs_cards.html", "obs_next_only.html", "obs_cookie.html",
]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def chromium() -> AsyncIterator[Any]:
    async with async_playwright() as pw:
        browser = await launch_chromium(pw.chromium)
        yield browser
        await browser.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(chromium: Any) -> AsyncIterator[Page]:
    context = await chromium.new_context()
    page = await context.new_page()
    yield page
    await context.close()


async def _observe(page: Page, url: str, **kwargs: Any) -> Observation:
    await page.goto(url, wait_until="load")
    return await observe_page(page, page_id=1, **kwargs)


def text_of(obs: Observation, budget: int = 1500) -> str:
    """The observation as a prompt with `budget` tokens of room shows it (the observer returns the structure)."""
    return render(obs, budget).text


def tokens_of(obs: Observation, budget: int = 1500) -> int:
    return render(obs, budget).tokens


def _by_label(obs: Observation, label: str) -> Control:
    matches = [c for c in obs.controls if c.label == label]
    assert len(matches) == 1, f"{label!r} not unique among {[c.label for c in obs.controls]}"
    return matches[0]


def _line_of(obs: Observation, control: Control) -> str:
    return next(line for line in text_of(obs).splitlines() if line.startswith(f"[{control.ref}] "))


async def test_native_selects_keep_every_option(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_select.html"))
    country = _by_label(obs, "Reporter country")
    assert country.kind == "select" and country.name == "country"
    assert len(country.options) == 200 and country.options_total == 200
    assert [o.label for o in country.options[:3]] == ["All countries", "Country 001", "Country 002"]
    assert country.value == "Country 137" and [o.value for o in country.options if o.selected] == ["c137"]
    line = _line_of(obs, country)
    assert "Country 137" in line and "189 more of 200" in line and "Country 150" not in line
    sort = _by_label(obs, "Sort by")
    assert sort.value == "Newest first"
    assert "{Relevance | Newest first | Oldest first | Trade value}" in _line_of(obs, sort)
    per_page = _by_label(obs, "Results per page")
    assert per_page.kind == "page_size" and per_page.value == "25"
    flow = _by_label(obs, "Trade flow")
    assert flow.value == "Imports, Exports" and len(flow.options) == 3
    assert _by_label(obs, "Apply").kind == "submit"
    assert all(c.form == "filters" for c in obs.controls)


async def test_custom_dropdowns_list_hidden_options(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_aria_dropdown.html"))
    licence = _by_label(obs, "Licence")
    assert licence.kind == "custom_select" and licence.value == "Any licence"
    assert [o.label for o in licence.options] == ["Any licence", "CC-BY 4.0", "CC0", "ODbL"]
    assert [o.value for o in licence.options] == ["any", "cc-by", "cc0", "odbl"]
    granularity = _by_label(obs, "Granularity")
    assert granularity.value == "Monthly" and len(granularity.options) == 4
    # choosing an option through the page's own widget shows up in the next observation
    button = await locate_ref(page, licence.ref)
    assert button is not None
    await button.click()
    await page.get_by_role("option", name="CC0").click()
    after = await observe_page(page, page_id=1)
    assert _by_label(after, "Licence").value == "CC0"
    assert _by_label(after, "Licence").ref == licence.ref


async def test_form_controls_with_labels_states_and_values(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_form_controls.html"))
    query = _by_label(obs, "Search conditions")
    assert (query.kind, query.value) == ("search", "asthma")
    phase = _by_label(obs, "Study phase")
    assert phase.kind == "radio_group" and phase.value == "Phase 2"
    assert [(o.label, o.value) for o in phase.options] == [("Any phase", "any"), ("Phase 2", "2"), ("Phase 3", "3")]
    assert (_by_label(obs, "Has results").checked, _by_label(obs, "Include children").checked) == (True, False)
    assert _by_label(obs, "Recruiting only").kind == "toggle"
    assert _by_label(obs, "Start date: From").value == "2020-01-01"
    assert _by_label(obs, "Start date: To").value == "2023-12-31"
    assert _by_label(obs, "Minimum enrolment (range 0..10000)").value == "100"
    assert _by_label(obs, "Radius (km) (range 0..500)").kind == "range"
    assert _by_label(obs, "Industry funded").kind == "checkbox"  # inside a closed <details>
    assert _by_label(obs, "Search").kind == "submit"
    assert "Sponsor" not in {c.label for c in obs.controls}  # in a hidden panel: reported, not offered
    assert any(n.startswith("[hidden controls] 1 form field(s)") and '"Sponsor"' in n for n in obs.notices)
    await page.check("input[name=children]")
    await page.fill("#from", "2021-05-01")
    after = await observe_page(page, page_id=1)
    assert _by_label(after, "Include children").checked is True
    assert _by_label(after, "Start date: From").value == "2021-05-01"
    assert '"Start date: From" = "2021-05-01"' in text_of(after)


async def test_iframe_controls_have_frame_unique_refs(page: Page, fixture_site: Any) -> None:
    await page.goto(fixture_site.url("obs_iframe.html"))
    await page.frame_locator("iframe").locator("#region").wait_for()
    obs = await observe_page(page, page_id=1)
    region = _by_label(obs, "Region")
    assert region.ref.startswith("f1e") and region.frame and "filters" in region.frame
    assert region.value == "South"
    refs = [c.ref for c in obs.controls]
    assert len(refs) == len(set(refs)) == 3
    assert obs.frames and "f1" in obs.frames[0]
    locator = await locate_ref(page, region.ref)
    assert locator is not None
    await locator.select_option(label="East")
    again = await observe_page(page, page_id=1)
    assert _by_label(again, "Region").value == "East"
    assert [c.ref for c in again.controls] == refs


async def test_shadow_dom_control(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_shadow.html"))
    office = _by_label(obs, "Patent office")
    assert office.value == "USPTO" and [o.label for o in office.options] == ["EPO", "USPTO", "JPO"]
    assert _by_label(obs, "Granted only").checked is True
    locator = await locate_ref(page, office.ref)
    assert locator is not None and await locator.evaluate("el => el.getRootNode() instanceof ShadowRoot")


async def test_aria_radio_options_are_labelled_by_their_own_text(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("act_radios.html"))
    frequency = next(c for c in obs.controls if c.label == "Frequency")
    assert frequency.kind == "radio_group" and frequency.value == "Annual"
    assert [(o.label, o.selected) for o in frequency.options] == [("Annual", True), ("Monthly", False)]
    assert "{Annual | Monthly}" in text_of(obs)


async def test_table_rendered_after_delayed_fetch(page: Page, fixture_site: Any) -> None:
    before = await _observe(page, fixture_site.url("obs_delayed_table.html"))
    assert before.tables == []
    await page.wait_for_selector("#approvals")
    obs = await observe_page(page, page_id=1)
    (table,) = obs.tables
    assert table.caption == "Drug approvals" and table.headers == ["Drug", "Year", "Count"]
    assert table.rows[0] == ["Aspirin", "2019", "12"] and table.total_rows == 4
    assert obs.result_count == 4
    assert "| Naproxen | 2022 | 3 |" in text_of(obs)


async def test_cards_pagination_chips_facets_and_tabs(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_cards.html?q=soil&type=article&page=3"))
    assert obs.query_state == {"q": ["soil"], "type": ["article"], "page": ["3"]}
    (cards,) = obs.tables
    assert cards.source == "cards" and cards.headers == ["title", "authors", "year", "venue"]
    assert cards.rows[0] == ["Paper number 26 on soil carbon", "Author 26, Coauthor 26", "2001",
                             "Journal of Soils vol. 1"]
    assert len(cards.rows) == 10 and cards.row_links[9] == ["/paper/35"]
    p = obs.pagination
    assert p is not None
    assert (p.page, p.pages, p.first, p.last, p.total, p.page_size) == (3, 6, 26, 35, 57, 10)
    assert p.has_next and p.has_prev and obs.result_count == 57
    assert obs.chips == ["Year: 2001–2010", "Type: Article"]
    chip = _by_label(obs, "Type: Article")
    assert chip.kind == "chip"
    remover = await locate_ref(page, chip.ref)
    assert remover is not None and await remover.get_attribute("aria-label") == "Remove Type filter"
    facet = _by_label(obs, "Document type")
    assert facet.kind == "link" and facet.value == "Article"
    assert [o.label for o in facet.options] == ["Article", "Review", "Thesis"]
    pager = _by_label(obs, "Pagination")
    assert {o.label for o in pager.options} == {"Previous", "1", "2", "3", "4", "5", "6", "Next"}
    assert [o.label for o in pager.options if o.selected] == ["3"]
    assert (_by_label(obs, "List").checked, _by_label(obs, "Table").checked) == (True, False)
    assert _by_label(obs, "Show per page").kind == "page_size"
    assert "Pagination: page 3 of 6; showing 26-35 of 57; page size 10; next: yes; prev: yes" in text_of(obs)
    assert [ln.text for ln in obs.links] == ["Home", "About", "Terms"]


async def test_next_only_pagination_and_table_links(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_next_only.html"))
    assert obs.pagination is not None and obs.pagination.has_next and not obs.pagination.has_prev
    assert obs.pagination.page is None and obs.result_count == 1204
    (table,) = obs.tables
    assert table.headers == ["Filing", "Date", "Amount"] and table.total_rows == 20
    assert table.row_links[0] == ["/filing/1"]


async def test_cookie_banner_and_alert_are_notices(page: Page, fixture_site: Any) -> None:
    obs = await _observe(page, fixture_site.url("obs_cookie.html"))
    accept = _by_label(obs, "Accept all")
    assert any(n.startswith("[dialog] We use cookies") and f"Accept all [{accept.ref}]" in n for n in obs.notices)
    assert "[alert] No data for the selected period." in obs.notices
    assert (_by_label(obs, "Chart").kind, _by_label(obs, "Chart").checked) == ("tab", True)
    await (await locate_ref(page, accept.ref)).click()  # type: ignore[union-attr]
    after = await observe_page(page, page_id=1)
    assert not any(n.startswith("[dialog]") for n in after.notices)


async def test_a_thread_page_keys_per_post_widgets_as_one_run_and_reads_past_the_title(page: Page,
                                                                                       fixture_site: Any) -> None:
    """A question with 4 answers (issue 20): vote and flag buttons with aria-pressed are toggles, not tabs; the
    answers' widgets (votes, share, comment flags) are one panel keyed by their run of posts and named by the
    list's heading, not by a heading inside a post's text; a popover menu shown without the page's styles and a
    post's own status line are no page notices; the page heading's section reads on past its wrapper."""
    obs = await _observe(page, fixture_site.url("obs_thread.html"))
    votes = [c for c in obs.controls if c.label in ("Up vote", "Down vote", "Bookmark", "Flag comment")]
    assert len(votes) == 2 + 4 * 2 + 4 * 3 and {c.kind for c in votes} == {"toggle"}
    assert _by_label(obs, "Bookmark").checked is True
    in_answers = [c for c in obs.controls if c.box_label == "4 Answers (4 items)"]
    assert len(in_answers) == 4 * (2 + 2 + 3) and len({c.box for c in in_answers}) == 1
    question = [c for c in obs.controls if c.rank == 0 and c not in in_answers]
    assert {c.box_label for c in question} == {"question"}  # not "My code", the heading inside its text
    assert not any("Tour Start here" in n or "This answer is hidden" in n for n in obs.notices)
    assert any("This answer is hidden." in line for line in obs.outline)  # the post's own text
    assert [t.headers for t in obs.tables] == [["", "", ""]] * 4  # styling classes ('ai-center') are no header
    section = await page.evaluate(SECTION_TEXT_JS, {"heading": "How do I load a module script?"})
    assert "I get an import error" in section and "Answer 4 text" in section  # an h1 inside a post does not end it
    assert "Ask Question" in section


async def test_refs_stable_across_observations_and_new_elements(page: Page, fixture_site: Any) -> None:
    first = await _observe(page, fixture_site.url("obs_form_controls.html"))
    second = await observe_page(page, page_id=1)
    assert [(c.ref, c.label) for c in first.controls] == [(c.ref, c.label) for c in second.controls]
    await page.evaluate("""() => {
        const box = document.createElement('label');
        box.innerHTML = '<input type="checkbox" name="late"> Added later';
        document.querySelector('form').prepend(box);
    }""")
    third = await observe_page(page, page_id=1)
    added = _by_label(third, "Added later")
    assert added.ref not in {c.ref for c in first.controls}
    assert {c.ref: c.label for c in third.controls if c.ref != added.ref} == {c.ref: c.label for c in first.controls}
    assert await locate_ref(page, "e99999") is None
    assert await locate_ref(page, "not a ref") is None


@pytest.mark.parametrize("name", OBS_PAGES)
async def test_every_control_and_option_is_in_the_text(page: Page, fixture_site: Any, name: str) -> None:
    await page.goto(fixture_site.url(name))
    if name == "obs_delayed_table.html":
        await page.wait_for_selector("#approvals")
    if name == "obs_iframe.html":
        await page.frame_locator("iframe").locator("#region").wait_for()
    obs = await observe_page(page, page_id=1)
    assert obs.controls or name == "obs_delayed_table.html"
    assert tokens_of(obs) <= 1500
    for control in obs.controls:
        line = _line_of(obs, control)
        assert f'"{control.label}"' in line
        if len(control.options) <= LONG_OPTION_LIST:
            for option in control.options:
                assert option.label in line
        else:
            assert f"more of {len(control.options)}" in line
            assert all(o.label in line for o in control.options if o.selected)
    # each control element carries its ref; grouped members point at their control
    counts = await page.evaluate("""() => {
        const els = [...document.querySelectorAll('select, input:not([type=hidden]), textarea, [role=option]')]
          .filter(e => e.checkVisibility() || e.closest('details:not([open]), [role=listbox]'));
        return els.map(e => e.getAttribute('data-sgr-ref') && (e.getAttribute('data-sgr-group') || e.getAttribute('data-sgr-ref')));
    }""")
    refs = {c.ref for c in obs.controls}
    assert all(ref in refs for ref in counts), counts


async def test_budget_keeps_every_control_by_ref_and_cuts_rows(page: Page) -> None:
    selects = "".join(
        f'<label>Filter {i} <select name="f{i}">' + "".join(f"<option>v{i}-{j}</option>" for j in range(5))
        + "</select></label>" for i in range(25)
    )
    rows = "".join(f"<tr><td>row {i}</td><td>{i * 7}</td><td>some longer cell text {i}</td></tr>" for i in range(400))
    links = "".join(f'<a href="/doc/{i}">Document {i}</a> ' for i in range(200))
    paras = "".join(f"<p>Paragraph {i} of explanatory text.</p>" for i in range(60))
    await page.set_content(
        f"<main><h1>Big</h1><form>{selects}</form><table><tr><th>Name</th><th>N</th><th>Note</th></tr>{rows}"
        f"</table>{paras}</main><footer>{links}</footer>"
    )
    obs = await observe_page(page, page_id=1)
    assert len(obs.controls) == 25 and tokens_of(obs) <= 1500
    for control in obs.controls:
        assert _line_of(obs, control).endswith("{" + " | ".join(o.label for o in control.options) + "}")
    assert obs.tables[0].total_rows == 400 and obs.tables[0].truncated  # capped at MAX_TABLE_ROWS
    assert "| row 0 | 0 | some longer cell text 0 |" in text_of(obs)
    assert "more rows of TABLE 0 not shown — read_table 0" in text_of(obs)
    tiny = await observe_page(page, page_id=1)
    assert tokens_of(tiny, 200) <= 200  # the fixed part is bounded too (issue 20): no page exceeds the budget
    # the form's dropdowns as one line naming every ref and the read that lists them
    shown = {c.ref for c in tiny.controls if f"[{c.ref}] select" in text_of(tiny, 200)}
    collapsed = {c.ref for members in collapsed_controls(tiny, 200).values() for c in members}
    assert shown | collapsed == {c.ref for c in tiny.controls} and not shown & collapsed and collapsed
    for head in collapsed_controls(tiny, 200):
        assert f"list_options {head} lists them" in text_of(tiny, 200)
    # what the collapsed panel leaves goes to the main table, cut with its note (at most its first rows)
    assert "rows of TABLE 0 not shown — read_table 0" in text_of(tiny, 200) and "| row 5 |" not in text_of(tiny, 200)


def test_pagination_and_count_from_text() -> None:
    from browser.observe import _pagination

    pager = Control(ref="e1", kind="link", label="Pagination", value="2", options=[
        Option(label="1", value="?p=1"), Option(label="2", value="?p=2", selected=True),
        Option(label="3", value="?p=3")])
    p, count = _pagination("Results\nShowing 26–50 of 1,204 records\n", [pager])
    assert p is not None and (p.page, p.pages, p.first, p.last, p.total, p.page_size) == (2, 49, 26, 50, 1204, 25)
    assert p.has_next and p.has_prev and count == 1204
    p, count = _pagination("Page 4 of 9", [])
    assert p is not None and (p.page, p.pages, p.has_next, p.has_prev) == (4, 9, True, True)
    p, count = _pagination("We report results on 4 datasets in a long sentence that is prose, not a count line"
                           " at all, as it goes on and on well past one hundred characters.", [])
    assert (p, count) == (None, None)
    assert _pagination("312 complaints", [])[1] == 312


async def test_offline_site_pages_show_every_control(page: Page, offline_server: Any) -> None:
    from tasks.offline.app import discover_sites

    for site in discover_sites():
        await page.goto(f"{offline_server.origin}/{site.prefix}/")
        obs = await observe_page(page, page_id=1)
        assert obs.title and tokens_of(obs) <= 1500, site.prefix
        for control in obs.controls:
            assert _line_of(obs, control)
        hrefs = [ln.href for ln in obs.links]
        assert all(h.startswith(("http://", "https://")) for h in hrefs)
        assert f"-> /{site.prefix}/" in text_of(obs) or not any(f"/{site.prefix}/" in h for h in hrefs)


async def test_long_card_list_sends_only_the_first_rows_but_counts_all(page: Page) -> None:
    cards = "".join(
        f"<div class='hit'><h3 class='name'>Gauging station {i}</h3><span class='river'>River Avon {i % 7}</span></div>"
        for i in range(300)
    )
    await page.set_content(f"<main><div id='hits'>{cards}</div></main>")
    obs = await observe_page(page, page_id=1, max_table_rows=50)
    (table,) = obs.tables
    assert (table.source, table.total_rows, len(table.rows), table.truncated) == ("cards", 300, 50, True)
    assert table.rows[49] == ["Gauging station 49", "River Avon 0"]


async def test_a_frame_that_cannot_be_observed_is_reported(page: Page, fixture_site: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import browser.observe as observe_module

    await page.goto(fixture_site.url("obs_select.html"))
    monkeypatch.setattr(observe_module, "observe_script", lambda: "() => { throw new Error('walk failed'); }")
    obs = await observe_page(page, page_id=1)
    assert obs.controls == []
    assert any(n.startswith("[observer] page not observed") and "walk failed" in n for n in obs.notices)
    assert "walk failed" in text_of(obs)


async def test_a_list_of_link_cards_ranks_as_chrome_but_result_cards_stay_content(page: Page) -> None:
    """Issue 20: cards of nothing but a heading and links ('Data / Resources / Help' link cards) are site
    navigation even inside the main element; cards with text of their own (results, station details) stay main
    content, and so do their tables' rows in the text."""
    nav = "".join(f"<section class='col'><h3>Topic {i}</h3><ul class='plain'>"
                  + "".join(f"<li><a href='/t{i}/{j}'>Topic {i} page {j}</a></li>" for j in range(3))
                  + "</ul></section>" for i in range(3))
    hits = "".join(f"<div class='hit'><a href='/s/{i}'>Station {i}</a><span class='river'>on the river Avon, "
                   f"gauged since 19{i}0</span></div>" for i in range(4))
    await page.set_content(f"<main><h1>Stations</h1><div id='hits'>{hits}</div><div class='row'>{nav}</div></main>")
    obs = await observe_page(page, page_id=1)
    ranks = {t.rows[0][0].split(";")[0]: t.rank for t in obs.tables}
    assert ranks == {"Station 0": 0, "Topic 0": 2}, ranks


async def test_a_term_and_its_values_are_one_outline_line(page: Page, fixture_site: Any) -> None:
    """dt/dd pairs read as "Term: value" (a one-character value such as 4 or 0 was dropped as too short, and the
    term read as empty: a played model opened a page to learn what read_facts then saw); a term with no value
    stays a bare line."""
    obs = await _observe(page, fixture_site.url("obs_terms.html"))
    assert obs.outline[1:] == ["Taxon ID: 10294", "Subspecies: 4", "Synonyms: 0", "Distribution: Norway; Chile",
                               "Notes"]
