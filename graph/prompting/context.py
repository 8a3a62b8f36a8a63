"""The actor's context window: what of the conversation fits the model's context length.

The system prompt with the tool schemas and the current turn (instruction, plan, retrieval state, rows so far,
the latest observation) are always sent; of the earlier exchanges the newest few are kept whole and the older
ones are folded into a one-line-per-step summary (always beyond `whole`, and further until the whole prompt
fits `context_tokens` - `COMPLETION_RESERVE`), counted with the project's token counter (`browser.tokens`).
Other tokenizers count differently, so `TOKENIZER_MARGIN` leaves headroom.

With a short window `fit_prompt` decides what the observation may take before it is rendered (once): the
history is folded, then the observation is laid out within the room left, then the turn's state part is
abbreviated (graph/prompting/render.py `turn_cut`) and at last the tool schemas lose their descriptions (`undocumented`),
then the observation may take part of the completion reserve; a window too short even for that is a one-line
`ContextOverflow`, never a prompt over `context_tokens`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from browser.render import Rendering
from browser.tokens import count_tokens
from graph.model_io.robust import call_outcome, own_lines, reply_gist
from graph.prompting.page_fence import untrusted

COMPLETION_RESERVE = 512
TOKENIZER_MARGIN = 0.85  # cl100k counts ~10-15% fewer tokens than small models' own tokenizers
MESSAGE_OVERHEAD = 4  # role and separators per message, as chat templates add them
SUMMARY_LINE_CHARS = 100
SUMMARY_MAX_LINES = 4
SUMMARY_ARG_CHARS = 32
MIN_OBSERVATION_TOKENS = 300  # below this the observation is cut only after the turn's state part is
OBSERVATION_FLOOR = 100  # the URL, the state and a few control lines; less cannot show a page
MIN_REPLY = 64  # of the completion reserve, never given to the observation (a short tool call)
FIT_MARGIN = 8  # tokens: a text counted whole and counted in its parts differ by a few at the seams


def message_tokens(message: AnyMessage) -> int:
    tokens = MESSAGE_OVERHEAD + count_tokens(str(message.content or ""))
    for call in getattr(message, "tool_calls", None) or []:
        tokens += count_tokens(call["name"] + json.dumps(call.get("args") or {}))
    return tokens


def tools_tokens(tools: list[dict[str, Any]]) -> int:
    return count_tokens(json.dumps(tools, separators=(",", ":")))


def prompt_tokens(messages: list[AnyMessage], tools: list[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages) + tools_tokens(tools)


def prompt_parts(system: AnyMessage, history: list[AnyMessage], turn: AnyMessage, observation: Rendering,
                 tools: list[dict[str, Any]]) -> dict[str, int]:
    """Where an actor prompt's tokens go (message texts and `json.dumps(tools)`, as the usage counters bill
    them): system prompt, tool schemas, earlier exchanges, the turn's task/plan/state part, its observation."""
    content = lambda m: count_tokens(str(m.content or ""))  # noqa: E731
    observed = observation.tokens
    return {"system": content(system), "tools": count_tokens(json.dumps(tools)),
            "history": sum(content(m) for m in history), "state": max(content(turn) - observed, 0),
            "observation": observed}


def _exchanges(history: list[AnyMessage]) -> list[list[AnyMessage]]:
    """Groups starting at each AI message, so a tool result never loses its call."""
    groups: list[list[AnyMessage]] = []
    for message in history:
        if isinstance(message, AIMessage) or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def _summary_line(group: list[AnyMessage]) -> str:
    """`- tool(args) -> what happened`, within SUMMARY_LINE_CHARS: URLs without their origin and long strings cut
    (SUMMARY_ARG_CHARS), so that the result, not the arguments, fills the line."""
    ai = group[0]
    calls = getattr(ai, "tool_calls", None) or []
    did = "; ".join(f"{c['name']}({json.dumps(_short(c.get('args') or {}), separators=(',', ':'))})" for c in calls)
    did = did or f"replied without a tool call: {str(ai.content)[:60]!r}"
    result = " / ".join(_result(m) for m in group[1:] if isinstance(m, ToolMessage | HumanMessage))
    return f"- {did} -> {_ORIGIN.sub('', result)}"[:SUMMARY_LINE_CHARS]


_ORIGIN = re.compile(r"\bhttps?://[^/\s\"']+")
SMALL_MAPPING = 3  # keys of a nested argument shown with its values (a target), not as a list of its keys
SMALL_VALUE_CHARS = 16


