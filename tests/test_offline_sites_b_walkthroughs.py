"""Replay the vulns / lifesci / stats walkthroughs in real Chromium through the browser layer.

Browser steps go through `PageDriver.act`; `extract_rows` and `finish` go through the graph's own
deterministic extractor and composer, so the answer is read from the pages exactly as an agent would, and
must equal the oracle computed from the site data.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from browser.types import Check, Click, Goto, Select, Target
from graph.composer import compose
from graph.extractor import extract
from graph.tools import ExtractRows, Finish
from tasks.models import Task
from tasks.offline.app import DEFAULT_SEED, site_data
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.sites import lifesci, stats, vulns

pytestmark = pytest.mark.slow

SITES = {site.prefix: site for site in (vulns.SITE, lifesci.SITE, stats.SITE)}
CASES = [(prefix, task_id) for prefix, site in SITES.items()
         for task_id in site.walkthroughs(site_data(prefix, DEFAULT_SEED))]


def _localise(value: Any, origin: str) -> Any:
    return json.loads(json.dumps(value).replace(PLACEHOLDER_ORIGIN, origin))


async def replay(driver: Any, steps: list[dict[str, Any]], task: Task, origin: str) -> str:
    observation: dict[str, Any] = {}
    last_read: dict[str, Any] | None = None
    rows: list[Any] = []
    for index, step in enumerate(steps):
        kind, args = step["tool"], _localise(step["args"], origin)
        if kind == "extract_rows":
            extraction = extract(ExtractRows.model_validate(args), columns=task.output_spec.columns,
                                 observation=observation, last_read=last_read, retrieval=None, drift_flags=[],
                                 provenance=False, step=index)
            rows += extraction.rows
            continue
        if kind == "finish":
            return compose(rows, task.output_spec, Finish.model_validate(args).order_by)
        result = await driver.act({"kind": kind, **args})
        assert result.ok, f"step {index} {kind} {args}: {result.error} {result.message}"
        observation = (result.observation or await driver.observe()).model_dump()
        if result.table is not None:
            last_read = {"table": result.table.model_dump(), "table_index": args.get("table"),
                         "all_pages": bool(args.get("all_pages")), "url": observation["url"]}
        elif kind not in ("wait_for", "scroll"):
            last_read = None
    raise AssertionError("walkthrough has no finish step")


@pytest.mark.parametrize(("prefix", "task_id"), CASES)
async def test_walkthrough_reproduces_the_oracle(prefix, task_id, offline_server, chromium_worker, tmp_path):
    site = SITES[prefix]
    data = site_data(prefix, DEFAULT_SEED)
    record = next(r for r in site.tasks(data) if r["task_id"] == task_id)
    task = Task.model_validate(record)
    steps = site.walkthroughs(data)[task_id]
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        answer = await replay(driver, steps, task, offline_server.origin)
    assert answer == record["oracle_answer"]


async def test_deprecated_products_appear_only_after_ticking_the_box(offline_server, chromium_worker, tmp_path):
    data = site_data("vulns", DEFAULT_SEED)
    old = next(p for p in data.products.values() if p.deprecated)

    def product_options(observation) -> list[str]:
        control = next(c for c in observation.controls if c.label.endswith("Product"))
        return [o.label for o in control.options]

    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        opened = await driver.act(Goto(url=f"{offline_server.origin}/vulns/search"))
        assert f"{old.id} (deprecated)" not in product_options(opened.observation)
        missing = await driver.act(Select(target=Target(label="Product"), option=old.id))
        assert not missing.ok and missing.error == "option_not_found"
        ticked = await driver.act(Check(target=Target(label="Include deprecated product identifiers")))
        assert ticked.ok and f"{old.id} (deprecated)" in product_options(ticked.observation)
        chosen = await driver.act(Select(target=Target(label="Product"), option=f"{old.id} (deprecated)"))
        assert chosen.ok, chosen.message
        searched = await driver.act(Click(target=Target(text="Search")))
        assert searched.ok and searched.observation is not None
        [table] = searched.observation.tables
        assert table.rows and {row[table.headers.index("Product")] for row in table.rows} == {old.id}
