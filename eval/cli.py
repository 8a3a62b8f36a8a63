"""`sgr score` and `sgr review ...` (owned by the eval package): file I/O and printing only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.table import Table

from eval.aggregate import Aggregate, aggregate
from eval.batch import PredictionsError, read_prediction_file, score_predictions
from eval.report import write_reports
from eval.review import init_reviews, summarize_reviews
from eval.rules import RulesError, load_rules
from eval.runs import SCORES_FILE, RunReadError

review_app = typer.Typer(no_args_is_help=True, help="Failure review (the benchmark's audit protocol).")
console = Console(width=max(Console().width, 110))  # tables stay readable in logs and pipes
errors = Console(stderr=True, width=max(Console().width, 110), soft_wrap=True)  # one error, one line


def score(
    tasks: str = typer.Option(
        ..., "--tasks", help="Task source: JSONL file, release folder or HF dataset id."
    ),
    predictions: Path = typer.Option(..., "--predictions", help='JSONL: {"task_id", "answer"} per line.'),
    out: Path = typer.Option(..., "--out", help="Output folder for scores and reports."),
    rules: Path | None = typer.Option(None, "--rules", help="Optional per-task scoring rules (YAML/JSON)."),
    language: list[str] | None = typer.Option(None, "--language", help="Only tasks in these languages."),
    split: str = typer.Option("both", "--split", help="goal, constraint or both."),
    task: list[str] | None = typer.Option(None, "--task", help="Only these task ids (repeatable)."),
    family: list[str] | None = typer.Option(None, "--family", help="Only tasks of these source families (repeatable)."),
    only_predicted: bool = typer.Option(
        False, "--only-predicted", help="Score only the tasks that have a prediction (a partial run, a sample)."
    ),
    list_missing: bool = typer.Option(False, "--list-missing", help="List the tasks without a prediction."),
    strict: bool = typer.Option(False, "--strict", help="Refuse a predictions file with any bad line."),
    compat: str = typer.Option(
        "ours", "--compat", help="ours (default) or authors: score exactly as the SGR-Bench authors' scorer."
    ),
) -> None:
    """Score saved answers. A task without a prediction has no answer (0 on every metric) and is counted (listed
    with --list-missing; --only-predicted leaves it out), so has a prediction whose run ended in an error; bad
    lines are reported and skipped (--strict refuses)."""
    # Only this glue needs the task loaders; the evaluator core depends on tasks.spec alone.
    from tasks.errors import TaskLoadError, TaskSourceError
    from tasks.loaders import load_tasks

    if compat not in ("ours", "authors"):
        _fail(f"--compat: {compat!r} is not one of: ours, authors")
    try:
        rules_book = load_rules(rules) if rules else None
        read = read_prediction_file(predictions)
    except (RulesError, PredictionsError) as exc:
        _fail(str(exc))
    for line in read.bad_lines:
        errors.print(line, markup=False)
    if read.bad_lines and (strict or not read.predictions):
        _fail(f"{predictions}: {len(read.bad_lines)} bad line(s) of {read.lines}"
              + ("; nothing scored (--strict)" if strict else "; no readable prediction, nothing scored"))
    if read.lines == 0:
        errors.print(f"warning: {predictions} holds no prediction: no task has an answer (each scores 0)",
                     markup=False)
    try:
        every_task = load_tasks(tasks, split=split, languages=language)  # type: ignore[arg-type]
        task_list = every_task if not (task or family) else load_tasks(
            tasks, split=split, languages=language, task_ids=task, families=family)  # type: ignore[arg-type]
    except (TaskLoadError, TaskSourceError, ValueError) as exc:
        _fail(str(exc))
    prediction_list = read.predictions
    if only_predicted:
        predicted = {p.task_id for p in prediction_list}
        task_list = [t for t in task_list if t.task_id in predicted]
    if task or family or only_predicted:  # a prediction of a task the filters left out is not an "unknown id"
        kept, known = {t.task_id for t in task_list}, {t.task_id for t in every_task}
        prediction_list = [p for p in prediction_list if p.task_id in kept or p.task_id not in known]
    if not task_list:
        _fail("no task left to score after the filters (--task/--family/--only-predicted)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-check"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        _fail(f"--out {out}: cannot write there: {exc.strerror or exc}")
    languages = {t.language for t in task_list}
    if len(languages) > 1 and not language:
        errors.print(
            f"note: tasks in several languages {sorted(languages)}; each is scored "
            "and reported by language; pass --language to score one",
            markup=False,
        )
    for unreadable in (p.unreadable for p in prediction_list if p.unreadable):
        errors.print(unreadable, markup=False)
    result = score_predictions(task_list, prediction_list, rules_book, compat)  # type: ignore[arg-type]
    summary = aggregate(result.scored)
    try:
        with (out / SCORES_FILE).open("w", encoding="utf-8") as handle:
            for record in result.scored:
                handle.write(record.model_dump_json() + "\n")
        inputs = {
            "tasks": tasks, "predictions": str(predictions), "rules": str(rules) if rules else None,
            "compat": compat, "filters": {"task": task or [], "family": family or [], "only_predicted": only_predicted},
            "bad_lines": read.bad_lines, "unknown_task_ids": result.unknown_task_ids,
            "duplicate_predictions": result.duplicate_predictions, "missing_predictions": summary.missing_predictions,
        }
        (out / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")
        written = write_reports(summary, out, result.scored)
    except OSError as exc:
        _fail(f"--out {out}: cannot write the scores: {exc.strerror or exc}")
    _print_summary(summary, result.unknown_task_ids, result.duplicate_predictions, list_missing)
    if read.bad_lines:
        console.print(f"skipped {len(read.bad_lines)} bad line(s) of {read.lines} in {predictions} "
                      "(listed above; --strict refuses such a file)", markup=False)
    console.print(
        f"wrote {out / SCORES_FILE} and {', '.join(p.name for p in written)} in {out}", markup=False
    )


def _fail(message: str) -> NoReturn:
    errors.print(f"error: {message}", markup=False)
    raise typer.Exit(2)


def _print_summary(summary: Aggregate, unknown: list[str], duplicates: list[str], list_missing: bool) -> None:
    console.print(f"scoring mode: {summary.scoring}", markup=False)
    sections = [("Overall", [summary.overall])] + [(f"By {d}", groups) for d, groups in summary.by.items()]
    for title, groups in sections:
        table = Table(title=f"{title} (macro means, %)", title_justify="left")
        table.add_column("group", no_wrap=True)
        for column in ("tasks", "scored", "unparsed", "item-F1", "row-F1", "P.O.A.", "EM"):
            table.add_column(column, justify="right")
        for stats in groups:
            table.add_row(
                stats.group,
                str(stats.n_tasks),
                str(stats.n_scored),
                str(stats.n_parse_failures),
                *(_pct(v) for v in (stats.item_f1, stats.row_f1, stats.poa, stats.exact_match)),
            )
        console.print(table)
    missing = summary.missing_predictions
    if missing and not list_missing:
        total = summary.overall.n_tasks
        console.print(f"missing predictions: {len(missing)} of {total} task(s) have none: no answer, scored 0 "
                      "(--list-missing lists them; --only-predicted scores only the predicted tasks)", markup=False)
    for title, items in (
        ("parse failures (unscored)", summary.parse_failures),
        ("missing predictions (no answer: scored 0)", missing if list_missing else []),
        ("runs that ended in an error (no answer: scored 0)", summary.failed_runs),
        ("unknown task ids (not scored)", unknown),
        ("duplicate predictions (first counts)", duplicates),
    ):
        if items:
            console.print(f"{title}: {', '.join(items)}", markup=False)
    for label, error in summary.errors.items():
        errors.print(f"not scored: {label}: {error}", markup=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


@review_app.command("init")
def review_init(
    run: Path = typer.Argument(..., help="A scored run folder (`sgr score --out` or `sgr bench`)."),
) -> None:
    """Write a review template for every task of the run that is not fully correct."""
    try:
        written, kept = init_reviews(run)
    except RunReadError as exc:
        errors.print(str(exc), markup=False)
        raise typer.Exit(2) from exc
    console.print(
        f"{len(written)} template(s) written, {len(kept)} existing review(s) kept, in {run / 'reviews'}",
        markup=False,
    )


@review_app.command("summary")
def review_summary(run: Path = typer.Argument(..., help="A run folder with filled reviews.")) -> None:
    """Validate the filled reviews and print the share of each failure class."""
    try:
        summary = summarize_reviews(run)
    except FileNotFoundError as exc:
        errors.print(str(exc), markup=False)
        raise typer.Exit(2) from exc
    table = Table(title=f"Failure classes ({len(summary.reviews)} reviewed cases)")
    for column in ("class", "cases", "share %"):
        table.add_column(column, justify="left" if column == "class" else "right")
    for name, count, share in summary.class_shares():
        table.add_row(name, str(count), f"{100 * share:.1f}")
    console.print(table)
    if summary.unfilled:
        console.print(
            f"{len(summary.unfilled)} template(s) not filled yet: "
            + ", ".join(p.name for p in summary.unfilled),
            markup=False,
        )
    for path, problems in summary.invalid.items():
        errors.print(f"{path}: " + "; ".join(problems), markup=False)
    if summary.invalid:
        raise typer.Exit(1)
