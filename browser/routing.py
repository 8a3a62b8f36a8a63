"""Serve live origins from local environments: the page asks for `https://arxiv.org/...`, the bytes come
from `http://127.0.0.1:8083/...`, and everything the agent sees keeps the live name.

Mechanism: Playwright request routing on the task's context, not Chromium's `--host-resolver-rules`.
Resolver rules only change which address a host name connects to; an `https://` page would then need
a TLS server with a certificate for the live name on the environment's port (the environments speak
plain HTTP on loopback), and the rules are fixed per browser launch, while one worker's browser serves
tasks of different datasets in fresh contexts. Routing is per context, works for any scheme pair, and
runs after the same origin policy as every other request:

- the allowed-origin policy is applied to the *live* names; mapped origins are the only ones left
  allowed (an unmapped live origin would reach the real internet, so it is refused and reported);
- a request to a mapped live origin is fetched from its environment (`route.fetch` to the new URL,
  redirects not followed) and fulfilled as the live response: a `Location` pointing at the
  environment is rewritten back to the live name, and so are environment addresses written into
  HTML/CSS/JS/JSON bodies, so links, redirects, form posts and downloads all stay on live names;
- Chromium does not route the hop after a fulfilled redirect (it would go to the real network), so a
  page navigation's redirect is answered with a tiny page (the redirect's cookies kept) that replaces
  itself with the live target, a new navigation that is routed again; sub-resource redirects are
  followed here hop by hop, each hop checked by the policy;
- request `Origin`/`Referer` are rewritten to the environment's origin (the environment sees itself);
- WebSockets to mapped origins are refused (the environments do not use them; a socket cannot be
  re-pointed by a route without leaving the policy);
- third-party static assets (CDN scripts, styles, fonts) are refused: the environments serve whole sites.

`context.request` fetches (the browser layer's PDF/CSV reads) do not pass through routes; `get` does
the same mapping for them.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from playwright.async_api import APIResponse, BrowserContext, Route, WebSocketRoute
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browser.policy import BlockedRequest, OriginPolicy, fetch_resending_on_reset

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_TEXT_TYPES = re.compile(r"text/|javascript|json|xml|ecmascript", re.I)
_REWRITE_MAX_BYTES = 20_000_000
_HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "upgrade"}
_DROPPED_RESPONSE_HEADERS = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
_MAX_HOPS = 8


class RoutingError(ValueError):
    """A mapping entry that is not an origin; the message names the entry."""


def canonical_origin(value: str) -> str:
    """`scheme://host[:port]` in lower case without a default port; refuses paths, queries and credentials."""
    text = value.strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RoutingError(f"{value!r} is not an http(s) origin such as https://arxiv.org")
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        raise RoutingError(f"{value!r} must be an origin only (scheme://host[:port]), without path or credentials")
    try:
        port = parts.port
    except ValueError as exc:
        raise RoutingError(f"{value!r}: bad port") from exc
    host = parts.hostname.lower()
    netloc = host if port in (None, _DEFAULT_PORTS[parts.scheme]) else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}"


def origin_key(url: str) -> str | None:
    """The canonical origin of any http(s)/ws(s) URL (ws maps to http), or None for other schemes."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname.lower()
    return f"{scheme}://{host if port in (None, _DEFAULT_PORTS[scheme]) else f'{host}:{port}'}"


