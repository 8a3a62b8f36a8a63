"""Real local-model runs replayed through the fake OpenAI server: the agent must still do the same with what
the model said (the same actor decisions, counters, stop reason and answer).

Each case in tests/data/transcripts/ was recorded by `sgr run --model local` and saved with
`scripts/save_transcript_case.py`; the offline origin is a placeholder swapped for this session's server.
Only the model's replies are replayed, so rewording a prompt does not break a case; the context-trim count,
which depends on prompt sizes, is checked while the prompts and tool schemas are the recorded ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import AgentVariant, Budgets, ProtocolConfig
from agent.measuring.fake_server import FakeOpenAIServer
from agent.rundir.manifest import code_fingerprint
from agent.solve import solve_task
from tasks.loaders import load_tasks

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]
CASES = Path(__file__).parent / "data" / "transcripts"
PLACEHOLDER = "http://sgr-offline.local"
NAMES = sorted(p.name.removesuffix(".expected.json") for p in CASES.glob("*.expected.json"))


def decisions(steps: Path) -> list[str]:
    out = []
    for event in map(json.loads, steps.read_text().splitlines()):
        if event.get("node") == "actor":
            out.append(event.get("tool") or ("invalid" if "invalid" in event else f"stop:{event.get('stop', 'error')}"))
    return out


@pytest.mark.parametrize("name", NAMES)
async def test_replayed_local_model_run_gives_the_same_decisions(name, offline_server, chromium_worker, tmp_path):
    expected = json.loads((CASES / f"{name}.expected.json").read_text())
    replies = [json.loads(line.replace(PLACEHOLDER, offline_server.origin))
               for line in (CASES / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    responses = [r["response"] if r["status"] == 200 else {"status": r["status"], "error": r["response"]} for r in replies]
    task = load_tasks("offline", origin=offline_server.origin, task_ids=[expected["task_id"]])[0]
    protocol = ProtocolConfig(budgets=Budgets(max_steps=expected["max_steps"], wall_seconds=900))
    with FakeOpenAIServer(responses, model="smollm2-135m-instruct") as fake:
        model = fake.model_config(name="local", context_tokens=expected.get("context_tokens", 8192))
        async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
            variant = AgentVariant(name="recorded", ablate=expected.get("ablate", []))
            outcome = await solve_task(task, browser=browser, model=model, variant=variant,
                                       protocol=protocol, out_dir=tmp_path)
    assert len(fake.requests) == len(replies)  # every recorded reply was asked for, no more
    assert decisions(tmp_path / "steps.jsonl") == expected["actor"]
    assert (outcome.stop_reason, outcome.invalid_calls) == (expected["stop_reason"], expected["invalid_calls"])
    recorded_with = expected.get("recorded_with")
    if recorded_with is None or recorded_with == {k: code_fingerprint()[k] for k in ("prompts", "tools")}:
        # trims depend on how long the prompts are: checked while prompts and tool schemas are the recorded ones
        assert outcome.context_trims == expected["context_trims"]
    assert outcome.answer.replace(offline_server.origin, PLACEHOLDER) == expected["answer"]
    assert outcome.error_kind != "bug", outcome.traceback