def _short(value: Any, top: bool = True) -> Any:
    """An argument as the summary shows it: a nested mapping too long for the line by its keys (the columns read),
    but a small one (a target: ref and frame) by its values cut short, never by its key names alone."""
    if isinstance(value, dict):
        short = {k: _short(v, False) for k, v in value.items()}
        if not top and len(json.dumps(short, separators=(",", ":"))) > SUMMARY_ARG_CHARS:
            if len(short) <= SMALL_MAPPING:
                return {k: v[:SMALL_VALUE_CHARS] + "…" if isinstance(v, str) and len(v) > SMALL_VALUE_CHARS else v
                        for k, v in short.items()}
            return list(short)
        return short
    if isinstance(value, list):
        return [_short(v, False) for v in value]
    if isinstance(value, str):
        text = _ORIGIN.sub("", value)
        return text if len(text) <= SUMMARY_ARG_CHARS else text[:SUMMARY_ARG_CHARS - 1] + "…"
    return value


OUTCOME_WORDS = {"failed": "failed: ", "unchanged": "no change: ", "ok": ""}


def _result(message: AnyMessage) -> str:
    """What a step's reply says happened: the outcome its status and artifact carry (graph/model_io/robust.py) and the
    gist its producer gave, else the first line of its text; never a reading of how the text is worded. A gist
    that is not the agent's own words (a browser message quotes page labels) is marked as its reply's lines are."""
    first = (str(message.content or "").splitlines() or [""])[0]
    if not isinstance(message, ToolMessage):
        return first
    outcome = call_outcome(message)
    gist = reply_gist(message)
    if gist is not None and 0 not in own_lines(message):
        gist = untrusted(gist)
    return OUTCOME_WORDS[outcome] + (first if gist is None else gist) or outcome


@dataclass
class Window:
    messages: list[AnyMessage]  # the earlier exchanges to send (a summary message first when trimmed)
    trimmed: int  # exchanges folded into the summary or dropped
    tokens: int  # the whole prompt as counted (system, tools, window, turn)
    limit: int | None


def fit_window(history: list[AnyMessage], *, head: list[AnyMessage], turn: AnyMessage, tools: list[dict[str, Any]],
               context_tokens: int | None, whole: int | None = None) -> Window:
    """`history` is already cut to the last K exchanges. The newest `whole` exchanges are sent whole (all when
    None), older ones as one summary line each; with `context_tokens`, more are summarised until the prompt
    fits (`Window.trimmed` counts only those: the context trims)."""
    fixed = prompt_tokens([*head, turn], tools)
    groups = _exchanges(history)
    base = max(0, len(groups) - whole) if whole is not None else 0
    limit = int(context_tokens * TOKENIZER_MARGIN) - COMPLETION_RESERVE if context_tokens is not None else None
    for cut in range(base, len(groups) + 1):
        kept = [m for g in groups[cut:] for m in g]
        summary = _summary(groups[:cut])
        window = ([summary] if summary else []) + kept
        total = fixed + sum(message_tokens(m) for m in window)
        if limit is None or total <= limit:
            return Window(window, cut - base, total, limit)
    return Window([], len(groups) - base, fixed, limit)  # even the bare turn is over: the caller cuts the observation


def _summary(groups: list[list[AnyMessage]]) -> HumanMessage | None:
    if not groups:
        return None
    lines = [_summary_line(g) for g in groups][-SUMMARY_MAX_LINES:]
    if len(groups) > SUMMARY_MAX_LINES:
        lines.insert(0, f"- ({len(groups) - SUMMARY_MAX_LINES} earlier steps not shown)")
    return HumanMessage("EARLIER STEPS (one line each):\n" + "\n".join(lines))


class ContextOverflow(ValueError):
    """The model's context window cannot hold even the smallest prompt (system, tools, the abbreviated turn and
    the smallest observation): a configuration error, said in one line."""


@dataclass
class FittedPrompt:
    messages: list[AnyMessage]  # system, the history that fits, the turn
    turn: AnyMessage
    history: list[AnyMessage]
    observation: Rendering  # the observation's one rendering, as the turn shows it
    tools: list[dict[str, Any]]  # the schemas to bind (without their descriptions at the last level)
    trimmed: bool  # something sent differs from what the whole budget would have sent: a context trim


