"""Agent-level tools beyond browser actions. Together with `browser.types.BrowserAction` they form the
tool vocabulary of the actor (LLM tool calls) and of scripted walkthroughs (JSON steps
`{"tool": <kind>, "args": {...}}`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.state import Plan


class ExtractRows(BaseModel):
    """Rows of the last read table/PDF/page text, appended to table `into` (answer: keys = output columns).
    columns: column -> a header, or for all rows "re:<regex>" (1st group, page text), "url:<param>",
    "fact:<label>". source pdf/page_text: `pattern` with named groups."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["extract_rows"] = "extract_rows"
    source: Literal["table", "pdf", "page_text"] = "table"
    table: int = 0
    columns: dict[str, str]
    pattern: str | None = None
    where: dict[str, str] = Field(default_factory=dict, description="column/header -> exact value to keep")
    into: str = "answer"
    section: str | None = Field(None, description="The table under this heading/caption.")
    note: str = ""


class ReadFacts(BaseModel):
    """Labelled values of the page (dt/dd, 'Label: value', th|td rows, control label -> value) into ONE row
    of table `into`. fields: column -> label as shown, or heading, title, url:<param>, re:<regex>."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["read_facts"] = "read_facts"
    into: str
    fields: dict[str, str]
    section: str | None = Field(None, description="Only labels under this heading.")
    url: str | None = Field(None, description="Open first (one call per detail page).")
    allow_missing: bool = False
    note: str = ""


class Derive(BaseModel):
    """One read-only DuckDB SELECT over the tables -> table `into` (answer: the output columns, in answer
    order). Also columns _url,_step,_state,_drift. Helpers: num(text), iso_date(text), year_of(text)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["derive"] = "derive"
    sql: str
    into: str = "answer"
    note: str = ""


class Finish(BaseModel):
    """Stop collecting; the verifier checks, the composer writes the answer (a derived `answer` table keeps
    its SQL order unless order_by is given)."""

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
    table: str = "answer"
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
