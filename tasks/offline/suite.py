"""The offline suite as a release: every site's task records and walkthroughs, written like SGR-Bench.

`write_release` produces the same layout as the real dataset (`data_en/{goal,constraint}/*.json` with nested
objects, `goal.jsonl` / `constraint.jsonl` where `metadata` and `rubric` are JSON-encoded strings like the
`*_hf.jsonl` splits) plus `walkthroughs/<base_id>.json`. The committed copy under `tasks/offline/data` is
checked against a fresh build (`sgr offline build --check`), so data drift in a site shows up in CI.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data
from tasks.offline.registry import PLACEHOLDER_ORIGIN, Site, Step

DATA_DIR = Path(__file__).parent / "data"
GOAL_SUFFIX = "-g"


@dataclass(frozen=True)
class Mechanic:
    """Where a page mechanic of the issue's list lives: `probe` (a GET path, `{pdf}` = some PDF's path) must
    answer 200 with `marker` (a regex) in its body, which the suite test checks over HTTP."""

    site: str
    probe: str
    marker: str
    how: str


MECHANICS: dict[str, tuple[Mechanic, ...]] = {
    "state in URL query parameters": (
        Mechanic("scholar", "/scholar/search?terms=kernel&field=title", r'<form id="advanced-search" method="get"',
                 "every search control is a GET parameter"),
        Mechanic("vulns", "/vulns/search", r'method="get"', "keyword/severity/date/product in the URL"),
    ),
    "state only in a POSTed form": (
        Mechanic("regulatory", "/regulatory/documents", r'<form id="document-filters" method="post"',
                 "library filters are POSTed; the URL never changes"),
        Mechanic("stats", "/stats/query", r'method="post"', "query form POSTed; results only after submit"),
    ),
    "client-side rendering after a delayed fetch": (
        Mechanic("water", "/water/query", r'fetch\("/water/api/results\?',
                 "results fetched from /water/api/results (0.7 s delay), drawn and paged by JS"),
    ),
    "pagination by page numbers": (
        Mechanic("scholar", "/scholar/search?category=cs.LG", r'page=2">2</a>', "numbered page links"),
        Mechanic("regulatory", "/regulatory/complaints", r'page=2">2</a>', "numbered page links plus Next"),
    ),
    "pagination by next": (
        Mechanic("water", "/water/stations?status=all", r'rel="next">Next', "Next / Previous links only"),
        Mechanic("vulns", "/vulns/search?keyword=", r'rel="next"[^>]*>Next', "Next link only"),
    ),
    "pagination by page-size selector": (
        Mechanic("regulatory", "/regulatory/complaints", r'<label for="size">Rows per page</label>',
                 "Rows per page 10/25/50/100, default 10"),
        Mechanic("scholar", "/scholar/search", r'<label for="size">Results per page</label>', "10/25/50"),
    ),
    "custom (non-native) dropdown": (
        Mechanic("regulatory", "/regulatory/complaints", r'role="combobox"[\s\S]*role="listbox"',
                 "Company facet: ARIA combobox + listbox, hidden input"),
    ),
    "date-range widget": (
        Mechanic("regulatory", "/regulatory/complaints", r'id="date_received_min" name="date_received_min" '
                 r'value="2022-01-01"', "Date received from/to with presets; default the last 3 years"),
        Mechanic("water", "/water/query", r'id="startDate"', "Start/End date; default the last year of data"),
    ),
    "modal or cookie banner": (
        Mechanic("regulatory", "/regulatory/complaints", r'id="cookie-banner" role="dialog"',
                 "full-page cookie banner blocks clicks until dismissed"),
    ),
    "iframe holding a control": (
        Mechanic("stats", "/stats/explore", r"<iframe", "vintage selector inside an iframe"),
    ),
    "CSV download": (
        Mechanic("water", "/water/api/results.csv", r"^Location ID,", "query results as CSV"),
        Mechanic("regulatory", "/regulatory/complaints.csv", r"^Complaint ID,", "filtered complaints as CSV"),
    ),
    "PDF": (
        Mechanic("regulatory", "{pdf}", r"^%PDF", "consent orders with a relief table"),
    ),
}


def task_sites() -> list[Site]:
    """Sites that contribute tasks (the adversarial pages have none)."""
    return [s for s in discover_sites() if s.tasks(site_data(s.prefix, DEFAULT_SEED))]


def build_records(seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """All records of all sites (constraint and goal), in site then task order."""
    records: list[dict[str, Any]] = []
    for site in discover_sites():
        records.extend(site.tasks(site_data(site.prefix, seed)))
    ids = [r["task_id"] for r in records]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate task ids across sites: {duplicates}")
    return records


def build_walkthroughs(seed: int = DEFAULT_SEED) -> dict[str, list[Step]]:
    walks: dict[str, list[Step]] = {}
    for site in discover_sites():
        walks.update(site.walkthroughs(site_data(site.prefix, seed)))
    return walks


def _pretty(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"


def _hf_line(record: dict[str, Any]) -> str:
    """The `*_hf.jsonl` form: nested objects as JSON strings."""
    flat = {k: json.dumps(v, ensure_ascii=False) if k in ("metadata", "rubric") else v for k, v in record.items()}
    return json.dumps(flat, ensure_ascii=False)


def release_files(seed: int = DEFAULT_SEED) -> dict[str, str]:
    """Relative path -> file text of the whole release; pure, so `--check` can diff it against disk."""
    records = build_records(seed)
    return release_texts(records, build_walkthroughs(seed), suite_readme(records))


def release_texts(records: list[dict[str, Any]], walks: dict[str, list[Step]], readme: str) -> dict[str, str]:
    """The release layout of any record set (this suite's, the held-out set's): per-task JSON, JSONL splits,
    walkthroughs and the README."""
    files: dict[str, str] = {}
    lines: dict[str, list[str]] = {"goal": [], "constraint": []}
    for record in records:
        split = "goal" if record["task_id"].endswith(GOAL_SUFFIX) else "constraint"
        files[f"data_en/{split}/{record['task_id']}.json"] = _pretty(record)
        lines[split].append(_hf_line(record))
    for split, split_lines in lines.items():
        files[f"{split}.jsonl"] = "\n".join(split_lines) + "\n"
    for base_id, steps in walks.items():
        files[f"walkthroughs/{base_id}.json"] = _pretty(steps)
    files["README.md"] = readme
    return files


HOW_TO_ADD = """## How to add a task

