"""The import cycles of a package: the strongly connected components of its import graph.

    python tools/import_cycles.py [SRC_DIR] [PACKAGE]     (defaults: src, websearch)

Every `import` and `from ... import` statement in the package's source counts, read from the
AST (nothing is imported): absolute and relative ones, those inside functions, and type-only
ones under `if TYPE_CHECKING:` (a cycle a type checker sees is still a cycle between the
modules, and the next runtime import along it closes it). `from package import name` counts as
an import of the submodule `package.name` when there is one, else of `package`. Importing
`a.b` is not counted as importing `a` (every submodule would join its package's cycle);
`importlib` calls by string are not seen. Prints each cycle (largest first) and their count;
exits 1 when there is any. `cycles()` gives the same to a test.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path


def modules(src: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `src`, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[str]:
    """The modules of `known` that module `name` (at `path`) imports."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _within(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield from [sub] if sub in known else _within(base, known)


def _within(dotted: str, known: Mapping[str, Path]) -> Iterator[str]:
    """`dotted` if it is a module of the package (or the nearest enclosing one that is)."""
    parts = dotted.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            yield candidate
            return
        parts.pop()


def graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (itself left out)."""
    known = modules(src, package)
    return {name: set(_imports(name, path, known)) - {name} for name, path in known.items()}


def cycles(src: Path | str = "src", package: str = "websearch") -> list[frozenset[str]]:
    """The strongly connected components of more than one module, largest first."""
    edges = graph(Path(src), package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0

    def visit(root: str) -> None:  # Tarjan's algorithm, iterative (the graph may be deep)
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return sorted(found, key=lambda c: (-len(c), sorted(c)))


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else Path("src")
    package = argv[1] if len(argv) > 1 else "websearch"
    found = cycles(src, package)
    for i, component in enumerate(found, 1):
        print(f"cycle {i} ({len(component)} modules): {', '.join(sorted(component))}")
    print(f"{len(found)} cycle(s), {sum(map(len, found))} modules in them")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
