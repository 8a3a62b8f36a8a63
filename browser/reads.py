"""Actions that read data rather than set state: whole tables across pages, PDFs, downloads (CSV as rows).

Fetches go through the task context (its cookies) but never around the policy: every redirect hop is
checked, and the size cap applies before anything is saved or parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browser.driver import PageHandle
from browser.grids import read_virtual_grid
from browser.interface import BrowserError
from browser.lists import load_more
from browser.numbers import page_int
from browser.readback import Outcome
from browser.settle import settle
from browser.targets import resolve_target
from browser.types import Download, ReadPdf, ReadTable, TableData, Target

_NEXT_PAGE = re.compile(r"^\s*(next|next page|more results|›|»|→|>|>>)\s*[›»→>]?\s*$", re.I)


async def _next_page_control(driver: PageHandle) -> Locator | None:
    page = driver.page
    candidates = [page.locator("a[rel~=next], [rel~=next]"),
                  page.get_by_role("link", name=_NEXT_PAGE), page.get_by_role("button", name=_NEXT_PAGE),
                  page.locator("[aria-label*='next' i]")]
    for locator in candidates:
        for index in range(min(await locator.count(), 5)):
            candidate = locator.nth(index)
            if not await candidate.is_visible() or await candidate.is_disabled():
                continue
            if await candidate.get_attribute("aria-disabled") == "true":
                continue
            return candidate
    return None


def _missing_note(table: TableData, *, stated: int, scrolled_missing: int) -> str:
    """What a whole read fell short of: the rows a pager states ('showing 1-25 of 34') that all pages did not
    add up to, or the rows a virtualised grid states that scrolling it never showed."""
    if stated > len(table.rows):
        return f" ({stated - len(table.rows)} of the {stated} rows the page states were not reached: missing)"
    if scrolled_missing:
        return (f" ({scrolled_missing} of the {len(table.rows) + scrolled_missing} rows the grid states were never "
                "shown: missing)")
    return ""


async def read_table(driver: PageHandle, action: ReadTable) -> Outcome:
    from browser.observe import observe_page

    cap = min(action.max_rows, driver.limits.table_rows)
    merged: TableData | None = None
    missing = 0  # rows the page states but never showed
    scrolled = False  # read by scrolling a virtualised grid
    stated = 0  # the row count the page's pager states
    growing = False  # the list grows in place: each read holds every row so far
    pages_read = 0
    seen: set[str] = set()
    while True:
        page_id = await driver.sync_page_id()
        observation = await observe_page(driver.page, page_id=page_id, max_table_rows=cap)
        if action.table >= len(observation.tables):
            if merged is None:
                raise BrowserError("not_found", f"there is no table {action.table} on the page "
                                                f"({len(observation.tables)} tables found)")
            break
        table = observation.tables[action.table]
        signature = repr(table.rows[:3])
        if merged is not None and growing and table.rows[:3] == merged.rows[:3]:
            if len(table.rows) <= len(merged.rows):
                break  # asked for more, the list stayed as it was: its end
            merged = table.model_copy(deep=True)  # the same list, grown in place: it holds every row so far
            pages_read += 1
        elif signature in seen:
            break  # the 'next' control did not move to a new page
        else:
            seen.add(signature)
            pages_read += 1
            if merged is None:
                merged = table.model_copy(deep=True)
                if observation.pagination and observation.pagination.total and len(observation.tables) == 1:
                    stated = observation.pagination.total  # 'showing 1-25 of 34': what all pages must add up to
            else:
                merged.rows += table.rows
                merged.row_links += table.row_links
                merged.row_controls += table.row_controls
                merged.cell_links += table.cell_links
        if len(merged.rows) >= cap:
            merged.truncated = True
            break
        if not growing and table.total_rows > len(table.rows) and len(merged.rows) == len(table.rows):
            # the page states more rows than it holds: a virtualised grid renders only those in view
            read = await read_virtual_grid(driver.page, table.total_rows, len(table.headers), cap=cap)
            if read is not None and len(read.rows) > len(table.rows):
                merged.rows, merged.row_links, merged.row_controls, merged.cell_links = (
                    read.rows, [[] for _ in read.rows], [[] for _ in read.rows], [])
                missing = read.missing
                merged.truncated = len(read.rows) >= cap and table.total_rows > cap
                scrolled = True
                break
        if not action.all_pages or pages_read >= driver.limits.table_pages:
            merged.truncated = merged.truncated or table.truncated
            break
        next_control = None if growing else await _next_page_control(driver)
        if next_control is not None:
            await next_control.click()
            await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                         timeout_ms=driver.timeouts.settle_max_ms)
            continue
        if pages_read > 1 and not growing:
            break  # the pager's last page
        # no pager: a list that grows in place ('load more', infinite scroll) is asked for more
        if not await load_more(driver):
            break
        growing = True
    assert merged is not None
    merged.rows, merged.row_links, merged.row_controls, merged.cell_links = (
        merged.rows[:cap], merged.row_links[:cap], merged.row_controls[:cap], merged.cell_links[:cap])
    merged.total_rows = len(merged.rows)
    cut = " (row cap reached; narrow the filters)" if merged.truncated else _missing_note(
        merged, stated=stated if action.all_pages and not scrolled else 0, scrolled_missing=missing)
    where = ("by scrolling the grid" if scrolled else f"as it grew, {pages_read} batch(es)" if growing
             else f"over {pages_read} page(s)")
    return Outcome(f"read {len(merged.rows)} rows from table {action.table} {where}{cut}",
                    table=merged, navigated=pages_read > 1)


async def _link_url(driver: PageHandle, target: Target) -> str:
    locator = await _locate(driver, target)
    href = await locator.get_attribute("href")
    if not href:
        raise BrowserError("invalid_action", f"{target.describe()} is not a link with an address")
    return urljoin(driver.page.url, href)


@dataclass
class _Fetched:
    url: str
    body: bytes
    content_type: str
    disposition: str


async def _fetch_capped(driver: PageHandle, url: str) -> _Fetched:
    """GET through the context (its cookies), following redirects only within the policy, size-capped."""
    limit = driver.limits.download_bytes
    for _hop in range(6):
        refusal = driver.policy.navigation_refusal(url)
        if refusal:
            raise BrowserError("blocked_by_policy", f"not fetching {url}: {refusal}")
        response, location = await driver.http_get(url)
        try:
            if location:
                url = location
                continue
            if not response.ok:
                raise BrowserError("not_found", f"{url} answered HTTP {response.status}")
            declared = page_int(response.headers.get("content-length"), max_digits=30) or 0
            if declared > limit:
                raise BrowserError("download_too_large", f"{url} is {declared} bytes; the cap is {limit}")
            body = await response.body()
            if len(body) > limit:
                raise BrowserError("download_too_large", f"{url} is {len(body)} bytes; the cap is {limit}")
            return _Fetched(url, body, response.headers.get("content-type", ""),
                            response.headers.get("content-disposition", ""))
        finally:
            await response.dispose()
    raise BrowserError("not_found", f"{url} redirects too many times")


_DISPOSITION_NAME = re.compile(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", re.I)


def _file_name(fetched: _Fetched) -> str:
    if match := _DISPOSITION_NAME.search(fetched.disposition):
        return safe_file_name(unquote(match.group(1)))
    return safe_file_name(unquote(urlsplit(fetched.url).path.rsplit("/", 1)[-1]))


FALLBACK_FILE_NAME = "download.bin"
FILE_NAME_BYTES = 120  # well under any file system's 255, in UTF-8
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_UNSAFE_IN_NAME = re.compile(r"[^\w.+,()-]+")  # \w: letters and digits of any script, and _


def safe_file_name(name: str) -> str:
    """The agent's name for a file the page named (`Content-Disposition`, a URL's last part, a script's
    download): its last path part only, anything but letters, digits and `._+,()-` as `_`, no leading or
    trailing dots (so never `.` or `..`, nor a hidden file), at most FILE_NAME_BYTES with its extension kept;
    FALLBACK_FILE_NAME when nothing is left."""
    base = _UNSAFE_IN_NAME.sub("_", re.split(r"[/\\]", name)[-1]).strip("._")
    if not base:
        return FALLBACK_FILE_NAME
    extension = match.group(0) if (match := _EXTENSION.search(base)) else ""
    stem = base[:len(base) - len(extension)]
    while stem and len((stem + extension).encode()) > FILE_NAME_BYTES:
        stem = stem[:-1]
    return (stem.strip("._") + extension) if stem.strip("._") else FALLBACK_FILE_NAME


async def read_pdf(driver: PageHandle, action: ReadPdf) -> Outcome:
    from browser.pdf import NotAPdfError, pdf_page_count, read_pdf_bytes

    if action.url:
        url = urljoin(driver.page.url, action.url)
    elif action.target:
        url = await _link_url(driver, action.target)
    else:
        url = driver.page.url
    data = (await _fetch_capped(driver, url)).body
    max_pages = min(action.max_pages, driver.limits.pdf_pages)
    try:
        pages = read_pdf_bytes(data, max_pages=max_pages, max_chars=driver.limits.text_chars,
                               first_page=action.first_page)
        total = pdf_page_count(data)
    except NotAPdfError as exc:
        raise BrowserError("invalid_action", f"{url}: {exc}") from exc
    shown = f"page(s) {pages[0].page}-{pages[-1].page}" if pages else "no page"
    return Outcome(f"read {shown} of {total} of {url}", pdf_pages=pages)


async def download(driver: PageHandle, action: Download) -> Outcome:
    """A link is fetched through the context (policy and size cap apply before anything is saved); a
    script-made download (blob, POST export) goes through the browser's own download."""
    locator = await _locate(driver, action.target)
    href = await locator.get_attribute("href")
    url = urljoin(driver.page.url, href) if href else ""
    if urlsplit(url).scheme in ("http", "https"):
        fetched = await _fetch_capped(driver, url)
        path = driver.downloads_dir / _file_name(fetched)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(fetched.body)
        return _saved_file(driver, path, is_csv="csv" in fetched.content_type)
    try:
        async with driver.page.expect_download(timeout=driver.timeouts.action_ms * 2) as info:
            await locator.click()
        download = await info.value
    except PlaywrightTimeout as exc:
        raise BrowserError("no_effect", f"clicking {action.target.describe()} started no download; "
                                        "use read_pdf for PDFs or click for pages") from exc
    path = driver.downloads_dir / safe_file_name(download.suggested_filename or "")
    path.parent.mkdir(parents=True, exist_ok=True)
    await download.save_as(path)
    return _saved_file(driver, path, is_csv=False)


def _saved_file(driver: PageHandle, path: Path, *, is_csv: bool) -> Outcome:
    from browser.csvdata import parse_csv

    size = path.stat().st_size
    if size > driver.limits.download_bytes:
        path.unlink()
        raise BrowserError("download_too_large", f"{path.name} is {size} bytes; the cap is "
                                                 f"{driver.limits.download_bytes} (file discarded)")
    outcome = Outcome(f"downloaded {path.name} ({size} bytes)", download_path=str(path))
    if is_csv or path.suffix.lower() in (".csv", ".tsv"):
        outcome.table = parse_csv(path.read_bytes(), max_rows=driver.limits.table_rows)
        outcome.message += f"; {len(outcome.table.rows)} rows" + (" (row cap reached)" if outcome.table.truncated else "")
    return outcome




async def _locate(driver: PageHandle, target: Target) -> Locator:
    return await resolve_target(driver.page, target, ref_is_stale=driver.ref_is_stale,
                                shown=driver.last_observation)
