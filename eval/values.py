"""Turn one cell into the value it is compared by, under its field rule.

Comparable values are hashable (they key rows). A cell that should be a number or date but is not
becomes an `Invalid`, which equals nothing (not even another invalid cell): a malformed value never
earns credit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TypeAlias

from eval.canonical import NORMALIZERS, canonicalize
from eval.rules import FieldRule


@dataclass(eq=False, frozen=True)
class Invalid:
    """Identity equality on purpose: an unparseable value is never equal to any other value."""

    raw: str
    reason: str


Comparable: TypeAlias = str | Fraction | tuple[str, ...] | Invalid

_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u2009 _](?=\d{3}(?!\d))")
_MAX_DIGITS = 100
_ID_LIST_SPLIT = re.compile(r"[;,\s]+")
# (strptime format, how much of the date it pins down: the ISO prefix length kept)
_DEFAULT_DATE_FORMATS: tuple[tuple[str, int], ...] = (
    ("%Y-%m-%d", 10),
    ("%Y/%m/%d", 10),
    ("%Y.%m.%d", 10),
    ("%Y-%m-%dT%H:%M:%S", 10),
    ("%Y%m%d", 10),
    ("%m/%d/%Y", 10),
    ("%d %B %Y", 10),
    ("%d %b %Y", 10),
    ("%B %d, %Y", 10),
    ("%b %d, %Y", 10),
    ("%b. %d, %Y", 10),
    ("%B %d %Y", 10),
    ("%Y-%m", 7),
    ("%Y/%m", 7),
    ("%B %Y", 7),
    ("%b %Y", 7),
    ("%Y", 4),
)


class FieldComparer:
    """A field rule made ready to apply: the alias table is built once, not once per cell."""

    def __init__(self, rule: FieldRule | None) -> None:
        self.rule = rule
        self.aliases: dict[str, str] = {}
        if rule is not None:
            for canonical_value, variants in rule.aliases.items():
                target = self._text(canonicalize(canonical_value))
                for variant in variants:
                    self.aliases[self._text(canonicalize(variant))] = target

    def __call__(self, cell: str) -> Comparable:
        """Canonicalize, then apply the field's normalizers, case rule, aliases and type."""
        text = canonicalize(cell)
        rule = self.rule
        if rule is None:
            return text
        if rule.type == "id_list":
            return tuple(sorted({self._aliased(item) for item in _ID_LIST_SPLIT.split(text) if item}))
        text = self._aliased(text)
        if rule.type == "string":
            return text
        if rule.type == "date":
            return _parse_date(text, rule)
        number = _parse_number(text, rule)
        if isinstance(number, Invalid):
            return number
        if rule.type == "integer":
            return number if number.denominator == 1 else Invalid(cell, "not an integer")
        if rule.places is not None:
            number = Fraction(round(number, rule.places))
        return number

    def _text(self, text: str) -> str:
        assert self.rule is not None
        for name in self.rule.normalizers:
            text = NORMALIZERS[name](text)
        return text.upper() if self.rule.uppercase else text

    def _aliased(self, text: str) -> str:
        text = self._text(text)
        return self.aliases.get(text, text)


def _parse_number(text: str, rule: FieldRule) -> Fraction | Invalid:
    body = text.replace("\u2212", "-").strip()
    conversion = None
    for suffix, conv in sorted(rule.conversions.items(), key=lambda item: -len(item[0])):
        if suffix and body.endswith(suffix):
            body, conversion = body[: -len(suffix)].strip(), conv
            break
    else:
        if rule.unit and body.endswith(rule.unit):
            body = body[: -len(rule.unit)].strip()
    body = _THOUSANDS.sub("", body).removeprefix("+")
    try:
        value = Decimal(body)
    except InvalidOperation:
        return Invalid(text, "not a number")
    if not value.is_finite():
        return Invalid(text, "not a finite number")
    if len(value.as_tuple().digits) > _MAX_DIGITS or abs(value.adjusted()) > _MAX_DIGITS:
        return Invalid(
            text, "number out of range"
        )  # `1e999999999` would otherwise build a billion-digit integer
    number = Fraction(value)
    if conversion is not None:
        number = (number - Fraction(conversion.offset)) * Fraction(conversion.num) / Fraction(conversion.den)
    return number


def _parse_date(text: str, rule: FieldRule) -> str | Invalid:
    """ISO text at the precision the value was written with (`2024-03`, `2024-03-05`)."""
    custom = tuple((fmt, _precision_of(fmt)) for fmt in rule.date_formats or ())
    for fmt, precision in custom + _DEFAULT_DATE_FORMATS:
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            continue
        return parsed.date().isoformat()[:precision]
    return Invalid(text, "not a date")


def _precision_of(fmt: str) -> int:
    if "%d" in fmt or "%j" in fmt:
        return 10
    return 7 if ("%m" in fmt or "%b" in fmt or "%B" in fmt) else 4


def display(value: Comparable | None) -> str | None:
    """Readable form of a comparable value for evidence."""
    if value is None:
        return None
    if isinstance(value, Invalid):
        return f"{value.raw} (invalid: {value.reason})"
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else str(float(value))
    if isinstance(value, tuple):
        return "; ".join(value)
    return value
