"""Which failures are the infrastructure's (retry: browser crash, network, 5xx, rate limit), which are the
configuration's (a model 400/401/403/404: fail fast), which are the agent's (a browser refusal of a wrong
decision) and which are bugs (any other Python exception escaping our code: recorded with its traceback).
Retrying anything but infrastructure only burns budget."""

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


_CONFIG_STATUSES = {400, 401, 403, 404, 422}


def classify_exception(exc: BaseException) -> str:
    """'infra' (retryable), 'config', 'agent' or 'bug'. Matches by class name so no client library must be
    imported."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _INFRA_TYPE_NAMES or getattr(exc, "error_class", None) == "crashed":  # browser.BrowserError
        return "infra"
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return "infra"
    if status in _CONFIG_STATUSES:
        return "config"
    if isinstance(exc, ConnectionError | TimeoutError):
        return "infra"
    message = str(exc).lower()
    if _DRIVER_GONE in message:
        return "infra"
    if "Error" in names and type(exc).__module__.startswith("playwright") and any(m in message for m in _INFRA_MESSAGES):
        return "infra"
    if getattr(exc, "error_class", None):  # browser.BrowserError: the browser refused what the agent asked
        return "agent"
    return "bug"
