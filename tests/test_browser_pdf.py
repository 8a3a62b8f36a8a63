"""PDF text per page, 1-based, with page and character caps."""

from __future__ import annotations

import io

import pytest
from reportlab.pdfgen import canvas

from browser.pdf import NotAPdfError, pdf_page_count, read_pdf_bytes


def _pdf(pages: list[str]) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for text in pages:
        pdf.drawString(72, 720, text)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


PAGES = ["Summary of results", "Table 2: Region North 120", "Appendix A methods", "References"]


def test_pages_are_numbered_from_one() -> None:
    pages = read_pdf_bytes(_pdf(PAGES), max_pages=10, max_chars=10_000)
    assert [p.page for p in pages] == [1, 2, 3, 4]
    assert [p.text.strip() for p in pages] == PAGES


def test_page_cap() -> None:
    data = _pdf(PAGES)
    pages = read_pdf_bytes(data, max_pages=2, max_chars=10_000)
    assert [p.page for p in pages] == [1, 2] and pdf_page_count(data) == 4


def test_character_cap_cuts_the_last_page_kept() -> None:
    pages = read_pdf_bytes(_pdf(PAGES), max_pages=10, max_chars=25)
    assert [p.page for p in pages] == [1, 2]
    assert pages[0].text.strip() == "Summary of results"
    assert sum(len(p.text) for p in pages) == 25


@pytest.mark.parametrize("data", [b"<!doctype html><title>404</title>", b"", b"%PDF-1.4 truncated garbage"])
def test_non_pdf_is_a_clear_error(data: bytes) -> None:
    with pytest.raises(NotAPdfError, match="PDF"):
        read_pdf_bytes(data, max_pages=5, max_chars=1000)


def test_first_page_reads_the_pages_a_read_left_out() -> None:
    pages = read_pdf_bytes(_pdf(PAGES), max_pages=2, max_chars=10_000, first_page=3)
    assert [(p.page, p.text.strip()) for p in pages] == [(3, "Appendix A methods"), (4, "References")]
