"""Who can observe an attribute that traced code writes (SPEC §2, TFG102/TFG106).

A write in a traced body happens once per trace.  That only hurts when something sees the
state across calls: the write accumulates (``self.steps += 1``, ``self.total = self.total +
x``, a read of ``self.x`` earlier in the same call), or code that runs eagerly reads the
attribute later (a method of the class that is not traced, module code, another function
of the module) and gets the value of the last trace — a symbolic tensor, when the value
came from traced tensors.  Otherwise the attribute is *per-trace scratch*: assigned before
any read in the same traced call, filled and read in that trace, read by nothing eager
(``self.endpoints = {}`` at the top of ``call``).  It works the same in graph and eager mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tflint_graph.core.paths import is_test_file
from tflint_graph.model import walk
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.setup import CREATION_METHODS

_SELF = ("self", "cls")


@dataclass(frozen=True)
class Read:
    """One load of ``<receiver>.<attr>``."""

    node: cst.Attribute
    function: FunctionNode | None  # innermost enclosing def or lambda; None at module level
    on_self: bool  # ``self.attr`` / ``cls.attr``
    owned: bool  # on ``self`` or on an object it holds: ``self.layer.kernel``


class _Reads(walk.Visitor):
    """Every attribute load of the module, by attribute name, with its function."""

    def __init__(self) -> None:
        self.stack: list[FunctionNode | None] = [None]
        self.found: dict[str, list[Read]] = {}
        self._stores: set[cst.Attribute] = set()  # targets and called methods: no reads

    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self._stores.add(target)
        elif isinstance(target, cst.Tuple | cst.List):
            for el in target.elements:
                self._store(el.value)
        elif isinstance(target, cst.StarredElement):
            self._store(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._store(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        # `d.values()`, `self.reset()`: a method called, not stored state read.
        if isinstance(node.func, cst.Attribute):
            self._stores.add(node.func)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for dec in node.decorators:
            self.walk(dec)
        self.walk(node.params)
        self.stack.append(node)
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.walk(node.params)
        self.stack.append(node)
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node in self._stores:
            return
        value = node.value
        on_self = isinstance(value, cst.Name) and value.value in _SELF
        read = Read(node, self.stack[-1], on_self, on_self or owned_by_self(value))
        self.found.setdefault(node.attr.value, []).append(read)


class AttributeReaders:
    """Attribute loads of one module, asked by name (built on first use)."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        reads = _Reads()
        reads.walk(ctx.module)
        self._reads = reads.found

    def reads(self, attr: str) -> list[Read]:
        return self._reads.get(attr, [])

    def eager_reader(self, attr: str, cls: cst.ClassDef | None) -> str | None:
        """Where code that runs eagerly reads ``.attr`` (``"summary()"``, ``"module
        level"``), for a write on ``self`` in a method of ``cls``; None when nothing does.

        Eager: a function that is not traced, or the module body.  On ``self``, only methods
        of ``cls`` count, and not its ``__init__``/``build`` (they run before any trace) nor
        its ``__call__`` (it runs where the object is called, in the trace when traced code
        calls it).  Tests in a test module do not count."""
        ctx = self.ctx
        tests = is_test_file(ctx.path)
        for read in self.reads(attr):
            fn = read.function
            if fn is not None and fn in ctx.traced:
                continue
            if tests and _is_test(ctx, fn):
                # A test asserting what the object saw: had tracing left a symbolic tensor
                # there, the test itself would fail.
                continue
            method = method_of(ctx, fn)
            mine = method is not None and cls is not None and ctx.enclosing_class(method) is cls
            if mine and method is not None and method.name.value in CREATION_METHODS:
                continue  # __init__/build run before any trace
            if mine and method is not None and method.name.value == "__call__":
                continue  # runs where the object is called: inside the trace, from traced code
            if read.on_self and not mine:
                continue  # another class's own state
            if read.owned and mine and method is not None:
                return f"{method.name.value}()"
            if fn is None:
                return "module-level code"
            name = fn.name.value if isinstance(fn, cst.FunctionDef) else "a lambda"
            return f"{name}()" if isinstance(fn, cst.FunctionDef) else name
        return None


