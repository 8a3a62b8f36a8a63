"""Observation size, completeness and speed over every page the offline walkthroughs visit.

Each walkthrough's browser steps are replayed twice, side by side: through `PageDriver` (act + settle +
observe with read-back) and with plain Playwright on a second context (the same step by label/text, then
`page.content()` + `aria_snapshot()`, the cheapest "show the page to a model" baseline). At every page
state the script measures our observation against the raw HTML, the body's inner text and the ARIA
snapshot, checks that every control and option in the DOM is in the observation, and samples Chromium's
memory. Prints one table (Markdown) and, with --json, the raw numbers.

Run: .venv/bin/python benchmarks/bench_observation.py [--sites scholar,stats] [--budget 1500] [--json out.json]

With --corpus it measures the real-page corpus instead (tests/data/realpages, served on loopback): an
independent DOM count (controls, options, links, table rows), coverage in the text the model reads and
in the observation at all (one read call away), value probes, tokens, and time against plain
`content()` + `aria_snapshot()`. To measure another checkout's observer with the same corpus, put it
first on PYTHONPATH (the corpus is loaded from this file's checkout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browser.delta import content_key
from browser.observe import observe_page
from browser.render import LONG_OPTION_LIST, render
from browser.session import ChromiumWorker
from browser.tokens import count_tokens
from browser.types import ACTION_SPECS, CHANGING_KINDS, Observation
from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.server import OfflineServer

BROWSER_KINDS = set(ACTION_SPECS)
PAGE_CHANGING = CHANGING_KINDS | {"wait_for"}  # the browser's changing kinds (ACTION_SPECS), and a wait: timed

# Every element that sets state, found independently of observe-*.js; `data-sgr-*` tell whether it was seen.
GROUND_TRUTH_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const t = el.tagName.toLowerCase(), role = el.getAttribute('role');
      const control = t === 'select' || t === 'textarea' || role === 'combobox' || role === 'listbox' ||
        (t === 'input' && el.type !== 'hidden');
      if (!control) continue;
      const shown = el.checkVisibility() || !!el.closest('details:not([open])');
      if (!shown && role !== 'listbox') continue;
      const options = t === 'select' ? el.options.length
        : role === 'listbox' ? el.querySelectorAll('[role=option]').length : 0;
      out.push({ref: el.getAttribute('data-sgr-group') || el.getAttribute('data-sgr-ref'), options,
                what: t + (el.name ? '[' + el.name + ']' : '')});
    }
  };
  walk(document);
  return out;
}"""


@dataclass
class PageSample:
    site: str
    url: str
    obs_tokens: int
    html_tokens: int
    inner_text_tokens: int
    aria_tokens: int
    observe_ms: float
    baseline_ms: float
    controls_dom: int
    controls_found: int
    controls_in_text: int
    options_dom: int
    options_found: int
    options_listed: int
    options_summarised: int


@dataclass
class Cycle:
    site: str
    kind: str
    act_ms: float  # PageDriver.act: action + settle + read-back + observe
    plain_ms: float | None  # plain Playwright: same action + load state + content() + aria_snapshot()
    ok: bool


@dataclass
class Totals:
    samples: list[PageSample] = field(default_factory=list)
    cycles: list[Cycle] = field(default_factory=list)
    rss_peak_mb: list[float] = field(default_factory=list)
    rss_idle_mb: float = 0.0
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- memory


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return kids


def chromium_rss_mb(browser_pid: int) -> float:
    """Resident memory of the Chromium browser process and all its descendants (renderers, GPU, ...)."""
    kids = _children()
    todo, total = [browser_pid], 0
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


# ---------------------------------------------------------------- measuring one page state


async def _baseline(page: Page) -> tuple[float, str, str]:
    started = time.perf_counter()
    html = await page.content()
    aria = await page.locator("body").aria_snapshot()
    return (time.perf_counter() - started) * 1000, html, aria


