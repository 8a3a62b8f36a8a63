"""Row alignment: which predicted row answers which gold row.

Predicted rows are walked in order and the first row carrying a gold key takes that gold row; later
rows with the same key are duplicates and earn nothing. Never "the better of two copies": a model
that hedges with several versions of a row must not gain from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

Key = tuple[Hashable, ...]


@dataclass
class KeyChoice:
    columns: tuple[int, ...]
    widened: bool
    unique: bool  # False only when whole gold rows repeat; then repeats align in order


@dataclass
class Alignment:
    gold_for_pred: list[int | None]  # gold row index per predicted row, None when not aligned
    duplicate: list[bool]  # predicted row repeats a key whose gold rows are all taken
    first_pred_for_gold: list[int | None] = field(default_factory=list)


def choose_key(gold: Sequence[Sequence[Hashable | None]], base: tuple[int, ...], width: int) -> KeyChoice:
    """Widen the key with further columns, in schema order, until it identifies every gold row."""
    columns = list(base)
    remaining = [c for c in range(width) if c not in columns]
    while not _unique(gold, columns) and remaining:
        columns.append(remaining.pop(0))
    return KeyChoice(columns=tuple(columns), widened=len(columns) > len(base), unique=_unique(gold, columns))


def _unique(rows: Sequence[Sequence[Hashable | None]], columns: list[int]) -> bool:
    keys = [row_key(row, tuple(columns)) for row in rows]
    return len(set(keys)) == len(keys)


def row_key(row: Sequence[Hashable | None], columns: tuple[int, ...]) -> Key | None:
    """The key of a row, or None when a key cell is missing (such a row cannot align)."""
    values = []
    for column in columns:
        if column >= len(row) or row[column] is None:
            return None
        values.append(row[column])
    return tuple(values)


class StreamingAligner:
    """`align`, one predicted row at a time: only gold-sized state is kept, so a huge answer streams."""

    def __init__(self, gold: Sequence[Sequence[Hashable | None]], columns: tuple[int, ...]) -> None:
        self.columns = columns
        self.gold_rows_by_key: dict[Key, list[int]] = {}
        for index, row in enumerate(gold):
            key = row_key(row, columns)
            if key is not None:
                self.gold_rows_by_key.setdefault(key, []).append(index)
        self.taken: dict[Key, int] = {}
        self.first_pred_for_gold: list[int | None] = [None] * len(gold)

    def take(self, pred_index: int, row: Sequence[Hashable | None]) -> tuple[int | None, bool]:
        """(gold row this predicted row answers or None, whether it is a duplicate)."""
        key = row_key(row, self.columns)
        if key is None:
            return None, False
        candidates = self.gold_rows_by_key.get(key, [])
        used = self.taken.get(key, 0)
        if used < len(candidates):
            gold_index = candidates[used]
            self.taken[key] = used + 1
            self.first_pred_for_gold[gold_index] = pred_index
            return gold_index, False
        return None, bool(candidates)


def align(
    gold: Sequence[Sequence[Hashable | None]],
    predicted: Sequence[Sequence[Hashable | None]],
    columns: tuple[int, ...],
) -> Alignment:
    aligner = StreamingAligner(gold, columns)
    alignment = Alignment(gold_for_pred=[], duplicate=[])
    for pred_index, row in enumerate(predicted):
        gold_index, duplicate = aligner.take(pred_index, row)
        alignment.gold_for_pred.append(gold_index)
        alignment.duplicate.append(duplicate)
    alignment.first_pred_for_gold = aligner.first_pred_for_gold
    return alignment
