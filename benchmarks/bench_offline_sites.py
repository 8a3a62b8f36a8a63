"""Offline suite speed: server start time (data build + app + uvicorn ready) and page times per site.

For every site, its start pages, every page a walkthrough visits by `goto` and every mechanic probe (state
pages, CSV) is fetched REPEATS times over real HTTP; the table shows median and p90 ms per request.
Run: `.venv/bin/python benchmarks/bench_offline_sites.py [--repeats N]`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import httpx
from rich.console import Console
from rich.table import Table

from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.server import OfflineServer
from tasks.offline.suite import MECHANICS


def site_urls(prefix: str) -> list[str]:
    """Start URLs, walkthrough goto targets and the mechanic probes (filtered result pages, CSV exports)."""
    site = next(s for s in discover_sites() if s.prefix == prefix)
    data = site_data(prefix, DEFAULT_SEED)
    urls = [f"/{prefix}/"] + [r["start_url"] for r in site.tasks(data)]
    for steps in site.walkthroughs(data).values():
        urls += [s["args"]["url"] for s in steps if s["tool"] == "goto"]
    urls += [m.probe for places in MECHANICS.values() for m in places if m.site == prefix and "{" not in m.probe]
    return list(dict.fromkeys(u.replace(PLACEHOLDER_ORIGIN, "") for u in urls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    started = time.perf_counter()
    server = OfflineServer().start()
    start_ms = (time.perf_counter() - started) * 1000
    table = Table(title=f"Offline sites: server start {start_ms:.0f} ms (seed {DEFAULT_SEED})")
    for column in ("site", "pages", "requests", "median ms", "p90 ms", "max ms"):
        table.add_column(column, justify="right" if column != "site" else "left")
    try:
        with httpx.Client(base_url=server.origin, timeout=60) as client:
            for site in discover_sites():
                times = []
                urls = site_urls(site.prefix)
                for _ in range(args.repeats):
                    for url in urls:
                        t0 = time.perf_counter()
                        client.get(url).raise_for_status()
                        times.append((time.perf_counter() - t0) * 1000)
                times.sort()
                table.add_row(site.prefix, str(len(urls)), str(len(times)), f"{statistics.median(times):.1f}",
                              f"{times[int(0.9 * (len(times) - 1))]:.1f}", f"{times[-1]:.1f}")
    finally:
        server.stop()
    Console().print(table)


if __name__ == "__main__":
    main()
