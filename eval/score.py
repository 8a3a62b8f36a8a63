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
No answer (a run that ended in an error, a task without a prediction) scores 0 on every metric, whatever the
gold: an empty answer would match a NONE gold, and a crash is not the answer "nothing" (`no_answer`).
Predicted rows are streamed and the evidence lists are capped (MAX_EVIDENCE), so scoring a huge answer
costs a small multiple of its size, not hundreds (issue 21).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, Field

from eval.align import KeyChoice, StreamingAligner, choose_key
from eval.parse import IgnoredLine, ParsedAnswer, iter_rows, parse_answer
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
    prediction_status: Literal["rows", "empty", "parse_failure", "no_answer"]
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
    truncated: dict[str, int] = Field(
        default_factory=dict, description="entries left out of a list above (a huge answer), by list name"
    )


class Score(BaseModel):
    item_f1: float | None
    row_f1: float | None
    poa: float | None
    exact_match: bool | None
    parse_failure: bool
    evidence: Evidence
    mode: Literal["ours", "authors"] = Field(
        "ours", description="ours: the project's definitions; authors: `--compat authors` (eval/compat)"
    )


# How a run ended when it gave no answer: these error kinds (the runner's TaskOutcome.error_kind) or the stop
# reason "error". A budget stop (max_steps, wall_time, ...) keeps its best answer so far; so does an explicit NONE.
FAILED_RUN_KINDS = frozenset({"infra", "config", "bug", "timeout"})


def run_failed(stop_reason: str | None, error_kind: str | None) -> bool:
    """Whether a run ended in an error, so that it has no prediction (scored by `no_answer`)."""
    return stop_reason == "error" or error_kind in FAILED_RUN_KINDS


def no_answer(reason: str, mode: Literal["ours", "authors"] = "ours") -> Score:
    """The score of a task that has no answer: 0 on every metric (never the empty answer's 1 on a NONE gold)."""
    return Score(item_f1=0.0, row_f1=0.0, poa=0.0, exact_match=False, parse_failure=False, mode=mode,
                 evidence=Evidence(prediction_status="no_answer", parse_notes=[reason]))


MAX_EVIDENCE = 1000  # entries kept per evidence list; the rest are counted in `Evidence.truncated`


def keep(evidence: Evidence, name: str, item: object) -> None:
    """Append to an evidence list up to MAX_EVIDENCE items, then only count (bounded memory)."""
    items = getattr(evidence, name)
    if len(items) < MAX_EVIDENCE:
        items.append(item)
    else:
        evidence.truncated[name] = evidence.truncated.get(name, 0) + 1


