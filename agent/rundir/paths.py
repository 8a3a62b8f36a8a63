"""Paths in run folders built from names that come from users and task files (task ids, model and variant
names). One rule everywhere such a name is joined into a path, checked before anything is written or
removed: each name becomes exactly one safe segment, and the joined path must stay strictly inside its root
(symlinks resolved), so `../../victim`, `/abs`, `a/b` or a symlinked folder can never reach outside it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SEGMENT = 120  # well under the 255-byte name limit, with room for suffixes such as `.sqlite`


class UnsafePath(ValueError):
    """A path built from a name would leave its run folder; the message names both."""


def safe_segment(name: str) -> str:
    """One folder-safe, stable path segment: separators and other unsafe characters become `_`, leading and
    trailing dots go (no `.`, `..` or hidden names), and an over-long name is cut and suffixed with its hash.
    Distinct names may map to one segment; `plan_cells` refuses such a pair in one run."""
    cleaned = _UNSAFE.sub("_", str(name)).strip("._") or "_"
    if len(cleaned) > _MAX_SEGMENT:
        digest = hashlib.sha256(str(name).encode()).hexdigest()[:12]
        cleaned = f"{cleaned[:_MAX_SEGMENT - 13]}-{digest}"
    return cleaned


def ensure_inside(root: Path, path: Path) -> Path:
    """`path` unchanged when it lies strictly below `root` once symlinks are resolved; else `UnsafePath`."""
    base, target = Path(root).resolve(), Path(path).resolve()
    if target == base or not target.is_relative_to(base):
        raise UnsafePath(f"{path} is not inside the run folder {root}")
    return Path(path)


def run_path(root: Path, *names: str) -> Path:
    """`root/<safe name>/<safe name>/...`, checked to stay inside `root`."""
    return ensure_inside(root, Path(root).joinpath(*(safe_segment(n) for n in names)))
