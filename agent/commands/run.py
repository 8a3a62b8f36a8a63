"""`sgr run`: one task, one model, one agent variant; writes the answer, its score and the full trace.

It is a one-cell bench: the cell runs on the bench runner's slot (agent/runner/local.py), with its hard limit
beyond the agent's wall budget and its retry of infrastructure errors (`run:` of --config, else the defaults).

For the offline suite the local sites are started on a free loopback port first. The run folder gets
`answer.txt`, `score.json` (shared evaluator), `outcome.json`, `steps.jsonl`, `retrieval_state.json`,
the browser trace and `fingerprint.json` (the code that made it), and while it runs `checkpoints.sqlite`:
rerunning the same command restarts an interrupted run from a clean slate (recorded in `outcome.json`, see
agent/rundir/checkpoints.py), runs again one that ended in an infrastructure error, and re-reports a finished
one from its `outcome.json` and `score.json` (its checkpoint is deleted once the outcome stands), unless the
code changed (then `--fresh` starts over, `--allow-mixed` goes on and records it). The folder's path is built
from safe names and checked first (agent/rundir/paths.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from agent.commands.interrupt import run_quietly
from agent.config import (
    ABLATABLE_NODES,
    AgentConfig,
    AgentVariant,
    BenchConfig,
    ConfigError,
    ModelConfig,
    ProtocolConfig,
    RunConfig,
    load_config,
)
from agent.measuring.local_server import LocalModelError
from agent.outcome import TaskOutcome
from agent.rundir.checkpoints import prune
from agent.rundir.manifest import SINGLE_RUN_FINGERPRINT, MixedCodeError, check_single_run_code
from agent.rundir.paths import UnsafePath, run_path
from agent.runner.bench import RunFolderBusy, run_lock
from agent.webenv.sites import DEFAULT_RELEASE

_TASK = typer.Option(..., "--task", help="Task id, e.g. offline_vulns_001 or offline_vulns_001-g.")
_SUITE = typer.Option(None, "--suite", help="'offline' (the bundled local sites; the default without --tasks).")
_TASKS = typer.Option(None, "--tasks", help="Task source: a JSONL file, a data_en folder, hf:<dataset id>, or "
                                             "offline-heldout (the held-out tasks on the offline sites).")
_MODEL = typer.Option(None, "--model", help="A model name from --config, 'scripted', 'faulty[:SEED]' (the scripted "
                                           "policy with one injected mistake), 'local' (the packaged "
                                           "llama.cpp model, extra `local`), 'play[:DIR]' (you answer each request "
                                           "at the terminal, or a program through DIR: see `sgr play`), or a "
                                           "model id for OpenAI.")
_CONFIG = typer.Option(None, "--config", help="Benchmark YAML: models, protocol and agent settings.")
_ABLATE = typer.Option("", "--ablate", help="Comma-separated nodes to switch off: planner,state_tracker,verifier,"
                                           "provenance.")
_OUT = typer.Option(Path("runs"), "--out", help="Parent folder; the run goes to OUT/<task>/<model>/<variant> "
                                                "(each name made one safe folder name).")
_FRESH = typer.Option(False, "--fresh", help="Start over instead of resuming (or re-reporting) an earlier run.")
_WEBENV = typer.Option(None, "--webenv", help="SITE=ORIGIN (repeatable): serve the task's live site from a local "
                                             "SGR-WebEnv environment, e.g. arxiv=http://127.0.0.1:8083 or "
                                             "https://arxiv.org=http://127.0.0.1:8083. Adds to the config's webenv.")
_PLAYER = typer.Option(None, "--player", help="With --model play: who plays (person, llm:NAME, program:NAME); "
                                              "recorded in the run folder's play.json.")
_ALLOW_MIXED = typer.Option(False, "--allow-mixed", help="Resume or re-report a run made by other code (recorded "
                                                         "in fingerprint.json).")


class RunSetupError(ValueError):
    """A bad option combination or an unknown name; the message says which."""


def pick_model(name: str | None, models: list[ModelConfig]) -> ModelConfig:
    if name is None:
        if models:
            return models[0]
        raise RunSetupError("give --model NAME ('scripted', 'faulty[:SEED]', 'local' or an OpenAI model id) or "
                            "--config FILE (its first model runs)")
    match = next((m for m in models if m.name == name), None)
    if match:
        return match
    if models:
        raise RunSetupError(f"model {name!r} is not in the config; known: {[m.name for m in models]}")
    if name == "scripted":
        return ModelConfig(name="scripted", provider="scripted")
    if name == "faulty" or name.startswith("faulty:"):  # faulty:SEED, the fault-injected replay of one task
        seed = name.partition(":")[2] or "0"
        if not seed.isdigit():
            raise RunSetupError(f"--model {name!r}: write faulty:SEED with a whole number")
        # the seed is in the name, so another seed runs in its own folder instead of re-reporting this one
        return ModelConfig(name=f"faulty-seed{int(seed)}", provider="faulty", fault_seed=int(seed))
    if name == "play" or name.startswith("play:"):  # play: a person at the terminal; play:DIR a program's folder
        from agent.measuring.play_server import play_model

        return play_model(name.partition(":")[2] or None)
    if name == "local":
        from agent.measuring.local_server import LOCAL_MODEL

        return LOCAL_MODEL
    return ModelConfig(name=name, model=name)


def _check_task(task_id: str, source: str) -> None:
    """The task exists in its source; said in one line before anything is written (`tasks.loaders`)."""
    from tasks.errors import TaskLoadError, TaskSourceError
    from tasks.loaders import load_tasks

    try:
        load_tasks(source, task_ids=[task_id])
    except (TaskSourceError, TaskLoadError) as exc:
        raise RunSetupError(str(exc)) from exc


def with_player(model: ModelConfig, player: str) -> ModelConfig:
    from agent.measuring.players import parse_player

    if model.provider != "play":
        raise RunSetupError("--player goes with --model play (or `sgr play`)")
    try:
        parse_player(player, "person")
    except ValueError as exc:
        raise RunSetupError(str(exc)) from exc
    return model.model_copy(update={"player": player})


def make_variant(ablate: str) -> AgentVariant:
    nodes = [n.strip() for n in ablate.split(",") if n.strip()]
    for node in nodes:  # said here in one line (the model's own error is a multi-line pydantic dump)
        if node not in ABLATABLE_NODES:
            close = difflib.get_close_matches(node, ABLATABLE_NODES, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise RunSetupError(f"--ablate: unknown node {node!r}{hint} (nodes: {', '.join(ABLATABLE_NODES)})")
    return AgentVariant(name="no-" + "-".join(nodes) if nodes else "full", ablate=nodes)


@contextlib.contextmanager
def _suite_origin(offline: bool) -> Iterator[str | None]:
    if not offline:
        yield None
        return
    from tasks.offline.server import OfflineServer

    with OfflineServer() as server:
        yield server.origin


def _webenv_mapping(bench: BenchConfig | None, pairs: list[str]) -> tuple[dict[str, str] | None, str]:
    """The config's `webenv` mappings (every dataset's) plus `--webenv` options; None when there are none."""
    from agent.webenv.mapping import mapped_sites, parse_pairs

    datasets = [d for d in (bench.datasets if bench else []) if d.webenv]
    mapping: dict[str, str] = {k: v for d in datasets for k, v in (d.webenv or {}).items()}
    try:
        mapping.update(parse_pairs(pairs))
        mapped_sites(mapping)
    except ValueError as exc:
        raise RunSetupError(str(exc)) from exc
    return mapping or None, datasets[0].webenv_release if datasets else DEFAULT_RELEASE


@dataclass(frozen=True)
class _TaskRoutes:
    """The one task's environment routes, as the cell attempt asks for them (`routes_for(task)`)."""

    routes: Any

    def routes_for(self, task: Any) -> Any:
        return self.routes


