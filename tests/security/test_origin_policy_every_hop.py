"""Issue 21 item 6: the origin policy checked only a navigation's first hop. Sub-resource redirects
(`fetch('/redir?to=<foreign>')`, `<img>`) and a navigation's later hops were never checked, WebRTC (STUN/ICE
to any host:port) was outside the policy, and third-party scripts/styles/fonts/`import()` loaded from any
origin even in offline and SGR-WebEnv runs. Real Chromium on local pages: the allowed site on 127.0.0.1, the
"foreign" site on 127.0.0.2 (another host), STUN/TURN listeners on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from browser.policy import OriginPolicy
from browser.render import render
from browser.routing import EnvironmentRouter, OriginMap
from browser.types import Goto
from tasks.offline.server import ThreadedServer, free_port

PIXEL = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00"
         b"\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
CORS = {"access-control-allow-origin": "*"}
PAGES = {
    "fetch.html": "<title>fetch</title><p id=s>wait</p><script>"
                  "fetch('/redir?to=FOREIGN/data').then(r => r.text()).then(t => s.textContent = 'got ' + t)"
                  ".catch(() => s.textContent = 'refused')</script>",
    "fetch-local.html": "<title>fetch</title><p id=s>wait</p><script>"
                        "fetch('/redir?to=' + encodeURIComponent('/redir?to=/data')).then(r => r.text())"
                        ".then(t => s.textContent = 'got ' + t).catch(() => s.textContent = 'refused')</script>",
    "img.html": "<title>img</title><p id=s>wait</p><img id=far src='/redir?to=FOREIGN/pixel.gif'>"
                "<img id=near src='/redir?to=/pixel.gif'>"
                "<script>onload = () => s.textContent = far.naturalWidth + ',' + near.naturalWidth</script>",
    "assets.html": "<title>assets</title><link rel=stylesheet href='FOREIGN/x.css'>"
                   "<style>@font-face{font-family:q;src:url(FOREIGN/f.woff)} p{font-family:q}</style>"
                   "<p id=s>wait</p><script src='FOREIGN/x.js'></script><script src='/local.js'></script>"
                   "<script type=module>import('FOREIGN/m.js').then(() => s.textContent += ' imported')"
                   ".catch(() => s.textContent += ' import refused')</script>",
    "landing.html": "<title>landing</title><p>Landing page reached</p>",
    "rtc.html": "<title>rtc</title><p id=s>wait</p><script>"
                "const servers = {iceServers: [{urls: 'stun:127.0.0.1:UDPPORT'},"
                " {urls: 'turn:127.0.0.1:TCPPORT?transport=tcp', username: 'u', credential: 'p'}]};"
                "function dial(w, label) { try { const pc = new w.RTCPeerConnection(servers);"
                " pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o));"
                " s.textContent += ' ' + label + ':dialled'; } catch (e) { s.textContent += ' ' + label + ':no-rtc'; } }"
                "s.textContent = ''; dial(window, 'page');"
                "const f = document.createElement('iframe'); document.body.appendChild(f); dial(f.contentWindow, 'frame');"
                "</script>",
}


@dataclass
class Sites:
    origin: str
    foreign: str
    hits: list[tuple[str, str]] = field(default_factory=list)

    def foreign_hits(self) -> list[str]:
        return [path for host, path in self.hits if host.startswith("127.0.0.2")]


def _page(text: str) -> Any:
    return lambda request: HTMLResponse(text)


def _app(sites: Sites, pages: dict[str, str]) -> Any:
    routes = [
        Route("/redir", lambda r: RedirectResponse(r.query_params["to"], status_code=302, headers=CORS)),
        Route("/data", lambda r: Response("DATA", media_type="text/plain", headers=CORS)),
        Route("/pixel.gif", lambda r: Response(PIXEL, media_type="image/gif", headers=CORS)),
        Route("/x.js", lambda r: Response("document.title = 'foreign script ran'", media_type="text/javascript",
                                          headers=CORS)),
        Route("/local.js", lambda r: Response("s.textContent = 'local script ran'", media_type="text/javascript")),
        Route("/m.js", lambda r: Response("export const x = 1;", media_type="text/javascript", headers=CORS)),
        Route("/x.css", lambda r: Response("p{color:red}", media_type="text/css", headers=CORS)),
        Route("/f.woff", lambda r: Response(b"wOFF", media_type="font/woff", headers=CORS)),
        *[Route(f"/{name}", _page(text.replace("FOREIGN", sites.foreign))) for name, text in pages.items()],
    ]
    inner = Starlette(routes=routes)

    async def counted(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            sites.hits.append((dict(scope["headers"]).get(b"host", b"").decode(), scope["path"]))
        await inner(scope, receive, send)

    return counted


class Listeners:
    """A STUN (UDP) and a TURN (TCP) server stand-in on loopback that count what reaches them."""

    def __init__(self) -> None:
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        for sock in (self.udp, self.tcp):
            sock.settimeout(0.1)
        self.packets = 0
        self.connections = 0
        self._stop = False
        self._threads = [threading.Thread(target=self._loop, args=(kind,), daemon=True) for kind in ("udp", "tcp")]
        for thread in self._threads:
            thread.start()

    def _loop(self, kind: str) -> None:
        while not self._stop:
            try:
                if kind == "udp":
                    self.udp.recvfrom(4096)
                    self.packets += 1
                else:
                    self.tcp.accept()[0].close()
                    self.connections += 1
            except OSError:
                continue

    def close(self) -> None:
        self._stop = True
        for thread in self._threads:
            thread.join(timeout=2)
        self.udp.close()
        self.tcp.close()


@pytest.fixture(scope="module")
def listeners() -> Iterator[Listeners]:
    found = Listeners()
    yield found
    found.close()


@pytest.fixture(scope="module")
def sites(listeners: Listeners) -> Iterator[Sites]:
    port, foreign_port = free_port("127.0.0.1"), free_port("127.0.0.2")
    found = Sites(f"http://127.0.0.1:{port}", f"http://127.0.0.2:{foreign_port}")
    pages = {name: text.replace("UDPPORT", str(listeners.udp.getsockname()[1]))
             .replace("TCPPORT", str(listeners.tcp.getsockname()[1])) for name, text in PAGES.items()}
    app = _app(found, pages)
    with ThreadedServer(app, "127.0.0.1", port, "sgr-policy-site"), \
            ThreadedServer(app, "127.0.0.2", foreign_port, "sgr-policy-foreign"):
        yield found


@pytest.fixture
async def browser(chromium_worker: Any, sites: Sites, tmp_path: Path) -> Any:
    async with chromium_worker.task_browser(str(tmp_path), [sites.origin]) as driver:
        yield driver


async def _status(driver: Any, wait_for: str = "wait", seconds: float = 10.0) -> str:
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        text = await driver.page.text_content("#s") or ""
        if text and text != wait_for:
            return text
        await asyncio.sleep(0.1)
    return text


def test_origin_policy_static_assets_rule_by_world() -> None:
    assert not OriginPolicy.for_task(["http://127.0.0.1:8765"]).static_assets  # the offline suite: all local
    assert OriginPolicy.for_task(["https://arxiv.org"]).static_assets  # a live site keeps its CDN assets
    policy = OriginPolicy.for_task(["https://arxiv.org"])
    EnvironmentRouter(OriginMap.build({"https://arxiv.org": "http://127.0.0.1:8083"}), policy)
    assert not policy.static_assets  # SGR-WebEnv: the environments serve the whole site


@pytest.mark.slow
async def test_origin_policy_subresource_redirect_is_checked_at_the_hop(browser: Any, sites: Sites) -> None:
    await browser.act(Goto(url=f"{sites.origin}/fetch.html"))
    assert await _status(browser) == "refused"
    assert f"{sites.foreign}/data" in browser.blocked_requests  # refused by the policy, at the hop
    await browser.act(Goto(url=f"{sites.origin}/fetch-local.html"))
    assert await _status(browser) == "got DATA"  # redirects inside the allowed origin still work

    await browser.act(Goto(url=f"{sites.origin}/img.html"))
    assert await _status(browser) == "0,1"  # the foreign pixel is refused, the local one shown
    assert f"{sites.foreign}/pixel.gif" in browser.blocked_requests
    assert sites.foreign_hits() == []


@pytest.mark.slow
async def test_origin_policy_navigation_redirect_chain_is_checked_at_every_hop(browser: Any, sites: Sites) -> None:
    chain = f"{sites.origin}/redir?to=/redir?to={sites.foreign}/data"  # allowed hop, then a foreign one
    result = await browser.act(Goto(url=chain))
    await asyncio.sleep(1.0)
    assert not result.ok and result.error == "blocked_by_policy"  # the agent is told
    assert sites.foreign_hits() == []
    assert f"{sites.foreign}/data" in browser.blocked_requests
    assert not browser.page.url.startswith(sites.foreign)

    inside = await browser.act(Goto(url=f"{sites.origin}/redir?to=/redir?to=/landing.html"))
    observation = inside.observation or await browser.observe()
    if not observation.url.endswith("/landing.html"):  # the hop page navigates on by itself
        await browser.page.wait_for_url("**/landing.html")
        observation = await browser.observe()
    assert observation.url == f"{sites.origin}/landing.html" and "Landing page reached" in render(observation).text


@pytest.mark.slow
async def test_origin_policy_webrtc_cannot_reach_a_stun_or_turn_host(browser: Any, sites: Sites,
                                                                    listeners: Listeners) -> None:
    before = (listeners.packets, listeners.connections)
    await browser.act(Goto(url=f"{sites.origin}/rtc.html"))
    status = await _status(browser, wait_for="")
    await asyncio.sleep(3.0)  # ICE gathering would send its STUN binding requests within this time
    assert status.split() == ["page:no-rtc", "frame:no-rtc"]  # the API is gone, even from a new frame
    assert (listeners.packets, listeners.connections) == before


@pytest.mark.slow
async def test_origin_policy_webrtc_udp_is_off_by_launch_flags_alone(chromium_worker: Any, sites: Sites,
                                                                    listeners: Listeners) -> None:
    """Defence in depth: in a context without the policy's script, the launch flags still keep STUN (UDP)
    off; TURN over TCP is what the script's removal of the API stops."""
    context = await (await chromium_worker.browser()).new_context()
    try:
        page = await context.new_page()
        before = listeners.packets
        await page.goto(f"{sites.origin}/rtc.html")
        await page.wait_for_function("document.getElementById('s').textContent.includes('frame:')")
        await asyncio.sleep(3.0)
        assert "page:dialled" in (await page.text_content("#s") or "")  # the API is there without the script
        assert listeners.packets == before
    finally:
        await context.close()


@pytest.mark.slow
async def test_origin_policy_static_assets_refused_when_every_origin_is_local(browser: Any, sites: Sites) -> None:
    await browser.act(Goto(url=f"{sites.origin}/assets.html"))
    status = await _status(browser, wait_for="wait")
    deadline = time.monotonic() + 10
    while "import" not in status and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        status = await browser.page.text_content("#s") or ""
    assert status == "local script ran import refused"
    assert await browser.page.title() == "assets"  # the foreign script never ran
    for path in ("x.css", "f.woff", "x.js", "m.js"):
        assert f"{sites.foreign}/{path}" in browser.blocked_requests, path
    assert browser.policy.third_party_assets == [] and sites.foreign_hits() == []
