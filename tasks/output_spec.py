"""Derive a task's `OutputSpec` from its rubric normalization and `output_format` text.

Real records are inconsistent: a schema list may be missing (columns are then only in `output_format` as
`<a>|<b>` placeholders or "columns a|b|c"), separators are written as characters or words, the header rule
may be a bool, a phrase, or only a sentence of `output_format`. Rubric values win; `output_format` fills gaps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tasks.spec import HeaderRule, OutputSpec


class OutputSpecError(ValueError):
    """The record does not say enough to build an OutputSpec; `field` is the record field to fix."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def column_slug(name: str) -> str:
    """"Result value/unit", "result_value_unit" and "RESULT VALUE UNIT" name the same column."""
    return re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_")


_SEPARATOR_WORDS: dict[str, str] = {
    "newline": "\n", "new line": "\n", "line break": "\n", "linebreak": "\n", "line": "\n",
    "one per line": "\n", "lf": "\n", "crlf": "\n",
    "comma": ",", "semicolon": ";", "pipe": "|", "vertical bar": "|", "tab": "\t",
}
_SEPARATOR_ESCAPES: dict[str, str] = {"\\n": "\n", "\\r\\n": "\n", "\r\n": "\n", "\\t": "\t"}


def parse_separator(raw: Any, field: str) -> str:
    """A separator written as a character ("\\n", ";", ", ", "'|'") or in words ("newline", "semicolon (;)")."""
    if not isinstance(raw, str) or raw == "":
        raise OutputSpecError(field, f"separator must be a non-empty string, got {raw!r}")
    if raw.strip() == "":  # whitespace itself: a real newline or tab character
        for char in ("\n", "\t"):
            if char in raw:
                return char
        raise OutputSpecError(field, f"a blank separator {raw!r} cannot split records")
    stripped = raw.strip()
    unquoted = stripped.strip("`'\"") or stripped
    for candidate in (raw, stripped, unquoted):
        if candidate in _SEPARATOR_ESCAPES:
            return _SEPARATOR_ESCAPES[candidate]
        if candidate in {"|", ",", ";", "\t"}:
            return candidate
    words = re.sub(r"[^a-z ]+", " ", unquoted.lower()).split()
    phrase = " ".join(words)
    for word, sep in _SEPARATOR_WORDS.items():
        if re.search(rf"\b{word}s?\b", phrase) and len(words) <= 5:
            return sep
    if len(unquoted) <= 3 and not any(c.isalnum() or c.isspace() for c in unquoted):
        return unquoted
    raise OutputSpecError(field, f"unrecognised separator {raw!r} (use a character such as '\\n', ';', ',')")


def _norm_dict(normalization: Any) -> dict[str, Any]:
    if normalization is None:
        return {}
    if hasattr(normalization, "model_dump"):
        return normalization.model_dump(by_alias=True, exclude_none=True)
    if isinstance(normalization, Mapping):
        return dict(normalization)
    raise OutputSpecError("rubric.normalization", f"expected an object, got {type(normalization).__name__}")


