"""The command-line mismatches a newcomer met (issue 30), each held fixed: option errors in one line, an
`--ablate` typo named, `-o DIR` errors blaming the option, unknown ids with the closest ids and where released
ids live, `sgr tasks show -t ID`, ids kept whole when `sgr tasks list` is piped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from agent.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def sgr(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_usage_errors_are_one_line_naming_the_help() -> None:
    for args, expected in ((["run", "--tsk", "x"], "error: No such option: --tsk"),
                           (["bench"], "error: Missing argument 'config'."),
                           (["bench", "-j", "0", "x.yaml"], "error: Invalid value for '--concurrency' / '-j'")):
        done = sgr(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith(expected), done.stderr
        assert f"(see `sgr {args[0]} --help`)" in done.stderr


def test_ablate_typo_model_and_unknown_ids_are_one_line_with_a_hint() -> None:
    typo = runner.invoke(app, ["run", "--task", "offline_vulns_001", "--model", "scripted", "--ablate", "verifer"])
    assert typo.exit_code == 2
    assert typo.output.strip() == ("error: --ablate: unknown node 'verifer'; did you mean verifier? (nodes: planner, "
                                   "state_tracker, verifier, provenance)")
    no_model = runner.invoke(app, ["run", "--task", "offline_vulns_001"])
    assert no_model.exit_code == 2 and "give --model NAME" in no_model.output and "or --config FILE" in no_model.output
    released = runner.invoke(app, ["tasks", "show", "arxiv_001"])
    assert released.exit_code == 2 and "unknown task id(s) in offline" in released.output
    assert "--tasks hf:Ninggggy/SGR-BENCH" in released.output and "local copy" in released.output
    close = runner.invoke(app, ["tasks", "show", "-t", "offline_vuln_001"])
    assert close.exit_code == 2 and "offline_vuln_001 (closest: offline_vulns_001" in close.output


def test_output_folder_errors_name_the_option(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("models: [{name: walkthrough, provider: scripted}]\n"
                      f"run: {{output_dir: '{tmp_path / 'run'}'}}\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = runner.invoke(app, ["bench", str(config), "-o", str(blocker)])
    assert result.exit_code == 2
    assert result.output.strip().startswith(f"error: --output {blocker}: cannot use {blocker} as the run folder")
    assert "run.output_dir" not in result.output


def test_tasks_show_takes_t_and_list_keeps_ids_whole_when_piped() -> None:
    shown = runner.invoke(app, ["tasks", "show", "-t", "offline_vulns_001", "--solver-view"])
    assert shown.exit_code == 0 and '"task_id": "offline_vulns_001"' in shown.output and '"instruction"' in shown.output
    listed = sgr("tasks", "list")  # stdout is a pipe here
    assert listed.returncode == 0
    ids = [line.split()[1] for line in listed.stdout.splitlines() if line.startswith("│ offline_")]
    assert len(ids) == 60 and all(i.startswith("offline_") and i.rstrip("-g")[-3:].isdigit() for i in ids)
