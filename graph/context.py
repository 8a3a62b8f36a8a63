"""The actor's context window: what of the conversation fits the model's context length.

The current turn (instruction, plan, retrieval state, rows so far, the latest observation) and the system
prompt with the tool schemas are always sent; of the earlier exchanges the newest few are kept whole and the
older ones are folded into a one-line-per-step summary (always beyond `whole`, and further until the whole
prompt fits `context_tokens` - `COMPLETION_RESERVE`), counted with the project's token counter (`browser.tokens`).
Other tokenizers count differently, so `TOKENIZER_MARGIN` leaves headroom.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from browser.tokens import count_tokens

COMPLETION_RESERVE = 512
TOKENIZER_MARGIN = 0.85  # cl100k counts ~10-15% fewer tokens than small models' own tokenizers
MESSAGE_OVERHEAD = 4  # role and separators per message, as chat templates add them
SUMMARY_LINE_CHARS = 100
SUMMARY_MAX_LINES = 8


def message_tokens(message: AnyMessage) -> int:
    tokens = MESSAGE_OVERHEAD + count_tokens(str(message.content or ""))
    for call in getattr(message, "tool_calls", None) or []:
        tokens += count_tokens(call["name"] + json.dumps(call.get("args") or {}))
    return tokens


def tools_tokens(tools: list[dict[str, Any]]) -> int:
    return count_tokens(json.dumps(tools, separators=(",", ":")))


def prompt_tokens(messages: list[AnyMessage], tools: list[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages) + tools_tokens(tools)


def prompt_parts(system: AnyMessage, history: list[AnyMessage], turn: AnyMessage, observation: str,
                 tools: list[dict[str, Any]]) -> dict[str, int]:
    """Where an actor prompt's tokens go (message texts and `json.dumps(tools)`, as the usage counters bill
    them): system prompt, tool schemas, earlier exchanges, the turn's task/plan/state part, its observation."""
    content = lambda m: count_tokens(str(m.content or ""))  # noqa: E731
    observed = count_tokens(observation)
    return {"system": content(system), "tools": count_tokens(json.dumps(tools)),
            "history": sum(content(m) for m in history), "state": max(content(turn) - observed, 0),
            "observation": observed}


def _exchanges(history: list[AnyMessage]) -> list[list[AnyMessage]]:
    """Groups starting at each AI message, so a tool result never loses its call."""
    groups: list[list[AnyMessage]] = []
    for message in history:
        if isinstance(message, AIMessage) or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def _summary_line(group: list[AnyMessage]) -> str:
    ai = group[0]
    calls = getattr(ai, "tool_calls", None) or []
    did = "; ".join(f"{c['name']}({json.dumps(c.get('args') or {}, separators=(',', ':'))})" for c in calls)
    did = did or f"replied without a tool call: {str(ai.content)[:60]!r}"
    result = " / ".join(_first_line(str(m.content)) for m in group[1:] if isinstance(m, ToolMessage | HumanMessage))
    return f"- {did} -> {result}"[:SUMMARY_LINE_CHARS]


def _first_line(text: str) -> str:
    """A result's first line; a bare `ok=True` with what follows it (the line that says what happened)."""
    lines = text.splitlines() or [""]
    if lines[0].startswith("ok=") and len(lines) > 1:
        return f"{lines[0]}; {lines[1]}"
    return lines[0]


@dataclass
class Window:
    messages: list[AnyMessage]  # the earlier exchanges to send (a summary message first when trimmed)
    trimmed: int  # exchanges folded into the summary or dropped
    tokens: int  # the whole prompt as counted (system, tools, window, turn)
    limit: int | None


def fit_window(history: list[AnyMessage], *, head: list[AnyMessage], turn: AnyMessage, tools: list[dict[str, Any]],
               context_tokens: int | None, whole: int | None = None) -> Window:
    """`history` is already cut to the last K exchanges. The newest `whole` exchanges are sent whole (all when
    None), older ones as one summary line each; with `context_tokens`, more are summarised until the prompt
    fits (`Window.trimmed` counts only those: the context trims)."""
    fixed = prompt_tokens([*head, turn], tools)
    groups = _exchanges(history)
    base = max(0, len(groups) - whole) if whole is not None else 0
    limit = int(context_tokens * TOKENIZER_MARGIN) - COMPLETION_RESERVE if context_tokens is not None else None
    for cut in range(base, len(groups) + 1):
        kept = [m for g in groups[cut:] for m in g]
        summary = _summary(groups[:cut])
        window = ([summary] if summary else []) + kept
        total = fixed + sum(message_tokens(m) for m in window)
        if limit is None or total <= limit:
            return Window(window, cut - base, total, limit)
    return Window([], len(groups) - base, fixed, limit)  # even the bare turn is over: the caller cuts the observation


def _summary(groups: list[list[AnyMessage]]) -> HumanMessage | None:
    if not groups:
        return None
    lines = [_summary_line(g) for g in groups][-SUMMARY_MAX_LINES:]
    if len(groups) > SUMMARY_MAX_LINES:
        lines.insert(0, f"- ({len(groups) - SUMMARY_MAX_LINES} earlier steps not shown)")
    return HumanMessage("EARLIER STEPS (one line each):\n" + "\n".join(lines))
