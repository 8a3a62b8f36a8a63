"""One Chromium per worker, one fresh context per task, and a `PageDriver` that never hangs its caller.

The driver owns everything that must survive a crash: the task's policy, the tracer, the page-id
counter and the last good URL. When the page or the whole browser dies (or hangs past the act
ceiling) the caller gets a typed `ActionResult(error="crashed"|"timeout")`, and the driver relaunches
Chromium if needed, opens a new context and returns to the last good URL.

    worker = ChromiumWorker(token_budget=1500)          # lazily launches one Chromium
    async with worker.task_browser(run_dir, [origin], start_url=url, trace=True) as browser:
        obs = await browser.observe()
        result = await browser.act(Select(target=Target(label="Region"), option="Asia"))
    await worker.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import APIResponse, BrowserContext, Dialog, Page, Playwright, async_playwright
from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Error as PlaywrightError
from pydantic import TypeAdapter

from browser.applied import AppliedState
from browser.driver import SessionTimeouts
from browser.interface import BrowserError
from browser.launch import launch_chromium
from browser.policy import BrowserLimits, OriginPolicy, cut_notice, origin_of
from browser.routing import EnvironmentRouter, OriginMap
from browser.settle import INIT_SCRIPT, NetworkMonitor, fingerprint
from browser.trace import StepTracer
from browser.types import ActionResult, BrowserAction, Goto, Observation

_ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(BrowserAction)


class ChromiumWorker:
    """Implements `browser.interface.BrowserWorker`. Chromium is launched lazily and relaunched when it
    has died, so one worker serves many tasks in sequence or concurrently."""

    def __init__(self, *, executable: str | None = None, headless: bool = True,
                 limits: BrowserLimits | None = None, timeouts: SessionTimeouts | None = None,
                 token_budget: int = 1500):
        self.executable = executable
        self.headless = headless
        self.limits = limits or BrowserLimits()
        self.timeouts = timeouts or SessionTimeouts()
        self.token_budget = token_budget
        self.launches = 0
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self._pid: int | None = None
        self._lock = asyncio.Lock()

    async def browser(self) -> PlaywrightBrowser:
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                if self._playwright is None:
                    self._playwright = await async_playwright().start()
                self._browser = await launch_chromium(
                    self._playwright.chromium, executable=self.executable, headless=self.headless,
                    timeout_ms=self.timeouts.launch_ms,
                )
                self.launches += 1
                self._pid = await _process_id(self._browser)
            return self._browser

    async def browser_pid(self) -> int:
        """The Chromium browser process id (recorded at launch, so a frozen browser can still be killed)."""
        await self.browser()
        if self._pid is None:
            raise BrowserError("crashed", "the browser's process id is unknown")
        return self._pid

    async def discard_browser(self) -> None:
        """Kill a browser that no longer answers (alive but hung); the next `browser()` launches anew."""
        async with self._lock:
            browser, pid, self._browser, self._pid = self._browser, self._pid, None, None
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if browser is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(browser.close(), self.timeouts.close_seconds)

    @contextlib.asynccontextmanager
    async def task_browser(self, task_dir: str | Path, allowed_origins: list[str], *, trace: bool = False,
                           screenshots: bool = False, start_url: str | None = None,
                           routes: OriginMap | None = None) -> AsyncIterator[PageDriver]:
        """A `PageDriver` on a fresh context. `start_url`'s origin is allowed and the page opens there.
        With `routes`, live origins are served from local environments (`browser.routing`)."""
        policy = OriginPolicy.for_task(allowed_origins, start_url)
        router = EnvironmentRouter(routes, policy) if routes else None
        driver = PageDriver(self, Path(task_dir), policy, trace=trace, screenshots=screenshots, router=router)
        await driver.open()
        try:
            if start_url:
                await driver.act(Goto(url=start_url))
            yield driver
        finally:
            await driver.close()

    async def close(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._browser.close(), self.timeouts.close_seconds)
            self._browser = None
        if self._playwright is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(self._playwright.stop(), self.timeouts.close_seconds)
            self._playwright = None


class PageDriver:
    """Implements `browser.interface.Browser` for one task: observe, act with read-back, close."""

    def __init__(self, worker: ChromiumWorker, task_dir: Path, policy: OriginPolicy, *, trace: bool = False,
                 screenshots: bool = False, router: EnvironmentRouter | None = None):
        self.worker = worker
        self.router = router
        self.task_dir = task_dir
        self.policy = policy
        self.limits = worker.limits
        self.timeouts = worker.timeouts
        self.trace = trace
        self.tracer = StepTracer(task_dir, screenshots=screenshots)
        self.page_id = 0
        self.applied = AppliedState()  # the controls' values when the page's results were last shown
        self.dialogs: list[str] = []
        self.last_observation: Observation | None = None
        self.last_fingerprint: str | None = None
        self.network = NetworkMonitor()
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._doc_token: str | None = None
        self._issued_refs: dict[int, set[str]] = {}
        self._crashed = False
        self._last_good_url: str | None = None
        self._blocked_noted = 0
        self._cuts_noted = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def page(self) -> Page:
        if self._page is None:
            raise BrowserError("crashed", "the task browser is not open")
        return self._page

    @property
    def context(self) -> BrowserContext:
        if self._context is None:
            raise BrowserError("crashed", "the task browser is not open")
        return self._context

    @property
    def downloads_dir(self) -> Path:
        return self.task_dir / "downloads"

    @property
    def blocked_requests(self) -> list[str]:
        """URLs the policy refused so far in this task (navigations and sub-requests)."""
        return [blocked.url for blocked in self.policy.blocked]

    async def http_get(self, url: str) -> tuple[APIResponse, str | None]:
        """GET through the context (its cookies) without following redirects: the response and the
        absolute target of a redirect. Mapped live URLs are fetched from their environment."""
        if self.router is not None:
            return await self.router.get(self.context, url, self.timeouts.navigation_ms)
        response = await self.context.request.get(url, max_redirects=0, timeout=self.timeouts.navigation_ms)
        location = response.headers.get("location")
        return response, urljoin(url, location) if location and 300 <= response.status < 400 else None

    async def open(self) -> None:
        self.task_dir.mkdir(parents=True, exist_ok=True)
        browser = await self.worker.browser()
        context = await browser.new_context(accept_downloads=True, service_workers="block",
                                            viewport={"width": 1280, "height": 900})
        context.set_default_timeout(self.timeouts.action_ms)
        context.set_default_navigation_timeout(self.timeouts.navigation_ms)
        self.policy.fetch_timeout_ms = self.timeouts.navigation_ms
        self.policy.page_bytes = self.limits.page_bytes
        await self.policy.install(context)
        if self.router is not None:
            await self.router.install(context)
        await context.add_init_script(INIT_SCRIPT)
        if self.trace:
            await context.tracing.start(screenshots=True, snapshots=True)
        page = await context.new_page()
        page.on("crash", self._on_crash)
        page.on("dialog", self._on_dialog)
        self.network = NetworkMonitor()
        self.network.attach(page)
        self._context, self._page, self._crashed = context, page, False

    def _on_crash(self, *_: Any) -> None:
        self._crashed = True

    async def _on_dialog(self, dialog: Dialog) -> None:
        """Dialogs would block every later action; note their text (it is page data) and dismiss them."""
        self.dialogs.append(f"{dialog.type}: {dialog.message}"[:300])
        with contextlib.suppress(PlaywrightError):
            await (dialog.accept() if dialog.type in ("alert", "beforeunload") else dialog.dismiss())

    def is_alive(self) -> bool:
        return (not self._crashed and self._page is not None and not self._page.is_closed()
                and self._context is not None and self._context.browser is not None
                and self._context.browser.is_connected())

    async def close(self) -> None:
        context, self._context, self._page = self._context, None, None
        if context is None:
            return
        if self.trace and not self._crashed:
            trace_path = self.task_dir / "trace.zip"
            try:
                await asyncio.wait_for(context.tracing.stop(path=str(trace_path)), self.timeouts.close_seconds)
            except (TimeoutError, PlaywrightError) as exc:
                self.dialogs.append(f"trace not saved: {exc}")
            else:
                if gone := await self.tracer.redactor.zip_file_bounded(trace_path, self.timeouts.redact_seconds):
                    self.dialogs.append(f"trace not saved: {gone}")
        with contextlib.suppress(PlaywrightError, TimeoutError):
            await asyncio.wait_for(context.close(), self.timeouts.close_seconds)

    async def recover(self) -> str:
        """Replace a dead or hung context (relaunching Chromium if it died); back to the last good URL."""
        old, self._context, self._page = self._context, None, None
        if old is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(old.close(), self.timeouts.close_seconds)
        try:
            await asyncio.wait_for(self.open(), self.timeouts.launch_ms / 1000)
        except (TimeoutError, PlaywrightError):  # the browser itself is hung: replace it, once
            await self.worker.discard_browser()
            try:
                await asyncio.wait_for(self.open(), self.timeouts.launch_ms / 1000)
            except (TimeoutError, PlaywrightError) as exc:  # the next action tries again
                return f"nothing: the browser could not be relaunched ({str(exc).splitlines()[0] if str(exc) else exc!r})"
        if not self._last_good_url:
            return "a fresh blank page"
        try:
            await self.page.goto(self._last_good_url, wait_until="domcontentloaded")
            return self._last_good_url
        except PlaywrightError as exc:
            return f"a blank page (reopening {self._last_good_url} failed: {str(exc).splitlines()[0]})"

    # ------------------------------------------------------------------ page identity and refs

    async def sync_page_id(self) -> int:
        """Bump `page_id` when the main frame holds a new document (refs of older documents are stale)."""
        try:
            token = await self.page.evaluate("() => window.__sgrDocToken || null")
        except PlaywrightError:
            token = None
        if token is None or token != self._doc_token:
            self.page_id += 1
            self._doc_token = token
        return self.page_id

    def ref_is_stale(self, ref: str) -> bool:
        """Issued on an earlier page and not on the current one."""
        if ref in self._issued_refs.get(self.page_id, set()):
            return False
        return any(ref in refs for page_id, refs in self._issued_refs.items() if page_id < self.page_id)

    def _remember_refs(self, observation: Observation) -> None:
        refs = {control.ref for control in observation.controls} | {link.ref for link in observation.links}
        refs |= {link.ref for t in observation.tables for row in t.cell_links for cell in row for link in cell if link.ref}
        refs |= {ref for t in observation.tables for row in t.row_controls for ref in row}
        refs |= {ref for ref in observation.outline_refs if ref}  # the read_section refs of long lines
        self._issued_refs.setdefault(observation.page_id, set()).update(refs)

    # ------------------------------------------------------------------ Browser protocol

    async def observe(self) -> Observation:
        if not self.is_alive():
            where = await self.recover()
            raise BrowserError("crashed", f"the browser had crashed; relaunched at {where}. Observe again.")
        try:
            return await asyncio.wait_for(self._observe(), self.timeouts.observe_seconds)
        except TimeoutError as exc:
            message = f"observing the page took over {self.timeouts.observe_seconds:.0f}s"
            if not await self._responds():
                message += f"; the page was hung and was reopened at {await self.recover()}"
            raise BrowserError("timeout", message + ". Observe again or go back.") from exc

    async def _observe(self) -> Observation:
        from browser.observe import observe_page

        page_id = await self.sync_page_id()
        observation = await observe_page(self.page, page_id=page_id)
        notices = [f"dialog {text}" for text in self.dialogs]
        self.dialogs.clear()
        if refused := self.policy.blocked[self._blocked_noted:]:
            origins = sorted({origin_of(blocked.url) for blocked in refused})
            notices.append(f"policy refused {len(refused)} request(s) to {', '.join(origins[:5])}")
            self._blocked_noted = len(self.policy.blocked)
        notices += [cut_notice(cut) for cut in self.policy.cut_pages[self._cuts_noted:]]
        self._cuts_noted = len(self.policy.cut_pages)
        if self.router is not None:
            notices.extend(self.router.take_failure_notices())
        observation.notices.extend(notices)  # events the page itself cannot show: in the text the agent reads too
        if observation.url.startswith(("http://", "https://")):
            self._last_good_url = observation.url
        self._remember_refs(observation)
        observation.pending = self.applied.pending(observation)
        self.last_observation = observation
        self.last_fingerprint = await fingerprint(self.page)
        return observation

    async def act(self, action: BrowserAction | dict[str, Any]) -> ActionResult:
        from browser.actions import perform

        parsed = _ACTION_ADAPTER.validate_python(action) if isinstance(action, dict) else action
        started = time.monotonic()
        blocked_before = len(self.policy.blocked)
        try:
            if not self.is_alive():
                raise BrowserError("crashed", "the browser had crashed before this action")
            result = await asyncio.wait_for(perform(self, parsed), self.timeouts.act_seconds)
        except TimeoutError:
            result = await self._after_timeout(parsed)
        except OSError as exc:  # the action's own file work (a download the page named): the action failed
            result = _unexpected_failure(parsed, exc, self.last_observation)
        except (PlaywrightError, BrowserError) as exc:
            if self.is_alive():
                result = _unexpected_failure(parsed, exc, self.last_observation)
            else:
                where = await self.recover()
                result = ActionResult(ok=False, action=parsed.model_dump(), error="crashed",
                                      message=f"the browser crashed during {parsed.kind}; relaunched and reopened "
                                              f"{where}. Check the observation, then retry.",
                                      observation=await self._observe_quietly())
        result.elapsed_ms = (time.monotonic() - started) * 1000
        await self._record(result, [b.url for b in self.policy.blocked[blocked_before:]])
        return result

    async def _responds(self) -> bool:
        try:
            await asyncio.wait_for(self.page.evaluate("1"), 3.0)
            return True
        except (PlaywrightError, TimeoutError, BrowserError):
            return False

    async def _observe_quietly(self) -> Observation | None:
        """A fresh observation after recovery, or None: the typed error matters more than the view."""
        try:
            return await self.observe()
        except (BrowserError, PlaywrightError):
            return None

    async def _after_timeout(self, action: Any) -> ActionResult:
        """A whole action overran its ceiling: probe the page; replace it if it is hung."""
        message = f"{action.kind} did not finish within {self.timeouts.act_seconds:.0f}s"
        if await self._responds():
            message += "; the page still responds. Observe, then try a smaller step."
        else:
            where = await self.recover()
            message += f"; the page was hung and was reopened at {where}. Check the observation."
        return ActionResult(ok=False, action=action.model_dump(), error="timeout", message=message,
                            observation=await self._observe_quietly())

    async def _record(self, result: ActionResult, blocked: list[str]) -> None:
        screenshot = None
        if self.tracer.screenshots and self.is_alive():
            path = self.tracer.screenshot_path(self.tracer.step + 1)
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                await self.page.screenshot(path=str(path), timeout=self.timeouts.action_ms)
                screenshot = str(path.relative_to(self.task_dir))
            except PlaywrightError:
                screenshot = None
        self.tracer.record(result, result.observation, screenshot=screenshot, blocked=blocked)


async def _process_id(browser: PlaywrightBrowser) -> int | None:
    try:
        cdp = await browser.new_browser_cdp_session()
        info = await asyncio.wait_for(cdp.send("SystemInfo.getProcessInfo"), 10)
        await cdp.detach()
    except (PlaywrightError, TimeoutError):
        return None
    return next((int(p["id"]) for p in info["processInfo"] if p["type"] == "browser"), None)


def _unexpected_failure(action: Any, exc: Exception, observation: Observation | None) -> ActionResult:
    """An error that escaped the action's own mapping, still returned typed (never raised at the graph)."""
    if isinstance(exc, BrowserError):
        error_class, message = exc.error_class, str(exc)
    else:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        error_class = ("timeout" if "Timeout" in type(exc).__name__ else
                       "not_interactable" if isinstance(exc, PlaywrightError) else "invalid_action")
        message = f"{action.kind} failed: {first_line}"
    return ActionResult(ok=False, action=action.model_dump(), error=error_class,  # type: ignore[arg-type]
                        message=message, observation=observation)
