"""Lines of an answer, one at a time: `str.splitlines()` without building the list.

A 50 MB answer split at once costs several times its size in line objects; scoring walks it line by
line instead, so peak memory stays a small multiple of the answer (issue 21).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Exactly the boundaries `str.splitlines()` uses (`\r\n` counts as one).
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def iter_lines(text: str) -> Iterator[str]:
    """Same lines as `text.splitlines()`, produced lazily."""
    start = 0
    for match in _LINE_BREAK.finditer(text):
        yield text[start : match.start()]
        start = match.end()
    if start < len(text):
        yield text[start:]


def iter_split(text: str, separator: str) -> Iterator[str]:
    """Same pieces as `text.split(separator)`, produced lazily."""
    start = 0
    while True:
        end = text.find(separator, start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + len(separator)
