"""Who answers a played model's requests (`play_server.py`): a person at the terminal, or another program
through a folder. Both see a request as the model would, shown as it grows: the system prompt and each tool's
schema once, then only the messages that are new since the previous request of the same conversation. Both
answer with one tool call (`{"tool": NAME, "args": {...}}`) or text (`{"content": "..."}`), checked against
the request's own tool schemas before it is sent: a mistake is shown and the request stays open.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Protocol, TextIO

import jsonschema

PROMPT = "answer> "
HELP = ("answer with one tool call: TOOL {json args}   (JSON may span lines)\n"
        "  or: say TEXT (a reply without a tool call)   :full  the whole request   :tools  every tool's schema")


class Player(Protocol):
    who: dict[str, str]  # {"kind": "person" | "llm" | "program", "name": ...}

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]: ...

    def refused(self, n: int, error: str) -> None: ...


def parse_player(text: str | None, default: str) -> dict[str, str]:
    """`person`, `program`, `llm:NAME` (e.g. llm:claude-sonnet-4) or `program:NAME`."""
    kind, _, name = (text or default).partition(":")
    if kind not in ("person", "llm", "program"):
        raise ValueError(f"--player {text!r}: write person, llm:NAME or program:NAME")
    return {"kind": kind, **({"name": name} if name else {})}


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
    if name not in tools:
        return f"no tool {name!r} in this request; offered: {', '.join(tools)}"
    if forced and name != forced:
        return f"this request requires a call to {forced}"
    if not isinstance(args, dict):
        return "args must be a JSON object"
    try:
        jsonschema.validate(args, tools[name].get("parameters") or {"type": "object"})
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "args"
        return f"{name}: {where}: {exc.message}"
    return None


def _h(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def _compact(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _compact(v) for k, v in schema.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(schema, list):
        return [_compact(v) for v in schema]
    return schema


def tool_lines(tools: list[dict[str, Any]]) -> list[str]:
    out = []
    for tool in tools:
        f = tool["function"]
        out += [f"  * {f['name']}: {(f.get('description') or '').strip()}",
                f"      parameters: {json.dumps(_compact(f.get('parameters') or {}))}"]
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

    def __init__(self) -> None:
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
            lines += ["=== TOOLS (not shown before)", *tool_lines(new_tools)]
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


def parse_line(text: str) -> dict[str, Any]:
    """`TOOL {json}` or `say TEXT` as a reply; ValueError with the reason otherwise."""
    text = text.strip()
    if text.startswith("say "):
        return {"content": text[4:]}
    name, _, rest = text.partition(" ")
    if not name:
        raise ValueError("empty answer")
    try:
        args = json.loads(rest) if rest.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not JSON: {exc}") from exc
    return {"tool": name, "args": args}


class TerminalPlayer:
    """A person: the request on `out`, the answer typed on `inp`; a mistake is shown and the request kept."""

    def __init__(self, who: dict[str, str] | None = None, *, inp: TextIO | None = None, out: TextIO | None = None):
        self.who = who or {"kind": "person"}
        self.inp, self.out = inp or sys.stdin, out or sys.stderr
        self.view = RequestView()

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self) -> str:
        """One answer; a JSON object may span lines (read until it parses or a blank line ends it)."""
        self.out.write(PROMPT)
        self.out.flush()
        text = self.inp.readline()
        if not text:
            raise EOFError("the terminal closed: no answer")
        while "{" in text and not text.strip().startswith("say "):
            try:
                parse_line(text)
                break
            except ValueError:
                more = self.inp.readline()
                if not more.strip():
                    break
                text += more
        return text

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        self._say(self.view.render(n, body))
        self._say(HELP)
        while True:
            text = self._read().strip()
            if text in (":full", ":tools"):
                self._say(self.view.render(n, body, full=True) if text == ":full"
                          else "\n".join(tool_lines(body.get("tools") or [])))
                continue
            try:
                reply = parse_line(text)
            except ValueError as exc:
                self._say(f"! {exc}; the request is still open")
                continue
            problem = check_reply(reply, body)
            if problem is None:
                return reply
            self._say(f"! {problem}; the request is still open")

    def refused(self, n: int, error: str) -> None:
        self._say(f"! request {n} was refused as a hosted API would (HTTP 400): {error}")


class FolderPlayer:
    """Another program: each request as `req-N.json` (the OpenAI body) and `req-N.txt` (what is new in it), each
    answer read from `resp-N.json`. A reply that does not fit the request is moved to `resp-N.rejected.json`
    with the reason in `resp-N.error.txt`, and the request stays open for a new `resp-N.json`."""

    def __init__(self, folder: Path, who: dict[str, str] | None = None, *, poll: float = 0.2):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.who = who or {"kind": "program"}
        self.poll = poll
        self.view = RequestView()

    def _write(self, name: str, text: str) -> None:
        tmp = self.folder / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.rename(self.folder / name)

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        self._write(f"req-{n}.txt", self.view.render(n, body) + "\n")
        self._write(f"req-{n}.json", json.dumps(body, indent=1, ensure_ascii=False))
        resp = self.folder / f"resp-{n}.json"
        while True:
            while not resp.exists():
                time.sleep(self.poll)
            try:
                reply = self._read(resp)
                problem = check_reply(reply, body)
            except ValueError as exc:
                problem = f"not JSON: {exc}"
            if problem is None:
                (self.folder / f"resp-{n}.error.txt").unlink(missing_ok=True)
                return reply
            resp.rename(self.folder / f"resp-{n}.rejected.json")
            self._write(f"resp-{n}.error.txt", problem + "\n")

    def _read(self, resp: Path) -> Any:
        """A file still being written may not parse yet: read again once after a pause before refusing it."""
        try:
            return json.loads(resp.read_text(encoding="utf-8"))
        except ValueError:
            time.sleep(max(self.poll, 0.5))
            return json.loads(resp.read_text(encoding="utf-8"))

    def refused(self, n: int, error: str) -> None:
        self._write(f"req-{n}.refused.txt", f"HTTP 400 (as a hosted API answers it): {error}\n")
