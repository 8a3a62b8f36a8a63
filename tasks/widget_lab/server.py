"""Serve the widget lab on a free loopback port in a background thread (tests, the bench, `sgr offline serve --lab`)."""

from __future__ import annotations

from tasks.offline.server import ThreadedServer, free_port
from tasks.widget_lab.app import create_app
from tasks.widget_lab.registry import PLACEHOLDER_ORIGIN


class LabServer(ThreadedServer):
    """`with LabServer() as lab: lab.url("tom_select_multi")`."""

    def __init__(self, host: str = "127.0.0.1", port: int | None = None):
        self.host = host
        self.port = port or free_port(host)
        super().__init__(create_app(), host, self.port, "widget lab server")

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, page: str) -> str:
        return f"{self.origin}/{page.strip('/')}/"

    def localise(self, url: str) -> str:
        """A record's URL on this server."""
        return url.replace(PLACEHOLDER_ORIGIN, self.origin)
