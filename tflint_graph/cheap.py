"""The module summary of a file that cannot hold traced code, from CPython's ``ast``.

Most files of a real tree never mention TensorFlow: the engine checks their syntax with
``ast.parse`` (which it runs anyway) and summarizes them from that tree, never paying for a
libcst parse.  Each function here is the twin of the libcst one in ``project.py`` and must
give exactly the same result (``tests/test_prefilter.py`` compares them on every fixture).
"""

from __future__ import annotations

import ast

from tflint_graph.project import LOCAL, ProjectView, may_be_project


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of attributes on a name; ``""`` where libcst's twin gives it."""
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def module_imports(tree: ast.Module, view: ProjectView) -> dict[str, str]:
    """Twin of ``summary.module_imports``: module-level import bindings, absolute."""
    found: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname is not None:
                    found[alias.asname] = alias.name
                else:  # `import a.b` binds `a`
                    head = alias.name.partition(".")[0]
                    found[head] = head
        elif isinstance(stmt, ast.ImportFrom):
            if any(alias.name == "*" for alias in stmt.names):
                continue
            base = "." * stmt.level + (stmt.module or "")
            sep = "" if not base or base.endswith(".") else "."
            for alias in stmt.names:
                bound = alias.asname if alias.asname is not None else alias.name
                found[bound] = view.absolute(f"{base}{sep}{alias.name}")
    return found


def module_classes(tree: ast.Module, imports: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Twin of ``summary.module_classes``: module-level classes and their bases."""
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    names = {c.name for c in classes}
    found: dict[str, tuple[str, ...]] = {}
    for cls in classes:
        refs: list[str] = []
        for base in cls.bases:
            # libcst keeps `*bases` as an argument whose value is the name after the star.
            text = _dotted(base.value if isinstance(base, ast.Starred) else base)
            head, _, tail = text.partition(".")
            if head in imports:
                refs.append(f"{imports[head]}.{tail}" if tail else imports[head])
            elif head in names and not tail:
                refs.append(LOCAL + head)
        found[cls.name] = tuple(refs)
    return found


def called_imports(tree: ast.Module, imports: dict[str, str]) -> set[str]:
    """Twin of ``summary.called_imports``: imported names called anywhere in the module."""
    found: set[str] = set()
    if not imports:
        return found
    for node in _calls(tree):
        head, _, tail = _dotted(node.func).partition(".")
        if head in imports:
            name = f"{imports[head]}.{tail}" if tail else imports[head]
            if may_be_project(name):
                found.add(name)
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` as a list, without its generators (about twice as fast:
    every file's tree is walked once, by the engine's nesting guard)."""
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def _calls(tree: ast.AST) -> list[ast.Call]:
    """Every call in ``tree``, in no particular order (``ast.walk`` unrolled)."""
    calls: list[ast.Call] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if type(node) is ast.Call:
            calls.append(node)
        stack += child_nodes(node)
    return calls
