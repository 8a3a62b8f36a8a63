"""Result lists on screen, kept as `Listing`s for the detail check (graph/checks/details.py), and the pages opened from
their rows, kept as `OpenedPage`s: both recorded wherever a page is observed, by the executor after an action and by
a read that opens its page itself (graph/nodes/pages.py). "Opened" is then membership of that set, decided once when
the page is shown, not a likeness of URLs judged again at every check."""

from __future__ import annotations

from typing import Literal
from urllib.parse import parse_qsl, urljoin, urlsplit

from browser.types import ActionResult, Observation, TableData
from graph.state import Listing, OpenedPage
from graph.tracking.state_reading import result_set_key


def listing_of(observation: Observation, result: ActionResult, step: int, recorded: list[Listing]) -> Listing | None:
    """A result list on screen (or read whole by read_table), unless a list of its URL is `recorded` already:
    the link of each row, for the detail check. A main-content table whose every row links somewhere, on a page
    with no result count or pager (a page listing its items: a category's members), is kept as a list of `links`:
    the detail check uses it only once the agent has opened several of its items (`graph.checks.details.detail_list`)."""
    kind: Literal["results", "links"] = "results"
    if result.table is not None and result.action.get("kind") == "read_table" and any(result.table.row_links):
        table = result.table
        url = observation.url + ("#all-pages" if result.action.get("all_pages") else "")
    elif observation.result_count is not None or observation.pagination is not None:
        table = next((t for t in observation.tables if any(t.row_links)), None)
        url = observation.url
    else:
        table, kind, url = next((t for t in observation.tables if _lists_items(t)), None), "links", observation.url
    if table is None or url in {item["url"] for item in recorded}:
        return None
    linked = [(urljoin(observation.url, links[0]), cells)
              for links, cells in zip(table.row_links, table.rows, strict=False) if links]
    return Listing(step=step, url=url, result_set=result_set_key(observation.url), row_links=[li for li, _ in linked],
                   row_cells=[cells for _, cells in linked], kind=kind)


def _lists_items(table: TableData) -> bool:
    """A main-content table of items: two rows or more, each with a link of its own."""
    links = [row[0] for row in table.row_links if row]
    return table.rank == 0 and len(table.rows) >= 2 and len(links) == len(table.rows) == len(set(links))


def _page(url: str) -> tuple[str, str, set[tuple[str, str]]]:
    parts = urlsplit(url)
    return parts.netloc, parts.path.rstrip("/"), set(parse_qsl(parts.query))


def is_row_page(link: str, url: str) -> bool:
    """`url` is the row's own page: its host and path, with every query parameter of the link (more allowed: a
    site carries its state in the query, `/item/7?year=2022`). A sub-page or a page naming the link's key is
    another page (an item's availability page does not open the item)."""
    host, path, query = _page(url)
    l_host, l_path, l_query = _page(link)
    return host == l_host and path == l_path and l_query <= query


def opened_from(url: str, step: int, listings: list[Listing], requested: str | None = None) -> list[OpenedPage]:
    """The listing rows the page shown at `url` is the own page of (or the page the agent asked for, `requested`:
    a goto or a read's URL, when the site redirected elsewhere): one record per listing and row."""
    pages = [u for u in (url, requested) if u]
    return [OpenedPage(step=step, url=url, listing=item["url"], row=i, link=link) for item in listings
            for i, link in enumerate(item["row_links"]) if any(is_row_page(link, page) for page in pages)]
