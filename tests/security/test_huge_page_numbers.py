"""Issue 21 item 7: a page that shows `Page 1 of 999…9` (5,000 digits) made every observe raise Python's
int-string ValueError, so one page could crash a task. Page text is parsed with bounded integers: such a
number reads as "no number", the page is observed like any other (real Chromium on a local page)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from browser.numbers import digits_only, page_int
from browser.readback import value_matches
from browser.render import render
from browser.types import Goto, ReadTable

HUGE = "9" * 5000


def _page() -> bytes:
    pager = "".join(f'<a href="?page={n}">{n}</a> ' for n in ("1", "2", HUGE))
    rows = "".join(f"<tr><td>{i}</td><td>Row {i}</td></tr>" for i in range(3))
    return f"""<!doctype html><html><head><title>Huge numbers</title></head><body><main>
<h1>Results</h1>
<p>Page 1 of {HUGE}</p>
<p>Showing 1-20 of {HUGE} results</p>
<p>{HUGE} results</p>
<label>Results per page <select name="per_page"><option selected>{HUGE}</option><option>20</option></select></label>
<nav class="pagination" aria-label="pagination">{pager}<span aria-current="page" class="current">{HUGE}</span></nav>
<table><thead><tr><th colspan="{HUGE}">Id</th><th rowspan="{HUGE}">Name</th></tr></thead><tbody>{rows}</tbody></table>
</main></body></html>""".encode()


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = _page()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def huge_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_bounded_integers_refuse_what_no_page_count_is() -> None:
    assert page_int("42") == 42 and page_int(" 7 ") == 7 and page_int("007") == 7
    assert page_int(HUGE) is None and page_int("9" * 16) is None and page_int("9" * 15) == int("9" * 15)
    assert page_int("²") is None and page_int("1.5") is None and page_int("") is None and page_int(None) is None
    assert digits_only("1,204") == 1204 and digits_only(f"{HUGE},000") is None
    assert value_matches(HUGE, HUGE) and not value_matches(HUGE + "1", "1" + HUGE + "2")


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_a_page_of_five_thousand_digit_numbers_is_observed(chromium_worker, huge_site, tmp_path) -> None:
    async with chromium_worker.task_browser(str(tmp_path), [huge_site]) as browser:
        result = await browser.act(Goto(url=huge_site + "/results"))
        assert result.ok, result.message
        obs = result.observation
        assert obs is not None and render(obs).tokens <= 1500
        assert obs.result_count is None  # no usable count on the page
        assert obs.pagination is not None and obs.pagination.pages is None and obs.pagination.total is None
        pager = next(c for c in obs.controls if c.kind == "link")
        assert len(pager.options) >= 3  # the link labelled with 5,000 digits is still an option
        assert "Row 2" in render(obs).text
        again = await browser.observe()
        assert render(again).tokens <= 1500
        table = await browser.act(ReadTable(table=0))
        assert table.ok and table.table is not None and [r[-1] for r in table.table.rows] == ["Row 0", "Row 1", "Row 2"]
