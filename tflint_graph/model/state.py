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
        read = Read(node, self.stack[-1], on_self)
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
        of ``cls`` count, and not its ``__init__``/``build`` (they run before any trace)."""
        ctx = self.ctx
        for read in self.reads(attr):
            fn = read.function
            if fn is not None and fn in ctx.traced:
                continue
            if read.on_self:
                method = method_of(ctx, fn)
                if method is None or cls is None or ctx.enclosing_class(method) is not cls:
                    continue
                if method.name.value in CREATION_METHODS:
                    continue
                return f"{method.name.value}()"
            if fn is None:
                return "module-level code"
            name = fn.name.value if isinstance(fn, cst.FunctionDef) else "a lambda"
            return f"{name}()" if isinstance(fn, cst.FunctionDef) else name
        return None


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
    """``fn`` reads ``self.<attr>`` of ``target`` before ``statement`` writes it (the
    statement's own value included): the value is carried from an earlier call."""
    text = ctx.code(target)
    limit = ctx.source_order(statement)
    for read in readers(ctx).reads(target.attr.value):
        if read.function is not fn or not read.on_self or ctx.code(read.node) != text:
            continue
        if ctx.source_order(read.node) < limit or _inside(ctx, read.node, statement):
            return True
    return False


def _inside(ctx: ModuleContext, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(anc is container for anc in ctx.ancestors(node))
