"""Issue 29 item 3: a page on the allowed origin that embeds a foreign `<iframe>` made `goto` report failure
(the refused sub-frame counted as a refused navigation), though the page opened and its table could be read;
the same goto was then refused as a repeated failure. The sub-frame is now a blocked request, and the
navigation that loaded its parent is `ok`. Real Chromium; the foreign site is another loopback host."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from browser.render import render
from browser.types import Goto
from tasks.offline.server import ThreadedServer, free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def origins() -> Iterator[tuple[str, str, list[str]]]:
    port, foreign_port = free_port("127.0.0.1"), free_port("127.0.0.2")
    origin, foreign = f"http://127.0.0.1:{port}", f"http://127.0.0.2:{foreign_port}"
    hits: list[str] = []
    page = (f"<title>framed</title><h1>Results</h1><iframe src='{foreign}/ad.html'></iframe>"
            "<table><tr><th>name</th><th>value</th></tr><tr><td>alpha</td><td>1</td></tr></table>")

    def foreign_page(request: Any) -> HTMLResponse:
        hits.append(request.url.path)
        return HTMLResponse("<p>foreign frame</p>")

    app = Starlette(routes=[Route("/framed.html", lambda r: HTMLResponse(page)),
                            Route("/ad.html", foreign_page)])
    with ThreadedServer(app, "127.0.0.1", port, "sgr-frame-site"), \
            ThreadedServer(app, "127.0.0.2", foreign_port, "sgr-frame-foreign"):
        yield origin, foreign, hits


async def test_foreign_frame_is_a_blocked_request_and_the_goto_is_ok(chromium_worker: Any, origins: Any,
                                                                      tmp_path: Path) -> None:
    origin, foreign, hits = origins
    async with chromium_worker.task_browser(str(tmp_path), [origin]) as browser:
        result = await browser.act(Goto(url=f"{origin}/framed.html"))
        assert result.ok and result.error is None, result.message
        assert "alpha" in render(result.observation or await browser.observe()).text
        assert f"{foreign}/ad.html" in browser.blocked_requests  # recorded as a blocked request ...
        refused = [b for b in browser.policy.blocked if b.url == f"{foreign}/ad.html"]
        assert refused and not refused[0].navigation  # ... not as the page's navigation
        assert hits == []  # and it never left
        again = await browser.act(Goto(url=f"{origin}/framed.html"))
        assert again.ok, again.message
