"""Cell -> compared value, the authors' way: `clean`, then the field's aliases, case and type.

Their numbers compare as the normalised decimal's text, and an invalid number becomes the text
`INVALID:<cell>`, which does equal the same invalid text on the other side (unlike our `Invalid`).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, DecimalException

from eval.compat.rules import AuthorsField

_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_SPACES = re.compile(r"\s+")
_ID_SPLIT = re.compile(r"[;,\s]+")
_NUMBER_AND_UNIT = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(.*)")
# `format(d, "f")` of 1e999999999 writes a billion digits; beyond this exponent we keep the decimal's
# tuple as its identity (same equality) and never write it out.
_MAX_PLAIN_EXPONENT = 4000


def clean(value: str) -> str:
    """NFKC, strip, unwrap `[text](url)` (any URL), strip backticks/asterisks/spaces at both ends
    independently, collapse whitespace."""
    text = unicodedata.normalize("NFKC", value).strip()
    text = _LINK.sub(r"\1", text)
    return _SPACES.sub(" ", text.strip("`* ")).strip()


class FieldNormalizer:
    """One column's rule made ready: units are looked up by their cleaned names."""

    def __init__(self, rule: AuthorsField | None) -> None:
        self.rule = rule or AuthorsField()
        self.units = {clean(name): unit for name, unit in self.rule.units.items()}

    def __call__(self, cell: str) -> str | tuple[object, ...]:
        rule = self.rule
        text = clean(cell)
        text = rule.aliases.get(text, text)
        if rule.uppercase:
            text = text.upper()
        if rule.type == "id_list":
            members = {m.strip("\"'[]") for m in _ID_SPLIT.split(text)}
            return ";".join(sorted(m for m in members if m))
        if rule.type in ("integer", "decimal"):
            return self._number(text)
        return text

    def _number(self, text: str) -> str | tuple[object, ...]:
        try:
            if self.units:
                match = _NUMBER_AND_UNIT.fullmatch(text)
                if not match:
                    return "INVALID:" + text
                number, unit = Decimal(match[1]), match[2]
                if unit:
                    conversion = self.units.get(unit)
                    if conversion is None:
                        return "INVALID_UNIT:" + text
                    number = (
                        (number - Decimal(str(conversion.offset)))
                        * Decimal(str(conversion.scale_num))
                        / Decimal(str(conversion.scale_den))
                    )
            else:
                number = Decimal(text)
            if not number.is_finite() or (self.rule.type == "integer" and number != number.to_integral()):
                return "INVALID:" + text
            normal = number.normalize()
        except (DecimalException, ValueError):
            # InvalidOperation as theirs; other decimal signals (Overflow) would crash their scorer.
            return "INVALID:" + text
        if abs(normal.as_tuple().exponent) > _MAX_PLAIN_EXPONENT:  # type: ignore[arg-type]
            return ("decimal", normal.as_tuple())
        return format(normal, "f")


def shown(value: str | tuple[object, ...] | None) -> str | None:
    """Readable form for evidence."""
    if value is None or isinstance(value, str):
        return value
    return str(Decimal(value[1]))  # type: ignore[arg-type]
