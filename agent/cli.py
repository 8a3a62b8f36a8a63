"""The `sgr` command line: one entry point, each command group owned by the package that does the work."""

from __future__ import annotations

import sys
from typing import Any

import typer

from agent.commands import bench as bench_command
from agent.commands import model as model_command
from agent.commands import paths as paths_command
from agent.commands import play as play_command
from agent.commands import review as review_command
from agent.commands import run as run_command
from agent.commands import show as show_command
from agent.commands import webenv as webenv_command
from eval import cli as eval_cli
from tasks import cli as tasks_cli
from tasks.offline import cli as offline_cli


class _OneLineErrors(typer.Typer):
    """The `sgr` program: a usage error (an unknown option, a bad value, a missing argument) is one line naming
    the problem and the help command, not a boxed panel; `sgr` alone still prints its help."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            result = super().__call__(*args, **{**kwargs, "standalone_mode": False})
        except typer.TyperException as exc:  # typer's usage errors (its own copy of click's)
            text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            if type(exc).__name__ == "NoArgsIsHelpError":  # `sgr` or `sgr tasks` alone: the help text
                print(text, file=sys.stderr)
            else:
                ctx = getattr(exc, "ctx", None)
                print(f"error: {' '.join(text.split())} (see `{ctx.command_path if ctx else 'sgr'} --help`)",
                      file=sys.stderr)
            sys.exit(getattr(exc, "exit_code", 2))
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(130)
        sys.exit(result if isinstance(result, int) else 0)


app = _OneLineErrors(
    name="sgr",
    help="SGR-Bench reference browser agent: tasks, offline sites, agent runs, benchmark runs, scoring.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(tasks_cli.app, name="tasks", help="List, show and validate task records.")
app.add_typer(offline_cli.app, name="offline", help="The offline state-gated sites and their tasks.")
app.command("score", help="Score saved answers with the shared evaluator.")(eval_cli.score)
app.add_typer(review_command.review_app, name="review", help="Failure review (the benchmark's audit protocol).")
app.command("run", help="Run the agent on one task.")(run_command.run)
app.command("show", help="Show one run: outcome, steps (one numbering), answer, how to open its trace.")(
    show_command.show)
app.command("play", help="Play the model on one task: answer each of the agent's model requests yourself.")(
    play_command.play)
app.command("bench", help="Run a benchmark from a YAML config.")(bench_command.bench)
app.add_typer(model_command.model_app, name="model", help="The packaged local model (llama.cpp) on loopback.")
app.command("ablate", help="Run the ablation matrix of a config and print its table.")(bench_command.ablate)
app.add_typer(paths_command.path_app, name="path", help="Runs as decision paths: record one, replay one.")
app.add_typer(webenv_command.app, name="webenv", help="Released tasks on SGR-WebEnv's offline environments.")


if __name__ == "__main__":
    app(prog_name="sgr")
