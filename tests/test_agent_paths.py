"""Runs become decision paths (`sgr path record`): the model's own calls from the wire, targets by ref as
the page showed them, the origin as {origin}. Checked on a real-model relay run (resp-N.json + steps.jsonl,
tests/data/relay_runs/, from ../shared/real_model_runs/) against the path the relay's own tool made from the
full requests; played runs (with the shown targets the actor logs) are checked in test_agent_play.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.record import RunFolderError, path_from_run

RUN = Path(__file__).parent / "data" / "relay_runs" / "offline_vulns_003"


def test_a_relay_run_becomes_the_path_the_model_took():
    path = path_from_run(RUN / "requests")
    raw = DecisionPath.model_validate(json.loads((RUN / "raw_path.json").read_text()))
    assert path.task == raw.task and path.plan == raw.plan and len(path.steps) == len(raw.steps)
    differ = [(mine, theirs) for mine, theirs in zip(path.steps, raw.steps, strict=True) if mine != theirs]
    # fill/select targets come back as the label the page showed; a submit by ref names no label in this
    # old run's record (the actor now logs what each ref showed), so it stays a ref and is listed
    assert [(m.tool, m.args) for m, _ in differ] == [("submit", {"target": {"ref": "e58"}})]
    assert path.unmapped == ["request 8 (submit): target ref e58"]
    assert path.steps[2].args == {"target": {"shown_label": "Severity"}, "option": "MEDIUM"}
    assert "{origin}/vulns/search" in path.plan["source"]


def test_not_a_run_folder_is_one_line_error(tmp_path):
    with pytest.raises(RunFolderError, match="neither transcript.jsonl nor resp-N.json"):
        path_from_run(tmp_path)
    result = CliRunner().invoke(app, ["path", "record", str(tmp_path)])
    assert result.exit_code == 2 and "neither transcript.jsonl nor resp-N.json" in result.output


def test_the_record_command_writes_a_loadable_path(tmp_path):
    out = tmp_path / "path.json"
    result = CliRunner().invoke(app, ["path", "record", str(RUN / "requests"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert DecisionPath.load(out).steps[0].args == {"url": "{origin}/vulns/search"}
    assert "kept as a ref" in result.output and "e58" in result.output


# Issue 40, reliability item 5: `sgr path record/replay` read without a cap (10 GB RSS on /dev/zero), gave a
# traceback for an unknown task id or a malformed run folder, and put the task id unchecked into a temp folder.

def test_path_reads_are_capped_and_refuse_what_is_not_a_file(tmp_path):
    for args in (["replay", "/dev/zero"], ["record", "/dev/zero"]):
        result = CliRunner().invoke(app, ["path", *args])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1
    big = tmp_path / "big.json"
    with big.open("wb") as handle:  # sparse: 17 MB without writing them
        handle.truncate(17 * 2**20)
    result = CliRunner().invoke(app, ["path", "replay", str(big)])
    assert result.exit_code == 2 and "over the cap" in result.output
    run = tmp_path / "run"
    run.mkdir()
    (run / "transcript.jsonl").symlink_to("/dev/zero")
    result = CliRunner().invoke(app, ["path", "record", str(run)])
    assert result.exit_code == 2 and "symbolic link" in result.output


@pytest.mark.parametrize(("files", "said"), [
    ({"resp-1.json": "[1, 2]"}, "not an answer"),
    ({"resp-1.json": '{"tool": ["goto"]}'}, "has no name"),
    ({"resp-1.json": "[" * 5000 + "]" * 5000}, "nested deeper"),
    ({"transcript.jsonl": '{"status": 200, "response": {"choices": []}, "call": 1}\n'}, "not a transcript line"),
    ({"transcript.jsonl": "{not json\n"}, "not JSON"),
    ({"resp-1.json": '{"tool": "goto", "args": {}}', "steps.jsonl": "[1]\n"}, "steps.jsonl: line 1"),
])
def test_a_malformed_run_folder_is_one_line(tmp_path, files, said):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = CliRunner().invoke(app, ["path", "record", str(tmp_path)])
    assert result.exit_code == 2 and said in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_an_unknown_task_id_is_one_line_before_anything_starts(tmp_path):
    path = tmp_path / "path.json"
    path.write_text(json.dumps({"task": "offline_nope_001", "steps": []}))
    result = CliRunner().invoke(app, ["path", "replay", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "unknown task id(s)" in result.output and "offline_nope_001" in result.output
    assert not (tmp_path / "out").exists()


def test_a_temp_folder_stays_in_the_temp_dir_whatever_the_task_id():
    import shutil
    import tempfile

    from agent.commands.paths import temp_folder

    for task in ("../../../../tmp/escape", "/etc/passwd", "..", "a b/c\nd", ""):
        folder = temp_folder("replay", task)
        try:
            assert folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith("replay-")
            assert "/" not in folder.name and ".." not in folder.name
        finally:
            shutil.rmtree(folder)


def test_an_unknown_ablated_node_is_one_line_before_anything_starts(tmp_path):
    path = Path(__file__).parent / "data" / "real_model_paths" / "offline_vulns_003.json"
    result = CliRunner().invoke(app, ["path", "replay", str(path), "--ablate", "state_traker",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "unknown node 'state_traker'; did you mean state_tracker?" in result.output
    assert not (tmp_path / "out").exists()


def test_a_replay_counts_the_prompt_of_every_request_and_the_actor_calls():
    """The planner's request is counted in the tokens, not as an actor call; tool schemas and tool calls count."""
    from agent.measuring.paths.replay import RequestCost, request_tokens
    from browser.tokens import count_tokens

    tools = [{"type": "function", "function": {"name": "goto", "parameters": {"type": "object"}}}]
    plan = {"messages": [{"role": "system", "content": "plan it"}], "tools": tools,
            "tool_choice": {"type": "function", "function": {"name": "Plan"}}}
    call = {"id": "c1", "type": "function", "function": {"name": "goto", "arguments": '{"url": "http://x"}'}}
    actor = {"messages": [{"role": "system", "content": "act"}, {"role": "assistant", "content": None,
                                                                 "tool_calls": [call]},
                          {"role": "tool", "tool_call_id": "c1", "content": "went"}], "tools": tools}
    assert request_tokens(actor) == (3 * 4 + count_tokens("act") + count_tokens('goto{"url": "http://x"}')
                                     + count_tokens("went") + count_tokens(json.dumps(tools, separators=(",", ":"))))
    cost = RequestCost.of([plan, actor, actor])
    assert (cost.actor_calls, cost.actor_prompt_tokens) == (2, 2 * request_tokens(actor))
    assert cost.prompt_tokens == request_tokens(plan) + 2 * request_tokens(actor)
    assert cost.chars_4 == len(json.dumps(plan["messages"])) // 4 + 2 * (len(json.dumps(actor["messages"])) // 4)
