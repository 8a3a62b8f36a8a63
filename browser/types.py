"""The typed contract between the browser layer and its callers (the graph, the benchmarks, tests).

Actions are pydantic models with a `kind` discriminator so that the same schema serves LLM tool
calls, scripted walkthroughs (JSON) and direct Python calls. Targets can be given by element ref
(from the latest observation), by visible label/text, or by CSS selector: an LLM uses refs, a
walkthrough uses labels so it survives re-renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ErrorClass = Literal[
    "stale_ref",
    "not_found",
    "not_interactable",
    "option_not_found",
    "value_reverted",
    "no_effect",
    "http_error",
    "timeout",
    "blocked_by_policy",
    "download_too_large",
    "crashed",
    "invalid_action",
]


class Target(BaseModel):
    """Which element an action addresses. Exactly one of ref/label/text/selector should be set."""

    model_config = ConfigDict(extra="forbid")

    ref: str | None = Field(None, description="Element ref from the latest observation, e.g. 'e12'.")
    label: str | None = Field(None, description="Visible label of a form control (label/aria/fieldset).")
    text: str | None = Field(None, description="Visible text of a link, button, tab or option.")
    selector: str | None = Field(None, description="CSS selector (last resort).")
    frame: str | None = Field(None, description="Frame name or URL fragment when the element is in an iframe.")

    def describe(self) -> str:
        for key in ("ref", "label", "text", "selector"):
            value = getattr(self, key)
            if value:
                return f"{key}={value!r}"
        return "<empty target>"


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Goto(_Action):
    kind: Literal["goto"] = "goto"
    url: str


class Click(_Action):
    kind: Literal["click"] = "click"
    target: Target


class Fill(_Action):
    kind: Literal["fill"] = "fill"
    target: Target
    value: str


class Select(_Action):
    """Choose an option (by visible label or by value) in a native or custom dropdown / radio group."""

    kind: Literal["select"] = "select"
    target: Target
    option: str
    # On a multi-select: add keeps what is chosen; replace leaves only this option; remove; clear (all).
    mode: Literal["add", "replace", "remove", "clear"] = "add"


class Check(_Action):
    kind: Literal["check"] = "check"
    target: Target
    checked: bool = True


class SetRange(_Action):
    """Set a date/number range (two inputs, or one widget with start and end)."""

    kind: Literal["set_range"] = "set_range"
    start_target: Target
    end_target: Target
    start: str
    end: str


class Submit(_Action):
    kind: Literal["submit"] = "submit"
    target: Target | None = Field(None, description="A submit button or any field of the form.")


class Press(_Action):
    kind: Literal["press"] = "press"
    key: str
    target: Target | None = None


class Scroll(_Action):
    kind: Literal["scroll"] = "scroll"
    direction: Literal["up", "down"] = "down"
    pixels: int = 800


class Back(_Action):
    kind: Literal["back"] = "back"


class WaitFor(_Action):
    kind: Literal["wait_for"] = "wait_for"
    text: str | None = None
    selector: str | None = None
    network_idle: bool = False
    timeout_ms: int = 10_000


class ReadTable(_Action):
    """Read a table (or regular card list) whole, following its pagination when all_pages is set."""

    kind: Literal["read_table"] = "read_table"
    table: int = Field(0, description="Index of the table in the observation.")
    all_pages: bool = False
    max_rows: int = 500


class ReadPdf(_Action):
    kind: Literal["read_pdf"] = "read_pdf"
    target: Target | None = Field(None, description="Link to the PDF; or give url.")
    url: str | None = None
    first_page: int = Field(1, ge=1, description="for the pages a read left out")
    max_pages: int = 20


class Download(_Action):
    """Download a file (CSV is parsed into rows)."""

    kind: Literal["download"] = "download"
    target: Target


class ReadPageFacts(_Action):
    """Read the page's labelled values and its tables by section (the graph's read_facts / section extraction
    call it). With `url`, open it first (policy applies)."""

    kind: Literal["page_facts"] = "page_facts"
    url: str | None = None


class SetUrlParams(_Action):
    """Navigate to the current URL with some query parameters changed (same origin only)."""

    kind: Literal["set_url_params"] = "set_url_params"
    params: dict[str, str | list[str]] = Field(default_factory=dict)
    remove: list[str] = Field(default_factory=list)


# ---- reads of what an observation summarised (its notes name them); they change nothing on the page


class ListOptions(_Action):
    """All options of a dropdown, radio group or link list the observation shortened; given the ref of a line
    that stands for a panel of controls (`[e4] panel "Menu": 15 controls ... list_options e4 lists them`),
    those controls, one line each with its ref."""

    kind: Literal["list_options"] = "list_options"
    target: Target
    contains: str | None = Field(None, description="Only options whose label contains this (any case).")


class ListLinks(_Action):
    """All plain links of the page, optionally filtered."""

    kind: Literal["list_links"] = "list_links"
    contains: str | None = Field(None, description="Only links whose text or address contains this.")
    offset: int = Field(0, ge=0)
    limit: int = Field(200, gt=0, le=1000)


class ReadSection(_Action):
    """The whole text of a page section: by heading text, or by ref of a shortened line."""

    kind: Literal["read_section"] = "read_section"
    heading: str | None = Field(None, description="Text of the section's heading.")
    target: Target | None = None  # the element of a cut line (its ref), instead of a heading
    max_chars: int = Field(8000, gt=0, le=50_000)


# ---- one spec per kind of action: everything else about actions is derived from this table


ActionEffect = Literal["change", "read", "passive"]


@dataclass(frozen=True)
class ActionSpec:
    """What one kind of action is to the browser's callers. `effect`: "change" is meant to change the page (one
    that leaves it exactly as it was did nothing); "read" returns what the page holds and changes nothing on
    purpose; "passive" waits or moves the viewport, so what was just read stays valid. `sets`: the action sets
    a state value, one control's (read back after acting) or the URL's query parameters. `navigates`: it opens
    a URL the call names (its `url` field), leaving the page it was on by choice."""

    model: type[_Action]
    effect: ActionEffect
    sets: Literal["control", "url"] | None = None
    navigates: bool = False

    @property
    def kind(self) -> str:
        return self.model.model_fields["kind"].default


ACTION_SPECS: dict[str, ActionSpec] = {spec.kind: spec for spec in (
    ActionSpec(Goto, "change", navigates=True),
    ActionSpec(Click, "change"),
    ActionSpec(Fill, "change", sets="control"),
    ActionSpec(Select, "change", sets="control"),
    ActionSpec(Check, "change", sets="control"),
    ActionSpec(SetRange, "change", sets="control"),
    ActionSpec(Submit, "change"),
    ActionSpec(Press, "change"),
    ActionSpec(Scroll, "passive"),
    ActionSpec(Back, "change"),
    ActionSpec(WaitFor, "passive"),
    ActionSpec(ReadTable, "read"),
    ActionSpec(ReadPdf, "read"),
    ActionSpec(Download, "read"),
    ActionSpec(SetUrlParams, "change", sets="url"),
    ActionSpec(ReadPageFacts, "read", navigates=True),  # with `url`: one page each
    ActionSpec(ListOptions, "read"),
    ActionSpec(ListLinks, "read"),
    ActionSpec(ReadSection, "read"),
)}

# The union the same JSON validates into (pydantic picks the model by `kind`), built from the table.
BrowserAction = Annotated[reduce(or_, (spec.model for spec in ACTION_SPECS.values())), Field(discriminator="kind")]
CHANGING_KINDS = frozenset(k for k, spec in ACTION_SPECS.items() if spec.effect == "change")
PASSIVE_KINDS = frozenset(k for k, spec in ACTION_SPECS.items() if spec.effect == "passive")
SETTER_KINDS = frozenset(k for k, spec in ACTION_SPECS.items() if spec.sets)  # set a state value
TARGETED_SETTERS = frozenset(k for k, spec in ACTION_SPECS.items() if spec.sets == "control")  # one control's
NAVIGATING_KINDS = frozenset(k for k, spec in ACTION_SPECS.items() if spec.navigates)  # open a URL on purpose


# ---------------------------------------------------------------- observation


class Option(BaseModel):
    label: str
    value: str
    selected: bool = False


ControlKind = Literal[
    "select", "custom_select", "radio_group", "checkbox", "toggle", "text", "search", "date",
    "number", "range", "textarea", "button", "submit", "tab", "page_size", "chip", "link",
]
CHOICE_KINDS: frozenset[str] = frozenset({"select", "custom_select", "radio_group"})  # a value picked from options


class Control(BaseModel):
    """A state-setting control, with its label, current value and (for choices) every option."""

    ref: str
    kind: ControlKind
    label: str
    name: str | None = None
    value: str | None = None
    checked: bool | None = None
    expanded: bool | None = Field(None, description="A tree node's: True open, False collapsed (its children one "
                                  "action away, often not in the page yet), None: no children or no tree node.")
    options: list[Option] = Field(default_factory=list)
    options_total: int | None = Field(None, description="Set when options are summarised in the text.")
    frame: str | None = None
    form: str | None = None
    disabled: bool = False
    multiple: bool = Field(False, description="Several options can be chosen at once: `select` adds one.")
    readonly: bool = Field(False, description="Not typed into (a picker sets it); `fill` still sets it by value.")
    rank: int = Field(0, description="Where it sits: 0 main content, 1 elsewhere in the body, 2 site chrome "
                                     "(menus, header, footer, sidebars, tool panels).")
    box: str | None = Field(None, description="The widget panel or landmark it sits in (a key shared by the "
                                              "controls of one panel), for showing a panel as one line.")
    box_label: str | None = None


class CellLink(BaseModel):
    """A link inside one table cell (or one field of a card): what it says, where it goes, and its ref."""

    text: str
    href: str = Field(description="Absolute when the observer knew the page's address, else as written.")
    ref: str = Field("", description="Element ref (click target) when observed live; '' when parsed from HTML.")


class TableData(BaseModel):
    index: int
    caption: str | None = None
    headers: list[str]
    rows: list[list[str]]
    row_links: list[list[str]] = Field(default_factory=list, description="hrefs found in each row")
    row_controls: list[list[str]] = Field(default_factory=list, description="refs of the controls in each row")
    cell_links: list[list[list[CellLink]]] = Field(
        default_factory=list, description="Per row, per column (aligned with `headers`), the links in that cell in "
        "document order: `cell_links[r][c][0].href` is the address a cell links to. Empty when not known.")
    total_rows: int
    truncated: bool = False
    source: Literal["table", "cards", "csv", "pdf"] = "table"
    rank: int = Field(0, description="0 main content, 1 elsewhere in the body, 2 site chrome.")


class Pagination(BaseModel):
    page: int | None = None
    pages: int | None = None
    first: int | None = None
    last: int | None = None
    total: int | None = None
    page_size: int | None = None
    has_next: bool = False
    has_prev: bool = False
    text: str = ""


class Link(BaseModel):
    ref: str
    text: str
    href: str


class PendingControl(BaseModel):
    """A control changed since the page last showed results (browser.applied): the results are the old state's."""

    label: str
    value: str = Field(description="What it holds now (not applied).")
    shown: str = Field(description="What it held when the results shown were applied.")