@dataclass(frozen=True)
class OriginMap:
    """Live origin -> environment origin. Several live origins may share one environment (a site's
    subdomains); the reverse direction always uses the live origin the request was made to."""

    pairs: Mapping[str, str]

    @classmethod
    def build(cls, pairs: Mapping[str, str]) -> OriginMap:
        built: dict[str, str] = {}
        for live, environment in pairs.items():
            key, target = canonical_origin(live), canonical_origin(environment)
            if key == target:
                raise RoutingError(f"{live!r} is mapped to itself")
            if built.get(key, target) != target:
                raise RoutingError(f"{key} is mapped to both {built[key]} and {target}")
            built[key] = target
        return cls(dict(sorted(built.items())))

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def merged(self, other: OriginMap) -> OriginMap:
        """Both maps in one; a live origin sent to two different environments is an error."""
        for key, target in other.pairs.items():
            if self.pairs.get(key, target) != target:
                raise RoutingError(f"{key} is mapped to both {self.pairs[key]} and {target}")
        return OriginMap({**self.pairs, **other.pairs})

    def environment_for(self, url: str) -> str | None:
        key = origin_key(url)
        return self.pairs.get(key) if key else None

    def maps(self, url: str) -> bool:
        return self.environment_for(url) is not None

    def to_environment(self, url: str) -> str:
        """The environment URL serving a live URL (unchanged when the URL is not mapped)."""
        environment = self.environment_for(url)
        if environment is None:
            return url
        parts = urlsplit(url)
        target = urlsplit(environment)
        return urlunsplit((target.scheme, target.netloc, parts.path or "/", parts.query, ""))

    def to_live(self, url: str, live_origin: str) -> str:
        """An absolute URL on the environment serving `live_origin`, written back on `live_origin`."""
        live = origin_key(live_origin)
        environment = self.pairs.get(live) if live else None
        if environment is None or origin_key(url) != environment:
            return url
        parts = urlsplit(url)
        target = urlsplit(live)
        return urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))


@dataclass
class EnvironmentFailure:
    """The environment behind a live URL did not answer (it is down, or too slow)."""

    url: str
    environment_url: str
    error: str
    at: float