1. In the site's package (`tasks/offline/sites/<site>/`: `data`, `search`, `pages`, `oracles`, `scripted`)
   choose the task's search from the data in code (cardinality 2-20, the trap must change the answer, the
   answer must not be visible by default).
2. Compute the oracle rows from the data and add a `TaskDraft` (both wordings come from it) to `tasks()`
   (`oracles.py`).
3. Add the scripted walkthrough to `walkthroughs()` (`scripted.py`): browser actions addressed by label/text, values read by
   `extract_rows`, ordered by `finish`.
4. Run `sgr offline build`, then `pytest tests/test_offline_suite.py` (default-state crawl, record loading,
   Chromium replay) and commit `tasks/offline/data`.
"""


def suite_readme(records: list[dict[str, Any]]) -> str:
    """The suite's documentation, generated from the sites and records so it cannot drift from them."""
    lines = ["# Offline SGR suite (generated by `sgr offline build`; do not edit)", ""]
    for site in discover_sites():
        module = sys.modules[site.routes.__module__]  # the module serving the pages describes the site
        lines += [f"## {site.title} (`/{site.prefix}/`, {site.family})", "", (module.__doc__ or "").strip(), ""]
        for record in records:
            if record["start_url"].startswith(f"{PLACEHOLDER_ORIGIN}/{site.prefix}/") and \
                    not record["task_id"].endswith(GOAL_SUFFIX):
                meta = record["metadata"]
                shape = meta.get("task_shape", "copy")
                lines.append(f"- `{record['task_id']}` ({record['oracle_output_cardinality']} rows, {shape}): "
                             + "; ".join(meta["State-Gated Retrieval"]))
                if meta.get("mirrors"):
                    lines.append(f"  - mirrors: {meta['mirrors']}")
                lines += [f"  - phase {i}: {phase}" for i, phase in enumerate(meta.get("phases", []), 1)]
                derived = {k: v for k, v in record["rubric"]["normalization"].items() if k in meta.get("derived", [])}
                lines += [f"  - derived `{k}`: {v}" for k, v in derived.items()]
                lines += [f"  - trap: {trap}" for trap in meta.get("traps", [])]
        lines.append("")
    lines += ["## Page mechanics", ""]
    for name, places in MECHANICS.items():
        lines.append(f"- {name}: " + "; ".join(f"`{m.site}` {m.how}" for m in places))
    return "\n".join([*lines, "", HOW_TO_ADD])


def _on_disk(out_dir: Path) -> set[str]:
    patterns = ("data_en/goal/*.json", "data_en/constraint/*.json", "*.jsonl", "walkthroughs/*.json", "README.md")
    return {p.relative_to(out_dir).as_posix() for pattern in patterns for p in out_dir.glob(pattern)}


def check_release(out_dir: Path = DATA_DIR, seed: int = DEFAULT_SEED,
                  wanted: dict[str, str] | None = None) -> list[str]:
    """Differences between the release on disk and a fresh build (empty when up to date); `wanted` is another
    release's files (default: this suite's)."""
    wanted = release_files(seed) if wanted is None else wanted
    problems = [f"missing: {p}" for p in sorted(set(wanted) - _on_disk(out_dir))]
    problems += [f"stale (no longer generated): {p}" for p in sorted(_on_disk(out_dir) - set(wanted))]
    for rel, text in sorted(wanted.items()):
        path = out_dir / rel
        if path.exists() and path.read_text(encoding="utf-8") != text:
            problems.append(f"differs: {rel}")
    return problems


def write_release(out_dir: Path = DATA_DIR, seed: int = DEFAULT_SEED,
                  wanted: dict[str, str] | None = None) -> list[Path]:
    """Write (and prune) the release files (default: this suite's); returns the paths written."""
    wanted = release_files(seed) if wanted is None else wanted
    for stale in _on_disk(out_dir) - set(wanted):
        (out_dir / stale).unlink()
    written = []
    for rel, text in sorted(wanted.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
