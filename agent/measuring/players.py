"""Who answers a played model's requests (`play_server.py`): a person at the terminal, or another program
through a folder. Both see a request as the model would (`play_view.py`) and answer with one tool call or
text, checked against the request's own tool schemas before it is sent (`play_replies.py`): a mistake is shown
and the request stays open.

A player may stop the run: at the terminal `:quit`, Ctrl-C or Ctrl-D (`PlayerStopped`; the server ends the run
as stopped by the player). A folder is one run's: it must be new or empty, and it is locked while the run
plays through it, so an old `resp-N.json` is never taken as an answer and two runs never share a folder. Each
answer file is read as untrusted (`safe_files.py`): a directory, a FIFO, a huge or deeply nested file is set
aside with a one-line reason, without blocking and without ending the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import sys
import threading
import time
from pathlib import Path
from typing import Any, Protocol, TextIO

from agent.measuring.play_replies import check_reply, parse_line
from agent.measuring.play_view import RequestView, tool_lines
from agent.measuring.safe_files import UnsafeFile, read_json, write_private

PROMPT = "answer> "
HELP = ("answer: TOOL {json args} | the short form (e.g. click e12, select e4 Ohio, finish) | say TEXT\n"
        "  :full the whole request   :tools every tool   :schema TOOL its JSON schema   :quit (or Ctrl-C, Ctrl-D) "
        "stop the run")
MAX_ANSWER_BYTES = 1_000_000  # an answer is one tool call: a few KB
LOCK_FILE = ".play.lock"
DONE_FILE = "DONE"  # written when the run is over: a helper's loop (step.py) stops waiting


class PlayerStopped(Exception):
    """The player ended the run (`how`: ':quit', 'Ctrl-C', 'Ctrl-D (end of input)')."""

    def __init__(self, how: str):
        super().__init__(how)
        self.how = how


class PlayFolderError(ValueError):
    """A play folder that cannot hold this run: not empty, in use by another run, not a folder. One line."""


class Player(Protocol):
    who: dict[str, str]  # {"kind": "person" | "llm" | "program", "name": ...}

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]: ...

    def refused(self, n: int, error: str) -> None: ...

    def stop(self, how: str) -> None: ...

    def close(self) -> None: ...


def parse_player(text: str | None, default: str) -> dict[str, str]:
    """`person`, `program`, `llm:NAME` (e.g. llm:claude-sonnet-4) or `program:NAME`."""
    kind, _, name = (text or default).partition(":")
    if kind not in ("person", "llm", "program"):
        raise ValueError(f"--player {text!r}: write person, llm:NAME or program:NAME")
    return {"kind": kind, **({"name": name} if name else {})}


class _Lines:
    """Lines from the terminal that a stop can interrupt: a file with a descriptor is polled (a blocked
    `readline` in a thread cannot be woken), anything else (a StringIO in a test) is read directly."""

    def __init__(self, inp: TextIO, stopping: threading.Event):
        self.inp, self.stopping = inp, stopping
        try:
            self.fd: int | None = inp.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.buffer = b""

    def readline(self) -> str:
        """One line ('' at the end of input); PlayerStopped('Ctrl-C') once a stop was asked for."""
        if self.fd is None:
            return self.inp.readline()
        while b"\n" not in self.buffer:
            if self.stopping.is_set():
                raise PlayerStopped("Ctrl-C")
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                line, self.buffer = self.buffer, b""
                return line.decode("utf-8", errors="replace")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace") + "\n"


class TerminalPlayer:
    """A person: the request on `out`, the answer typed on `inp`; a mistake is shown and the request kept."""

    def __init__(self, who: dict[str, str] | None = None, *, inp: TextIO | None = None, out: TextIO | None = None):
        self.who = who or {"kind": "person"}
        self.out = out or sys.stderr
        self.view = RequestView()
        self.stopping = threading.Event()
        self.lines = _Lines(inp or sys.stdin, self.stopping)

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _read(self, body: dict[str, Any]) -> str:
        """One answer; a JSON object may span lines (read until it parses or a blank line ends it)."""
        self.out.write(PROMPT)
        self.out.flush()
        text = self.lines.readline()
        if not text:
            raise PlayerStopped("Ctrl-D (end of input)")
        while "{" in text and not text.strip().startswith("say "):
            try:
                parse_line(text, body)
                break
            except ValueError:
                more = self.lines.readline()
                if not more.strip():
                    break
                text += more
        return text

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        if self.stopping.is_set():
            raise PlayerStopped("Ctrl-C")
        self._say(self.view.render(n, body))
        self._say(HELP)
        tools = body.get("tools") or []
        while True:
            text = self._read(body).strip()
            if text in (":quit", ":q"):
                raise PlayerStopped(":quit")
            if text in (":full", ":tools", ":help"):
                self._say(self.view.render(n, body, full=True) if text == ":full"
                          else "\n".join(tool_lines(tools)) if text == ":tools" else HELP)
                continue
            if text.startswith(":schema"):
                self._say(_schema(tools, text.removeprefix(":schema").strip()))
                continue
            try:
                reply = parse_line(text, body)
            except ValueError as exc:
                self._say(f"! {exc}; the request is still open")
                continue
            problem = check_reply(reply, body)
            if problem is None:
                return reply
            self._say(f"! {problem}; the request is still open")

    def refused(self, n: int, error: str) -> None:
        self._say(f"! request {n} was refused as a hosted API would (HTTP 400): {error}")

    def stop(self, how: str) -> None:
        """Asked from another thread (Ctrl-C): the pending answer, or the next request, ends the run."""
        if not self.stopping.is_set():
            self.stopping.set()
            self._say(f"\n! {how}: the run stops at its next model request, recorded as stopped by the player "
                      "(Ctrl-C again aborts at once)")

    def close(self) -> None:
        self.stopping.set()  # silently: the run is over


def _schema(tools: list[dict[str, Any]], name: str) -> str:
    import json

    match = [t["function"] for t in tools if t["function"]["name"] == name]
    if not match:
        return f"! no tool {name!r} in this request; offered: {', '.join(t['function']['name'] for t in tools)}"
    return json.dumps(match[0].get("parameters") or {}, indent=1)


def check_play_folder(folder: Path) -> None:
    """A folder a run may play through: new, or an empty folder; PlayFolderError (one line) otherwise."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise PlayFolderError(f"--folder {folder}: not a folder")
    if not folder.exists():
        return
    names = sorted(p.name for p in folder.iterdir())
    if LOCK_FILE in names:
        raise PlayFolderError(f"--folder {folder}: another run is playing through this folder (or one was killed "
                              "in it); give a new or empty folder")
    if names:
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        raise PlayFolderError(f"--folder {folder}: not empty ({shown}); a play folder holds one run's requests and "
                              "answers, so old answers are never taken as new ones: give a new or empty folder")


