"""Pydantic models of SGR-Bench task records, faithful to both storage forms of the release.

Per-task JSON files nest `metadata` and `rubric` as objects; the `*_hf.jsonl` splits carry them as
JSON-encoded strings. Both are accepted. Unknown keys are kept at every level (model_extra) and written
back on dump, so loading and saving a record never loses data.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from tasks.families import FAMILIES, OTHER, ecosystem_of, family_of, family_slug
from tasks.output_spec import column_slug, derive_output_spec
from tasks.spec import OutputSpec

Variant = Literal["goal", "constraint"]
GOAL_SUFFIX = "-g"
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def decode_json_object(value: Any) -> Any:
    """`*_hf.jsonl` stores nested objects as JSON strings; decode them so both forms validate alike."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"is a string but not valid JSON ({exc.msg} at char {exc.pos})") from exc
        if not isinstance(value, dict):
            raise ValueError(f"JSON string must encode an object, got {type(value).__name__}")
    return value


class _Open(BaseModel):
    """Records carry keys this model does not name; keep them rather than drop them."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Freeze(_Open):
    historical_window: str | list[Any] | dict[str, Any] | None = None  # usually text; start/end forms kept as given


class TaskMetadata(_Open):
    # Descriptive annotations: typed loosely so an unusual but meaningful form never blocks a release load.
    state_gated_retrieval: list[Any] | str | None = Field(None, alias="State-Gated Retrieval")
    dependency_type: str | list[str] | None = None
    intra_chain: bool | None = None
    inter_chain: bool | None = None
    data_dependency: str | list[Any] | dict[str, Any] | None = None
    control_dependency: str | list[Any] | dict[str, Any] | None = None  # empty or absent for data-only tasks
    freeze: Freeze | str | None = None
    answer_type: str | None = None

    @property
    def gates(self) -> list[str]:
        """The retrieval states to establish, as a list whatever the record's form."""
        raw = self.state_gated_retrieval
        if raw is None:
            return []
        items = [raw] if isinstance(raw, str) else raw
        return [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in items]

    @property
    def has_control_dependency(self) -> bool:
        return bool(self.control_dependency)


class Normalization(_Open):
    """Separators, schema, header rule, keys, ordering; other keys are usually per-column notes."""

    field_separator: str | None = None
    record_separator: str | None = None
    header_row: bool | str | dict[str, Any] | None = None
    schema_: list[str | dict[str, Any]] | dict[str, Any] | str | None = Field(None, alias="schema")
    dedup_key: str | list[str] | None = None
    sorting_or_selection: str | dict[str, Any] | list[Any] | None = None

    def column_notes(self, columns: tuple[str, ...] | list[str]) -> dict[str, Any]:
        """Free-text notes keyed by a column's name or a variant of it ("result value/unit" ~ result_value_unit)."""
        by_slug = {column_slug(c): c for c in columns}
        return {by_slug[column_slug(k)]: v for k, v in (self.model_extra or {}).items() if column_slug(k) in by_slug}


class Rubric(_Open):
    inclusion_conditions: list[Any] | str | None = None
    exclusion_conditions: list[Any] | str | None = None
    normalization: Normalization = Field(default_factory=Normalization)

    _decode_normalization = field_validator("normalization", mode="before")(decode_json_object)


