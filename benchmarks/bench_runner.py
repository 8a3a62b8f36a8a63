"""Runner throughput and memory: tasks per minute at concurrency 1, 2 and 4 on the offline suite with
the scripted walkthrough model, and the peak memory of one worker (its Chromium process tree, PSS).
With `--ray`, the same cells also run on the Ray executor (a private local Ray cluster of `--ray-cpus`
CPUs, one cell per CPU) and the table adds its row and its overhead against the local pool at the same
concurrency, both measured in this one invocation (on a shared machine, numbers of two runs do not compare).

    .venv/bin/python benchmarks/bench_runner.py [--config configs/offline.yaml] [--concurrency 1 2 4]
    .venv/bin/python benchmarks/bench_runner.py --concurrency 2 --ray --limit 8 --repeat 2

Prints a table; each concurrency runs in a fresh temporary folder (no resume), keys are unset so the
scripted model runs. Numbers depend on the machine's cores: say which machine when quoting them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agent.config import load_config
from agent.rundir.cells import load_records
from agent.runner.bench import run_bench

ROOT = Path(__file__).resolve().parents[1]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _memory_kb(pid: int) -> int:
    """PSS where the kernel offers it (shared pages split between processes), else RSS."""
    for name, field in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
                if line.startswith(field):
                    return int(line.split()[1])
        except OSError:
            continue
    return 0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _subtree(pid: int, tree: dict[int, list[int]]) -> list[int]:
    out, stack = [], [pid]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(tree.get(current, []))
    return out


class MemorySampler(threading.Thread):
    """Samples every Chromium browser process tree under this process; one tree = one worker."""

    def __init__(self, interval: float = 0.5):
        super().__init__(daemon=True)
        self.interval = interval
        self.peak_worker_kb = 0
        self.peak_total_kb = 0
        self.stop_event = threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self.stop_event.is_set():
            tree = _children()
            browsers = [p for p in _subtree(me, tree)[1:]
                        if "chrom" in _cmdline(p) and "--type=" not in _cmdline(p)]
            per_worker = [sum(_memory_kb(p) for p in _subtree(b, tree)) for b in browsers]
            if per_worker:
                self.peak_worker_kb = max(self.peak_worker_kb, max(per_worker))
                self.peak_total_kb = max(self.peak_total_kb, sum(per_worker))
            self.stop_event.wait(self.interval)


async def measure(config: Path, concurrency: int, limit: int | None = None, executor: str = "local") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"sgr-bench-c{concurrency}-") as tmp:
        sampler = MemorySampler()
        sampler.start()
        started = time.perf_counter()
        result = await run_bench(config, output_dir=Path(tmp), concurrency=concurrency, limit=limit,
                                 console=Console(quiet=True), write_reports=False, executor=executor)
        seconds = time.perf_counter() - started
        sampler.stop_event.set()
        sampler.join()
        records = load_records(result.run_dir)
    return {
        "executor": executor, "concurrency": concurrency, "tasks": len(records), "failed": sum(r.failed for r in records),
        "seconds": seconds, "tasks_per_minute": 60 * len(records) / seconds,
        "item_f1": sum(r.metrics["item_f1"] for r in records) / max(1, len(records)),
        "peak_worker_mb": sampler.peak_worker_kb / 1024, "peak_all_workers_mb": sampler.peak_total_kb / 1024,
    }


def start_ray(cpus: int) -> float:
    """A private local cluster for the Ray rows (the executor joins it); returns its start-up seconds."""
    import ray

    from agent.runner.ray_pool import PRIVATE_CLUSTER

    started = time.perf_counter()
    ray.init(num_cpus=cpus, log_to_driver=False, configure_logging=False, **PRIVATE_CLUSTER)
    return time.perf_counter() - started


def _overhead(rows: list[dict[str, Any]], cpus: int) -> str:
    """Ray's wall time over the local pool's at the same concurrency (both summed over the repeats)."""
    ray_s = sum(r["seconds"] for r in rows if r["executor"] == "ray")
    local_s = sum(r["seconds"] for r in rows if r["executor"] == "local" and r["concurrency"] == cpus)
    return f"{100 * (ray_s / local_s - 1):+.1f}%" if ray_s and local_s else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "offline.yaml")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--limit", type=int, default=None, help="a reproducible sample of N tasks (default: all)")
    parser.add_argument("--ray", action="store_true", help="add the Ray executor's row and its overhead")
    parser.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray cluster (= cells in flight)")
    parser.add_argument("--repeat", type=int, default=1, help="run every row N times, interleaved")
    args = parser.parse_args()
    for model in load_config(args.config).models:
        os.environ.pop(model.api_key_env, None)  # the scripted model: deterministic, no network, no cost
    plan = [("local", c) for c in args.concurrency]
    ray_start = None
    if args.ray:
        if args.ray_cpus not in args.concurrency:
            plan.append(("local", args.ray_cpus))
        plan.append(("ray", args.ray_cpus))
        ray_start = start_ray(args.ray_cpus)
    rows = [asyncio.run(measure(args.config, c, args.limit, executor)) for _ in range(args.repeat) for executor, c in plan]
    title = f"sgr bench throughput ({args.config.name}, scripted model, {os.cpu_count()} cores)"
    if ray_start is not None:
        title += (f"\nRay ({args.ray_cpus} CPUs, cluster start {ray_start:.1f} s, not counted) vs the local pool at "
                  f"concurrency {args.ray_cpus}: wall-time overhead {_overhead(rows, args.ray_cpus)} (target <= 15%)")
    table = Table(title=title)
    for column in ("executor", "concurrency", "tasks", "failed", "wall s", "tasks/min", "mean item-F1",
                   "peak MB / worker", "peak MB all workers"):
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(r["executor"], str(r["concurrency"]), str(r["tasks"]), str(r["failed"]), f"{r['seconds']:.1f}",
                      f"{r['tasks_per_minute']:.1f}", f"{100 * r['item_f1']:.1f}", f"{r['peak_worker_mb']:.0f}",
                      f"{r['peak_all_workers_mb']:.0f}")
    Console(width=140).print(table)
    if ray_start is not None:
        import ray

        ray.shutdown()


if __name__ == "__main__":
    main()
