"""Integers read from page text, bounded: a page decides what its text says, so a number of 5,000 digits
('Page 1 of 999…9') must read as "no usable number", never as Python's int-string ValueError that would
sink every observation of that page.

Every place the browser layer turns page text (pager labels, counts, page sizes, spans, typed values) into
an int goes through `page_int`.
"""

from __future__ import annotations

import re

MAX_DIGITS = 15  # 10**15 is beyond any page, row or result count a site shows


def page_int(text: str | None, *, max_digits: int = MAX_DIGITS) -> int | None:
    """The integer `text` is (ASCII digits only, spaces around allowed), or None when it is not one or has
    more than `max_digits` digits. Unicode digits ('²', '٣') are not page numbers."""
    if text is None:
        return None
    digits = str(text).strip()
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= max_digits else None


def digits_only(text: str) -> int | None:
    """The integer of the ASCII digits in `text` with everything else dropped ('1,204' -> 1204), bounded; for
    text a pattern already matched as one number with thousands separators."""
    digits = re.sub(r"[^0-9]", "", text)
    return page_int(digits) if digits else None

