"""The actor's tool vocabulary: browser actions plus agent tools, as OpenAI tool schemas and back.

Tool names are the `kind` of each model, so an LLM tool call, a walkthrough step and a Python action
are the same thing; validation errors are returned as text the model can correct from.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from browser.types import BROWSER_ACTION_TYPES
from graph.state import Plan
from graph.tools import Derive, DiscardRows, ExtractRows, Finish, ReadFacts, RevisePlan, WebSearch

AGENT_TOOL_TYPES: tuple[type[BaseModel], ...] = (ExtractRows, ReadFacts, Derive, DiscardRows, RevisePlan, Finish)
BROWSER_KINDS = frozenset(t.model_fields["kind"].default for t in BROWSER_ACTION_TYPES)


_FALLBACK_DESCRIPTIONS = {
    "goto": "Open a URL (same allowed origins only).",
    "click": "Click a link, button, tab or option.",
    "fill": "Type a value into a text, search, date or number field.",
    "check": "Tick or untick a checkbox / toggle.",
    "submit": "Submit a form (apply the filters).",
    "press": "Press a key, e.g. Enter in a search field.",
    "scroll": "Scroll the page.",
    "back": "Go back in history (beware: may reset filters).",
    "wait_for": "Wait for text, a selector or network idle.",
    "read_pdf": "Read a PDF's text with page numbers.",
}


class ToolCallError(ValueError):
    """An unknown tool or invalid arguments; the message is shown to the model."""


def _kind(model: type[BaseModel]) -> str:
    return model.model_fields["kind"].default


@lru_cache(maxsize=2)
def _types(search: bool) -> dict[str, type[BaseModel]]:
    types = [*BROWSER_ACTION_TYPES, *AGENT_TOOL_TYPES, *([WebSearch] if search else [])]
    return {_kind(t): t for t in types}


_NOISE_KEYS = frozenset({"title"})  # pydantic's field titles repeat the property names


def _compact(node: Any) -> Any:
    """Optional fields as their plain type (`anyOf [T, null]` -> T, no `default: null`), no titles and no
    `additionalProperties: false` (pydantic still refuses unknown arguments): the same calls validate, and
    every prompt carries far fewer schema tokens."""
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _compact(v) for k, v in node.items()
           if not (k == "default" and v is None) and k not in _NOISE_KEYS
           and not (k == "additionalProperties" and v is False)}
    variants = out.get("anyOf")
    if isinstance(variants, list):
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(variants):
            out.pop("anyOf")
            out = {**non_null[0], **out}
    return out


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    tool = _compact(convert_to_openai_tool(model))
    function = tool["function"]
    function["name"] = _kind(model)
    if not function.get("description"):
        function["description"] = _FALLBACK_DESCRIPTIONS.get(_kind(model), f"Browser action '{_kind(model)}'.")
    params = function.get("parameters", {})
    params.get("properties", {}).pop("kind", None)
    params.get("properties", {}).pop("note", None)  # accepted (walkthroughs explain steps) but not advertised
    if "required" in params:
        params["required"] = [r for r in params["required"] if r != "kind"]
    return tool


def tool_schemas(*, search: bool) -> list[dict[str, Any]]:
    """OpenAI tool definitions for everything the actor may call under this protocol."""
    return _share_nested_docs([_schema(t) for t in _types(search).values()])


def _share_nested_docs(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A nested object schema (the element `Target`) is documented once, at its first use; later copies keep
    their fields and types but point back to it, which saves ~15% of every actor prompt."""
    first_use: dict[str, str] = {}
    for tool in tools:
        name = tool["function"]["name"]
        for prop_name, prop in tool["function"].get("parameters", {}).get("properties", {}).items():
            if prop.get("type") != "object" or "properties" not in prop:
                continue
            shape = json.dumps(prop, sort_keys=True)
            if shape not in first_use:
                first_use[shape] = f"{name}.{prop_name}"
                continue
            prop["description"] = f"As in {first_use[shape]}."
            for field in prop["properties"].values():
                field.pop("description", None)
    return tools


def plan_tool() -> dict[str, Any]:
    tool = convert_to_openai_tool(Plan)
    tool["function"]["name"] = "Plan"
    return tool


def parse_tool_call(name: str, args: dict[str, Any] | None, *, search: bool) -> BaseModel:
    types = _types(search)
    model = types.get(name)
    if model is None:
        raise ToolCallError(f"unknown tool {name!r}; available: {sorted(types)}")
    payload = dict(args or {})
    payload.pop("kind", None)
    try:
        return model.model_validate({**payload, "kind": name})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or name}: {e['msg']}" for e in exc.errors())
        raise ToolCallError(f"invalid arguments for {name}: {problems}") from exc


def parse_plan(args: dict[str, Any] | None) -> Plan:
    try:
        return Plan.model_validate(args or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ToolCallError(f"invalid plan: {problems}") from exc