class Observation(BaseModel):
    url: str
    query_state: dict[str, list[str]] = Field(default_factory=dict)
    title: str = ""
    frames: list[str] = Field(default_factory=list)
    controls: list[Control] = Field(default_factory=list)
    chips: list[str] = Field(default_factory=list, description="Active-filter chips as shown.")
    tables: list[TableData] = Field(default_factory=list)
    pagination: Pagination | None = None
    result_count: int | None = None
    outline: list[str] = Field(default_factory=list)
    outline_total: int = Field(0, description="Text blocks on the page; more than len(outline) when capped.")
    outline_main: int | None = Field(None, description="How many of the first outline lines are main content "
                                                       "(None: not known, all count as such).")
    outline_refs: list[str] = Field(default_factory=list, description="Per outline line, the ref of a long main-"
                                    "content line the text may shorten (read_section returns it whole), else ''.")
    outline_cut: list[int] = Field(default_factory=list, description="Indices of the outline lines the observer "
                                   "cut (each ends with the read_section that returns it whole).")
    links: list[Link] = Field(default_factory=list)
    links_total: int = Field(0, description="Plain links on the page; more than len(links) when capped.")
    notices: list[str] = Field(default_factory=list, description="Modals, banners, alerts, errors.")
    page_id: int = Field(0, description="Changes on every navigation; refs of an older page_id are stale.")
    pending: list[PendingControl] = Field(default_factory=list, description=(
        "Controls changed since the results shown were applied (browser.applied): a table read now is stale."))


