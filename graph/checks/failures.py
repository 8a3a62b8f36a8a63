"""The verifier's failures as data, and the one place their text is rendered.

A failure says what failed in fields a program reads (the check, the evidence table, the listed results not
opened, the result pages not read, which schema check, the gates and controls a refusal is about, the result
set short of pages or rows); its `message` and the repair goal are rendered from
those fields here, for the model and for the reports. A policy that reacts to a failure (agent/measuring/scripted.py)
reads the fields, never the text: rewording a message cannot change what it does.

It is a TypedDict (not a class) because it is kept in the graph state, the checkpoint and the run folder's
`retrieval_state.json` as plain JSON; `message` stays in that record so reports read old and new runs alike.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

Check = Literal["drift", "gate", "pages", "count", "criteria", "schema", "details"]
# which schema check failed: no extraction at all, rows with empty columns, every row discarded, a derived answer
# without rows or with blank rows, a phase of the plan whose table was never read
SchemaCode = Literal["nothing_extracted", "empty_columns", "all_discarded", "no_rows", "blank_rows", "unread_phase"]


class Failure(TypedDict):
    check: Check
    message: str  # rendered by `failure` from the fields below and the check's own words
    table: NotRequired[str]  # the evidence table that failed (a derived answer's input); absent: the answer rows
    links: NotRequired[list[str]]  # details: every listed result not opened (the message names the first few)
    pages: NotRequired[list[int]]  # pages: the result pages not read
    code: NotRequired[SchemaCode]  # schema: which of its checks failed
    gates: NotRequired[list[str]]  # gate, drift: the plan's gates the refused rows were read against (their names)
    labels: NotRequired[list[str]]  # gate, drift: the page's controls those rows were read with (labels as shown)
    result_set: NotRequired[str]  # pages, count: the result set short of pages or rows


def failure(check: Check, text: str, *, table: str | None = None, qualifier: str = "", links: list[str] | None = None,
            pages: list[int] | None = None, code: SchemaCode | None = None, gates: list[str] | None = None,
            labels: list[str] | None = None, result_set: str | None = None) -> Failure:
    """A failure whose message is `text`, said of `table` when it names one (`table X: ...`; `qualifier` follows
    the table's name: which phase its rows were judged under)."""
    made = Failure(check=check, message=f"table {table}{qualifier}: {text}" if table else text)
    if table:
        made["table"] = table
    if links is not None:
        made["links"] = list(links)
    if pages is not None:
        made["pages"] = list(pages)
    if code is not None:
        made["code"] = code
    if gates:
        made["gates"] = list(gates)
    if labels:
        made["labels"] = list(labels)
    if result_set:
        made["result_set"] = result_set
    return made


def in_table(found: Failure, table: str, advice: str, qualifier: str = "") -> Failure:
    """A failure of the rows of one evidence table: the same data, said of that table, with the table's advice."""
    return failure(found["check"], f"{found['message']}{advice}", table=table, qualifier=qualifier,
                   links=found.get("links"), pages=found.get("pages"), code=found.get("code"), gates=found.get("gates"),
                   labels=found.get("labels"), result_set=found.get("result_set"))


def render_goal(failures: list[Failure]) -> str | None:
    """The repair goal the actor reads: every failure, tagged with its check."""
    return " ; ".join(f"[{f['check']}] {f['message']}" for f in failures) or None
