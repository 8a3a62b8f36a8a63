"""Run one task through the graph and write its artefacts; agent failures become outcome fields, never raises.

Artefacts in `out_dir`: `steps.jsonl` (one line per node event, written as it happens), `answer.txt`,
`retrieval_state.json` (`agent.rundir.evidence.RunEvidence`: what the answer stands on; how the run ended,
with its drift flags and verifier reports, is the returned outcome's).
"""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from langgraph.errors import GraphRecursionError

from agent.clients.chat import MissingApiKey, ModelNotServed
from agent.clients.policies import make_policy
from agent.clients.transcript import TRANSCRIPT_FILE
from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.outcome import TaskOutcome
from agent.rundir.checkpoints import (
    open_checkpointer,
    reported_again,
    restart_if_interrupted,
    restart_metadata,
    restarts_of,
)
from agent.rundir.evidence import RunEvidence, write_evidence
from browser.interface import Browser
from browser.trace import Redactor
from eval.score import run_failed
from graph.build import build_graph
from graph.evidence.evidence_tables import ANSWER, extracted_answer, lineage, read_rows
from graph.evidence.workspace_tools import compose_answer
from graph.model_io.policy import Policy, PolicyUnavailable
from graph.nodes import Deps, StepLog
from graph.state import AgentState, TaskView, new_usage

if TYPE_CHECKING:
    from tasks.models import Task

NODES_PER_STEP = 4  # actor, executor, state_tracker, plus verifier/extractor headroom
STEP_OVERRUN_SECONDS = 5.0  # a step still running this long after the wall budget is interrupted


def initial_state(view: Any, now: float) -> AgentState:
    """The solver view only: no metadata, rubric, oracle answer or cardinality ever enters the state."""
    task = TaskView(task_id=view.task_id, instruction=view.instruction, output_format=view.output_format,
                    start_url=view.start_url, output_spec=view.output_spec.model_dump(mode="json"),
                    today=datetime.fromtimestamp(now, tz=UTC).date().isoformat())
    return AgentState(task=task, plan=None, messages=[], retrieval=None, observation=None, last_action=None,
                      last_result=None, last_read=None, drift_flags=[], repair_goal=None, repair_failures=[], repairs=0, pending=None,
                      invalid_streak=0, invalid_calls=0, context_trims=0, usage=new_usage(now), step=0, order_by=[], stop_reason=None, answer=None)


