"""Which result pages of each result set the reads covered, and how many pages each set has: one answer for the
`[pages]` check and a phase's progress line.

A page is numbered by what the site says (`page i of n`, a pager's current page), else by the rows it shows:
'Showing 21-23 of 23' on a last page with no pager says no page number, and was logged as page 1 (so the
`[pages]` check called a page unread after it was read). Such a read records the row range it showed
(`ReadRecord.rows_range`), and its page is the range's place in the set at the set's page size (the longest range
any read of the set showed: only the last page is shorter). The set's page count likewise comes from its total
and that size when no read said it.
"""

from __future__ import annotations

from graph.state import ReadRecord


def pages_read(reads: list[ReadRecord]) -> tuple[dict[str, set[int]], dict[str, int]]:
    """result set -> the page numbers read, and result set -> its page count (where known; a complete read's
    set is left out of the counts: it holds every page)."""
    size: dict[str, int] = {}
    for read in reads:
        if (span := read.get("rows_range")) and span[1] >= span[0]:
            size[read["result_set"]] = max(size.get(read["result_set"], 0), span[1] - span[0] + 1)
    covered: dict[str, set[int]] = {}
    counts: dict[str, int] = {}
    for read in reads:
        key = read["result_set"]
        pages = set(read["pages_covered"])
        if not pages and (span := read.get("rows_range")) and size.get(key):
            pages = {(span[0] - 1) // size[key] + 1}
        covered.setdefault(key, set()).update(pages)
        count = read["pages"] or (-(-read["site_total"] // size[key])
                                  if read.get("rows_range") and read["site_total"] and size.get(key) else None)
        if count and not read.get("complete"):
            counts[key] = max(counts.get(key, 0), count)
    return covered, counts
