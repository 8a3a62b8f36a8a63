"""Policy: only allowed origins are reached; everything else is refused, reported, and never fetched."""

from __future__ import annotations

import pytest

from browser.policy import BrowserLimits, OriginPolicy, origin_of
from browser.render import render
from browser.types import Click, Goto, ReadPdf, Target


def test_origin_rules():
    policy = OriginPolicy.for_task(["http://127.0.0.1:8000/any/path"], start_url="https://Example.org/start?q=1")
    assert policy.allowed_origins == {"http://127.0.0.1:8000", "https://example.org"}
    assert policy.navigation_refusal("http://127.0.0.1:8000/other") is None
    assert "not an allowed origin" in policy.navigation_refusal("http://127.0.0.1:8001/")
    assert "not an allowed origin" in policy.navigation_refusal("http://localhost:8000/")
    for url in ("file:///etc/passwd", "chrome://settings", "data:text/html,<b>x</b>", "javascript:alert(1)"):
        assert "scheme" in policy.navigation_refusal(url), url
    assert policy.request_allowed("data:image/png;base64,AAAA")  # in-page resources, not navigation
    assert not policy.request_allowed("file:///etc/passwd")
    assert origin_of("HTTPS://A.b:443/x") == "https://a.b:443"


def test_limits_reject_nonsense():
    with pytest.raises(ValueError, match="download_bytes"):
        BrowserLimits(download_bytes=0)
    with pytest.raises(ValueError, match="pdf_page"):
        BrowserLimits(pdf_page=3)  # typo'd field names are errors, not silently ignored


@pytest.mark.slow
async def test_goto_blocked_host_and_scheme(task_browser, fixture_site):
    before = len(fixture_site.foreign_hits())
    await task_browser.act(Goto(url=fixture_site.url("act_form.html")))
    foreign = await task_browser.act(Goto(url=fixture_site.foreign_url("act_form.html")))
    assert not foreign.ok and foreign.error == "blocked_by_policy"
    assert "localhost" in foreign.message
    local_file = await task_browser.act(Goto(url="file:///etc/passwd"))
    assert local_file.error == "blocked_by_policy"
    assert task_browser.page.url == fixture_site.url("act_form.html")
    assert len(fixture_site.foreign_hits()) == before


@pytest.mark.slow
async def test_link_to_blocked_host_is_refused_and_page_kept(task_browser, fixture_site):
    await task_browser.act(Goto(url=fixture_site.url("act_links.html")))
    before = len(fixture_site.foreign_hits())
    result = await task_browser.act(Click(target=Target(text="Foreign site")))
    assert not result.ok and result.error == "blocked_by_policy"
    assert result.observation.url == fixture_site.url("act_links.html")  # back where the agent was
    assert len(fixture_site.foreign_hits()) == before
    assert fixture_site.foreign_url("act_form.html") in task_browser.blocked_requests


@pytest.mark.slow
async def test_redirect_to_blocked_host_is_stopped_at_the_hop(task_browser, fixture_site):
    before = len(fixture_site.foreign_hits())
    await task_browser.act(Goto(url=fixture_site.url("act_links.html")))
    result = await task_browser.act(Click(target=Target(text="Redirecting link")))
    assert result.error == "blocked_by_policy"
    assert fixture_site.foreign_url("act_links.html") in task_browser.blocked_requests
    assert len(fixture_site.foreign_hits()) == before
    direct = await task_browser.act(Goto(url=fixture_site.url("redirect-foreign")))
    assert direct.error == "blocked_by_policy"
    pdf = await task_browser.act(ReadPdf(url=fixture_site.url("redirect-foreign")))
    assert pdf.error == "blocked_by_policy"
    assert len(fixture_site.foreign_hits()) == before


@pytest.mark.slow
async def test_sub_request_to_other_host_refused_and_reported(task_browser, fixture_site):
    before = len(fixture_site.foreign_hits())
    result = await task_browser.act(Goto(url=fixture_site.url("act_foreign_sub.html")))
    assert result.ok, result.message  # the page itself is allowed
    assert "request(s) to other origins refused" in result.message
    assert await task_browser.page.text_content("#status") == "pixel refused"
    notice = f"policy refused 1 request(s) to {fixture_site.foreign_origin}"
    assert notice in result.observation.notices and notice in render(result.observation).text
    assert fixture_site.foreign_url("foreign-pixel.gif") in task_browser.blocked_requests
    assert len(fixture_site.foreign_hits()) == before


@pytest.mark.slow
async def test_websocket_to_other_host_refused_and_reported(task_browser, fixture_site):
    before = len(fixture_site.foreign_hits())
    result = await task_browser.act(Goto(url=fixture_site.url("act_socket.html")))
    assert result.ok, result.message
    await task_browser.page.wait_for_function("() => document.getElementById('status').textContent !== 'connecting'",
                                              timeout=5_000)
    assert await task_browser.page.text_content("#status") == "closed 1008"
    assert fixture_site.foreign_url("feed").replace("http://", "ws://") in task_browser.blocked_requests
    assert len(fixture_site.foreign_hits()) == before


class _Route:
    """Stands in for Playwright's Route: `fetch` fails with the given errors, then answers."""

    def __init__(self, *errors: Exception):
        self.errors, self.calls = list(errors), []

    async def fetch(self, **options):
        self.calls.append(options)
        if self.errors:
            raise self.errors.pop(0)
        return "response"


async def test_a_request_on_a_dropped_kept_alive_connection_is_sent_once_more():
    from playwright.async_api import Error as PlaywrightError

    from browser.policy import fetch_resending_on_reset

    route = _Route(PlaywrightError("route.fetch: read ECONNRESET"))
    assert await fetch_resending_on_reset(route, max_redirects=0) == "response"
    assert route.calls == [{"max_redirects": 0}, {"max_redirects": 0}]

    twice = _Route(PlaywrightError("socket hang up"), PlaywrightError("socket hang up"))
    with pytest.raises(PlaywrightError):  # resent once, not in a loop
        await fetch_resending_on_reset(twice)
    assert len(twice.calls) == 2


async def test_timeouts_and_refusals_are_not_resent():
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    from browser.policy import fetch_resending_on_reset

    for error in (PlaywrightTimeout("Timeout 30000ms exceeded"), PlaywrightError("connect ECONNREFUSED 127.0.0.1:9")):
        route = _Route(error)
        with pytest.raises(PlaywrightError):
            await fetch_resending_on_reset(route)
        assert len(route.calls) == 1
