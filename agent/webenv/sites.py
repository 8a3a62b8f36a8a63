"""The six SGR-WebEnv environments (github.com/Ninggggy/sgr-webenv): what each reconstructs and how it runs.

Facts from that repository (README, docs/OPERATIONS.md, tools/env.py, releases/*.json, the environments'
runner bridges): each environment serves one site's live paths unchanged; in `--mode preview` it is
published on loopback only, on a fixed port; `tools/env.py verify` asks the web service for `/health`
(arXiv: `/`), and some answer with their release (NOAA: `{"status", "release", "implementation"}`).
The live hosts are the ones the environments' own browsers accept; each is mapped with `https` and `http`.
Paths an environment serves under another prefix (web.expasy.org/cellosaurus/...) are not mapped.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_RELEASE = "v0.1.3"
REPOSITORY = "https://github.com/Ninggggy/sgr-webenv"


@dataclass(frozen=True)
class WebEnvSite:
    name: str  # tools/env.py's site argument
    title: str
    preview_port: int
    live_hosts: tuple[str, ...]
    domains: tuple[str, ...]  # SGR-Bench `domain` values of the site's tasks
    health_path: str = "/health"
    local_build: bool = False  # NOAA: the chart library must be fetched and the images built locally

    @property
    def live_origins(self) -> list[str]:
        """https first; plain-http links to the same hosts (old pages have them) go to the environment too."""
        return [f"https://{host}" for host in self.live_hosts] + [f"http://{host}" for host in self.live_hosts]

    @property
    def preview_origin(self) -> str:
        return f"http://127.0.0.1:{self.preview_port}"

    def prepare_command(self, release: str = DEFAULT_RELEASE) -> str:
        """Run once in a clone of the sgr-webenv repository: data, images (and arXiv's search index)."""
        command = f"python3 tools/env.py prepare {self.name} --release {release}"
        return command + " --local-images  # after building its images: environments/noaa/README.md" \
            if self.local_build else command

    def start_command(self, release: str = DEFAULT_RELEASE) -> str:
        return f"python3 tools/env.py start {self.name} --release {release} --mode preview"


SITES: dict[str, WebEnvSite] = {site.name: site for site in (
    WebEnvSite("noaa", "NOAA Climate at a Glance", 8080, ("www.ncei.noaa.gov",),
               ("NOAA_NCEI_CLIMATE_AT_A_GLANCE",), local_build=True),
    WebEnvSite("census", "Census / ACS", 8081, ("www.census.gov", "data.census.gov", "api.census.gov"),
               ("CENSUS_GOV",)),
    WebEnvSite("wonder", "CDC WONDER", 8082, ("wonder.cdc.gov",), ("CDC_WONDER",)),
    WebEnvSite("arxiv", "arXiv", 8083, ("arxiv.org", "export.arxiv.org", "info.arxiv.org"), ("ARXIV",),
               health_path="/"),
    WebEnvSite("wateroffice", "Wateroffice", 8084, ("wateroffice.ec.gc.ca",), ("WATER_OFFICE",)),
    WebEnvSite("cellosaurus", "Cellosaurus", 8086, ("www.cellosaurus.org", "ftp.expasy.org"), ("CELLOSAURUS",)),
)}
