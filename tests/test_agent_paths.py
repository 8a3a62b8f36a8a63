"""Runs become decision paths (`sgr path record`): the model's own calls from the wire, targets by ref as
the page showed them, the origin as {origin}. Checked on a real-model relay run (resp-N.json + steps.jsonl,
tests/data/relay_runs/, from ../shared/real_model_runs/) against the path the relay's own tool made from the
full requests; played runs (with the shown targets the actor logs) are checked in test_agent_play.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.record import RunFolderError, path_from_run

RUN = Path(__file__).parent / "data" / "relay_runs" / "offline_vulns_003"


def test_a_relay_run_becomes_the_path_the_model_took():
    path = path_from_run(RUN / "requests")
    raw = DecisionPath.model_validate(json.loads((RUN / "raw_path.json").read_text()))
    assert path.task == raw.task and path.plan == raw.plan and len(path.steps) == len(raw.steps)
    differ = [(mine, theirs) for mine, theirs in zip(path.steps, raw.steps, strict=True) if mine != theirs]
    # fill/select targets come back as the label the page showed; a submit by ref names no label in this
    # old run's record (the actor now logs what each ref showed), so it stays a ref and is listed
    assert [(m.tool, m.args) for m, _ in differ] == [("submit", {"target": {"ref": "e58"}})]
    assert path.unmapped == ["request 8 (submit): target ref e58"]
    assert path.steps[2].args == {"target": {"shown_label": "Severity"}, "option": "MEDIUM"}
    assert "{origin}/vulns/search" in path.plan["source"]


def test_not_a_run_folder_is_one_line_error(tmp_path):
    with pytest.raises(RunFolderError, match="neither transcript.jsonl nor resp-N.json"):
        path_from_run(tmp_path)
    result = CliRunner().invoke(app, ["path", "record", str(tmp_path)])
    assert result.exit_code == 2 and "neither transcript.jsonl nor resp-N.json" in result.output


def test_the_record_command_writes_a_loadable_path(tmp_path):
    out = tmp_path / "path.json"
    result = CliRunner().invoke(app, ["path", "record", str(RUN / "requests"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert DecisionPath.load(out).steps[0].args == {"url": "{origin}/vulns/search"}
    assert "kept as a ref" in result.output and "e58" in result.output
