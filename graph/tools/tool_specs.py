"""One row per tool the actor knows: the node that runs it, its one line for the model and when it is offered.

A browser action's kind, model and effect are the browser's (`browser.types.ACTION_SPECS`); this table adds what
only the graph knows, keyed by the same kinds (tests/test_action_specs.py checks that both cover the same ones).
The tool list and its schemas (graph/tools/tool_schemas.py), the routing (graph/build.py) and the offering (graph/tools/offers.py)
are read from it. Offering rules read a `Situation`: typed data built from the state, never the page's text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from browser.types import ACTION_SPECS, CHOICE_KINDS, Observation
from graph.tools.agent_tools import Derive, DiscardRows, ExtractRows, Finish, ReadFacts, RevisePlan, WebSearch

# executor: the browser (or the search backend); extractor / workspace: rows into tables; finish: the verifier
# (or the composer when it is off); actor: answered by the actor itself (bookkeeping, no other node)
Node = Literal["executor", "extractor", "workspace", "finish", "actor"]
# "source": reads what rows are extracted from (a table, a file, a PDF: the executor's `last_read`);
# "rows": puts rows into a named table (`into`)
Evidence = Literal["source", "rows"]
DOWNLOADABLE = (".csv", ".tsv", ".xlsx", ".xls", ".json", "download", "export", "format=")


@dataclass(frozen=True)
class Situation:
    """What decides the tools offered at a turn (graph/tools/offers.py builds it from the state)."""

    page: Observation | None  # None before the first page
    left_out: frozenset[str] = frozenset()  # reads the page's text names for what it left out
    shown_before: bool = False  # the page is shown as a delta: its option lists and outline text left out
    last_read: bool = False  # a table or PDF was just read
    evidence_tables: bool = False
    rows: bool = False  # rows or evidence tables exist
    flagged: bool = False  # a drift flag or a repair goal
    facts_wanted: bool = False  # the answer may chain pages (graph/tools/offers.py)
    page_in_doubt: bool = False  # the last action failed or the page shows almost nothing
    plan_in_question: bool = False  # (never with the planner off)


@dataclass(frozen=True)
class Offer:
    """An offering rule and its words in the system prompt's "Offered when" line (graph/tools/offers.py renders the
    line from the table), so the line says what the rule does; tools sharing words share the rule's meaning."""

    test: Callable[[Situation], bool]
    says: str

    def __call__(self, situation: Situation) -> bool:
        return self.test(situation)


@dataclass(frozen=True)
class ToolSpec:
    node: Node | None  # None: not a tool of the actor (graph nodes call it themselves)
    offered: Offer
    doc: str = ""  # the model's line; "" for the model's own docstring
    model: type[BaseModel] | None = None  # an agent tool's; a browser action's model is the browser's
    search_only: bool = False  # a tool only when the protocol enables search
    evidence: Evidence | None = None  # what the call brings to the answer's evidence
    ablated_with: str | None = None  # the node whose ablation removes the tool (its prompt line too)


always = Offer(lambda _: True, "always")
never = Offer(lambda _: False, "")
on_page = Offer(lambda s: s.page is not None, "a page")
SUCH_CONTROLS = "such controls"  # a control of the kinds the tool acts on


def _controls(*kinds: str) -> Offer:
    """Offered when the page has a control of one of these kinds."""
    return Offer(lambda s: s.page is not None and any(c.kind in kinds for c in s.page.controls), SUCH_CONTROLS)


def _has_choices(s: Situation) -> bool:
    """A control with options, or a choice widget whose options are not on the page yet (a combobox that loads
    them from the server as one types: `select` types and picks; a played model was offered no way to set one)."""
    return s.page is not None and any(c.options or c.kind in CHOICE_KINDS for c in s.page.controls)


def _has_range(s: Situation) -> bool:
    """A range control, or a pair of date fields (a From/To window): the range setter follows the control kinds."""
    return s.page is not None and (any(c.kind == "range" for c in s.page.controls)
                                   or sum(c.kind == "date" for c in s.page.controls) >= 2)


def _hrefs(s: Situation) -> list[str]:
    return [link.href.lower() for link in s.page.links] if s.page else []


def _when(flag: Callable[[Situation], object], says: str) -> Offer:
    return Offer(lambda s: s.page is not None and bool(flag(s)), says)


