"""Shared by the tests of configs and docs: does an `sgr ...` line name real commands and real options?

(The README's own test, tests/test_readme_commands.py, applies the same rule to the README.)"""

from __future__ import annotations

import re

import typer

from agent.cli import app


def _options(command: object) -> set[str]:
    return {opt for param in getattr(command, "params", []) for opt in (*param.opts, *param.secondary_opts)}


def sgr_lines(text: str) -> list[str]:
    """Every `sgr ...` command in a text: inline code, shell lines and `#   sgr ...` comment lines."""
    found = [" ".join(m.split()) for m in re.findall(r"`(sgr [^`]+)`", text)]
    for line in text.splitlines():
        line = re.sub(r"^\s*#?\s*(\$\s*)?", "", line).replace(".venv/bin/", "")
        if line.startswith("sgr "):
            found.append(" ".join(re.sub(r"\s+(#|\().*$", "", line).split()))
    return found


def invocation_problems(invocation: str) -> list[str]:
    """What is wrong with one `sgr ...` line: an unknown command or an option the command does not take."""
    root = typer.main.get_command(app)
    words = invocation.replace("\\|", "|").split()[1:]
    command, path, problems = root, ["sgr"], []
    while words and hasattr(command, "commands"):
        sub = command.commands.get(words[0].strip("[]").split("|")[0])  # type: ignore[attr-defined]
        if sub is None:
            return [f"`{invocation}`: no command {words[0]!r} under `{' '.join(path)}`"]
        command, path, words = sub, [*path, sub.name], words[1:]
    known = _options(command)
    for word in words:
        option = word.strip("[]()").split("=")[0]
        if option.startswith("-") and option not in ("-", "--") and option not in known:
            problems.append(f"`{invocation}`: `{' '.join(path)}` has no option {option}")
    return problems
