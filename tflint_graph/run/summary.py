"""What one analysed module tells the rest of the run (see ``project.py``)."""

from __future__ import annotations

import libcst as cst

from tflint_graph.core.facts import LOCAL, ModuleSummary, ProjectView, is_step_name
from tflint_graph.core.paths import is_test_file
from tflint_graph.model import walk
from tflint_graph.model.certain import evident_arguments
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.values import is_container_literal
from tflint_graph.source import prefilter
from tflint_graph.source.eager_use import eager_instances
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import imported_names, module_tf_functions, tf_function_calls
from tflint_graph.traced.exports import export_references, foreign_exports
from tflint_graph.traced.roots import eager_script_classes


def summarize(ctx: ModuleContext, scan: prefilter.Scan | None = None) -> ModuleSummary:
    """What ``ctx``'s module tells the rest of the run; ``scan`` is the prefilter's walk of
    its CPython tree, when one was made."""
    traced = traced_of(ctx)
    called: set[str] = set()
    for _, call in traced.facts.calls:
        called.update(imported_names(ctx, call.func))
    # Exported without being called (`signatures={"embed": embed}`): TFG301 needs to know.
    called |= export_references(ctx)
    imports = module_imports(ctx.module, ctx.view)
    tree = ctx.cpython_tree()
    if scan is None:
        scan = prefilter.Scan(tree, ctx.view)
    traced_lines = frozenset(ctx.line(fn) for fn in ctx.traced if isinstance(fn, cst.FunctionDef))
    eager_made, used_otherwise, foreign = eager_instances(
        tree, ctx.path, ctx.view, scan.imports, scan.calls, scan.attributes, traced_lines
    )
    summary = ModuleSummary(
        module=ctx.view.module,
        exports=module_tf_functions(ctx),
        reexports=imports,
        outgoing=list(traced.outgoing),
        called_imports=called,
        classes=module_classes(ctx.module, imports),
        exports_elsewhere=foreign_exports(ctx),
        remote=list(ctx.remote),
        tracing_values=traced.guards.exported(),
        guard_classes=traced.guards.inheritance(),
        accessor_calls=accessor_calls(ctx),
        call_resets=call_resets(ctx),
        **dict(zip(("global_reads", "global_writes"), traced.setup.exported(), strict=True)),
        asked_accessors=frozenset(ctx.asked_accessors),
        once_decorators=traced.setup.once_decorators(),
        escape_params=traced.definitions.escape_table(),
        eager_script=eager_script_classes(ctx, traced.definitions),
        eager_made=eager_made,
        used_otherwise=used_otherwise,
        foreign_attributes=foreign,
        tensor_args=tensor_args(ctx),
    )
    # Last: every question above may have looked up another module's guard helpers.
    summary.asked_tracing = frozenset(ctx.asked_tracing)
    return summary


def tensor_args(ctx: ModuleContext) -> dict[str, frozenset[str]]:
    """``ModuleSummary.tensor_args``: per tf.function of another module this module calls,
    the arguments some call gives an evident tensor (eager calls too: a script's
    ``collect(x, tf.constant(3))`` shows the parameter is a tensor there)."""
    found: dict[str, frozenset[str]] = {}
    if not ctx.view.tf_functions:
        return found
    for call, ref in tf_function_calls(ctx):
        if ref.node is not None:
            continue  # this module's own: its calls are evidence here already
        keys = evident_arguments(ctx, call)
        if not keys:
            continue
        for name in imported_names(ctx, call.func):
            if name in ctx.view.tf_functions:
                found[name] = found.get(name, frozenset()) | keys
    return found


def call_resets(ctx: ModuleContext) -> dict[str, frozenset[str]]:
    """``ModuleSummary.call_resets``: per module-level class, what its ``__call__`` (its own)
    rebinds to a fresh container (``self._losses_dict = {}``)."""
    found: dict[str, frozenset[str]] = {}
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.ClassDef):
            continue
        attrs = frozenset(
            attr
            for attr, values in traced_of(ctx).facts.self_values.get(stmt, {}).items()
            if any(
                isinstance(where, cst.FunctionDef)
                and where.name.value == "__call__"
                and is_container_literal(ctx, value)
                for value, where in values
            )
        )
        if attrs:
            found[stmt.name.value] = attrs
    return found


