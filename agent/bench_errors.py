"""Which failures are the infrastructure's (retry: browser crash, network, 5xx, rate limit) and which
are the agent's (record: retrying a bug or a wrong decision only burns budget)."""

from __future__ import annotations

_INFRA_TYPE_NAMES = {
    # Playwright: the browser or page went away under the agent.
    "TargetClosedError",
    # openai / httpx: transient service trouble.
    "RateLimitError",
    "APIConnectionError",
    "APITimeoutError",
    "InternalServerError",
    "ServiceUnavailableError",
    "ConnectError",
    "ReadTimeout",
    "RemoteProtocolError",
}
_INFRA_MESSAGES = ("browser has been closed", "target closed", "browser closed", "connection refused",
                   "net::err_connection", "crashed")
_DRIVER_GONE = "connection closed while reading from the driver"  # Playwright's Node driver died


def classify_exception(exc: BaseException) -> str:
    """'infra' (retryable) or 'agent'. Matches by class name so no client library must be imported."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _INFRA_TYPE_NAMES or getattr(exc, "error_class", None) == "crashed":  # browser.BrowserError
        return "infra"
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return "infra"
    if isinstance(exc, ConnectionError | TimeoutError):
        return "infra"
    message = str(exc).lower()
    if _DRIVER_GONE in message:
        return "infra"
    if "Error" in names and type(exc).__module__.startswith("playwright") and any(m in message for m in _INFRA_MESSAGES):
        return "infra"
    return "agent"
