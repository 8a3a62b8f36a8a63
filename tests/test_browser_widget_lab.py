"""The browser layer on the widget lab's real libraries, in Chromium (issue 38). Every widget of every lab page is set
with its natural first actions and judged by the library's own API (page.evaluate), not by our read-back: set,
no silent failure, no false alarm, shown on its control line, result rows readable. Then what a model needs
beyond the first action: a multi-select's replace/remove/clear, one control per library widget (the hidden
native element is the widget's), a refused option that changes nothing, a readonly picker said readonly."""

from __future__ import annotations

import pytest

from benchmarks.widget_drive import drive, truth
from browser.render import render
from browser.types import Fill, Goto, Select, Target
from graph.tools.tool_specs import TOOL_SPECS, Situation
from tasks.widget_lab.registry import lab_pages

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

WIDGETS = [(page.name, widget.label) for page in lab_pages() for widget in page.widgets]
MULTI = [p.name for p in lab_pages() if p.category == "multi-select"]


def _spec(page_name: str, label: str):  # noqa: ANN202
    page = next(p for p in lab_pages() if p.name == page_name)
    return page, next(w for w in page.widgets if w.label == label)


async def _open(lab_browser, widget_lab, page_name: str, label: str):  # noqa: ANN001, ANN202
    page, widget = _spec(page_name, label)
    await lab_browser.act(Goto(url=widget_lab.url(page_name)))
    await lab_browser.page.wait_for_function(f"() => {{ try {{ return ({widget.truth}) !== undefined; }}"
                                             " catch (e) { return false; } }", timeout=20_000)
    return page, widget, await lab_browser.observe()


@pytest.mark.parametrize(("page_name", "label"), WIDGETS)
async def test_the_first_natural_action_sets_the_widget_truthfully(page_name, label, lab_browser, widget_lab) -> None:
    page, widget = _spec(page_name, label)
    run = await drive(lab_browser, widget_lab.url(page_name), page, widget)
    assert run.first_ok, run.replies
    assert (run.silent, run.false_alarms) == (0, 0), run.replies
    assert run.shown, run.replies
    assert run.rows_complete, run.replies


@pytest.mark.parametrize("page_name", MULTI)
async def test_a_multi_select_adds_replaces_removes_and_clears(page_name, lab_browser, widget_lab) -> None:
    page, widget, _ = await _open(lab_browser, widget_lab, page_name, "States")
    first, second = widget.values
    target = Target(label="States")
    for option in (first, second):
        assert (await lab_browser.act(Select(target=target, option=option))).ok
    assert sorted(await truth(lab_browser, widget)) == sorted([first, second])
    replaced = await lab_browser.act(Select(target=target, option="Maine", mode="replace"))
    assert replaced.ok, replaced.message
    assert await truth(lab_browser, widget) == ["Maine"]
    await lab_browser.act(Select(target=target, option=first))
    removed = await lab_browser.act(Select(target=target, option="Maine", mode="remove"))
    assert removed.ok, removed.message
    assert await truth(lab_browser, widget) == [first]
    cleared = await lab_browser.act(Select(target=target, option="", mode="clear"))
    assert cleared.ok, cleared.message
    assert await truth(lab_browser, widget) == []


@pytest.mark.parametrize("page_name", ["tom_select_multi", "choices_multi", "select2_multi", "uswds_combo_box"])
async def test_a_library_widget_is_one_control_and_its_native_element_is_marked_its(page_name, lab_browser,
                                                                                      widget_lab) -> None:
    page, widget, obs = await _open(lab_browser, widget_lab, page_name, page_widget_label(page_name))
    mine = [c for c in obs.controls if c.label == widget.label]
    assert len(mine) == 1, [c.label for c in obs.controls]
    control = mine[0]
    assert control.kind == "custom_select" and control.options  # the native element's options, on the widget's line
    owner = await lab_browser.page.evaluate("() => [...document.querySelectorAll('select')]"
                                            ".map(s => s.getAttribute('data-sgr-widget')).filter(Boolean)")
    assert owner == [control.ref]
    assert not any(c.ref == owner[0] and c.kind == "select" for c in obs.controls if c is not control)


def page_widget_label(page_name: str) -> str:
    return next(p for p in lab_pages() if p.name == page_name).widgets[0].label


async def test_an_option_the_widget_lacks_is_refused_and_changes_nothing(lab_browser, widget_lab) -> None:
    page, widget, _ = await _open(lab_browser, widget_lab, "tom_select_multi", "States")
    await lab_browser.act(Select(target=Target(label="States"), option="Ohio"))
    refused = await lab_browser.act(Select(target=Target(label="States"), option="Atlantis"))
    assert not refused.ok and refused.error == "option_not_found"
    assert await truth(lab_browser, widget) == ["Ohio"]


async def test_the_control_line_shows_the_chips_and_says_multiple(lab_browser, widget_lab) -> None:
    page, widget, _ = await _open(lab_browser, widget_lab, "select2_multi", "States")
    for option in widget.values:
        await lab_browser.act(Select(target=Target(label="States"), option=option))
    line = next(ln for ln in render(await lab_browser.observe()).text.splitlines() if '"States"' in ln)
    assert all(v in line.split("{")[0] for v in widget.values) and "select adds" in line


async def test_a_readonly_picker_says_so_and_fill_sets_it(lab_browser, widget_lab) -> None:
    page, widget, obs = await _open(lab_browser, widget_lab, "flatpickr_dates", "Updated since")
    control = next(c for c in obs.controls if c.label == "Updated since")
    assert control.kind == "date" and control.readonly
    assert "readonly" in render(obs).text
    result = await lab_browser.act(Fill(target=Target(label="Updated since"), value="2025-02-10"))
    assert result.ok and await truth(lab_browser, widget) == ["2025-02-10"]


async def test_a_typeahead_fill_picks_the_remote_suggestion_and_a_plain_word_stays_typed(lab_browser,
                                                                                         widget_lab) -> None:
    page, widget, _ = await _open(lab_browser, widget_lab, "jqueryui_autocomplete", "Company")
    typed = await lab_browser.act(Fill(target=Target(label="Company"), value="Harbor"))  # no suggestion reads this
    assert typed.ok and "picked" not in typed.message and await truth(lab_browser, widget) == ""
    picked = await lab_browser.act(Fill(target=Target(label="Company"), value="Harbor Credit"))
    assert picked.ok and "picked" in picked.message and await truth(lab_browser, widget) == "Harbor Credit"


async def test_a_date_pair_is_offered_the_range_setter(lab_browser, widget_lab) -> None:
    *_, obs = await _open(lab_browser, widget_lab, "uswds_date_range", "Issued from")
    assert TOOL_SPECS["set_range"].offered(Situation(page=obs))
    *_, single = await _open(lab_browser, widget_lab, "uswds_combo_box", "Product")
    assert not TOOL_SPECS["set_range"].offered(Situation(page=single))
