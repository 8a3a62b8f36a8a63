"""Traces: steps.jsonl lines carry the state delta and token count, and no secret in any trace file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from browser.trace import REDACTED, Redactor
from browser.types import Fill, Goto, Select, Target

FAKE_KEY = "fk-9f8e7d6c5b4a39281706"  # matches no built-in pattern: only the env-var rule can catch it


def test_redactor_patterns_and_env_values(monkeypatch):
    monkeypatch.setenv("FOO_API_KEY", FAKE_KEY)
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to redact safely
    redactor = Redactor.from_environment()
    text = (f"key {FAKE_KEY} sk-proj-AbCdEfGhIjKlMnOpQrSt Authorization: Bearer eyJhbGciOi.JIUzI1 "
            "url?api_key=zzz123456&page=2 ghp_abcdefghijklmnopqrstuvwxyz012345 abc")
    cleaned = redactor.text(text)
    for secret in (FAKE_KEY, "sk-proj-AbCdEfGhIjKlMnOpQrSt", "eyJhbGciOi", "zzz123456", "ghp_abcdefghij"):
        assert secret not in cleaned
    assert cleaned.count(REDACTED) == 5
    assert "page=2" in cleaned and cleaned.endswith(" abc")
    assert redactor.json({"a": [FAKE_KEY, 3], FAKE_KEY: None}) == {"a": [REDACTED, 3], REDACTED: None}


@pytest.mark.slow
async def test_steps_screenshots_and_trace_zip_hold_no_secret(chromium_worker, fixture_site, tmp_path: Path,
                                                             monkeypatch):
    monkeypatch.setenv("FOO_API_KEY", FAKE_KEY)
    async with chromium_worker.task_browser(tmp_path, [fixture_site.origin], trace=True, screenshots=True) as browser:
        await browser.act(Goto(url=fixture_site.url("act_form.html")))
        await browser.act(Select(target=Target(label="Region"), option="Asia"))
        await browser.act(Fill(target=Target(label="Keyword"), value=f"token {FAKE_KEY}"))
        await browser.act(Goto(url=fixture_site.url(f"act_form.html?api_key={FAKE_KEY}")))

    lines = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    assert [line["action"]["kind"] for line in lines] == ["goto", "select", "fill", "goto"]
    select = lines[1]
    assert select["ok"] and select["controls_changed"] == {"Region": ["Any", "Asia"]}
    assert "observation_tokens" not in select and select["url"] == fixture_site.url("act_form.html")
    assert lines[2]["action"]["value"] == f"token {REDACTED}"
    assert lines[3]["query_state"] == {"api_key": [REDACTED]}
    assert [line["screenshot"] for line in lines] == [f"screenshots/step_000{i}.png" for i in range(1, 5)]
    assert all((tmp_path / line["screenshot"]).stat().st_size > 1000 for line in lines)

    trace_zip = tmp_path / "trace.zip"
    assert trace_zip.exists()
    with zipfile.ZipFile(trace_zip) as archive:
        names = archive.namelist()
        assert any(name.endswith(".trace") for name in names)
        for name in names:
            assert FAKE_KEY.encode() not in archive.read(name), name
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix != ".png":
            assert FAKE_KEY.encode() not in path.read_bytes(), path
