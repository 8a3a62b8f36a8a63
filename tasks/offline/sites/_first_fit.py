"""Pick each task's target (a search, a node, a table) from the generated data instead of hard-coding it,
so every seed yields tasks with the intended size and traps, or fails loudly."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def first_fit(candidates: Iterable[T], fits: Callable[[T], bool], what: str) -> T:
    """The first candidate, in the given (deterministic) order, that fits; ValueError naming `what` if none."""
    found = next((c for c in candidates if fits(c)), None)
    if found is None:
        raise ValueError(f"no {what} fits this seed's data; widen the candidate list")
    return found
