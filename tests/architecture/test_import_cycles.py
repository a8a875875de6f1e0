"""No import cycle anywhere in ``src/coopeval``, imports inside functions included.

import-linter's layer contracts cannot see a cycle between two modules of one layer (e.g. two
modules of ``coopeval.agents``), and an import placed inside a function hides a cycle from the
interpreter until that function runs. The module graph here is built from the source with
:mod:`ast`: every ``import``/``from … import`` statement anywhere in a module (top level, inside
functions, under ``if TYPE_CHECKING:``) is an edge; ``from package import name`` is an edge to the
submodule ``package.name`` when such a module exists, else to ``package``. A package's
``__init__`` is the module named by the package. The test fails on any strongly connected
component of more than one module, and on a module importing itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = "coopeval"


def module_files(src: Path, root: str) -> dict[str, Path]:
    """Dotted module name → source file for every module of package ``root`` under ``src``."""
    found: dict[str, Path] = {}
    for path in sorted((src / root).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a (possibly relative) ``from``-import's module."""
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def imported_modules(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The package's modules that module ``name`` imports anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    edges: set[str] = set()

    def nearest_known(dotted: str) -> str | None:
        parts = dotted.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in known:
                return candidate
            parts.pop()
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (hit := nearest_known(alias.name)) is not None:
                    edges.add(hit)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                hit = full if full in known else nearest_known(base)
                if hit is not None:
                    edges.add(hit)
    return edges


def import_graph(src: Path = SRC, root: str = ROOT) -> dict[str, set[str]]:
    """Module → the modules of the package it imports (self-imports kept, to be reported)."""
    known = module_files(src, root)
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def strongly_connected(graph: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                yield sorted(component)


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: components of two or more modules, and self-imports."""
    found = [c for c in strongly_connected(graph) if len(c) > 1]
    found += [[m] for m, targets in graph.items() if m in targets]
    return sorted(found)


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50  # the walk really found the package
    found = cycles(graph)
    detail = "\n".join(
        " <-> ".join(c) + "\n    edges: " + "; ".join(f"{m} -> {t}" for m in c for t in sorted(graph[m] & set(c)))
        for c in found
    )
    assert not found, f"import cycles in src/{ROOT} (imports inside functions count):\n{detail}"


def _write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def test_a_cycle_hidden_in_a_function_is_found(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\n",
            "pkg/b.py": "def f():\n    from pkg import a\n    return a\n",
            "pkg/c.py": "import pkg.a\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/d.py": "from . import e\n",
            "pkg/sub/e.py": "from ..sub import d\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.b"] == {"pkg.a"}  # `from pkg import a` is the submodule, not the package
    assert graph["pkg.sub.d"] == {"pkg.sub.e"}  # relative imports resolved
    assert cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.sub.d", "pkg.sub.e"]]


def test_an_acyclic_package_passes(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "import pkg.b\n", "pkg/b.py": "import os\n"})
    assert cycles(import_graph(tmp_path, "pkg")) == []


@pytest.mark.parametrize("size", [2, 5])
def test_a_ring_is_one_component(size: int) -> None:
    ring = {f"m{i}": {f"m{(i + 1) % size}"} for i in range(size)}
    assert cycles(ring) == [sorted(ring)]
