"""What the state tracker and verifier cost in prompt tokens, on real decision paths (issue 37's target).

Every path in tests/data/real_model_paths/ (a real model's plan and calls) is replayed twice through the real
`ChatOpenAI` client against the strict fake server: by the full agent and by the agent with NODES switched off
(default `state_tracker,verifier`, as `sgr play --ablate`). The decisions are fixed, so the two replays differ
only in what the agent tells the model. Per path and summed it prints:

- `chars/4`: the messages' JSON characters / 4, the estimate `sgr play` reports as prompt tokens (the figure
  played runs are judged by; tool schemas are not in it);
- `cl100k`: the tokens an API would bill (messages and tool schemas, tiktoken cl100k_base);
- the actor calls, and the full agent's overhead over the ablated one in % (target: at most +10% tokens,
  +5% steps, summed over tasks);
- the mean per actor call of each prompt part (system prompt, tool schemas, the turn's state part), full vs
  ablated, from the runs' steps.jsonl (`prompt_parts`), so the part that grew is visible.

A replay that does not reach exact match, or is refused or flagged by the full agent, is marked: its tokens are
not the path's (a refusal adds repair turns).

Run: .venv/bin/python benchmarks/bench_overhead.py [--paths offline_vulns_003,...] [--ablate NODES]
     [--json out.json]   (about 25 s per replay; 14 paths x 2 replays)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from agent.commands.run import make_variant
from agent.config import AgentVariant
from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.replay import replay_path
from browser.session import ChromiumWorker
from graph.events import ActorEvent, read_events
from tasks.offline.server import OfflineServer

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "real_model_paths"
PARTS = ("system", "tools", "history", "state", "observation")


def _parts(out_dir: Path) -> dict[str, float]:
    """Mean tokens per actor call of each prompt part, from the run's steps.jsonl."""
    events, _ = read_events(out_dir / "steps.jsonl")
    parts = [e.prompt_parts for e in events if isinstance(e, ActorEvent) and e.prompt_parts]
    return {k: sum(p.get(k, 0) for p in parts) / len(parts) for k in PARTS} if parts else {}


async def _one(path: DecisionPath, variant: AgentVariant, origin: str, worker: ChromiumWorker,
               root: Path) -> dict[str, Any]:
    out = root / f"{path.task}-{variant.name}"
    result = await replay_path(path, origin=origin, worker=worker, out_dir=out, variant=variant)
    clean = result.check()
    return {**result.summary(), "clean": all(clean.values()), "parts": _parts(out), "out": str(out)}


def _pct(full: float, ablated: float) -> str:
    return f"{100 * (full - ablated) / ablated:+.1f}%" if ablated else "n/a"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="", help="Comma-separated path names (file stems); default: all.")
    parser.add_argument("--ablate", default="state_tracker,verifier")
    parser.add_argument("--json", type=Path, default=None, help="Also write every replay's summary here.")
    args = parser.parse_args()
    names = [n for n in args.paths.split(",") if n]
    files = [p for p in sorted(CASES.glob("*.json")) if "." not in p.stem and (not names or p.stem in names)]
    variants = (AgentVariant(name="full"), make_variant(args.ablate))
    root = Path(tempfile.mkdtemp(prefix="bench-overhead-"))
    rows: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    worker = ChromiumWorker()
    try:
        with OfflineServer() as server:
            for file in files:
                path = DecisionPath.load(file)
                full, ablated = [await _one(path, v, server.origin, worker, root) for v in variants]
                rows.append((file.stem, full, ablated))
                print(_row(file.stem, full, ablated), flush=True)
    finally:
        await worker.close()
    total = {k: (sum(f[k] for _, f, _ in rows), sum(a[k] for _, _, a in rows))
             for k in ("prompt_chars_4", "prompt_tokens", "actor_calls")}
    print(f"SUM over {len(rows)} paths: chars/4 {total['prompt_chars_4'][0]} vs {total['prompt_chars_4'][1]} "
          f"({_pct(*total['prompt_chars_4'])}); cl100k {total['prompt_tokens'][0]} vs {total['prompt_tokens'][1]} "
          f"({_pct(*total['prompt_tokens'])}); actor calls {total['actor_calls'][0]} vs {total['actor_calls'][1]} "
          f"({_pct(*total['actor_calls'])})")
    for label, index in (("full", 1), ("ablated", 2)):
        parts = [r[index]["parts"] for r in rows if r[index]["parts"]]
        if parts:
            mean = {k: round(sum(p[k] for p in parts) / len(parts)) for k in PARTS}
            print(f"prompt parts per actor call ({label}, cl100k, mean of paths): {mean}")
    unclean = [name for name, full, _ in rows if not full["clean"]]
    print(f"full-agent replays not clean (exact match, 0 refusals, 0 flags, 0 rejected): {unclean or 'none'}")
    if args.json:
        args.json.write_text(json.dumps([{"path": n, "full": f, "ablated": a} for n, f, a in rows], indent=1),
                             encoding="utf-8")


def _row(name: str, full: dict[str, Any], ablated: dict[str, Any]) -> str:
    mark = "" if full["clean"] else f"  NOT CLEAN: refusals {full['refusals']}, flags {full['flags']}"
    return (f"{name:42} chars/4 {full['prompt_chars_4']:7} vs {ablated['prompt_chars_4']:7} "
            f"({_pct(full['prompt_chars_4'], ablated['prompt_chars_4']):>7})  cl100k {full['prompt_tokens']:7} vs "
            f"{ablated['prompt_tokens']:7} ({_pct(full['prompt_tokens'], ablated['prompt_tokens']):>7})  calls "
            f"{full['actor_calls']:3} vs {ablated['actor_calls']:3}{mark}")


if __name__ == "__main__":
    asyncio.run(main())
