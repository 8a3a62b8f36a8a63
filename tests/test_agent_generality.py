"""The agent stays general: no prompt, tool description/schema, or module of graph/ or browser/ names an offline
site, one of its control labels, option values or answer cells.

The forbidden strings are collected from the released offline suite itself (records + walkthroughs) and from the
held-out set (tasks/offline/heldout: the agent must not know those either), so a new site or task is covered
without editing this test. Generic words (a one-word label such as "Search") are skipped:
only strings specific enough that their presence in agent code could only come from knowing the offline pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.tools.tool_schemas import tool_schemas
from tasks.offline.heldout.release import heldout_records, heldout_walkthroughs
from tasks.offline.suite import build_records, build_walkthroughs, task_sites

ROOT = Path(__file__).resolve().parents[1]
# Phrases a walkthrough uses that are plain UI vocabulary, not site knowledge (tool docs may use them too).
GENERIC_PHRASES = {"search field", "search box", "next page", "all pages"}
_CELL_SPLIT = re.compile(r"[;|]")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _walkthrough_values(steps: list[dict[str, Any]]) -> Iterator[str]:
    """Labels of targets, typed/selected values and option texts of every walkthrough step (not SQL, not notes)."""
    for step in steps:
        args = step.get("args", {})
        for key, value in args.items():
            if key in {"sql", "note", "why", "url", "columns", "fields", "into", "section"}:
                continue
            yield from _strings(value)


def _answer_cells(record: dict[str, Any]) -> Iterator[str]:
    answer = record.get("oracle_answer") or ""
    if answer.strip().upper() == "NONE":
        return
    yield from (cell.strip() for cell in _CELL_SPLIT.split(answer))


def _distinctive(text: str) -> bool:
    """Specific enough to betray site knowledge: several words, or a token mixing letters and digits, or a
    capitalised made-up name; never a bare number, date or a single common word."""
    text = text.strip()
    if text.lower() in GENERIC_PHRASES or re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", text):
        return False  # UI vocabulary, or a snake_case identifier (tool/table vocabulary, not page text)
    if len(text) < 5 or re.fullmatch(r"[\d\s.,:/%+-]*", text) or re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", text):
        return False
    words = re.findall(r"[A-Za-z]+", text)
    if len(words) >= 2 and len(text) >= 8:
        return True
    return bool(re.search(r"[A-Za-z]", text) and re.search(r"\d", text) and len(text) >= 6)


def forbidden_strings() -> dict[str, str]:
    """Distinctive offline-site strings -> where they came from."""
    found: dict[str, str] = {}
    for site in task_sites():
        found[f"/{site.prefix}/"] = f"site prefix {site.prefix}"
        found[site.title] = f"site title {site.prefix}"
    found["sgr-offline"] = "offline origin"
    for record in [*build_records(), *heldout_records()]:
        for cell in _answer_cells(record):
            if _distinctive(cell):
                found.setdefault(cell, f"answer cell of {record['task_id']}")
    for task_id, steps in {**build_walkthroughs(), **heldout_walkthroughs()}.items():
        for value in _walkthrough_values(steps):
            if _distinctive(value):
                found.setdefault(value, f"walkthrough value of {task_id}")
    return found


def agent_texts() -> dict[str, str]:
    """Everything a model or the graph sees of the agent: prompts, tool schemas, graph/ and browser/ sources."""
    texts = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "graph/prompting/prompts").glob("*"))
    }
    for package in ("graph", "browser"):
        for path in sorted((ROOT / package).rglob("*")):
            if path.suffix in {".py", ".js", ".json", ".md"} and path.is_file():  # modules and their docs
                texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for search in (True, False):
        texts[f"tool_schemas(search={search})"] = json.dumps(tool_schemas(search=search), ensure_ascii=False)
    return texts


def leaks(texts: dict[str, str], forbidden: dict[str, str]) -> list[str]:
    patterns = {
        s: re.compile(r"(?<![A-Za-z0-9])" + re.escape(s) + r"(?![A-Za-z0-9])", re.IGNORECASE)
        for s in forbidden
    }
    return [
        f"{name}: {s!r} ({forbidden[s]})"
        for name, text in texts.items()
        for s, pattern in patterns.items()
        if pattern.search(text)
    ]


@pytest.fixture(scope="module")
def forbidden() -> dict[str, str]:
    return forbidden_strings()


def test_every_site_contributes_distinctive_strings(forbidden: dict[str, str]) -> None:
    """The collector is not vacuous: each site gives labels/values from its walkthroughs and answer cells."""
    for site in task_sites():
        own = [s for s, origin in forbidden.items() if f"offline_{site.prefix}_" in origin]
        assert len(own) >= 3, f"site {site.prefix} gives too few distinctive strings: {own}"


def test_leak_detector_catches_a_hard_coded_label(forbidden: dict[str, str]) -> None:
    """Planting one walkthrough label (e.g. a facet label) in a graph module must be reported."""
    label = next(s for s, origin in forbidden.items() if origin.startswith("walkthrough value"))
    planted = {"graph/planted.py": f'FACET = "{label}"\n'}
    assert leaks(planted, forbidden), label
    prefix = task_sites()[0].prefix
    assert leaks({"graph/prompting/prompts/x.md": f"Open the /{prefix}/ pages first."}, forbidden)
    assert not leaks({"graph/clean.py": "Choose the filter whose label matches the task."}, forbidden)


def test_agent_code_names_no_offline_site_label_or_value(forbidden: dict[str, str]) -> None:
    found = leaks(agent_texts(), forbidden)
    assert not found, "agent code names offline-site strings:\n" + "\n".join(found)