def _left_out(read: str, or_when: Callable[[Situation], object]) -> Offer:
    """A read of what the observation left out: when its notes name the read, or `or_when` (a delta leaves out
    option lists and the outline's text)."""
    return Offer(lambda s: s.page is not None and (read in s.left_out or bool(or_when(s))), "named in notes")


in_doubt = _when(lambda s: s.page_in_doubt, "page in doubt")
a_table = _when(lambda s: s.page.tables or s.page.pagination, "a table")
file_links = "file links"  # a link to the kind of file the tool reads


def a_list(s: Situation) -> bool:
    """A list of items in the main content: a feed grows as it is scrolled to its end (infinite scroll)."""
    return s.page is not None and any(t.source == "cards" and t.rank == 0 for t in s.page.tables)

TOOL_SPECS: dict[str, ToolSpec] = {
    "goto": ToolSpec("executor", always, "Open a URL."),
    "click": ToolSpec("executor", on_page, "Click a link, button, tab or option."),
    "fill": ToolSpec("executor", _controls("text", "search", "date", "number", "textarea", "custom_select"),
                     "Type a value into a text, search, date or number field."),
    "select": ToolSpec("executor", Offer(_has_choices, SUCH_CONTROLS),
                       "Choose an option (its label or value) of a dropdown or radio group."),
    "check": ToolSpec("executor", _controls("checkbox", "toggle"), "Tick a checkbox or toggle (checked=false unticks)."),
    "set_range": ToolSpec("executor", Offer(_has_range, SUCH_CONTROLS),
                          "Set a date/number range: the start and end fields."),
    "submit": ToolSpec("executor", _controls("submit", "button", "text", "search", "date", "number", "select"),
                       "Submit a form (apply the filters); target: its button or any of its fields."),
    "press": ToolSpec("executor", _controls("text", "search", "textarea"), "Press a key, e.g. Enter in a search field."),
    "scroll": ToolSpec("executor", Offer(lambda s: in_doubt(s) or a_list(s), "page in doubt, or a list"),
                       "Scroll the page (a feed may load more)."),
    "back": ToolSpec("executor", on_page, "Go back in history (may reset filters)."),
    "wait_for": ToolSpec("executor", in_doubt, "Wait for text, a CSS selector or network idle."),
    "read_table": ToolSpec("executor", a_table, "Read table N whole; all_pages=true follows its pagination.",
                           evidence="source"),
    "read_pdf": ToolSpec("executor", _when(lambda s: s.page.url.lower().endswith(".pdf")
                                           or any(".pdf" in h for h in _hrefs(s)), file_links),
                         "Read a PDF (its link as target, or url): its text by page.", evidence="source"),
    "download": ToolSpec("executor", _when(lambda s: any(m in h for h in _hrefs(s) for m in DOWNLOADABLE), file_links),
                         "Download a file (CSV is parsed into rows).", evidence="source"),
    "set_url_params": ToolSpec("executor", _when(lambda s: "?" in s.page.url or s.page.query_state, "a query"),
                               "Open the current URL with query parameters changed or removed."),
    "page_facts": ToolSpec(None, never),  # the workspace's page reads (read_facts, section extraction)
    "list_options": ToolSpec("executor", _left_out("list_options", lambda s: _has_choices(s) and s.shown_before),
                             "All options of a shortened dropdown, radio group or link list; on a panel line, "
                             "its controls."),
    "list_links": ToolSpec("executor", _left_out("list_links", lambda _: False),
                           "All plain links of the page, optionally only those containing a string."),
    "read_section": ToolSpec("executor", _left_out("read_section", lambda s: s.shown_before and s.page.outline),
                             "The whole text of a page section: by heading, or target = the ref of a shortened line."),
    "extract_rows": ToolSpec("extractor", _when(lambda s: s.last_read or s.page.tables, "a table"), model=ExtractRows,
                             evidence="rows"),
    "read_facts": ToolSpec("workspace", _when(lambda s: s.facts_wanted, "chained tasks"), model=ReadFacts,
                           evidence="rows"),
    "derive": ToolSpec("workspace", _when(lambda s: s.evidence_tables, "tables"), model=Derive),
    "discard_rows": ToolSpec("actor", _when(lambda s: s.rows and s.flagged, "drift or goal"), model=DiscardRows),
    "revise_plan": ToolSpec("actor", Offer(lambda s: s.plan_in_question, "plan in question"), model=RevisePlan,
                            ablated_with="planner"),
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
