"""Failure review, the benchmark's audit protocol: one primary class per not-fully-correct case.

The rule is "classify by the earliest decisive error, not by where the answer looks wrong", so a
review must name the first real root cause, the trace evidence for it, and why the nearest other
class does not apply. Templates are YAML files a person fills in; `summarize` validates them.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from eval.runs import RunEntry, load_run

FailureClass = Literal[
    "self-rewriting",
    "drift",
    "criterion mismatch",
    "in-page misreading",
    "retrieval dependency not closed",
    "final answer composition error",
]
FAILURE_CLASSES: tuple[str, ...] = FailureClass.__args__  # type: ignore[attr-defined]
REVIEWS_DIR = "reviews"


class CaseContext(BaseModel):
    """What the scorer saw, copied into the template so the reviewer need not look it up."""

    system: str = ""
    agent_variant: str = ""
    variant: str = ""
    family: str = ""
    item_f1: float | None = None
    row_f1: float | None = None
    poa: float | None = None
    exact_match: bool | None = None
    parse_failure: bool = False
    error: str | None = None
    omitted_keys: list[str] = Field(default_factory=list)
    extra_keys: list[str] = Field(default_factory=list)
    duplicate_keys: list[str] = Field(default_factory=list)
    artifacts: str = Field("", description="where the answer and the trace of this case are")


class FailureReview(BaseModel):
    """One filled review. Empty text is rejected: a class without its justification is not a review."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    context: CaseContext = Field(default_factory=CaseContext)
    primary_class: FailureClass
    first_root_cause: str = Field(min_length=1)
    key_trace_evidence: str = Field(min_length=1)
    nearest_other_class: FailureClass
    why_not_nearest: str = Field(min_length=1)

    @model_validator(mode="after")
    def _nearest_differs(self) -> FailureReview:
        if self.nearest_other_class == self.primary_class:
            raise ValueError("nearest_other_class must differ from primary_class")
        return self


def needs_review(entry: RunEntry) -> bool:
    score = entry.record.score
    return score is None or not score.exact_match


_MAX_STEM = 150  # well under the 255-byte file-name limit


def review_file_name(entry: RunEntry) -> str:
    """One plain file name inside the reviews folder, whatever the ids hold (separators, leading dots, length):
    the readable stem, and a digest of the raw ids whenever cleaning changed or cut them, so distinct cases
    never share a file."""
    parts = [p for p in (entry.record.system, entry.record.agent_variant, entry.record.task_id) if p]
    stem = "__".join(re.sub(r"[^A-Za-z0-9._-]+", "-", p).strip(".-") or "_" for p in parts)
    raw = "__".join(parts)
    if stem != raw or len(stem) > _MAX_STEM:
        digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:10]
        stem = f"{stem[:_MAX_STEM]}-{digest}"
    return stem + ".yaml"


def template(entry: RunEntry) -> dict:
    record, score = entry.record, entry.record.score
    evidence = score.evidence if score is not None else None
    context = CaseContext(
        system=record.system,
        agent_variant=record.agent_variant,
        variant=record.variant,
        family=record.family,
        item_f1=score.item_f1 if score else None,
        row_f1=score.row_f1 if score else None,
        poa=score.poa if score else None,
        exact_match=score.exact_match if score else None,
        parse_failure=bool(score and score.parse_failure),
        error=record.error,
        omitted_keys=evidence.omitted_keys if evidence else [],
        extra_keys=evidence.extra_keys if evidence else [],
        duplicate_keys=evidence.duplicate_keys if evidence else [],
        artifacts=str(entry.location),
    )
    return {
        "task_id": record.task_id,
        "context": context.model_dump(mode="json"),
        "primary_class": None,
        "first_root_cause": "",
        "key_trace_evidence": "",
        "nearest_other_class": None,
        "why_not_nearest": "",
    }


_HEADER = (
    "# Failure review. Classify by the EARLIEST decisive error, not by where the answer looks wrong.\n"
    f"# primary_class / nearest_other_class: one of {list(FAILURE_CLASSES)}\n"
    "# 'final answer composition error' only when the retrieval chain was right and the write-out broke it.\n"
)


def init_reviews(run_dir: Path) -> tuple[list[Path], list[Path]]:
    """Write a template per case that needs review; existing files are never overwritten.

    Returns (written, kept)."""
    entries = load_run(run_dir)  # before creating anything: an unreadable run leaves no trace
    out = run_dir / REVIEWS_DIR
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    kept: list[Path] = []
    for entry in entries:
        if not needs_review(entry):
            continue
        path = out / review_file_name(entry)
        if path.exists():
            kept.append(path)
            continue
        body = yaml.safe_dump(template(entry), sort_keys=False, allow_unicode=True)
        path.write_text(_HEADER + body, encoding="utf-8")
        written.append(path)
    return written, kept


@dataclass
class ReviewSummary:
    reviews: list[FailureReview] = field(default_factory=list)
    unfilled: list[Path] = field(default_factory=list)
    invalid: dict[Path, list[str]] = field(default_factory=dict)

    def class_shares(self) -> list[tuple[str, int, float]]:
        counts = Counter(review.primary_class for review in self.reviews)
        total = len(self.reviews)
        return [(name, counts[name], counts[name] / total if total else 0.0) for name in FAILURE_CLASSES]


def summarize_reviews(run_dir: Path) -> ReviewSummary:
    """Validate every review: complete ones count, untouched templates are listed, broken ones explained."""
    folder = run_dir / REVIEWS_DIR
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no reviews yet; run `sgr review init {run_dir}` first")
    summary = ReviewSummary()
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            summary.invalid[path] = [f"not valid YAML: {exc}"]
            continue
        if isinstance(raw, dict) and raw.get("primary_class") is None and not raw.get("first_root_cause"):
            summary.unfilled.append(path)
            continue
        try:
            summary.reviews.append(FailureReview.model_validate(raw))
        except ValidationError as exc:
            summary.invalid[path] = [
                f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()
            ]
    return summary
