"""The local server's chat format `sgr-chatml-tools`: what the model is shown (pure rendering, no model) and,
where llama-cpp-python is installed, the grammars it compiles."""

from __future__ import annotations

import importlib.util
import json

import pytest

from agent.measuring.local_chat_format import _choice_grammar, render_prompt

GOTO = {"type": "function", "function": {"name": "goto", "description": "Open a URL.",
                                         "parameters": {"type": "object", "properties": {"url": {"type": "string"}},
                                                        "required": ["url"]}}}
CLICK = {"type": "function", "function": {"name": "click", "description": "Click an element by ref.",
                                          "parameters": {"type": "object", "properties": {"ref": {"type": "string"}}}}}


def test_tools_are_listed_with_description_and_compact_schema_in_the_system_message():
    prompt = render_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Go."}],
                           [GOTO, CLICK])
    system, user, tail = prompt.split("<|im_end|>\n")
    assert system.startswith("<|im_start|>system\nBe brief.\n\nFunctions:\n")
    assert "functions.goto: Open a URL.\n" + json.dumps(GOTO["function"]["parameters"], separators=(",", ":")) in system
    assert "functions.click: Click an element by ref." in system and "exactly one function call" in system
    assert user == "<|im_start|>user\nGo." and tail == "<|im_start|>assistant\n"


def test_history_shows_earlier_calls_as_the_model_is_asked_to_write_them():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text", "text": "U"}]},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "goto", "arguments": '{"url":"/a"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "assistant", "content": "I am done."}]
    prompt = render_prompt(messages, [GOTO])
    assert "<|im_start|>user\nU<|im_end|>" in prompt
    assert '<|im_start|>assistant\nfunctions.goto:\n{"url":"/a"}<|im_end|>' in prompt
    assert "<|im_start|>tool\nok<|im_end|>" in prompt
    assert "<|im_start|>assistant\nmessage:\nI am done.<|im_end|>" in prompt


def test_without_tools_the_prompt_is_plain_chatml():
    prompt = render_prompt([{"role": "user", "content": "Hi"}], [])
    assert prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_tools_without_a_system_message_get_one():
    prompt = render_prompt([{"role": "user", "content": "Hi"}], [GOTO])
    assert prompt.startswith("<|im_start|>system\nFunctions:\nfunctions.goto: Open a URL.")


def test_the_choice_grammar_names_each_tool_and_the_message_only_when_allowed():
    assert _choice_grammar(["goto", "click"], allow_message=True) == \
        'root ::= "functions.goto:" | "functions.click:" | "message:"\n'
    assert "message" not in _choice_grammar(["goto"], allow_message=False)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python (extra `local`) absent")
def test_the_grammars_compile_in_llama_cpp():
    from llama_cpp import llama_grammar

    llama_grammar.LlamaGrammar.from_string(_choice_grammar(["goto", "click"], allow_message=True), verbose=False)
    gbnf = llama_grammar.json_schema_to_gbnf(json.dumps(GOTO["function"]["parameters"]))
    llama_grammar.LlamaGrammar.from_string(gbnf, verbose=False)
