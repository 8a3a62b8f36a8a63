"""Figures about the offline suite in the docs are the suite's own (issue 40): "36 tasks" stayed in several
places after the suite grew to 60 records. Every "offline suite (N tasks|records ...)" in a Markdown page outside
the root README (the lead's) must match what `load_tasks("offline")` loads; a figure kept as a past measurement
says so in words ("as it was when measured") and is not matched."""

from __future__ import annotations

import re
from pathlib import Path

from tasks.loaders import load_tasks

ROOT = Path(__file__).resolve().parents[1]
_FIGURE = re.compile(r"offline suite \((?:all )?(\d+) (task records|records|tasks)")


def _pages() -> list[Path]:
    skip = {".venv", ".git", "node_modules", "sgr_agent.egg-info"}
    return [p for p in ROOT.rglob("*.md") if not skip & set(p.relative_to(ROOT).parts) and p != ROOT / "README.md"]


def test_offline_suite_figures_match_the_suite() -> None:
    tasks = load_tasks("offline")
    expected = {"task records": len(tasks), "records": len(tasks), "tasks": len({t.base_id for t in tasks})}
    found = [(page.relative_to(ROOT), int(n), unit) for page in _pages()
             for n, unit in _FIGURE.findall(page.read_text(encoding="utf-8"))]
    assert found, "no figure found: the pattern no longer matches the docs"
    wrong = [f"{page}: {n} {unit} (the suite has {expected[unit]})" for page, n, unit in found if n != expected[unit]]
    assert not wrong, "\n".join(wrong)
