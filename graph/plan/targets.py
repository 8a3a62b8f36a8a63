"""What a plan gate asks a control to hold, as typed data (issue 37, stage 1).

The planner writes before it has seen the site, so a target used to be free text ('2018..2021', 'since 2018',
'ticked (for the back-search)', 'A, B (each separately)') that the judge interpreted again at every check with
word lists that grew with each played run and failed open. A target is now one of five shapes, checked once by
pydantic when the plan is made (a bad date is a validation error the planner fixes from the tool's reply):

- `{"value": V}`: one value (an option's label or code, a typed term);
- `{"any_of": [A, B], "together": false}`: several values, read one at a time (each read holds one of them), or
  together (one read holds all of them at once: a multi-select, a separated list in one field);
- `{"checked": true}`: a checkbox or toggle on (false: off);
- `{"from": D, "to": D}`: a date window, each end an ISO date or a year, null for an open end (both null: every
  date); both keys are required, so an open end is said, never left out by accident;
- `{"unknown": NOTE}`: a gate the planner cannot give a value for (the task does not state it): explicitly not
  checkable, with the planner's note.

`show` is the one spelling of a target in prompts, flags and reports.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    WithJsonSchema,
    field_validator,
    model_validator,
)

_ISO = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def check_bound(text: str | None) -> str | None:
    """An ISO date ('2021-03-04'), month ('2021-03') or year ('2021'), or None (an open end)."""
    if text is None:
        return None
    text = text.strip()
    match = _ISO.match(text)
    if not match:
        raise ValueError(f"{text!r} is not an ISO date or year: write 2018, 2018-01 or 2018-01-31 (null: open end)")
    year, month, day = (int(g) if g else None for g in match.groups())
    try:
        date(year, month or 1, day or 1)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a calendar date ({exc})") from exc
    return text


def _first_day(bound: str) -> tuple[int, ...]:
    return tuple(int(p) for p in bound.split("-")) + (1,) * (3 - len(bound.split("-")))


def _last_day(bound: str) -> tuple[int, ...]:
    return tuple(int(p) for p in bound.split("-")) + (12, 31)[len(bound.split("-")) - 1:]


class _Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)

    def __str__(self) -> str:
        return show(self)


class Value(_Target):
    value: str = Field(min_length=1)


class AnyOf(_Target):
    any_of: list[str] = Field(min_length=2, description="each read holds one; together: one read holds all")
    together: bool = False


class Checked(_Target):
    checked: bool


Bound = Annotated[str | None, WithJsonSchema({"type": ["string", "null"]})]


class Window(_Target):
    start: Bound = Field(alias="from", description="ISO date or year; null: open")
    end: Bound = Field(alias="to")

    @field_validator("start", "end")
    @classmethod
    def _bound(cls, value: str | None) -> str | None:
        return check_bound(value)

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.start and self.end and _first_day(self.start) > _last_day(self.end):
            raise ValueError(f"window from {self.start} is after its end {self.end}")
        return self

    @property
    def open(self) -> bool:
        """Every date: no bound at all."""
        return self.start is None and self.end is None


class Unknown(_Target):
    unknown: str = Field(description="why no value can be given")


_SHAPES = {"value": "value", "any_of": "any_of", "checked": "checked", "from": "window", "to": "window",
           "start": "window", "end": "window", "unknown": "unknown"}


def _shape(data: Any) -> str | None:
    """Which shape a target's JSON is, by its keys (one clear error, not five)."""
    if isinstance(data, _Target):
        return {Value: "value", AnyOf: "any_of", Checked: "checked", Window: "window", Unknown: "unknown"}[type(data)]
    if isinstance(data, dict):
        return next((_SHAPES[k] for k in data if k in _SHAPES), None)
    return None


Target = Annotated[
    Annotated[Value, Tag("value")] | Annotated[AnyOf, Tag("any_of")] | Annotated[Checked, Tag("checked")]
    | Annotated[Window, Tag("window")] | Annotated[Unknown, Tag("unknown")],
    Discriminator(_shape, custom_error_type="target_shape",
                  custom_error_message="a target is {value}, {any_of, together}, {checked}, {from, to} or {unknown}"),
]


def show(target: Any) -> str:
    """The one spelling of a target in prompts, flags and reports."""
    if isinstance(target, Value):
        return target.value
    if isinstance(target, AnyOf):
        return (" + " if target.together else " | ").join(target.any_of)
    if isinstance(target, Checked):
        return "checked" if target.checked else "unchecked"
    if isinstance(target, Window):
        return "all dates" if target.open else f"{target.start or ''}..{target.end or ''}"
    if isinstance(target, Unknown):
        return f"? ({target.unknown})"
    return str(target)


def values_of(target: Any) -> list[str]:
    """The values a value-like target stands for (none for a box, a window or an unknown)."""
    if isinstance(target, Value):
        return [target.value]
    if isinstance(target, AnyOf):
        return list(target.any_of)
    return []
