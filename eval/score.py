"""Score one answer against its gold table: item-F1, row-F1, pairwise order accuracy, exact match.

Definitions (k = number of schema columns):
  N_gold = R_gold x k;  N_pred = sum over predicted rows of max(k, cells in the row)
  a field is correct when its row aligned (not a duplicate), the value is present and equals gold;
  a row is correct when all k fields are correct and it has exactly k cells.
  item-F1 = 2 C_item / (N_gold + N_pred);  row-F1 = 2 C_row / (R_gold + R_pred)
  P.O.A. = share of gold-ordered pairs of shared keys whose first predicted occurrences keep the order,
           0 when fewer than two keys are shared
  exact match = the prediction is the gold rows, all correct, in gold order, nothing else.
Degenerate cases: empty gold and empty prediction agree completely (F1 = 1, EM), but P.O.A. is 0 as
there is no pair; a parse failure is unscored (every metric None), never a silent zero.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, Field

from eval.align import Alignment, KeyChoice, align, choose_key
from eval.parse import IgnoredLine, ParsedAnswer, parse_answer
from eval.rules import TaskRules, resolve_field_rules, resolve_row_key
from eval.values import Comparable, FieldComparer, display
from tasks.spec import OutputSpec

FieldReason = Literal["match", "different", "missing", "unmatched_key", "duplicate", "omitted_row"]


class GoldParseError(ValueError):
    """The gold answer itself yields no rows: the task record, not the model, is wrong."""


class Counts(BaseModel):
    columns: int
    gold_rows: int
    pred_rows: int
    correct_rows: int
    gold_items: int
    pred_items: int
    correct_items: int


class FieldDiff(BaseModel):
    pred_row: int | None = Field(description="0-based predicted row, None for an omitted gold row")
    gold_row: int | None = Field(description="0-based gold row, None for an unmatched predicted row")
    column: str
    predicted: str | None
    gold: str | None
    reason: FieldReason


class OrderPair(BaseModel):
    first: str = Field(description="key earlier in gold")
    second: str
    kept: bool


class Evidence(BaseModel):
    prediction_status: Literal["rows", "empty", "parse_failure"]
    counts: Counts | None = None
    key_columns: list[str] = Field(default_factory=list)
    key_source: str = ""
    key_widened: bool = False
    key_note: str | None = None
    omitted_keys: list[str] = Field(default_factory=list)
    extra_keys: list[str] = Field(default_factory=list)
    duplicate_keys: list[str] = Field(default_factory=list)
    wrong_width_rows: list[int] = Field(
        default_factory=list, description="predicted rows without exactly k cells"
    )
    fields: list[FieldDiff] = Field(default_factory=list)
    order_pairs: list[OrderPair] = Field(default_factory=list)
    ignored_lines: list[IgnoredLine] = Field(default_factory=list)
    parse_notes: list[str] = Field(default_factory=list)


class Score(BaseModel):
    item_f1: float | None
    row_f1: float | None
    poa: float | None
    exact_match: bool | None
    parse_failure: bool
    evidence: Evidence


def score_answer(answer: str, gold: str, spec: OutputSpec, rules: TaskRules | None = None) -> Score:
    """Parse both sides, align rows by key, count fields and rows, keep the evidence."""
    gold_parsed = _parse_gold(gold, spec)
    if gold_parsed.status == "parse_failure":
        raise GoldParseError(f"gold answer yields no rows under columns {list(spec.columns)}: {gold[:200]!r}")
    predicted = parse_answer(answer, spec)
    evidence = Evidence(
        prediction_status=predicted.status,
        ignored_lines=predicted.ignored,
        parse_notes=predicted.notes,
    )
    if predicted.status == "parse_failure":
        return Score(
            item_f1=None, row_f1=None, poa=None, exact_match=None, parse_failure=True, evidence=evidence
        )
    return _score_rows(gold_parsed, predicted, spec, rules, evidence)


def _score_rows(
    gold_parsed: ParsedAnswer,
    predicted: ParsedAnswer,
    spec: OutputSpec,
    rules: TaskRules | None,
    evidence: Evidence,
) -> Score:
    comparers = [FieldComparer(rule) for rule in resolve_field_rules(rules, spec)]
    gold = [_comparable_row(row, comparers) for row in gold_parsed.rows]
    pred = [_comparable_row(row, comparers) for row in predicted.rows]
    base_key, key_source = resolve_row_key(rules, spec)
    key = choose_key(gold, base_key, spec.width)
    alignment = align(gold, pred, key.columns)
    _record_key(evidence, spec, base_key, key, key_source)

    def key_text(row: list[Comparable | None]) -> str:
        return " | ".join(display(row[c]) or "" for c in key.columns)

    gold_keys = [key_text(row) for row in gold]
    cell_counts = [len(cells) for cells in predicted.rows]
    row_correct = _compare_fields(gold, pred, cell_counts, alignment, spec, evidence, key_text)
    for gold_index, first in enumerate(alignment.first_pred_for_gold):
        if first is None:
            evidence.omitted_keys.append(gold_keys[gold_index])
            evidence.fields.extend(
                FieldDiff(
                    pred_row=None,
                    gold_row=gold_index,
                    column=spec.columns[c],
                    predicted=None,
                    gold=display(gold[gold_index][c]),
                    reason="omitted_row",
                )
                for c in range(spec.width)
            )
    counts = Counts(
        columns=spec.width,
        gold_rows=len(gold),
        pred_rows=len(pred),
        correct_rows=sum(row_correct),
        gold_items=len(gold) * spec.width,
        pred_items=sum(max(spec.width, n) for n in cell_counts),
        correct_items=sum(f.reason == "match" for f in evidence.fields),
    )
    evidence.counts = counts
    evidence.wrong_width_rows = [i for i, n in enumerate(cell_counts) if n != spec.width]
    firsts = alignment.first_pred_for_gold
    shared = [g for g, p in enumerate(firsts) if p is not None]
    evidence.order_pairs = [
        OrderPair(first=gold_keys[a], second=gold_keys[b], kept=(firsts[a] or 0) < (firsts[b] or 0))
        for a, b in combinations(shared, 2)
    ]
    kept = sum(pair.kept for pair in evidence.order_pairs)
    exact = len(pred) == len(gold) and all(
        alignment.gold_for_pred[i] == i and row_correct[i] for i in range(len(pred))
    )
    return Score(
        item_f1=_f1(counts.correct_items, counts.gold_items + counts.pred_items),
        row_f1=_f1(counts.correct_rows, counts.gold_rows + counts.pred_rows),
        poa=kept / len(evidence.order_pairs) if evidence.order_pairs else 0.0,
        exact_match=exact,
        parse_failure=False,
        evidence=evidence,
    )


def _record_key(
    evidence: Evidence, spec: OutputSpec, base: tuple[int, ...], key: KeyChoice, source: str
) -> None:
    evidence.key_columns = [spec.columns[c] for c in key.columns]
    evidence.key_source = source
    evidence.key_widened = key.widened
    if key.widened:
        evidence.key_note = (
            f"{[spec.columns[c] for c in base]} repeats in gold; widened to {evidence.key_columns}"
        )
    if not key.unique:
        evidence.key_note = "identical gold rows: repeats align in order"


def _compare_fields(
    gold: list[list[Comparable | None]],
    pred: list[list[Comparable | None]],
    cell_counts: list[int],
    alignment: Alignment,
    spec: OutputSpec,
    evidence: Evidence,
    key_text: Callable[[list[Comparable | None]], str],
) -> list[bool]:
    """Field verdicts of every predicted row into the evidence; returns which rows are fully correct."""
    row_correct: list[bool] = []
    for pred_index, row in enumerate(pred):
        gold_index = alignment.gold_for_pred[pred_index]
        if gold_index is None:
            reason: FieldReason = "duplicate" if alignment.duplicate[pred_index] else "unmatched_key"
            (evidence.duplicate_keys if reason == "duplicate" else evidence.extra_keys).append(key_text(row))
            evidence.fields.extend(
                FieldDiff(
                    pred_row=pred_index,
                    gold_row=None,
                    column=spec.columns[c],
                    predicted=display(row[c]),
                    gold=None,
                    reason=reason,
                )
                for c in range(spec.width)
            )
            row_correct.append(False)
            continue
        fields_ok = 0
        for c in range(spec.width):
            pv, gv = row[c], gold[gold_index][c]
            ok = pv is not None and gv is not None and pv == gv
            fields_ok += ok
            evidence.fields.append(
                FieldDiff(
                    pred_row=pred_index,
                    gold_row=gold_index,
                    column=spec.columns[c],
                    predicted=display(pv),
                    gold=display(gv),
                    reason="match" if ok else ("missing" if pv is None else "different"),
                )
            )
        row_correct.append(fields_ok == spec.width and cell_counts[pred_index] == spec.width)
    return row_correct


@lru_cache(maxsize=1024)
def _parse_gold(gold: str, spec: OutputSpec) -> ParsedAnswer:
    """Gold is parsed once per task, not once per prediction (callers never mutate the result)."""
    return parse_answer(gold, spec)


def _f1(correct: int, denominator: int) -> float:
    """2C / (N_gold + N_pred); both sides empty is complete agreement."""
    return 1.0 if denominator == 0 else 2 * correct / denominator


def _comparable_row(cells: list[str], comparers: list[FieldComparer]) -> list[Comparable | None]:
    """One comparable value per schema column (None where the row is short); extra cells only count."""
    return [comparers[c](cells[c]) if c < len(cells) else None for c in range(len(comparers))]
