"""What a task's browser may touch: allowed origins, refused schemes, and caps on what it reads.

Requests to other origins are aborted at the context's router (not silently followed) and kept in
`blocked`, so a run can report exactly what the page tried to reach.

Every hop is checked (issue 21): Chromium does not route the hops of a redirect, so nothing allowed is
left to Chromium's own redirect handling. A sub-resource (fetch/XHR, image, script, ...) is fetched here
hop by hop, each `Location` checked, and fulfilled with the final response; a page navigation that
redirects is answered with a tiny page that navigates on to the checked target, a new navigation that is
routed (and checked) again. WebRTC cannot be routed at all (its STUN/TURN traffic bypasses the network
stack Playwright intercepts): Chromium is launched with UDP off for WebRTC (`browser.launch`) and every
frame loses the WebRTC constructors (`NO_WEBRTC_SCRIPT`), which also stops TURN over TCP.

Third-party static assets (decision, issue 13): real pages load their scripts, stylesheets and fonts
from CDNs (jQuery, framework bundles, the CSS that shows or hides a form's fields). Refusing them left
forms without behaviour and changed what is visible, so observations of real pages differed from what
a person sees. They are allowed, GET only, and listed in `third_party_assets`. Everything that can bring
data or take the agent elsewhere stays refused: navigations, XHR/fetch, images and media (pixels and
beacons), WebSockets, and any other scheme. `static_assets=False` restores the strict rule, and it is the
rule for a task whose every allowed origin is on this machine (the offline suite, a local mirror) or is
served by local environments (SGR-WebEnv, `browser.routing`): such a world needs nothing from outside.
"""

from __future__ import annotations

import contextlib
import html
import ipaddress
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from playwright.async_api import APIResponse, BrowserContext, Route, WebSocketRoute
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import BaseModel, ConfigDict, Field

# Schemes a page may use internally without touching the network; never valid navigation targets.
_INTERNAL_SCHEMES = {"data", "blob", "about"}
# Resource types a page may load from any http(s) origin (see the module docstring).
STATIC_ASSET_TYPES = frozenset({"script", "stylesheet", "font"})
MAX_HOPS = 8
_METHOD_TO_GET = {301, 302, 303}  # a redirect that turns the request into a GET (307/308 keep it)

# Every frame, before any page script: WebRTC's constructors are removed (also from frames a script reaches
# through `contentWindow` before this script ran in them), so no page can open STUN/TURN connections.
NO_WEBRTC_SCRIPT = """(() => {
  const names = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceCandidate",
                 "RTCSessionDescription", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver",
                 "RTCDtlsTransport", "RTCIceTransport", "RTCSctpTransport", "RTCCertificate", "RTCEncodedAudioFrame",
                 "RTCEncodedVideoFrame", "RTCError", "RTCErrorEvent", "RTCPeerConnectionIceEvent",
                 "RTCDataChannelEvent", "RTCTrackEvent", "RTCDTMFSender", "RTCStatsReport"];
  const strip = (w) => {
    try { for (const n of names) { try { delete w[n]; } catch (e) {} if (n in w) { try {
      Object.defineProperty(w, n, {value: undefined, configurable: false, writable: false}); } catch (e) {} } }
    } catch (e) {}
    return w;
  };
  strip(window);
  for (const [proto, prop] of [[HTMLIFrameElement.prototype, "contentWindow"],
                               [HTMLFrameElement.prototype, "contentWindow"],
                               [HTMLObjectElement.prototype, "contentWindow"]]) {
    const d = Object.getOwnPropertyDescriptor(proto, prop);
    if (d && d.get) Object.defineProperty(proto, prop, {configurable: false, enumerable: d.enumerable,
      get() { const w = d.get.call(this); return w ? strip(w) : w; }});
  }
  const open = window.open;
  if (open) window.open = function (...args) { const w = open.apply(this, args); return w ? strip(w) : w; };
})();"""


