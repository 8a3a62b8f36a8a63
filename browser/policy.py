"""What a task's browser may touch: allowed origins, refused schemes, and caps on what it reads.

Requests to other origins are aborted at the context's router (not silently followed) and kept in
`blocked`, so a run can report exactly what the page tried to reach.

Third-party static assets (decision, issue 13): real pages load their scripts, stylesheets and fonts
from CDNs (jQuery, framework bundles, the CSS that shows or hides a form's fields). Refusing them left
forms without behaviour and changed what is visible, so observations of real pages differed from what
a person sees. They are allowed, GET only, and listed in `third_party_assets`. Everything that can bring
data or take the agent elsewhere stays refused: navigations, XHR/fetch, images and media (pixels and
beacons), WebSockets, and any other scheme. `static_assets=False` restores the strict rule.
"""

from __future__ import annotations

import contextlib
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


class BrowserLimits(BaseModel):
    """Caps on everything the browser reads, so one hostile or huge page cannot blow a task's budget."""

    model_config = ConfigDict(extra="forbid")

    download_bytes: int = Field(20_000_000, gt=0, description="Largest download or fetched PDF, in bytes.")
    pdf_pages: int = Field(50, gt=0, description="Most PDF pages read per read_pdf.")
    table_rows: int = Field(2_000, gt=0, description="Most rows read_table/download return.")
    table_pages: int = Field(100, gt=0, description="Most pagination pages read_table follows.")
    text_chars: int = Field(100_000, gt=0, description="Most characters of document text one read returns (PDF).")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass
class BlockedRequest:
    url: str
    resource_type: str
    navigation: bool
    at: float


@dataclass
class OriginPolicy:
    """Allowed origins (scheme://host:port); anything else over http(s) is refused, and so is every
    other scheme, except data:/blob:/about: sub-resources that pages build in memory."""

    allowed_origins: set[str]
    blocked: list[BlockedRequest] = field(default_factory=list)
    fetch_timeout_ms: float = 30_000
    static_assets: bool = True
    third_party_assets: list[str] = field(default_factory=list)

    @classmethod
    def for_task(cls, allowed: list[str], start_url: str | None = None) -> OriginPolicy:
        origins = {origin_of(url) for url in allowed if url}
        if start_url:
            origins.add(origin_of(start_url))
        return cls(origins)

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
        elif request.is_navigation_request() and urlsplit(request.url).scheme in ("http", "https"):
            await self._navigate_checking_redirect(route)
        else:
            await route.fallback()

    async def _navigate_checking_redirect(self, route: Route) -> None:
        """Chromium follows redirects without routing them again, so a navigation is fetched here
        without following its redirect, and a redirect to a refused origin is stopped at that hop."""
        try:
            response = await fetch_resending_on_reset(route, max_redirects=0, timeout=self.fetch_timeout_ms)
        except PlaywrightError as exc:  # the page sees a failed load; the action reports the timeout
            with contextlib.suppress(PlaywrightError):
                await route.abort("timedout" if isinstance(exc, PlaywrightTimeout) else "failed")
            return
        location = response.headers.get("location")
        if 300 <= response.status < 400 and location:
            target = urljoin(route.request.url, location)
            if not self.request_allowed(target):
                await self._refuse(route, target)
                return
        await route.fulfill(response=response)

    async def _refuse(self, route: Route, url: str) -> None:
        request = route.request
        self.blocked.append(BlockedRequest(url, request.resource_type, request.is_navigation_request(), time.time()))
        await route.abort("blockedbyclient")


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
