"""The live view of a benchmark: a rich progress bar with done/failed/running, ETA, tokens and cost.

On a terminal the bar redraws in place; elsewhere (CI logs, pipes) each finished cell prints one line,
so a log still shows progress without control characters.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from agent.rundir.cells import CellRecord


class BenchProgress:
    def __init__(self, total: int, already_done: int, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.total = total
        self.done = already_done
        self.failed = 0
        self.running = 0
        self.tokens = 0
        self.cost = 0.0
        self._progress = Progress(
            TextColumn("[bold]sgr bench"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not self.console.is_terminal,
        )
        self._task = self._progress.add_task("cells", total=total, completed=already_done, stats=self._stats())

    def _stats(self) -> str:
        return (f"failed {self.failed} | running {self.running} | tokens {self.tokens:,} | "
                f"cost ${self.cost:.4f}")

    def _refresh(self, advance: int = 0) -> None:
        self._progress.update(self._task, advance=advance, stats=self._stats())

    def started(self) -> None:
        self.running += 1
        self._refresh()

    def finished(self, record: CellRecord, seconds: float) -> None:
        self.running -= 1
        self.done += 1
        self.failed += int(record.failed)
        self.tokens += record.outcome.prompt_tokens + record.outcome.completion_tokens
        self.cost += record.outcome.cost_usd
        self._refresh(advance=1)
        self.console.print(f"[{self.done}/{self.total}] {record.key.label()}: {cell_line(record, seconds)}",
                           highlight=False, markup=False)

    def __enter__(self) -> BenchProgress:
        self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._progress.stop()


def cell_line(record: CellRecord, seconds: float) -> str:
    """A finished cell as the console shows it; a failed one says why (the cause is not only in cell.json)."""
    outcome = record.outcome
    if record.failed:
        return f"FAILED ({record.failure_cause()}; {outcome.steps} steps, {seconds:.1f} s)"
    item_f1, em = record.metrics.get("item_f1"), record.metrics.get("em")
    scored = f"EM {em:.0f}, item-F1 {item_f1:.2f}" if item_f1 is not None and em is not None else "unscored"
    return f"ok ({outcome.stop_reason}, {scored}, {outcome.steps} steps, {seconds:.1f} s)"
