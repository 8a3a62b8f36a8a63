"""Framework overhead of the agent graph, per step, on the offline suite with the scripted model.

Every offline task is solved end to end (real Chromium, the scripted walkthrough policy). From the run's
`steps.jsonl`, time inside the LLM (planner/actor calls) and inside the browser (executor act + observe) is
subtracted from the task's wall time; the rest is the framework: LangGraph, state tracking, extraction,
verification, prompt rendering, checkpointing, artefact writing. Also prints prompt tokens per LLM call
(the scripted model counts with cl100k: messages plus tool schemas, as an API would bill them), and the
tool schemas' own share of every actor call (total and per tool), so a new tool's cost is visible.

Before that line: where an actor prompt's tokens go (system prompt, tool schemas, history, the turn's
task/plan/state part, its observation; logged per call as `prompt_parts`), next to the recorded baseline
(benchmarks/prompt_tokens_baseline.json, taken before the prompts were compacted; `--save-baseline LABEL`
records a new one), and how many calls saw an unchanged page (sent as an observation delta).

It ends with `prompt tokens per actor call: mean N, max M` (every actor call of every task, tool schemas
included) and, with `--local TASKS`, the packaged local model's seconds per call on those tasks (extra `local`).

Run: .venv/bin/python benchmarks/bench_graph.py [--tasks offline_vulns_001,...] [--checkpoint] [--json out.json]
     [--local offline_water_001-c]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agent.config import AgentVariant, Budgets, ModelConfig, ProtocolConfig
from agent.measuring.local_server import LOCAL_MODEL, LocalModelServer, server_available
from agent.solve import solve_task
from browser.session import ChromiumWorker
from eval.score import score_answer
from graph.events import ActorEvent, ExecutorEvent, PlannerEvent, read_events
from tasks.loaders import load_tasks
from tasks.offline.server import OfflineServer

SCRIPTED = ModelConfig(name="scripted", provider="scripted")


@dataclass
class TaskRow:
    task_id: str
    exact_match: bool
    steps: int
    wall_ms: float
    llm_ms: float
    browser_ms: float
    overhead_ms: float
    prompt_tokens_per_call: float
    max_prompt_tokens: int
    actor_prompt_tokens: list[int]
    actor_llm_ms: list[float]
    actor_prompt_parts: list[dict[str, int]]
    actor_page_keys: list[str]

    @property
    def overhead_share(self) -> float:
        return self.overhead_ms / self.wall_ms if self.wall_ms else 0.0


def measure(task_id: str, out_dir: Path, wall_ms: float, exact_match: bool, steps: int) -> TaskRow:
    events, _ = read_events(out_dir / "steps.jsonl")
    calls = [e for e in events if isinstance(e, PlannerEvent | ActorEvent)]
    llm_ms = sum(e.llm_ms or 0.0 for e in calls)
    browser_ms = sum(e.browser_ms or 0.0 for e in events if isinstance(e, ExecutorEvent))
    prompts = [e.prompt_tokens for e in calls if e.prompt_tokens is not None]
    actor = [e for e in calls if isinstance(e, ActorEvent) and e.prompt_tokens is not None]
    return TaskRow(task_id=task_id, exact_match=exact_match, steps=steps, wall_ms=wall_ms, llm_ms=llm_ms,
                   browser_ms=browser_ms, overhead_ms=wall_ms - llm_ms - browser_ms,
                   prompt_tokens_per_call=statistics.mean(prompts) if prompts else 0.0,
                   max_prompt_tokens=max(prompts, default=0),
                   actor_prompt_tokens=[e.prompt_tokens for e in actor],
                   actor_llm_ms=[e.llm_ms or 0.0 for e in actor],
                   actor_prompt_parts=[e.prompt_parts for e in actor if e.prompt_parts is not None],
                   actor_page_keys=[e.page_key or "" for e in actor if e.prompt_parts is not None])


async def run(task_ids: list[str] | None, checkpoint: bool, model: ModelConfig = SCRIPTED,
              budgets: Budgets | None = None) -> list[TaskRow]:
    rows: list[TaskRow] = []
    protocol = ProtocolConfig(budgets=budgets) if budgets else ProtocolConfig()
    with OfflineServer() as server, tempfile.TemporaryDirectory(prefix="bench-graph-") as tmp:
        tasks = load_tasks("offline", split="both" if task_ids else "constraint", origin=server.origin,
                           task_ids=task_ids)
        worker = ChromiumWorker()
        try:
            for task in tasks:
                out_dir = Path(tmp) / task.task_id
                async with worker.task_browser(str(out_dir), [server.origin]) as browser:
                    started = time.perf_counter()
                    outcome = await solve_task(task, browser=browser, model=model,
                                               variant=AgentVariant(name="full"), protocol=protocol,
                                               out_dir=out_dir,
                                               checkpoint_db=out_dir / "cp.sqlite" if checkpoint else None)
                    wall_ms = (time.perf_counter() - started) * 1000
                exact = score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match
                rows.append(measure(task.task_id, out_dir, wall_ms, exact, outcome.steps))
        finally:
            await worker.close()
    return rows


def table(rows: list[TaskRow], checkpoint: bool) -> str:
    lines = [f"Graph overhead per step (scripted model, real Chromium; checkpointer {'on' if checkpoint else 'off'})",
             "", "| task | EM | steps | wall s | LLM ms | browser ms | overhead ms/step | overhead share "
             "| prompt tok/call | max prompt tok |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.task_id} | {'yes' if r.exact_match else 'no'} | {r.steps} | {r.wall_ms / 1000:.1f} "
                     f"| {r.llm_ms:.0f} | {r.browser_ms:.0f} | {r.overhead_ms / max(r.steps, 1):.1f} "
                     f"| {r.overhead_share:.1%} | {r.prompt_tokens_per_call:.0f} | {r.max_prompt_tokens} |")
    steps = sum(r.steps for r in rows)
    wall, overhead = sum(r.wall_ms for r in rows), sum(r.overhead_ms for r in rows)
    tokens = statistics.mean(r.prompt_tokens_per_call for r in rows) if rows else 0
    lines.append(f"| **all ({len(rows)} tasks, {sum(r.exact_match for r in rows)} EM)** | | {steps} "
                 f"| {wall / 1000:.1f} | {sum(r.llm_ms for r in rows):.0f} | {sum(r.browser_ms for r in rows):.0f} "
                 f"| {overhead / max(steps, 1):.1f} | {overhead / wall if wall else 0:.1%} | {tokens:.0f} "
                 f"| {max((r.max_prompt_tokens for r in rows), default=0)} |")
    calls = [t for r in rows for t in r.actor_prompt_tokens]
    lines += ["", f"prompt tokens per actor call: mean {statistics.mean(calls) if calls else 0:.0f}, "
                  f"max {max(calls, default=0)}"]
    return "\n".join(lines)


PARTS = ("system", "tools", "history", "state", "observation")
PART_NAMES = {"system": "system prompt", "tools": "tool schemas", "history": "history (earlier exchanges)",
              "state": "turn: task, plan, retrieval state, rows", "observation": "turn: observation"}
BASELINE = Path(__file__).with_name("prompt_tokens_baseline.json")


def prompt_figures(rows: list[TaskRow]) -> dict[str, object]:
    """Mean / max prompt tokens per actor call and the mean of each part (graph.prompting.context.prompt_parts)."""
    calls = [t for r in rows for t in r.actor_prompt_tokens]
    parts = [p for r in rows for p in r.actor_prompt_parts]
    unchanged = [p["observation"] for r in rows for prev, key, p in
                 zip(["", *r.actor_page_keys], r.actor_page_keys, r.actor_prompt_parts, strict=False) if key and key == prev]
    return {"tasks": len(rows), "calls": len(calls), "mean": round(statistics.mean(calls)) if calls else 0,
            "max": max(calls, default=0),
            "parts": {k: round(statistics.mean(p.get(k, 0) for p in parts)) if parts else 0 for k in PARTS},
            "unchanged_page_calls": len(unchanged),
            "unchanged_page_observation_tokens": round(statistics.mean(unchanged)) if unchanged else 0}


def breakdown_table(after: dict[str, object], before: dict[str, object] | None) -> str:
    """Where the actor's prompt tokens go, per call (mean), before (the recorded baseline) and now."""
    head = f"Actor prompt per call, mean tokens (cl100k; {after['calls']} actor calls on {after['tasks']} tasks)"
    if before:
        head += f"; before = {before.get('label', 'baseline')}"
    lines = [head, "", "| part | before | after |" if before else "| part | tokens |",
             "|---|---:|---:|" if before else "|---|---:|"]
    rows = [(PART_NAMES[k], (before or {}).get("parts", {}).get(k), after["parts"][k]) for k in PARTS]
    rows += [("**whole prompt, mean**", (before or {}).get("mean"), after["mean"]),
             ("**whole prompt, max**", (before or {}).get("max"), after["max"])]
    for name, old, new in rows:
        lines.append(f"| {name} | {old if old is not None else '-'} | {new} |" if before else f"| {name} | {new} |")
    lines += ["", f"calls whose page was unchanged since the previous actor call: {after['unchanged_page_calls']} "
                  f"of {after['calls']} (their observation part: mean {after['unchanged_page_observation_tokens']} "
                  f"tokens)"]
    return "\n".join(lines)


