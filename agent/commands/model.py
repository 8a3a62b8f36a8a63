"""`sgr model serve|check`: the packaged local model (llama.cpp, OpenAI-compatible) on loopback."""

from __future__ import annotations

import signal
import threading

import typer
from rich.console import Console
from rich.markup import escape

from agent.measuring.local_server import (
    SERVED_MODEL_ID,
    SERVER_CONTEXT_TOKENS,
    LocalModelError,
    LocalModelServer,
    server_available,
    weights_path,
)

model_app = typer.Typer(no_args_is_help=True)
_PORT = typer.Option(8766, "--port", help="Loopback port to serve on.")
_CTX = typer.Option(SERVER_CONTEXT_TOKENS, "--ctx", help="Context window in tokens (SmolLM2 was trained on 8192).")


@model_app.command("check")
def check() -> None:
    """Say whether the local server can start here (and what to install if not)."""
    console = Console(stderr=True, soft_wrap=True)
    reason = server_available()
    if reason:
        console.print(f"[red]local model unavailable:[/] {escape(reason)}", highlight=False)
        raise typer.Exit(1)
    console.print(f"local model ready: {SERVED_MODEL_ID} ({escape(str(weights_path()))})", highlight=False)


@model_app.command("serve")
def serve(port: int = _PORT, ctx: int = _CTX) -> None:
    """Serve the local model until Ctrl-C; point a config's `base_url` at the printed URL."""
    console = Console(stderr=True, soft_wrap=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with LocalModelServer(port=port, context_tokens=ctx) as server:
            console.print(f"serving {SERVED_MODEL_ID} at {server.base_url} (Ctrl-C stops); config entry: "
                          f"{{name: local, provider: local, base_url: {server.base_url}}}", highlight=False)
            try:
                while not stop.wait(1.0):
                    if server.process is None or server.process.poll() is not None:
                        raise LocalModelError("the llama.cpp server exited")
            except KeyboardInterrupt:
                pass
    except LocalModelError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    console.print("stopped", highlight=False)