def _first(norm: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if norm.get(key) not in (None, "", [], {}):
            return norm[key]
    return None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'`])|\n+", text) if s.strip()]


# --- columns -------------------------------------------------------------------------------------------


def _schema_columns(schema: Any) -> list[str] | None:
    if schema is None:
        return None
    if isinstance(schema, str):
        sep = "|" if "|" in schema else ","
        return [c.strip().strip("`'\"<>") for c in schema.split(sep) if c.strip()]
    if isinstance(schema, Mapping):  # {"column": "description or type", ...} in column order
        return [str(k).strip() for k in schema if str(k).strip()]
    if isinstance(schema, list):
        names: list[str] = []
        for item in schema:
            if isinstance(item, Mapping):
                name = _first(dict(item), "name", "field", "column", "key")
                if not isinstance(name, str):
                    raise OutputSpecError("rubric.normalization.schema", f"schema entry without a name: {item!r}")
                names.append(name.strip())
            else:
                names.append(str(item).strip())
        return [n for n in names if n]
    raise OutputSpecError(
        "rubric.normalization.schema", f"schema must be a list, an object or a string, got {schema!r}"
    )


_NAME = r"[^<>\n|`]+"
_TOKEN = r"[A-Za-z0-9_][A-Za-z0-9_ /()%#-]*"  # no ".": a sentence may end right after the list


def _pipe_run(sep: str) -> str:
    return rf"({_TOKEN}(?:[ \t]*{sep}[ \t]*{_TOKEN})+)"


def columns_from_output_format(output_format: str, field_separator: str = "|") -> list[str] | None:
    """Columns named in prose, most explicit form first: `<a>|<b>` or `{a}|{b}` placeholders,
    "columns a|b|c", a quoted `a|b|c`, then a bare "a | b | c" after a colon or at the start of a line."""
    sep = re.escape(field_separator)
    for opening, closing in (("<", ">"), ("{", "}")):
        name = rf"[^{opening}{closing}\n|`]+"
        run = re.search(rf"{opening}{name}{closing}(?:[ \t]*{sep}[ \t]*{opening}{name}{closing})+", output_format)
        if run:
            return [m.strip() for m in re.findall(rf"{opening}({name}){closing}", run.group(0))]
    patterns = (
        r"(?i:columns?|fields?|header)\s*(?:\([^)]*\)\s*)?(?:are|is|in this order|in order)?\s*[:=]?\s*[`'\"]?"
        + _pipe_run(sep),
        rf"`{_pipe_run(sep)}`",
        rf"(?m)(?:^|:)[ \t]*[`'\"]?{_pipe_run(sep)}[ \t]*[`'\"]?[ \t]*(?:$|[.;]|\n)",
    )
    for pattern in patterns:
        match = re.search(pattern, output_format)
        if match:
            return [c.strip() for c in re.split(sep, match.group(1)) if c.strip()]
    single = re.findall(rf"<({_NAME})>", output_format)
    if len(single) == 1:
        return [single[0].strip()]
    return None


def columns_from_header_rule(header_rule: str, field_separator: str = "|") -> list[str] | None:
    """A header rule that spells the header: "required: a|b|c", "first line must be `a|b|c`", "a|b|c"."""
    match = re.search(_pipe_run(re.escape(field_separator)), header_rule)
    if not match:
        return None
    return [c.strip() for c in match.group(1).split(field_separator) if c.strip()] or None


# --- header, NONE, ordering, dedup key -----------------------------------------------------------------

_HEADER_OMITTED = re.compile(
    r"\bno header|\bwithout (?:a |any |the )?header|\b(?:do not|don't|never|must not|should not)\s+"
    r"(?:include|output|print|add|write|emit|start with|begin with)\s+(?:a |any |the )?(?:column )?header"
    r"|\bomit(?:ted|ting)? (?:the |any |a )?(?:column )?header|\bexclude (?:the |any )?header"
    r"|\bheader(?: row| line)?s? (?:must|should|is to) (?:not|be omitted|be excluded)|\bheaderless\b",
    re.IGNORECASE,
)
_HEADER_OPTIONAL = re.compile(
    r"\bheader(?: row| line)? (?:is |are )?optional|\boptional header|\bmay (?:include|start with|begin with)"
    r" (?:a |the )?(?:column )?header|\bwith or without (?:a |the )?header",
    re.IGNORECASE,
)
_HEADER_REQUIRED = re.compile(
    r"\b(?:include|start with|begin with|output|print|write|add|with|emit|keep)\s+(?:a |the |one )?"
    r"(?:column |single )?header|\bheader(?: row| line)? (?:is |are )?(?:required|mandatory|first)"
    r"|\bfirst (?:line|row) (?:is|must be|should be) (?:the |a )?(?:column )?header",
    re.IGNORECASE,
)


def header_rule_from_text(text: str) -> HeaderRule | None:
    """Omission is checked first: "do not include a header" also contains "include a header"."""
    if _HEADER_OMITTED.search(text):
        return "omitted"
    if _HEADER_OPTIONAL.search(text):
        return "optional"
    if _HEADER_REQUIRED.search(text):
        return "required"
    return None


_HEADER_WORDS: dict[str, HeaderRule] = {
    "omit": "omitted", "omitted": "omitted", "none": "omitted", "no": "omitted", "false": "omitted",
    "exclude": "omitted", "excluded": "omitted", "absent": "omitted",
    "optional": "optional", "allowed": "optional", "either": "optional",
    "required": "required", "include": "required", "included": "required", "yes": "required",
    "true": "required", "mandatory": "required", "present": "required",
    "not required": "optional", "not needed": "optional", "forbidden": "omitted", "not allowed": "omitted",
}


def header_rule_from_rubric(raw: Any, field_separator: str) -> HeaderRule | None:
    if raw is None:
        return None
    if isinstance(raw, bool):
        return "required" if raw else "omitted"
    if isinstance(raw, Mapping):
        for key in ("rule", "required", "include", "present", "value"):
            if key in raw:
                return header_rule_from_rubric(raw[key], field_separator)
        return None
    if isinstance(raw, str):
        word = raw.strip().lower().rstrip(".")
        if word in _HEADER_WORDS:
            return _HEADER_WORDS[word]
        from_text = header_rule_from_text(raw)
        if from_text:
            return from_text
        if field_separator in raw:  # the header line itself, e.g. "arxiv_id|title"
            return "required"
    raise OutputSpecError("rubric.normalization.header_row", f"unrecognised header rule {raw!r}")


_EMPTY_HINT = re.compile(r"(?i)\b(?:no|none|nothing|empty|zero|not found|cannot|absent)\b")
_EMPTY_TOKEN = re.compile(
    r"(?i:output|return|answer|write|print|respond with|reply with|reply|emit|give)\s+"
    r"(?i:exactly |only |just |the (?:single )?(?:word|token|string|literal) |a single )?"
    r"[`'\"“]?([A-Z][A-Z0-9_/-]*[A-Z0-9]|[A-Z])(?![a-z])[`'\"”]?"
)


def none_token_from_text(output_format: str) -> str | None:
    for sentence in _sentences(output_format):
        if not _EMPTY_HINT.search(sentence):
            continue
        tokens = _EMPTY_TOKEN.findall(sentence)
        if "NONE" in tokens:
            return "NONE"
        if tokens:
            return tokens[-1]
    return None


_RANKS = ("primary", "secondary", "tertiary", "quaternary")


def ordering_text(raw: Any) -> str | None:
    """Ordering as one readable line; object forms keep primary -> secondary -> tertiary precedence."""
    if raw is None:
        return None
    if isinstance(raw, str):
        return raw.strip() or None
    if isinstance(raw, Mapping):
        keys = [k for k in _RANKS if k in raw] + [k for k in raw if k not in _RANKS]
        parts = [f"{k}: {ordering_text(raw[k]) or ''}".strip() for k in keys if raw[k] not in (None, "")]
        return "; ".join(parts) or None
    if isinstance(raw, list):
        parts = [p for p in (ordering_text(item) for item in raw) if p]
        return "; ".join(parts) or None
    return str(raw)


_ORDER_HINT = re.compile(
    r"(?i)\b(?:sort|sorted|order|ordered|rank|ranked|ascending|descending|chronolog\w*|newest|oldest|"
    r"alphabetic\w*)\b"
)


def ordering_from_text(output_format: str) -> str | None:
    hits = [s for s in _sentences(output_format) if _ORDER_HINT.search(s)]
    return " ".join(hits) or None


def parse_dedup_key(raw: Any) -> tuple[str, ...] | None:
    """"(a, b, c)", "a + b", ["a", "b"] -> ("a", "b", "c")."""
    if raw is None:
        return None
    if isinstance(raw, str):
        inner = re.sub(r"^\w*\s*[(\[{]", "", raw.strip()).strip().strip("()[]{}").strip()  # "tuple(a, b)"
        items = re.split(r"\s*(?:,|\+|;|\band\b)\s*", inner)
    elif isinstance(raw, list | tuple):
        items = [str(i) for i in raw]
    else:
        raise OutputSpecError("rubric.normalization.dedup_key", f"dedup_key must be a string or list, got {raw!r}")
    names = tuple(i.strip().strip("`'\"<>").strip() for i in items)
    names = tuple(n for n in names if n)
    return names or None


def resolve_to_columns(names: tuple[str, ...], columns: tuple[str, ...]) -> tuple[str, ...]:
    """Spell key names exactly as the columns are spelled (rubrics mix "Result value" and result_value)."""
    by_slug = {column_slug(c): c for c in columns}
    return tuple(by_slug.get(column_slug(n), n) for n in names)


# --- the whole spec ------------------------------------------------------------------------------------


def derive_output_spec(normalization: Any, output_format: str) -> OutputSpec:
    """Build the OutputSpec; raises OutputSpecError naming the record field when columns cannot be found."""
    norm = _norm_dict(normalization)
    output_format = output_format or ""

    raw_field_sep = _first(norm, "field_separator", "field_delimiter", "column_separator")
    field_sep = parse_separator(raw_field_sep, "rubric.normalization.field_separator") if raw_field_sep else "|"

    raw_record_sep = _first(norm, "record_separator", "row_separator", "record_delimiter")
    if raw_record_sep is not None:
        record_sep = parse_separator(raw_record_sep, "rubric.normalization.record_separator")
    else:
        record_sep = record_separator_from_text(output_format) or "\n"

    raw_header = _first(norm, "header_row", "header", "header_rule")
    header = header_rule_from_rubric(raw_header, field_sep)
    header = header or header_rule_from_text(output_format) or "optional"

    columns = _schema_columns(_first(norm, "schema", "columns", "fields"))
    if not columns and isinstance(raw_header, str):
        columns = columns_from_header_rule(raw_header, field_sep)
    if not columns:
        columns = columns_from_output_format(output_format, field_sep)
    if not columns:
        raise OutputSpecError(
            "rubric.normalization.schema",
            "no columns: the rubric has no schema and output_format names none "
            "(expected <a>|<b> placeholders or 'columns a|b|c')",
        )

    none_token = _first(norm, "none_token", "empty_output", "empty_answer", "no_result_output")
    if not isinstance(none_token, str):
        none_token = none_token_from_text(output_format) or "NONE"

    ordering = ordering_text(_first(norm, "sorting_or_selection", "sorting", "sort", "ordering", "order", "row_order"))
    ordering = ordering or ordering_from_text(output_format)

    dedup = parse_dedup_key(_first(norm, "dedup_key", "deduplication_key", "row_key"))
    column_tuple = tuple(columns)
    return OutputSpec(
        columns=column_tuple,
        field_separator=field_sep,
        record_separator=record_sep,
        header=header,
        none_token=none_token.strip(),
        ordering=ordering,
        dedup_key=resolve_to_columns(dedup, column_tuple) if dedup else None,
    )


_RECORD_SEP_TEXT = re.compile(
    r"(?i)(?:(?:records?|rows?|entries|items|lines|results)\s+(?:are\s+|must be\s+|should be\s+)?"
    r"(?:separated|delimited|joined)\s+(?:by|with)|separate\s+(?:the\s+)?(?:records?|rows?|entries|items|results)"
    r"\s+(?:with|by|using))\s+(?:an?\s+|the\s+)?[`'\"]?(;|,|semicolons?|commas?|newlines?|new lines?|line breaks?)"
)


def record_separator_from_text(output_format: str) -> str | None:
    match = _RECORD_SEP_TEXT.search(output_format)
    if match:
        return parse_separator(match.group(1), "output_format")
    if re.search(r"(?i)\bone (?:record|row|line|item|entry|result|\w+) per line\b", output_format):
        return "\n"
    return None
