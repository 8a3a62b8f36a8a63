"""Actions against real Chromium and the fixture pages: each returns what really happened on the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser.render import render
from browser.types import (
    Back,
    Check,
    Click,
    Download,
    Fill,
    Goto,
    Press,
    ReadPdf,
    ReadTable,
    Select,
    SetRange,
    SetUrlParams,
    Submit,
    Target,
    WaitFor,
)

pytestmark = pytest.mark.slow


async def _open(browser, site, path: str):
    result = await browser.act(Goto(url=site.url(path)))
    assert result.ok, result.message
    return result


async def test_native_select_by_label_and_value_reads_back(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    by_label = await task_browser.act(Select(target=Target(label="Region"), option="Asia"))
    assert by_label.ok, by_label.message
    assert by_label.readback == "Asia"
    assert by_label.delta.controls_changed["Region"] == ("Any", "Asia")
    by_value = await task_browser.act(Select(target=Target(label="Region"), option="eu"))
    assert by_value.ok and by_value.readback == "Europe"


async def test_missing_option_lists_the_available_ones(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    result = await task_browser.act(Select(target=Target(label="Region"), option="Mars"))
    assert not result.ok and result.error == "option_not_found"
    assert "'Europe'" in result.message and "'Americas'" in result.message


async def test_select_on_a_link_group_follows_the_link(task_browser, fixture_site):
    opened = await _open(task_browser, fixture_site, "obs_cards.html?q=soil&type=article&page=3")
    facet = next(c for c in opened.observation.controls if c.kind == "link" and c.label == "Document type")
    result = await task_browser.act(Select(target=Target(ref=facet.ref), option="Review"))
    assert result.ok, result.message
    assert result.delta.params_changed["type"] == (["article"], ["review"])
    facet = next(c for c in result.observation.controls if c.kind == "link" and c.label == "Document type")
    missing = await task_browser.act(Select(target=Target(ref=facet.ref), option="Patent"))
    assert not missing.ok and missing.error == "option_not_found" and "'thesis'" in missing.message.lower()


async def test_radio_group_by_fieldset_legend(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    result = await task_browser.act(Select(target=Target(label="Period"), option="Quarterly"))
    assert result.ok, result.message
    assert result.readback == "Quarterly"
    assert result.delta.controls_changed["Period"] == ("Yearly", "Quarterly")


async def test_custom_aria_dropdown(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    result = await task_browser.act(Select(target=Target(label="Sort by"), option="Name (A-Z)"))
    assert result.ok, result.message
    assert result.readback == "Name (A-Z)"
    missing = await task_browser.act(Select(target=Target(label="Sort by"), option="Price"))
    assert missing.error == "option_not_found" and "'Newest first'" in missing.message


async def test_checkbox_text_and_range_inputs(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    checked = await task_browser.act(Check(target=Target(label="Final data only")))
    assert checked.ok and checked.readback == "checked"
    unchecked = await task_browser.act(Check(target=Target(label="Final data only"), checked=False))
    assert unchecked.ok and unchecked.readback == "unchecked"
    keyword = await task_browser.act(Fill(target=Target(label="Keyword"), value="rivers"))  # placeholder label
    assert keyword.ok and keyword.readback == "rivers"
    years = await task_browser.act(SetRange(start_target=Target(label="From year"), end_target=Target(label="To year"),
                                            start="2001", end="2005"))
    assert years.ok, years.message
    assert years.readback == "2001 .. 2005"


async def test_submit_changes_url_state_and_count(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    await task_browser.act(Select(target=Target(label="Region"), option="Europe"))
    result = await task_browser.act(Click(target=Target(text="Apply filters")))
    assert result.ok, result.message
    assert result.delta.params_added["region"] == ["eu"]
    assert (result.delta.count_before, result.delta.count_after) == (5, 2)
    assert "results 5 -> 2" in result.message
    # submit without a target submits the focused/first form; same state, so the count stays
    again = await task_browser.act(Submit())
    assert again.ok and again.observation.query_state["region"] == ["eu"]


async def test_refs_from_observation_work_and_go_stale_after_navigation(task_browser, fixture_site):
    opened = await _open(task_browser, fixture_site, "act_form.html")
    keyword_ref = next(c.ref for c in opened.observation.controls if c.label == "Keyword")
    filled = await task_browser.act(Fill(target=Target(ref=keyword_ref), value="coal"))
    assert filled.ok and filled.readback == "coal"
    moved = await task_browser.act(Click(target=Target(text="Go to links")))
    assert moved.ok and moved.observation.page_id > opened.observation.page_id
    stale = await task_browser.act(Fill(target=Target(ref=keyword_ref), value="coal"))
    assert not stale.ok and stale.error == "stale_ref"
    unknown = await task_browser.act(Click(target=Target(ref="e999")))
    assert unknown.error == "not_found"


async def test_an_action_names_the_controls_it_set_whatever_the_target_form(task_browser, fixture_site):
    """A model mostly targets by ref, which says nothing of the control: the result names the control as the
    observation does (the state tracker counts it as set by the agent), for a ref and a CSS selector, and both
    ends of a range; an action that sets no control names none."""
    opened = await _open(task_browser, fixture_site, "act_form.html")
    ref = {c.label.split(" (range")[0]: (c.ref, c.label) for c in opened.observation.controls}
    by_ref = await task_browser.act(Select(target=Target(ref=ref["Region"][0]), option="Asia"))
    assert by_ref.ok and by_ref.set_controls == ["Region"], by_ref
    by_selector = await task_browser.act(Fill(target=Target(selector="input[name=q]"), value="coal"))
    assert by_selector.ok and by_selector.set_controls == ["Keyword"], by_selector
    years = await task_browser.act(SetRange(start_target=Target(ref=ref["From year"][0]),
                                            end_target=Target(ref=ref["To year"][0]), start="2001", end="2005"))
    assert years.ok and years.set_controls == [ref["From year"][1], ref["To year"][1]], years
    moved = await task_browser.act(Click(target=Target(text="Go to links")))
    assert moved.ok and moved.set_controls == []


async def test_value_that_silently_reverts(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_revert.html")
    year = await task_browser.act(Select(target=Target(label="Year"), option="2023"))
    assert not year.ok and year.error == "value_reverted"
    assert year.readback == "2024" and "'2023'" in year.message
    unit = await task_browser.act(Fill(target=Target(label="Unit"), value="USD"))
    assert unit.error == "value_reverted" and unit.readback == "EUR"


async def test_click_without_effect(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    result = await task_browser.act(Click(target=Target(text="Do nothing")))
    assert not result.ok and result.error == "no_effect"
    assert result.delta.empty


async def test_control_inside_iframe(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_iframe.html")
    chosen = await task_browser.act(Select(target=Target(label="Indicator", frame="filters"), option="CO2 emissions"))
    assert chosen.ok and chosen.readback == "CO2 emissions"
    shown = await task_browser.act(Click(target=Target(text="Show")))
    assert shown.ok, shown.message
    inner = next(f for f in task_browser.page.frames if f.name == "filters")
    assert await inner.text_content("#out") == "Showing co2"
    missing = await task_browser.act(Click(target=Target(text="Show", frame="nope")))
    assert missing.error == "not_found" and "frames" in missing.message


async def test_post_only_form(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_post.html")
    await task_browser.act(Fill(target=Target(label="Topic"), value="glaciers"))
    result = await task_browser.act(Submit(target=Target(label="Topic")))
    assert result.ok, result.message
    assert result.observation.url.endswith("/post-search")
    assert result.observation.result_count == 3
    assert "Results for glaciers" in render(result.observation).text
    gone = await task_browser.act(Click(target=Target(text="Search")))  # the result page has no such button
    assert gone.error == "not_found"


async def test_read_table_follows_pagination(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "paged?page=1")
    first_page = await task_browser.act(ReadTable(table=0))
    assert first_page.ok and len(first_page.table.rows) == 10
    whole = await task_browser.act(ReadTable(table=0, all_pages=True))
    assert whole.ok, whole.message
    assert [row[0] for row in whole.table.rows] == [f"Item {i}" for i in range(1, 24)]
    assert whole.table.rows[22] == ["Item 23", "69"]
    assert "3 page(s)" in whole.message


async def test_read_table_row_cap(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "paged?page=1")
    capped = await task_browser.act(ReadTable(table=0, all_pages=True, max_rows=15))
    assert capped.ok and len(capped.table.rows) == 15 and capped.table.truncated


async def test_read_pdf_from_link(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_links.html")
    result = await task_browser.act(ReadPdf(target=Target(text="Annual report (PDF)")))
    assert result.ok, result.message
    assert [p.page for p in result.pdf_pages] == [1, 2, 3]
    assert "Region South revenue 95" in result.pdf_pages[1].text
    two = await task_browser.act(ReadPdf(url="/doc.pdf", max_pages=2))
    assert [p.page for p in two.pdf_pages] == [1, 2]


async def test_csv_download_parsed_into_rows(task_browser, fixture_site, tmp_path: Path):
    await _open(task_browser, fixture_site, "act_links.html")
    result = await task_browser.act(Download(target=Target(text="Data (CSV)")))
    assert result.ok, result.message
    assert Path(result.download_path) == tmp_path / "downloads" / "data.csv"
    assert result.table.headers == ["country", "year", "value"]
    assert result.table.rows[1] == ["Germany", "2020", "12"]


async def test_download_over_the_cap(chromium_worker, fixture_site, tmp_path: Path):
    from browser.session import ChromiumWorker

    small = ChromiumWorker(limits=chromium_worker.limits.model_copy(update={"download_bytes": 10_000,
                                                                            "text_chars": 50}))
    try:
        async with small.task_browser(tmp_path, [fixture_site.origin]) as browser:
            await _open(browser, fixture_site, "act_links.html")
            result = await browser.act(Download(target=Target(text="Big data (CSV)")))
            assert result.error == "download_too_large"
            assert not (tmp_path / "downloads" / "big.csv").exists()
            pdf = await browser.act(ReadPdf(url="/doc.pdf"))
            assert pdf.ok  # a 2 kB PDF is under the byte cap, but its text is cut at 50 characters
            assert pdf.pdf_pages[0].text.startswith("Annual report 2024")
            assert 0 < sum(len(page.text) for page in pdf.pdf_pages) <= 50
            not_pdf = await browser.act(ReadPdf(url="/data.csv"))
            assert not_pdf.error == "invalid_action" and "not a PDF" in not_pdf.message
    finally:
        await small.close()


async def test_set_url_params_shows_the_diff(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html?region=eu&q=x")
    result = await task_browser.act(SetUrlParams(params={"region": "as"}, remove=["q"]))
    assert result.ok, result.message
    assert "region: eu -> as" in result.message and "-q" in result.message
    assert result.observation.query_state == {"region": ["as"]}
    assert result.observation.result_count == 2


async def test_back_press_and_wait_for(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    await task_browser.act(Click(target=Target(text="Go to links")))
    back = await task_browser.act(Back())
    assert back.ok and back.observation.url.endswith("act_form.html")
    await task_browser.act(Fill(target=Target(label="Keyword"), value="ice"))
    pressed = await task_browser.act(Press(key="Enter", target=Target(label="Keyword")))
    assert pressed.ok and pressed.observation.query_state["q"] == ["ice"]
    await _open(task_browser, fixture_site, "act_delayed.html")
    await task_browser.act(Click(target=Target(text="Load data")))
    waited = await task_browser.act(WaitFor(text="Data ready", timeout_ms=3000))
    assert waited.ok, waited.message


async def test_a_region_marked_busy_is_waited_for_after_an_action(task_browser, fixture_site):
    """A placeholder marked aria-busy, filled after a pause longer than the settle's quiet window (DOM and network
    quiet meanwhile): the click's observation is the page after the content came, not the placeholder."""
    await _open(task_browser, fixture_site, "act_busy.html")
    clicked = await task_browser.act(Click(target=Target(text="Expand the node")))
    assert clicked.ok and "Child node ready" in render(clicked.observation).text, render(clicked.observation).text


