"""`sgr show RUN` (issue 40): one run readable at the terminal, with one step numbering.

The fixture is a real `sgr run --task offline_water_001 --model faulty:3` folder (tests/data/run_folders): its
verifier sent the agent back after a finish, so the browser's own action count fell behind the actor's (the
browser's 7th action, the second result page, was the actor's step 9)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from agent.cli import app
from agent.reports.timeline import step_rows

FOLDER = Path(__file__).resolve().parent / "data" / "run_folders" / "faulty_water_001"


def _blocks(text: str) -> dict[str, str]:
    """The view's step blocks by step number: the line `    9  read_table ...` and the lines under it."""
    blocks: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        head = line[:5].strip()
        if head and line[5:7] == "  ":
            current = head
            blocks[current] = line
        elif current and line.startswith("       "):
            blocks[current] += "\n" + line
        else:
            current = None
    return blocks


def test_browser_lines_are_shown_under_the_actors_step() -> None:
    events = [json.loads(line) for line in (FOLDER / "steps.jsonl").read_text().splitlines()]
    browser = [e for e in events if "time" in e and "action" in e]
    assert browser[-1]["step"] == 7 and "start=10" in browser[-1]["url"]  # the drift this fixture holds
    rows = {row.step: row for row in step_rows(FOLDER / "steps.jsonl")[0]}
    assert "URL +start=10" in rows["9"].effect and "URL +start=10" not in rows["7"].effect
    actor_steps = {str(e["step"]) for e in events if e.get("node") == "actor"}
    assert {step for step in rows if step.isdigit()} == actor_steps


def test_sgr_show_reads_a_run(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(FOLDER, folder)
    (folder / "trace.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip: the view names how to open it
    shown = CliRunner().invoke(app, ["show", str(folder)])
    assert shown.exit_code == 0, shown.output
    blocks = _blocks(shown.stdout)
    assert [b for b in blocks if b.isdigit()] == [str(n) for n in range(1, 12)]
    assert "read_table" in blocks["9"] and "URL +start=10" in blocks["9"] and "! repair" in blocks["9"]
    assert "! verify: [pages]" in blocks["8"]
    assert "score: exact_match True" in shown.stdout
    assert f"playwright show-trace {folder / 'trace.zip'}" in shown.stdout
    assert shown.stdout.rstrip().splitlines()[-1].startswith("files:")
    assert (FOLDER / "answer.txt").read_text().splitlines()[0] in shown.stdout


def test_a_failed_run_says_so_and_shows_no_answer(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(FOLDER, folder)
    outcome = json.loads((folder / "outcome.json").read_text())
    outcome.update(stop_reason="error", error_kind="config", error="Connection error.", answer="")
    (folder / "outcome.json").write_text(json.dumps(outcome))
    shown = CliRunner().invoke(app, ["show", str(folder)])
    assert "FAILED (config error): Connection error." in shown.stdout and "answer: none" in shown.stdout
    assert "NONE" not in shown.stdout


def test_not_a_run_folder_is_one_line(tmp_path: Path) -> None:
    shown = CliRunner().invoke(app, ["show", str(tmp_path)])
    assert shown.exit_code == 2 and len(shown.output.strip().splitlines()) == 1 and "not a finished run" in shown.output
