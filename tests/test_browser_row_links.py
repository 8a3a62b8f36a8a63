"""Every link of a result list is addressable (issue 27): links in table cells carry a ref on their row, the ref
works for `click`, the graph accepts it as a ref of the page, and a table's cells hold each link's address."""

from __future__ import annotations

import re

import pytest

from browser.render import render
from graph.model_io.robust import unknown_ref_message
from tasks.loaders import load_tasks

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]


async def test_a_result_rows_link_is_clicked_by_the_ref_its_row_shows(offline_server, chromium_worker, tmp_path):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_vulns_001"])[0]
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        assert (await browser.act({"kind": "goto", "url": task.start_url})).ok
        result = await browser.act({"kind": "click", "target": {"text": "Search"}})
        obs = result.observation
        assert result.ok and obs is not None
        table = next(t for t in obs.tables if t.rank == 0 and any(t.row_links))
        links = [cell[0] for row in table.cell_links for cell in row if cell]
        assert links and all(link.ref and link.href.startswith(offline_server.origin) for link in links)
        # each shown row names its links' refs before their text; the rows not shown are one read_table away
        text = render(obs, 1500).text
        shown = [link for link in links if f"[{link.ref}] {link.text}" in text]
        assert shown and (len(shown) == len(links) or f"read_table {table.index}" in text)
        target = shown[-1]
        assert unknown_ref_message({"target": {"ref": target.ref}}, obs.model_dump()) is None
        clicked = await browser.act({"kind": "click", "target": {"ref": target.ref}})
        assert clicked.ok and clicked.observation is not None
        assert clicked.observation.url.split("#")[0] == target.href.split("#")[0]


async def test_read_table_returns_every_rows_links_with_their_refs(offline_server, chromium_worker, tmp_path):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_vulns_001"])[0]
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        await browser.act({"kind": "goto", "url": task.start_url})
        obs = (await browser.act({"kind": "click", "target": {"text": "Search"}})).observation
        table = next(t for t in obs.tables if t.rank == 0 and any(t.row_links))
        read = await browser.act({"kind": "read_table", "table": table.index})
    assert read.ok and read.table is not None and len(read.table.cell_links) == len(read.table.rows)
    refs = [cell[0].ref for row in read.table.cell_links for cell in row if cell]
    assert len(refs) >= len(read.table.rows) and all(re.fullmatch(r"e\d+", ref) for ref in refs)
