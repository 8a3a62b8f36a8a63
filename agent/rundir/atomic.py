"""Crash-safe writes: a reader (or a rerun after `kill -9`) sees the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; results are meant to be read by others (a host user, a web server).
FILE_MODE = 0o666 & ~_current_umask()


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable (POSIX needs the directory entry flushed too)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")


def replace_dir_atomic(src: Path, dst: Path) -> None:
    """Move a fully written folder into place in one rename (both on the same filesystem). A folder already
    there (a failed cell run again by `--retry-failed`) is first renamed aside beside `src`, then deleted: a kill
    in between leaves the cell unfinished (it runs again), never half of each."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if dst.is_dir() and not dst.is_symlink():
        old = src.with_name(src.name + ".replaced")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dst, old)
    os.replace(src, dst)
    fsync_dir(dst.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
