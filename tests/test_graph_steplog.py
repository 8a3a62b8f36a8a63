"""The graph's step log: one JSON line per event, flushed as it happens, secrets redacted."""

from __future__ import annotations

import json

from graph.nodes import StepLog


def test_events_are_appended_and_secrets_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", "value-that-must-not-leak")
    log = StepLog(tmp_path / "steps.jsonl")
    log.write({"node": "actor", "args": {"value": "typed value-that-must-not-leak into a field"}})
    log.write({"node": "executor", "url": "http://x/?api_key=abcdef123456", "ok": True})
    lines = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    assert [e["node"] for e in lines] == ["actor", "executor"] and all("t" in e for e in lines)
    assert lines[0]["args"]["value"] == "typed [REDACTED] into a field"
    assert "abcdef123456" not in lines[1]["url"]
    assert log.events == lines
