"""Main-content links addressable by ref: in the observation's text, or one read away (issue 27).

For every page state the offline walkthroughs visit (real Chromium, `PageDriver`) and for every page of the
real-page corpus (tests/data/realpages), an independent DOM pass lists the visible links with text in the
page's main content (inside <main> when the page has one, else outside nav/header/footer/aside). A link counts
as addressable when it (or a link to the same address) is named by ref in the text the model reads, or when one
read returns it with its ref: `list_links` (every plain link) or `read_table` (the rows of a table or card list
the observation holds, each cell's links with their refs). `listed`: the links in table cells and list items.
"Result pages" are page states whose main content has a table or card list with a link in its rows.

Run: .venv/bin/python benchmarks/bench_observation_links.py [--sites stats,water] [--budget 1500] [--no-corpus]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_observation import PAGE_CHANGING, _browser_steps, _corpus_module

from browser.observe import observe_page
from browser.render import render
from browser.session import ChromiumWorker
from browser.types import Observation
from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data
from tasks.offline.server import OfflineServer

corpus = _corpus_module()


def _text(obs: Observation, budget: int) -> str:
    """The text the model reads: the observation rendered at `budget` (the observer returns the structure)."""
    return render(obs, budget).text


def _result_page(obs: Observation) -> bool:
    return any(t.rank == 0 and any(t.row_links) for t in obs.tables)


async def offline(budget: int, wanted: set[str]) -> dict[str, Any]:
    """site -> {"all": LinkReach, "results": LinkReach, "pages": n, "result_pages": n}"""
    out: dict[str, Any] = defaultdict(lambda: {"all": corpus.LinkReach(), "results": corpus.LinkReach(),
                                               "pages": 0, "result_pages": 0})
    with OfflineServer() as server:
        worker = ChromiumWorker(token_budget=budget)
        try:
            for site in discover_sites():
                if wanted and site.prefix not in wanted:
                    continue
                seen: set[str] = set()
                for steps in site.walkthroughs(site_data(site.prefix, DEFAULT_SEED)).values():
                    with tempfile.TemporaryDirectory() as task_dir:
                        async with worker.task_browser(task_dir, [server.origin]) as driver:
                            for kind, args in _browser_steps(steps, server.origin):
                                result = await driver.act({"kind": kind, **args})
                                if kind not in PAGE_CHANGING or not result.ok or driver.page.url in seen:
                                    continue
                                seen.add(driver.page.url)
                                obs = await observe_page(driver.page, page_id=0)
                                reach = await corpus.link_reach(driver.page, obs, _text(obs, budget), budget)
                                row = out[site.prefix]
                                row["all"].add(reach)
                                row["pages"] += 1
                                if _result_page(obs):
                                    row["results"].add(reach)
                                    row["result_pages"] += 1
        finally:
            await worker.close()
    return dict(out)


async def real_pages(budget: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    worker = ChromiumWorker(token_budget=budget)
    try:
        browser = await worker.browser()
        with corpus.CorpusServer() as server:
            for entry in corpus.load_corpus():
                context = await browser.new_context(viewport={"width": 1280, "height": 900})
                try:
                    await corpus.offline_route(context, server.origin)
                    page = await context.new_page()
                    await page.goto(server.url(entry), wait_until="load")
                    obs = await observe_page(page, page_id=0)
                    out[entry.name] = {"reach": await corpus.link_reach(page, obs, _text(obs, budget), budget),
                                       "result_page": _result_page(obs)}
                finally:
                    await context.close()
    finally:
        await worker.close()
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _cells(r: Any) -> str:
    return (f"{r.links} | {_pct(r.in_text, r.links)} | {_pct(r.one_read, r.links)} | {r.listed} | "
            f"{_pct(r.listed_in_text, r.listed)} | {_pct(r.listed_one_read, r.listed)}")


HEAD = ("| {what} | main links | in text | text or one read | in tables/lists | in text | text or one read |\n"
        "|---|---|---|---|---|---|---|")


def report(sites: dict[str, Any], pages: dict[str, Any]) -> str:
    lines = [HEAD.format(what="offline site (pages / result pages)")]
    every, results = corpus.LinkReach(), corpus.LinkReach()
    for name, row in sorted(sites.items()):
        lines.append(f"| {name} ({row['pages']} / {row['result_pages']}) | {_cells(row['all'])} |")
        every.add(row["all"])
        results.add(row["results"])
    if sites:
        lines.append(f"| **all pages** | {_cells(every)} |")
        lines.append(f"| **result pages** | {_cells(results)} |")
    if pages:
        lines += ["", HEAD.format(what="real page")]
        total, listing = corpus.LinkReach(), corpus.LinkReach()
        for name, row in pages.items():
            lines.append(f"| {name}{' (result page)' if row['result_page'] else ''} | {_cells(row['reach'])} |")
            total.add(row["reach"])
            if row["result_page"]:
                listing.add(row["reach"])
        lines.append(f"| **all pages** | {_cells(total)} |")
        lines.append(f"| **result pages** | {_cells(listing)} |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default="", help="comma-separated site prefixes (default: all)")
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--no-offline", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    opts = parser.parse_args()
    sites = {} if opts.no_offline else await offline(opts.budget, {s for s in opts.sites.split(",") if s})
    pages = {} if opts.no_corpus else await real_pages(opts.budget)
    print(report(sites, pages))
    if opts.json:
        opts.json.write_text(json.dumps({"sites": {k: {**v, "all": vars(v["all"]), "results": vars(v["results"])}
                                                   for k, v in sites.items()},
                                         "pages": {k: {**v, "reach": vars(v["reach"])} for k, v in pages.items()}},
                                        indent=1))


if __name__ == "__main__":
    asyncio.run(main())
