"""Regexes the model writes - `re:` sources of read_facts / extract_rows, the `pattern` of page-text and PDF rows -
run in the `regex` engine (Python's `re` syntax) with a deadline.

Python's `re` cannot be stopped: `(a+)+$` over `code: aaaa...a!` backtracks for hours, and it holds the GIL
while it does, so one such pattern froze a bench cell past its cancel deadline and every other cell of the
process with it (issue 40). Here a match that runs past `REGEX_SECONDS` is stopped by the engine itself and is
a tool error the model can correct (`PatternError`); the engine releases the GIL while it matches
(`concurrent=True`), and the nodes run a read in a worker thread, so the event loop goes on meanwhile.
"""

from __future__ import annotations

import regex

REGEX_SECONDS = 2.0  # per search or per findall over one text: page-sized texts match in milliseconds
MULTILINE = regex.MULTILINE


class PatternError(ValueError):
    """A pattern that does not compile, or that ran past its deadline; the message is for the model."""


def compile_pattern(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern, flags)
    except (regex.error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise PatternError(f"regex {pattern!r} does not compile: {exc}") from exc


def _too_slow(pattern: str, text: str, seconds: float) -> PatternError:
    return PatternError(f"regex {pattern!r} ran past its {seconds:g} s limit on {len(text):,} characters and was "
                        "stopped (nested repeats such as (a+)+ backtrack without end): write a simpler pattern, "
                        "anchored on the text around the value")


def search(pattern: str, text: str, *, flags: int = 0, seconds: float | None = None) -> regex.Match[str] | None:
    """The first match of the model's `pattern` in `text`, or None; PatternError when it does not compile or
    runs past `seconds` (REGEX_SECONDS)."""
    compiled = compile_pattern(pattern, flags)
    seconds = REGEX_SECONDS if seconds is None else seconds
    try:
        return compiled.search(text, timeout=seconds, concurrent=True)
    except TimeoutError as exc:
        raise _too_slow(pattern, text, seconds) from exc


def search_compiled(compiled: regex.Pattern[str], text: str, *, seconds: float) -> regex.Match[str] | None:
    """The first match of a compiled pattern in `text` within `seconds` (a share of a deadline that several texts
    split, such as one cell per row); PatternError past it."""
    try:
        return compiled.search(text, timeout=max(seconds, 0.001), concurrent=True)
    except TimeoutError as exc:
        raise _too_slow(compiled.pattern, text, seconds) from exc


def find_all(compiled: regex.Pattern[str], text: str, *, seconds: float | None = None) -> list[regex.Match[str]]:
    """Every match of a compiled pattern in `text`, all found within `seconds` (REGEX_SECONDS; PatternError past
    it)."""
    seconds = REGEX_SECONDS if seconds is None else seconds
    try:
        return list(compiled.finditer(text, timeout=seconds, concurrent=True))
    except TimeoutError as exc:
        raise _too_slow(compiled.pattern, text, seconds) from exc
