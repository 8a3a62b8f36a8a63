"""Checkbox trees, virtualised and paged grids, and lists that grow in place, on the lab's real libraries in
Chromium: what the observation shows, what `check`, `read_table`, `scroll` and `press End` reply, each judged by
the library's own state (its API, read with page.evaluate), never by our read-back."""

from __future__ import annotations

import pytest

from browser.render import render
from browser.types import Check, Click, Goto, Observation, Press, ReadTable, Scroll, TableData, Target
from graph.tools.tool_specs import TOOL_SPECS, Situation
from tasks.widget_lab.registry import lab_pages


def _data(page: str):  # noqa: ANN202 - the page's own data.json
    return next(p for p in lab_pages() if p.name == page).data()


async def _open(browser, lab, page: str, ready: str):  # noqa: ANN001, ANN202
    result = await browser.act(Goto(url=lab.url(page)))
    assert result.ok, result.message
    await browser.page.wait_for_function(ready, timeout=10_000)
    return await browser.observe()


def _control(obs: Observation, label: str):  # noqa: ANN202
    return next((c for c in obs.controls if c.label == label), None)


JSTREE = "$('#station-tree').jstree(true)"
JSTREE_SELECTED = f"() => {JSTREE}.get_selected(true).map((n) => n.text)"


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_jstree_nodes_show_state_and_check_reaches_a_node_under_collapsed_ones(lab_browser, widget_lab) -> None:
    obs = await _open(lab_browser, widget_lab, "jstree_checkbox",
                      "() => document.querySelectorAll('#station-tree [role=treeitem]').length > 0")
    manitoba = _control(obs, "Manitoba")
    assert manitoba is not None and manitoba.kind == "checkbox" and manitoba.expanded is False
    assert _control(obs, "Red River at Emerson") is None  # not in the DOM while its ancestors are collapsed
    assert '"Manitoba" [ ] (collapsed' in render(obs).text

    ticked = await lab_browser.act(Check(target=Target(label="Red River at Emerson")))
    assert ticked.ok, ticked.message
    assert await lab_browser.page.evaluate(JSTREE_SELECTED) == ["Red River at Emerson"]
    node = _control(ticked.observation, "Red River at Emerson")
    assert node is not None and node.checked is True
    basin = _control(ticked.observation, "Red River basin")
    assert basin is not None and basin.value == "mixed" and basin.expanded is True
    assert _control(ticked.observation, "Saskatchewan").expanded is False  # opened on the way, closed again
    assert ticked.observation.tables[0].rows == [["Red River at Emerson",
                                                  str(_data("jstree_checkbox")["flows"]["Red River at Emerson"])]]

    unticked = await lab_browser.act(Check(target=Target(label="Red River at Emerson"), checked=False))
    assert unticked.ok, unticked.message
    assert await lab_browser.page.evaluate(JSTREE_SELECTED) == []

    clicked = await lab_browser.act(Click(target=Target(label="Red River at Selkirk")))  # jsTree ticks on click
    assert clicked.ok and "Red River at Selkirk" in clicked.message and "checked" in clicked.message
    assert await lab_browser.page.evaluate(JSTREE_SELECTED) == ["Red River at Selkirk"]


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_jstree_check_on_a_name_no_node_has_is_not_found_and_leaves_the_tree_as_it_was(
        lab_browser, widget_lab) -> None:
    await _open(lab_browser, widget_lab, "jstree_checkbox",
                "() => document.querySelectorAll('#station-tree [role=treeitem]').length > 0")
    missing = await lab_browser.act(Check(target=Target(label="Fraser River at Hope")))
    assert not missing.ok and missing.error == "not_found"
    opened = await lab_browser.page.evaluate(f"() => {JSTREE}.get_json('#', {{flat: true}})"
                                             ".filter((n) => n.state.opened).length")
    assert opened == 0 and await lab_browser.page.evaluate(JSTREE_SELECTED) == []