class FolderPlayer:
    """Another program: each request as `req-N.json` (the OpenAI body) and `req-N.txt` (what is new in it), each
    answer read from `resp-N.json`. A reply that does not fit the request (or a file that is not one) is moved
    to `resp-N.rejected.json` with the reason in `resp-N.error.txt`, and the request stays open for a new
    `resp-N.json`. The folder is claimed on creation (new or empty, then locked) and `DONE` marks the end."""

    def __init__(self, folder: Path, who: dict[str, str] | None = None, *, poll: float = 0.2):
        self.folder = Path(folder)
        self.who = who or {"kind": "program"}
        self.poll = poll
        self.view = RequestView(short_forms=False)  # its answers are JSON files
        self.stopping = threading.Event()
        self._lock: int | None = self._claim()

    def _claim(self) -> int:
        check_play_folder(self.folder)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.folder / LOCK_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError as exc:
            raise PlayFolderError(f"--folder {self.folder}: another run is playing through this folder") from exc
        except OSError as exc:
            raise PlayFolderError(f"--folder {self.folder}: cannot use it ({exc.strerror or exc})") from exc
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode())
        others = sorted(p.name for p in self.folder.iterdir() if p.name != LOCK_FILE)
        if others:  # written between the check and the lock
            os.close(fd)
            (self.folder / LOCK_FILE).unlink(missing_ok=True)
            raise PlayFolderError(f"--folder {self.folder}: not empty ({', '.join(others[:4])}); give a new or "
                                  "empty folder")
        return fd

    def _write(self, name: str, text: str) -> None:
        write_private(self.folder / name, text)

    def answer(self, n: int, body: dict[str, Any]) -> dict[str, Any]:
        import json

        self._write(f"req-{n}.txt", self.view.render(n, body) + "\n")
        self._write(f"req-{n}.json", json.dumps(body, indent=1, ensure_ascii=False))
        resp = self.folder / f"resp-{n}.json"
        while True:
            while not os.path.lexists(resp):
                if self.stopping.is_set():
                    raise PlayerStopped(self.stopping_how)
                time.sleep(self.poll)
            try:
                reply = self._read(resp)
                problem = check_reply(reply, body)
            except UnsafeFile as exc:
                problem = str(exc).replace(str(resp), resp.name)
            if problem is None:
                (self.folder / f"resp-{n}.error.txt").unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    os.chmod(resp, 0o600)
                return reply
            self._set_aside(resp, n)
            self._write(f"resp-{n}.error.txt", " ".join(problem.split())[:500] + "\n")

    def _set_aside(self, resp: Path, n: int) -> None:
        """Move a refused answer out of the way (never over an earlier one: a directory cannot replace a file)."""
        target, k = self.folder / f"resp-{n}.rejected.json", 1
        while os.path.lexists(target):
            k += 1
            target = self.folder / f"resp-{n}.rejected-{k}.json"
        resp.rename(target)

    def _read(self, resp: Path) -> Any:
        """A file still being written may not parse yet: read again once after a pause before refusing it."""
        try:
            return read_json(resp, MAX_ANSWER_BYTES)
        except UnsafeFile as exc:
            if "not JSON" not in str(exc):
                raise
            time.sleep(max(self.poll, 0.5))
            return read_json(resp, MAX_ANSWER_BYTES)

    def refused(self, n: int, error: str) -> None:
        self._write(f"req-{n}.refused.txt", f"HTTP 400 (as a hosted API answers it): {error}\n")

    stopping_how = "the run ended"

    def stop(self, how: str) -> None:
        self.stopping_how = how
        self.stopping.set()

    def close(self) -> None:
        """The run is over: `DONE` for the program, and the folder's lock let go (its files keep it claimed)."""
        self.stopping.set()
        if self._lock is None:
            return
        with contextlib.suppress(OSError):
            self._write(DONE_FILE, "the run is over\n")
        with contextlib.suppress(OSError):
            (self.folder / LOCK_FILE).unlink()
        os.close(self._lock)
        self._lock = None
