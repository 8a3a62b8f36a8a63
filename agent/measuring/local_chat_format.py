"""One tool call per turn in ChatML for llama.cpp's server: the chat format `sgr-chatml-tools`.

Why not llama-cpp-python's `chatml-function-calling` (measured with SmolLM2-135M, docs/local_model.md): with
`tool_choice: auto` its sub-completions pass `max_tokens=None`, so the request's cap is ignored and a small
model can write until the 8k context is full; after each call it asks the model for *another* call (one more
completion, and a loop while the model keeps choosing tools); the prompt lists only each tool's parameter
schema, never its description; a prose reply is constrained to a tool name; and the reported prompt tokens
are the sum over its sub-completions. This format renders the same ChatML with each tool's description and
compact schema, then makes at most two completions, both capped at the request's `max_tokens`: which tool
(or a message) under a one-line grammar, then that tool's arguments under its JSON-schema grammar (or the
message as free text). llama.cpp reuses the cached prefix between them and between requests.

Run the server with it: `python -m agent.measuring.local_chat_format <llama_cpp.server arguments>` registers the
format, then hands over to `llama_cpp.server`'s own entry point.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

FORMAT_NAME = "sgr-chatml-tools"
DEFAULT_MAX_TOKENS = 320  # when a request names none: a tool call or a short message fits
# The served model name and the sampling settings of the request, handed to every completion (llama.cpp's server sends repeat_penalty 1.1 by
# default; without it SmolLM2 repeats a URL path segment until the token cap - measured).
_SAMPLING = ("model", "top_p", "top_k", "min_p", "typical_p", "repeat_penalty", "presence_penalty", "frequency_penalty",
             "seed", "tfs_z", "mirostat_mode", "mirostat_tau", "mirostat_eta", "logits_processor")
_INSTRUCTIONS = ("\n\nReply with exactly one function call: the line 'functions.<name>:' then its JSON arguments "
                 "on the next line. Or reply in words: the line 'message:' then the text.")


def _text(content: Any) -> str:
    """OpenAI content: a string, None, or a list of parts (only text parts are read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _tool_listing(tools: list[dict]) -> str:
    lines = ["\n\nFunctions:"]
    for tool in tools:
        function = tool["function"]
        lines.append(f"functions.{function['name']}: {function.get('description', '').strip()}")
        lines.append(json.dumps(function.get("parameters") or {}, separators=(",", ":")))
    return "\n".join(lines) + _INSTRUCTIONS


def render_prompt(messages: list[dict], tools: list[dict]) -> str:
    """ChatML (SmolLM2's format) with the tools appended to the first system message (or a system message
    of their own), earlier tool calls written the way the model is asked to write them."""
    listing = _tool_listing(tools) if tools else ""
    parts: list[str] = []
    if listing and (not messages or messages[0].get("role") != "system"):
        parts.append(f"<|im_start|>system\n{listing.strip()}<|im_end|>\n")
        listing = ""
    for message in messages:
        role, text = message.get("role", "user"), _text(message.get("content"))
        if role == "system" and listing:
            text, listing = text + listing, ""
        elif role == "assistant" and tools:
            calls = [f"functions.{c['function']['name']}:\n{c['function'].get('arguments') or '{}'}"
                     for c in message.get("tool_calls") or []]
            text = "\n".join(([f"message:\n{text}"] if text.strip() else []) + calls)
        parts.append(f"<|im_start|>{role}\n{text}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def _choice_grammar(names: list[str], allow_message: bool) -> str:
    options = [json.dumps(f"functions.{name}:") for name in names] + (['"message:"'] if allow_message else [])
    return "root ::= " + " | ".join(options) + "\n"


def _chosen_tool(tools: list[dict], tool_choice: Any) -> str | None:
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        if name not in {t["function"]["name"] for t in tools}:
            raise ValueError(f"tool_choice names {name!r}, which is not among the tools")
        return name
    return None


def handle_chat(llama: Any, messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None,
                max_tokens: int | None = None, temperature: float = 0.0, stream: bool = False,
                **kwargs: Any) -> dict:
    """The llama-cpp-python chat handler (the keyword arguments `Llama.create_chat_completion` passes)."""
    from llama_cpp import llama_grammar

    if stream:
        raise ValueError(f"{FORMAT_NAME} does not stream; send stream: false")
    cap = max_tokens if max_tokens and max_tokens > 0 else DEFAULT_MAX_TOKENS
    tools = [t for t in tools or [] if t.get("type", "function") == "function"]
    use_tools = bool(tools) and tool_choice != "none"
    prompt = render_prompt(messages, tools if use_tools else [])
    completions: list[dict] = []
    sampling = {key: kwargs[key] for key in _SAMPLING if kwargs.get(key) is not None}

    def complete(text: str, grammar: str | None, limit: int, stop: list[str]) -> str:
        compiled = None
        if grammar is not None:
            compiled = llama_grammar.LlamaGrammar.from_string(grammar, verbose=False)
        completion = llama.create_completion(prompt=text, max_tokens=limit, temperature=temperature, stop=stop,
                                             grammar=compiled, **sampling)
        completions.append(completion)
        return completion["choices"][0]["text"]

    name = _chosen_tool(tools, tool_choice) if use_tools else None
    if use_tools and name is None:
        names = [t["function"]["name"] for t in tools]
        choice = complete(prompt, _choice_grammar(names, allow_message=tool_choice != "required"),
                          limit=max(len(n) for n in names) + 8, stop=[])
        name = choice.strip().removeprefix("functions.").removesuffix(":") if choice.startswith("functions.") else None
    if name is not None:
        parameters = next(t["function"].get("parameters") or {} for t in tools if t["function"]["name"] == name)
        try:
            grammar = llama_grammar.json_schema_to_gbnf(json.dumps(parameters))
        except Exception:  # noqa: BLE001 - a schema the converter cannot express: any JSON object
            grammar = llama_grammar.JSON_GBNF
        arguments = complete(prompt + f"functions.{name}:\n", grammar, cap, stop=["<|im_end|>"])
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
             "function": {"name": name, "arguments": arguments}}]}
        finish = "tool_calls"
    else:
        text = complete(prompt + ("message:\n" if use_tools else ""), None, cap, stop=["<|im_end|>"])
        message = {"role": "assistant", "content": text}
        finish = completions[-1]["choices"][0]["finish_reason"] or "stop"
    if completions[-1]["choices"][0]["finish_reason"] == "length":
        finish = "length"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
        "model": completions[-1]["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": completions[0]["usage"]["prompt_tokens"],  # the prompt, counted once
                  "completion_tokens": sum(c["usage"]["completion_tokens"] for c in completions),
                  "total_tokens": completions[0]["usage"]["prompt_tokens"]
                  + sum(c["usage"]["completion_tokens"] for c in completions)},
    }


def register() -> None:
    """Make `--chat_format sgr-chatml-tools` known to llama-cpp-python in this process."""
    from llama_cpp import llama_chat_format

    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(FORMAT_NAME, handle_chat, overwrite=True)


if __name__ == "__main__":
    register()
    from llama_cpp.server.__main__ import main

    main()
