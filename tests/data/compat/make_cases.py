"""Generate the differential cases: seeded variations of every bundled record's oracle answer.

    .venv/bin/python tests/data/compat/make_cases.py CASES.jsonl   # rewrites rules.json here

Each case applies exactly one kind of change (its `kind`) to the gold table, so a disagreement between
our default scoring and the authors' is attributable to that kind (docs/evaluator.md documents them).
`rules.json` holds authors'-format rules per task (columns, row_key, record_separator, integer/decimal
types inferred once from the gold values): the bundled records carry none, and the authors' scorer needs
them. Expected scores are computed from the authors' own code outside the project (see README.md here).
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import sys
from pathlib import Path

from eval.parse import parse_answer
from tasks.loaders import load_tasks
from tasks.spec import OutputSpec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SOURCES = [ROOT / "tasks/offline/data", ROOT / "tests/data/sgrbench_sample"]
PER_RECORD = 150
SEED = 22
INTEGER = re.compile(r"-?\d+")
DECIMAL = re.compile(r"-?\d+\.\d+|-?\d+")


def authors_rules(spec: OutputSpec, rows: list[list[str]]) -> dict[str, object]:
    columns = list(spec.columns)
    key = [c for c in (spec.dedup_key or ()) if c in columns] or [columns[0]]
    widen = [c for c in columns if c not in key]
    while len({tuple(r[columns.index(c)] for c in key) for r in rows}) < len(rows) and widen:
        key.append(widen.pop(0))
    fields: dict[str, object] = {}
    for j, name in enumerate(columns):
        values = [r[j] for r in rows if j < len(r)]
        if values and all(INTEGER.fullmatch(v) for v in values):
            fields[name] = {"type": "integer"}
        elif values and all(DECIMAL.fullmatch(v) for v in values):
            fields[name] = {"type": "decimal"}
    rules: dict[str, object] = {"columns": columns, "row_key": key, "fields": fields}
    if spec.record_separator in (",", ";"):
        rules["record_separator"] = spec.record_separator
    return rules


def native(spec: OutputSpec, rows: list[list[str]], header: bool | None = None) -> str:
    lines = [spec.field_separator.join(r) for r in rows]
    if header if header is not None else spec.header == "required":
        lines.insert(0, spec.field_separator.join(spec.columns))
    return spec.record_separator.join(lines)


def markdown(spec: OutputSpec, rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(spec.columns) + " |", "|" + "---|" * spec.width]
    return "\n".join(lines + ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows])


def delimited(spec: OutputSpec, rows: list[list[str]], dialect: str, header: bool) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t" if dialect == "tsv" else ",", lineterminator="\n")
    if header:
        writer.writerow(spec.columns)
    writer.writerows(rows)
    return out.getvalue().rstrip("\n")


def noisy(rng: random.Random, value: str, kind: str) -> str:
    if kind == "whitespace_noise":
        return rng.choice(["  " + value + " ", value.replace(" ", "   "), "\u00a0" + value, value + "\t "])
    if kind == "unicode_noise":  # compatibility forms NFKC folds back
        return value.translate({ord(d): 0xFF10 + int(d) for d in "0123456789"}) if any(
            ch.isdigit() for ch in value) else value.replace(" ", "\u2003") + "\ufeff"[:0]
    if kind == "case_change":
        return rng.choice([value.upper(), value.lower(), value.title()])
    if kind == "markdown_pair":
        return rng.choice(["**" + value + "**", "`" + value + "`", "*" + value + "*"])
    if kind == "markdown_one_sided":
        return rng.choice(["**" + value, value + "**", "`" + value, value + "*"])
    if kind == "markdown_link":
        return f"[{value}](https://example.org/{rng.randint(1, 99)})"
    if kind == "markdown_link_title":
        return rng.choice([f'[{value}](https://example.org/x "title")', f"[{value}](https://example.org/a b)"])
    raise ValueError(kind)


def group_digits(rng: random.Random, value: str) -> str:
    if not INTEGER.fullmatch(value) or len(value.lstrip("-")) < 4:
        return value
    sep = rng.choice([",", " ", "\u202f"])
    return f"{int(value):,}".replace(",", sep)


CELL_KINDS = ["whitespace_noise", "unicode_noise", "case_change", "markdown_pair", "markdown_one_sided",
              "markdown_link", "markdown_link_title"]
KINDS = CELL_KINDS + [
    "exact", "header_flipped", "markdown_table", "tsv", "csv_header", "csv_no_header", "fenced",
    "one_record_per_line", "drop_rows", "reorder_rows", "duplicate_row", "extra_row", "change_field",
    "blank_field", "extra_column", "short_record", "digit_grouping", "line_wrapped", "loose_header",
    "prose_before", "prose_comma_after_header", "trailing_text", "none_form", "empty",
]


def variation(kind: str, spec: OutputSpec, gold: list[list[str]], rng: random.Random) -> str:
    rows = [list(r) for r in gold]
    pick = rng.randrange(len(rows)) if rows else 0
    col = rng.randrange(spec.width)
    if kind in CELL_KINDS:
        targets = [pick] if rng.random() < 0.5 else range(len(rows))
        for i in targets:
            rows[i][col] = noisy(rng, rows[i][col], kind)
        return native(spec, rows)
    if kind == "exact":
        return native(spec, rows)
    if kind == "header_flipped":
        return native(spec, rows, header=spec.header != "required")
    if kind == "markdown_table":
        return markdown(spec, rows)
    if kind in ("tsv", "csv_header", "csv_no_header"):
        return delimited(spec, rows, "tsv" if kind == "tsv" else "csv", header=kind != "csv_no_header")
    if kind == "fenced":
        return "```\n" + native(spec, rows).replace(spec.record_separator, "\n") + "\n```"
    if kind == "one_record_per_line":
        return "\n".join(spec.field_separator.join(r) for r in rows)
    if kind == "drop_rows":
        for _ in range(rng.randint(1, max(1, len(rows) // 2))):
            if rows:
                rows.pop(rng.randrange(len(rows)))
    elif kind == "reorder_rows":
        if rng.random() < 0.5:
            rows.reverse()
        else:
            rng.shuffle(rows)
    elif kind == "duplicate_row":
        rows.insert(rng.randrange(len(rows) + 1), list(rows[pick]))
    elif kind == "extra_row":
        rows.insert(rng.randrange(len(rows) + 1), [f"made-up {rng.randint(1, 999)}"] + rows[pick][1:])
    elif kind == "change_field":
        value = rows[pick][col]
        rows[pick][col] = str(int(value) + rng.choice([1, -1, 10])) if INTEGER.fullmatch(value) else value + " x"
    elif kind == "blank_field":
        rows[pick][col] = ""
    elif kind == "extra_column":
        rows[pick].append("extra")
    elif kind == "short_record":
        rows[pick] = rows[pick][:-1]
    elif kind == "digit_grouping":
        rows = [[group_digits(rng, v) for v in r] for r in rows]
    elif kind == "line_wrapped":
        wrap = rng.choice(["**", "`"])
        return "\n".join(wrap + spec.field_separator.join(r) + wrap for r in rows)
    elif kind == "loose_header":
        names = [rng.choice([n.upper(), n.replace("_", " "), n.title(), f"**{n}**", n.replace(" ", "_")])
                 for n in spec.columns]
        return spec.record_separator.join([spec.field_separator.join(names), native(spec, rows, header=False)])
    elif kind == "prose_before":
        return rng.choice(["Here is the table:", "Answer", "Result, as requested:"]) + "\n" + native(spec, rows)
    elif kind == "prose_comma_after_header":
        body = native(spec, rows, header=True).split(spec.record_separator)
        return "\n".join([body[0], "Note, these rows are complete."] + body[1:])
    elif kind == "trailing_text":
        return native(spec, rows) + spec.record_separator + rng.choice([" Done", "That is all.", "Sources: x"])
    elif kind == "none_form":
        return rng.choice(["NONE", "none", " NONE \n", "**NONE**", "`NONE`", "```\nNONE\n```", "NONE,",
                           "NONE.", "No rows qualify.\nNONE"])
    elif kind == "empty":
        return rng.choice(["", "  ", "\n"])
    return native(spec, rows)


def main() -> None:
    rng = random.Random(SEED)
    rules: dict[str, object] = {}
    cases: list[dict[str, object]] = []
    for source in SOURCES:
        for task in load_tasks(str(source), split="constraint", languages=["en"]):
            spec = task.output_spec
            gold = parse_answer(task.oracle_answer, spec).rows
            rules[task.base_id] = authors_rules(spec, gold)
            kinds = [KINDS[i % len(KINDS)] for i in range(PER_RECORD)]
            for number, kind in enumerate(kinds):
                cases.append({"case": f"{task.base_id}#{number:03d}", "task_id": task.base_id, "kind": kind,
                              "answer": variation(kind, spec, gold, rng)})
    (HERE / "rules.json").write_text(json.dumps(rules, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with Path(sys.argv[1]).open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(rules)} tasks, {len(cases)} cases")


if __name__ == "__main__":
    main()
