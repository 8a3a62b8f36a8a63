"""One row per tool the actor knows: the node that runs it, its one line for the model and when it is offered.

A browser action's kind, model and effect are the browser's (`browser.types.ACTION_SPECS`); this table adds what
only the graph knows, keyed by the same kinds (tests/test_action_specs.py checks that both cover the same ones).
The tool list and its schemas (graph/tool_schemas.py), the routing (graph/build.py) and the offering (graph/offers.py)
are read from it. Offering rules read a `Situation`: typed data built from the state, never the page's text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from browser.types import ACTION_SPECS, Observation
from graph.agent_tools import Derive, DiscardRows, ExtractRows, Finish, ReadFacts, RevisePlan, WebSearch

# executor: the browser (or the search backend); extractor / workspace: rows into tables; finish: the verifier
# (or the composer when it is off); actor: answered by the actor itself (bookkeeping, no other node)
Node = Literal["executor", "extractor", "workspace", "finish", "actor"]
# "source": reads what rows are extracted from (a table, a file, a PDF: the executor's `last_read`);
# "rows": puts rows into a named table (`into`)
Evidence = Literal["source", "rows"]
DOWNLOADABLE = (".csv", ".tsv", ".xlsx", ".xls", ".json", "download", "export", "format=")


@dataclass(frozen=True)
class Situation:
    """What decides the tools offered at a turn (graph/offers.py builds it from the state)."""

    page: Observation | None  # None before the first page
    left_out: frozenset[str] = frozenset()  # reads the page's text names for what it left out
    shown_before: bool = False  # the page is shown as a delta: its option lists and outline text left out
    last_read: bool = False  # a table or PDF was just read
    evidence_tables: bool = False
    rows: bool = False  # rows or evidence tables exist
    flagged: bool = False  # a drift flag or a repair goal
    facts_wanted: bool = False  # the answer may chain pages (graph/offers.py)
    page_in_doubt: bool = False  # the last action failed or the page shows almost nothing
    plan_in_question: bool = False  # (never with the planner off)


Rule = Callable[[Situation], bool]


@dataclass(frozen=True)
class ToolSpec:
    node: Node | None  # None: not a tool of the actor (graph nodes call it themselves)
    offered: Rule
    doc: str = ""  # the model's line; "" for the model's own docstring
    model: type[BaseModel] | None = None  # an agent tool's; a browser action's model is the browser's
    search_only: bool = False  # a tool only when the protocol enables search
    evidence: Evidence | None = None  # what the call brings to the answer's evidence


def always(_: Situation) -> bool:
    return True


def never(_: Situation) -> bool:
    return False


def on_page(s: Situation) -> bool:
    return s.page is not None


def _controls(*kinds: str) -> Rule:
    """Offered when the page has a control of one of these kinds."""
    return lambda s: s.page is not None and any(c.kind in kinds for c in s.page.controls)


def _choices(s: Situation) -> bool:
    return s.page is not None and any(c.options for c in s.page.controls)


def _hrefs(s: Situation) -> list[str]:
    return [link.href.lower() for link in s.page.links] if s.page else []


def _named(read: str) -> Rule:
    return lambda s: s.page is not None and read in s.left_out


def _when(flag: Callable[[Situation], object]) -> Rule:
    return lambda s: s.page is not None and bool(flag(s))


TOOL_SPECS: dict[str, ToolSpec] = {
    "goto": ToolSpec("executor", always, "Open a URL."),
    "click": ToolSpec("executor", on_page, "Click a link, button, tab or option."),
    "fill": ToolSpec("executor", _controls("text", "search", "date", "number", "textarea"),
                     "Type a value into a text, search, date or number field."),
    "select": ToolSpec("executor", _choices, "Choose an option (its label or value) of a dropdown or radio group."),
    "check": ToolSpec("executor", _controls("checkbox", "toggle"), "Tick a checkbox or toggle (checked=false unticks)."),
    "set_range": ToolSpec("executor", _controls("range"), "Set a date/number range: the start and end fields."),
    "submit": ToolSpec("executor", _controls("submit", "button", "text", "search", "date", "number", "select"),
                       "Submit a form (apply the filters); target: its button or any of its fields."),
    "press": ToolSpec("executor", _controls("text", "search", "textarea"), "Press a key, e.g. Enter in a search field."),
    "scroll": ToolSpec("executor", _when(lambda s: s.page_in_doubt), "Scroll the page."),
    "back": ToolSpec("executor", on_page, "Go back in history (may reset filters)."),
    "wait_for": ToolSpec("executor", _when(lambda s: s.page_in_doubt), "Wait for text, a CSS selector or network idle."),
    "read_table": ToolSpec("executor", _when(lambda s: s.page.tables or s.page.pagination),
                           "Read table N whole; all_pages=true follows its pagination.", evidence="source"),
    "read_pdf": ToolSpec("executor", _when(lambda s: s.page.url.lower().endswith(".pdf")
                                           or any(".pdf" in h for h in _hrefs(s))),
                         "Read a PDF (its link as target, or url): its text by page.", evidence="source"),
    "download": ToolSpec("executor", _when(lambda s: any(m in h for h in _hrefs(s) for m in DOWNLOADABLE)),
                         "Download a file (CSV is parsed into rows).", evidence="source"),
    "set_url_params": ToolSpec("executor", _when(lambda s: "?" in s.page.url or s.page.query_state),
                               "Open the current URL with query parameters changed or removed."),
    "page_facts": ToolSpec(None, never),  # the workspace's page reads (read_facts, section extraction)
    # the reads of what the observation left out: when its notes name them; a delta leaves out option lists and
    # the outline's text
    "list_options": ToolSpec("executor", lambda s: _named("list_options")(s) or (_choices(s) and s.shown_before),
                             "All options of a shortened dropdown, radio group or link list; on a panel line, "
                             "its controls."),
    "list_links": ToolSpec("executor", _named("list_links"),
                           "All plain links of the page, optionally only those containing a string."),
    "read_section": ToolSpec("executor", lambda s: _named("read_section")(s) or _when(
                                 lambda t: t.shown_before and t.page.outline)(s),
                             "The whole text of a page section: by heading, or target = the ref of a shortened line."),
    "extract_rows": ToolSpec("extractor", _when(lambda s: s.last_read or s.page.tables), model=ExtractRows,
                             evidence="rows"),
    "read_facts": ToolSpec("workspace", _when(lambda s: s.facts_wanted), model=ReadFacts, evidence="rows"),
    "derive": ToolSpec("workspace", _when(lambda s: s.evidence_tables), model=Derive),
    "discard_rows": ToolSpec("actor", _when(lambda s: s.rows and s.flagged), model=DiscardRows),
    "revise_plan": ToolSpec("actor", lambda s: s.plan_in_question, model=RevisePlan),
    "finish": ToolSpec("finish", on_page, model=Finish),
    "web_search": ToolSpec("executor", always, model=WebSearch, search_only=True),
}

SOURCE_READS = frozenset(k for k, spec in TOOL_SPECS.items() if spec.evidence == "source")
ROW_WRITERS = frozenset(k for k, spec in TOOL_SPECS.items() if spec.evidence == "rows")


def tool_model(kind: str) -> type[BaseModel]:
    """The pydantic model of a tool: the browser's for a browser action, else the graph's own."""
    spec = TOOL_SPECS[kind]
    if spec.model is not None:
        return spec.model
    return ACTION_SPECS[kind].model