def fit_prompt(*, system: AnyMessage, history: list[AnyMessage], context_tokens: int | None, budget: int,
               observation_tokens: Callable[[], int], levels: int, whole: int | None,
               turn: Callable[[str, int], AnyMessage], tools: Callable[[int, Rendering | bool], list[dict[str, Any]]],
               observe: Callable[[int], Rendering]) -> FittedPrompt:
    """The actor's prompt within `context_tokens`. At level 0..`levels` (each leaves out more), `turn(observation,
    level)` builds the turn and `tools(level, rendering)` gives the schemas offered for that rendering; before it
    is made, `tools(level, shown_whole)` gives those of a page shown whole (True) or of any rendering of it
    (False, a superset): the room is decided with them, so the offers match the rendering and the prompt fits.
    `observe(budget)` renders the observation within `budget` tokens, called once, after the room is decided;
    `observation_tokens()` is what it takes shown whole (the renderer's count, before any rendering; an upper
    bound for a delta; asked only with a window).

    In order, the first that fits `context_tokens` less COMPLETION_RESERVE: the observation as it is with the
    history folded (`fit_window`); the observation laid out within what is left after the folded history, or
    with no history, given at least MIN_OBSERVATION_TOKENS; the same at each level. Then, into the completion
    reserve (MIN_REPLY kept), the first level that leaves the observation OBSERVATION_FLOOR. Else `ContextOverflow`."""
    if context_tokens is None:
        rendering = observe(budget)
        message, schemas = turn(rendering.text, 0), tools(0, rendering)
        window = fit_window(history, head=[system], turn=message, tools=schemas, context_tokens=None, whole=whole)
        return FittedPrompt([system, *window.messages, message], message, window.messages, rendering, schemas,
                            window.trimmed > 0)
    usable = int(context_tokens * TOKENIZER_MARGIN)
    soft, hard = usable - COMPLETION_RESERVE, usable - MIN_REPLY
    needs = observation_tokens()
    natural = min(budget, needs)
    groups = _exchanges(history)
    base = max(0, len(groups) - whole) if whole is not None else 0
    options = [_folded(groups, cut) for cut in range(base, len(groups) + 1)] + [[]]  # the last: no history
    bare: dict[tuple[int, bool], tuple[AnyMessage, list[dict[str, Any]], int]] = {}  # turn without observation, ...

    def fixed(level: int, shown_whole: bool = False) -> int:
        """The prompt without its observation, with the tools offered for a page shown whole or maybe cut."""
        if (level, shown_whole) not in bare:
            message, schemas = turn("", level), tools(level, shown_whole)
            bare[level, shown_whole] = (message, schemas, prompt_tokens([system, message], schemas) + FIT_MARGIN)
        return bare[level, shown_whole][2]

    def room_at(level: int, limit: int, cap: int | None = None) -> tuple[int, bool]:
        """The observation's room under `limit` (at most `cap`), and whether the page fits it whole."""
        room = limit - fixed(level, True) if cap is None else min(cap, limit - fixed(level, True))
        if needs <= min(room, budget):
            return room, True
        return (limit - fixed(level) if cap is None else min(cap, limit - fixed(level))), False

    def left_out(level: int) -> bool:
        fixed(level)
        fixed(0)
        return bare[level, False][0].content != bare[0, False][0].content or bare[level, False][1] != bare[0, False][1]

    def built(level: int, kept: list[AnyMessage], room: int, shown_whole: bool) -> FittedPrompt:
        given = budget if shown_whole else min(budget, room)  # a page that fits the room: as the budget shows it
        rendering = observe(given)
        message = turn(rendering.text, level)
        messages = [system, *kept, message]
        schemas = tools(level, rendering)
        sent = prompt_tokens(messages, schemas)
        if sent > hard:
            raise _overflow(context_tokens, sent, hard)
        cut = given < budget and not rendering.complete  # the room left out what the budget would have shown
        return FittedPrompt(messages, message, kept, rendering, schemas, left_out(level) or kept != options[0] or cut)

    shown_whole = needs <= budget
    for kept in options:  # the observation as it is, the history folded as needed
        if fixed(0, shown_whole) + sum(message_tokens(m) for m in kept) + natural <= soft:
            return built(0, kept, budget, shown_whole)
    folded = options[-2]
    room, shown_whole = room_at(0, soft - sum(message_tokens(m) for m in folded))
    if room >= MIN_OBSERVATION_TOKENS:
        return built(0, folded, room, shown_whole)
    for level in range(levels + 1):
        room, shown_whole = room_at(level, soft)
        if room >= MIN_OBSERVATION_TOKENS:
            return built(level, [], room, shown_whole)
    for level in range(levels + 1):
        room, shown_whole = room_at(level, hard, MIN_OBSERVATION_TOKENS)
        if room >= OBSERVATION_FLOOR:
            return built(level, [], room, shown_whole)
    raise _overflow(context_tokens, fixed(levels) + OBSERVATION_FLOOR, hard)


def undocumented(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool schemas without their descriptions: names, parameters, types and enums (the system prompt names
    every tool); for a window too short for the documented ones."""
    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(n) for n in node]
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))}
        return node
    return [strip(t) for t in tools]


def _overflow(context_tokens: int, needed: int, hard: int) -> ContextOverflow:
    return ContextOverflow(
        f"context_tokens={context_tokens} is too small for this agent: the smallest prompt (system, offered tools, "
        f"the abbreviated turn, a {OBSERVATION_FLOOR}-token observation) takes {needed} tokens of the {hard} it "
        f"leaves ({TOKENIZER_MARGIN:.0%} of the window less {MIN_REPLY} for the reply); raise context_tokens")


def _folded(groups: list[list[AnyMessage]], cut: int) -> list[AnyMessage]:
    """The history with its first `cut` exchanges folded into the summary."""
    summary = _summary(groups[:cut])
    return ([summary] if summary else []) + [m for g in groups[cut:] for m in g]
