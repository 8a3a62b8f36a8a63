"""What the actor does with imperfect model output, as pure functions of the message and the state.

- Prose without a tool call: one corrective message; a second in a row is a failed step (counted).
- Several tool calls in one message: the first is executed, every other is refused with a message saying so
  (one action per turn keeps each observation tied to the action that produced it).
- Arguments that are not JSON, or that break the schema: answered with the parse / validation error.
- A target `ref` that is not on the latest page: answered with the nearest valid refs and their labels.
- The same action failing again and again: after `REPEAT_WARN` identical failures the reply says to change
  approach; at `REPEAT_STOP` the run stops (`stop_reason` "repeated_failure") instead of burning its budget.
  An action that succeeded but left the page exactly as it was counts as failed: a model re-sending the same
  `goto` loops as surely as one re-sending a refused click.

Whether a call failed is data on its reply (`tool_reply`): the ToolMessage's `status` ("error": refused or failed)
and its artifact (`CallEffect`: the page left as it was). The text is for the model; nothing here reads it.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from graph.prompting.page_fence import compose, page_repr

REPEAT_WARN = 2
REPEAT_STOP = 3
NO_CHANGE = "no change: the page is exactly as it was before this action"
NEAREST_REFS = 5
INVALID = "INVALID TOOL CALL: "  # how a refused call's reply begins, for the model
PROSE_FEEDBACK = ("Your reply had no tool call. Reply with exactly one tool call (no prose): pick the next action "
                  "from the tools, e.g. a browser action on a ref from the OBSERVATION, or `finish`.")


def invalid_json_message(invalid: dict[str, Any]) -> str:
    raw = str(invalid.get("args") or "")[:200]
    return (f"{INVALID}the arguments of {invalid.get('name')!r} are not valid JSON ({invalid.get('error')}); "
            f"got: {raw}. Send one JSON object matching the tool's parameters.")


def page_refs(observation: dict[str, Any] | None) -> dict[str, str]:
    """ref -> what it is, for every element the latest observation lists."""
    if not observation:
        return {}
    refs = {c["ref"]: f"{c.get('kind', '')} {page_repr(c.get('label', ''))}".strip()
            for c in observation.get("controls") or []}
    refs.update({link["ref"]: f"link {page_repr(link.get('text', ''))}" for link in observation.get("links") or []})
    refs.update({link["ref"]: f"link {page_repr(link.get('text', ''))}" for table in observation.get("tables") or []
                 for row in table.get("cell_links") or [] for cell in row for link in cell if link.get("ref")})
    return refs


def _ref_number(ref: str) -> int | None:
    match = re.search(r"(\d+)$", ref)
    return int(match.group(1)) if match else None


def nearest_refs(ref: str, refs: dict[str, str], n: int = NEAREST_REFS) -> list[str]:
    number = _ref_number(ref)
    if number is not None:
        numbered = [r for r in refs if _ref_number(r) is not None]
        return sorted(numbered, key=lambda r: (abs((_ref_number(r) or 0) - number), r))[:n]
    return difflib.get_close_matches(ref, list(refs), n=n, cutoff=0.0)


def unknown_ref_message(args: dict[str, Any], observation: dict[str, Any] | None) -> str | None:
    """None when the call names no ref, or a ref the latest page has (or no page is known yet)."""
    target = args.get("target") if isinstance(args.get("target"), dict) else None
    ref = (target or {}).get("ref")
    refs = page_refs(observation)
    if not ref or not refs or ref in refs:
        return None
    near = ", ".join(f"{r} = {refs[r]}" for r in nearest_refs(str(ref), refs))
    return f"ref {ref!r} is not on the current page. Nearest valid refs: {near}."


TARGET_KEYS = ("target", "start_target", "end_target")


def shown_targets(args: dict[str, Any], observation: dict[str, Any] | None) -> dict[str, dict[str, str]]:
    """Each target given by ref as the page showed it (`shown_label` of a control, `shown_link` of a link): the
    decision without the page's numbering, logged so a run can become a replayable path (agent/measuring/paths/)."""
    controls = {c["ref"]: c.get("label", "") for c in (observation or {}).get("controls") or []}
    links = {link["ref"]: link.get("text", "") for link in (observation or {}).get("links") or []}
    shown = {}
    for key in TARGET_KEYS:
        ref = args.get(key).get("ref") if isinstance(args.get(key), dict) else None
        if ref in controls:
            shown[key] = {"shown_label": controls[ref]}
        elif ref in links:
            shown[key] = {"shown_link": links[ref]}
    return shown


class CallEffect(TypedDict, total=False):
    """A tool reply's effect, as data next to its text (`ToolMessage.artifact`)."""

    changed: bool  # False: the action ran and left the page exactly as it was
    gist: str  # what happened, in one line: all the history's summary keeps of the step (graph/prompting/context.py)
    own: list[int]  # the lines of the text that are the agent's own words (`page_fence.compose`): never marked as
    # page text on the wire; a page value inside them was quoted where it was put in (`page_fence.page_repr`)


Outcome = Literal["failed", "unchanged", "ok"]


def tool_reply(text: str, call_id: str, *, failed: bool = False, unchanged: bool = False,
               gist: str | None = None, own: bool | list[int] = False) -> ToolMessage:
    """A tool reply: `failed` for a call refused or failed (status "error"), `unchanged` for an action that ran and
    changed nothing, `gist` for the line a folded history keeps (else the text's first line), `own` for the agent's
    own words (True: every line; else the numbers of its own lines, `page_fence.compose`)."""
    effect = CallEffect()
    if unchanged:
        effect["changed"] = False
    if gist is not None:
        effect["gist"] = gist
    if own:
        effect["own"] = compose([(text, True)])[1] if own is True else list(own)
    return ToolMessage(text, tool_call_id=call_id, status="error" if failed else "success", artifact=effect or None)


def _effect(reply: ToolMessage) -> CallEffect:
    return reply.artifact if isinstance(reply.artifact, dict) else CallEffect()


def call_outcome(reply: ToolMessage) -> Outcome:
    """Refused or failed, ran and changed nothing, or done: from the reply's status and artifact."""
    if reply.status == "error":
        return "failed"
    return "unchanged" if _effect(reply).get("changed") is False else "ok"


def reply_gist(reply: ToolMessage) -> str | None:
    """The line its producer gave for a folded history, if any."""
    return _effect(reply).get("gist")


def own_lines(reply: ToolMessage) -> list[int]:
    """The lines of a reply that are the agent's own words (`tool_reply(own=...)`)."""
    return list(_effect(reply).get("own") or [])


def call_failed(reply: ToolMessage | None) -> bool:
    """The reply says the call failed, was refused, or changed nothing (a reply not there yet: not failed)."""
    return reply is not None and call_outcome(reply) != "ok"


def call_signature(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, default=str)


def failed_repeats(messages: list[AnyMessage], signature: str) -> int:
    """How many times, counting back from the latest, this exact call was made and failed (without another
    action in between succeeding)."""
    replies = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    count = 0
    for message in reversed(messages):
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            failed = call_failed(replies.get(call["id"]))
            if call_signature(call["name"], call["args"]) == signature and failed:
                count += 1
            elif not failed:
                return count
    return count


def repeat_message(count: int) -> str:
    return (f"This exact action has already failed or changed nothing {count} time(s). Do not repeat it: use another ref, label or "
            "option from the OBSERVATION, another page, or revise the plan.")
