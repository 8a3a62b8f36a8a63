"""Live origins served from a local environment: the agent only ever sees the live name, while every
byte comes from the stand-in environment; unmapped live origins are refused and reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser.render import render
from browser.routing import OriginMap, RoutingError, canonical_origin
from browser.types import Click, Download, Fill, Goto, Submit, Target
from tests.fixtures.webenv import CSV_TEXT

LIVE = "https://site.example"


def test_origin_map_translates_both_ways():
    routes = OriginMap.build({"https://Arxiv.org/": "http://127.0.0.1:8083", "https://export.arxiv.org:443":
                              "http://127.0.0.1:8083"})
    assert routes.pairs == {"https://arxiv.org": "http://127.0.0.1:8083",
                            "https://export.arxiv.org": "http://127.0.0.1:8083"}
    assert routes.to_environment("https://arxiv.org/abs/2101.1?x=1#v2") == "http://127.0.0.1:8083/abs/2101.1?x=1"
    assert routes.to_environment("https://arxiv.org") == "http://127.0.0.1:8083/"
    assert routes.to_environment("http://arxiv.org/abs") == "http://arxiv.org/abs"  # the scheme is part of it
    assert routes.to_environment("https://www.arxiv.org/") == "https://www.arxiv.org/"  # no implicit subdomains
    assert routes.to_live("http://127.0.0.1:8083/list?p=2", "https://export.arxiv.org") == \
        "https://export.arxiv.org/list?p=2"  # back to the name the page was asked at
    assert routes.to_live("http://127.0.0.1:9999/x", "https://arxiv.org") == "http://127.0.0.1:9999/x"
    assert routes.maps("wss://arxiv.org/socket") and not routes.maps("https://evil.example/")


def test_origin_map_rejects_what_is_not_an_origin():
    with pytest.raises(RoutingError, match="origin only"):
        OriginMap.build({"https://arxiv.org/search": "http://127.0.0.1:8083"})
    with pytest.raises(RoutingError, match="not an http"):
        OriginMap.build({"arxiv.org": "http://127.0.0.1:8083"})
    with pytest.raises(RoutingError, match="mapped to itself"):
        OriginMap.build({"http://127.0.0.1:8083": "http://127.0.0.1:8083/"})
    a = OriginMap.build({"https://a.example": "http://127.0.0.1:1"})
    with pytest.raises(RoutingError, match="mapped to both"):
        a.merged(OriginMap.build({"https://a.example": "http://127.0.0.1:2"}))
    assert canonical_origin("HTTP://LOCALHOST:80") == "http://localhost"


@pytest.fixture
async def live_browser(chromium_worker, standin_environment, tmp_path: Path):
    routes = OriginMap.build({LIVE: standin_environment.origin})
    # An unmapped allowed origin is dropped: it would leave the offline environment.
    async with chromium_worker.task_browser(str(tmp_path), [LIVE, "https://unmapped.example"],
                                            start_url=f"{LIVE}/", routes=routes) as browser:
        yield browser


@pytest.mark.slow
async def test_links_redirects_and_address_stay_live(live_browser, standin_environment):
    observation = await live_browser.observe()
    assert observation.url == f"{LIVE}/" and "Stand-in home" in render(observation).text
    assert standin_environment.origin not in render(observation).text  # env addresses in the body were rewritten
    assert live_browser.router.unmapped_allowed == ["https://unmapped.example"]
    assert live_browser.policy.allowed_origins == {LIVE}

    absolute = await live_browser.act(Click(target=Target(text="Absolute link")))
    assert absolute.ok, absolute.message
    assert absolute.observation.url == f"{LIVE}/page2?abs=1"
    for link, query in (("Redirect relative", "from=rel"), ("Redirect absolute", "from=abs")):
        await live_browser.act(Goto(url=f"{LIVE}/"))
        result = await live_browser.act(Click(target=Target(text=link)))
        assert result.ok, result.message
        assert result.observation.url == f"{LIVE}/page2?{query}"  # Location came back on the live name
        assert f"query={query}" in render(result.observation).text
    paths = [hit["path"] for hit in standin_environment.hits]
    assert "/go-abs" in paths and "/page2" in paths


@pytest.mark.slow
async def test_form_post_cookies_and_download(live_browser, standin_environment):
    await live_browser.act(Fill(target=Target(label="Topic"), value="freshet"))
    posted = await live_browser.act(Submit(target=Target(text="Search")))
    assert posted.ok, posted.message
    assert posted.observation.url == f"{LIVE}/search"
    assert "topic=freshet" in render(posted.observation).text
    assert "origin is own: True" in render(posted.observation).text  # the environment sees itself as the origin

    await live_browser.act(Goto(url=f"{LIVE}/cookie"))
    seen = await live_browser.act(Goto(url=f"{LIVE}/whoami"))
    assert "consent=yes; region=north" in render(seen.observation).text  # both Set-Cookie headers survived
    assert {c["name"] for c in await live_browser.context.cookies(LIVE)} >= {"consent", "region"}

    await live_browser.act(Goto(url=f"{LIVE}/"))
    downloaded = await live_browser.act(Download(target=Target(text="Export CSV")))
    assert downloaded.ok, downloaded.message
    assert Path(downloaded.download_path).read_text() == CSV_TEXT
    assert [row for row in downloaded.table.rows] == [["A1", "1973", "12.5"], ["B2", "2018", "7.25"]]
    exported = await live_browser.act(Download(target=Target(text="Export selection")))  # a POSTed download
    assert exported.ok, exported.message
    assert Path(exported.download_path).name == "selection.csv"
    assert Path(exported.download_path).read_text() == CSV_TEXT


@pytest.mark.slow
async def test_unmapped_live_origin_is_refused_and_reported(live_browser, standin_environment):
    home = await live_browser.act(Goto(url=f"{LIVE}/"))
    assert home.ok and "request(s) to other origins refused" in home.message  # the pixel, reported
    assert "https://unmapped.example/pixel.gif" in live_browser.blocked_requests
    away = await live_browser.act(Goto(url="https://unmapped.example/elsewhere"))
    assert not away.ok and away.error == "blocked_by_policy"
    redirected = await live_browser.act(Goto(url=f"{LIVE}/go-away"))
    assert redirected.error == "blocked_by_policy"
    assert "https://unmapped.example/landing" in live_browser.blocked_requests
    assert live_browser.page.url.startswith(LIVE)


@pytest.mark.slow
async def test_environment_down_is_a_failed_load_not_a_live_request(chromium_worker, tmp_path: Path):
    routes = OriginMap.build({LIVE: "http://127.0.0.1:9"})  # nothing listens on the discard port
    async with chromium_worker.task_browser(str(tmp_path), [LIVE], routes=routes) as browser:
        result = await browser.act(Goto(url=f"{LIVE}/"))
        assert not result.ok and result.error == "not_found"
        assert browser.router.failures and browser.router.failures[0].environment_url == "http://127.0.0.1:9/"
        observation = await browser.observe()
        assert any(n.startswith(f"the local environment serving {LIVE} did not answer") for n in
                   result.observation.notices + observation.notices)
