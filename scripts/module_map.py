#!/usr/bin/env python3
"""The witness package's map: modules and lines per package, the top-level modules, and its
import cycles, counted two ways: imports run when a module is imported (module level,
``TYPE_CHECKING`` blocks left out) and all imports (function level too). tests/test_layout.py
keeps both at 0.

    python scripts/module_map.py
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def modules(root: Path = REPO) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in sorted((root / "witness").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(modules of the package ``name`` imports at import time, all it imports)."""
    at_import, every = set(), set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            child_top = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(package[: len(package) - child.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in child.names]
            for target in targets:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    every.add(target)
                    if child_top:
                        at_import.add(target)
            visit(child, child_top)

    visit(ast.parse(path.read_text()), True)
    return at_import, every


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return found


def import_cycles(root: Path = REPO) -> tuple[list[list[str]], list[list[str]]]:
    """(cycles at import time, cycles counting function-level imports too)."""
    known = modules(root)
    graphs = {name: imports(name, path, known) for name, path in known.items()}
    return cycles({n: g[0] for n, g in graphs.items()}), cycles({n: g[1] for n, g in graphs.items()})


def main() -> None:
    known = modules()
    lines: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, path in known.items():
        parts = name.split(".")
        group = parts[1] if len(parts) > 2 or path.name == "__init__.py" and len(parts) > 1 else "(top level)"
        lines[group][0] += 1
        lines[group][1] += len(path.read_text().splitlines())
    print(f"{'package':20s} {'modules':>7s} {'lines':>7s}")
    for group, (count, total) in sorted(lines.items()):
        print(f"{group:20s} {count:7d} {total:7d}")
    print(f"{'total':20s} {len(known):7d} {sum(t for _, t in lines.values()):7d}")
    print("top level:", " ".join(sorted(n.split(".")[1] for n, p in known.items()
                                         if n.count(".") == 1 and p.name != "__init__.py")))
    at_import, every = import_cycles()
    print(f"import cycles at import time: {len(at_import)}", *at_import, sep="\n  ")
    print(f"import cycles counting function-level imports: {len(every)}", *every, sep="\n  ")


if __name__ == "__main__":
    main()
