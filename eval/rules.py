"""Optional per-task scoring rules: an overlay file that tightens or loosens how fields compare.

The rubric of a task says in prose what counts as equal; the overlay states it as data, so scoring stays
deterministic. File shape (YAML or JSON)::

    tasks:
      arxiv_001:                # a task id; a base id (no `-g`) covers both variants
        row_key: [arxiv_id]
        fields:
          arxiv_id: {type: string, normalizers: [arxiv_id]}
          temperature: {type: decimal, unit: "°C", conversions: {"°F": {offset: 32, num: 5, den: 9}}}
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from eval.canonical import NORMALIZERS, loose_name
from tasks.spec import OutputSpec

FieldType = Literal["string", "integer", "decimal", "id_list", "date"]


class RulesError(ValueError):
    """A rules file or a rule that does not fit its task; the message names file and key."""


class UnitConversion(BaseModel):
    """A value written in this unit becomes (value - offset) x num / den in the field's unit."""

    model_config = ConfigDict(extra="forbid")

    offset: Decimal = Decimal(0)
    num: Decimal = Decimal(1)
    den: Decimal = Decimal(1)

    @field_validator("den")
    @classmethod
    def _den_not_zero(cls, value: Decimal) -> Decimal:
        if value == 0:
            raise ValueError("den must not be 0")
        return value


class FieldRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: FieldType = "string"
    normalizers: list[str] = Field(default_factory=list)
    aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="canonical value -> variants that count as it"
    )
    uppercase: bool = False
    unit: str | None = Field(None, description="suffix of the field's own unit, stripped before parsing")
    conversions: dict[str, UnitConversion] = Field(
        default_factory=dict, description="unit suffix -> conversion"
    )
    places: int | None = Field(None, ge=0, description="decimal: round both sides to this many places")
    date_formats: list[str] | None = Field(None, description="strptime formats tried before the defaults")

    @field_validator("normalizers")
    @classmethod
    def _known_normalizers(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in NORMALIZERS]
        if unknown:
            raise ValueError(f"unknown normalizer(s) {unknown}; known: {sorted(NORMALIZERS)}")
        return names


class TaskRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    row_key: list[str] | None = None
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    origin: str = Field("", description="where these rules came from (file and key), for error messages")


class RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: dict[str, TaskRules] = Field(default_factory=dict)


class RulesBook:
    """Rules of a file, looked up by task id first and by base id (the `-g` twin shares a rubric)."""

    def __init__(self, by_task: dict[str, TaskRules]) -> None:
        self.by_task = by_task

    def for_task(self, task_id: str) -> TaskRules | None:
        if task_id in self.by_task:
            return self.by_task[task_id]
        return self.by_task.get(task_id.removesuffix("-g"))


def load_rules(path: Path) -> RulesBook:
    """Read and validate a rules file; every validation error names the file and the key path."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError(f"{path}: cannot read rules file: {exc}") from exc
    try:
        raw = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise RulesError(
            f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"
        ) from exc
    try:
        parsed = RulesFile.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        problems = [
            f"{path}: {'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        ]
        raise RulesError("invalid rules file:\n" + "\n".join(problems)) from exc
    for task_id, rules in parsed.tasks.items():
        rules.origin = f"{path}: tasks.{task_id}"
    return RulesBook(parsed.tasks)


def column_index(spec: OutputSpec, name: str) -> int | None:
    """Match a column name loosely (case, spaces, underscores, punctuation do not matter)."""
    wanted = loose_name(name)
    for i, column in enumerate(spec.columns):
        if loose_name(column) == wanted:
            return i
    return None


def resolve_field_rules(rules: TaskRules | None, spec: OutputSpec) -> list[FieldRule | None]:
    """One rule (or None) per schema column; a rule for a column the schema lacks is an error."""
    per_column: list[FieldRule | None] = [None] * spec.width
    if rules is None:
        return per_column
    for name, rule in rules.fields.items():
        index = column_index(spec, name)
        if index is None:
            raise RulesError(
                f"{rules.origin or 'rules'}.fields.{name}: no such column in {list(spec.columns)}"
            )
        per_column[index] = rule
    return per_column


def resolve_row_key(rules: TaskRules | None, spec: OutputSpec) -> tuple[tuple[int, ...], str]:
    """Key columns by precedence rules.row_key > rubric dedup_key > first column, and where it came from."""
    if rules is not None and rules.row_key:
        indices = []
        for name in rules.row_key:
            index = column_index(spec, name)
            if index is None:
                raise RulesError(
                    f"{rules.origin or 'rules'}.row_key: no column {name!r} in {list(spec.columns)}"
                )
            indices.append(index)
        return tuple(indices), "rules.row_key"
    if spec.dedup_key:
        found = [column_index(spec, name) for name in spec.dedup_key]
        if all(i is not None for i in found):
            return tuple(i for i in found if i is not None), "rubric dedup_key"
        return (0,), f"first column (rubric dedup_key {list(spec.dedup_key)} names unknown columns)"
    return (0,), "first column"
