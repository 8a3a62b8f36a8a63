"""Widget lab benchmark (issue 38): one row per widget of every lab page (discovered from the registry, so pages
added by folder get rows without editing this file), driven through `PageDriver` with its natural first actions
(`benchmarks/widget_drive.py`) and judged by the widget library's own state.

Columns: shown (the control line shows the widget's own selection), set by the first natural action, silent
failures (ok replies while the widget did not hold the value), false alarms (errors while it did), rows
complete (the result table read whole holds as many rows as the page says it found).
Targets (issue 38): >= 90% set first, 0 silent failures, 0 false alarms, every answer row readable.

Run: .venv/bin/python benchmarks/bench_widgets.py [--pages a,b] [--verbose] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.widget_drive import WidgetRun, drive  # noqa: E402
from browser.session import ChromiumWorker  # noqa: E402
from tasks.widget_lab.registry import lab_pages, vendor_missing  # noqa: E402
from tasks.widget_lab.server import LabServer  # noqa: E402


async def run(pages: list[str] | None, verbose: bool) -> list[WidgetRun]:
    runs: list[WidgetRun] = []
    worker = ChromiumWorker()
    try:
        with LabServer() as lab, tempfile.TemporaryDirectory() as tmp:
            for page in lab_pages():
                if pages and page.name not in pages:
                    continue
                for widget in page.widgets:
                    async with worker.task_browser(tmp, [lab.origin]) as browser:
                        result = await drive(browser, lab.url(page.name), page, widget)
                    runs.append(result)
                    if verbose:
                        print(f"# {page.name} / {widget.label}", *result.replies, sep="\n  ", file=sys.stderr)
    finally:
        await worker.close()
    return runs


def table(runs: list[WidgetRun]) -> str:
    yes = {True: "yes", False: "NO", None: "-"}
    lines = ["| page | library | category | widget | shown | set first | silent | false alarms | rows complete |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r.page} | {r.library} | {r.category} | {r.widget} | {yes[r.shown]} | {yes[r.first_ok]} "
                     f"| {r.silent} | {r.false_alarms} | {yes[r.rows_complete]} |")
    n = len(runs) or 1
    first = sum(r.first_ok for r in runs)
    lines.append(f"| **all** | | | {len(runs)} widgets | {sum(r.shown for r in runs)}/{len(runs)} "
                 f"| {first}/{len(runs)} ({100 * first / n:.0f}%) | {sum(r.silent for r in runs)} "
                 f"| {sum(r.false_alarms for r in runs)} | {sum(bool(r.rows_complete) for r in runs)}/{len(runs)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", help="comma-separated page names (default: every lab page)")
    parser.add_argument("--verbose", action="store_true", help="print each action's reply to stderr")
    parser.add_argument("--json", type=Path, help="write the rows as JSON here")
    args = parser.parse_args()
    if reason := vendor_missing():
        sys.exit(reason)
    runs = asyncio.run(run(args.pages.split(",") if args.pages else None, args.verbose))
    print(table(runs))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1))


if __name__ == "__main__":
    main()
