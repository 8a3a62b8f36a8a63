"""A fake model for bench cells on the offline sites: each cell gets its own script of tool calls, chosen by the
family of its task's start URL (`/scholar/`, `/stats/`...) and built on the origin the sites are served at."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

FINISH = {"name": "finish", "arguments": {}}
Script = Callable[[str], list[dict[str, Any]]]  # origin -> the cell's tool calls, in order (finish after them)


class ScriptedCells:
    """`FakeOpenAIServer(ScriptedCells({"scholar": calls, ...}))`: a request is answered with its cell's call for
    the step its turn shows (`BUDGET: step N of M`), `finish` once the script is done. `log` keeps (time,
    family, step) per request and `replies` every tool reply a cell was sent, in order."""

    def __init__(self, scripts: dict[str, Script]):
        self.scripts = scripts
        self.log: list[tuple[float, str, int]] = []
        self.replies: dict[str, list[str]] = {}
        self._seen: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        start = re.search(r"START URL: (https?://[^/\s]+)/(\w+)/", text)
        assert start, "the turn names no start URL"
        origin, family = start.group(1), start.group(2)
        step = int(re.findall(r"BUDGET: step (\d+) of", text)[-1])
        with self._lock:
            self.log.append((time.monotonic(), family, step))
            seen = self._seen.setdefault(family, {})
            for message in body["messages"]:
                if message["role"] == "tool" and message["tool_call_id"] not in seen:
                    seen[message["tool_call_id"]] = str(message["content"])
            self.replies[family] = list(seen.values())
        calls = self.scripts[family](origin)
        return {"tool_calls": [calls[step] if step < len(calls) else FINISH]}


def bench_config(base_url: str, task_ids: list[str], out: str, *, wall: int, concurrency: int = 2) -> str:
    """A bench on the offline sites with a fake model at `base_url`, planner and verifier ablated (the scripts
    drive every step)."""
    return (f"models: [{{name: fake, provider: openai, model: m, base_url: '{base_url}', api_key_env: null, "
            "max_retries: 0}]\n"
            f"datasets: [{{suite: offline, splits: [goal], task_ids: [{', '.join(task_ids)}]}}]\n"
            f"protocol: {{budgets: {{wall_seconds: {wall}}}}}\n"
            "agent: {trace: false, variants: [{name: scripted, ablate: [planner, verifier]}]}\n"
            f"run: {{output_dir: '{out}', concurrency: {concurrency}, retries: 0, html_report: false}}\n")
