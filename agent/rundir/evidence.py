"""`retrieval_state.json`: what the run read and in which state, typed, the one definition its writer
(agent/solve.py) and its readers (the HTML report, `sgr review`) share.

The outcome (`outcome.json`, or a bench cell's `cell.json`) says how the run ended: the answer, the stop reason,
the drift flags, the verifier's reports, the counts. This record holds what the answer stands on: the plan, the
states visited, the evidence tables with their reads and lineage, the result lists seen, the URLs opened. No field
is in both, so a reader never has to choose between two copies.

The nested values are the graph's own typed state (graph/state.py TypedDicts) as JSON, redacted before writing;
they are kept as plain JSON here so that a record written by an older run still reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.rundir.atomic import write_text_atomic

EVIDENCE_FILE = "retrieval_state.json"


class RunEvidence(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a record of an older run may carry fields since moved to the outcome

    final: dict[str, Any] | None = Field(None, description="The retrieval state the run ended in.")
    visited: list[dict[str, Any]] = Field(default_factory=list, description="Every retrieval state, in order.")
    plan: dict[str, Any] | None = Field(None, description="The plan as it stood at the end (None: no planner).")
    bindings: dict[str, Any] = Field(default_factory=dict,
                                     description="Plan gate id -> its binding on the page (graph/plan/binding.py).")
    rows: list[dict[str, Any]] = Field(default_factory=list,
                                       description="The answer table's rows, each with its provenance.")
    reads: list[dict[str, Any]] = Field(default_factory=list, description="The answer table's reads.")
    listings: list[dict[str, Any]] = Field(default_factory=list, description="Result lists seen (the detail check).")
    urls_opened: list[str] = Field(default_factory=list)
    opened: list[dict[str, Any]] = Field(default_factory=list, description="Pages opened from a listing's row, "
                                         "each with its listing and row (graph.state.OpenedPage; the detail check).")
    errors: list[dict[str, Any]] = Field(default_factory=list, description="Errors by kind, in order.")
    tables: dict[str, Any] = Field(default_factory=dict, description="Every evidence table, rows and reads.")
    lineage: dict[str, Any] | None = Field(None, description="A derived answer's lineage (graph/lineage).")


def write_evidence(folder: Path, evidence: RunEvidence) -> None:
    write_text_atomic(Path(folder) / EVIDENCE_FILE, evidence.model_dump_json(indent=2))


def read_evidence(folder: Path) -> RunEvidence | None:
    """The run's evidence record; None when the run never wrote one (it stopped first) or it cannot be read."""
    try:
        return RunEvidence.model_validate(json.loads((Path(folder) / EVIDENCE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
