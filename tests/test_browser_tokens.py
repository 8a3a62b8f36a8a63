"""cl100k_base counts, built offline from the ranks file bpe_openai ships."""

from __future__ import annotations

import socket

import pytest

from browser import tokens
from browser.tokens import count_tokens, encoding


def test_known_counts() -> None:
    # reference values from OpenAI's tiktoken documentation / cookbook for cl100k_base
    assert count_tokens("tiktoken is great!") == 6
    assert encoding().encode("hello world") == [15339, 1917]
    assert count_tokens("") == 0


def test_special_token_text_counts_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_round_trip_unicode() -> None:
    text = "Überblick: 1,234 Einträge — 表格 ✓"
    assert encoding().decode(encoding().encode(text)) == text


def test_no_network_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    tokens.encoding.cache_clear()
    assert count_tokens("offline") == len(encoding().encode("offline")) > 0
    assert tokens.encoding.cache_info().currsize == 1
