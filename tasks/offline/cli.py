"""`sgr offline ...`: serve the sites, write the task records."""

from __future__ import annotations

import time

import typer

from tasks.offline.app import DEFAULT_SEED

app = typer.Typer(no_args_is_help=True)


@app.command("serve")
def serve(port: int = 8765, seed: int = DEFAULT_SEED) -> None:
    """Serve the offline sites on 127.0.0.1:PORT until interrupted."""
    from tasks.offline.server import OfflineServer

    with OfflineServer(seed=seed, port=port) as server:
        typer.echo(f"offline sites at {server.origin}/ (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
