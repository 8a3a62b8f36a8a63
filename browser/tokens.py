"""Token counting for observation budgets (tiktoken `cl100k_base`), working on a closed network.

tiktoken downloads its encodings on first use, which hangs or fails without internet. The same ranks file
ships with the `bpe_openai` package, so the encoding is built from that copy, once per process, and never
touches the network.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
from functools import lru_cache
from pathlib import Path

import tiktoken

_NAME = "cl100k_base"
# From tiktoken_ext.openai_public.cl100k_base (the function itself would download the ranks).
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _bundled_ranks() -> dict[bytes, int]:
    # Located without importing bpe_openai, whose import builds its own tokenizers (slow, noisy).
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package bpe_openai is not installed; it provides the offline cl100k_base ranks")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{_NAME}.tiktoken.gz"
    data = path.read_bytes()
    ranks: dict[bytes, int] = {}
    for line in gzip.decompress(data).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(name=_NAME, pat_str=_PATTERN, mergeable_ranks=_bundled_ranks(),
                             special_tokens=_SPECIAL)


def count_tokens(text: str) -> int:
    """Tokens of `text` for an OpenAI-style model; special-token strings on a page count as plain text."""
    return len(encoding().encode(text, disallowed_special=()))
