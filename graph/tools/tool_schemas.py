"""The actor's tool vocabulary: browser actions plus agent tools, as OpenAI tool schemas and back.

Tool names are the `kind` of each model, so an LLM tool call, a walkthrough step and a Python action
are the same thing; validation errors are returned as text the model can correct from.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from typing import Any, get_args

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from browser.types import SETTER_KINDS, Target
from graph.plan.values import gate_key
from graph.state import GateKind, Plan
from graph.tools.tool_specs import TOOL_SPECS, tool_model

# A browser tool's one line for the model is in graph/tools/tool_specs.py (browser/types.py documents them for Python
# callers; a prompt pays for every word on every call). A field is documented only where its name and type do
# not say enough; defaults and numeric bounds are not advertised (validation still applies them).
TARGET_DOC = "ref (e.g. 'e12'), or label / text / CSS selector; frame: an iframe's name"
SELF_EVIDENT = {"Text of the section's heading.", "Only links whose text or address contains this.",
                "Only options whose label contains this (any case).", "only rows extracted at this step"}
UNADVERTISED = {"max_rows", "max_pages", "max_chars", "timeout_ms", "pixels", "offset", "limit"}  # limits: defaults serve
TARGET_FIELDS = ("target", "start_target", "end_target")
PLAN_DOC = ("The new plan: source, gates [{kind, name, target: {value}|{any_of,together}|{checked}|{from,to}|{unknown}, "
            "required}], read, row_criteria, all_pages, detail_pages, stopping_rule, phases [{read, into, gates, "
            "detail_pages}], derivation.")
_NOISE_KEYS = frozenset({"title", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
# pydantic's field titles repeat the property names; defaults and bounds are applied by validation


class ToolCallError(ValueError):
    """An unknown tool or invalid arguments; the message is shown to the model."""


def _kind(model: type[BaseModel]) -> str:
    return model.model_fields["kind"].default


@lru_cache(maxsize=2)
def _types(search: bool) -> dict[str, type[BaseModel]]:
    """The actor's tools in the table's order (the order of the prompt's tool list)."""
    return {kind: tool_model(kind) for kind, spec in TOOL_SPECS.items()
            if spec.node is not None and (search or not spec.search_only)}


def _compact(node: Any) -> Any:
    """Optional fields as their plain type (`anyOf [T, null]` -> T), no titles, defaults, bounds or
    `additionalProperties: false` (pydantic still applies and refuses them): the same calls validate, and
    every prompt carries far fewer schema tokens."""
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _compact(v) for k, v in node.items()
           if k not in _NOISE_KEYS and not (k == "additionalProperties" and v is False)}
    variants = out.get("anyOf")
    if isinstance(variants, list):
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(variants):
            out.pop("anyOf")
            out = {**non_null[0], **out}
        elif len(non_null) < len(variants):
            out["anyOf"] = non_null
        if [v.get("type") for v in out.get("anyOf", [])] == ["string", "array"]:  # one or a list: the list says both
            out = {**out.pop("anyOf")[1], **out}
    if out.get("type") == "object" and out.get("additionalProperties") == {"type": "string"}:
        out.pop("additionalProperties")  # name -> text maps: their description says so
    return out


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    tool = _compact(convert_to_openai_tool(model))
    function = tool["function"]
    name = function["name"] = _kind(model)
    function["description"] = TOOL_SPECS[name].doc or " ".join((function.get("description") or name).split())
    params = function.get("parameters", {})
    properties = params.get("properties", {})
    properties.pop("kind", None)
    properties.pop("note", None)  # accepted (walkthroughs explain steps) but not advertised
    for field in UNADVERTISED & set(properties):
        properties.pop(field)
    if name == "read_table":  # "Read table N" says it
        properties["table"].pop("description", None)
    for prop in properties.values():  # a field its name says (heading, contains) needs no words
        if prop.get("description") in SELF_EVIDENT:
            prop.pop("description")
    if name == "set_url_params":
        properties["params"] = {"type": "object", "description": "name -> value (or list of values)"}
    for field in TARGET_FIELDS:  # the element: its keys as bare types, documented once
        if field in properties:
            keys = properties[field].get("properties", {})
            properties[field] = {"description": TARGET_DOC, "properties": {k: {"type": "string"} for k in keys},
                                 "type": "object"}
    if name == "revise_plan":  # validated against Plan on parse; its full schema would cost ~400 tokens a call
        properties["plan"] = {"type": "object", "description": PLAN_DOC}
    if "required" in params:
        params["required"] = [r for r in params["required"] if r != "kind"]
    return tool


REPAIR_ONLY = {"finish": ("skip", "dispute")}  # fields that answer a refusal: in the schema only while one stands