def time_local(task_ids: list[str], steps: int) -> str:
    """`--local`: the packaged local model on these tasks, with the server's CPU seconds (load-independent)."""
    reason = server_available()
    if reason:
        return f"local model not timed: {reason}"
    with LocalModelServer() as server:
        model = LOCAL_MODEL.model_copy(update={"base_url": server.base_url})
        rows = asyncio.run(run(task_ids, False, model, Budgets(max_steps=steps, wall_seconds=3600)))
        return local_table(rows, server.cpu_seconds())


def local_table(rows: list[TaskRow], server_cpu_s: float | None = None) -> str:
    """The local model's speed: seconds per actor call and prompt tokens per call (as the server counts)."""
    seconds = [ms / 1000 for r in rows for ms in r.actor_llm_ms]
    tokens = [t for r in rows for t in r.actor_prompt_tokens]
    lines = [f"Local model ({LOCAL_MODEL.model}, llama.cpp on this machine's CPU): {len(seconds)} actor calls on "
             f"{len(rows)} task(s), {sum(r.exact_match for r in rows)} EM"]
    if seconds:
        lines.append(f"local model seconds per call: mean {statistics.mean(seconds):.1f}, "
                     f"median {statistics.median(seconds):.1f}, max {max(seconds):.1f}; prompt tokens per call "
                     f"(server's tokenizer): mean {statistics.mean(tokens):.0f}, max {max(tokens)}")
    if seconds and server_cpu_s is not None:
        lines.append(f"local server CPU seconds: {server_cpu_s:.1f} in all, {server_cpu_s / len(seconds):.1f} per "
                     "actor call (planner calls and model load included)")
    return "\n".join(lines)


