"""Answer vs gold as one aligned table, built from the evaluator's field verdicts (never re-parsed here).

The evaluator already aligned the predicted rows with the gold rows by key and judged every field
(`score.evidence.fields`: pred_row, gold_row, column, predicted, gold, reason). Grouping those verdicts by
(predicted row, gold row) gives one table row per aligned pair, an extra predicted row, or an omitted gold
row; a cell shows the predicted value and, where it differs, the gold value beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_ROWS = 200


@dataclass
class Cell:
    predicted: str | None
    gold: str | None
    reason: str  # match | different | missing | unmatched_key | duplicate | omitted_row

    @property
    def ok(self) -> bool:
        return self.reason == "match"


@dataclass
class AlignedRow:
    pred_row: int | None
    gold_row: int | None
    cells: list[Cell]

    @property
    def kind(self) -> str:
        """match (every field right), differs, extra (no gold row), omitted (no predicted row)."""
        if self.pred_row is None:
            return "omitted"
        if self.gold_row is None:
            return "extra"
        return "match" if all(c.ok for c in self.cells) else "differs"


@dataclass
class AnswerTable:
    columns: list[str]
    rows: list[AlignedRow] = field(default_factory=list)
    differing_cells: int = 0
    matching_cells: int = 0
    left_out: int = 0  # rows beyond MAX_ROWS, or fields the evaluator's bounded evidence did not keep
    status: str = "rows"  # rows | empty | parse_failure | no_evidence


def answer_table(evidence: dict[str, Any] | None) -> AnswerTable:
    """The aligned table of one scored answer (`status` says when there are no rows to align)."""
    if not evidence:
        return AnswerTable(columns=[], status="no_evidence")
    fields = evidence.get("fields") or []
    columns = list(dict.fromkeys(str(f.get("column")) for f in fields))
    table = AnswerTable(columns=columns, status=str(evidence.get("prediction_status") or "rows"))
    groups: dict[tuple[int | None, int | None], dict[str, Cell]] = {}
    for f in fields:
        key = (f.get("pred_row"), f.get("gold_row"))
        groups.setdefault(key, {})[str(f.get("column"))] = Cell(f.get("predicted"), f.get("gold"),
                                                               str(f.get("reason")))
    # answer order first (as the agent wrote it), then the gold rows it left out, in gold order
    order = sorted(groups, key=lambda k: (k[0] is None, k[0] if k[0] is not None else k[1] or 0))
    for key in order:
        cells = [groups[key].get(c) or Cell(None, None, "missing") for c in columns]
        table.differing_cells += sum(not c.ok for c in cells)
        table.matching_cells += sum(c.ok for c in cells)
        if len(table.rows) < MAX_ROWS:
            table.rows.append(AlignedRow(pred_row=key[0], gold_row=key[1], cells=cells))
        else:
            table.left_out += 1
    table.left_out += sum((evidence.get("truncated") or {}).values())
    return table
