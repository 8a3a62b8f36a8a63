"""Released tasks on SGR-WebEnv: which environment serves which task, whether it answers, and the
per-task live->environment routes the browser uses (`browser.routing`).

A dataset's `webenv: {site: origin}` names environments (`agent.webenv.sites`) or single live origins.
A task runs when its `start_url` is on a mapped live origin whose environment answers; otherwise it is
skipped with the reason (never recorded as failed), so a rerun after starting the environment runs it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from agent.rundir.cells import cell_task_id
from agent.webenv.mapping import MappedSite, mapped_sites
from agent.webenv.sites import DEFAULT_RELEASE, REPOSITORY
from browser.routing import OriginMap, origin_key

if TYPE_CHECKING:
    from agent.config import DatasetConfig
    from tasks.models import Task

VERSION_KEYS = ("release", "version", "application_version", "data_version", "implementation")
CHECK_TIMEOUT_SECONDS = 5.0


# ------------------------------------------------------------------ health and version


@dataclass
class SiteStatus:
    site: MappedSite
    up: bool
    http_status: int | None = None
    version: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"name": self.site.name, "environment": self.site.environment,
                "live_origins": list(self.site.live_origins), "up": self.up, "http_status": self.http_status,
                "version": self.version or None, "error": self.error}


def check_site(site: MappedSite, timeout: float = CHECK_TIMEOUT_SECONDS) -> SiteStatus:
    """GET the environment's health page; record the release/version fields a JSON answer carries."""
    url = site.environment + site.health_path
    started = time.monotonic()
    try:
        response = httpx.get(url, timeout=timeout, follow_redirects=False)
    except httpx.HTTPError as exc:
        return SiteStatus(site, False, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                          seconds=round(time.monotonic() - started, 3))
    seconds = round(time.monotonic() - started, 3)
    version: dict[str, Any] = {}
    if "json" in response.headers.get("content-type", ""):
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            version = {k: body[k] for k in VERSION_KEYS if isinstance(body.get(k), str | int | float)}
    up = response.status_code < 400
    return SiteStatus(site, up, response.status_code, version,
                      None if up else f"{url} answered HTTP {response.status_code}", seconds)


def check_sites(sites: Iterable[MappedSite]) -> list[SiteStatus]:
    unique = {(s.name, s.environment): s for s in sites}
    return [check_site(site) for site in unique.values()]


def status_lines(statuses: list[SiteStatus], release: str) -> list[str]:
    lines = [f"SGR-WebEnv environments (start commands for release {release}; run them in a clone of {REPOSITORY}):"]
    width = max((len(s.site.name) for s in statuses), default=0)
    for status in statuses:
        site = status.site
        if status.up:
            version = ", ".join(f"{k} {v}" for k, v in status.version.items()) or "version not exposed"
            lines.append(f"  {site.name:<{width}}  {site.environment}  UP    HTTP {status.http_status}, "
                         f"{status.seconds:.2f} s, {version}; serves {', '.join(site.live_hosts)}")
        else:
            lines.append(f"  {site.name:<{width}}  {site.environment}  DOWN  {status.error}")
            if site.start_command:
                lines.append(f"  {'':<{width}}    prepare once: {site.prepare_command}")
                lines.append(f"  {'':<{width}}    start:        {site.start_command}")
            else:
                lines.append(f"  {'':<{width}}    start the server behind {site.environment}")
    return lines


# ------------------------------------------------------------------ which tasks run


@dataclass
class SkippedTask:
    task_id: str
    start_url: str | None
    reason: str


@dataclass
class WebEnvPlan:
    release: str
    statuses: list[SiteStatus]
    runnable: list[Task]
    skipped: list[SkippedTask]
    site_of: dict[str, MappedSite]  # task id -> the environment that serves it

    def routes_for(self, task: Task) -> OriginMap | None:
        site = self.site_of.get(cell_task_id(task))
        return site.routes if site else None

    def task_lines(self) -> list[str]:
        lines = [f"tasks on SGR-WebEnv: {len(self.site_of)} will run, {len(self.skipped)} skipped"]
        by_site: dict[str, list[str]] = {}
        for task_id, site in sorted(self.site_of.items()):
            by_site.setdefault(site.name, []).append(task_id)
        lines.extend(f"  run on {name}: {', '.join(ids)}" for name, ids in by_site.items())
        lines.extend(f"  skipped {s.task_id}: {s.reason}" for s in self.skipped)
        return lines

    def manifest_entry(self) -> dict[str, Any]:
        return {"release": self.release, "repository": REPOSITORY,
                "environments": [s.as_json() for s in self.statuses],
                "tasks_run": sorted(self.site_of), "tasks_skipped": [vars(s) for s in self.skipped]}