async def run_one(*, task_id: str, source: str, model: ModelConfig, variant: AgentVariant, protocol: ProtocolConfig,
                  agent: AgentConfig, out_dir: Path, webenv: dict[str, str] | None = None,
                  webenv_release: str = DEFAULT_RELEASE, run: RunConfig | None = None,
                  on_retry: Callable[[str], None] | None = None) -> tuple[TaskOutcome, dict]:
    """One cell, run as `sgr bench` runs each (agent/runner/local.py): the hard limit beyond the agent's wall
    budget (`run.hard_timeout_margin_seconds`) and infrastructure errors retried (`run.retries`), in `out_dir`
    itself (no staging folder: its checkpoint restarts an interrupted thread). `on_retry` hears each retry."""
    from agent.measuring.local_server import serving
    from agent.measuring.play_server import playing, stopped_by_player
    from agent.rundir.cells import CellKey, cell_task_id
    from agent.runner.bench import score_cell
    from agent.runner.local import Cell, LocalSlot, chromium_worker_factory, run_attempts
    from agent.solve import solve_task
    from browser.trace import Redactor
    from tasks.loaders import OFFLINE_SOURCES, load_tasks

    run = run or RunConfig()
    with _suite_origin(source in OFFLINE_SOURCES) as origin, serving(model, log_path=out_dir / "llama_server.log") as model, \
            playing(model, out_dir) as played:
        model = played.model
        tasks = load_tasks(source, task_ids=[task_id], origin=origin)
        task = tasks[0]
        routes = None
        if webenv:  # raises TaskSkipped / EnvironmentDown before any browser starts
            from agent.webenv.environments import routes_for_task

            site, status = routes_for_task(webenv, webenv_release, task)
            routes = site.routes
            (out_dir / "webenv.json").write_text(json.dumps(status.as_json(), indent=2), encoding="utf-8")
        config = BenchConfig(models=[model], protocol=protocol, agent=agent, run=run)
        allowed = sorted(set(protocol.allowed_origins + ([origin] if origin else [])))
        slot = LocalSlot(config, out_dir, allowed, solve=solve_task, worker_factory=chromium_worker_factory(config),
                         webenv=_TaskRoutes(routes) if routes else None,
                         checkpoint_db=lambda _key: out_dir / "checkpoints.sqlite")
        cell = Cell(CellKey(model.name, variant.name, cell_task_id(task)), task, model, variant)
        try:
            last = await run_attempts(cell, slot, lambda: out_dir, run)
        finally:
            await slot.close()
    for attempt in last.retried:
        if on_retry:
            on_retry(f"attempt {attempt.number} ended in an infrastructure error, retried: {attempt.error}")
    # the runner's own error texts (an exception, a timeout) are redacted as the solver's are
    outcome = TaskOutcome.model_validate(Redactor.from_environment().json(last.outcome.model_dump(mode="json")))
    if played.stopped:  # the player ended the run (:quit, Ctrl-C, Ctrl-D): said so, not as a model error
        outcome = stopped_by_player(outcome)
    _, score = score_cell(task, outcome.answer, failure=outcome.failure())
    (out_dir / "score.json").write_text(json.dumps(score, indent=2, default=str), encoding="utf-8")
    (out_dir / "outcome.json").write_text(outcome.model_dump_json(indent=2), encoding="utf-8")
    if outcome.error_kind != "infra":  # the outcome stands: nothing resumes this run (an infra error runs again)
        prune(out_dir / "checkpoints.sqlite")
    return outcome, score


