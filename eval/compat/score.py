"""Score one answer as the authors' scorer does, streaming the predicted rows.

Their metrics (k = len(columns)): a predicted row aligns to the gold row with its key unless the key
was already seen (a duplicate, no credit); a field is correct when aligned, present, non-empty and
equal; a row when all k fields are and it has exactly k cells. item-F1 = 2C/(R_gold k + sum max(k,
cells)), 0 when both are empty; row-F1 = 2C_row/(R_gold + R_pred), 0 when both are empty; P.O.A. over
gold-ordered pairs of shared keys by first occurrence, 0 under two; exact = `complete_correct` of
their admission (item-F1 = row-F1 = 1, order ignored). A parse failure is unscored.
"""

from __future__ import annotations

from itertools import combinations

from eval.compat.parse import AuthorsParse, ScorerCrash
from eval.compat.rules import AuthorsRules, AuthorsRulesError
from eval.compat.values import FieldNormalizer, shown
from eval.parse import IgnoredLine
from eval.score import Counts, Evidence, FieldDiff, GoldParseError, OrderPair, Score, keep

Value = str | tuple[object, ...] | None
# Non-gold keys are remembered only to tell a repeated extra row (duplicate) from a new one; both earn
# nothing and count alike, so past this many the distinction is dropped to keep memory bounded.
MAX_TRACKED_KEYS = 100_000
_STATUS = {"parsed": "rows", "empty": "empty", "parse_failure": "parse_failure"}


def score_authors(answer: str, gold: str, rules: AuthorsRules) -> Score:
    columns, k = rules.columns, len(rules.columns)
    normalizers = [FieldNormalizer(rules.fields.get(name)) for name in columns]
    key_at = rules.key_indices

    def values(cells: list[str]) -> list[Value]:
        return [normalizers[j](cells[j]) if j < len(cells) else None for j in range(k)]

    def key_text(key: tuple[Value, ...]) -> str:
        return " | ".join(shown(v) or "" for v in key)  # type: ignore[arg-type]

    gold_parse = AuthorsParse(gold, columns, rules.record_separator)
    gold_rows = [values(cells) for _, cells in gold_parse.rows()]
    if gold_parse.status != "parsed":
        raise GoldParseError(f"gold answer yields no rows under the authors' parse: {gold[:200]!r}")
    gold_index = {tuple(row[j] for j in key_at): i for i, row in enumerate(gold_rows)}
    if len(gold_index) != len(gold_rows):
        raise AuthorsRulesError(f"duplicate gold keys under row_key {rules.row_key} (their scorer asserts)")

    evidence = Evidence(prediction_status="rows", key_columns=list(rules.row_key), key_source=rules.source)
    first_seen: dict[tuple[Value, ...], int] = {}
    other_keys: set[int] = set()  # hashes of non-gold keys: they only tell duplicate from extra (evidence)
    correct_items = correct_rows = pred_items = pred_rows = 0
    parse = AuthorsParse(answer, columns, rules.record_separator)
    try:
        for index, (_, cells) in enumerate(parse.rows()):
            row = values(cells)
            key = tuple(row[j] for j in key_at)
            if key in gold_index:
                duplicate = key in first_seen
                first_seen.setdefault(key, index)
            else:
                duplicate = hash(key) in other_keys
                if len(other_keys) < MAX_TRACKED_KEYS:
                    other_keys.add(hash(key))
            target = gold_rows[gold_index[key]] if key in gold_index and not duplicate else None
            if duplicate:
                keep(evidence, "duplicate_keys", key_text(key))
            elif target is None:
                keep(evidence, "extra_keys", key_text(key))
            if len(cells) != k:
                keep(evidence, "wrong_width_rows", index)
            fields_ok = 0
            for j in range(k):
                ok = target is not None and row[j] is not None and row[j] != "" and row[j] == target[j]
                fields_ok += ok
                reason = "duplicate" if duplicate else "unmatched_key" if target is None else (
                    "match" if ok else "missing" if row[j] in (None, "") else "different"
                )
                keep(evidence, "fields", FieldDiff(
                    pred_row=index, gold_row=gold_index[key] if target is not None else None,
                    column=columns[j], predicted=shown(row[j]),
                    gold=shown(target[j]) if target is not None else None, reason=reason,  # type: ignore[arg-type]
                ))
            correct_items += fields_ok
            correct_rows += fields_ok == k and len(cells) == k
            pred_items += max(k, len(cells))
            pred_rows += 1
    except ScorerCrash as exc:
        evidence.prediction_status = "parse_failure"
        evidence.parse_notes.append(f"the authors' scorer raises here, so the answer is unscored: {exc}")
        return Score(item_f1=None, row_f1=None, poa=None, exact_match=None, parse_failure=True,
                     evidence=evidence, mode="authors")
    evidence.prediction_status = _STATUS[parse.status]  # type: ignore[assignment]
    if len(other_keys) >= MAX_TRACKED_KEYS:
        evidence.parse_notes.append(
            f"over {MAX_TRACKED_KEYS:,} distinct extra keys: later repeats of extra keys count as extra rows, "
            "not duplicates (no metric changes)"
        )
    for number, text in parse.ignored:
        evidence.ignored_lines.append(IgnoredLine(line=number, text=text, reason="not a row (authors' parse)"))
    if parse.n_ignored > len(parse.ignored):
        evidence.truncated["ignored_lines"] = parse.n_ignored - len(parse.ignored)
    gold_keys = [tuple(row[j] for j in key_at) for row in gold_rows]
    for g, key in enumerate(gold_keys):
        if key not in first_seen:
            keep(evidence, "omitted_keys", key_text(key))
            for j in range(k):
                keep(evidence, "fields", FieldDiff(pred_row=None, gold_row=g, column=columns[j], predicted=None,
                                                   gold=shown(gold_rows[g][j]), reason="omitted_row"))
    shared = [key for key in gold_keys if key in first_seen]
    kept_pairs = n_pairs = 0
    for a, b in combinations(shared, 2):
        kept = first_seen[a] < first_seen[b]
        kept_pairs += kept
        n_pairs += 1
        keep(evidence, "order_pairs", OrderPair(first=key_text(a), second=key_text(b), kept=kept))
    n_gold_items = len(gold_rows) * k
    evidence.counts = Counts(
        columns=k, gold_rows=len(gold_rows), pred_rows=pred_rows, correct_rows=correct_rows,
        gold_items=n_gold_items, pred_items=pred_items, correct_items=correct_items,
    )
    if parse.status == "parse_failure":
        return Score(item_f1=None, row_f1=None, poa=None, exact_match=None, parse_failure=True,
                     evidence=evidence, mode="authors")
    item_denominator = n_gold_items + pred_items
    row_denominator = len(gold_rows) + pred_rows
    item_f1 = 2 * correct_items / item_denominator if item_denominator else 0.0
    row_f1 = 2 * correct_rows / row_denominator if row_denominator else 0.0
    return Score(
        item_f1=item_f1,
        row_f1=row_f1,
        poa=kept_pairs / n_pairs if n_pairs else 0.0,
        exact_match=item_f1 == 1 and row_f1 == 1,
        parse_failure=False,
        evidence=evidence,
        mode="authors",
    )
