"""OpenAI's chat rules for tool calls, checked on the agent's own history as it grows.

A hosted API (OpenAI, DeepSeek, Qwen) answers a request whose history breaks them with HTTP 400, which the
runner rightly treats as a configuration error: the run stops. So the rules are enforced where the history is
built, by the state's message reducer (`chat_history`): a node that appends a tool message answering no open
call, or any other message while a call is still unanswered, fails at once with the node's own update in the
traceback, instead of a 400 many steps later. The rules (one list, `violations`, shared with the strict fake
server in the tests, which applies them to the wire JSON):

- a `tool` message answers a tool call of the newest assistant message that is still open (each call once);
- once an assistant message carries tool calls, each is answered before any other message;
- tool call ids are unique across the conversation.

Trimming the history (`graph/prompting/context.py`) keeps an assistant message and its answers together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph.message import add_messages


@dataclass(frozen=True)
class Turn:
    """One message as the rules see it: its role, the ids of the calls it carries, the id it answers."""

    role: str
    calls: tuple[str, ...] = ()
    answers: str | None = None


@dataclass(frozen=True)
class Violation:
    index: int
    param: str
    message: str  # as OpenAI words it


def violations(turns: Sequence[Turn], *, complete: bool = True) -> list[Violation]:
    """Every broken rule, in order. `complete=False` is a history still being built: calls may be open at its end."""
    out: list[Violation] = []
    open_ids: list[str] = []
    seen: set[str] = set()
    for i, turn in enumerate(turns):
        if turn.role == "tool":
            if turn.answers not in open_ids:
                out.append(Violation(i, f"messages.[{i}].role", "Invalid parameter: messages with role 'tool' must "
                                     "be a response to a preceeding message with 'tool_calls'."))
            else:
                open_ids.remove(turn.answers)
            continue
        if open_ids:
            out.append(_unanswered(i, open_ids))
            open_ids = []
        if turn.role == "assistant":
            for call_id in turn.calls:
                if call_id in seen:
                    out.append(Violation(i, f"messages.[{i}].tool_calls", "Invalid parameter: Duplicate value for "
                                         f"'tool_call_id' of {call_id} in message[{i}]."))
                seen.add(call_id)
            open_ids = list(dict.fromkeys(turn.calls))
    if complete and open_ids:
        out.append(_unanswered(len(turns), open_ids))
    return out


def _unanswered(i: int, open_ids: list[str]) -> Violation:
    return Violation(i, f"messages.[{i}].role", "An assistant message with 'tool_calls' must be followed by tool "
                     "messages responding to each 'tool_call_id'. The following tool_call_ids did not have response "
                     f"messages: {', '.join(open_ids)}")


def message_turns(messages: Iterable[AnyMessage]) -> list[Turn]:
    """LangChain messages as the rules see them (an assistant message sends its invalid calls too)."""
    turns = []
    for m in messages:
        if isinstance(m, AIMessage):
            ids = [c["id"] for c in m.tool_calls] + [c["id"] for c in m.invalid_tool_calls]
            turns.append(Turn("assistant", tuple(i or "" for i in ids)))
        elif isinstance(m, ToolMessage):
            turns.append(Turn("tool", answers=m.tool_call_id))
        else:
            turns.append(Turn(m.type))
    return turns


class ChatProtocolError(RuntimeError):
    """A node built a history no hosted API accepts: a bug in that node."""


def chat_history(left: list[AnyMessage], right: list[AnyMessage] | AnyMessage) -> list[AnyMessage]:
    """`add_messages`, refusing an update that breaks the rules (calls may stay open at the end)."""
    merged = add_messages(left, right)
    broken = violations(message_turns(merged), complete=False)
    if broken:
        raise ChatProtocolError(f"the history breaks the chat protocol at {broken[0].param}: {broken[0].message}")
    return merged