def run(task: str = _TASK, suite: str | None = _SUITE, tasks: str | None = _TASKS, model: str | None = _MODEL,
        config: Path | None = _CONFIG, ablate: str = _ABLATE, out: Path = _OUT, fresh: bool = _FRESH,
        webenv: list[str] | None = _WEBENV, allow_mixed: bool = _ALLOW_MIXED, player: str | None = _PLAYER) -> None:
    """Run the agent on one task and score it."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        if suite and tasks:
            raise RunSetupError("give either --suite or --tasks, not both")
        if suite not in (None, "offline"):
            raise RunSetupError(f"--suite {suite!r}: only 'offline' is bundled; use --tasks for other sources")
        bench = load_config(config) if config else None
        chosen = pick_model(model, bench.models if bench else [])
        if player is not None:
            chosen = with_player(chosen, player)
        variant = make_variant(ablate)
        mapping, release = _webenv_mapping(bench, webenv or [])
        if chosen.provider == "play" and chosen.play_dir:
            from agent.measuring.players import PlayFolderError, check_play_folder

            try:
                check_play_folder(Path(chosen.play_dir))
            except PlayFolderError as exc:
                raise RunSetupError(str(exc)) from exc
        out_dir = run_path(out, task, chosen.name, variant.name)  # checked before anything is written or removed
        _check_task(task, tasks or "offline")  # an unknown id is a config error: no run folder is made for it
        if fresh or not (out_dir / "outcome.json").is_file():  # a finished run is re-reported without its endpoint
            _check_model(chosen, probe=bench.run.check_endpoints if bench else True)  # said before any folder
        if fresh and out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
    except (RunSetupError, ConfigError, UnsafePath) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    except OSError as exc:  # --out names a file, a folder we may not write, a full disk
        console.print(f"[red]error:[/] --out {escape(str(out))}: cannot make the run folder {escape(str(out_dir))}: "
                      f"{escape(exc.strerror or str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    lock = contextlib.ExitStack()  # one `sgr run` per run folder: two on the same task and --out mixed their steps
    try:
        lock.enter_context(run_lock(out_dir, "sgr run"))
    except RunFolderBusy as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    with lock:
        protocol = bench.protocol if bench else ProtocolConfig()
        if chosen.provider == "play" and not bench:  # a person thinks longer than a model: only the steps bound a play
            from agent.measuring.play_server import play_protocol

            protocol = play_protocol(protocol)
        agent = bench.agent if bench else AgentConfig()
        from agent.webenv.environments import EnvironmentDown, TaskSkipped

        try:
            for line in check_single_run_code(out_dir, allow_mixed):
                console.print(f"[bold yellow]--allow-mixed: continuing a run of other code: {escape(line)}[/]",
                              highlight=False)
        except MixedCodeError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from exc
        earlier = _earlier_run(out_dir)
        if earlier and not fresh:
            console.print(f"[bold yellow]{escape(earlier)}[/]", highlight=False)
        try:
            finished = _finished(out_dir)
        except ValueError as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from exc
        try:
            outcome, score = finished or run_quietly(run_one(
                task_id=task, source=tasks or "offline", model=chosen, variant=variant, protocol=protocol, agent=agent,
                out_dir=out_dir, webenv=mapping, webenv_release=release, run=bench.run if bench else RunConfig(),
                on_retry=lambda line: console.print(f"[bold yellow]{escape(line)}[/]", highlight=False)))
        except KeyboardInterrupt as exc:  # a second Ctrl-C while playing, or Ctrl-C on any other run
            console.print("[red]interrupted:[/] the run was cut; rerunning the command restarts it", highlight=False)
            raise typer.Exit(130) from exc
        except TaskSkipped as exc:  # the task's site has no environment: a listed skip, not a failure
            console.print(str(exc), highlight=False)
            if {p.name for p in out_dir.iterdir()} <= {SINGLE_RUN_FINGERPRINT, "run.lock"}:  # nothing ran: no folder
                (out_dir / SINGLE_RUN_FINGERPRINT).unlink()
            return  # the lock's release removes the folder it alone is left in
        except EnvironmentDown as exc:
            console.print(f"[red]error:[/] the task's environment does not answer\n{escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from exc
        except (LookupError, ValueError, OSError, LocalModelError) as exc:  # unknown task id, source; no local server
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from exc
        metrics = ", ".join(f"{k}={score[k]}" for k in ("exact_match", "item_f1", "row_f1", "poa") if k in score)
        if outcome.failed:
            metrics = "no answer (the run ended in an error): scored 0"
        # names and texts are the user's or an endpoint's: printed as they are, never read as Rich markup
        console.print(escape(f"{task} [{chosen.name}/{variant.name}] stop={outcome.stop_reason} steps={outcome.steps} "
                             f"tokens={outcome.prompt_tokens}+{outcome.completion_tokens} "
                             f"{metrics or score.get('error', '')}"), highlight=False)
        for restart in outcome.restarts:  # a retry of this very command was said as it happened (on_retry)
            if line := restart_line(restart, retried_here=finished is None):
                console.print(line, highlight=False, markup=False)
        if outcome.error:
            console.print(f"[yellow]{escape(str(outcome.error_kind))} error:[/] {escape(outcome.error)}",
                          highlight=False)
        for line in _fault_lines(out_dir, outcome, score, chosen):
            console.print(line, highlight=False, markup=False)
        console.print(f"results in {escape(str(out_dir))}", highlight=False)
        if outcome.failed:  # stdout carries the answer, and a failed run has none (never a NONE it did not give)
            raise typer.Exit(1)
        typer.echo(outcome.answer)


def restart_line(restart: dict[str, Any], *, retried_here: bool) -> str | None:
    """One restart of the task (agent/rundir/checkpoints.py), worded as what it was: a process killed mid-run, or
    an attempt ended by an infrastructure error and retried; None for a retry this command already printed."""
    step = int(restart.get("interrupted_at_step") or 0)
    url = restart.get("last_url")
    where = f"at step {step}" + (f" on {url}" if url else "") if step else "before its first step"
    if restart.get("reason") == "infra":
        if retried_here:
            return None
        return f"an earlier attempt ended {where} in an infrastructure error ({restart.get('error') or 'no text'}): retried"
    return f"restarted from a clean slate: an earlier run of this task was interrupted {where}"


def _check_model(model: ModelConfig, *, probe: bool = True) -> None:
    """The key is set and the endpoint answers (one request, agent/clients/probe.py), or one line saying which."""
    from agent.clients.policies import needs_key
    from agent.clients.probe import check_endpoints

    if needs_key(model) and model.api_key() is None:
        raise RunSetupError(f"model {model.name!r}: environment variable ${model.api_key_env} is not set (set it, or "
                            "run without a key: --model scripted)")
    if probe:
        asyncio.run(check_endpoints([model]))


def _finished(out_dir: Path) -> tuple[TaskOutcome, dict] | None:
    """The outcome and score of a finished run, re-reported as they are (its checkpoint is gone: docs/configuration.md);
    None when there is none, or when it ended in an infrastructure error (that run goes again, as a bench's
    retry would). Raises ValueError, one line, for an outcome.json that is not one."""
    done, scored = out_dir / "outcome.json", out_dir / "score.json"
    if not (done.is_file() and scored.is_file()):
        return None
    try:
        outcome = TaskOutcome.model_validate_json(done.read_text(encoding="utf-8"))
        score = json.loads(scored.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise ValueError(f"{out_dir}: the earlier run's outcome.json or score.json cannot be read "
                         f"({type(exc).__name__}); --fresh runs the task again") from exc
    return None if outcome.error_kind == "infra" else (outcome, score)


def _earlier_run(out_dir: Path) -> str | None:
    """Said before a rerun, so an old result is never re-reported as if it had just been made."""
    done = out_dir / "outcome.json"
    with contextlib.suppress(ValueError, OSError):
        if TaskOutcome.model_validate_json(done.read_text(encoding="utf-8")).error_kind == "infra":
            return f"{out_dir} holds a run of this task that ended in an infrastructure error: it runs again"
    if done.is_file():
        when = datetime.fromtimestamp(done.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (f"{out_dir} holds a finished run of this task ({when}): re-reporting it, nothing runs again; "
                "pass --fresh to run the task again")
    if (out_dir / "checkpoints.sqlite").is_file():
        return f"{out_dir} holds an unfinished run of this task: it restarts from a clean slate (--fresh: also forget it)"
    return None


def _fault_lines(out_dir: Path, outcome: TaskOutcome, score: dict, model: ModelConfig) -> list[str]:
    """A run whose policy recorded a fault (`--model faulty:SEED` writes fault.json): which fault, flagged by which
    node, repaired (from fault.json and the outcome)."""
    from agent.measuring.fault_classes import FAULT_FILE
    from agent.reports.faults import describe_fault, fault_in_folder
    from agent.rundir.cells import CellRecord

    if not (out_dir / FAULT_FILE).is_file():
        return []

    exact = score.get("exact_match")
    record = CellRecord(model=model.name, variant=outcome.variant, task_id=outcome.task_id, outcome=outcome,
                        metrics={"em": None if exact is None else float(exact), "item_f1": score.get("item_f1")})
    cell = fault_in_folder(out_dir, record)
    return describe_fault(cell, record, model.fault_seed) if cell is not None else []
