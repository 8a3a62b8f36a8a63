"""Lab pages discovered by folder: `pages/<name>/page.json` says what the page is, so a page is added without code.

`page.json` holds `library` (the npm package the widget comes from), `category` (multi-select, typeahead, date,
tree, grid, list), `gates` (what the widget gates, in words), `widgets` (one entry per widget on the page, used by
the tests and `benchmarks/bench_widgets.py`) and optionally `api` (data.json keys served as a search endpoint).
Records (SGR-Bench format, `start_url` under `PLACEHOLDER_ORIGIN`) sit in `pages/<name>/records.jsonl`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

LAB_DIR = Path(__file__).parent
PAGES_DIR = LAB_DIR / "pages"
NODE_MODULES = LAB_DIR / "node_modules"
PLACEHOLDER_ORIGIN = "http://sgr-widget-lab.local"


@dataclass(frozen=True)
class Widget:
    """One widget on a lab page, as the bench drives it.

    `label`: the control's label the agent sees; `kind`: how a model sets it (`select`, `select_many`, `pick`
    (type and choose a suggestion), `date`, `range` over `label` and `end_label`, or one range input); `values`: what to set (one or several); `truth`: a JS
    expression (evaluated in the page) returning the widget's true state from the library's own API, as a string
    or a list of strings; `expect`: what `truth` returns once `values` are set.
    """

    label: str
    kind: str
    values: list[str]
    truth: str
    expect: Any
    end_label: str | None = None  # a range over two controls: the end's label


@dataclass(frozen=True)
class LabPage:
    name: str  # folder name = URL path segment
    library: str
    category: str
    gates: str
    widgets: list[Widget] = field(default_factory=list)
    api: dict[str, str] = field(default_factory=dict)  # endpoint name -> data.json key searched by ?q=
    api_delay_ms: int = 0

    @property
    def folder(self) -> Path:
        return PAGES_DIR / self.name

    def path(self) -> str:
        return f"/{self.name}/"

    def records(self) -> list[dict[str, Any]]:
        file = self.folder / "records.jsonl"
        if not file.exists():
            return []
        return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]

    def data(self) -> Any:
        file = self.folder / "data.json"
        return json.loads(file.read_text()) if file.exists() else None


def _page(folder: Path) -> LabPage:
    meta = json.loads((folder / "page.json").read_text())
    widgets = [Widget(**w) for w in meta.get("widgets", [])]
    return LabPage(name=folder.name, library=meta["library"], category=meta["category"], gates=meta["gates"],
                   widgets=widgets, api=meta.get("api", {}), api_delay_ms=int(meta.get("api_delay_ms", 0)))


@lru_cache(maxsize=1)
def lab_pages() -> tuple[LabPage, ...]:
    """Every folder under `pages/` with a `page.json`, in name order."""
    return tuple(_page(d) for d in sorted(PAGES_DIR.iterdir()) if (d / "page.json").exists())


def lab_records() -> list[dict[str, Any]]:
    return [record for page in lab_pages() for record in page.records()]


def vendor_missing() -> str | None:
    """Why the lab's libraries are not available here (None when they are): tests skip with this reason."""
    if NODE_MODULES.is_dir() and any(NODE_MODULES.iterdir()):
        return None
    if shutil.which("npm") is None:
        return "npm is not installed: the widget lab's libraries (tasks/widget_lab/package.json) are missing"
    return "tasks/widget_lab/node_modules is missing: run scripts/install.sh (npm ci)"