class SolverView(BaseModel):
    """All an agent may see under the benchmark protocol: never metadata, rubric, answer or cardinality."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    instruction: str
    output_format: str
    start_url: str | None
    output_spec: OutputSpec


MAX_INSTRUCTION_CHARS = 20_000  # released instructions are a few hundred characters


class Task(_Open):
    task_id: str = Field(min_length=1)
    domain: str = Field(min_length=1)
    autonomy_type: str | None = None
    oracle_output_cardinality: int | str | None = None
    instruction: str = Field(min_length=1)
    start_url: str | None = None
    output_format: str
    oracle_answer: str
    metadata: TaskMetadata
    rubric: Rubric
    all_involved_urls: list[str] | None = None

    _language: str = PrivateAttr(default="en")
    _origin_file: str | None = PrivateAttr(default=None)
    _origin_line: int | None = PrivateAttr(default=None)

    _decode_nested = field_validator("metadata", "rubric", mode="before")(decode_json_object)

    @field_validator("task_id", "domain")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @field_validator("instruction", "output_format")
    @classmethod
    def _not_absurdly_long(cls, value: str) -> str:
        """Both are sent in every model request: a 20 MB instruction made 200 MB of requests in two steps."""
        if len(value) > MAX_INSTRUCTION_CHARS:
            raise ValueError(f"{len(value):,} characters: over the cap of {MAX_INSTRUCTION_CHARS:,} (it is sent in "
                             "every model request)")
        return value

    @field_validator("task_id")
    @classmethod
    def _path_safe_id(cls, value: str) -> str:
        """Ids name result folders and files: one plain path segment, never a way out of the run folder."""
        if not TASK_ID.fullmatch(value):
            raise ValueError(f"{value!r} is not a task id: use letters, digits, '.', '_' and '-', starting with a "
                             "letter or digit (at most 128 characters); ids name result folders")
        return value

    @field_validator("start_url")
    @classmethod
    def _web_url(cls, value: str | None) -> str | None:
        """The agent's browser opens it: a web address (http/https with a host), not file:, javascript:, data:."""
        if not value:
            return value
        try:
            parts = urlsplit(value)
            host = parts.hostname
        except ValueError as exc:
            raise ValueError(f"{value!r} is not a URL: {exc}") from exc
        if parts.scheme not in ("http", "https") or not host or any(c.isspace() or not c.isprintable() for c in value):
            raise ValueError(f"{value!r} is not an http(s) URL with a host")
        return value

    # --- derived ---------------------------------------------------------------------------------------

    @property
    def base_id(self) -> str:
        return self.task_id[: -len(GOAL_SUFFIX)] if self.task_id.endswith(GOAL_SUFFIX) else self.task_id

    @property
    def variant(self) -> Variant:
        return "goal" if self.task_id.endswith(GOAL_SUFFIX) else "constraint"

    @property
    def language(self) -> str:
        return self._language

    @property
    def family(self) -> str:
        """By domain; a domain the card does not list (e.g. an offline site) may declare its family in
        `metadata.family` or a top-level `family` key, which counts only if it names one of the six."""
        by_domain = family_of(self.domain)
        if by_domain != OTHER:
            return by_domain
        for declared in ((self.metadata.model_extra or {}).get("family"), (self.model_extra or {}).get("family")):
            if isinstance(declared, str):
                match = [f for f in FAMILIES if family_slug(f) == family_slug(declared)]
                if match:
                    return match[0]
        return OTHER

    @property
    def ecosystem(self) -> str:
        return ecosystem_of(self.domain)

    @property
    def expected_rows(self) -> int | None:
        """The cardinality as a number where the record states one ("4" and "4 rows" both give 4)."""
        raw = self.oracle_output_cardinality
        if isinstance(raw, int):
            return raw
        if isinstance(raw, str) and raw.strip().split(" ")[0].isdigit():
            return int(raw.strip().split(" ")[0])
        return None

    @property
    def source_file(self) -> str | None:
        return self._origin_file

    @property
    def source_line(self) -> int | None:
        return self._origin_line

    @property
    def source(self) -> str | None:
        """Where the record was read from ("file" or "file:line"), for messages and `sgr tasks show`."""
        if self._origin_file is None:
            return None
        return self._origin_file if self._origin_line is None else f"{self._origin_file}:{self._origin_line}"

    @cached_property
    def output_spec(self) -> OutputSpec:
        return derive_output_spec(self.rubric.normalization, self.output_format)

    def solver_view(self, give_start_url: bool = True) -> SolverView:
        return SolverView(
            task_id=self.task_id,
            instruction=self.instruction,
            output_format=self.output_format,
            start_url=self.start_url if give_start_url else None,
            output_spec=self.output_spec,
        )

    # --- provenance and serialisation -----------------------------------------------------------------

    def located(self, *, language: str, file: str | None, line: int | None = None) -> Task:
        """Record where the loader found this task; language is a property of the file, not the record."""
        self._language = language
        self._origin_file = file
        self._origin_line = line
        return self

    def to_record(self) -> dict[str, Any]:
        """The record as the release's per-task JSON (nested objects, original key spellings, extras kept)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
