"""The package layering of the design card, read from the source (every import statement, lazy ones too).

agent/ is the top (cli -> commands -> runner -> solve); graph/ drives browser/ through its typed interface;
eval/ is pure; no package below agent/ may import it; no package cycle; no module cycle at all, counting lazy
imports and those under `TYPE_CHECKING` (a lazy import hides a circle, it does not remove it); inside agent/ the
subpackages keep their own layers; no module over 600 lines.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "browser", "graph", "tasks", "eval")

FORBIDDEN = {
    "graph": {"agent", "eval"},
    "browser": {"agent", "graph", "tasks", "eval"},
    "tasks": {"agent", "graph", "browser"},
    "eval": {"agent", "graph", "browser"},
}


# Inside agent/: what each part may NOT import (reports read run folders; the runner knows nothing of prompts).
AGENT_FORBIDDEN = {
    "agent.rundir": {"agent.runner", "agent.commands", "agent.reports", "agent.solve", "agent.clients",
                     "agent.measuring", "agent.cli"},
    "agent.clients": {"agent.runner", "agent.commands", "agent.reports", "agent.solve", "agent.cli"},
    "agent.webenv": {"agent.runner", "agent.commands", "agent.reports", "agent.solve", "agent.cli"},
    "agent.solve": {"agent.runner", "agent.commands", "agent.reports", "agent.cli"},
    "agent.reports": {"agent.runner", "agent.commands", "agent.solve", "agent.cli"},
    "agent.runner": {"agent.commands", "agent.cli", "graph.prompting"},
    "agent.measuring": {"agent.runner", "agent.commands", "agent.reports", "agent.cli"},
    "agent.commands": {"agent.cli"},
}
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_nodes(tree: ast.Module, import_time_only: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, or only those run when the module is imported (not inside a function, not
    under `if TYPE_CHECKING:`): lazy imports are how a package breaks its own module cycles on purpose."""
    if not import_time_only:
        return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _imports(path: Path, module: str, import_time_only: bool) -> set[str]:
    """Absolute names of the project modules this file imports (relative imports resolved)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8")), import_time_only):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in PACKAGES}


def import_graph(import_time_only: bool = False) -> dict[str, set[str]]:
    files = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if ".venv" not in p.parts}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in files.items():
        for name in _imports(path, module, import_time_only):
            while name and name not in files:  # `from a.b import c` names c, which may be a function
                name = name.rpartition(".")[0]
            if name and name != module:
                graph[module].add(name)
    return {m: graph.get(m, set()) for m in files}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = 1, stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node], _ = 2, stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def _package_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], set[str]]:
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for module, targets in graph.items():
        for target in targets:
            a, b = module.split(".")[0], target.split(".")[0]
            if a != b:
                edges[(a, b)].add(module)
    return edges


def test_the_graph_sees_real_imports() -> None:
    graph = import_graph()
    assert "graph.settings" in graph["graph.nodes.deps"]  # `from graph.settings import Budgets, ...`
    assert "graph.nodes.deps" in graph["graph.nodes.common"]
    assert "graph.settings" in graph["agent.config"]
    assert "browser.actions" in graph["browser.session"]  # a lazy import inside a method
    assert "browser.actions" not in import_graph(import_time_only=True)["browser.session"]
    assert "tasks.offline.sites._stats_data" in graph["tasks.offline.sites._stats_profiles"]  # TYPE_CHECKING only


def test_cycle_finder_finds_a_cycle() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set(), "c": {"a"}}) is None


def test_no_module_import_cycle_at_import_time() -> None:
    cycle = _find_cycle(import_graph(import_time_only=True))
    assert cycle is None, " -> ".join(cycle or [])


def test_no_module_import_cycle_at_all() -> None:
    """Lazy and TYPE_CHECKING imports count: a circle broken only by import order is still a circle."""
    cycle = _find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def _owner(module: str, prefixes: dict[str, set[str]]) -> str | None:
    return next((p for p in prefixes if module == p or module.startswith(p + ".")), None)


def test_agent_parts_keep_their_layers() -> None:
    broken = []
    for module, targets in import_graph().items():
        part = _owner(module, AGENT_FORBIDDEN)
        if part is None:
            continue
        broken += [f"{module} imports {t}" for t in sorted(targets)
                   if any(t == f or t.startswith(f + ".") for f in AGENT_FORBIDDEN[part])]
    assert not broken, broken


def test_agent_layer_rules_see_real_imports() -> None:
    graph = import_graph()
    assert "agent.rundir.cells" in graph["agent.reports.summary"]
    assert "agent.solve" in graph["agent.runner.bench"]
    assert _owner("agent.runner.bench", AGENT_FORBIDDEN) == "agent.runner"


def test_no_module_is_over_600_lines() -> None:
    """Generated data is JSON, not code; every source file (Python, and the JavaScript run in the page) stays
    small enough to read in one sitting."""
    sources = [p for pattern in ("*.py", "*.js") for p in ROOT.rglob(pattern)]
    long = {str(p.relative_to(ROOT)): n for p in sources
            if not {".venv", ".git", "build", "node_modules"} & set(p.parts)
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_packages_keep_their_layers() -> None:
    edges = _package_edges(import_graph())
    broken = {f"{a} imports {b} in {sorted(mods)}" for (a, b), mods in edges.items() if b in FORBIDDEN.get(a, ())}
    assert not broken, sorted(broken)


def test_no_package_cycle_except_the_reference_answer_check() -> None:
    """eval/ reads tasks.spec; the one way back is `sgr tasks validate` checking each gold answer with the
    evaluator's parser (tasks/answer_check.py). Any other tasks -> eval import would make the two one lump."""
    edges = _package_edges(import_graph())
    assert edges.get(("tasks", "eval"), set()) <= {"tasks.answer_check"}
    packages = {a: {b for (x, b) in edges if x == a and (x, b) != ("tasks", "eval")} for a in PACKAGES}
    cycle = _find_cycle(packages)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_graph_imports_nothing_of_the_measuring_side() -> None:
    """The product's core never depends on how the project measures itself (scripted and faulty policies, play,
    the fake server, paths): graph/, browser/, tasks/ and eval/ import nothing of agent.measuring, lazily or not."""
    graph = import_graph()
    leaks = {m: sorted(t for t in targets if t.startswith("agent.measuring"))
             for m, targets in graph.items() if m.split(".")[0] in {"graph", "browser", "tasks", "eval"}}
    assert not {m: t for m, t in leaks.items() if t}
    assert any(t.startswith("agent.measuring") for t in graph["agent.clients.policies"])  # the check sees lazy imports