def tool_schemas(*, search: bool, names: set[str] | frozenset[str] | None = None,
                 repair: bool = False) -> list[dict[str, Any]]:
    """OpenAI tool definitions for what the actor may call under this protocol (only `names` when given),
    nested shapes documented once per list. `repair`: a refusal stands, so finish's `skip` (a listed result left
    out on purpose) and `dispute` (the refusal is wrong) are in its schema, as the repair goal says; otherwise they
    are accepted but not advertised (a played model was told of them by a refusal and found them in no schema)."""
    tools = [copy.deepcopy(t) for t in _all_schemas(search) if names is None or t["function"]["name"] in names]
    if not repair:
        for tool in tools:
            for field in REPAIR_ONLY.get(tool["function"]["name"], ()):
                tool["function"]["parameters"].get("properties", {}).pop(field, None)
    return _share_nested_docs(tools)


@lru_cache(maxsize=2)
def _all_schemas(search: bool) -> tuple[dict[str, Any], ...]:
    return tuple(_schema(t) for t in _types(search).values())


def _share_nested_docs(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A nested object schema (the element target) is spelled out once, at its first use in this list; later
    copies are a bare object pointing back to it, which saves ~40 tokens per copy on every actor call."""
    first_use: dict[str, str] = {}
    for tool in tools:
        name = tool["function"]["name"]
        properties = tool["function"].get("parameters", {}).get("properties", {})
        for prop_name, prop in list(properties.items()):
            if prop.get("type") != "object" or "properties" not in prop:
                continue
            shape = json.dumps(prop["properties"], sort_keys=True)
            if shape not in first_use:
                first_use[shape] = f"{name}.{prop_name}"
                continue
            properties[prop_name] = {"type": "object", "description": f"As {first_use[shape]}."}
    return tools


def plan_tool() -> dict[str, Any]:
    """The planner's one tool: the Plan model's schema, compacted as the actor's are (the same calls validate)."""
    tool = _compact(convert_to_openai_tool(Plan))
    tool["function"]["name"] = "Plan"
    phase = tool["function"]["parameters"]["properties"]["phases"]["items"]["properties"]
    phase["gates"] = {"type": "array", "items": {"type": "object"}, "description": "As gates."}  # spelled out once
    return tool


def _wrapped_target(model: type[BaseModel], payload: dict[str, Any]) -> dict[str, Any]:
    """`{"ref": "e2"}` for `{"target": {"ref": "e2"}}`: models (played ones among them) drop the wrapper the turn's
    refs do not show; the fields the action's target takes are moved into it, none of the action's own."""
    target = model.model_fields.get("target")
    if target is None or "target" in payload:
        return payload
    own = set(model.model_fields)
    moved = {k: payload[k] for k in Target.model_fields if k in payload and k not in own}
    if not moved:
        return payload
    return {**{k: v for k, v in payload.items() if k not in moved}, "target": moved}


def parse_tool_call(name: str, args: dict[str, Any] | None, *, search: bool) -> BaseModel:
    types = _types(search)
    model = types.get(name)
    if model is None:
        raise ToolCallError(f"unknown tool {name!r}; available: {sorted(types)}")
    payload = _wrapped_target(model, dict(args or {}))
    payload.pop("kind", None)
    try:
        return model.model_validate({**payload, "kind": name})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or name}: {e['msg']}" for e in exc.errors())
        raise ToolCallError(f"invalid arguments for {name}: {problems}") from exc


GATE_FIELD = "gate"  # a setter's optional field: the plan gate this action sets (graph/plan/binding.py)
GATE_DOC = "plan gate it sets"


def with_gate_field(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The setters' optional `gate` field, offered while a plan gate is unbound: documented at its first use, a
    bare string after (a few tokens a setter)."""
    documented = False
    for tool in tools:
        if tool["function"]["name"] in SETTER_KINDS:
            props = tool["function"].setdefault("parameters", {}).setdefault("properties", {})
            props[GATE_FIELD] = {"type": "string"} if documented else {"type": "string", "description": GATE_DOC}
            documented = True
    return tools


def _gate_spellings(text: str) -> set[str]:
    """The gate names a `gate` field may mean: as written, and as the turn shows a gate (`search Title = census`:
    its kind, its name, its target), so a model that copies the turn's line names the gate it sees."""
    head = text.split("=", 1)[0].strip()
    words = head.split(maxsplit=1)
    spellings = {text, head, *([words[1]] if len(words) == 2 and words[0].casefold() in get_args(GateKind) else [])}
    return {gate_key(s) for s in spellings if s.strip()}


def split_gate(name: str, args: dict[str, Any] | None, gate_names: list[str] | None) -> tuple[dict[str, Any], str | None]:
    """A setter's arguments without its `gate` field, and the field, checked against the plan's gate names
    (`gate_names`; None: no plan, the field is dropped). An unknown name is an error the model corrects."""
    payload = dict(args or {})
    gate = payload.pop(GATE_FIELD, None) if name in SETTER_KINDS else None
    if not gate or gate_names is None:
        return payload, None
    match = [n for n in gate_names if gate_key(n) in _gate_spellings(str(gate))]
    if not match:
        raise ToolCallError(f"gate {gate!r} is no gate of the plan; its gates: {', '.join(dict.fromkeys(gate_names))}")
    return payload, match[0]


def parse_plan(args: dict[str, Any] | None) -> Plan:
    try:
        return Plan.model_validate(args or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ToolCallError(f"invalid plan: {problems}") from exc
