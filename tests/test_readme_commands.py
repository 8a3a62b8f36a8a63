"""The README and docs/ are true: every command line in their shell blocks is found here and either run (the cheap
ones, under a minute each) or skipped here with the reason it is not run (each skip shows in pytest's report);
every `sgr` command they write anywhere (shell blocks, the Commands table, inline code) names a real command with
real options. A command added to README.md or a page of docs/ without a place in these lists fails the test, so
the documents cannot drift from the program again."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from agent.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]

# Run here, as written (`.venv/bin/` dropped; `--out` sent to a temporary folder): prefix -> exit codes accepted.
CHEAP = {
    "sgr score --tasks tests/data/sgrbench_sample": (0,),
    "sgr model check": (0, 1),  # 1: the local model is not installed here, and it says what is missing
    "sgr webenv check configs/sgr-webenv.yaml": (1,),  # no environment runs here (or the hub is unreachable)
    "sgr run --task offline_stats_003 --model faulty:7": (0,),  # one fault-injected replay, ~35 s
}
# Not run here, with why (each is exercised elsewhere, or needs what a test machine lacks).
EXPENSIVE = {
    "./scripts/install.sh": "installs the project (CI runs it)",
    "pytest": "the whole test suite",
    "scripts/install_local_model.sh": "compiles llama.cpp (minutes; CI)",
    "sgr run --model local": "the local model (tests/test_local_model.py)",
    "sgr bench configs/local.yaml": "the local model on a benchmark (minutes)",
    "sgr model serve": "a server that runs until stopped",
    "git clone": "network (SGR-WebEnv)",
    "cd sgr-webenv": "into the clone above",
    "python3 tools/env.py": "SGR-WebEnv's own tool, in its clone",
    "sgr bench configs/sgr-webenv.yaml": "needs SGR-WebEnv environments",
    "sgr run --tasks hf:Ninggggy/SGR-BENCH": "needs the hub and an environment",
    "sgr run ... --webenv": "a pattern (`...` stands for the options above)",
    "sgr bench configs/offline-ray.yaml": "a benchmark on Ray (tests/test_runner_ray.py)",
    "sgr bench configs/offline.yaml": "the suite or a sample of it, minutes (tests/test_runner_bench.py runs a sample)",
    "ray ": "a Ray cluster",
    "RAY_worker_niceness=0 ray": "a Ray cluster",
    "docker ": "a Docker engine",
    "podman ": "podman and an image build, minutes (scripts/container_smoke.sh builds and runs it; tests/test_container.py)",
    "chown 1000:1000 results": "root (docs/container.md)",
    "sgr offline serve --port": "a server that runs until stopped (tests/test_first_hour_docs.py runs the recipe)",
    "sgr offline tasks --origin": "part of the other-agent recipe (tests/test_first_hour_docs.py runs it)",
    "sgr score --tasks offline --predictions my-agent.jsonl": "another agent's answers (tests/test_first_hour_docs.py)",
    "mkdir -p results": "changes the owner of a folder for the container's uid (docs/container.md; root or podman)",
    "apt-get install": "system packages",
    "scripts/container_smoke.sh": "podman and root (tests/test_container.py, SGR_CONTAINER_SMOKE=1)",
    "sgr play": "waits for a person or a program to answer (tests/test_agent_play.py drives both)",
    "sgr run --task offline_vulns_003 --model play": "the same as sgr play (tests/test_agent_play.py)",
    "sgr path record runs/": "needs a played run's folder (tests/test_agent_paths.py records one)",
    "sgr path replay": "a whole task in Chromium, minutes (tests/test_real_model_paths.py)",
    "sgr path inject": "one whole task in Chromium per fault, minutes (tests/test_path_faults.py)",
    "sgr run --task offline_regulatory_001 --model gpt-4.1-mini": "a real model: OPENAI_API_KEY and the network",
    "sgr run --task offline_regulatory_001 --config configs/openrouter-example.yaml":
        "a real model: OPENROUTER_API_KEY and the network",
    "sgr ablate configs/ablation": "a whole ablation, 120-360 cells, tens of minutes (tests/test_faults_e2e.py runs a sample)",
}


def _fenced_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced block, indented ones included (a list item's code)."""
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    language = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if current is None:
                current, language = [], stripped[3:].strip()
            else:
                blocks.append((language, current))
                current = None
            continue
        if current is not None:
            current.append(stripped)
    return blocks


def shell_commands(text: str) -> list[str]:
    """Every command of the README's bash blocks: continuations joined, comments dropped, `&&` chains split."""
    commands = []
    for language, lines in _fenced_blocks(text):
        if language not in ("bash", "sh", "shell"):
            continue
        for line in "\n".join(lines).replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands += [part.strip() for part in line.split("&&")]
    return commands