@dataclass
class EnvironmentRouter:
    """Installs the mapping on a task context, after (and therefore in front of) the origin policy."""

    origins: OriginMap
    policy: OriginPolicy
    unmapped_allowed: list[str] = field(default_factory=list)
    failures: list[EnvironmentFailure] = field(default_factory=list)
    served: int = 0
    _noted: int = 0

    def __post_init__(self) -> None:
        """Only mapped live origins stay allowed: anything else would leave the offline environment."""
        dropped = sorted(o for o in self.policy.allowed_origins if not self.origins.maps(o))
        self.policy.allowed_origins.difference_update(dropped)
        self.unmapped_allowed = dropped
        self.policy.static_assets = False  # the environments serve the whole site: no third-party CDN is needed

    async def install(self, context: BrowserContext) -> None:
        # Routes registered later run first; unmapped URLs fall back to the policy's own handler.
        def mapped(url: str) -> bool:  # a plain function: Playwright tags the matcher it is given
            return self.origins.maps(url)

        await context.route(mapped, self._route)
        await context.route_web_socket(mapped, self._refuse_socket)

    async def _route(self, route: Route) -> None:
        request = route.request
        if not self.policy.request_allowed(request.url):
            await route.fallback()  # the policy refuses and records it
            return
        navigation = request.is_navigation_request()
        headers = self._request_headers(await request.all_headers())
        url, method, post_data = request.url, request.method, request.post_data_buffer
        for _hop in range(_MAX_HOPS):
            fetched = await self._fetch(route, url, headers, method, post_data)
            if fetched is None:
                return
            response, live_headers, location = fetched
            try:
                if location and not self.policy.request_allowed(location):
                    self.policy.blocked.append(BlockedRequest(location, request.resource_type, navigation,
                                                              time.time()))
                    await route.abort("blockedbyclient")
                    return
                if location and navigation:
                    # Chromium does not route the hop after a fulfilled redirect (it would go to the real
                    # network), so the page is sent on with a new navigation that is routed again.
                    await self.policy.fulfill_redirect(route, live_headers, location)
                    return
                if location and self.origins.maps(location):
                    url, method, post_data = location, "GET", None  # sub-resources: follow hop by hop
                    continue
                body = self._rewrite_body(await response.body(), live_headers.get("content-type", ""), url)
                if navigation:
                    body = self.policy.page_body(url, body)
                self.served += 1
                await route.fulfill(status=response.status, headers=live_headers, body=body)
                return
            finally:
                await response.dispose()
        await route.abort("failed")

    async def _fetch(self, route: Route, live_url: str, headers: dict[str, str], method: str,
                     post_data: bytes | None) -> tuple[APIResponse, dict[str, str], str | None] | None:
        environment_url = self.origins.to_environment(live_url)
        try:
            response = await fetch_resending_on_reset(route, url=environment_url, headers=headers, method=method,
                                                      post_data=post_data, max_redirects=0,
                                                      timeout=self.policy.fetch_timeout_ms)
        except PlaywrightError as exc:
            self.failures.append(EnvironmentFailure(live_url, environment_url, str(exc).splitlines()[0],
                                                    time.time()))
            with contextlib.suppress(PlaywrightError):
                await route.abort("timedout" if isinstance(exc, PlaywrightTimeout) else "connectionrefused")
            return None
        live_headers, location = self.response_headers(response, live_url)
        return response, live_headers, location

    def take_failure_notices(self) -> list[str]:
        """One notice per environment that failed since the last call (the agent reads it as a page event)."""
        fresh, self._noted = self.failures[self._noted:], len(self.failures)
        by_origin = {origin_key(f.url): f for f in fresh}
        return [f"the local environment serving {origin} did not answer ({failure.error})"
                for origin, failure in by_origin.items()]

    async def _refuse_socket(self, socket: WebSocketRoute) -> None:
        self.policy.blocked.append(BlockedRequest(socket.url, "websocket", False, time.time()))
        await socket.close(code=1008, reason="refused: WebSockets are not mapped to the environment")

    def _request_headers(self, headers: dict[str, str]) -> dict[str, str]:
        out = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
        for name in ("origin", "referer"):
            if name in out and out[name] != "null":
                out[name] = self.origins.to_environment(out[name]) if name == "referer" \
                    else (self.origins.environment_for(out[name]) or out[name])
        return out

    def response_headers(self, response: APIResponse, live_url: str) -> tuple[dict[str, str], str | None]:
        """Response headers for the live page, and the absolute live target of a redirect (if any)."""
        live_origin = origin_key(live_url) or ""
        headers: dict[str, str] = {}
        for item in response.headers_array:
            name = item["name"].lower()
            if name in _DROPPED_RESPONSE_HEADERS:
                continue
            value = item["value"]
            if name == "location":
                value = self.origins.to_live(urljoin(self.origins.to_environment(live_url), value), live_origin)
            # Several Set-Cookie headers travel as one value joined by newlines (Playwright's convention).
            headers[name] = f"{headers[name]}\n{value}" if name == "set-cookie" and name in headers else value
        location = headers.get("location")
        return headers, (urljoin(live_url, location) if location and 300 <= response.status < 400 else None)

    def _rewrite_body(self, body: bytes, content_type: str, live_url: str) -> bytes:
        """Environment addresses written into text bodies become the live origin the page was asked at."""
        live_origin = origin_key(live_url)
        environment = self.origins.pairs.get(live_origin) if live_origin else None
        if not environment or not _TEXT_TYPES.search(content_type) or len(body) > _REWRITE_MAX_BYTES:
            return body
        needles = {environment.encode(): live_origin.encode(),
                   environment.replace("/", "\\/").encode(): live_origin.replace("/", "\\/").encode()}
        for needle, replacement in needles.items():
            body = body.replace(needle, replacement)
        return body

    async def get(self, context: BrowserContext, url: str, timeout_ms: float) -> tuple[APIResponse, str | None]:
        """GET a live URL from its environment through the context's request client (which routes do
        not see), with the page's cookies for the live name; returns the response and a live redirect."""
        cookies = await context.cookies(url)
        headers = {"cookie": "; ".join(f"{c['name']}={c['value']}" for c in cookies)} if cookies else {}
        response = await context.request.get(self.origins.to_environment(url), headers=headers, max_redirects=0,
                                             timeout=timeout_ms)
        _, location = self.response_headers(response, url)
        return response, location
