"""The output contract of one task: shared by the agent's composer (writes) and the evaluator (parses).

Derivation from a task record (`rubric.normalization` + `output_format`) lives in `tasks.output_spec`;
this module only holds the contract, so `eval/` can depend on it without the loaders.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HeaderRule = Literal["required", "omitted", "optional"]


class OutputSpec(BaseModel):
    """Columns, separators, header rule and the empty-answer token of one task's answer table."""

    model_config = ConfigDict(frozen=True)

    columns: tuple[str, ...] = Field(min_length=1)
    field_separator: str = "|"
    record_separator: str = "\n"
    header: HeaderRule = "optional"
    none_token: str = "NONE"
    ordering: str | None = None
    dedup_key: tuple[str, ...] | None = None

    @property
    def width(self) -> int:
        return len(self.columns)

    def format(self, rows: list[list[str]] | list[tuple[str, ...]]) -> str:
        """Serialise rows exactly as the task asks: header rule, separators, NONE for no rows."""
        if not rows:
            return self.none_token
        sep = self.field_separator
        lines: list[str] = []
        if self.header == "required":
            lines.append(sep.join(self.columns))
        for row in rows:
            cells = [" ".join(str(c).split()) for c in row]
            lines.append(sep.join(c.replace(sep, "\\" + sep) if sep == "|" else c for c in cells))
        return self.record_separator.join(lines)
