"""Value canonicalization shared by gold and prediction, plus the named normalizers rules may ask for.

Canonicalization is deliberately narrow (the benchmark's rule): it removes presentation noise a model
adds around a value (Markdown links, emphasis, odd whitespace, compatibility characters) but never
case, punctuation or content. Anything stronger is opt-in per field through a named normalizer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# `[text](url)`, also with a title or a space in the URL (`[t](u "title")`), as the authors unwrap them.
_MARKDOWN_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")
_WRAPPERS = "`*"
_WHITESPACE = re.compile(r"\s+")


def canonicalize(value: str) -> str:
    """NFKC, unwrap `[text](url)` to text, strip surrounding backticks/asterisks, collapse whitespace."""
    text = unicodedata.normalize("NFKC", value)
    text = _MARKDOWN_LINK.sub(lambda m: m.group(1), text)
    text = _WHITESPACE.sub(" ", text).strip()
    while len(text) >= 2 and text[0] in _WRAPPERS and text[-1] == text[0]:
        text = text[1:-1].strip()
    return text


def loose_name(name: str) -> str:
    """Column-name identity: `Arxiv ID`, `arxiv_id` and `**arXiv-id**` are the same column."""
    return "".join(ch for ch in canonicalize(name).casefold() if ch.isalnum())


_ARXIV_URL = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^arxiv:\s*", re.IGNORECASE)
_ARXIV_VERSION = re.compile(r"v\d+$", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"^(?:(?:https?://)?(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def arxiv_id(value: str) -> str:
    """`https://arxiv.org/pdf/2301.00001v2.pdf` and `arXiv:2301.00001` both become `2301.00001`."""
    text = _ARXIV_URL.sub("", value.strip())
    text = _ARXIV_PREFIX.sub("", text)
    if text.lower().endswith(".pdf"):
        text = text[:-4]
    return _ARXIV_VERSION.sub("", text.strip("/ "))


def doi(value: str) -> str:
    """Drop the resolver prefix; DOIs are case-insensitive by specification, so fold case."""
    return _DOI_PREFIX.sub("", value.strip()).strip().casefold()


def casefold(value: str) -> str:
    return value.casefold()


def no_punctuation(value: str) -> str:
    """Remove Unicode punctuation and re-collapse the spaces it leaves."""
    return _WHITESPACE.sub(
        " ", "".join(" " if unicodedata.category(ch)[0] == "P" else ch for ch in value)
    ).strip()


NORMALIZERS: dict[str, Callable[[str], str]] = {
    "arxiv_id": arxiv_id,
    "doi": doi,
    "casefold": casefold,
    "no_punctuation": no_punctuation,
}
