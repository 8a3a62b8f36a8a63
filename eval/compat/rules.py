"""The authors' per-task scoring rules (`rules.json`, or a released record's `rubric`), and where a
task's come from when it carries none.

Their shape::

    {"columns": [...], "row_key": [...], "record_separator": ";",            # separator optional
     "fields": {"count": {"type": "integer"},
                "temp": {"type": "decimal", "units": {"°F": {"offset": 32, "scale_num": 5, "scale_den": 9}}},
                "name": {"aliases": {"variant": "canonical"}, "uppercase": true},
                "ids": {"type": "id_list"}}}

Precedence for one task: rules the record carries > the `--rules` overlay, translated > a fallback
(the task's columns and separator, its rubric's `dedup_key` or the first column as key, every field
text), each recorded as the score's `key_source`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.rules import FieldRule, TaskRules, UnitConversion, column_index
from tasks.spec import OutputSpec

AuthorsType = Literal["string", "integer", "decimal", "id_list"]


class AuthorsRulesError(ValueError):
    """Rules the authors' scorer would refuse (it asserts or raises on them); names task and key."""


class AuthorsUnit(BaseModel):
    model_config = ConfigDict(extra="allow")

    # Kept as written: they compute `Decimal(str(value))`, so 1.8 and "1.8" must stay as given.
    offset: Any = 0
    scale_num: Any = 1
    scale_den: Any = 1


class AuthorsField(BaseModel):
    model_config = ConfigDict(extra="allow")  # their records add prose keys ("semantics")

    type: AuthorsType = "string"
    aliases: dict[str, str] = Field(default_factory=dict, description="variant -> canonical, exact")
    uppercase: bool = False
    units: dict[str, AuthorsUnit] = Field(default_factory=dict)


class AuthorsRules(BaseModel):
    model_config = ConfigDict(extra="allow")  # "status", "precision", "sorting", ... are notes

    columns: list[str] = Field(min_length=1)
    row_key: list[str] = Field(min_length=1)
    record_separator: str | None = None
    fields: dict[str, AuthorsField] = Field(default_factory=dict)
    source: str = Field("", exclude=True, description="where these rules came from")

    @model_validator(mode="after")
    def _key_in_columns(self) -> AuthorsRules:
        unknown = [name for name in self.row_key if name not in self.columns]
        if unknown:
            raise ValueError(f"row_key {unknown} not among columns {self.columns}")
        if self.record_separator not in (None, "\n", ",", ";"):
            raise ValueError(f"record_separator {self.record_separator!r}: only newline, ',' or ';'")
        return self

    @property
    def key_indices(self) -> list[int]:
        return [self.columns.index(name) for name in self.row_key]


def carried_rules(rubric: Any) -> dict[str, Any] | None:
    """The authors' rules a released record carries in its rubric (`columns` + `row_key`), if any."""
    extra = getattr(rubric, "model_extra", None)
    raw = extra if extra is not None else rubric
    if isinstance(raw, Mapping) and "columns" in raw and "row_key" in raw:
        return dict(raw)
    return None


def authors_rules(
    task_id: str, spec: OutputSpec, rubric: Any = None, overlay: TaskRules | None = None
) -> AuthorsRules:
    """The rules the authors' scorer would get for this task, by the module's precedence."""
    raw = carried_rules(rubric)
    if raw is not None:
        try:
            rules = AuthorsRules.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()
            )
            raise AuthorsRulesError(f"{task_id}: rubric (authors' rules): {problems}") from exc
        rules.source = "record rubric (authors' rules)"
        return rules
    separator = spec.record_separator if spec.record_separator in (",", ";") else None
    if spec.record_separator not in ("\n", "\r\n", ",", ";"):
        raise AuthorsRulesError(
            f"{task_id}: record separator {spec.record_separator!r}: the authors' scorer takes only "
            "newline, ',' or ';'"
        )
    columns = list(spec.columns)
    if overlay is not None and (overlay.row_key or overlay.fields):
        return _from_overlay(task_id, columns, separator, overlay)
    key, source = [columns[0]], "fallback: first column"
    found = [column_index(spec, name) for name in spec.dedup_key or ()]
    if found and all(i is not None for i in found):
        key, source = [columns[i] for i in found if i is not None], "fallback: rubric dedup_key"
    return AuthorsRules(columns=columns, row_key=key, record_separator=separator, source=source)


def _from_overlay(task_id: str, columns: list[str], separator: str | None, overlay: TaskRules) -> AuthorsRules:
    """Our overlay in their terms: types, aliases (inverted), uppercase and unit conversions carry over;
    normalizers, `places` and date parsing have no counterpart in their scorer and are dropped."""
    spec = OutputSpec(columns=tuple(columns))

    def column(name: str, where: str) -> str:
        index = column_index(spec, name)
        if index is None:
            raise AuthorsRulesError(f"{overlay.origin or task_id}.{where}: no column {name!r} in {columns}")
        return columns[index]

    fields: dict[str, AuthorsField] = {}
    for name, rule in overlay.fields.items():
        units = {
            suffix: AuthorsUnit(offset=conv.offset, scale_num=conv.num, scale_den=conv.den)
            for suffix, conv in rule.conversions.items()
        }
        if units and rule.unit:
            units.setdefault(rule.unit, AuthorsUnit())
        fields[column(name, f"fields.{name}")] = AuthorsField(
            type=rule.type if rule.type != "date" else "string",
            aliases={variant: canonical for canonical, variants in rule.aliases.items() for variant in variants},
            uppercase=rule.uppercase,
            units=units,
        )
    key = [column(name, "row_key") for name in overlay.row_key] if overlay.row_key else [columns[0]]
    return AuthorsRules(
        columns=columns,
        row_key=key,
        record_separator=separator,
        fields=fields,
        source=f"--rules overlay ({overlay.origin})" if overlay.origin else "--rules overlay",
    )


def overlay_from_carried(task_id: str, rubric: Any) -> TaskRules | None:
    """The record's own authors' rules as our overlay, so the default mode keys and types rows as the
    record says (only what our rules can state: key, types, aliases, case, units)."""
    raw = carried_rules(rubric)
    if raw is None:
        return None
    try:
        rules = AuthorsRules.model_validate(raw)
    except ValidationError:
        return None  # --compat authors reports it; the default mode falls back to its own key
    fields = {}
    for name, rule in rules.fields.items():
        inverted: dict[str, list[str]] = {}
        for variant, canonical in rule.aliases.items():
            inverted.setdefault(canonical, []).append(variant)
        fields[name] = FieldRule(
            type=rule.type,
            aliases=inverted,
            uppercase=rule.uppercase,
            conversions={
                unit: UnitConversion(offset=str(c.offset), num=str(c.scale_num), den=str(c.scale_den))
                for unit, c in rule.units.items()
            },
        )
    return TaskRules(row_key=list(rules.row_key), fields=fields, origin=f"{task_id}: rubric (authors' rules)")