def accessor_calls(ctx: ModuleContext) -> dict[str, bool]:
    """``x.name()`` calls of the module (no arguments), by name: True when one runs in eager
    code, False when all are in traced code or in step functions (``ModuleSummary``)."""
    if is_test_file(ctx.path):
        return {}
    found: dict[str, bool] = {}
    for fn, call in traced_of(ctx).facts.calls:
        func = call.func
        if call.args or not isinstance(func, cst.Attribute):
            continue
        name = func.attr.value
        if found.get(name):
            continue
        if isinstance(fn, cst.FunctionDef) and fn.name.value == name:
            # `def initialize(self): return self.sampler.initialize()`: a delegation runs
            # wherever the outer accessor does, so it tells nothing of its own
            continue
        found[name] = not _beside_the_object(ctx, fn)
    return found


def _beside_the_object(ctx: ModuleContext, fn: FunctionNode | None) -> bool:
    """Code in ``fn`` runs in the same call as the object's own traced work: ``fn`` is
    traced, or is (nested in) a step function."""
    while fn is not None:
        if fn in ctx.traced:
            return True
        if isinstance(fn, cst.FunctionDef) and is_step_name(fn.name.value):
            return True
        fn = ctx.enclosing_function(fn)
    return False


def module_imports(module: cst.Module, view: ProjectView) -> dict[str, str]:
    """Module-level import bindings, as absolute names: what ``from pkg import name`` can
    reach through this module (``from .helpers import normalize`` in ``__init__.py``)."""
    found: dict[str, str] = {}
    statements = list(module.body)
    for stmt in module.body:
        if isinstance(stmt, cst.Try):  # `try: import tensorflow as tf` (an optional import)
            statements += stmt.body.body
    loaders = _import_helpers(module, view)
    for stmt in statements:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import | cst.ImportFrom):
                    found.update(_bindings(small, view))
                elif (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name)
                    and small.value.func.value in loaders
                ):
                    found[small.targets[0].target.value] = loaders[small.value.func.value]
    return found


def _import_helpers(module: cst.Module, view: ProjectView) -> dict[str, str]:
    """Module-level functions that import a module and return it or None (``def
    try_import_tensorflow(): try: import tensorflow as _tf ... return _tf``): ``tf =
    try_import_tensorflow()`` is that module."""
    found: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        imports: dict[str, str] = {}
        returned: set[str] = set()
        for node in walk.descendants(stmt.body):
            if isinstance(node, cst.Import | cst.ImportFrom):
                imports.update(_bindings(node, view))
            elif isinstance(node, cst.Return) and node.value is not None:
                value = node.value
                if isinstance(value, cst.Name) and value.value != "None":
                    returned.add(value.value)
                elif not isinstance(value, cst.Name):
                    returned.add("")  # something else: not an import helper
        modules = {imports.get(name) for name in returned}
        if len(modules) == 1 and None not in modules:
            found[stmt.name.value] = modules.pop()  # type: ignore[assignment]
    return found


def _bindings(stmt: cst.Import | cst.ImportFrom, view: ProjectView) -> list[tuple[str, str]]:
    """(bound name, absolute name) for each name an import statement binds."""
    found: list[tuple[str, str]] = []
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            full = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                found.append((alias.asname.name.value, full))
            else:  # `import a.b` binds `a`
                head = full.partition(".")[0]
                found.append((head, head))
    elif not isinstance(stmt.names, cst.ImportStar):
        base = "." * len(stmt.relative)
        if stmt.module is not None:
            base += _dotted(stmt.module)
        for alias in stmt.names:
            name = _dotted(alias.name)
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            sep = "" if not base or base.endswith(".") else "."
            found.append((bound, view.absolute(f"{base}{sep}{name}")))
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
    def __init__(self, view: ProjectView) -> None:
        self.view = view
        self.imports: dict[str, set[str]] = {}
        self.instances: list[tuple[str, str]] = []
        self.calls: list[tuple[str, str | None, str | None]] = []

    def visit_Import(self, node: cst.Import) -> None:
        for bound, full in _bindings(node, self.view):
            self.imports.setdefault(bound, set()).add(full)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.visit_Import(node)  # type: ignore[arg-type]

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            callee = _dotted(node.value.func)
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.instances.append((target.target.value, callee))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.value, cst.Call):
            self.instances.append((node.target.value, _dotted(node.value.func)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            self.calls.append((_dotted(func), func.attr.value, func.value.value))
        else:
            self.calls.append((_dotted(func), None, None))


def called_imports(module: cst.Module, view: ProjectView) -> set[str]:
    """The project names the module may call, from the syntax alone: the summary of a
    module that cannot hold traced code (see ``prefilter.project_calls``)."""
    visitor = _CalledImports(view)
    visitor.walk(module)
    return prefilter.project_calls(
        visitor.imports, visitor.instances, visitor.calls, view.first_party
    )


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""
