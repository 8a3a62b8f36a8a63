"""Replay a decision path through the real wire path: the agent runs as usual, its `ChatOpenAI` client talks
to the strict fake server (a request OpenAI would refuse gets HTTP 400), and the server answers each request
with the path's next decision: the planner request with the plan, each actor request with the next call,
and once the calls run out, `finish` again (a refused finish is tried again until the agent stops).

A target the path gives as shown (`shown_label`, `shown_link`) is mapped to the ref the same control or link
has in the page the agent is on now, read from the browser's structured observation (never from the prompt
text); one the page does not show is sent as a label or text target and listed in `divergences`.

A replay also measures what the agent sends: the prompt tokens of every request (cl100k over the messages and
the tool schemas, as an API bills them; `chars_4` is the play server's estimate, messages' JSON characters / 4)
and how many actor calls it took. The decisions are fixed, so two variants (`--ablate`) compared on one path
differ only in what they say to the model (benchmarks/bench_overhead.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.config import AgentVariant, Budgets, ProtocolConfig
from agent.measuring.fake_server import FakeOpenAIServer
from agent.measuring.paths.path import TARGET_KEYS, DecisionPath
from agent.outcome import TaskOutcome
from agent.solve import solve_task
from browser.tokens import count_tokens
from browser.types import Observation
from eval.batch import score_task
from tasks.loaders import load_tasks, offline_source

PLAN_TOOL = "Plan"
MODEL_ID = "path-replay"
MESSAGE_OVERHEAD = 4  # tokens a chat API adds per message (graph.prompting.context counts the same)


def _is_plan_request(body: dict[str, Any]) -> bool:
    choice = body.get("tool_choice")
    return isinstance(choice, dict) and (choice.get("function") or {}).get("name") == PLAN_TOOL


def request_tokens(body: dict[str, Any]) -> int:
    """One request's prompt tokens as billed: each message's text and tool calls, and the tool schemas."""
    tokens = 0
    for message in body.get("messages") or []:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content) if content else ""
        tokens += MESSAGE_OVERHEAD + count_tokens(text)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            tokens += count_tokens(str(function.get("name", "")) + str(function.get("arguments", "")))
    tools = body.get("tools")
    return tokens + (count_tokens(json.dumps(tools, separators=(",", ":"))) if tools else 0)


@dataclass(frozen=True)
class RequestCost:
    """What the agent sent over a replay, summed: all requests, and the actor's alone (not the planner's)."""

    prompt_tokens: int
    actor_prompt_tokens: int
    actor_calls: int
    chars_4: int  # the play server's estimate: len(json.dumps(messages)) // 4 per request, summed

    @classmethod
    def of(cls, requests: list[dict[str, Any]]) -> RequestCost:
        actor = [b for b in requests if not _is_plan_request(b)]
        return cls(prompt_tokens=sum(request_tokens(b) for b in requests),
                   actor_prompt_tokens=sum(request_tokens(b) for b in actor), actor_calls=len(actor),
                   chars_4=sum(len(json.dumps(b.get("messages") or [])) // 4 for b in requests))


class PathPolicy:
    """The fake server's responder: one decision of the path per request."""

    def __init__(self, path: DecisionPath, observation: Callable[[], Observation | None]):
        self.path = path
        self.observation = observation
        self.next = 0
        self.divergences: list[str] = []
        finishes = [s for s in path.steps if s.tool == "finish"]
        self.finish_args = finishes[-1].args if finishes else {}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if _is_plan_request(body):
            return {"tool_calls": [{"name": PLAN_TOOL, "arguments": self.path.plan or {}}]}
        if self.next < len(self.path.steps):
            step = self.path.steps[self.next]
            self.next += 1
            name, args = step.tool, dict(step.args)
        else:
            name, args = "finish", dict(self.finish_args)
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        if offered and name not in offered:
            self.divergences.append(f"step {self.next}: {name} is not offered")
        for key in TARGET_KEYS:
            if isinstance(args.get(key), dict):
                args[key] = self._target(args[key])
        return {"tool_calls": [{"name": name, "arguments": args}]}

    def _target(self, target: dict[str, Any]) -> dict[str, Any]:
        if "shown_label" not in target and "shown_link" not in target:
            return target
        obs = self.observation()
        if "shown_label" in target:
            label, fallback = target["shown_label"], {"label": target["shown_label"]}
            ref = _find(label, [(c.ref, c.label) for c in (obs.controls if obs else [])])
        else:
            label, fallback = target["shown_link"], {"text": target["shown_link"]}
            ref = _find(label, [(link.ref, link.text) for link in (obs.links if obs else [])])
        if ref is None:
            self.divergences.append(f"step {self.next}: {json.dumps(target)} is not on {obs.url if obs else 'the page'}")
            return fallback
        return {"ref": ref}


