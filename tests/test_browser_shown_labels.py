"""Every label the observation shows is a target: a control shown as `select "Search term: Search field"` (its
fieldset's legend joined to its own label, which no page element carries whole) is found by that label."""

from __future__ import annotations

import pytest

from browser.targets import shown_ref
from browser.types import Control, Goto, Link, ReadSection, Select, Target


@pytest.mark.slow
async def test_each_control_label_shown_on_a_search_form_resolves(offline_server, chromium_worker, tmp_path):
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        opened = await browser.act(Goto(url=f"{offline_server.origin}/scholar/search"))
        assert opened.ok, opened.message
        controls = opened.observation.controls
        joined = next(c for c in controls if c.kind == "select" and ": " in c.label)
        assert joined.label == "Search term: Search field"
        labels = [c.label for c in controls if [d.label for d in controls].count(c.label) == 1]
        for label in labels:
            found = await browser.act(ReadSection(target=Target(label=label)))
            assert found.ok, (label, found.message)
        option = next(o for o in joined.options if not o.selected)
        chosen = await browser.act(Select(target=Target(label=joined.label), option=option.label))
        assert chosen.ok, chosen.message
        assert chosen.readback == option.label


def test_a_shown_label_names_one_control_or_none():
    controls = [Control(ref="e1", kind="select", label="Search term: Search field"),
                Control(ref="e2", kind="text", label="Search terms"),
                Control(ref="e3", kind="text", label="Name"), Control(ref="e4", kind="text", label="Name")]
    assert shown_ref(controls, "search term:  search field") == "e1"  # case and spacing as typed
    assert shown_ref(controls, "Search terms") == "e2"
    assert shown_ref(controls, "Name") is None  # two controls: the page's own label rules decide
    assert shown_ref(controls, "Search") is None  # a part of a label is not a label shown
    title = "A study of " + "very " * 30 + "long titles"
    links = [Link(ref="e9", text=title, href="/abs/1")]
    assert shown_ref(controls, title[:99] + "…", links) == "e9"  # a link's text as the observation cut it
