"""The docs pages of the first hour (issue 40) work as written: every `sgr` command they give names real
commands and options, and the recipe for another agent (docs/other_agents.md) runs: the served sites answer at
the URLs `sgr offline tasks --origin ... --jsonl` writes, and `sgr score` scores answers given for them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from agent.cli import app
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tests.sgr_commands import invocation_problems, sgr_lines

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ["other_agents.md"]  # container.md: its commands are checked below


def test_every_sgr_command_in_the_pages_is_real() -> None:
    for name in PAGES:
        lines = sgr_lines((DOCS / name).read_text(encoding="utf-8"))
        assert lines, name
        assert not [p for line in lines for p in invocation_problems(line)], name


@pytest.mark.slow
def test_the_other_agent_recipe_runs(tmp_path: Path) -> None:
    from tasks.offline.server import OfflineServer

    text = (DOCS / "other_agents.md").read_text(encoding="utf-8")
    assert PLACEHOLDER_ORIGIN in text and "sgr offline serve --port 8765" in text
    assert "sgr offline tasks --origin http://127.0.0.1:8765 --jsonl" in text
    with OfflineServer() as server:
        listed = CliRunner().invoke(app, ["offline", "tasks", "--origin", server.origin, "--jsonl"])
        assert listed.exit_code == 0, listed.output
        records = [json.loads(line) for line in listed.stdout.splitlines()]
        assert len(records) == 60 and PLACEHOLDER_ORIGIN not in listed.stdout
        with httpx.Client(timeout=30) as client:
            for url in sorted({r["start_url"] for r in records}):
                assert url.startswith(server.origin + "/") and client.get(url).status_code == 200, url
    predictions = tmp_path / "my-agent.jsonl"
    predictions.write_text("".join(json.dumps({"task_id": r["task_id"], "answer": r["oracle_answer"]}) + "\n"
                                   for r in records[:2]))
    scored = CliRunner().invoke(app, ["score", "--tasks", "offline", "--predictions", str(predictions),
                                      "--out", str(tmp_path / "scores"), "--only-predicted"])
    assert scored.exit_code == 0, scored.output
    lines = [json.loads(line) for line in (tmp_path / "scores" / "scores.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and all(line["score"]["exact_match"] for line in lines), lines


def test_a_bad_origin_is_one_line() -> None:
    done = CliRunner().invoke(app, ["offline", "tasks", "--origin", "127.0.0.1:8765"])
    assert done.exit_code == 2 and "give the served origin" in done.output


def _shell_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [re.sub(r"\s+#.*$", "", line).strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_the_container_page_works_as_written() -> None:
    """What can be checked without building: both engines get each step, the build arguments are the
    Dockerfile's, the command after the image is a real `sgr` command, the config it names is in the image,
    and the results folder is made (and given to uid 1000, the image's user) before any run mounts it."""
    root = DOCS.parent
    lines = _shell_lines((DOCS / "container.md").read_text(encoding="utf-8"))
    dockerfile = (root / "Dockerfile").read_text(encoding="utf-8")
    declared = set(re.findall(r"^ARG (\w+)", dockerfile, flags=re.M))
    assert "useradd --create-home --uid 1000" in dockerfile
    engines = {"podman": set(), "docker": set()}
    first_run = next(i for i, line in enumerate(lines) if " run " in f" {line} ")
    assert any("mkdir -p results" in line and "chown 1000:1000 results" in line for line in lines[:first_run])
    assert any("podman unshare chown 1000:1000" in line for line in lines)  # rootless podman: its user namespace
    for line in lines:
        words = shlex.split(line.replace('"$PWD', '"/host'))
        if words[0] not in engines:
            continue
        engines[words[0]].add(words[1])
        if words[1] == "build":
            assert words[-1] == "." and "-t" in words
            for i, word in enumerate(words):
                if word == "--build-arg":
                    assert words[i + 1].split("=")[0] in declared, line
                if word == "-v":
                    assert words[0] == "podman", "docker build has no -v"
        elif words[1] == "run":
            image = words.index("sgr-agent")
            command = "sgr " + " ".join(words[image + 1:])
            assert not invocation_problems(command), command
            for word in words[image + 1:]:
                if word.startswith("/configs/"):
                    assert (root / "configs" / word.removeprefix("/configs/")).is_file(), word
            volume = words[words.index("-v") + 1]
            assert volume.split(":")[1] == "/work/results" and "/work/results" in dockerfile
    assert engines == {"podman": {"build", "run"}, "docker": {"build", "run"}}
    assert "cp -r configs /configs" in dockerfile
