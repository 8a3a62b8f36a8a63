"""One folder per configuration (issue 30): the newcomer's path. The main command without a key writes the
scripted replays; the same command with a key must not add the real model's cells to that folder (a summary
mixing replays with a real model, "61 of 1 planned"): it goes to its own folder and says so, or, when the
folder was named with -o, is refused with the exact command to use. A failed cell says its cause on its line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.rundir.cells import load_records

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def sgr(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "SGR_NC_KEY"}
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, env={**environment, **(env or {})})


def test_a_real_model_after_the_scripted_replays_gets_its_own_folder(tmp_path: Path) -> None:
    out = tmp_path / "offline"
    config = tmp_path / "offline.yaml"
    config.write_text(  # a real model whose endpoint refuses connections: its cells fail fast, with a cause
        "models:\n"
        "  - {name: gpt-x, provider: openai, model: gpt-x, api_key_env: SGR_NC_KEY,\n"
        "     base_url: 'http://127.0.0.1:9/v1', timeout: 5}\n"
        "datasets: [{suite: offline, task_ids: [offline_vulns_001], splits: [constraint]}]\n"
        "agent: {trace: false}\n"
        f"run: {{output_dir: '{out}', concurrency: 1, retries: 0, check_endpoints: false}}\n"
    )  # check_endpoints false: the dead endpoint's cell runs and fails (else the bench stops before it)
    replay = sgr("bench", str(config))
    assert replay.returncode == 0, replay.stderr[-2000:]
    assert {r.model for r in load_records(out)} == {"scripted-walkthrough"}
    assert f"open {(out / 'report.html').resolve()}" in replay.stderr  # the console says where the report is

    real = sgr("bench", str(config), env={"SGR_NC_KEY": "sk-test-not-a-real-key"})
    own = tmp_path / "offline-gpt-x"
    assert f"{out} holds another configuration (models: the folder has scripted-walkthrough, this run gpt-x)" \
           f": this run goes to {own}" in real.stderr, real.stderr[-2000:]
    assert {r.model for r in load_records(out)} == {"scripted-walkthrough"}  # the replay folder is untouched
    [record] = load_records(own)
    assert record.model == "gpt-x" and record.failed
    line = next(x for x in real.stderr.splitlines() if "gpt-x / full / offline_vulns_001" in x)
    assert "FAILED (infra error: " in line and "onnect" in line, line  # the cause, not only "error"
    summary = json.loads((own / "summary.json").read_text())
    assert summary["finished"] == 1 and summary["planned"] == 1 and not summary["scripted"]
    assert "SCRIPTED" not in (own / "summary.md").read_text()

    named = sgr("bench", str(config), "-o", str(out), "-j", "1", env={"SGR_NC_KEY": "sk-test-not-a-real-key"})
    assert named.returncode == 2
    assert f"error: --output {out}: {out} holds another configuration" in named.stderr
    assert f"run: sgr bench {config} -o {own} -j 1" in named.stderr.splitlines()[-1]
    assert "Traceback" not in named.stderr

    again = sgr("bench", str(config), env={"SGR_NC_KEY": "sk-test-not-a-real-key"})
    assert f"this run goes to {own}" in again.stderr and "1 already finished (1 of them failed: --retry-failed reruns only those), 0 to run" in again.stderr
