"""Caps on what one model reply may bring into a run: its text, its number of tool calls, each call's arguments.

A reply over a cap is cut before it enters the state (and the model is told), never kept whole: a 30 MB prose
reply made 344 MB of checkpoints and a 172 MB transcript, and 3,000 tool calls in one reply put 3,000
refusals into the history (issue 29). Only one call runs per turn anyway; the others are refused.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage

MAX_REPLY_CHARS = 20_000  # far above any useful turn: a plan, a finish answer of a few hundred rows
MAX_TOOL_CALLS_PER_REPLY = 8
MAX_TOOL_ARGS_CHARS = 100_000  # a finish answer or a derive query; more is not an action


def _args_chars(call: dict[str, Any]) -> int:
    args = call.get("args")
    return len(args) if isinstance(args, str) else len(json.dumps(args, ensure_ascii=False, default=str))


def bound_reply(ai: AIMessage) -> tuple[AIMessage, list[str]]:
    """The reply within the caps, and one line per cut made (for the step log and the model)."""
    cuts: list[str] = []
    content = ai.content
    if isinstance(content, str) and len(content) > MAX_REPLY_CHARS:
        cuts.append(f"reply text of {len(content):,} characters cut to {MAX_REPLY_CHARS:,}")
        content = content[:MAX_REPLY_CHARS] + f"\n[cut: {len(content) - MAX_REPLY_CHARS:,} more characters]"
    calls, invalid = list(ai.tool_calls or []), list(ai.invalid_tool_calls or [])
    if len(calls) + len(invalid) > MAX_TOOL_CALLS_PER_REPLY:
        cuts.append(f"{len(calls) + len(invalid):,} tool calls in one reply: the first {MAX_TOOL_CALLS_PER_REPLY} "
                    "kept, the rest dropped unanswered (one tool call per turn)")
        calls = calls[:MAX_TOOL_CALLS_PER_REPLY]
        invalid = invalid[:max(0, MAX_TOOL_CALLS_PER_REPLY - len(calls))]
    kept = []
    for call in calls:
        size = _args_chars(call)
        if size <= MAX_TOOL_ARGS_CHARS:
            kept.append(call)
            continue
        cuts.append(f"arguments of {call.get('name')!r} of {size:,} characters refused (cap {MAX_TOOL_ARGS_CHARS:,})")
        invalid.append({"type": "invalid_tool_call", "name": call.get("name"), "id": call.get("id"),
                        "args": json.dumps(call.get("args"), default=str)[:200],
                        "error": f"arguments of {size:,} characters, over the cap of {MAX_TOOL_ARGS_CHARS:,}"})
    invalid = [dict(b, args=str(b.get("args") or "")[:MAX_TOOL_ARGS_CHARS]) for b in invalid]
    if not cuts:
        return ai, []
    extra = {k: v for k, v in ai.additional_kwargs.items() if k != "tool_calls"}  # the raw calls: not kept twice
    return ai.model_copy(update={"content": content, "tool_calls": kept, "invalid_tool_calls": invalid,
                                 "additional_kwargs": extra}), cuts