def owned_by_self(expr: cst.BaseExpression) -> bool:
    """``self.layer``, ``self.layer.cell``: an object ``self`` holds (its sublayer, a helper
    it built), reached through attributes only."""
    if not isinstance(expr, cst.Attribute):
        return False
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value in _SELF


def restored_on_exit(ctx: ModuleContext, target: cst.BaseExpression, fn: FunctionNode) -> bool:
    """``fn`` is a generator context manager (``@contextlib.contextmanager``) that writes
    ``target`` (``_scope.enabled``, a global) on both sides of its ``yield``: it overrides
    the state for the ``with`` block and puts the old value back, so nothing outlives the
    block, in a trace as in eager code."""
    if not isinstance(fn, cst.FunctionDef) or not any(
        ctx.resolve(d.decorator).is_("contextlib.contextmanager") for d in fn.decorators
    ):
        return False
    text = ctx.code(target)
    yields = [n for n in walk.descendants(fn.body) if isinstance(n, cst.Yield)]
    if not yields:
        return False
    first_yield = min(ctx.source_order(y) for y in yields)
    last_yield = max(ctx.source_order(y) for y in yields)
    before = after = False
    for node in walk.descendants(fn.body):
        if isinstance(node, cst.AssignTarget) and ctx.code(node.target) == text:
            order = ctx.source_order(node)
            before = before or order < first_yield
            after = after or order > last_yield
    return before and after


def in_test_function(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """``node`` lies in a test (a ``test*`` function or method, or a function nested in one)
    of a test module (``test_*.py``, ``*_test.py``)."""
    return is_test_file(ctx.path) and _is_test(ctx, ctx.enclosing_function(node))


def _is_test(ctx: ModuleContext, fn: FunctionNode | None) -> bool:
    """``fn`` is a test (``test_*``, or a ``test*`` method), or nested in one."""
    while fn is not None:
        if isinstance(fn, cst.FunctionDef) and fn.name.value.startswith("test"):
            return True
        fn = ctx.enclosing_function(fn)
    return False


def readers(ctx: ModuleContext) -> AttributeReaders:
    """The module's :class:`AttributeReaders`, built once."""
    return ctx.memo("attribute-readers", ctx.module, lambda: AttributeReaders(ctx))


def method_of(ctx: ModuleContext, fn: FunctionNode | None) -> cst.FunctionDef | None:
    """The method ``fn`` is, or is nested in."""
    node: FunctionNode | None = fn
    while node is not None:
        if isinstance(node, cst.FunctionDef) and ctx.enclosing_class(node) is not None:
            return node
        node = ctx.enclosing_function(node)
    return None


def owning_class(ctx: ModuleContext, fn: FunctionNode) -> cst.ClassDef | None:
    """The class whose method ``fn`` is, or is nested in."""
    method = method_of(ctx, fn)
    return ctx.enclosing_class(method) if method is not None else None


def read_before(
    ctx: ModuleContext, target: cst.Attribute, statement: cst.CSTNode, fn: FunctionNode
) -> bool:
    """``fn`` reads ``self.<attr>`` (or ``self.<obj>.<attr>``) of ``target`` before
    ``statement`` writes it (the statement's own value included): the value is carried
    from an earlier call."""
    text = ctx.code(target)
    limit = ctx.source_order(statement)
    for read in readers(ctx).reads(target.attr.value):
        if read.function is not fn or not read.owned or ctx.code(read.node) != text:
            continue
        if ctx.source_order(read.node) < limit or _inside(ctx, read.node, statement):
            return True
    return False


def _inside(ctx: ModuleContext, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(anc is container for anc in ctx.ancestors(node))
