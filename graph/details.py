"""The detail check: a plan that needs each listed result's own page had every such result opened.

Split from the verifier (graph/verifier.py) because what counts as "opened" and which listed results must be
opened are questions of their own.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from graph.state import Failure, Listing, Plan


def check_details(plan: Plan | None, listings: list[Listing], visited: list[str]) -> list[Failure]:
    """A plan that needs each result's own page: every row link of the list it works through was opened."""
    if plan is None or not plan.detail_pages or not listings:
        return []
    seen = {_page_key(u) for u in visited}
    return _unopened(detail_list(listings, seen), seen)


def _unopened(links: list[str], seen: set[str], prefix: str = "") -> list[Failure]:
    """The `[details]` failure naming the listed links not among `seen` (`_page_key`s), or none."""
    missing = [link for link in links if _page_key(link) not in seen]
    if not missing:
        return []
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return [Failure(check="details", message=(
        f"{prefix}{len(missing)} of {len(links)} listed result(s) were not opened: {shown}; open each and "
        "extract_rows there"))]


def detail_list(listings: list[Listing], opened: set[str], *, latest_opened: bool = False) -> list[str]:
    """The row links (every page) of the list whose items must each be opened: the latest result list (with
    `latest_opened`, the latest one some of whose items were opened), unless a page's table of item links had
    more of its items opened, two at least: then that is the list the agent went through, read as links and
    never as a result list (a category page listing its members). `opened` holds `_page_key`s."""
    def links(result_set: str, kind: str) -> list[str]:
        return list(dict.fromkeys(link for item in listings if item["result_set"] == result_set
                                  and item.get("kind", "results") == kind for link in item["row_links"]))

    def hits(row_links: list[str]) -> int:
        return sum(_page_key(link) in opened for link in row_links)

    results = [item for item in listings if item.get("kind", "results") == "results"]
    chosen: list[str] = []
    if results:
        latest = next((i for i in reversed(results) if hits(i["row_links"])), results[-1]) if latest_opened \
            else results[-1]
        chosen = links(latest["result_set"], "results")
    link_lists = [links(key, "links") for key in dict.fromkeys(i["result_set"] for i in listings
                                                                if i.get("kind") == "links")]
    best = max(link_lists, key=hits, default=[])
    return best if hits(best) >= 2 and hits(best) > hits(chosen) else chosen


def _page_key(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc + parts.path.rstrip("/") + ("?" + parts.query if parts.query else "")


def check_input_details(plan: Plan | None, tables: dict[str, Any], inputs: list[str],
                        listings: list[Listing]) -> list[Failure]:
    """A phase that reads each listed result's own page: every row link of that list was read INTO its table
    (opening a page without reading it does not count)."""
    if plan is None or not listings:
        return []
    failures: list[Failure] = []
    for name in inputs:
        phase = plan.phase_for(name)
        if phase is None or not phase.detail_pages:
            continue
        read = {_page_key(r.get("_url") or "") for r in tables[name]["rows"]}
        failures += _unopened(detail_list(listings, read, latest_opened=True), read, prefix=f"table {name}: ")
    return failures