def plan_tasks(tasks: list[Task], datasets: list[DatasetConfig], dataset_of: Mapping[str, int],
               statuses: list[SiteStatus]) -> WebEnvPlan:
    """Split tasks into those that run (their environment answers) and those skipped, with the reason.
    Tasks of datasets without `webenv` are untouched and run as before."""
    up = {(s.site.name, s.site.environment): s.up for s in statuses}
    runnable: list[Task] = []
    skipped: list[SkippedTask] = []
    site_of: dict[str, MappedSite] = {}
    release = next((d.webenv_release for d in datasets if d.webenv), DEFAULT_RELEASE)
    for task in tasks:
        key = cell_task_id(task)
        dataset = datasets[dataset_of.get(key, 0)]
        if not dataset.webenv:
            runnable.append(task)
            continue
        sites = mapped_sites(dataset.webenv, dataset.webenv_release)
        site = next((s for s in sites if s.serves(task.start_url)), None)
        if site is None:
            where = origin_key(task.start_url) if task.start_url else None
            skipped.append(SkippedTask(key, task.start_url,
                                       f"no SGR-WebEnv environment is mapped for {where or 'a task without start_url'}"
                                       f" (domain {task.domain})"))
        elif not up.get((site.name, site.environment), False):
            skipped.append(SkippedTask(key, task.start_url,
                                       f"environment {site.name} at {site.environment} does not answer "
                                       f"(see `sgr webenv check`)"))
        else:
            runnable.append(task)
            site_of[key] = site
    return WebEnvPlan(release, statuses, runnable, skipped, site_of)


class TaskSkipped(LookupError):
    """The task's site has no environment in the mapping (not a failure: nothing could serve it)."""


class EnvironmentDown(RuntimeError):
    """The task's environment does not answer; the message holds the status and the start command."""


def routes_for_task(entries: Mapping[str, str], release: str, task: Task) -> tuple[MappedSite, SiteStatus]:
    """`sgr run`: the environment serving one task, checked; raises TaskSkipped or EnvironmentDown."""
    site = next((s for s in mapped_sites(entries, release) if s.serves(task.start_url)), None)
    if site is None:
        where = origin_key(task.start_url) if task.start_url else "a task without start_url"
        raise TaskSkipped(f"skipped {task.task_id}: no SGR-WebEnv environment is mapped for {where} "
                          f"(domain {task.domain})")
    status = check_site(site)
    if not status.up:
        raise EnvironmentDown("\n".join(status_lines([status], release)))
    return site, status


def dataset_sites(datasets: list[DatasetConfig]) -> list[MappedSite]:
    return [site for d in datasets if d.webenv for site in mapped_sites(d.webenv, d.webenv_release)]


def prepare_bench(datasets: list[DatasetConfig], tasks: list[Task], dataset_of: Mapping[str, int],
                  echo: Any) -> WebEnvPlan | None:
    """`sgr bench`'s first step when a dataset maps environments: check them, say which tasks will run.
    Returns None when no dataset uses `webenv`; raises ValueError when no task can run at all."""
    sites = dataset_sites(datasets)
    if not sites:
        return None
    statuses = check_sites(sites)
    plan = plan_tasks(tasks, datasets, dataset_of, statuses)
    for line in status_lines(statuses, plan.release) + plan.task_lines():
        echo(line)
    if not plan.runnable:
        raise ValueError("no task can run: every selected task is skipped (reasons above)")
    return plan


def record_in_manifest(manifest: dict[str, Any], plan: WebEnvPlan) -> None:
    """The environments (origins, versions they expose) and the task split, at top level and per session."""
    entry = plan.manifest_entry()
    manifest["webenv"] = entry
    manifest["sessions"][-1]["webenv"] = entry