class StateDelta(BaseModel):
    url_before: str | None = None
    url_after: str | None = None
    params_added: dict[str, list[str]] = Field(default_factory=dict)
    params_removed: dict[str, list[str]] = Field(default_factory=dict)
    params_changed: dict[str, tuple[list[str], list[str]]] = Field(default_factory=dict)
    controls_changed: dict[str, tuple[str | None, str | None]] = Field(
        default_factory=dict, description="control label -> (before, after)"
    )
    count_before: int | None = None
    count_after: int | None = None
    tables_grown: list[tuple[int, int, int]] = Field(
        default_factory=list, description="(table index, rows before, rows after): a list that grew in place "
        "(infinite scroll, 'load more').")

    @property
    def empty(self) -> bool:
        return not (
            self.url_before != self.url_after
            or self.params_added or self.params_removed or self.params_changed
            or self.controls_changed or self.count_before != self.count_after or self.tables_grown
        )


class PageFact(BaseModel):
    """One labelled value as the page shows it: a dt/dd pair, a `Label: value` line, a th|td row, or a
    form control's label and its current value."""

    label: str
    value: str
    section: list[str] = Field(default_factory=list, description="Enclosing headings / legends, outermost first.")
    locator: str = ""


class SectionTable(BaseModel):
    section: list[str] = Field(default_factory=list, description="Enclosing headings and the caption.")
    table: TableData


