"""Real-model runs as regression cases: each decision path in tests/data/real_model_paths/ (a capable model's
plan and calls on an offline task, minus the steps it spent only on false alarms; provenance in the folder's
README) is replayed through the real `ChatOpenAI` client against the strict fake server, and must show what
its `expect` says: exact match, no verifier refusal, no gate flag, no request the API would reject. A known
false alarm that still breaks an assertion is an expected failure, strict: it flips when the cause is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.replay import ReplayResult, replay_path
from agent.rundir.evidence import read_evidence

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]
CASES = Path(__file__).parent / "data" / "real_model_paths"
PATHS = {p.stem: DecisionPath.load(p) for p in sorted(CASES.glob("*.json")) if "." not in p.stem}  # not *.revised_plan
_REPLAYS: dict[str, tuple[ReplayResult, Path]] = {}


def _params() -> list:
    out = []
    for name, path in PATHS.items():
        for assertion in path.expect.asserts:
            cause = path.expect.known_false_alarms.get(assertion)
            marks = [pytest.mark.xfail(strict=True, reason=cause)] if cause else []
            out.append(pytest.param(name, assertion, id=f"{name}-{assertion}", marks=marks))
    return out


async def _replayed(name: str, server, worker, tmp_path_factory) -> tuple[ReplayResult, Path]:
    """One replay per path, shared by the tests that look at it: its result and its run folder."""
    if name not in _REPLAYS:
        out = tmp_path_factory.mktemp(name)
        _REPLAYS[name] = (await replay_path(PATHS[name], origin=server.origin, worker=worker, out_dir=out), out)
    return _REPLAYS[name]


@pytest.mark.parametrize("name, assertion", _params())
async def test_real_model_path_replays(name, assertion, offline_server, chromium_worker, tmp_path_factory):
    result, _ = await _replayed(name, offline_server, chromium_worker, tmp_path_factory)
    assert result.outcome.error_kind != "bug", result.outcome.traceback
    assert result.check()[assertion], result.summary()


async def test_controls_a_model_set_by_ref_are_tracked_as_set_by_it(offline_server, chromium_worker,
                                                                      tmp_path_factory):
    """The model gives its targets as refs (the replay maps each control it named to the ref the page shows it
    by, as the model saw it): every control it set holds a value the tracker records as the agent's, at the
    step it set it, never as a default kept (so its loss is flagged and a read never says "never set")."""
    result, out = await _replayed("offline_vulns_003", offline_server, chromium_worker, tmp_path_factory)
    evidence = read_evidence(out)
    assert evidence is not None, result.summary()
    set_labels = {s.args["target"]["shown_label"] for s in PATHS["offline_vulns_003"].steps
                  if s.tool in ("fill", "select") and "shown_label" in s.args.get("target", {})}
    held = {}
    for state in evidence.visited:
        for value in state["values"].values():
            if value["label"] in set_labels and value["value"]:
                held.setdefault(value["label"], set()).add(value["set_at_step"] is not None)
    assert set(held) == set_labels and all(True in kinds for kinds in held.values()), held


async def test_real_model_long_raw_run_with_revise_plan_and_discard_rows_is_never_rejected(
        offline_server, chromium_worker, tmp_path):
    """The run as the model played it (58 steps, false alarms and all): every request of it, after each
    revise_plan and discard_rows, is one a hosted API accepts (before the fix: 36 of 323 requests were not).
    With the plan grounded on the site the model's first finish is accepted, so the steps it spent after that
    on false alarms are never asked for: the replay runs up to that finish, past a revise_plan and a
    discard_rows."""
    path = DecisionPath.load(CASES / "raw" / "offline_lifesci_005.json")
    tools = [s.tool for s in path.steps]
    first_finish = tools.index("finish")
    assert "revise_plan" in tools[:first_finish] and "discard_rows" in tools[:first_finish]
    result = await replay_path(path, origin=offline_server.origin, worker=chromium_worker, out_dir=tmp_path)
    assert result.outcome.error_kind != "bug", result.outcome.traceback
    assert result.rejected == [] and result.steps_used >= first_finish + 1, result.summary()


async def test_a_path_replayed_ablated_takes_the_same_calls_and_says_nothing_of_what_is_off(
        offline_server, chromium_worker, tmp_path_factory):
    """`sgr path replay --ablate` (benchmarks/bench_overhead.py compares the two): the same decisions, so the same
    actor calls and answer; the prompt differs only by what the switched-off nodes add, which it never names."""
    from agent.config import AgentVariant

    full, _ = await _replayed("offline_vulns_003", offline_server, chromium_worker, tmp_path_factory)
    out = tmp_path_factory.mktemp("offline_vulns_003-ablated")
    ablated = await replay_path(PATHS["offline_vulns_003"], origin=offline_server.origin, worker=chromium_worker,
                                out_dir=out, variant=AgentVariant(name="no-state_tracker-verifier",
                                                                  ablate=["state_tracker", "verifier"]))
    assert ablated.check() == full.check() == dict.fromkeys(full.check(), True), ablated.summary()
    assert ablated.cost.actor_calls == full.cost.actor_calls == ablated.steps_total
    assert 0 < ablated.cost.prompt_tokens < full.cost.prompt_tokens
    assert 0 < ablated.cost.chars_4 < full.cost.chars_4
    sent = (out / "transcript.jsonl").read_text()
    assert not any(words in sent for words in ("RETRIEVAL STATE", "PLAN ON THIS PAGE", "DRIFT FLAGS", "REPAIR GOAL"))