def schema_table(top: int = 8) -> str:
    """Tokens the actor's tool schemas add to every call (cl100k), total and the largest tools."""
    from browser.tokens import count_tokens
    from graph.tools.tool_schemas import tool_schemas

    tools = tool_schemas(search=False)
    sizes = sorted(((t["function"]["name"], count_tokens(json.dumps(t))) for t in tools), key=lambda x: -x[1])
    lines = [f"Tool schemas per actor call: {count_tokens(json.dumps(tools))} tokens ({len(tools)} tools)", "",
             "| tool | tokens |", "|---|---:|"]
    lines += [f"| {name} | {n} |" for name, n in sizes[:top]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task ids (default: every constraint task)")
    parser.add_argument("--checkpoint", action="store_true", help="run with the SQLite checkpointer")
    parser.add_argument("--json", type=Path, help="also write the raw rows here")
    parser.add_argument("--local", help="also time the packaged local model on these comma-separated task ids")
    parser.add_argument("--local-steps", type=int, default=8, help="step budget per task for the local model")
    parser.add_argument("--schemas-only", action="store_true", help="only print the tool-schema token table")
    parser.add_argument("--baseline", type=Path, default=BASELINE, help="prompt figures to print as 'before'")
    parser.add_argument("--save-baseline", metavar="LABEL",
                        help="record this run's prompt figures as the baseline, labelled (e.g. a commit)")
    parser.add_argument("--local-only", action="store_true", help="with --local: skip the scripted suite")
    args = parser.parse_args()
    print(schema_table(), end="\n\n")
    if args.schemas_only:
        return
    if args.local_only and args.local:
        print(time_local(args.local.split(","), args.local_steps))
        return
    rows = asyncio.run(run(args.tasks.split(",") if args.tasks else None, args.checkpoint))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2))
    local = time_local(args.local.split(","), args.local_steps) if args.local else None
    if local:  # before the main table, which ends with the prompt-token line
        print(local, end="\n\n")
    figures = prompt_figures(rows)
    before = json.loads(args.baseline.read_text()) if args.baseline and args.baseline.exists() else None
    if args.save_baseline:
        args.baseline.write_text(json.dumps({"label": args.save_baseline, **figures}, indent=2) + "\n")
    print(breakdown_table(figures, before), end="\n\n")
    if before:
        print(f"prompt tokens per actor call before ({before.get('label', 'baseline')}): mean {before['mean']}, "
              f"max {before['max']}", end="\n\n")
    print(table(rows, args.checkpoint))


if __name__ == "__main__":
    main()
