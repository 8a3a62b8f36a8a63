"""A player's answer (`players.py`): read from what was typed or written, and checked against the request's own
tool schemas before it is sent as the model's reply.

An answer is one tool call `{"tool": NAME, "args": {...}}` or text `{"content": "..."}`. At the terminal it is
typed as `TOOL {json args}`, `say TEXT`, or the short form, made from the tool's own schema so that it holds for
any tool: the words fill the parameters in order (required ones first), a ref such as `e12` (or `label=...`,
`text=...`, `selector=...`) is a target, `true`/`false` a boolean, and the last required text parameter (or a
list of texts, comma-separated) takes the rest of the line:

    click e12            select e4 New York        fill e7 2021-01-01       check e9 false
    goto http://...      read_table 2              finish year desc, name   set_range e3 e5 2020 2021

A word with spaces before the end is quoted ("New York"). A tool whose required parameters are objects or
lists of objects (a plan, columns, fields) is answered in JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from graph.tools.tool_schemas import TARGET_FIELDS

_WORD = re.compile(r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^\s"\']+)+')  # quoted parts hold spaces
_REF = re.compile(r"^[a-z]\d+$")
_TARGET_KEY = re.compile(r"^([a-z_]+)=(.*)$", re.S)
_SCALARS = {"string": "TEXT", "integer": "N", "number": "N", "boolean": "true|false"}


def check_reply(reply: Any, body: dict[str, Any]) -> str | None:
    """Why a reply cannot be sent as the model's answer to this request; None when it can."""
    if not isinstance(reply, dict) or ("tool" in reply) == ("content" in reply):
        return 'a reply is {"tool": NAME, "args": {...}} or {"content": "..."}'
    tools = {t["function"]["name"]: t["function"] for t in body.get("tools") or []}
    choice = body.get("tool_choice")
    forced = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    if "content" in reply:
        if forced or choice == "required":
            return f"this request requires a tool call{f' to {forced}' if forced else ''}"
        return None if isinstance(reply["content"], str) else "content must be a string"
    name, args = reply["tool"], reply.get("args", {})
    if not isinstance(name, str):
        return "the tool name must be a string"
    if name not in tools:
        return f"no tool {name[:80]!r} in this request; offered: {', '.join(tools)}"
    if forced and name != forced:
        return f"this request requires a call to {forced}"
    if not isinstance(args, dict):
        return "args must be a JSON object"
    try:
        jsonschema.validate(args, tools[name].get("parameters") or {"type": "object"})
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "args"
        return f"{name}: {where}: {exc.message[:300]}"
    except RecursionError:
        return f"{name}: args are nested too deeply"
    return None


def _kind(key: str, schema: Any) -> str | None:
    """How a parameter is typed in the short form: target, list (of texts), a scalar type, or None (JSON only)."""
    if key in TARGET_FIELDS:
        return "target"
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return "string"
    kind = schema.get("type")
    if kind == "array" and (schema.get("items") or {}).get("type") == "string":
        return "list"
    return kind if kind in _SCALARS else None


def _positional(params: dict[str, Any]) -> list[tuple[str, str]] | None:
    """The parameters the short form fills, in order, with their kinds; None when the tool has no short form."""
    props, required = params.get("properties") or {}, list(params.get("required") or [])
    order = [k for k in props if k in required] + [k for k in props if k not in required]
    out: list[tuple[str, str]] = []
    for key in order:
        kind = _kind(key, props[key])
        if kind is None:
            if key in required:
                return None
            break
        out.append((key, kind))
        if kind == "list" or (kind == "string" and required and key == required[-1]):
            break  # it takes the rest of the line
    reached = {key for key, _ in out}
    structured = [key for key in props if key not in reached and _kind(key, props[key]) is None]
    if props and not required and (not out or len(structured) > len(out)):
        return None  # only optional words, and mostly objects out of reach (a plan, a filter): JSON says it
    return out


def short_form(params: dict[str, Any]) -> str | None:
    """The short form's words, e.g. `TARGET OPTION...` ('' for a tool without parameters); None when none."""
    positional = _positional(params)
    if positional is None:
        return None
    words = []
    for n, (key, kind) in enumerate(positional):
        last = n == len(positional) - 1
        word = {"target": "REF", "list": f"{key.upper()},..."}.get(kind) or (
            key.upper() if kind == "string" else _SCALARS[kind])
        optional = key not in (params.get("required") or [])
        words.append(f"[{word}]" if optional else word + ("..." if last and kind == "string" else ""))
    return " ".join(words)


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] == '"':
        return json.loads(word)
    if len(word) >= 2 and word[0] == word[-1] == "'":
        return word[1:-1]
    return word


def _value(key: str, kind: str, word: str) -> Any:
    if kind == "target":
        word = _unquote(word)
        if _REF.match(word):
            return {"ref": word}
        keyed = _TARGET_KEY.match(word)
        if keyed:
            return {keyed.group(1): _unquote(keyed.group(2))}
        raise ValueError(f"{key}: {word!r} is not a ref such as e12 (or label=..., text=..., selector=...)")
    if kind == "boolean":
        if word.lower() not in ("true", "false", "yes", "no"):
            raise ValueError(f"{key}: {word!r} is not true or false")
        return word.lower() in ("true", "yes")
    if kind in ("integer", "number"):
        try:
            return int(word) if kind == "integer" else float(word)
        except ValueError:
            raise ValueError(f"{key}: {word!r} is not a number") from None
    if kind == "list":
        return [part.strip() for part in word.split(",") if part.strip()]
    return _unquote(word)


def short_args(rest: str, params: dict[str, Any], tool: str) -> dict[str, Any]:
    """The arguments a short answer gives (`rest`: the line after the tool name); ValueError with the reason."""
    positional = _positional(params)
    if positional is None:
        raise ValueError(f"{tool} has no short form: answer {tool} {{json args}}")
    args: dict[str, Any] = {}
    pos = 0
    for n, (key, kind) in enumerate(positional):
        match = _WORD.search(rest, pos)
        if match is None:
            break
        takes_rest = n == len(positional) - 1 and kind in ("string", "list")
        word = rest[match.start():].strip() if takes_rest else match.group()
        args[key] = _value(key, kind, word)
        pos = len(rest) if takes_rest else match.end()
    if rest[pos:].strip():
        raise ValueError(f"{tool}: more words than parameters ({rest[pos:].strip()[:60]!r}); short form: "
                         f"{tool} {short_form(params)}")
    return args


def parse_line(text: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """`TOOL {json}`, `say TEXT`, or (given the request `body`) the tool's short form; ValueError otherwise."""
    text = text.strip()
    if text.startswith("say "):
        return {"content": text[4:]}
    name, _, rest = text.partition(" ")
    if not name:
        raise ValueError("empty answer")
    rest = rest.strip()
    if not rest or rest.startswith("{"):
        try:
            args = json.loads(rest) if rest else {}
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not JSON: {exc}") from exc
        except RecursionError as exc:
            raise ValueError("arguments are nested too deeply") from exc
        return {"tool": name, "args": args}
    tools = {t["function"]["name"]: t["function"] for t in (body or {}).get("tools") or []}
    if name not in tools:
        raise ValueError(f"no tool {name!r} in this request" if body else f"arguments are not JSON: {rest[:40]!r}")
    return {"tool": name, "args": short_args(rest, tools[name].get("parameters") or {}, name)}
