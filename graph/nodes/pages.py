"""Pages a read opens itself (`extract_rows` / `read_facts` with `url`, one URL or several in turn): each page is
opened through the browser and its retrieval state tracked as the state tracker tracks a navigation (a result list
it shows is recorded for the detail check, as after a `goto`), before the read is judged, so the read's gates
are checked on the page it read (not on the page the call was made from)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from browser.interface import BrowserError
from browser.types import ActionResult, BrowserAction, ReadPageFacts, ReadPdf
from graph.checks.listings import listing_of, opened_from
from graph.evidence.evidence_tables import WorkspaceError
from graph.evidence.fact_match import FactError
from graph.evidence.row_extraction import ExtractionError
from graph.evidence.workspace_tools import ECHO_CHARS, ReadContext, StaleRead, error_parts, error_text
from graph.model_io.robust import tool_reply
from graph.nodes.common import error_record
from graph.nodes.deps import Deps
from graph.nodes.state_tracker import tracked
from graph.plan.binding import plan_of
from graph.prompting.page_fence import compose
from graph.state import AgentState, DriftFlag

READ_BYTES = 10_000_000  # page documents one read opens (each already cut at the browser's per-page cap)


class PageReadError(ValueError):
    """The page could not be opened or read (policy, not found, timeout)."""


async def _act(deps: Deps, action: BrowserAction) -> ActionResult:
    try:
        result = await deps.browser.act(action)
    except BrowserError as exc:
        raise PageReadError(f"{exc.error_class}: {exc}") from exc
    if not result.ok:
        raise PageReadError(f"{result.error}: {result.message}")
    return result


async def read_facts_of(deps: Deps, url: str | None) -> ActionResult:
    """The page's labelled values and tables (`url`: opened first, policy applies)."""
    result = await _act(deps, ReadPageFacts(url=url))
    if result.facts is None:
        raise PageReadError(f"{result.error}: {result.message}")
    return result


@dataclass
class PageView:
    """The graph state as a read sees it, advanced page by page; `update` collects what the node returns (the
    last page's observation and state, every page visited, every new state in the history)."""

    state: dict[str, Any]
    update: dict[str, Any] = field(default_factory=dict)
    page_bytes: int = 0  # the page documents this read opened, as shown (`READ_BYTES`)

    def get(self, key: str, default: Any = None) -> Any:
        return self.state.get(key, default)

    def context(self, deps: Deps, *, provenance: bool) -> ReadContext:
        """What the read has in front of it on the page it is on."""
        return ReadContext(observation=self.get("observation") or {}, token_budget=deps.token_budget,
                           last_read=self.get("last_read"), retrieval=self.get("retrieval"),
                           drift_flags=self.get("drift_flags") or [], provenance=provenance, step=self.get("step", 0),
                           plan=plan_of(self.state),
                           history=self.get("history") or [])

    async def open(self, deps: Deps, url: str) -> ActionResult:
        """Open `url` for a read: the page's facts, its observation and retrieval state, drift flags as the
        tracker raises them on arrival (`graph.nodes.state_tracker.tracked`)."""
        result = await read_facts_of(deps, url)
        self.page_bytes += result.page_bytes
        if result.observation is None:
            return result
        step = self.state.get("step", 0)
        observation = result.observation.model_dump()
        changes: dict[str, Any] = {"observation": observation, "last_read": None,
                                   "last_action": ReadPageFacts(url=url).model_dump(),
                                   "last_result": result.model_dump(exclude={"observation", "facts"}),
                                   "navigated_at": step}
        visited = [*self.update.get("visited", []), observation["url"]]
        history = list(self.update.get("history", []))
        if "state_tracker" not in deps.ablated:
            found = tracked({**self.state, **changes})
            changes.update(retrieval=found["retrieval"], drift_flags=found["drift_flags"],
                           **({"bindings": found["bindings"]} if found.get("bindings") else {}))
            if found.get("drift_log"):
                self.update["drift_log"] = [*self.update.get("drift_log", []), *found["drift_log"]]
            if found.get("history"):
                history += found["history"]
                self.state = {**self.state, "history": [*(self.state.get("history") or []), *found["history"]]}
        self.state = {**self.state, **changes}
        self.update.update(changes, visited=visited, **({"history": history} if history else {}))
        if opened := opened_from(observation["url"], step, self.state.get("listings") or [],
                                 urljoin(observation["url"], url)):
            self.state["opened"] = [*(self.state.get("opened") or []), *opened]
            self.update["opened"] = [*self.update.get("opened", []), *opened]
        listing = listing_of(result.observation, result, step, self.state.get("listings") or [])
        if listing:
            self.state["listings"] = [*(self.state.get("listings") or []), listing]
            self.update["listings"] = [*self.update.get("listings", []), listing]
        return result

    def tables_written(self, tables: dict[str, Any]) -> None:
        self.state = {**self.state, "tables": {**(self.state.get("tables") or {}), **tables}}
        self.update["tables"] = {**self.update.get("tables", {}), **tables}


