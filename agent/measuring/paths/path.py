"""A decision path: what a model decided in one run (its plan and its tool calls, in order), kept so the run
becomes a regression case. Targets are what the page showed (`shown_label` of a control, `shown_link` of a
link), never the page's ref numbering, and the sites' origin is `{origin}`: a renderer change or another
port does not break a path. A replay fixes the decisions, so it tells whether the agent still accepts a path
a model took; it cannot tell what a model would now do differently (for that, play the model again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.measuring.safe_files import read_json

ORIGIN = "{origin}"
TARGET_KEYS = ("target", "start_target", "end_target")
MAX_PATH_BYTES = 16 * 2**20  # a path is a few KB: its plan and calls
ASSERTIONS = ("exact_match", "no_refusal", "no_gate_flag", "no_rejected_request")


class PathStep(BaseModel):
    model_config = ConfigDict(extra="allow")  # `n` (the request it answered), curation notes
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Expectation(BaseModel):
    """What a replay of the path must show. `known_false_alarms`: assertion -> the cause that breaks it today
    (a test marks it an expected failure, strict, so it flips when the cause is fixed)."""

    model_config = ConfigDict(extra="forbid")
    asserts: list[str] = Field(default_factory=lambda: list(ASSERTIONS))
    known_false_alarms: dict[str, str] = Field(default_factory=dict)


class DecisionPath(BaseModel):
    model_config = ConfigDict(extra="allow")  # provenance: source, note, removed_n, player
    task: str
    plan: dict[str, Any] | None = None
    steps: list[PathStep]
    expect: Expectation = Field(default_factory=Expectation)

    @classmethod
    def load(cls, path: Path) -> DecisionPath:
        """ValueError (its first line says why) for a file that is not a path, over the cap, or not a file."""
        return cls.model_validate(read_json(Path(path), MAX_PATH_BYTES))

    def with_origin(self, origin: str) -> DecisionPath:
        """The path with `{origin}` replaced by where the sites run now."""
        return DecisionPath.model_validate_json(self.model_dump_json().replace(ORIGIN, origin.rstrip("/")))

    def dump(self) -> str:
        return json.dumps(self.model_dump(exclude_none=True), indent=1, ensure_ascii=False) + "\n"
