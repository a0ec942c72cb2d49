"""The package's modules import each other without a cycle.

The graph is read from the source (the AST of every module under ``ebssim/``), not from a run:
every ``import`` and ``from ... import`` anywhere in a module counts, the ones inside functions
and methods included (a function-level import only defers a cycle to the first call). Imports
under ``if TYPE_CHECKING:`` do not count: they never run, and annotations may name the types of
a module above. ``from X import name`` is an edge to ``X`` and, where ``X.name`` is a module of
the package, to that module too. A cycle fails the test with each module of it and the lines of
the imports that close it; the way out is to move what both sides need below both (docs/design.md,
"Where things go").
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Mapping, Set

import ebssim
import pytest

PACKAGE = Path(ebssim.__file__).parent

# module -> {imported module: line of the first import of it}
Graph = Dict[str, Dict[str, int]]


def _modules(root: Path) -> Dict[str, Path]:
    """Every module of the package at ``root``, by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING`` (alone: an ``if`` that also runs otherwise counts)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> List[ast.stmt]:
    """The import statements of a module that run: at any depth, but not under ``if TYPE_CHECKING:``
    (its ``else:`` branch does run)."""
    found: List[ast.stmt] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(root: Path) -> Graph:
    """The package's modules and what each imports of the package (see the module docstring)."""
    modules = _modules(root)
    graph: Graph = {name: {} for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                assert isinstance(node, ast.ImportFrom)
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base_name = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_name = node.module or ""
                targets = [base_name] + [f"{base_name}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].setdefault(target, node.lineno)
    return graph


def cycles(graph: Mapping[str, Mapping[str, int]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(found)


def _loop(graph: Mapping[str, Mapping[str, int]], component: List[str]) -> List[str]:
    """One cycle through the component's first module, as the modules in order (the first again last)."""
    start, inside = component[0], set(component)
    came_from: Dict[str, str] = {}
    queue = [start]
    while queue:  # breadth first: the shortest way back to start
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1] + [start]
            if w in inside and w != start and w not in came_from:
                came_from[w] = v
                queue.append(w)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def describe(graph: Mapping[str, Mapping[str, int]], component: List[str]) -> str:
    loop = _loop(graph, component)
    steps = ", ".join(f"{a} imports {b} (line {graph[a][b]})" for a, b in zip(loop, loop[1:]))
    return f"{len(component)} modules import each other: {', '.join(component)}; e.g. {steps}"


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and "ebssim.simulation" in graph["ebssim.fleet"]  # the graph was read
    found = cycles(graph)
    assert not found, "\n".join(describe(graph, c) for c in found)


def _package(tmp_path: Path, files: Mapping[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    "b_imports_a",
    [
        "from . import a\n",
        "import pkg.a\n",
        "from .a import x\n",
        "def f():\n    from .a import x\n",  # a function-level import counts
        "class C:\n    def m(self):\n        import pkg.a\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    from .a import x\n",
        "from .sub.c import y\n",  # b -> sub.c -> a -> b
    ],
)
def test_a_cycle_is_found_and_named(tmp_path: Path, b_imports_a: str) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from .b import y\nx = 1\n",
            "b.py": b_imports_a + "y = 2\n",
            "sub/__init__.py": "",
            "sub/c.py": "from ..a import x\ny = 3\n",
        },
    )
    graph = import_graph(root)
    (component,) = cycles(graph)
    assert {"pkg.a", "pkg.b"} <= set(component)
    text = describe(graph, component)
    assert "pkg.a imports pkg.b (line 1)" in text and text.endswith(")")


@pytest.mark.parametrize(
    "b_imports_a",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
        "import typing\nif typing.TYPE_CHECKING:\n    from . import a\n",
        "import os\n",
        "from .sub import c\n",  # sub.c imports nothing back
    ],
)
def test_type_checking_imports_and_other_modules_make_no_cycle(tmp_path: Path, b_imports_a: str) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from .b import y\nx = 1\n",
            "b.py": b_imports_a + "y = 2\n",
            "sub/__init__.py": "",
            "sub/c.py": "y = 3\n",
        },
    )
    assert cycles(import_graph(root)) == []


def test_a_relative_import_resolves_from_the_package(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "from . import a\n",
            "a.py": "from .sub import c\n",
            "sub/__init__.py": "from .c import y\nfrom .. import a\n",
            "sub/c.py": "from ..a import x\n",
        },
    )
    graph = import_graph(root)
    assert graph["pkg"] == {"pkg.a": 1}
    assert graph["pkg.a"] == {"pkg.sub": 1, "pkg.sub.c": 1}
    assert graph["pkg.sub"] == {"pkg.sub.c": 1, "pkg": 2, "pkg.a": 2}
    assert graph["pkg.sub.c"] == {"pkg.a": 1}
    assert cycles(graph) == [["pkg", "pkg.a", "pkg.sub", "pkg.sub.c"]]
