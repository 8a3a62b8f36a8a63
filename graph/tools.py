"""Agent-level tools beyond browser actions. Together with `browser.types.BrowserAction` they form the
tool vocabulary of the actor (LLM tool calls) and of scripted walkthroughs (JSON steps
`{"tool": <kind>, "args": {...}}`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