def normalized(command: str) -> str:
    command = re.sub(r"^sudo ", "", command)
    command = command.replace(".venv/bin/", "")
    return " ".join(command.split())


def _classified(command: str) -> str | None:
    for prefix in (*CHEAP, *EXPENSIVE):
        if normalized(command).startswith(prefix):
            return prefix
    return None


def documented_commands() -> list[tuple[str, str]]:
    """(document, command) for every shell command of the README and the pages of docs/."""
    return [(str(doc.relative_to(ROOT)), command) for doc in DOCUMENTS
            for command in shell_commands(doc.read_text(encoding="utf-8"))]


def test_every_documented_shell_command_is_run_or_says_why_not() -> None:
    commands = documented_commands()
    assert len(commands) > 30 and {doc for doc, _ in commands} > {"README.md"}
    unclassified = [f"{doc}: {c}" for doc, c in commands if _classified(c) is None]
    assert not unclassified, f"documented commands with no place in tests/test_readme_commands.py: {unclassified}"
    used = {_classified(c) for _, c in commands}
    assert set(CHEAP) <= used, f"cheap commands no longer documented: {set(CHEAP) - used}"
    unused = set(EXPENSIVE) - used
    assert not unused, f"reasons for commands no document holds any more: {unused}"


def _command_params() -> list:
    """One case per documented command: a cheap one runs (slow), any other is skipped with its reason."""
    params = []
    for index, (doc, command) in enumerate(documented_commands()):
        prefix = _classified(command)
        marks = [pytest.mark.slow] if prefix in CHEAP else []
        params.append(pytest.param(doc, command, marks=marks, id=f"{doc}:{index}:{normalized(command)[:40]}"))
    return params


def _sgr_invocations(text: str) -> list[str]:
    """`sgr ...` as the README writes it anywhere: shell blocks, table synopses, inline code."""
    found = [normalized(c) for c in shell_commands(text) if normalized(c).startswith("sgr ")]
    found += [" ".join(m.split()) for m in re.findall(r"`(sgr [^`]+)`", text)]
    return found


def _options(command: typer.main.TyperGroup | object) -> set[str]:
    return {opt for param in getattr(command, "params", []) for opt in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_sgr_command_documented_names_real_commands_and_options(document: Path) -> None:
    root = typer.main.get_command(app)
    problems = []
    for invocation in _sgr_invocations(document.read_text(encoding="utf-8")):
        words = invocation.replace("\\|", "|").split()[1:]
        command, path = root, ["sgr"]
        while words and hasattr(command, "commands"):  # a group: the next word names a sub-command
            names = words[0].strip("[]").split("|")  # `sgr tasks list|show|validate` names three
            subs = [command.commands.get(n) for n in names]  # type: ignore[attr-defined]
            if None in subs:
                problems.append(f"`{invocation}`: no command {words[0]!r} under `{' '.join(path)}`")
                break
            command, path, words = subs[0], [*path, names[0]], words[1:]
            for other in subs[1:]:  # each named sub-command must take the options that follow
                for option in (w.strip("[]").split("=")[0] for w in words if w.strip("[").startswith("-")):
                    if option not in _options(other):
                        problems.append(f"`{invocation}`: `{other.name}` has no option {option}")
        known = _options(command)
        for word in words:
            option = word.strip("[]()").split("=")[0]
            if option.startswith("-") and option not in ("-", "--") and option not in known:
                problems.append(f"`{invocation}`: `{' '.join(path)}` has no option {option}")
    assert not problems, "\n".join(problems)


def test_the_commands_table_synopses_match_the_programs_usage() -> None:
    """The Commands table's known mismatches, held fixed: `-t ID` for tasks show, --model or --config for sgr run."""
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    assert "`sgr tasks list\\|show\\|validate [--tasks SRC]" in text and "[-t ID]`" in text
    assert "sgr run --task ID [--suite offline \\| --tasks SRC] (--model NAME \\| --config FILE)" in text


@pytest.mark.parametrize(("document", "command"), _command_params())
def test_documented_command_runs_as_written(document: str, command: str, tmp_path: Path) -> None:
    prefix = _classified(command)
    if prefix not in CHEAP:
        pytest.skip(f"not run here: {EXPENSIVE[prefix]}" if prefix else "unclassified (the test above fails)")
    args = shlex.split(normalized(command))[1:]
    for option in ("--out", "-o"):
        if option in args:  # the example writes into the repository otherwise
            args[args.index(option) + 1] = str(tmp_path / "out")
    if args[0] == "run" and "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode in CHEAP[prefix], f"{document}: {command}: rc {done.returncode}\n{done.stdout[-1500:]}{done.stderr[-1500:]}"
    assert "Traceback" not in done.stdout + done.stderr
    if prefix.startswith("sgr score"):
        assert (tmp_path / "out" / "scores.jsonl").is_file() and "wrote" in done.stdout
