"""PDF pages as the text a model reads (`--- page N ---`), within a budget; the pages left out are named with
the read that returns them. Kept apart from `browser.pdf` so renderers need no PDF library."""

from __future__ import annotations

from browser.types import PdfPage


def pages_text(pages: list[PdfPage], *, max_chars: int) -> str:
    """The pages as text under `--- page N ---` lines, whole pages within `max_chars` (the first page cut if it
    alone is over), then which pages were left out and how to read them (`read_pdf` with `first_page`)."""
    lines: list[str] = []
    used = 0
    shown = 0
    for page in pages:
        text = page.text.strip()
        if shown and used + len(text) > max_chars:
            break
        if not shown and len(text) > max_chars:
            text = text[:max_chars] + f" … (page cut at {max_chars} characters)"
        lines += [f"--- page {page.page} ---", text]
        used += len(text)
        shown += 1
    if shown < len(pages):
        lines.append(f"--- pages {pages[shown].page}-{pages[-1].page} not shown: read_pdf with first_page="
                     f"{pages[shown].page}; extract_rows source=pdf reads every page read ---")
    return "\n".join(lines)