async def _ground_truth(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for frame in page.frames:
        try:
            found += await frame.evaluate(GROUND_TRUTH_JS)
        except PlaywrightError:
            continue
    return found


def _coverage(obs: Observation, text: str, truth: list[dict[str, Any]]) -> dict[str, int]:
    by_ref = {c.ref: c for c in obs.controls}
    lines = {line.split("] ", 1)[0][1:]: line for line in text.splitlines() if line.startswith("[")}
    found = [t for t in truth if t["ref"] in by_ref]
    options_dom = sum(t["options"] for t in truth)
    options_found = sum(min(t["options"], len(by_ref[t["ref"]].options)) for t in found if t["options"])
    listed = summarised = 0
    for control in {id(by_ref[t["ref"]]): by_ref[t["ref"]] for t in found if t["options"]}.values():
        line = lines.get(control.ref, "")
        if len(control.options) > LONG_OPTION_LIST:
            summary = f"more of {len(control.options)}" in line or " page links; * = current)" in line
            summarised += len(control.options) if summary else 0
        else:
            listed += sum(1 for o in control.options if (o.label or o.value) in line)
    return {
        "controls_dom": len(truth),
        "controls_found": len(found),
        "controls_in_text": sum(1 for t in found if t["ref"] in lines),
        "options_dom": options_dom,
        "options_found": options_found,
        "options_listed": listed,
        "options_summarised": summarised,
    }


async def measure_page(site: str, page: Page, budget: int) -> PageSample:
    started = time.perf_counter()
    obs = await observe_page(page, page_id=0)
    shown = render(obs, budget)  # what a prompt with the whole budget shows: timed with the observation
    observe_ms = (time.perf_counter() - started) * 1000
    baseline_ms, html, aria = await _baseline(page)
    inner = await page.inner_text("body")
    return PageSample(
        site=site, url=page.url, obs_tokens=shown.tokens, html_tokens=count_tokens(html),
        inner_text_tokens=count_tokens(inner), aria_tokens=count_tokens(aria), observe_ms=observe_ms,
        baseline_ms=baseline_ms, **_coverage(obs, shown.text, await _ground_truth(page)),
    )


# ---------------------------------------------------------------- plain Playwright replay


def _locator(page: Page, target: dict[str, Any]) -> Any:
    if target.get("label"):
        return page.get_by_label(target["label"], exact=True).first
    if target.get("text"):
        return page.get_by_text(target["text"], exact=True).first
    return page.locator(target["selector"]).first


async def plain_step(page: Page, kind: str, args: dict[str, Any]) -> None:
    """The same step with plain Playwright calls (no settle, no read-back), then the baseline read."""
    if kind == "goto":
        await page.goto(args["url"])
    elif kind == "back":
        await page.go_back()
    elif kind == "click":
        await _locator(page, args["target"]).click()
    elif kind == "fill":
        await _locator(page, args["target"]).fill(args["value"])
    elif kind == "select":
        await _locator(page, args["target"]).select_option(label=args["option"])
    elif kind == "check":
        await _locator(page, args["target"]).set_checked(args.get("checked", True))
    elif kind == "set_range":
        await _locator(page, args["start_target"]).fill(args["start"])
        await _locator(page, args["end_target"]).fill(args["end"])
    elif kind == "submit":
        target = args.get("target")
        await (_locator(page, target).press("Enter") if target else page.keyboard.press("Enter"))
    elif kind == "wait_for":
        if args.get("text"):
            await page.get_by_text(args["text"]).first.wait_for()
        elif args.get("selector"):
            await page.locator(args["selector"]).first.wait_for()
    else:
        raise ValueError(f"no plain equivalent for {kind}")
    await page.wait_for_load_state("load")
    await _baseline(page)


# ---------------------------------------------------------------- replay


def _localise(value: Any, origin: str) -> Any:
    return json.loads(json.dumps(value).replace(PLACEHOLDER_ORIGIN, origin))


def _browser_steps(steps: list[dict[str, Any]], origin: str) -> list[tuple[str, dict[str, Any]]]:
    return [(step["tool"], _localise(step.get("args", {}), origin)) for step in steps if step["tool"] in BROWSER_KINDS]


async def replay_driver(worker: ChromiumWorker, origin: str, site: str, task_id: str,
                        steps: list[tuple[str, dict[str, Any]]], budget: int, totals: Totals,
                        seen: set[str]) -> list[float | None]:
    """Our cycle per step (None for steps that do not change the page); samples each new page state."""
    pid = await worker.browser_pid()
    peak = 0.0
    times: list[float | None] = []
    with tempfile.TemporaryDirectory() as task_dir:
        async with worker.task_browser(task_dir, [origin]) as driver:
            for kind, args in steps:
                started = time.perf_counter()
                result = await driver.act({"kind": kind, **args})
                times.append((time.perf_counter() - started) * 1000 if kind in PAGE_CHANGING else None)
                if not result.ok:
                    totals.problems.append(f"{task_id} {kind}: {result.error} {result.message[:120]}")
                state = driver.page.url + "#" + content_key(result.observation)
                if kind in PAGE_CHANGING and state not in seen:
                    seen.add(state)
                    totals.samples.append(await measure_page(site, driver.page, budget))
                peak = max(peak, chromium_rss_mb(pid))
    totals.rss_peak_mb.append(peak)
    return times


async def replay_plain(worker: ChromiumWorker, task_id: str, steps: list[tuple[str, dict[str, Any]]],
                       totals: Totals) -> list[float | None]:
    """The same steps with plain Playwright; after the first step it cannot do, its page has diverged."""
    context = await (await worker.browser()).new_context()
    context.set_default_timeout(5000)
    page = await context.new_page()
    times: list[float | None] = []
    try:
        for kind, args in steps:
            if kind not in PAGE_CHANGING:
                times.append(None)
                continue
            started = time.perf_counter()
            try:
                await asyncio.wait_for(plain_step(page, kind, args), 20)
            except (PlaywrightError, TimeoutError, ValueError) as exc:
                first_line = (str(exc) or type(exc).__name__).splitlines()[0][:120]
                totals.problems.append(f"{task_id} plain {kind} {json.dumps(args)[:80]}: {first_line} "
                                       "(plain replay stops here)")
                break
            times.append((time.perf_counter() - started) * 1000)
    finally:
        await context.close()
    return times + [None] * (len(steps) - len(times))


async def replay(worker: ChromiumWorker, origin: str, site: str, task_id: str, steps: list[dict[str, Any]],
                 budget: int, totals: Totals, seen: set[str]) -> None:
    browser_steps = _browser_steps(steps, origin)
    ours = await replay_driver(worker, origin, site, task_id, browser_steps, budget, totals, seen)
    plain = await replay_plain(worker, task_id, browser_steps, totals)
    for (kind, _), act_ms, plain_ms in zip(browser_steps, ours, plain, strict=True):
        if act_ms is not None:
            totals.cycles.append(Cycle(site, kind, act_ms, plain_ms, True))


# ---------------------------------------------------------------- report


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def report(totals: Totals, budget: int) -> str:
    s = totals.samples
    ratios = lambda num, den: [getattr(x, num) / max(1, getattr(x, den)) for x in s]  # noqa: E731
    cycles = [c for c in totals.cycles if c.plain_ms]
    controls_dom = sum(x.controls_dom for x in s)
    options_dom = sum(x.options_dom for x in s)
    short_options = sum(x.options_found for x in s) - sum(x.options_summarised for x in s)
    rows = [
        ("page states observed", f"{len(s)} on {len({x.site for x in s})} sites"),
        ("observation tokens: median / max", f"{_median([x.obs_tokens for x in s]):.0f} / "
                                             f"{max((x.obs_tokens for x in s), default=0)} (budget {budget})"),
        ("raw HTML tokens / observation tokens (median)", f"{_median(ratios('html_tokens', 'obs_tokens')):.1f}x"),
        ("body inner_text tokens / observation tokens (median)",
         f"{_median(ratios('inner_text_tokens', 'obs_tokens')):.2f}x"),
        ("aria_snapshot tokens / observation tokens (median)", f"{_median(ratios('aria_tokens', 'obs_tokens')):.2f}x"),
        ("controls in DOM found in observation", f"{_pct(sum(x.controls_found for x in s), controls_dom)} "
                                                 f"of {controls_dom}"),
        ("controls present in the text", f"{_pct(sum(x.controls_in_text for x in s), controls_dom)}"),
        ("options in DOM present in Control.options", f"{_pct(sum(x.options_found for x in s), options_dom)} "
                                                      f"of {options_dom}"),
        ("options listed in text (lists <= 30)", f"{_pct(sum(x.options_listed for x in s), short_options)}"),
        ("options in summarised long lists", f"{sum(x.options_summarised for x in s)}"),
        ("observe time: median ms (ours / plain)", f"{_median([x.observe_ms for x in s]):.1f} / "
                                                   f"{_median([x.baseline_ms for x in s]):.1f}"),
        ("observe time ratio to plain (median of per-page)", f"{_median(ratios('observe_ms', 'baseline_ms')):.2f}x"),
        ("act+settle+observe: median ms (ours / plain)",
         f"{_median([c.act_ms for c in cycles]):.0f} / {_median([c.plain_ms or 0 for c in cycles]):.0f} "
         f"({len(cycles)} steps)"),
        ("act cycle ratio to plain (median of per-step)",
         f"{_median([c.act_ms / max(1.0, c.plain_ms or 1.0) for c in cycles]):.2f}x"),
        ("Chromium RSS (all processes): idle browser / task peak (median, max)",
         f"{totals.rss_idle_mb:.0f} MB / {_median(totals.rss_peak_mb):.0f} MB, "
         f"{max(totals.rss_peak_mb, default=0):.0f} MB"),
        ("memory per task context: task peak minus idle (median)",
         f"{_median(totals.rss_peak_mb) - totals.rss_idle_mb:.0f} MB"),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"| {'metric'.ljust(width)} | value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {name.ljust(width)} | {value} |" for name, value in rows]
    per_site = ["", "| site | pages | median tokens | max tokens | HTML/obs | observe ms | plain ms |",
                "|---|---|---|---|---|---|---|"]
    for site in sorted({x.site for x in s}):
        xs = [x for x in s if x.site == site]
        per_site.append(
            f"| {site} | {len(xs)} | {_median([x.obs_tokens for x in xs]):.0f} | {max(x.obs_tokens for x in xs)} | "
            f"{_median([x.html_tokens / max(1, x.obs_tokens) for x in xs]):.1f}x | "
            f"{_median([x.observe_ms for x in xs]):.1f} | {_median([x.baseline_ms for x in xs]):.1f} |"
        )
    return "\n".join(lines + per_site)


# ---------------------------------------------------------------- real-page corpus

def corpus_summary(samples: list[Any]) -> list[tuple[str, str]]:
    def tot(key: str) -> int:
        return sum(getattr(x, key) for x in samples)

    over = [x.page for x in samples if x.obs_tokens > x.budget]
    rows = [
        ("pages", f"{len(samples)}"),
        ("controls in DOM: addressable (ref) / named in text",
         f"{_pct(tot('controls_addressable'), tot('controls_dom'))} / {_pct(tot('controls_named'), tot('controls_dom'))}"
         f" of {tot('controls_dom')}"),
        ("native options reachable (text or list_options)", f"{_pct(tot('options_reachable'), tot('options_dom'))} "
                                                           f"of {tot('options_dom')}"),
        ("links in text", f"{_pct(tot('links_in_text'), tot('links_dom'))} of {tot('links_dom')}"),
        ("main-content links by ref: text or one read", f"{_pct(tot('main_links_reached'), tot('main_links'))} "
                                                        f"of {tot('main_links')}"),
        ("table rows in text", f"{_pct(tot('rows_in_text'), tot('rows_dom'))} of {tot('rows_dom')}"),
        ("probes on the page", f"{tot('probes_on_page')} of {tot('probes')}"),
        ("probes in text / + one read call away",
         f"{_pct(tot('probes_in_text'), tot('probes_on_page'))} / "
         f"{_pct(tot('probes_in_text') + tot('probes_one_call'), tot('probes_on_page'))}"),
        ("observations over budget", f"{len(over)} {over if over else ''}"),
        ("pages with left-out notes / silent cuts", f"{sum(1 for x in samples if x.left_out_notes)} / "
                                                    f"{sum(len(x.silent_cuts) for x in samples)}"),
        ("tokens: median obs / median HTML", f"{_median([x.obs_tokens for x in samples]):.0f} / "
                                             f"{_median([x.html_tokens for x in samples]):.0f}"),
        ("observe ms: median ours / plain content()+aria_snapshot()",
         f"{_median([x.observe_ms for x in samples]):.0f} / {_median([x.baseline_ms for x in samples]):.0f}"),
    ]
    return rows


def corpus_report(samples: list[Any]) -> str:
    """One summary table with a column for all pages and one for the benchmark-kind pages, then per page."""
    every, bench = corpus_summary(samples), corpus_summary([x for x in samples if x.benchmark])
    lines = ["| metric | all pages | benchmark-kind pages |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for (a, b), (_, c) in zip(every, bench, strict=True)]
    lines += ["", "| page | kind | tokens | ctrl named/dom | links | rows | probes text/one-call/on page | ms ours/plain |",
              "|---|---|---|---|---|---|---|---|"]
    for x in samples:
        lines.append(f"| {x.page} | {x.kind} | {x.obs_tokens} | {x.controls_named}/{x.controls_dom} | "
                     f"{x.links_in_text}/{x.links_dom} | {x.rows_in_text}/{x.rows_dom} | "
                     f"{x.probes_in_text}/{x.probes_one_call}/{x.probes_on_page} | {x.observe_ms:.0f}/{x.baseline_ms:.0f} |")
    missed = [f"- {x.page}: {p!r}" for x in samples for p in x.probes_missed]
    if missed:
        lines += ["", "Probes on the page but in neither the text nor one read:", *missed]
    return "\n".join(lines)


def _corpus_module() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "realpages.py"
    spec = importlib.util.spec_from_file_location("realpages_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def run_corpus(budget: int, only: set[str] | None = None) -> list[Any]:
    corpus = _corpus_module()
    samples: list[Any] = []
    worker = ChromiumWorker(token_budget=budget)
    try:
        browser = await worker.browser()
        with corpus.CorpusServer() as server:
            for entry in corpus.load_corpus():
                if only and entry.name not in only:
                    continue
                context = await browser.new_context(viewport={"width": 1280, "height": 900})
                try:
                    await corpus.offline_route(context, server.origin)
                    page = await context.new_page()
                    await page.goto(server.url(entry), wait_until="load")
                    samples.append(await corpus.measure_corpus_page(page, entry, budget))
                finally:
                    await context.close()
    finally:
        await worker.close()
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default="", help="comma-separated site prefixes (default: all)")
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--json", type=Path, default=None, help="also write the raw samples here")
    parser.add_argument("--corpus", action="store_true", help="measure the real-page corpus instead")
    parser.add_argument("--pages", default="", help="with --corpus: comma-separated page names (default: all)")
    opts = parser.parse_args()
    if opts.corpus:
        samples = await run_corpus(opts.budget, {p for p in opts.pages.split(",") if p} or None)
        print(corpus_report(samples))
        if opts.json:
            opts.json.write_text(json.dumps([asdict(x) for x in samples], indent=1))
        return
    wanted = {s for s in opts.sites.split(",") if s}
    totals = Totals()
    with OfflineServer() as server:
        worker = ChromiumWorker(token_budget=opts.budget)
        try:
            totals.rss_idle_mb = chromium_rss_mb(await worker.browser_pid())
            for site in discover_sites():
                if wanted and site.prefix not in wanted:
                    continue
                seen: set[str] = set()
                for task_id, steps in site.walkthroughs(site_data(site.prefix, DEFAULT_SEED)).items():
                    await replay(worker, server.origin, site.prefix, task_id, steps, opts.budget, totals, seen)
        finally:
            await worker.close()
    print(f"# Observation benchmark — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{platform.machine()} {platform.system()}, Python {platform.python_version()}\n")
    print(report(totals, opts.budget))
    if totals.problems:
        print("\nNotes (failed or skipped steps):")
        for problem in totals.problems:
            print(f"- {problem}")
    if opts.json:
        opts.json.write_text(json.dumps({"samples": [asdict(x) for x in totals.samples],
                                         "cycles": [asdict(c) for c in totals.cycles],
                                         "rss_peak_mb": totals.rss_peak_mb, "rss_idle_mb": totals.rss_idle_mb},
                                        indent=1))


if __name__ == "__main__":
    asyncio.run(main())
