"""What one analysed module tells the rest of the run (see ``project.py``)."""

from __future__ import annotations

import libcst as cst

from tflint_graph import walk
from tflint_graph.callsites import imported_names, module_tf_functions
from tflint_graph.checks._export import export_references, foreign_exports
from tflint_graph.context import ModuleContext
from tflint_graph.project import LOCAL, ModuleSummary, ProjectView, may_be_project


def summarize(ctx: ModuleContext) -> ModuleSummary:
    finder = ctx.trace_finder
    called: set[str] = set()
    outgoing = []
    if finder is not None:
        outgoing = list(finder.outgoing)
        for _, call in finder.collector.calls:
            called.update(imported_names(ctx, call.func))
        # Exported without being called (`signatures={"embed": embed}`): TFG301 needs to know.
        called |= export_references(ctx)
    imports = module_imports(ctx.module, ctx.view)
    return ModuleSummary(
        module=ctx.view.module,
        exports=module_tf_functions(ctx),
        reexports=imports,
        outgoing=outgoing,
        called_imports=called,
        classes=module_classes(ctx.module, imports),
        exports_elsewhere=foreign_exports(ctx) if finder is not None else [],
        remote=list(ctx.remote),
    )


def module_imports(module: cst.Module, view: ProjectView) -> dict[str, str]:
    """Module-level import bindings, as absolute names: what ``from pkg import name`` can
    reach through this module (``from .helpers import normalize`` in ``__init__.py``)."""
    found: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        found[alias.asname.name.value] = full
                    else:  # `import a.b` binds `a`
                        head = full.partition(".")[0]
                        found[head] = head
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative)
                if small.module is not None:
                    base += _dotted(small.module)
                for alias in small.names:
                    name = _dotted(alias.name)
                    bound = name
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        bound = alias.asname.name.value
                    sep = "" if not base or base.endswith(".") else "."
                    found[bound] = view.absolute(f"{base}{sep}{name}")
    return found


def module_classes(module: cst.Module, imports: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Module-level classes and what their bases refer to, from the syntax alone (a module
    subclassing another module's Keras model need not import TensorFlow itself)."""
    names = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    found: dict[str, tuple[str, ...]] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.ClassDef):
            continue
        refs: list[str] = []
        for arg in stmt.bases:
            text = _dotted(arg.value) if arg.keyword is None else ""
            head, _, tail = text.partition(".")
            if head in imports:
                refs.append(f"{imports[head]}.{tail}" if tail else imports[head])
            elif head in names and not tail:
                refs.append(LOCAL + head)
        found[stmt.name.value] = tuple(refs)
    return found


class _CalledImports(walk.Visitor):
    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports
        self.found: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        head, _, tail = _dotted(node.func).partition(".")
        if head in self.imports:
            name = f"{self.imports[head]}.{tail}" if tail else self.imports[head]
            if may_be_project(name):
                self.found.add(name)


def called_imports(module: cst.Module, imports: dict[str, str]) -> set[str]:
    """Imported names the module calls, from the syntax alone (for a module that never
    mentions TensorFlow but calls a tf.function imported from another module)."""
    visitor = _CalledImports(imports)
    visitor.walk(module)
    return visitor.found


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""
