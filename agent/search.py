"""Web search for finding the official source: Serper when `SERPER_API_KEY` is set (the paper's setup),
else a search engine's HTML page through the task's own browser. Off unless the protocol enables it;
offline runs never use it."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from urllib.parse import quote_plus

import httpx

from browser.interface import Browser
from browser.types import Goto

SERPER_URL = "https://google.serper.dev/search"
BROWSER_SEARCH_URL = "https://html.duckduckgo.com/html/?q={query}"
MAX_RESULTS = 8

SearchFn = Callable[[str], Awaitable[list[dict[str, str]]]]


async def serper_search(query: str, api_key: str, *, timeout: float = 20.0) -> list[dict[str, str]]:
    async with httpx.AsyncClient(timeout=timeout) as client:
        response = await client.post(SERPER_URL, json={"q": query, "num": MAX_RESULTS},
                                     headers={"X-API-KEY": api_key, "Content-Type": "application/json"})
        response.raise_for_status()
    return [{"title": r.get("title", ""), "url": r.get("link", ""), "snippet": r.get("snippet", "")}
            for r in response.json().get("organic", [])[:MAX_RESULTS]]


async def browser_search(browser: Browser, query: str) -> list[dict[str, str]]:
    """The result page's external links; the browser's origin policy must allow the search engine."""
    result = await browser.act(Goto(url=BROWSER_SEARCH_URL.format(query=quote_plus(query))))
    observation = result.observation or await browser.observe()
    links = [link for link in observation.links if link.href.startswith("http") and "duckduckgo" not in link.href]
    return [{"title": link.text, "url": link.href, "snippet": ""} for link in links[:MAX_RESULTS]]


def make_search(browser: Browser) -> SearchFn:
    key = os.environ.get("SERPER_API_KEY")
    if key:
        return lambda query: serper_search(query, key)
    return lambda query: browser_search(browser, query)