async def open_pdf(deps: Deps, view: PageView, url: str) -> None:
    """A PDF read for extract_rows(source=pdf, url=...): fetched (the page stays where it is) and held as the
    last read, its URL the rows' `_url`."""
    result = await _act(deps, ReadPdf(url=url))
    page_url = (view.get("observation") or {}).get("url", "")
    last_read = {"pdf_pages": [p.model_dump() for p in result.pdf_pages], "url": page_url,
                 "pdf_url": urljoin(page_url, url)}
    view.state = {**view.state, "last_read": last_read}
    view.update["last_read"] = last_read


def add_flags(view: PageView, flags: list[DriftFlag]) -> None:
    """Planned gates a read found at another value: active from now on (the tracker keeps them while the value
    stays wrong) and logged once, like the tracker's own flags."""
    active = view.get("drift_flags") or []
    known = {(f["rule"], f["gate"], f["path"]) for f in active}
    new = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
    if new:
        view.state = {**view.state, "drift_flags": [*active, *new]}
        view.update["drift_flags"] = view.state["drift_flags"]
        view.update["drift_log"] = [*view.update.get("drift_log", []), *new]


_READ_FAILURES = (ExtractionError, FactError, WorkspaceError, PageReadError)


async def read_each(deps: Deps, state: AgentState, urls: list[str | None],
                    read: Callable[[PageView, str | None], Awaitable[PageReply]], *, tool: str, event: dict[str, Any],
                    error_class: str, failure_notes: Callable[[PageView], list[str]] | None = None) -> dict[str, Any]:
    """A read on the current page (`None`) or on each page of `urls` in turn: a page that fails is said (with
    `failure_notes`, what the read's check found there) and the others kept, so one bad link does not lose the
    rest; the replies are one tool message. `event` is the node's log event a failure is logged under."""
    view = PageView(state=dict(state))
    replies: list[PageReply] = []
    failed: list[PageReply] = []
    for index, url in enumerate(urls):
        if url is not None and view.page_bytes >= READ_BYTES:  # a read of many huge pages stops here
            left = urls[index:]
            failed.append(PageReply(f"{tool}: {len(left)} page(s) not opened: this read's pages already sent "
                                    f"{view.page_bytes:,} bytes, its size cap is {READ_BYTES:,}; read them in "
                                    f"another call: {', '.join(page_label(u) for u in left if u)}"))
            break
        try:
            reply = await read(view, url)
        except _READ_FAILURES as exc:
            message, shown = error_parts(exc, view.get("tables") or {})
            deps.log.write({**event, "url": url, "error": error_text(exc, view.get("tables") or {}),
                            **({"stale": True} if isinstance(exc, StaleRead) else {})})
            notes = failure_notes(view) if failure_notes else []
            failed.append(PageReply(f"{tool} failed{f' on {url}' if url else ''}: {message}", notes, own=shown or ""))
            continue
        if url is not None and len(urls) > 1:
            reply.text = f"{page_label(url)}: {reply.text}"
        replies.append(reply)
    node = event["node"]
    text, own = join_replies([*replies, *failed])
    update: dict[str, Any] = {"pending": None, "nodes_run": [node], **view.update,
                              "messages": [tool_reply(text, state["pending"]["id"], own=own)]}
    if failed:
        update["errors"] = [error_record(state, node, "agent", error_class, join_replies([f])[0]) for f in failed]
    if replies:
        update["usage"] = {**state["usage"], "last_progress_at": deps.clock()}
    return update


def echo_budget(pages: int) -> int:
    """Characters of rows each page's reply shows: a call over many pages shares one reply's worth, a little
    of each page at least."""
    return ECHO_CHARS if pages <= 1 else max(ECHO_CHARS * 2 // pages, 160)


@dataclass
class PageReply:
    """One page's part of a read's reply: its text, and the read check's notes (`[gate] ...`), which a read over
    several pages says once: the same note on every page is the same fact."""

    text: str
    notes: list[str] = field(default_factory=list)
    own: str = ""  # the agent's own words after the text (an error's table schemas), never marked as page text


def join_replies(replies: list[PageReply]) -> tuple[str, list[int]]:
    """The replies of a read over several pages as one: each page's text (its row line starts with the page it
    was read on, path and query: the origin is the same), a note the same on every page said once; with the
    numbers of the lines that are the agent's own words (`page_fence.compose`)."""
    seen: set[str] = set()
    parts: list[tuple[str, bool]] = []
    for reply in replies:
        parts.append((reply.text, False))
        parts += [(reply.own, True)] if reply.own else []
        parts += [(note, False) for note in reply.notes if not (note in seen or seen.add(note))]
    return compose(parts)


def page_label(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")
