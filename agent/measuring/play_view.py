"""What a player sees of a model request (`players.py`): the system prompt and each tool once, then only the
messages new since the previous request of the same conversation. A tool is shown as a compact signature, one
short line per parameter with its description, and its short answer form (`play_replies.py`), instead of its
JSON schema on one line (a terminal player read 1,500-character lines); `:schema TOOL` shows the JSON whole.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agent.measuring.play_replies import short_form

_TYPES = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "null": "null"}
MAX_SIGNATURE_CHARS = 400  # a nested schema (the Plan tool's) is cut after this: `:schema TOOL` has it whole


def _h(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def type_of(schema: Any) -> str:
    """A schema as a short type: `str`, `int`, `a|b` (an enum), `[T]`, `{name: T, opt?: T}`, `{str: T}`."""
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return "|".join(type_of(s) for s in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return f"[{type_of(schema.get('items'))}]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        if props:
            return "{" + ", ".join(f"{k}{'' if k in required else '?'}: {type_of(v)}" for k, v in props.items()) + "}"
        extra = schema.get("additionalProperties")
        return f"{{str: {type_of(extra)}}}" if isinstance(extra, dict) else "{...}"
    if isinstance(kind, list):
        return "|".join(_TYPES.get(k, str(k)) for k in kind)
    return _TYPES.get(str(kind), "any")


def tool_lines(tools: list[dict[str, Any]], *, short_forms: bool = True) -> list[str]:
    """Each tool: `* name(param, opt?) description`, a line per parameter, and its short form when it has one
    (`short_forms`: only where short answers are read: at the terminal; a folder's answers are JSON, and four
    folder players sent `{"ref": ...}` for `click REF`)."""
    out = []
    for tool in tools:
        f = tool["function"]
        params = f.get("parameters") or {}
        props, required = params.get("properties") or {}, set(params.get("required") or [])
        names = ", ".join(k if k in required else f"{k}?" for k in props)
        out.append(f"  * {f['name']}({names}) {(f.get('description') or '').strip()}".rstrip())
        for key, schema in props.items():
            kind = type_of(schema)
            if len(kind) > MAX_SIGNATURE_CHARS:
                kind = kind[:MAX_SIGNATURE_CHARS] + f"... (:schema {f['name']})"
            doc = (schema.get("description") or "").strip() if isinstance(schema, dict) else ""
            out.append(f"      {key}: {kind}" + (f"  - {doc}" if doc else ""))
        short = short_form(params) if short_forms else None
        if short is not None:
            out.append(f"      short: {f['name']}{' ' + short if short else ''}")
    return out


def message_lines(message: dict[str, Any]) -> list[str]:
    role, content = message.get("role"), message.get("content")
    if isinstance(content, list):
        content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    head = f"--- [{role}]" + (f" (answers {message.get('tool_call_id')})" if role == "tool" else "")
    lines = [head, *([content] if content else [])]
    lines += [f"    CALL {c['function']['name']} {c['function']['arguments']}  ({c['id']})"
              for c in message.get("tool_calls") or []]
    return lines


class RequestView:
    """What is new in each request: a system prompt or tool not shown before, then the new messages."""

    def __init__(self, *, short_forms: bool = True) -> None:
        self.short_forms = short_forms
        self.seen: set[str] = set()
        self.previous: dict[str, list[dict[str, Any]]] = {}  # system prompt hash -> that conversation's messages

    def render(self, n: int, body: dict[str, Any], *, full: bool = False) -> str:
        messages = body.get("messages") or []
        system = messages[0].get("content") if messages and messages[0].get("role") == "system" else None
        choice = body.get("tool_choice")
        lines = [f"=== REQUEST {n}  tools: {', '.join(t['function']['name'] for t in body.get('tools') or [])}"
                 + (f"  tool_choice: {json.dumps(choice)}" if choice not in (None, "auto") else "")]
        if system is not None and (full or f"sys:{_h(system)}" not in self.seen):
            lines += ["=== SYSTEM PROMPT", str(system)]
            self.seen.add(f"sys:{_h(system)}")
        new_tools = [t for t in body.get("tools") or [] if full or f"tool:{_h(t)}" not in self.seen]
        if new_tools:
            lines += ["=== TOOLS (not shown before)", *tool_lines(new_tools, short_forms=self.short_forms)]
            self.seen.update(f"tool:{_h(t)}" for t in new_tools)
        start = 1 if system is not None else 0
        before = self.previous.get(_h(system))
        if before is not None and not full:
            same = 0
            while same < min(len(before), len(messages)) and before[same] == messages[same]:
                same += 1
            start = min(max(start, same), len(messages) - 1)
            if start > 1:
                lines.append(f"=== ({start - 1} earlier messages unchanged)")
        self.previous[_h(system)] = messages
        for message in messages[start:]:
            lines += message_lines(message)
        return "\n".join(lines)