class PageLink(BaseModel):
    """A link of the page as read: its text, its absolute URL and the headings above it."""

    text: str
    href: str
    section: list[str] = Field(default_factory=list)


class PageFacts(BaseModel):
    url: str = ""
    title: str = ""
    heading: str = ""
    facts: list[PageFact] = Field(default_factory=list)
    tables: list[SectionTable] = Field(default_factory=list)
    links: list[PageLink] = Field(default_factory=list, description="Every shown link (for link:<text> reads).")


class PdfPage(BaseModel):
    page: int
    text: str


class ActionResult(BaseModel):
    ok: bool
    action: dict[str, Any]
    error: ErrorClass | None = None
    message: str = ""
    delta: StateDelta = Field(default_factory=StateDelta)
    described: bool = Field(False, description="The message ends with the delta in words (browser.delta."
                                               "describe_delta): a reader does not state those facts again.")
    readback: str | None = Field(None, description="Value of the target control read after acting.")
    set_controls: list[str] = Field(default_factory=list, description=(
        "The controls the action set (both ends of a window), named as the observation names them, whatever form "
        "the target was given in (a ref, a selector): a ref says nothing of the control it stood for."))
    observation: Observation | None = None
    table: TableData | None = Field(None, description="Set by read_table / download (CSV).")
    pdf_pages: list[PdfPage] = Field(default_factory=list)
    facts: PageFacts | None = Field(None, description="Set by page_facts.")
    download_path: str | None = None
    page_bytes: int = Field(0, description="Bytes of the page documents the action loaded, each cut at the per-page "
                                           "size cap: what a read over many pages counts against its own cap.")
    elapsed_ms: float = 0.0
