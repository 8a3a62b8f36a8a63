"""Per-task traces: `steps.jsonl`, a screenshot per step, and Playwright's `trace.zip`, all redacted.

Redaction runs on every line and on every text member of `trace.zip`, because a typed value or a
URL can carry a key even when no code meant to log it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from browser.types import ActionResult, Observation

REDACTED = "[REDACTED]"
# the password of a URL's userinfo (`https://user:PASSWORD@host/`): a base_url may carry one
URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)[^@/\s]+(?=@)")
# a URL's query parameter (`?key=...`, `&api-key=...`, `?access_token=...`, `?sig=...`) whose name says it holds a
# credential: a base_url may carry its key there
_QUERY_PARAM = re.compile(r"([?&;]([^=&#\s?;]+)=)([^&#\s;]+)")
_SECRET_PARAM_NAME = re.compile(r"(?i)(?:^|[-_.])(?:x-)?(?:api)?(?:key|token|secret|password|passwd|pwd|auth|"
                                r"authorization|sig|signature|credentials?)(?:$|[-_.])")


def url_query_secrets(text: str) -> list[str]:
    """The values of the query parameters in `text` whose names say they hold a credential."""
    return [m.group(3) for m in _QUERY_PARAM.finditer(text) if _SECRET_PARAM_NAME.search(m.group(2))]


def redact_url_query(text: str, mark: str) -> str:
    """`text` with the value of every credential-named query parameter replaced by `mark`."""
    return _QUERY_PARAM.sub(lambda m: m.group(1) + mark if _SECRET_PARAM_NAME.search(m.group(2)) else m.group(0),
                            text)


_SECRET_PATTERNS = [
    URL_PASSWORD,
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI-style keys (sk-..., sk-proj-...)
    re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)(\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password)\b[\"']?\s*[:=]\s*[\"']?)"
               r"[^\s\"'&,;]{4,}"),
]
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
_MIN_SECRET_LEN = 6  # shorter env values would redact ordinary words


_REGISTERED_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """A secret this process holds under any name (a config's `api_key_env` may name any variable): every
    `Redactor.from_environment()` made afterwards redacts it too, whatever writes or prints."""
    if value and len(value) >= _MIN_SECRET_LEN:
        _REGISTERED_SECRETS.add(value)


@dataclass
class Redactor:
    env_secrets: list[str] = field(default_factory=list)

    @classmethod
    def from_environment(cls) -> Redactor:
        values = {value for name, value in os.environ.items()
                  if name.upper().endswith(_SECRET_ENV_SUFFIXES) and len(value) >= _MIN_SECRET_LEN}
        return cls(sorted(values | _REGISTERED_SECRETS, key=len, reverse=True))

    def deep(self, value: Any) -> Any:
        """Any object graph with every string redacted (pydantic models such as chat messages, containers and
        exceptions included); parts holding no secret are kept as they are. For persisting objects that are
        not JSON (checkpoints)."""
        return self._deep(value)[0]

    def _deep(self, value: Any) -> tuple[Any, bool]:
        if isinstance(value, str):
            text = self.text(value)
            return (text, True) if text != value else (value, False)
        if isinstance(value, dict):
            pairs = [(self._deep(k), self._deep(v)) for k, v in value.items()]
            if not any(k[1] or v[1] for k, v in pairs):
                return value, False
            return {k[0]: v[0] for k, v in pairs}, True
        if isinstance(value, list | tuple | set | frozenset):
            items = [self._deep(v) for v in value]
            if not any(changed for _, changed in items):
                return value, False
            kind = type(value) if type(value) in (list, tuple, set, frozenset) else list
            return kind(v for v, _ in items), True
        if isinstance(value, BaseModel):
            update = {}
            for name in type(value).model_fields:
                new, changed = self._deep(getattr(value, name, None))
                if changed:
                    update[name] = new
            return (value.model_copy(update=update), True) if update else (value, False)
        if isinstance(value, BaseException):
            text = f"{type(value).__name__}: {value}"
            redacted = self.text(text)
            return (RuntimeError(redacted), True) if redacted != text else (value, False)
        return value, False

    def secrets(self) -> list[str]:
        """The literal secrets redacted, longest first (registered after this redactor was made: still covered)."""
        if _REGISTERED_SECRETS.issubset(self.env_secrets):
            return self.env_secrets
        return sorted(set(self.env_secrets) | _REGISTERED_SECRETS, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self.secrets():
            text = text.replace(secret, REDACTED)
        for pattern in _SECRET_PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + REDACTED, text)
        return text

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return value

    def zip_file(self, path: Path) -> None:
        """Rewrite a zip with every text member redacted (binary members such as images kept as is)."""
        tmp = path.with_suffix(".redacting")
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                data = src.read(info)
                with contextlib.suppress(UnicodeDecodeError):
                    data = self.text(data.decode("utf-8")).encode("utf-8")
                dst.writestr(info, data)
        tmp.replace(path)

    async def zip_file_bounded(self, path: Path, seconds: float) -> str | None:
        """`zip_file` in a process of its own, so it never holds the event loop (a trace of large pages takes
        minutes), killed past `seconds`: the trace is then deleted, never kept unredacted. None when it was
        redacted, else why it is gone."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-c", _REDACT_CHILD, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        request = json.dumps({"root": str(Path(__file__).resolve().parents[1]), "path": str(path),
                              "secrets": self.secrets()})
        try:
            _, errors = await asyncio.wait_for(process.communicate(request.encode()), seconds)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            why = f"redacting it took over {seconds:g} s"
        else:
            if process.returncode == 0:
                return None
            why = f"redacting it failed ({(errors.decode(errors='replace').strip().splitlines() or ['?'])[-1]})"
        for leftover in (path, path.with_suffix(".redacting")):
            leftover.unlink(missing_ok=True)
        return why


# the child of `Redactor.zip_file_bounded`: the project from the parent's root, the secrets on stdin, never argv
_REDACT_CHILD = """import json, sys
request = json.loads(sys.stdin.read())
sys.path.insert(0, request["root"])
from pathlib import Path
from browser.trace import Redactor
Redactor(request["secrets"]).zip_file(Path(request["path"]))
"""


@dataclass
class StepTracer:
    """Writes one redacted JSON line per action (and optionally a screenshot) into the task folder."""

    task_dir: Path
    screenshots: bool = False
    redactor: Redactor = field(default_factory=Redactor.from_environment)
    step: int = 0

    @property
    def steps_path(self) -> Path:
        return self.task_dir / "steps.jsonl"

    def screenshot_path(self, step: int) -> Path:
        return self.task_dir / "screenshots" / f"step_{step:04d}.png"

    def record(self, result: ActionResult, observation: Observation | None, *, screenshot: str | None = None,
               blocked: list[str] | None = None) -> dict[str, Any]:
        self.step += 1
        delta = result.delta
        line = {
            "time": round(time.time(), 3),
            "step": self.step,
            "action": result.action,
            "ok": result.ok,
            "error": result.error,
            "message": result.message,
            "readback": result.readback,
            "url": observation.url if observation else delta.url_after,
            "query_state": observation.query_state if observation else {},
            "params_added": delta.params_added,
            "params_removed": delta.params_removed,
            "params_changed": delta.params_changed,
            "controls_changed": delta.controls_changed,
            "count_before": delta.count_before,
            "count_after": delta.count_after,
            "elapsed_ms": round(result.elapsed_ms, 1),
            "blocked_requests": blocked or [],
            "screenshot": screenshot,
        }
        line = self.redactor.json(line)
        self.task_dir.mkdir(parents=True, exist_ok=True)
        with self.steps_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        return line
