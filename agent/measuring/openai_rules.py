"""What OpenAI's chat-completions endpoint refuses with HTTP 400, checked on a request body (the wire JSON).

The strict fake server (`fake_server.py`) and the play server (`play_server.py`) answer such a request as a
hosted API does, so a history the agent could not send to OpenAI, DeepSeek or Qwen fails the test or the
played run at the request that breaks it. The tool-call sequencing rules are the graph's own
(`graph.model_io.chat_protocol`, which also guards the history as it is built); the request-level rules are here.
"""

from __future__ import annotations

from typing import Any

from graph.model_io.chat_protocol import Turn, violations

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def wire_turns(messages: list[dict[str, Any]]) -> list[Turn]:
    return [Turn(str(m.get("role")), tuple(str(c.get("id")) for c in m.get("tool_calls") or []),
                 m.get("tool_call_id")) for m in messages]


def request_errors(body: dict[str, Any]) -> list[str]:
    """Each error as OpenAI words it (the first is what a 400 says); empty for a request OpenAI accepts."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["[] is too short - 'messages'"]
    errors = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ROLES:
            errors.append(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', "
                          f"and 'developer'. (param messages.[{i}].role)")
        elif role == "tool" and not m.get("tool_call_id"):
            errors.append(f"Missing required parameter: 'messages.[{i}].tool_call_id'.")
        elif m.get("content") is None and (role != "assistant" or not m.get("tool_calls")):
            errors.append(f"Invalid value for 'content': expected a string, got null. (param messages.[{i}].content)")
    errors += [f"{v.message} (param {v.param})" for v in violations(wire_turns(messages))]
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if len(tools) != len(set(tools)):
        errors.append("Invalid 'tools': duplicate function names.")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in tools:
            errors.append(f"Invalid value for 'tool_choice': function '{name}' not found in 'tools'.")
    elif choice is not None and not tools:
        errors.append("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
    return errors


def error_body(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
