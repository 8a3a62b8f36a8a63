"""The run's evidence record (`retrieval_state.json`) is typed, shares no field with the outcome, and reads
records written by older runs."""

from __future__ import annotations

import json
from pathlib import Path

from agent.outcome import TaskOutcome
from agent.reports.review import trace_evidence
from agent.rundir.evidence import EVIDENCE_FILE, RunEvidence, read_evidence, write_evidence


def test_no_field_is_in_both_the_outcome_and_the_evidence():
    assert not set(RunEvidence.model_fields) & set(TaskOutcome.model_fields)


def test_written_and_read_back(tmp_path: Path):
    record = RunEvidence(final={"url": "http://h/?q=a", "values": {}}, urls_opened=["http://h/"],
                         errors=[{"kind": "browser", "message": "timeout"}])
    write_evidence(tmp_path, record)
    assert read_evidence(tmp_path) == record


def test_an_older_record_reads_and_review_takes_flags_from_the_outcome(tmp_path: Path):
    (tmp_path / EVIDENCE_FILE).write_text(json.dumps({
        "final": {"url": "http://h/"}, "plan": {"gates": []}, "stop_reason": "finished",
        "drift_flags": [{"rule": "gate_lost", "gate": "stale", "step": 1}], "verifier_reports": []}))
    flag = {"rule": "gate_mismatch", "gate": "region", "before": "Asia", "after": "Europe", "step": 4}
    (tmp_path / "cell.json").write_text(json.dumps({"outcome": {"stop_reason": "finished", "steps": 5,
                                                                "drift_flags": [flag]}}))
    assert read_evidence(tmp_path).final == {"url": "http://h/"}
    text = trace_evidence(tmp_path)
    assert "gate=region" in text and "stale" not in text  # the outcome's flags, one copy


def test_a_missing_or_broken_record_is_none_and_review_says_so(tmp_path: Path):
    assert read_evidence(tmp_path) is None
    (tmp_path / EVIDENCE_FILE).write_text("{not json")
    assert read_evidence(tmp_path) is None
    (tmp_path / "cell.json").write_text(json.dumps({"outcome": {"stop_reason": "error", "steps": 0}}))
    assert f"no {EVIDENCE_FILE} in this cell" in trace_evidence(tmp_path)
