"""A dataset's `webenv: {site: origin}` option as mapped sites: which live origins go to which environment.

Kept apart from `environments` (health checks, task planning) so the config can validate the option without
importing what reads the config.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agent.webenv.sites import DEFAULT_RELEASE, SITES
from browser.routing import OriginMap, RoutingError, canonical_origin, origin_key


@dataclass(frozen=True)
class MappedSite:
    """One environment as a dataset maps it: its live origins all go to `environment`."""

    name: str
    title: str
    environment: str
    live_origins: tuple[str, ...]
    health_path: str = "/"
    prepare_command: str | None = None
    start_command: str | None = None

    @property
    def routes(self) -> OriginMap:
        return OriginMap.build(dict.fromkeys(self.live_origins, self.environment))

    @property
    def live_hosts(self) -> list[str]:
        return list(dict.fromkeys(origin.split("://", 1)[1] for origin in self.live_origins))

    def serves(self, url: str | None) -> bool:
        return bool(url) and origin_key(url) in self.live_origins


def mapped_sites(entries: Mapping[str, str], release: str = DEFAULT_RELEASE) -> list[MappedSite]:
    """The sites of one `webenv` option; raises ValueError naming the bad entry."""
    sites: list[MappedSite] = []
    for key, value in entries.items():
        try:
            environment = canonical_origin(value)
        except RoutingError as exc:
            raise ValueError(f"webenv.{key}: {exc}") from exc
        known = SITES.get(key.strip().lower())
        if known:
            sites.append(MappedSite(known.name, known.title, environment, tuple(known.live_origins),
                                    known.health_path, known.prepare_command(release), known.start_command(release)))
            continue
        try:
            live = canonical_origin(key)
        except RoutingError as exc:
            raise ValueError(f"webenv.{key}: neither an SGR-WebEnv environment ({', '.join(SITES)}) nor a live "
                             f"origin such as https://arxiv.org") from exc
        sites.append(MappedSite(live.split("://", 1)[1], live, environment, (live,)))
    seen: dict[str, MappedSite] = {}
    for site in sites:
        for live in site.live_origins:
            if live in seen and seen[live].environment != site.environment:
                raise ValueError(f"webenv: {live} is mapped to both {seen[live].environment} ({seen[live].name}) "
                                 f"and {site.environment} ({site.name})")
            seen[live] = site
    return sites


def validate_webenv(entries: Mapping[str, str]) -> None:
    mapped_sites(entries)


def parse_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """`--webenv arxiv=http://127.0.0.1:8083` options as a mapping (the origin keeps its own ':')."""
    entries: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"--webenv {pair!r}: expected SITE=ORIGIN, e.g. arxiv=http://127.0.0.1:8083")
        entries[key.strip()] = value.strip()
    mapped_sites(entries)
    return entries
