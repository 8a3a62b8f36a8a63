"""Turn a real-model run folder into a regression case: its transcript (origin replaced by a placeholder)
and what the agent did with it (the actor's decisions, counters, stop reason, answer).

  .venv/bin/python scripts/save_transcript_case.py runs/offline_regulatory_001/local/full NAME --max-steps N --context-tokens N

writes tests/data/transcripts/NAME.jsonl and NAME.expected.json; tests/test_transcript_regressions.py replays
every case through the fake OpenAI server and checks the agent still does the same.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from graph.events import ActorEvent, read_events

PLACEHOLDER = "http://sgr-offline.local"
CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "transcripts"


def actor_decisions(steps: Path) -> list[str]:
    """One entry per actor event: the tool run, 'invalid', or 'stop:<reason>'."""
    out = []
    for event in read_events(steps)[0]:
        if isinstance(event, ActorEvent):
            out.append(event.tool or ("invalid" if event.invalid is not None else f"stop:{event.stop or 'error'}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("name")
    parser.add_argument("--max-steps", type=int, required=True, help="the step budget the run had")
    parser.add_argument("--context-tokens", type=int, required=True, help="the model's context_tokens in the run")
    args = parser.parse_args()
    transcript = (args.run / "transcript.jsonl").read_text(encoding="utf-8")
    origins = set(re.findall(r"http://127\.0\.0\.1:\d+", transcript))
    outcome = json.loads((args.run / "outcome.json").read_text(encoding="utf-8"))
    fingerprint = json.loads((args.run / "fingerprint.json").read_text(encoding="utf-8"))
    for origin in origins:
        transcript = transcript.replace(origin, PLACEHOLDER)
    CASES.mkdir(parents=True, exist_ok=True)
    (CASES / f"{args.name}.jsonl").write_text(transcript, encoding="utf-8")
    expected = {"task_id": outcome["task_id"], "max_steps": args.max_steps,
                "context_tokens": args.context_tokens, "ablate": outcome.get("ablated", []),
                "actor": actor_decisions(args.run / "steps.jsonl"), "stop_reason": outcome["stop_reason"],
                "invalid_calls": outcome.get("invalid_calls", 0), "context_trims": outcome.get("context_trims", 0),
                "answer": outcome["answer"],
                # the window (and so context_trims) depends on prompt and tool-schema sizes: the test checks the
                # trim count only while these are unchanged since the recording
                "recorded_with": {k: fingerprint["code"][k] for k in ("prompts", "tools")}}
    for origin in origins:
        expected["answer"] = expected["answer"].replace(origin, PLACEHOLDER)
    (CASES / f"{args.name}.expected.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")
    print(f"saved {args.name}: {len(transcript.splitlines())} calls, actor {expected['actor']}")


if __name__ == "__main__":
    main()