FANCY = "$.ui.fancytree.getTree('#product-tree')"


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_fancytree_check_ticks_the_node_checkbox_and_reads_back_the_library_state(lab_browser, widget_lab) -> None:
    await _open(lab_browser, widget_lab, "fancytree_checkbox",
                "() => document.querySelectorAll('#product-tree [role=treeitem]').length > 0")
    for name in ("FHA mortgage", "Store credit card"):
        result = await lab_browser.act(Check(target=Target(label=name)))
        assert result.ok, result.message
    selected = await lab_browser.page.evaluate(f"() => {FANCY}.getSelectedNodes().map((n) => n.title)")
    assert sorted(selected) == ["FHA mortgage", "Store credit card"]
    obs = result.observation
    assert _control(obs, "Mortgage").value == "mixed" and _control(obs, "FHA mortgage").checked is True
    assert _control(obs, "Student loan").expanded is False  # the search for the node closed what it opened
    counts = _data("fancytree_checkbox")["counts"]
    assert sorted(obs.tables[0].rows) == [["FHA mortgage", str(counts["FHA mortgage"])],
                                          ["Store credit card", str(counts["Store credit card"])]]
    clicked = await lab_browser.act(Click(target=Target(label="VA mortgage")))  # Fancytree: activates only
    assert "check ticks it" in clicked.message, clicked.message
    assert "VA mortgage" not in await lab_browser.page.evaluate(
        f"() => {FANCY}.getSelectedNodes().map((n) => n.title)")
    again = await lab_browser.act(Check(target=Target(label="Store credit card"), checked=False))
    assert again.ok, again.message
    assert await lab_browser.page.evaluate(f"() => {FANCY}.getSelectedNodes().map((n) => n.title)") == [
        "FHA mortgage"]


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_ag_grid_states_its_whole_count_and_read_table_scrolls_it_to_the_end(lab_browser, widget_lab) -> None:
    obs = await _open(lab_browser, widget_lab, "ag_grid_virtual",
                      "() => window.stationGrid && document.querySelectorAll('[role=row][aria-rowindex]').length > 5")
    rendered = len(obs.tables[0].rows)
    assert obs.tables[0].total_rows == 240 and rendered < 60  # virtualised: only the rows in view exist
    assert "read_table 0" in render(obs).text
    read = await lab_browser.act(ReadTable(table=0, all_pages=True))
    assert read.ok and read.table is not None, read.message
    truth = await lab_browser.page.evaluate(
        "() => { const rows = []; window.stationGrid.forEachNodeAfterFilterAndSort((n) => rows.push("
        "[n.data.station, n.data.name, n.data.province, String(n.data.drainage_km2), String(n.data.years)]));"
        " return rows; }")
    assert read.table.rows == truth and len(truth) == 240
    assert "missing" not in read.message


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_datatables_all_pages_read_holds_every_row_datatables_has(lab_browser, widget_lab) -> None:
    await _open(lab_browser, widget_lab, "datatables_paged",
                "() => window.jQuery && $('#sites').DataTable && $('#sites tbody tr').length > 0")
    read = await lab_browser.act(ReadTable(table=0, all_pages=True))
    assert read.ok and read.table is not None, read.message
    truth = await lab_browser.page.evaluate("() => $('#sites').DataTable().rows().data().toArray()")
    assert read.table.rows == truth and len(truth) == 57


def test_a_short_paged_read_says_how_many_rows_it_missed() -> None:
    """The note read_table adds when all pages hold fewer rows than the pager states (typed data, no page)."""
    from browser.reads import _missing_note

    table = TableData(index=0, headers=["a"], rows=[["1"]] * 26, total_rows=26)
    assert _missing_note(table, stated=34, scrolled_missing=0) == " (8 of the 34 rows the page states were not " \
                                                                 "reached: missing)"
    assert _missing_note(table, stated=26, scrolled_missing=0) == ""


POSTS = "() => document.querySelectorAll('#feed .post').length"


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_infinite_scroll_replies_say_what_grew_and_read_table_reads_to_the_end(lab_browser, widget_lab) -> None:
    await _open(lab_browser, widget_lab, "infinite_scroll_feed", "() => window.InfiniteScroll !== undefined")
    pressed = await lab_browser.act(Press(key="End"))
    grown = await lab_browser.page.evaluate(POSTS)
    assert pressed.ok and grown > 10, pressed.message
    assert f"grew 10 -> {grown} rows" in pressed.message
    assert len(pressed.observation.tables[0].rows) == grown  # the reply carries the batch it loaded
    scrolled = await lab_browser.act(Scroll())
    after = await lab_browser.page.evaluate(POSTS)
    assert scrolled.ok and (f"grew {grown} -> {after}" in scrolled.message) == (after > grown), scrolled.message
    read = await lab_browser.act(ReadTable(table=0, all_pages=True))
    posts = _data("infinite_scroll_feed")["posts"]
    assert read.ok and read.table is not None and len(read.table.rows) == len(posts) == 45, read.message
    assert read.table.rows[-1][0].startswith(f"Notice {posts[-1]['notice']:02d}")
    assert await lab_browser.page.evaluate("() => InfiniteScroll.data('#feed').pageIndex") == 5


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_view_more_button_grows_the_list_and_read_table_asks_until_the_end(lab_browser, widget_lab) -> None:
    await _open(lab_browser, widget_lab, "load_more_button", "() => window.InfiniteScroll !== undefined")
    clicked = await lab_browser.act(Click(target=Target(text="View more")))
    assert clicked.ok and "grew 12 -> 24 rows" in clicked.message, clicked.message
    read = await lab_browser.act(ReadTable(table=0, all_pages=True))
    assert read.ok and read.table is not None and len(read.table.rows) == 34, read.message
    assert await lab_browser.page.evaluate(POSTS) == 34
    assert await lab_browser.page.evaluate("() => InfiniteScroll.data('#feed').pageIndex") == 3


def test_scroll_is_offered_on_a_page_with_a_list_in_its_main_content() -> None:
    cards = TableData(index=0, headers=["title"], rows=[["a"]], total_rows=1, source="cards")
    plain = TableData(index=0, headers=["title"], rows=[["a"]], total_rows=1)
    offer = TOOL_SPECS["scroll"].offered

    def situation(tables: list[TableData]) -> Situation:
        page = Observation(url="http://x/", tables=tables, outline=["x " * 200])
        return Situation(page=page, left_out=frozenset(), shown_before=False, last_read=False,
                         evidence_tables=False, rows=False, flagged=False, facts_wanted=False,
                         page_in_doubt=False, plan_in_question=False)

    assert offer(situation([cards])) and not offer(situation([plain]))