def _origin(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def thread_id(task_id: str, variant: AgentVariant, model: ModelConfig) -> str:
    return f"{task_id}::{variant.name}::{model.name}"


async def solve_task(
    task: Task,
    *,
    browser: Browser,
    model: ModelConfig,
    variant: AgentVariant,
    protocol: ProtocolConfig,
    out_dir: Path,
    checkpoint_db: Path | None = None,
    token_budget: int = 1500,
    policy: Policy | None = None,
) -> TaskOutcome:
    """`policy` overrides the one `model` describes (tests and benchmarks pass a prepared policy)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    view = task.solver_view(protocol.give_start_url)
    outcome = TaskOutcome(task_id=view.task_id, model=model.name, variant=variant.name, ablated=list(variant.ablate))
    log = StepLog(out_dir / "steps.jsonl")
    log.write({"node": "run", "event": "start", "task_id": view.task_id, "model": model.name,
               "variant": variant.name, "ablated": variant.ablate})
    try:
        policy = policy or make_policy(model, view.task_id, origin=_origin(task.start_url),
                                       transcript=out_dir / TRANSCRIPT_FILE)
    except (MissingApiKey, ModelNotServed) as exc:  # a configuration problem: retrying cannot help
        return _finish(outcome, out_dir, None, started, error=f"{type(exc).__name__}: {exc}", error_kind="config")
    except PolicyUnavailable as exc:  # the policy cannot play this task (a replay without its walkthrough)
        return _finish(outcome, out_dir, None, started, error=f"{type(exc).__name__}: {exc}", error_kind="agent")
    except OSError as exc:
        return _finish(outcome, out_dir, None, started, error=f"{type(exc).__name__}: {exc}", error_kind="infra")

    search = None
    if protocol.search:
        from agent.search import make_search

        search = make_search(browser)
    deps = Deps(browser=browser, policy=policy, model_config=model, spec=view.output_spec,
                budgets=protocol.budgets, search_enabled=protocol.search, search=search,
                token_budget=token_budget, log=log)
    config = {"configurable": {"thread_id": thread_id(view.task_id, variant, model)},
              "recursion_limit": protocol.budgets.max_steps * NODES_PER_STEP + 4 * protocol.budgets.max_repairs + 20}

    state: dict[str, Any] | None = None
    error: tuple[str, str] | None = None
    trace_text: str | None = None
    wall = asyncio.timeout(protocol.budgets.wall_seconds - time.monotonic() + started + STEP_OVERRUN_SECONDS)
    async with AsyncExitStack() as stack:
        try:
            saver = await open_checkpointer(stack, checkpoint_db)
            graph = build_graph(variant.ablate, deps, checkpointer=saver)
            if saver is not None:
                snapshot = await graph.aget_state(config)
                if reported_again(snapshot):  # this thread already finished: report it again
                    state = dict(snapshot.values)
                    outcome.restarts = restarts_of(snapshot)
                    return _finish(outcome, out_dir, state, started)
                if (restarts := await restart_if_interrupted(snapshot, saver, config)) is not None:
                    # killed mid-task (its page state is gone) or ended by an infrastructure failure (a retry):
                    # the task starts over (agent/rundir/checkpoints.py)
                    log.write({"node": "run", "event": "restart", **restarts[-1]})
                    outcome.restarts = restarts
                    config["metadata"] = restart_metadata(restarts)
            # a step still running past the wall budget (a page in a busy loop, a hung call) is interrupted,
            # not waited for: the caller then closes its page with the browser context
            async with wall:
                async for values in graph.astream(initial_state(view, time.time()), config, stream_mode="values"):
                    state = values
        except GraphRecursionError:
            error = ("the graph hit its recursion limit (step budget)", "agent")
            state = {**(state or {}), "stop_reason": "max_steps"}
        except Exception as exc:
            if isinstance(exc, TimeoutError) and wall.expired():  # a step overran the wall budget: a failed run
                error = (f"a step ran past the wall budget of {protocol.budgets.wall_seconds:.0f} s and was "
                         "interrupted", "timeout")
                log.write({"node": "run", "event": "interrupted", "error": error[0]})
                state = {**(state or {}), "stop_reason": "wall_time"}
            else:  # a Python exception in our code is a bug: keep the best answer and the traceback
                error = (f"{type(exc).__name__}: {exc}", "bug")
                trace_text = traceback.format_exc()
                log.write({"node": "run", "event": "bug", "error": error[0], "traceback": trace_text})
                state = {**(state or {}), "stop_reason": "error"}
    for name, record in policy.records().items():  # what the policy adds to the run folder (fault.json)
        (out_dir / name).write_text(json.dumps(record, indent=2), encoding="utf-8")
    if error:
        return _finish(outcome, out_dir, state, started, error=error[0], error_kind=error[1], spec=view.output_spec,
                       trace_text=trace_text)
    return _finish(outcome, out_dir, state, started, spec=view.output_spec)


def _finish(outcome: TaskOutcome, out_dir: Path, state: dict[str, Any] | None, started: float, *,
            error: str | None = None, error_kind: str | None = None, spec=None,
            trace_text: str | None = None) -> TaskOutcome:
    state = state or {}
    answer = state.get("answer")
    if answer is None and spec is not None:  # the composer did not run: compose the best answer so far
        answer = compose_answer(state.get("tables"), spec, [])[0]
    errors = state.get("errors") or []
    stop_reason = state.get("stop_reason") or ("error" if error else "finished")
    if error is None and stop_reason == "error" and errors:
        error, error_kind = errors[-1]["message"], errors[-1]["kind"]
    if run_failed(stop_reason, error_kind) and (spec is None or compose_answer(state.get("tables"), spec, [])[1] == 0):
        answer = ""  # a failed run that read nothing has no answer: never the answer NONE (its partial rows are kept)
    usage = state.get("usage") or {}
    nodes_run = list(dict.fromkeys(state.get("nodes_run") or []))
    outcome = outcome.model_copy(update=dict(
        answer=answer or "", stop_reason=stop_reason, error=error, error_kind=error_kind,
        steps=state.get("step", 0), prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0), cost_usd=usage.get("cost_usd", 0.0),
        wall_seconds=round(time.monotonic() - started, 3), nodes_run=nodes_run,
        drift_flags=list(state.get("drift_log") or []), verifier_reports=list(state.get("reports") or []),
        traceback=trace_text,
        invalid_calls=int(state.get("invalid_calls") or 0), repairs=int(state.get("repairs") or 0),
        disputed=state.get("disputed"), skipped=dict(state.get("skipped") or {}),
        context_trims=int(state.get("context_trims") or 0),
    ))
    # before anything is written or returned (an error text can quote a key: a 401 body echoing it)
    outcome = TaskOutcome.model_validate(Redactor.from_environment().json(outcome.model_dump(mode="json")))
    (out_dir / "answer.txt").write_text(outcome.answer, encoding="utf-8")
    evidence = {
        "final": state.get("retrieval"), "visited": state.get("history") or [], "plan": state.get("plan"),
        "bindings": state.get("bindings") or {},
        "rows": read_rows(extracted_answer(state.get("tables"))),
        "reads": ((state.get("tables") or {}).get(ANSWER) or {}).get("reads") or [],
        "listings": state.get("listings") or [], "urls_opened": state.get("visited") or [],
        "opened": state.get("opened") or [], "errors": errors,
        "tables": state.get("tables") or {}, "lineage": lineage(state.get("tables") or {}),
    }
    redacted = Redactor.from_environment().json(json.loads(json.dumps(evidence, default=str)))
    write_evidence(out_dir, RunEvidence.model_validate(redacted))
    return outcome