def _find(shown: str, elements: list[tuple[str, str]]) -> str | None:
    """The ref of the element showing this text: the same text, or (a path recorded from a prompt, where long
    texts are cut with "…") the one element whose text starts with what was shown."""
    exact = [ref for ref, text in elements if text == shown]
    if exact:
        return exact[0]
    head = shown.rstrip("…").rstrip()
    starts = [ref for ref, text in elements if head and shown.endswith("…") and text.startswith(head)]
    return starts[0] if len(starts) == 1 else None


@dataclass
class ReplayResult:
    outcome: TaskOutcome
    score: dict[str, Any]
    requests: int
    rejected: list[tuple[int, str]]  # (request number, OpenAI's error text)
    divergences: list[str]
    steps_used: int
    steps_total: int
    checks: dict[str, bool] = field(default_factory=dict)
    cost: RequestCost = RequestCost(0, 0, 0, 0)

    @property
    def refusals(self) -> int:
        return sum(1 for r in self.outcome.verifier_reports if not r.get("ok"))

    @property
    def gate_flags(self) -> int:
        return len(self.outcome.drift_flags)

    def check(self) -> dict[str, bool]:
        """Each assertion a path can make, as it came out."""
        return {"exact_match": bool(self.score.get("exact_match")), "no_refusal": self.refusals == 0,
                "no_gate_flag": self.gate_flags == 0, "no_rejected_request": not self.rejected}

    def summary(self) -> dict[str, Any]:
        return {"task": self.outcome.task_id, "variant": self.outcome.variant, "exact_match": self.score.get("exact_match"),
                "item_f1": self.score.get("item_f1"), "refusals": self.refusals, "gate_flags": self.gate_flags,
                "rejected_requests": len(self.rejected), "stop": self.outcome.stop_reason,
                "error": self.outcome.error, "steps": f"{self.steps_used}/{self.steps_total}",
                "requests": self.requests, "actor_calls": self.cost.actor_calls,
                "prompt_tokens": self.cost.prompt_tokens, "actor_prompt_tokens": self.cost.actor_prompt_tokens,
                "prompt_chars_4": self.cost.chars_4, "divergences": self.divergences[:5],
                "rejections": [text for _, text in self.rejected[:2]],
                "flags": [f"{f.get('rule')}:{f.get('gate')}" for f in self.outcome.drift_flags][:5],
                "refused_with": [r.get("repair_goal") for r in self.outcome.verifier_reports if not r.get("ok")][:2]}


def replay_protocol(path: DecisionPath) -> ProtocolConfig:
    """Budgets wide enough for the path and its refused finishes: the path, not a budget, decides the end."""
    return ProtocolConfig(budgets=Budgets(max_steps=max(60, len(path.steps) + 10), wall_seconds=1800,
                                          no_progress_seconds=1800))


async def replay_path(path: DecisionPath, *, origin: str, worker: Any, out_dir: Path,
                      variant: AgentVariant | None = None,
                      policy_for: Callable[[DecisionPath, Callable[[], Observation | None]], PathPolicy] = PathPolicy,
                      ) -> ReplayResult:
    """`worker`: a `browser.session.ChromiumWorker`; `origin`: where the offline sites run now; `policy_for`:
    the responder made from the path (with the origin filled in) and the page the agent is on."""
    live = path.with_origin(origin)
    task = load_tasks(offline_source(path.task), origin=origin, task_ids=[path.task])[0]
    out_dir = Path(out_dir)
    async with worker.task_browser(str(out_dir), [origin]) as browser:
        policy = policy_for(live, lambda: browser.last_observation)
        with FakeOpenAIServer(policy, model=MODEL_ID) as fake:
            outcome = await solve_task(task, browser=browser, model=fake.model_config(name=MODEL_ID),
                                       variant=variant or AgentVariant(name="full"), protocol=replay_protocol(path),
                                       out_dir=out_dir)
    score = score_task(task, outcome.answer, None, "ours").model_dump(mode="json")
    return ReplayResult(outcome=outcome, score=score, requests=len(fake.requests), rejected=list(fake.rejected),
                        divergences=policy.divergences, steps_used=min(policy.next, len(path.steps)),
                        steps_total=len(path.steps), cost=RequestCost.of(list(fake.requests)))
