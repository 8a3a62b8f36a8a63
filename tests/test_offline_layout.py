"""The layout of tasks/: small modules, and no module circle even through lazy or type-only imports (the
statistics site's parts once imported each other's types under `if TYPE_CHECKING:`)."""

from __future__ import annotations

from tests.test_import_graph import ROOT, _find_cycle, import_graph

MAX_LINES = 600


def test_tasks_modules_have_no_cycle_counting_every_import() -> None:
    graph = {m: {t for t in targets if t.startswith("tasks.")} for m, targets in import_graph().items()
             if m.startswith("tasks.")}
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_check_sees_type_only_imports() -> None:
    graph = import_graph()
    assert "tasks.offline.sites._stats_data" in graph["tasks.offline.sites._stats_profiles"]
    assert "tasks.offline.sites.regulatory.oracles" in graph["tasks.offline.sites.regulatory.scripted"]


def test_no_tasks_module_over_600_lines() -> None:
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "tasks").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long