class BrowserLimits(BaseModel):
    """Caps on everything the browser reads, so one hostile or huge page cannot blow a task's budget."""

    model_config = ConfigDict(extra="forbid")

    download_bytes: int = Field(20_000_000, gt=0, description="Largest download or fetched PDF, in bytes.")
    pdf_pages: int = Field(50, gt=0, description="Most PDF pages read per read_pdf.")
    table_rows: int = Field(2_000, gt=0, description="Most rows read_table/download return.")
    table_pages: int = Field(100, gt=0, description="Most pagination pages read_table follows.")
    text_chars: int = Field(100_000, gt=0, description="Most characters of document text one read returns (PDF).")
    page_bytes: int = Field(3_000_000, gt=0, description="Largest page document shown, in bytes: a longer one is "
                                                         "cut there, and the observation and the action say so.")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def is_local_origin(origin: str) -> bool:
    """An origin served from this machine: `localhost` or a loopback address."""
    host = (urlsplit(origin).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def hop_headers(headers: dict[str, str]) -> dict[str, str]:
    """A redirect's own headers (its cookies above all), minus what describes the redirect itself."""
    kept = {k: v for k, v in headers.items() if k.lower() not in ("location", "content-type", "content-disposition",
                                                                  "content-length", "content-encoding")}
    return {**kept, "content-type": "text/html; charset=utf-8", "cache-control": "no-store"}


def hop_page(location: str) -> bytes:
    """The answer to a page navigation that redirects: a page that navigates on to `location` itself, a new
    navigation that is routed (and checked) again; Chromium would follow a fulfilled redirect unrouted."""
    target = html.escape(location, quote=True)
    return (f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
            f"<script>location.replace({json.dumps(location)})</script>").encode()


@dataclass
class BlockedRequest:
    url: str
    resource_type: str
    navigation: bool  # of the page itself (a refused sub-frame is not: its parent page opened)
    at: float


MAX_REDIRECTS = 20  # page redirects in one chain, as Chromium's own cap: past it the chain is a loop


@dataclass
class RedirectLoop:
    start: str  # the URL the chain started at
    hops: int
    last: str  # the hop it was stopped at


@dataclass(frozen=True)
class PolicyMark:
    """Where the policy's records stood before an action: what the action added is what came after."""

    blocked: int
    cuts: int
    document_bytes: int
    loops: int


@dataclass
class CutPage:
    url: str
    sent: int  # bytes the server sent
    kept: int


@dataclass
class OriginPolicy:
    """Allowed origins (scheme://host:port); anything else over http(s) is refused, and so is every
    other scheme, except data:/blob:/about: sub-resources that pages build in memory."""

    allowed_origins: set[str]
    blocked: list[BlockedRequest] = field(default_factory=list)
    fetch_timeout_ms: float = 30_000
    static_assets: bool = True
    third_party_assets: list[str] = field(default_factory=list)
    page_bytes: int = BrowserLimits().page_bytes
    cut_pages: list[CutPage] = field(default_factory=list)
    document_bytes: int = 0  # every page document shown so far, as shown (a running count: callers take deltas)
    redirect_loops: list[RedirectLoop] = field(default_factory=list)
    _chain: list[str] = field(default_factory=list)  # the page redirects followed since the last page shown

    @classmethod
    def for_task(cls, allowed: list[str], start_url: str | None = None) -> OriginPolicy:
        """Third-party static assets are refused when every allowed origin is on this machine."""
        origins = {origin_of(url) for url in allowed if url}
        if start_url:
            origins.add(origin_of(start_url))
        return cls(origins, static_assets=not origins or not all(is_local_origin(o) for o in origins))

    def allow(self, url: str) -> None:
        self.allowed_origins.add(origin_of(url))

    def navigation_refusal(self, url: str) -> str | None:
        """Why a navigation to `url` is refused, or None when it is allowed."""
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            return f"scheme {scheme or '(none)'}: is not allowed; only http(s) pages of the allowed origins"
        if origin_of(url) not in self.allowed_origins:
            return f"{origin_of(url)} is not an allowed origin (allowed: {', '.join(sorted(self.allowed_origins))})"
        return None

    def request_allowed(self, url: str) -> bool:
        scheme = urlsplit(url).scheme.lower()
        if scheme in _INTERNAL_SCHEMES:
            return True
        return self.navigation_refusal(url) is None

    async def install(self, context: BrowserContext) -> None:
        await context.add_init_script(NO_WEBRTC_SCRIPT)
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(".*"), self._route_web_socket)

    async def _route_web_socket(self, socket: WebSocketRoute) -> None:
        """WebSockets bypass `context.route`; an unconnected route keeps a refused socket off the network."""
        parts = urlsplit(socket.url)
        http_url = urlunsplit(parts._replace(scheme={"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)))
        if self.request_allowed(http_url):
            socket.connect_to_server()
            return
        self.blocked.append(BlockedRequest(socket.url, "websocket", False, time.time()))
        await socket.close(code=1008, reason="refused by policy")

    def static_asset_allowed(self, url: str, resource_type: str, method: str, navigation: bool) -> bool:
        """A script, stylesheet or font from another http(s) origin, fetched with GET, not as a page."""
        return (self.static_assets and resource_type in STATIC_ASSET_TYPES and method == "GET" and not navigation
                and urlsplit(url).scheme.lower() in ("http", "https"))

    async def _route(self, route: Route) -> None:
        request = route.request
        if not self.request_allowed(request.url):
            if self.static_asset_allowed(request.url, request.resource_type, request.method,
                                         request.is_navigation_request()):
                self.third_party_assets.append(request.url)
                await route.fallback()
                return
            await self._refuse(route, request.url)
        elif urlsplit(request.url).scheme.lower() not in ("http", "https"):
            await route.fallback()  # data:/blob:/about: built in memory
        elif request.is_navigation_request():
            await self._navigate_checking_redirect(route)
        else:
            await self._fetch_checking_every_hop(route)

    async def _fetch(self, route: Route, **options: Any) -> APIResponse | None:
        """One hop, redirects not followed; None when it failed (the route is then aborted)."""
        try:
            return await fetch_resending_on_reset(route, max_redirects=0, timeout=self.fetch_timeout_ms, **options)
        except PlaywrightError as exc:  # the page sees a failed load; the action reports the timeout
            with contextlib.suppress(PlaywrightError):
                await route.abort("timedout" if isinstance(exc, PlaywrightTimeout) else "failed")
            return None

    async def _navigate_checking_redirect(self, route: Route) -> None:
        """A page navigation: a redirect to a refused origin is stopped at that hop; one to an allowed origin
        is answered with `hop_page`, so the next hop is a new navigation, routed and checked again."""
        response = await self._fetch(route)
        if response is None:
            return
        location = response.headers.get("location")
        if 300 <= response.status < 400 and location:
            target = urljoin(route.request.url, location)
            await response.dispose()
            if not self.request_allowed(target) or urlsplit(target).scheme.lower() not in ("http", "https"):
                await self._refuse(route, target)
                return
            await self.fulfill_redirect(route, response.headers, target)
            return
        body = await response.body()
        shown = self.page_body(route.request.url, body)
        if shown is body:
            await route.fulfill(response=response)
        else:
            await route.fulfill(status=response.status, headers=_body_headers(response.headers), body=shown)

    async def fulfill_redirect(self, route: Route, headers: dict[str, str], target: str) -> None:
        """A page navigation's redirect to an allowed `target`: answered with `hop_page` (the next hop is a new
        navigation, routed again), counted in its chain; past MAX_REDIRECTS the chain is a loop, recorded and
        ended with a page saying so (Chromium's own count never sees these hops)."""
        url = route.request.url
        if not self._chain or self._chain[-1] != url:
            self._chain = [url]
        self._chain.append(target)
        if len(self._chain) - 1 <= MAX_REDIRECTS:
            await route.fulfill(status=200, headers=hop_headers(headers), body=hop_page(target))
            return
        self.redirect_loops.append(RedirectLoop(self._chain[0], len(self._chain) - 1, target))
        self._chain = []
        await route.fulfill(status=508, headers={"content-type": "text/html; charset=utf-8"},
                            body=b"<!doctype html><title>Redirect loop</title><h1>Redirect loop stopped</h1>")

    def mark(self) -> PolicyMark:
        return PolicyMark(len(self.blocked), len(self.cut_pages), self.document_bytes, len(self.redirect_loops))

    def cut_note(self, mark: PolicyMark) -> str:
        """What an action's reply says of the pages cut at the per-page cap since `mark` ('' if none)."""
        return "".join(f"; the page was cut at {cut.kept:,} of its {cut.sent:,} bytes (the per-page size cap)"
                       for cut in self.cut_pages[mark.cuts:])

    def loop_message(self, since: int) -> str | None:
        """What a redirect loop stopped since `since` (an index in `redirect_loops`) says, or None."""
        if len(self.redirect_loops) <= since:
            return None
        loop = self.redirect_loops[-1]
        return (f"{loop.start} redirects in a loop: stopped after {loop.hops} redirects (at {loop.last}); "
                "open another page")

    def page_body(self, url: str, body: bytes) -> bytes:
        """A page document as shown: cut at `page_bytes` (recorded: the observation and the action say so), and
        counted in `document_bytes`."""
        if len(body) > self.page_bytes:
            self.cut_pages.append(CutPage(url, len(body), self.page_bytes))
            body = body[:self.page_bytes]
        self.document_bytes += len(body)
        self._chain = []  # a page shown ends a chain of redirects
        return body

    async def _fetch_checking_every_hop(self, route: Route) -> None:
        """A sub-resource (fetch/XHR, image, script, ...): its redirects are followed here, each hop checked
        before it is requested, and the final response is fulfilled (or the route refused at the bad hop)."""
        request = route.request
        url, method, post_data = request.url, request.method, request.post_data_buffer
        options: dict[str, Any] = {}
        for _hop in range(MAX_HOPS):
            response = await self._fetch(route, **options)
            if response is None:
                return
            location = response.headers.get("location")
            if not (300 <= response.status < 400 and location):
                await route.fulfill(response=response)
                return
            target = urljoin(url, location)
            await response.dispose()
            if not self.request_allowed(target) or urlsplit(target).scheme.lower() not in ("http", "https"):
                await self._refuse(route, target)
                return
            if response.status in _METHOD_TO_GET and method != "HEAD":
                method, post_data = "GET", None
            url = target
            options = {"url": url, "method": method, "post_data": post_data}
        await route.abort("failed")  # too many redirects

    async def _refuse(self, route: Route, url: str) -> None:
        request = route.request
        self.blocked.append(BlockedRequest(url, request.resource_type, _page_navigation(request), time.time()))
        await route.abort("blockedbyclient")


def _body_headers(headers: dict[str, str]) -> dict[str, str]:
    """A response's headers for a body sent anew (decoded, maybe cut): its length and encoding are not these."""
    return {k: v for k, v in headers.items() if k.lower() not in ("content-length", "content-encoding",
                                                                  "transfer-encoding")}


def cut_notice(cut: CutPage) -> str:
    """What a page cut at the per-page cap says, in its observation and in the action's reply."""
    return (f"page cut: {cut.url} sent {cut.sent:,} bytes; only the first {cut.kept:,} are shown (the per-page "
            "size cap): narrow it (filters, a smaller page size) or read another page")


def _page_navigation(request: Any) -> bool:
    """A navigation of the page itself: a foreign `<iframe>` is a navigation request too, but refusing it is a
    blocked request of a page that opened, not a failed navigation (issue 29)."""
    if not request.is_navigation_request():
        return False
    try:
        return request.frame.parent_frame is None
    except PlaywrightError:  # no frame (a service worker's request)
        return True


_DROPPED_CONNECTION = ("econnreset", "socket hang up", "epipe")


async def fetch_resending_on_reset(route: Route, **options: Any) -> APIResponse:
    """`route.fetch`, sent once more when the server dropped a kept-alive connection under it.

    A server closes an idle connection when its keep-alive time runs out (5 s is a common default); a
    request that leaves on that socket at the same moment fails before the server read it. Chromium's own
    network stack resends such a request; `route.fetch` does not, so a form POST or a page load failed at
    random (seen on a POST 5.03 s after the previous response). Timeouts and refusals are not resent."""
    try:
        return await route.fetch(**options)
    except PlaywrightError as exc:
        if isinstance(exc, PlaywrightTimeout) or not any(m in str(exc).lower() for m in _DROPPED_CONNECTION):
            raise
    return await route.fetch(**options)
