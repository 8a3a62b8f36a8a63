"""The final answer in the task's exact format: dedupe, order, serialise through `OutputSpec.format`.

Composition is code, not the LLM, so the paper's "final answer composition error" class cannot come
from here; the LLM only chooses the ordering keys (`Finish.order_by`).
"""

from __future__ import annotations

import re

from tasks.spec import OutputSpec

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _numeric(value: str) -> float | None:
    """First number in a cell, thousands separators dropped ('1,234.5 mg' -> 1234.5)."""
    match = _NUMBER.search(value)
    return float(match.group(0).replace(",", "")) if match else None


def _sort_key(value: str, numeric: bool) -> tuple:
    if numeric:
        number = _numeric(value)
        return (0, number, "") if number is not None else (1, 0.0, value.casefold())
    return (0, 0.0, value.casefold())


def parse_order(order_by: list[str], columns: tuple[str, ...]) -> list[tuple[str, bool, bool]]:
    """'Year desc num' -> (column, descending, numeric). Unknown columns raise with the known ones."""
    keys: list[tuple[str, bool, bool]] = []
    lookup = {c.casefold(): c for c in columns}
    for item in order_by:
        words = item.strip().split()
        mods = set()
        while words and words[-1].casefold() in ("desc", "asc", "num"):
            mods.add(words.pop().casefold())
        name = " ".join(words)
        if name.casefold() not in lookup:
            raise ValueError(f"order_by column {name!r} is not in the schema {list(columns)}")
        keys.append((lookup[name.casefold()], "desc" in mods, "num" in mods))
    return keys


def order_rows(values: list[dict[str, str]], keys: list[tuple[str, bool, bool]]) -> list[dict[str, str]]:
    ordered = list(values)
    for column, descending, numeric in reversed(keys):  # stable sort, least significant key first
        ordered.sort(key=lambda v, c=column, n=numeric: _sort_key(v.get(c, ""), n), reverse=descending)
    return ordered


def dedupe(values: list[dict[str, str]], key: tuple[str, ...] | None) -> list[dict[str, str]]:
    seen: set[tuple[str, ...]] = set()
    kept: list[dict[str, str]] = []
    for v in values:
        ident = tuple(" ".join(v.get(c, "").split()).casefold() for c in (key or tuple(v)))
        if ident not in seen:
            seen.add(ident)
            kept.append(v)
    return kept


def compose(values: list[dict[str, str]], spec: OutputSpec, order_by: list[str]) -> str:
    """Answer rows (column -> text, in the order read or derived) deduped, ordered by `order_by`, formatted."""
    key = tuple(c for c in spec.dedup_key if c in spec.columns) if spec.dedup_key else None
    values = order_rows(dedupe(values, key or None), parse_order(order_by, spec.columns))
    return spec.format([[v[c] for c in spec.columns] for v in values])
