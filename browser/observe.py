"""Build an `Observation` of a live page: one injected JS pass per frame, then deterministic parsing.

The JS (`observe-*.js`) finds controls, tables, notices and links and tags them with `data-sgr-ref`; Python
parses tables (BeautifulSoup), pagination and counts (regexes over the visible text). The compact text is
rendered later, by whoever shows the page, within the room it has (`browser.render`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import weakref
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from browser.numbers import digits_only, page_int
from browser.render import LONG_OPTION_LIST, SHORTEN_TO
from browser.tables import fragment_links, parse_fragment
from browser.types import Control, Link, Observation, Option, Pagination, TableData

MAX_TABLE_ROWS = 200
MAX_TABLE_HTML = 2_000_000
MAX_TEXT = 40_000
MAX_OUTLINE = 150
MAX_LINKS = 300
ALL_LINKS = 3000  # list_links reads this many
FRAME_TIMEOUT_S = 10.0
RETRY_WAIT_MS = 5_000

# Page -> {Frame: ref prefix}. Prefixes are handed out once per frame so refs stay unique across frames.
_frame_prefixes: weakref.WeakKeyDictionary[Page, dict[Frame, str]] = weakref.WeakKeyDictionary()


OBSERVE_PARTS = ("observe-1-walk.js", "observe-2-widgets.js", "observe-2-controls.js", "observe-3-places.js", "observe-4-tables.js",
                 "observe-5-text.js")


@lru_cache(maxsize=1)
def observe_script() -> str:
    """The DOM pass: one function body kept in six files by concern, joined in order (the parts share its
    closures)."""
    folder = resources.files("browser")
    return "".join(folder.joinpath(name).read_text(encoding="utf-8") for name in OBSERVE_PARTS)


def _prefix_for(page: Page, frame: Frame) -> str:
    prefixes = _frame_prefixes.setdefault(page, {})
    if frame not in prefixes:
        children = sum(1 for p in prefixes.values() if p)
        prefixes[frame] = "" if frame is page.main_frame else f"f{children + 1}"
    return prefixes[frame]


async def _observe_frame(page: Page, frame: Frame, max_rows: int, max_links: int = MAX_LINKS) -> dict[str, Any] | str:
    """The JS result for one frame, or an error note (a detached or crashed frame must not sink the page)."""
    args = {"prefix": _prefix_for(page, frame), "maxText": MAX_TEXT, "maxTableHtml": MAX_TABLE_HTML,
            "maxRows": max_rows,
            "maxOutline": MAX_OUTLINE, "maxLinks": max_links, "shortenFrom": SHORTEN_TO}
    try:
        return json.loads(await asyncio.wait_for(frame.evaluate(observe_script(), args), FRAME_TIMEOUT_S))
    except (PlaywrightError, TimeoutError) as exc:
        return f"frame {frame.name or frame.url} not observed: {str(exc).splitlines()[0]}"


_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")


def plain_label(text: str) -> str:
    """Markup some sites put in attributes or text ('<h2>Search by Station</h2>') is no part of a label."""
    return " ".join(_TAG.sub(" ", text).split())


def _control(raw: dict[str, Any], frame_label: str | None) -> Control:
    options = [Option(label=plain_label(o["label"]), value=o["value"], selected=o["selected"])
               for o in raw.get("options", [])]
    label = plain_label(raw.get("label") or "")
    if raw.get("bounds"):
        label = f"{label} (range {raw['bounds']})"
    return Control(
        ref=raw["ref"],
        kind=raw["kind"],
        label=label,
        name=raw.get("name"),
        value=plain_label(raw["value"]) if raw.get("value") and raw["kind"] not in ("text", "search", "textarea",
                                                                               "link", "button") else raw.get("value"),
        checked=raw.get("checked"),
        expanded=raw.get("expanded"),
        options=options,
        options_total=len(options) if len(options) > LONG_OPTION_LIST else None,
        frame=frame_label,
        form=raw.get("form"),
        disabled=bool(raw.get("disabled")),
        multiple=bool(raw.get("multiple")),
        readonly=bool(raw.get("readonly")),
        rank=int(raw.get("rank") or 0),
        box=(f"{frame_label}:{raw['box']}" if frame_label else raw["box"]) if raw.get("box") else None,
        box_label=plain_label(raw.get("boxLabel") or "") or None,
    )


def query_state(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


# ---------------------------------------------------------------- pagination and counts from visible text

_NUM = r"(\d{1,3}(?:[,.\u202f\u00a0]\d{3})+|\d+)"
_PAGE_OF = re.compile(rf"\bpage\s+{_NUM}\s*(?:of|/)\s*{_NUM}", re.I)
_RANGE_OF = re.compile(
    rf"{_NUM}\s*(?:-|–|—|to)\s*{_NUM}\s+(?:of|from|out of)\s+(?:about\s+|approx\.?\s+)?{_NUM}", re.I
)
_COUNT = re.compile(
    rf"{_NUM}\s+(?:total\s+)?(?:results?|items?|records?|matches|hits|entries|documents|datasets|papers|"
    r"publications|articles|rows|studies|trials|products|jobs|patents|books|filings|reports|listings|"
    r"companies|series|observations|actions|complaints|stations|vulnerabilities|cves)\b",
    re.I,
)
# "Found 1,204", "Results: 1,204", "Total results: 1,204"; a bare "Total 1,890" is a table footer, no count.
_FOUND = re.compile(rf"\b(?:found|total results|results?(?: found)?)\s*:?\s+{_NUM}\b", re.I)
_NEXT = re.compile(r"^(next|next page|more results|older|›|»|→|>|>>)$|\bnext\b", re.I)
_PREV = re.compile(r"^(prev|previous|previous page|newer|‹|«|←|<|<<)$|\bprev(ious)?\b", re.I)


def _int(text: str) -> int | None:
    return digits_only(text)  # None for a number no page shows (thousands of digits): never a ValueError


def _count_line(text: str) -> int | None:
    """'1,204 results' on a short line of its own; in running prose ('results on 4 datasets') it is no count."""
    for line in text.splitlines():
        if len(line) <= 100 and (m := _COUNT.search(line) or _FOUND.search(line)) and _int(m.group(1)) is not None:
            return _int(m.group(1))
    return None


def _pagination(text: str, controls: list[Control]) -> tuple[Pagination | None, int | None]:
    page = pages = first = last = total = size = None
    snippets: list[str] = []
    if m := _PAGE_OF.search(text):
        page, pages = _int(m.group(1)), _int(m.group(2))
        snippets.append(m.group(0)[:80])
    if m := _RANGE_OF.search(text):
        first, last, total = _int(m.group(1)), _int(m.group(2)), _int(m.group(3))
        snippets.append(m.group(0)[:80])
    count = total
    if count is None:
        count = _count_line(text)
    has_next = has_prev = False
    highest_link: int | None = None
    for c in controls:
        if c.disabled:
            continue
        names = [c.label] if c.kind in {"button", "submit"} else []
        if c.kind == "link":
            names = [o.label for o in c.options if not o.selected]
        has_next = has_next or any(_NEXT.search(n) for n in names)
        has_prev = has_prev or any(_PREV.search(n) for n in names)
        if c.kind == "page_size" and c.value and c.value.split() and page_int(c.value.split()[0]) is not None:
            size = page_int(c.value.split()[0])
        if c.kind == "link" and c.label == "Pagination":
            current = [n for o in c.options if o.selected and (n := page_int(o.label)) is not None]
            numbers = [n for o in c.options if (n := page_int(o.label)) is not None]
            if page is None and current:
                page = current[0]
            highest_link = max(numbers, default=None)
            if current:  # links to higher/lower page numbers than the current one mean next/prev exist
                has_next = has_next or any(n > current[0] for n in numbers)
                has_prev = has_prev or any(n < current[0] for n in numbers)
    if page is not None and pages is not None:
        has_next = has_next or page < pages
        has_prev = has_prev or page > 1
    if size is None and first is not None and last is not None and has_next:
        size = last - first + 1
    if page is None and first is not None and size:
        page = (first - 1) // size + 1
    if pages is None and total is not None and size:
        pages = -(-total // size)
    if pages is None and highest_link is not None and not has_next:
        pages = max(highest_link, page or 0)  # a pager without "next" lists up to the last page
    if not (snippets or has_next or has_prev or page is not None):
        return None, count
    pagination = Pagination(page=page, pages=pages, first=first, last=last, total=total, page_size=size,
                            has_next=has_next, has_prev=has_prev, text="; ".join(snippets))
    return pagination, count


# ---------------------------------------------------------------- assembly


def _apply_total(table: TableData, total: int) -> None:
    """observe-*.js sends only the first rows of a long table or card list, with the full count."""
    if table.source == "table":
        header_rows = 1 if any(table.headers) else 0
        total -= header_rows
    if total > table.total_rows:
        table.total_rows = total
        table.truncated = True


def _frame_label(frame: Frame, prefix: str) -> str:
    return f"{prefix}:{frame.name}" if frame.name else f"{prefix}:{frame.url}"


async def observe_page(page: Page, *, page_id: int, max_table_rows: int = MAX_TABLE_ROWS,
                       max_links: int = MAX_LINKS) -> Observation:
    """Observe every frame of `page` at once; refs are unique across frames and stable per page. The structure
    only: whoever shows it renders it within the room it has (`browser.render.render`)."""
    frames = list(page.frames)
    results = list(await asyncio.gather(*(_observe_frame(page, f, max_table_rows, max_links) for f in frames)))
    main = frames.index(page.main_frame)
    if isinstance(results[main], str):  # usually a navigation replaced the document mid-walk: wait, retry once
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("domcontentloaded", timeout=RETRY_WAIT_MS)
        results[main] = await _observe_frame(page, page.main_frame, max_table_rows, max_links)
    controls: list[Control] = []
    chips: list[str] = []
    fragments: list[dict[str, str]] = []
    notices: list[str] = []
    outline: list[str] = []
    outline_refs: list[str] = []
    outline_cut: list[int] = []
    links: list[Link] = []
    outline_total = links_total = 0
    outline_main: int | None = None
    frame_notes: list[str] = []
    texts: list[str] = []
    url, title = page.url, ""
    for frame, result in zip(frames, results, strict=True):
        is_main = frame is page.main_frame
        if isinstance(result, str):
            frame_notes.append(result)
            if is_main:  # the caller must see that this observation is empty for a reason, not a bare page
                notices.append(f"[observer] page not observed: {result}; wait_for the page, then observe again")
            continue
        label = None if is_main else _frame_label(frame, result["prefix"])
        if is_main:
            url, title = result["url"], result["title"]
            if "outlineMain" in result:  # the main frame's outline comes first, its main-content lines first
                outline_main = int(result["outlineMain"])
        else:
            frame_notes.append(f"{label} ({len(result['controls'])} controls, refs {result['prefix']}e*)")
        controls += [_control(c, label) for c in result["controls"]]
        chips += result["chips"]
        fragments += [{**t, "base": result["url"]} for t in result["tables"]]
        notices += result["notices"]
        outline_cut += [len(outline) + i for i, cut in enumerate(result.get("outlineCut") or []) if cut]
        outline += result["outline"]
        outline_refs += result.get("outlineRefs") or [""] * len(result["outline"])
        links += [Link(**ln) for ln in result["links"]]
        outline_total += result.get("outlineTotal", len(result["outline"]))
        links_total += result.get("linksTotal", len(result["links"]))
        texts.append(result["text"])
    tables: list[TableData] = []
    for fragment in fragments:
        table = parse_fragment(fragment["html"], fragment["kind"], index=len(tables), max_rows=max_table_rows,
                               base_url=fragment["base"])
        if table is not None and fragment.get("total"):
            _apply_total(table, int(fragment["total"]))  # a row count observe-*.js counted, not page text
        if table is not None:
            table.rank = int(fragment.get("rank") or 0)
        if table is not None and table.rows:
            tables.append(table)
        else:
            links += [Link(ref=ln.ref, text=ln.text, href=ln.href)
                      for ln in fragment_links(fragment["html"], fragment["base"]) if ln.ref and ln.text]
    pagination, count = _pagination("\n".join(texts), controls)
    obs = Observation(
        url=url,
        query_state=query_state(url),
        title=title,
        frames=frame_notes,
        controls=controls,
        chips=chips,
        tables=tables,
        pagination=pagination,
        result_count=count,
        outline=outline,
        outline_total=max(outline_total, len(outline)),
        outline_main=outline_main,
        outline_refs=outline_refs if any(outline_refs) else [],
        outline_cut=outline_cut,
        links=links,
        links_total=max(links_total, len(links)),
        notices=notices,
        page_id=page_id,
    )
    return obs
