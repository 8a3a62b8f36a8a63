"""The tasks of a benchmark config: each dataset entry loaded through `tasks.loaders`, de-duplicated,
and cut down to a reproducible sample in demo mode."""

from __future__ import annotations

import random
from pathlib import Path

from agent.config import BenchConfig, ConfigError
from agent.rundir.cells import cell_task_id
from tasks.models import Task


def load_bench_tasks(config: BenchConfig, config_path: Path, offline_origin: str | None,
                     membership: dict[str, int] | None = None) -> list[Task]:
    """`membership`, when given, receives each task's dataset index (the first dataset that selects it)."""
    from tasks.loaders import OFFLINE_SOURCES, load_tasks

    by_id: dict[str, Task] = {}
    for index, dataset in enumerate(config.datasets):
        if dataset.suite in OFFLINE_SOURCES:  # the bundled suite or its held-out set, on the offline sites
            source = dataset.suite
        elif dataset.source:
            source = dataset.source
        else:
            raise ConfigError(f"{config_path}: datasets.{index}.source: suite 'sgrbench' needs a source path or hf:<id>")
        split = "both" if set(dataset.splits) == {"goal", "constraint"} else dataset.splits[0]
        try:
            loaded = load_tasks(
                source, split=split, languages=list(dataset.languages), domains=dataset.domains,
                families=dataset.families, task_ids=dataset.task_ids, origin=offline_origin,
            )
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{config_path}: datasets.{index}: cannot load tasks: {exc}") from exc
        for task in loaded:
            by_id.setdefault(cell_task_id(task), task)  # datasets may overlap: each record runs once
            if membership is not None:
                membership.setdefault(cell_task_id(task), index)
    tasks = [by_id[key] for key in sorted(by_id)]
    if not tasks:
        raise ConfigError(f"{config_path}: datasets: the filters select no task")
    if config.run.demo_mode and len(tasks) > config.run.demo_limit:
        tasks = sorted(random.Random(config.run.seed).sample(tasks, config.run.demo_limit), key=cell_task_id)
    return tasks