async def test_overlay_autocomplete_switch_and_shadow_dom(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_widgets.html")
    covered = await task_browser.act(Click(target=Target(text="Show data")))
    assert covered.error == "not_interactable" and 'covered by <div id="banner">' in covered.message
    assert (await task_browser.act(Click(target=Target(text="Accept all cookies")))).ok
    shown = await task_browser.act(Click(target=Target(text="Show data")))
    assert shown.ok and "Shown" in render(shown.observation).text
    country = await task_browser.act(Select(target=Target(label="Country"), option="Germany"))  # options after typing
    assert country.ok and country.readback == "Germany"
    switch = await task_browser.act(Check(target=Target(label="Include estimates")))
    assert switch.ok and switch.readback == "checked"
    shadow = await task_browser.act(Select(target=Target(label="Unit of measure"), option="Kilograms"))
    assert shadow.ok and shadow.readback == "Kilograms"


async def test_loose_and_aria_radio_groups(task_browser, fixture_site):
    opened = await _open(task_browser, fixture_site, "act_radios.html")
    loose_ref = next(c.ref for c in opened.observation.controls if c.label == "view")
    by_ref = await task_browser.act(Select(target=Target(ref=loose_ref), option="Chart"))  # no fieldset around it
    assert by_ref.ok and by_ref.readback == "Chart"
    assert by_ref.delta.controls_changed["view"] == ("Table", "Chart")
    aria = await task_browser.act(Select(target=Target(label="Frequency"), option="Monthly"))
    assert aria.ok and aria.readback == "Monthly"
    assert await task_browser.page.get_attribute("[role=radio]:nth-child(2)", "aria-checked") == "true"
    missing = await task_browser.act(Select(target=Target(label="Frequency"), option="Weekly"))
    assert missing.error == "option_not_found" and "'Annual'" in missing.message


async def test_inline_csv_link_and_script_made_download(task_browser, fixture_site, tmp_path: Path):
    await _open(task_browser, fixture_site, "act_links.html")
    inline = await task_browser.act(Download(target=Target(text="Inline data")))  # served without attachment
    assert inline.ok, inline.message
    assert Path(inline.download_path) == tmp_path / "downloads" / "inline.csv"
    assert inline.table.rows[2] == ["Italy", "2021", "7"]
    exported = await task_browser.act(Download(target=Target(text="Export selection")))  # a blob: URL download
    assert exported.ok, exported.message
    assert Path(exported.download_path).read_text() == "name,score\nAlpha,3\nBeta,5\n"
    assert exported.table.rows == [["Alpha", "3"], ["Beta", "5"]]
    page = await task_browser.act(Download(target=Target(text="Back to the form")))  # saved as is, no table
    assert page.ok and page.table is None and Path(page.download_path).name == "act_form.html"


def test_value_matches_tolerates_formatting_not_refusal():
    from browser.readback import value_matches

    assert value_matches("Asia", " asia ")
    assert value_matches("1000", "1,000") and value_matches("2020-01-05", "05/01/2020")
    assert value_matches("Germ", "Germany")  # an autocomplete completed what was typed
    assert not value_matches("2023", "2024")
    assert not value_matches("USD", "EUR")
    assert not value_matches("2020-01-05", "2020-01-06")
    assert not value_matches("Q1 2020", "Q2 2020")


def test_state_delta_by_hand():
    from browser.delta import describe_delta, state_delta
    from browser.types import Control, Observation

    before = Observation(url="http://x/s?a=1&b=2", query_state={"a": ["1"], "b": ["2"]}, result_count=40, controls=[
        Control(ref="e1", kind="select", label="Region", value="Any"),
        Control(ref="e2", kind="checkbox", label="Final", checked=False),
        Control(ref="e3", kind="button", label="Go")])
    after = Observation(url="http://x/s?a=3&c=4", query_state={"a": ["3"], "c": ["4"]}, result_count=7, controls=[
        Control(ref="e1", kind="select", label="Region", value="Asia"),
        Control(ref="e2", kind="checkbox", label="Final", checked=True),
        Control(ref="e3", kind="button", label="Go")])
    delta = state_delta(before, after)
    assert delta.params_added == {"c": ["4"]} and delta.params_removed == {"b": ["2"]}
    assert delta.params_changed == {"a": (["1"], ["3"])}
    assert delta.controls_changed == {"Region": ("Any", "Asia"), "Final": ("unchecked", "checked")}
    assert (delta.count_before, delta.count_after) == (40, 7)
    assert describe_delta(delta) == ("URL a: 1 -> 3; -b; +c=4, controls Region: 'Any' -> 'Asia'; "
                                     "Final: 'unchecked' -> 'checked', results 40 -> 7")
    assert state_delta(after, after).empty
    # a result's own page: said as where the agent is now, not as the search's parameters lost and its count gone
    record = Observation(url="http://x/item/7", query_state={}, result_count=None, controls=[])
    assert describe_delta(state_delta(after, record)) == "now at http://x/item/7"
    assert describe_delta(state_delta(after, record), url_said=True) == ""


def test_a_table_inserted_before_a_list_is_not_the_list_grown():
    """Expanding a second node inserted its children's table before the first node's: by index, 'TABLE 3 grew
    4 -> 5' (a played run was told so); matched by what the tables hold, nothing grew. A list that did grow in
    place (its first rows kept) is still said."""
    from browser.delta import tables_grown
    from browser.types import Observation, TableData

    def table(index: int, rows: list[str]) -> TableData:
        return TableData(index=index, headers=["Genus", "Species"], rows=[[r, "1"] for r in rows],
                         total_rows=len(rows))

    first = table(3, ["Aa", "Ab", "Ac", "Ad"])
    before = Observation(url="http://x/tree", page_id=1, tables=[table(0, ["Z"]), first])
    inserted = Observation(url="http://x/tree", page_id=1,
                           tables=[table(0, ["Z"]), table(1, ["Ba", "Bb", "Bc", "Bd", "Be"]), first.model_copy(
                               update={"index": 4})])
    assert tables_grown(before, inserted) == []
    longer = Observation(url="http://x/tree", page_id=1, tables=[table(0, ["Z"]),
                                                                   table(1, ["Aa", "Ab", "Ac", "Ad", "Ae"])])
    assert tables_grown(before, longer) == [(1, 4, 5)]


async def test_new_tab_link_is_followed_in_the_same_tab(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_links.html")
    result = await task_browser.act(Click(target=Target(text="Asia in a new tab")))
    assert result.ok, result.message
    assert result.observation.query_state == {"region": ["as"]} and result.observation.result_count == 2
    assert len(task_browser.context.pages) == 1 and task_browser.page.url.endswith("act_form.html?region=as")


async def test_wrong_action_for_the_control_says_which_to_use(task_browser, fixture_site):
    await _open(task_browser, fixture_site, "act_form.html")
    filled = await task_browser.act(Fill(target=Target(label="Region"), value="Asia"))
    assert filled.error == "invalid_action" and "use select" in filled.message
    checked = await task_browser.act(Check(target=Target(label="Region")))
    assert checked.error == "invalid_action" and "use select" in checked.message
    selected = await task_browser.act(Select(target=Target(label="Keyword"), option="x"))
    assert selected.error == "invalid_action" and "fill" in selected.message
    assert task_browser.page.url == fixture_site.url("act_form.html")  # nothing was touched
    slider = await task_browser.act(Fill(target=Target(label="Detail level"), value="7"))
    assert slider.ok and slider.readback == "7"
    tabbed = await task_browser.act(Press(key="Tab"))  # moving focus is an effect for a key press
    assert tabbed.ok, tabbed.message


async def test_goto_a_missing_page_is_an_http_error_not_a_success(task_browser, fixture_site):
    result = await task_browser.act(Goto(url=fixture_site.url("no-such-page.html,")))
    assert not result.ok and result.error == "http_error" and "HTTP 404" in result.message
    assert result.observation is not None and result.observation.url.endswith("no-such-page.html,")
    fine = await task_browser.act(Goto(url=fixture_site.url("act_links.html")))
    assert fine.ok and fine.error is None
