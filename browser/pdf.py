"""PDF text per page with 1-based page numbers, so every extracted row can cite its page."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from browser.types import PdfPage


class NotAPdfError(ValueError):
    """The bytes are not a readable PDF (an HTML error page served as .pdf is the usual case)."""


def read_pdf_bytes(data: bytes, *, max_pages: int, max_chars: int, first_page: int = 1) -> list[PdfPage]:
    """Text of `max_pages` pages from `first_page` on (1-based); `max_chars` caps the total, cutting the last
    page kept.

    A page whose text cannot be extracted yields an empty page rather than failing the whole file.
    """
    head = data[:1024].lstrip()
    if not head.startswith(b"%PDF-"):
        preview = head[:40].decode("latin-1", "replace")
        raise NotAPdfError(f"not a PDF (starts with {preview!r}); is the link an HTML page or an error?")
    try:
        reader = PdfReader(io.BytesIO(data))
        total = len(reader.pages)
    except (PdfReadError, ValueError, OSError) as exc:
        raise NotAPdfError(f"unreadable PDF: {exc}") from exc
    pages: list[PdfPage] = []
    budget = max_chars
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns on every odd font; data, not news
    for number in range(first_page, min(total, first_page + max_pages - 1) + 1):
        if budget <= 0:
            break
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as exc:  # pypdf raises many types on damaged content streams
            text = f"[page text not extractable: {type(exc).__name__}]"
        text = text[:budget]
        budget -= len(text)
        pages.append(PdfPage(page=number, text=text))
    return pages


def pdf_page_count(data: bytes) -> int:
    """Pages in the document (to tell the caller how many were left out by the caps)."""
    try:
        return len(PdfReader(io.BytesIO(data)).pages)
    except (PdfReadError, ValueError, OSError) as exc:
        raise NotAPdfError(f"unreadable PDF: {exc}") from exc
