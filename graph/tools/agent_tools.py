"""Agent-level tools beyond browser actions. Together with `browser.types.BrowserAction` they form the
tool vocabulary of the actor (LLM tool calls) and of scripted walkthroughs (JSON steps
`{"tool": <kind>, "args": {...}}`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graph.state import Plan

MAX_URLS = 12  # pages one call may open: a reply that still shows each page's rows
URLS_DOC = f"open first (a PDF too); up to {MAX_URLS} in turn"  # the cap said in as few tokens as the old words
PAGES_DOC = f"open first; up to {MAX_URLS} in turn"


def open_urls(url: str | list[str] | None) -> list[str | None]:
    """The pages a read opens in turn ([None]: the current page)."""
    if url is None or url == []:
        return [None]
    return [url] if isinstance(url, str) else list(url)


def _few_urls(url: str | list[str] | None) -> str | list[str] | None:
    if isinstance(url, list) and len(url) > MAX_URLS:
        raise ValueError(f"at most {MAX_URLS} URLs per call (got {len(url)}); split them over calls")
    return url


class Derive(BaseModel):
    """One DuckDB SELECT over the tables -> table `into` (default answer: the output columns, in order).
    Also columns _url, _step, _page, _state, _drift, _empty (a read of 0 rows); num(), iso_date(), year_of().
    Fixed decimals: printf('%.1f', x)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["derive"] = "derive"
    sql: str
    into: str = "answer"
    note: str = ""


class Finish(BaseModel):
    """Stop and answer: the rows in the order read (a derived answer: its SQL order) unless order_by."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["finish"] = "finish"
    order_by: list[str] = Field(
        default_factory=list, description="output columns, each optionally + ' desc' / ' asc' / ' num'"
    )
    note: str = ""
    # said where they answer something (a [details] refusal, a repair goal), not in the schema sent every turn
    skip: dict[str, str] = Field(default_factory=dict, description="listed link -> why it is left unopened")
    dispute: str = Field("", description="why the refusal is wrong (once): the answer is marked disputed")


class DiscardRows(BaseModel):
    """Drop rows read in a wrong state or failing a criterion."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["discard_rows"] = "discard_rows"
    where: dict[str, str] = Field(default_factory=dict, description="column -> value")
    from_step: int | None = Field(None, description="only rows extracted at this step")
    all_rows: bool = False
    table: str = "answer"
    note: str = ""


class RevisePlan(BaseModel):
    """Replace the plan when the site shows it was wrong."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["revise_plan"] = "revise_plan"
    plan: Plan = Field(description="The full new plan.")
    reason: str


class WebSearch(BaseModel):
    """Search the web for the official source (only offered when the protocol enables search)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["web_search"] = "web_search"
    query: str


class ExtractRows(BaseModel):
    """Rows of the last read table / PDF / page text into `into` (default answer)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["extract_rows"] = "extract_rows"
    source: Literal["table", "pdf", "page_text"] = "table"
    table: int | None = Field(None, description="default: the last read")
    columns: dict[str, str] = Field(description="column -> header, link:<header>, re:<header>:<regex> (each "
                                                "row's cell), re:<regex> (page text: one value for all rows), "
                                                "url:<param>, path:<n>, fact:<label>")
    pattern: str | None = Field(None, description="pdf/page_text: regex, named groups")
    where: dict[str, str] = Field(default_factory=dict, description="column -> value")
    into: str = "answer"
    section: str | None = Field(None, description="table under this heading")
    url: str | list[str] | None = Field(None, description=URLS_DOC)
    note: str = ""

    _url = field_validator("url")(_few_urls)

    def urls(self) -> list[str | None]:
        return open_urls(self.url)


class ReadFacts(BaseModel):
    """The page's labelled values (dt/dd, 'Label: value', label|value rows, controls) as ONE row of `into`."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["read_facts"] = "read_facts"
    into: str
    fields: dict[str, str] = Field(description="column -> label, heading, title, url:<param>, path:<n>, "
                                               "link:<text>, re:<regex>")
    section: str | None = Field(None, description="only under this heading")
    url: str | list[str] | None = Field(None, description=PAGES_DOC)
    allow_missing: bool = False
    note: str = ""

    _url = field_validator("url")(_few_urls)

    def urls(self) -> list[str | None]:
        return open_urls(self.url)


