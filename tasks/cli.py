"""`sgr tasks list|show|validate`: inspect and check task records from any source the loaders accept."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from tasks.align import AlignmentReport, align_pairs
from tasks.answer_check import check_reference_answer
from tasks.errors import TaskSourceError
from tasks.loaders import LoadResult, load_tasks
from tasks.models import Task

app = typer.Typer(no_args_is_help=True)


def console() -> Console:
    """Built per call so the terminal width (COLUMNS) is read when the command runs, not at import. Piped or
    redirected output gets a wide page, so ids and columns are never folded to fit 80 columns."""
    probe = Console()
    return probe if probe.is_terminal else Console(width=max(probe.width, 200))


def errors() -> Console:
    return Console(stderr=True)


class SplitChoice(StrEnum):
    both = "both"
    goal = "goal"
    constraint = "constraint"


TasksOpt = Annotated[
    str, typer.Option("--tasks", help="A .jsonl/.json file, a release folder, 'hf:<dataset id>', 'offline' or 'offline-heldout'.")
]
SplitOpt = Annotated[SplitChoice, typer.Option("--split", help="goal, constraint or both.")]
LanguageOpt = Annotated[list[str] | None, typer.Option("--language", "-l", help="en, zh (repeatable).")]
DomainOpt = Annotated[list[str] | None, typer.Option("--domain", "-d", help="Domain or ecosystem (repeatable).")]
FamilyOpt = Annotated[list[str] | None, typer.Option("--family", "-f", help="Source family (repeatable).")]
TaskIdOpt = Annotated[list[str] | None, typer.Option("--task-id", "-t", help="Task id (repeatable).")]


def _load(
    tasks: str,
    split: SplitChoice,
    language: list[str] | None,
    domain: list[str] | None,
    family: list[str] | None,
    task_id: list[str] | None,
) -> LoadResult:
    """Always collect: listing works on the good records even when some are bad (validate reports those)."""
    try:
        return load_tasks(
            tasks,
            split=split.value,
            languages=language,
            domains=domain,
            families=family,
            task_ids=task_id,
            on_error="collect",
        )
    except (TaskSourceError, ValueError) as exc:
        errors().print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc


def _warn_problems(result: LoadResult, tasks: str) -> None:
    if result.problems:
        errors().print(
            f"[yellow]{len(result.problems)} bad record(s) skipped; run `sgr tasks validate --tasks {tasks}`[/yellow]"
        )


@app.command("list")
def list_tasks(
    tasks: TasksOpt = "offline",
    split: SplitOpt = SplitChoice.both,
    language: LanguageOpt = None,
    domain: DomainOpt = None,
    family: FamilyOpt = None,
    task_id: TaskIdOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON summary per line instead of a table.")] = False,
) -> None:
    """List tasks with their variant, language, domain, family and answer columns."""
    result = _load(tasks, split, language, domain, family, task_id)
    if as_json:
        for task in result.tasks:
            typer.echo(json.dumps(_summary(task), ensure_ascii=False))
    else:
        table = Table(title=f"{len(result.tasks)} task(s) from {tasks}")
        table.add_column("task_id", no_wrap=True)  # an id is copied whole, never folded
        for header in ("variant", "lang", "domain", "family", "rows", "columns"):
            table.add_column(header, overflow="fold")
        for task in result.tasks:
            s = _summary(task)
            table.add_row(
                s["task_id"], s["variant"], s["language"], s["domain"], s["family"], str(s["rows"] or "?"),
                " | ".join(s["columns"]),
            )
        console().print(table)
    _warn_problems(result, tasks)


def _summary(task: Task) -> dict:
    return {
        "task_id": task.task_id,
        "variant": task.variant,
        "language": task.language,
        "domain": task.domain,
        "ecosystem": task.ecosystem,
        "family": task.family,
        "rows": task.expected_rows,
        "columns": list(task.output_spec.columns),
        "source": task.source,
    }


@app.command("show")
def show(
    task_id: Annotated[str | None, typer.Argument(help="The task id, e.g. arxiv_001-g.")] = None,
    task_ids: TaskIdOpt = None,
    tasks: TasksOpt = "offline",
    language: LanguageOpt = None,
    solver_view: Annotated[
        bool, typer.Option("--solver-view", help="Only what the agent may see (no answer, rubric, metadata).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The full record as JSON.")] = False,
) -> None:
    """Show tasks (`sgr tasks show ID` or `-t ID`, repeatable): instruction, output spec, gates, rubric, answer."""
    wanted = [*([task_id] if task_id else []), *(task_ids or [])]
    if not wanted:
        errors().print("[red]error:[/red] give a task id: `sgr tasks show ID` or `sgr tasks show -t ID`",
                       highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    result = _load(tasks, SplitChoice.both, language, None, None, wanted)
    for task in result.tasks:
        if solver_view:
            typer.echo(task.solver_view().model_dump_json(indent=2))
        elif as_json:
            typer.echo(json.dumps(task.to_record(), ensure_ascii=False, indent=2))
        else:
            _print_task(task)


def _print_task(task: Task) -> None:
    spec = task.output_spec
    head = Table.grid(padding=(0, 2))
    for key, value in (
        ("variant", task.variant), ("language", task.language), ("domain", task.domain),
        ("ecosystem", task.ecosystem), ("family", task.family), ("rows", task.expected_rows),
        ("start_url", task.start_url), ("source", task.source),
    ):
        head.add_row(f"[bold]{key}[/bold]", str(value))
    console().print(Panel(head, title=task.task_id))
    console().print(Panel(task.instruction, title="instruction"))
    console().print(Panel(task.output_format, title="output_format"))
    spec_table = Table.grid(padding=(0, 2))
    for key, value in (
        ("columns", " | ".join(spec.columns)), ("field separator", repr(spec.field_separator)),
        ("record separator", repr(spec.record_separator)), ("header", spec.header),
        ("NONE token", spec.none_token), ("ordering", spec.ordering), ("dedup key", spec.dedup_key),
    ):
        spec_table.add_row(f"[bold]{key}[/bold]", str(value))
    console().print(Panel(spec_table, title="output spec"))
    gates = "\n".join(f"- {g}" for g in task.metadata.gates) or "(none)"
    console().print(Panel(gates, title=f"state gates ({task.metadata.dependency_type})"))
    notes = task.rubric.normalization.column_notes(spec.columns)
    if notes:
        console().print(Panel("\n".join(f"{k}: {v}" for k, v in notes.items()), title="column notes"))
    console().print(Panel(task.oracle_answer, title="oracle_answer"))


@app.command("validate")
def validate(
    tasks: TasksOpt = "offline",
    split: SplitOpt = SplitChoice.both,
    language: LanguageOpt = None,
    domain: DomainOpt = None,
    family: FamilyOpt = None,
    task_id: TaskIdOpt = None,
    strict_pairs: Annotated[
        bool, typer.Option("--strict-pairs", help="Also fail when a goal/constraint partner is missing.")
    ] = False,
    answer_check: Annotated[
        bool,
        typer.Option(
            "--answer-check/--no-answer-check",
            help="Parse each reference answer with the evaluator under its own spec (rows, width, header).",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Problems and alignment as one JSON object.")] = False,
) -> None:
    """Check every record and the goal/constraint alignment; exits 1 listing all problems (or if none loaded)."""
    result = _load(tasks, split, language, domain, family, task_id)
    if answer_check:
        result.problems.extend(p for task in result.tasks for p in check_reference_answer(task))
    report = align_pairs(result.tasks) if split is SplitChoice.both else None
    failed = not result.tasks or bool(result.problems) or (
        report is not None and (bool(report.mismatched) or (strict_pairs and bool(report.unpaired)))
    )
    if as_json:
        payload = {
            "ok": not failed,
            "tasks": len(result.tasks),
            "problems": [asdict(p) for p in result.problems],
            "alignment": None if report is None else report.model_dump(),
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        _print_validation(result, report, strict_pairs)
    if failed:
        raise typer.Exit(1)


def _print_validation(result: LoadResult, report: AlignmentReport | None, strict_pairs: bool) -> None:
    out = console()
    if result.problems:
        table = Table(title=f"{len(result.problems)} problem(s)")
        for header in ("file", "line", "task_id", "field", "message"):
            table.add_column(header, overflow="fold")
        for p in result.problems:
            table.add_row(p.file, str(p.line or ""), p.task_id or "", p.field or "", p.message)
        out.print(table)
    if report is not None:
        for pair in report.mismatched:
            out.print(
                f"[red]pair {pair.goal_id} / {pair.constraint_id} ({pair.language}) differs in: "
                f"{', '.join(pair.differences)}[/red]"
            )
        if report.unpaired:
            style = "red" if strict_pairs else "yellow"
            out.print(f"[{style}]unpaired: {', '.join(report.unpaired)}[/{style}]")
        out.print(f"{len(report.pairs)} goal/constraint pair(s), {len(report.mismatched)} mismatched")
    out.print(f"{len(result.tasks)} task(s) loaded, {len(result.problems)} problem(s)")
    if not result.tasks:
        out.print("[red]no task records to validate: nothing was loaded[/red]")

