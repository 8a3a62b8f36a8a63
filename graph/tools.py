"""Agent-level tools beyond browser actions. Together with `browser.types.BrowserAction` they form the
tool vocabulary of the actor (LLM tool calls) and of scripted walkthroughs (JSON steps
`{"tool": <kind>, "args": {...}}`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.state import Plan


class ExtractRows(BaseModel):
    """Turn what the browser last read into schema rows, deterministically, with provenance.

    `columns` maps each schema column to where its value comes from:
    - a header of the table (source="table": the latest read_table/download result, else observation table `table`);
    - a regex named group (source="pdf" or "page_text", with `pattern` holding named groups);
    - "re:<regex>" anywhere: the first capture group of the regex over the page text (a value shared by all
      rows, e.g. the station name in the page heading);
    - "url:<param>": a query parameter of the current URL.
    """

    model_config = ConfigDict(extra="forbid")
    kind: Literal["extract_rows"] = "extract_rows"
    source: Literal["table", "pdf", "page_text"] = "table"
    table: int = 0
    columns: dict[str, str]
    pattern: str | None = None
    where: dict[str, str] = Field(default_factory=dict, description="column/header -> exact value to keep")
    note: str = ""


class Finish(BaseModel):
    """Stop collecting; the verifier checks, the composer writes the answer."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["finish"] = "finish"
    order_by: list[str] = Field(
        default_factory=list, description="schema columns, each optionally followed by ' desc' / ' asc' / ' num'"
    )
    note: str = ""


class DiscardRows(BaseModel):
    """Drop collected rows that were read in a wrong state or fail a criterion (before extracting again)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["discard_rows"] = "discard_rows"
    where: dict[str, str] = Field(default_factory=dict, description="column -> exact value; rows matching all go")
    from_step: int | None = Field(None, description="Drop only rows extracted at this step.")
    all_rows: bool = Field(False, description="Drop every collected row.")
    note: str = ""


class RevisePlan(BaseModel):
    """Replace the plan (gates, columns, criteria) when the site shows the first one was wrong."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["revise_plan"] = "revise_plan"
    plan: Plan = Field(description="The full new plan.")
    reason: str


class WebSearch(BaseModel):
    """Search the web for the official source (only offered when the protocol enables search)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["web_search"] = "web_search"
    query: str
