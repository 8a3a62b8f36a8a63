"""One request to each configured chat endpoint before the first cell (issue 40).

Why: an endpoint that refuses connections or never answers used to cost every cell three client retries
(~37 s each) and ended in `Connection error.`, never naming the `base_url`; a 60-cell bench lost half an hour.
Here each distinct (base_url, key) gets one `GET {base_url}/models` (no tokens spent, no scripted reply of a fake
server used up) with a bounded deadline. No answer at all (refused, unreachable, silent past the deadline) or an
answer refusing the key (401/403) is a configuration error naming the model and the `base_url`, in one line; any
other HTTP answer (404 included: some servers have no /models) shows that something is listening.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpx

from agent.config import ConfigError, ModelConfig

OPENAI_BASE_URL = "https://api.openai.com/v1"  # what the OpenAI client uses when a model gives no base_url
PROBE_SECONDS = 10.0  # one deadline for connect + answer; a bench against a dead endpoint stops well under 30 s
PROBED_PROVIDERS = ("openai",)  # `local` is health-checked by the server it starts, `play` is served here


class EndpointUnreachable(ConfigError):
    """The endpoint did not answer, or refused the key: nothing would run, so nothing is started."""


def endpoint_of(model: ModelConfig) -> str:
    return (model.base_url or OPENAI_BASE_URL).rstrip("/")


async def _probe(model: ModelConfig, seconds: float) -> str | None:
    """None when the endpoint answered; otherwise why not, one line naming model and base_url."""
    base = endpoint_of(model)
    key = model.api_key()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    where = f"model {model.name!r} at base_url {base}"
    try:
        async with httpx.AsyncClient(timeout=seconds, follow_redirects=True) as client:
            response = await asyncio.wait_for(client.get(f"{base}/models", headers=headers), seconds)
    except (TimeoutError, httpx.TimeoutException):
        return f"{where}: no answer within {seconds:g} s (checked with one GET {base}/models before the first cell)"
    except httpx.HTTPError as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return f"{where}: cannot connect ({reason}); check base_url and that the server is running"
    if response.status_code in (401, 403):
        return (f"{where}: the endpoint refuses the key (HTTP {response.status_code}); check "
                f"${model.api_key_env or 'the key variable'}")
    return None


def _distinct(models: Iterable[ModelConfig]) -> list[ModelConfig]:
    seen: dict[tuple[str, str | None], ModelConfig] = {}
    for model in models:
        if model.provider in PROBED_PROVIDERS:
            seen.setdefault((endpoint_of(model), model.api_key_env), model)
    return list(seen.values())


async def check_endpoints(models: Iterable[ModelConfig], seconds: float = PROBE_SECONDS) -> None:
    """Probe each distinct endpoint once, all at once; raise `EndpointUnreachable` with one line per endpoint that
    failed (secrets are never in the text: the key is only a header)."""
    chosen = _distinct(models)
    problems = [p for p in await asyncio.gather(*(_probe(m, seconds) for m in chosen)) if p]
    if problems:
        raise EndpointUnreachable("\n".join(problems))
