"""Print the shape of a package: its import circles, largest modules and longest functions.

    python scripts/package_shape.py [PACKAGE_DIR]      # default: tflint_graph

Import circles are the strongly connected components of the module graph that grimp (the
library under ``lint-imports``) builds, function-level and ``TYPE_CHECKING`` imports
included; run it on an older checkout (``git worktree add``) to compare.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import grimp


def circles(package: str) -> list[list[str]]:
    """Every set of two or more modules that import each other, largest first (Tarjan)."""
    graph = grimp.build_graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return sorted(found, key=len, reverse=True)


def sizes(root: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(lines, module) and (lines, module:function), longest first."""
    modules, functions = [], []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root.parent))
        modules.append((len(source.splitlines()), name))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                functions.append((node.end_lineno - node.lineno + 1, f"{name}:{node.name}"))
    return sorted(modules, reverse=True), sorted(functions, reverse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=Path, default=Path("tflint_graph"))
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args(argv)
    root = args.package.resolve()
    sys.path.insert(0, str(root.parent))
    found = circles(root.name)
    print(f"import circles: {len(found)}")
    for component in found:
        print(f"  {len(component)} modules: {', '.join(component)}")
    modules, functions = sizes(root)
    print(f"modules: {len(modules)}, {sum(n for n, _ in modules)} lines; largest:")
    for lines, name in modules[: args.top]:
        print(f"  {lines:5d}  {name}")
    print(f"functions over 80 lines: {sum(1 for n, _ in functions if n > 80)}; longest:")
    for lines, name in functions[: args.top]:
        print(f"  {lines:5d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
