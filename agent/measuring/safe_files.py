"""Files another program hands us (a play folder's answers, a run folder, a decision path), read without trusting
them, and the files a played run writes, kept private.

Why: `sgr path replay /dev/zero` read 10 GB; a FIFO named `resp-N.json` blocked a play for ever; a directory or
JSON nested 100,000 deep escaped as a traceback; request files were readable by every local user. A read here is
of a regular file only (opened without following a final symlink and without blocking, so a FIFO or device is
refused at once), up to a cap, and JSON is refused past a nesting depth. Every refusal is one `UnsafeFile` line.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_JSON_DEPTH = 64  # a tool call's arguments nest 4 deep; json.loads recurses once per level


class UnsafeFile(ValueError):
    """A file that is not read: not a regular file, over its cap, not text, or JSON too deep. One line."""


def read_bytes(path: Path, cap: int) -> bytes:
    """The bytes of a regular file of at most `cap` bytes."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(f"{path}: a symbolic link, not read (give the file itself)") from exc
        raise UnsafeFile(f"{path}: cannot open it ({exc.strerror or exc})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode)
                    else "a device or socket")
            raise UnsafeFile(f"{path}: {kind}, not a regular file")
        if info.st_size > cap:
            raise UnsafeFile(f"{path}: {info.st_size:,} bytes, over the cap of {cap:,}")
        with os.fdopen(os.dup(fd), "rb") as handle:  # the file may grow while it is read: at most cap + 1 bytes
            data = handle.read(cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise UnsafeFile(f"{path}: over the cap of {cap:,} bytes")
    return data


def read_text(path: Path, cap: int) -> str:
    data = read_bytes(path, cap)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"{path}: not UTF-8 text (byte {exc.start})") from exc


def loads(text: str, where: str = "JSON", max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """`json.loads`, refusing nesting past `max_depth` before parsing (so no later walk of the value recurses
    deeply); `None` skips that pass (a large file of many small lines) and only a RecursionError is caught."""
    if max_depth is not None and _depth(text) > max_depth:
        raise UnsafeFile(f"{where}: nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise UnsafeFile(f"{where}: nested too deeply") from exc
    except ValueError as exc:
        raise UnsafeFile(f"{where}: not JSON ({exc})") from exc


def read_json(path: Path, cap: int, max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    return loads(read_text(path, cap), str(path), max_depth)


def _depth(text: str) -> int:
    """The deepest bracket nesting outside strings: an upper bound of the JSON's depth, in one pass."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` whole (a temporary file renamed over it), readable by this user only (0600)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    tmp.rename(path)


def append_private(path: Path, text: str) -> None:
    """Append to `path`, made 0600 if it is new."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(text)
