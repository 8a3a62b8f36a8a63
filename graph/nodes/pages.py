"""Pages a read opens itself (`extract_rows` / `read_facts` with `url`, one URL or several in turn): each page is
opened through the browser and its retrieval state tracked as the state tracker tracks a navigation (a result list
it shows is recorded for the detail check, as after a `goto`), before the read is judged, so the read's gates
are checked on the page it read (not on the page the call was made from).

`PageView` is the graph state as the read sees it, advanced page by page; `update` is what the node returns
(the last page's observation and state, every page visited, every new state in the history)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from browser.interface import BrowserError
from browser.types import ActionResult, ReadPageFacts, ReadPdf
from graph.listings import listing_of
from graph.nodes.deps import Deps
from graph.nodes.state_tracker import current_phase
from graph.state import AgentState, DriftFlag, Plan
from graph.tracker import track
from graph.workspace_tools import ECHO_CHARS


class PageReadError(ValueError):
    """The page could not be opened or read (policy, not found, timeout)."""


async def read_facts_of(deps: Deps, url: str | None) -> ActionResult:
    """The page's labelled values and tables (`url`: opened first, policy applies)."""
    try:
        result = await deps.browser.act(ReadPageFacts(url=url))
    except BrowserError as exc:
        raise PageReadError(f"{exc.error_class}: {exc}") from exc
    if not result.ok or result.facts is None:
        raise PageReadError(f"{result.error}: {result.message}")
    return result


@dataclass
class PageView:
    """The state a read sees, page after page; `update` collects what the node returns."""

    state: dict[str, Any]
    update: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.state.get(key, default)

    async def open(self, deps: Deps, url: str) -> ActionResult:
        """Open `url` for a read: the page's facts, its observation and retrieval state, drift flags as the
        tracker raises them on arrival."""
        result = await read_facts_of(deps, url)
        if result.observation is None:
            return result
        step = self.state.get("step", 0)
        action = ReadPageFacts(url=url).model_dump()
        plan = Plan.model_validate(self.state["plan"]) if self.state.get("plan") else None
        observation = result.observation.model_dump()
        changes: dict[str, Any] = {"observation": observation, "last_read": None, "last_action": action,
                                   "last_result": result.model_dump(exclude={"observation", "facts"}),
                                   "navigated_at": step}
        visited = [*self.update.get("visited", []), observation["url"]]
        history = list(self.update.get("history", []))
        if "state_tracker" not in deps.ablated:
            previous = self.state.get("retrieval")
            retrieval, flags = track(obs=result.observation, step=step, action=action,
                                     result=ActionResult.model_validate(changes["last_result"]), previous=previous,
                                     history=self.state.get("history") or [],
                                     active_flags=self.state.get("drift_flags") or [], plan=plan,
                                     phase=current_phase(plan, self.state.get("tables") or {}))
            known = {(f["rule"], f["gate"], f["path"]) for f in self.state.get("drift_flags") or []}
            new = [f for f in flags if (f["rule"], f["gate"], f["path"]) not in known]
            changes.update(retrieval=retrieval, drift_flags=flags)
            if new:
                self.update["drift_log"] = [*self.update.get("drift_log", []), *new]
            if previous is None or _key(previous) != _key(retrieval):
                history.append(retrieval)
                self.state = {**self.state, "history": [*(self.state.get("history") or []), retrieval]}
        self.state = {**self.state, **changes}
        self.update.update(changes, visited=visited, **({"history": history} if history else {}))
        listing = listing_of(result.observation, result, step)
        if listing and listing["url"] not in {item["url"] for item in self.state.get("listings") or []}:
            self.state["listings"] = [*(self.state.get("listings") or []), listing]  # recorded once per URL
            self.update["listings"] = [*self.update.get("listings", []), listing]
        return result

    def tables_written(self, tables: dict[str, Any]) -> None:
        self.state = {**self.state, "tables": {**(self.state.get("tables") or {}), **tables}}
        self.update["tables"] = {**self.update.get("tables", {}), **tables}


async def open_pdf(deps: Deps, view: PageView, url: str) -> None:
    """A PDF read for extract_rows(source=pdf, url=...): fetched (the page stays where it is) and held as the
    last read, its URL the rows' `_url`."""
    try:
        result = await deps.browser.act(ReadPdf(url=url))
    except BrowserError as exc:
        raise PageReadError(f"{exc.error_class}: {exc}") from exc
    if not result.ok:
        raise PageReadError(f"{result.error}: {result.message}")
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


def join_replies(replies: list[PageReply]) -> str:
    """The replies of a read over several pages as one: each page's text (its row line starts with the page it
    was read on, path and query: the origin is the same), a note the same on every page said once."""
    seen: set[str] = set()
    lines: list[str] = []
    for reply in replies:
        lines.append(reply.text)
        lines += [note for note in reply.notes if not (note in seen or seen.add(note))]
    return "\n".join(lines)


def page_label(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _key(state: Any) -> tuple:
    return state["url"], state["page"], tuple(sorted((k, v["value"]) for k, v in state["values"].items()))


def view_of(state: AgentState) -> PageView:
    return PageView(state=dict(state))
