"""Helpers of the LLM nodes: calling the model, counting usage and cost, budgets, the history window."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage

from browser.delta import DESCRIBED_CONTROLS
from browser.pdf_text import pages_text
from browser.types import ActionResult
from graph.model_io.llm_errors import describe_llm_error, llm_error_kind
from graph.nodes.deps import Deps
from graph.settings import step_cost
from graph.state import AgentState, ErrorRecord, Usage


class LLMCallError(Exception):
    """The model API failed: `kind` 'config' (400/401/403/404, never retried: fix the model config) or 'infra'
    (429/5xx/timeouts/connection, after the SDK's own retries with backoff)."""

    def __init__(self, cause: Exception):
        super().__init__(describe_llm_error(cause))
        self.cause = cause
        self.kind = llm_error_kind(cause)


MAX_INVALID_STREAK = 3
PDF_REPLY_CHARS = 4000  # PDF text a read_pdf reply shows (about an observation's budget); the rest is one read away
HISTORY_TURNS = 12


def usage_after(deps: Deps, usage: Usage, ai: AIMessage) -> tuple[Usage, dict[str, Any]]:
    meta = ai.usage_metadata or {}
    prompt, completion = int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    cost = step_cost(deps.model_config, prompt, completion)
    new = Usage(**{**usage, "llm_calls": usage["llm_calls"] + 1, "prompt_tokens": usage["prompt_tokens"] + prompt,
                   "completion_tokens": usage["completion_tokens"] + completion,
                   "cost_usd": round(usage["cost_usd"] + cost, 6)})
    return new, {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": round(cost, 6)}


class ModelCallDeadline(TimeoutError):
    """A model call ran past its total deadline: an endpoint that trickles its reply one byte at a time passes
    every per-read timeout of the HTTP client, so the call as a whole has a deadline too (infra)."""


BACKOFF_ALLOWANCE_SECONDS = 10.0  # per SDK retry: its exponential backoff waits at most 8 s


def call_deadline(deps: Deps, state: AgentState) -> float:
    """The total time one model call may take: every attempt the SDK makes at its per-request timeout, with
    its backoffs, and never past the run's wall budget (a call cut there ends the run as out of time)."""
    config = deps.model_config
    total = config.timeout * (config.max_retries + 1) + BACKOFF_ALLOWANCE_SECONDS * config.max_retries
    usage = state["usage"]
    left = deps.budgets.wall_seconds - usage["elapsed_before_resume"] - (deps.clock() - usage["started_at"])
    return max(1.0, min(total, left))


async def call_model(reply: Awaitable[AIMessage], deadline: float | None = None) -> tuple[AIMessage, float]:
    """Await a policy's reply (`Policy.act` / `Policy.plan`) within `deadline`; a failure is an `LLMCallError`."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(deadline):
            ai = await reply
    except TimeoutError as exc:
        if deadline is None or time.perf_counter() - started < deadline:  # the client's own timeout
            raise LLMCallError(exc) from exc
        cut = ModelCallDeadline(f"the model call ran past its total deadline of {deadline:.0f} s (a reply that "
                                "never ends, or arrives a byte at a time) and was cut")
        raise LLMCallError(cut) from exc
    except Exception as exc:  # classified by the caller: every API failure is infrastructure
        raise LLMCallError(exc) from exc
    if problem := usage_problem(ai.usage_metadata or {}):
        error = LLMCallError(InvalidUsage(problem))
        error.kind = "config"  # the same endpoint answers the same way: a retry cannot help
        raise error
    return ai, (time.perf_counter() - started) * 1000


class InvalidUsage(ValueError):
    """The endpoint reported token counts that are not counts: the token budget could never trip."""


MAX_TOKENS_PER_CALL = 100_000_000


def usage_problem(usage: dict[str, Any]) -> str | None:
    """Why a reply's usage cannot be counted (a word, a negative or absurd number), or None."""
    for name in ("input_tokens", "output_tokens"):
        value = usage.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 <= value <= MAX_TOKENS_PER_CALL or value != int(value):  # NaN fails the range first
            return (f"the endpoint reported {name.replace('input', 'prompt').replace('output', 'completion')}="
                    f"{value!r}, not a token count: the token budget cannot be kept; check the endpoint")
    return None


def error_record(state: AgentState, node: str, kind: str, error_class: str, message: str) -> ErrorRecord:
    return ErrorRecord(step=state.get("step", 0), node=node, kind=kind, error_class=error_class, message=message)


def history_window(messages: list[AnyMessage], turns: int = HISTORY_TURNS) -> list[AnyMessage]:
    """The last `turns` actor exchanges, cut at an AI message so every tool result keeps its call."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    if len(starts) <= turns:
        return list(messages[starts[0]:]) if starts else []
    return list(messages[starts[-turns]:])


def budget_stop(deps: Deps, state: AgentState) -> str | None:
    usage, b, now = state["usage"], deps.budgets, deps.clock()
    if state.get("step", 0) >= b.max_steps:
        return "max_steps"
    if usage["prompt_tokens"] + usage["completion_tokens"] >= b.max_tokens:
        return "max_tokens"
    if usage["elapsed_before_resume"] + (now - usage["started_at"]) >= b.wall_seconds:
        return "wall_time"
    if now - usage["last_progress_at"] >= b.no_progress_seconds:
        return "no_progress"
    return None


def result_lines(result: ActionResult) -> list[str]:
    """What the actor learns from one browser action (the full page comes in the next observation). A fact
    the browser's own message already states is not repeated (it would be paid for again on every later call
    that keeps this step): the delta when the message ends with it in words (`described`: the URL's change, the
    first controls, the count), the value read back when one of those controls shows it, the URL a `goto`
    opened (its message names it)."""
    parts = [f"ok={result.ok}"]
    if result.error:
        parts.append(f"error={result.error}: {result.message}")
    elif result.message:
        parts.append(result.message)
    delta = result.delta
    named = list(delta.controls_changed.items())[:DESCRIBED_CONTROLS] if result.described else []
    if result.readback is not None and result.readback not in [after for _, (_, after) in named]:
        parts.append(f"readback={result.readback!r}")
    if not delta.empty:
        if delta.url_after and delta.url_after != delta.url_before and not result.described \
                and result.action.get("url") != delta.url_after:
            parts.append(f"url -> {delta.url_after}")
        for label, (before, after) in delta.controls_changed.items():
            if (label, (before, after)) not in named:
                parts.append(f"{label}: {before!r} -> {after!r}")
        if delta.count_before != delta.count_after and not result.described:
            parts.append(f"results {delta.count_before} -> {delta.count_after}")
    if result.table is not None:
        t = result.table
        index = result.action.get("table")
        name = f"table {index}" if index is not None else "the file's table"
        parts.append(f"{name}: {len(t.rows)} rows held (of {t.total_rows}); headers {t.headers}; extract_rows "
                     f"reads them all (without `table` it takes this one)")
        parts += [" | ".join(r) for r in t.rows[:2]]
        if len(t.rows) > 3:
            parts.append(f"... {len(t.rows) - 3} more")
        if len(t.rows) > 2:
            parts.append(" | ".join(t.rows[-1]))
    if result.pdf_pages:
        parts.append(pages_text(result.pdf_pages, max_chars=PDF_REPLY_CHARS))
    return parts
