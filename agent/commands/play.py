"""`sgr play`: the agent runs one task as usual and you (or another program) answer its model requests.

The same as `sgr run --model play[:DIR]`: the requests go over the real wire path to a loopback server
(agent/measuring/play_server.py), the transcript is recorded, and the run folder says who played.
"""

from __future__ import annotations

from pathlib import Path

import typer

from agent.commands import run as run_command

_FOLDER = typer.Option(None, "--folder", help="Answer through this folder instead of the terminal: each request is "
                                             "written as req-N.json (and req-N.txt, what is new in it); write the "
                                             "answer as resp-N.json: {\"tool\": NAME, \"args\": {...}} or "
                                             "{\"content\": \"...\"}.")
_PLAYER = typer.Option(None, "--player", help="Who plays: person (the default at the terminal), llm:NAME "
                                             "(e.g. llm:claude-sonnet-4), program:NAME (the default with --folder).")


def play(task: str = run_command._TASK, folder: Path | None = _FOLDER, player: str | None = _PLAYER,
         tasks: str | None = run_command._TASKS, config: Path | None = run_command._CONFIG,
         ablate: str = run_command._ABLATE, out: Path = run_command._OUT, fresh: bool = run_command._FRESH,
         allow_mixed: bool = run_command._ALLOW_MIXED) -> None:
    """Play the model on one task: see each request as the model does, answer with one tool call."""
    model = f"play:{folder.resolve()}" if folder else "play"
    run_command.run(task=task, suite=None, tasks=tasks, model=model, config=config, ablate=ablate, out=out,
                    fresh=fresh, webenv=None, allow_mixed=allow_mixed, player=player)