def score_answer(answer: str, gold: str, spec: OutputSpec, rules: TaskRules | None = None) -> Score:
    """Parse gold, then stream the predicted rows through the alignment, keeping bounded evidence."""
    gold_parsed = _parse_gold(gold, spec)
    if gold_parsed.status == "parse_failure":
        raise GoldParseError(f"gold answer yields no rows under columns {list(spec.columns)}: {gold[:200]!r}")
    comparers = [FieldComparer(rule) for rule in resolve_field_rules(rules, spec)]
    gold_rows = [_comparable_row(row, comparers) for row in gold_parsed.rows]
    base_key, key_source = resolve_row_key(rules, spec)
    key = choose_key(gold_rows, base_key, spec.width)
    evidence = Evidence(prediction_status="rows")
    _record_key(evidence, spec, base_key, key, key_source)

    def key_text(row: list[Comparable | None]) -> str:
        return " | ".join(display(row[c]) or "" for c in key.columns)

    aligner = StreamingAligner(gold_rows, key.columns)
    predicted = ParsedAnswer(status="rows")
    n_pred = pred_items = correct_items = correct_rows = 0
    in_gold_order = True
    for index, cells in enumerate(iter_rows(answer, spec, predicted)):
        row = _comparable_row(cells, comparers)
        gold_index, duplicate = aligner.take(index, row)
        correct = _compare_row(index, row, gold_index, duplicate, gold_rows, spec, evidence, key_text)
        correct_items += correct
        row_ok = correct == spec.width and len(cells) == spec.width
        correct_rows += row_ok
        in_gold_order = in_gold_order and gold_index == index and row_ok
        if len(cells) != spec.width:
            keep(evidence, "wrong_width_rows", index)
        pred_items += max(spec.width, len(cells))
        n_pred += 1
    if predicted.status == "parse_failure":
        return Score(
            item_f1=None, row_f1=None, poa=None, exact_match=None, parse_failure=True,
            evidence=Evidence(prediction_status="parse_failure", ignored_lines=predicted.ignored,
                              parse_notes=predicted.notes, truncated=_ignored_truncated(predicted)),
        )
    evidence.prediction_status = predicted.status
    evidence.ignored_lines = predicted.ignored
    evidence.parse_notes = predicted.notes
    evidence.truncated.update(_ignored_truncated(predicted))
    gold_keys = [key_text(row) for row in gold_rows]
    firsts = aligner.first_pred_for_gold
    for gold_index, first in enumerate(firsts):
        if first is None:
            keep(evidence, "omitted_keys", gold_keys[gold_index])
            for c in range(spec.width):
                keep(evidence, "fields", FieldDiff(
                    pred_row=None, gold_row=gold_index, column=spec.columns[c], predicted=None,
                    gold=display(gold_rows[gold_index][c]), reason="omitted_row",
                ))
    counts = Counts(
        columns=spec.width,
        gold_rows=len(gold_rows),
        pred_rows=n_pred,
        correct_rows=correct_rows,
        gold_items=len(gold_rows) * spec.width,
        pred_items=pred_items,
        correct_items=correct_items,
    )
    evidence.counts = counts
    shared = [g for g, p in enumerate(firsts) if p is not None]
    kept = pairs = 0
    for a, b in combinations(shared, 2):
        pair_kept = (firsts[a] or 0) < (firsts[b] or 0)
        kept += pair_kept
        pairs += 1
        keep(evidence, "order_pairs", OrderPair(first=gold_keys[a], second=gold_keys[b], kept=pair_kept))
    return Score(
        item_f1=_f1(counts.correct_items, counts.gold_items + counts.pred_items),
        row_f1=_f1(counts.correct_rows, counts.gold_rows + counts.pred_rows),
        poa=kept / pairs if pairs else 0.0,
        exact_match=in_gold_order and n_pred == len(gold_rows),
        parse_failure=False,
        evidence=evidence,
    )


def _ignored_truncated(parsed: ParsedAnswer) -> dict[str, int]:
    left_out = parsed.n_ignored - len(parsed.ignored)
    return {"ignored_lines": left_out} if left_out > 0 else {}


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


def _compare_row(
    pred_index: int,
    row: list[Comparable | None],
    gold_index: int | None,
    duplicate: bool,
    gold: list[list[Comparable | None]],
    spec: OutputSpec,
    evidence: Evidence,
    key_text: Callable[[list[Comparable | None]], str],
) -> int:
    """Field verdicts of one predicted row into the evidence; returns how many fields are correct."""
    if gold_index is None:
        reason: FieldReason = "duplicate" if duplicate else "unmatched_key"
        keep(evidence, "duplicate_keys" if duplicate else "extra_keys", key_text(row))
        for c in range(spec.width):
            keep(evidence, "fields", FieldDiff(
                pred_row=pred_index, gold_row=None, column=spec.columns[c],
                predicted=display(row[c]), gold=None, reason=reason,
            ))
        return 0
    fields_ok = 0
    for c in range(spec.width):
        pv, gv = row[c], gold[gold_index][c]
        ok = pv is not None and gv is not None and pv == gv
        fields_ok += ok
        keep(evidence, "fields", FieldDiff(
            pred_row=pred_index, gold_row=gold_index, column=spec.columns[c],
            predicted=display(pv), gold=display(gv),
            reason="match" if ok else ("missing" if pv is None else "different"),
        ))
    return fields_ok


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
