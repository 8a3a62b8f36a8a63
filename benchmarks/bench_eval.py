"""Evaluator throughput: 100 synthetic tasks x 100 synthetic predictions, answers scored per second.

Tasks mimic the release (2-44 rows, 2-6 columns, newline / `;` / `,` record separators, a key column);
predictions are the defects real systems produce (reordering, omissions, duplicates, wrong fields,
Markdown tables, extra rows, prose). Run: `.venv/bin/python benchmarks/bench_eval.py [--seed N]`.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from eval.score import score_answer
from tasks.spec import OutputSpec

Rows = list[list[str]]
WORDS = [
    "alpha",
    "beta",
    "HOLDINGS, INC.",
    "gamma",
    "delta",
    "Ohio",
    "2024-01-26",
    "1,234",
    "mg/L",
    "Nitrate",
]


def make_task(rng: random.Random, index: int) -> tuple[OutputSpec, Rows]:
    width = rng.randint(2, 6)
    record_separator = rng.choice(["\n", "\n", ";", ","])
    spec = OutputSpec(
        columns=tuple(f"col_{c}" for c in range(width)),
        record_separator=record_separator,
        header=rng.choice(["omitted", "required", "optional"]),
    )
    rows = [
        [f"K{index}-{r}"] + [f"{rng.choice(WORDS)} {rng.randint(0, 999)}" for _ in range(width - 1)]
        for r in range(rng.randint(2, 44))
    ]
    return spec, rows


def _markdown(spec: OutputSpec, rows: Rows) -> str:
    lines = ["| " + " | ".join(spec.columns) + " |", "|" + "---|" * spec.width]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


PERTURBATIONS: dict[str, Callable[[random.Random, OutputSpec, Rows], str]] = {
    "perfect": lambda rng, spec, rows: spec.format(rows),
    "reordered": lambda rng, spec, rows: spec.format(rng.sample(rows, len(rows))),
    "omitted rows": lambda rng, spec, rows: spec.format(rows[: max(1, len(rows) // 2)]),
    "duplicates": lambda rng, spec, rows: spec.format(rows + rows[:3]),
    "wrong fields": lambda rng, spec, rows: spec.format([[r[0]] + [c + "x" for c in r[1:]] for r in rows]),
    "markdown": lambda rng, spec, rows: _markdown(spec, rows),
    "extra rows": lambda rng, spec, rows: spec.format(
        rows + [[f"X{i}"] + r[1:] for i, r in enumerate(rows[:5])]
    ),
    "prose": lambda rng, spec, rows: "I could not find the requested records on the site.",
    "empty": lambda rng, spec, rows: "NONE",
    "code fence": lambda rng, spec, rows: "```\n" + spec.format(rows) + "\n```",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--predictions", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds = list(PERTURBATIONS)
    work = []
    for index in range(args.tasks):
        spec, rows = make_task(rng, index)
        gold = spec.format(rows)
        for p in range(args.predictions):
            kind = kinds[p % len(kinds)]
            work.append((kind, PERTURBATIONS[kind](rng, spec, rows), gold, spec))

    # CPU seconds next to wall seconds: on a shared machine wall time mostly measures the neighbours.
    wall: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for kind, answer, gold, spec in work:
        w0, c0 = time.perf_counter(), time.process_time()
        score_answer(answer, gold, spec)
        wall[kind] += time.perf_counter() - w0
        cpu[kind] += time.process_time() - c0
        counts[kind] += 1

    table = Table(title=f"bench_eval: {args.tasks} tasks x {args.predictions} predictions (seed {args.seed})")
    for column in (
        "answer kind",
        "answers",
        "wall s",
        "answers/s (wall)",
        "cpu s",
        "answers/s (cpu)",
        "cpu ms/answer",
    ):
        table.add_column(column, justify="left" if column == "answer kind" else "right")

    def row(label: str, n: int, wall_s: float, cpu_s: float, style: str | None = None) -> None:
        table.add_row(
            label,
            str(n),
            f"{wall_s:.2f}",
            f"{n / wall_s:.0f}",
            f"{cpu_s:.2f}",
            f"{n / max(cpu_s, 1e-9):.0f}",
            f"{1000 * cpu_s / n:.2f}",
            style=style,
        )

    for kind in kinds:
        row(kind, counts[kind], wall[kind], cpu[kind])
    row("TOTAL", len(work), sum(wall.values()), sum(cpu.values()), style="bold")
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
