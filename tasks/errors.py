"""Load errors that name the file, line and field of every bad record, so a whole release can be fixed in one pass."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TaskProblem:
    """One bad record (or file): where it is and what is wrong with it."""

    file: str
    message: str
    line: int | None = None  # 1-based, JSONL only
    field: str | None = None  # dotted pydantic location, e.g. "metadata.intra_chain"
    task_id: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        who = f" [{self.task_id}]" if self.task_id else ""
        what = f" field '{self.field}':" if self.field else ""
        return f"{where}{who}{what} {self.message}"


class TaskLoadError(ValueError):
    """Raised after a load has looked at every record, carrying all problems found, not just the first."""

    def __init__(self, problems: list[TaskProblem]):
        self.problems = list(problems)
        shown = "\n".join(f"  - {p}" for p in self.problems[:50])
        more = f"\n  ... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{len(self.problems)} bad task record(s):\n{shown}{more}")


class TaskSourceError(ValueError):
    """The task source itself is unusable (missing path, unknown layout, unreachable hub): nothing to load."""


def display_path(path: Path) -> str:
    """Paths relative to the working directory where possible, so messages stay short and clickable."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
