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

from tflint_graph.core.facts import TraceKind
from tflint_graph.core.paths import is_test_file
from tflint_graph.model import walk
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.names import root_name
from tflint_graph.model.setup import CREATION_METHODS
from tflint_graph.model.values import (
    assigned_value,
    attributes_by_name,
    single_assignments,
    statement_of,
)

_SELF = ("self", "cls")
# Methods Keras calls from its own eager code, whoever else calls them in the project.
_FRAMEWORK_EAGER = frozenset(
    {"result", "reset_state", "reset_states", "get_config", "get_build_config", "summary"}
)


@dataclass(frozen=True)
class Read:
    """One load of ``<receiver>.<attr>``: the attribute itself, or ``getattr(<receiver>,
    "<attr>"[, default])``, which reads the same state by its name."""

    node: cst.Attribute | cst.Call
    receiver: cst.BaseExpression
    attr: str
    function: FunctionNode | None  # innermost enclosing def or lambda; None at module level
    on_self: bool  # ``self.attr`` / ``cls.attr``
    owned: bool  # on ``self`` or on an object it holds: ``self.layer.kernel``

    def spelt(self, ctx: ModuleContext) -> str:
        """The read as attribute syntax (``getattr(self, "n", 0)`` is ``self.n``)."""
        if isinstance(self.node, cst.Attribute):
            return ctx.code(self.node)
        return f"{ctx.code(self.receiver)}.{self.attr}"


def getattr_read(node: cst.Call) -> tuple[cst.BaseExpression, str] | None:
    """``getattr(obj, "name")`` / ``getattr(obj, "name", default)``: the object and name."""
    if not (isinstance(node.func, cst.Name) and node.func.value == "getattr"):
        return None
    if len(node.args) not in (2, 3) or any(a.keyword or a.star for a in node.args):
        return None
    name = node.args[1].value
    if not isinstance(name, cst.SimpleString):
        return None
    value = name.evaluated_value
    return (node.args[0].value, value) if isinstance(value, str) else None


class _Reads(walk.Visitor):
    """Every attribute load of the module, by attribute name, with its function."""

    def __init__(self) -> None:
        self.stack: list[FunctionNode | None] = [None]
        self.found: dict[str, list[Read]] = {}
        self.written: dict[str, list[Read]] = {}  # assignment targets, by attribute name
        self.calls: dict[FunctionNode | None, list[cst.Call]] = {}  # by innermost function
        self.defined: dict[str, list[cst.FunctionDef]] = {}  # the module's defs by name
        self._stores: set[cst.Attribute] = set()  # targets and called methods: no reads

    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self._stores.add(target)
            value = target.value
            on_self = isinstance(value, cst.Name) and value.value in _SELF
            owned = on_self or owned_by_self(value)
            write = Read(target, value, target.attr.value, self.stack[-1], on_self, owned)
            self.written.setdefault(target.attr.value, []).append(write)
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
        self.calls.setdefault(self.stack[-1], []).append(node)
        # `d.values()`, `self.reset()`: a method called, not stored state read.
        if isinstance(node.func, cst.Attribute):
            self._stores.add(node.func)
        by_name = getattr_read(node)
        if by_name is not None and (
            (isinstance(by_name[0], cst.Name) and by_name[0].value in _SELF)
            or owned_by_self(by_name[0])
        ):
            # `getattr(self, "calls", 0)`; on another object (`getattr(config, "seq_len",
            # 128)`) it mostly reads an optional setting of that object.
            value, attr = by_name
            on_self = isinstance(value, cst.Name) and value.value in _SELF
            self.found.setdefault(attr, []).append(
                Read(node, value, attr, self.stack[-1], on_self, True)
            )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.defined.setdefault(node.name.value, []).append(node)
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
        attr = node.attr.value
        read = Read(node, value, attr, self.stack[-1], on_self, on_self or owned_by_self(value))
        self.found.setdefault(attr, []).append(read)


class AttributeReaders:
    """Attribute loads of one module, asked by name (built on first use)."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        reads = _Reads()
        reads.walk(ctx.module)
        self._reads = reads.found
        self._writes = reads.written
        self._calls = reads.calls
        self._defined = reads.defined

    def reads(self, attr: str) -> list[Read]:
        return self._reads.get(attr, [])

    def assigned_first(self, load: cst.Attribute | Read, fn: FunctionNode | None) -> bool:
        """``fn`` assigns the same ``self.x`` before ``load`` on every path to it (an
        earlier statement of a block that holds the read): the read sees what this call
        stored, never a value carried from another call or another trace."""
        ctx = self.ctx
        if isinstance(load, Read):
            read: cst.CSTNode = load.node
            text, attr = load.spelt(ctx), load.attr
        else:
            read, text, attr = load, ctx.code(load), load.attr.value
        at = ctx.source_order(read)
        for write in self._writes.get(attr, []):
            if write.function is not fn or ctx.code(write.node) != text:
                continue
            statement = statement_of(ctx, write.node)
            if statement is write.node or ctx.source_order(statement) > at:
                continue
            if ctx.inside(read, statement):
                continue  # `self.x = self.x * k`: the read runs before this write
            block = ctx.parent(statement)
            if isinstance(block, cst.SimpleStatementLine):
                block = ctx.parent(block)
            if block is not None and ctx.inside(read, block):
                return True
            # `if cfg: self.w = A() else: self.w = B()`: the `if` as a whole assigns it.
            branch = _branching_if(ctx, block)
            if (
                branch is not None
                and _assigns_on_every_branch(ctx, branch, text)
                and ctx.source_order(branch) < at
                and not ctx.inside(read, branch)
                and ctx.inside(read, ctx.parent(branch) or branch)
            ):
                return True
        return False

    def eager_reader(
        self,
        attr: str,
        cls: cst.ClassDef | None,
        *,
        every_trace: bool = False,
        keras_call: bool = False,
    ) -> str | None:
        """Where code that runs eagerly reads ``.attr`` (``"summary()"``, ``"module
        level"``), for a write on ``self`` in a method of ``cls``; None when nothing does.

        Eager: a function that is not traced, or the module body.  On ``self``, only methods
        of ``cls`` count, and not its ``__init__``/``build`` (they run before any trace) nor
        its ``__call__`` (it runs where the object is called, in the trace when traced code
        calls it).  With ``every_trace`` (the write runs on every trace, in no branch), nor do
        ``compute_loss``/``compute_metrics`` or, for a write in a Keras class's ``call``
        (``keras_call``), a method with a loss's signature (``def loss(self, y_true,
        y_pred)``, given to ``compile()``), which Keras's steps call right after the model,
        unless the module calls them itself.  Tests in a test module do not
        count."""
        ctx = self.ctx
        tests = is_test_file(ctx.path)
        for read in self.reads(attr):
            fn = read.function
            if fn is not None and fn in ctx.traced:
                continue
            if fn is not None and any(
                isinstance(anc, cst.FunctionDef | cst.Lambda) and anc in ctx.traced
                for anc in ctx.ancestors(fn)
            ):
                # A function nested in traced code (a `@tf.custom_gradient` body and its
                # gradient, a `tf.cond` branch) runs in that trace.
                continue
            if _static_metadata(ctx, read.node):
                # `self.values.shape[-1]`: the static shape or dtype of the last trace's
                # tensor, which is what the eager value would have.
                continue
            if tests and _is_test(ctx, fn):
                # A test asserting what the object saw: had tracing left a symbolic tensor
                # there, the test itself would fail.
                continue
            method = method_of(ctx, fn)
            mine = method is not None and cls is not None and ctx.enclosing_class(method) is cls
            if mine and method is not None and method.name.value in CREATION_METHODS:
                continue  # __init__/build run before any trace
            if mine and method is not None and method.name.value in _CALLED_WITH_CALL:
                # `__call__` runs where the object is called; Keras's `__call__` calls
                # `compute_mask` right after `call`: both inside the trace, from traced code
                continue
            if (
                every_trace
                and mine
                and method is not None
                and (method.name.value in _STEP_HOOKS or (keras_call and _loss_signature(method)))
                and self._only_keras_calls(method.name.value)
            ):
                # Keras's own train/test steps call them right after the model, in the
                # step's trace: what `call` stored there is this step's value
                continue
            if read.on_self and not mine:
                continue  # another class's own state
            if not read.owned and self._foreign(read.receiver, 0):
                continue  # `args.test` with `args = parser.parse_args()`: not this object
            if mine and method is not None and self._helper_of_traced_code(method, read.node):
                continue
            if read.owned and self.assigned_first(read, fn):
                continue  # it stores its own value first: what a trace left is never read
            if not read.on_self and self.called_eagerly_before(read):
                continue  # `out = decoder(x)` then `decoder.last_scores`: this call's value
            if read.owned and mine and method is not None:
                if self._called_beside_the_object(method):
                    continue
                if self._callers_store_it_first(method, attr):
                    continue  # `self.input = image; ...; self.g_loss_infer()`: eager scratch
                return f"{method.name.value}()"
            if fn is None:
                return "module-level code"
            name = fn.name.value if isinstance(fn, cst.FunctionDef) else "a lambda"
            return f"{name}()" if isinstance(fn, cst.FunctionDef) else name
        return None

    def _callers_store_it_first(self, method: cst.FunctionDef, attr: str) -> bool:
        """Every call of ``method`` in the module is ``self.method(...)`` from an eager
        method of the same class that stores ``self.<attr>`` itself earlier in its body
        (``infer`` sets ``self.input`` and ``self.gen_img`` eagerly, then calls
        ``self.g_loss_infer()``): the reader sees that call's value, never a trace's."""
        ctx = self.ctx
        cls = ctx.enclosing_class(method)
        calls = 0
        for node in attributes_by_name(ctx).get(method.name.value, []):
            call = ctx.parent(node)
            if not (isinstance(call, cst.Call) and call.func is node):
                return False  # handed on: called anywhere
            caller = ctx.enclosing_function(call)
            if (
                not (isinstance(node.value, cst.Name) and node.value.value == "self")
                or not isinstance(caller, cst.FunctionDef)
                or caller is method
                or ctx.enclosing_class(caller) is not cls
                or caller in ctx.traced
                or not self._stored_before(caller, attr, ctx.source_order(call))
            ):
                return False
            calls += 1
        return calls > 0

    def _stored_before(self, fn: cst.FunctionDef, attr: str, at: int) -> bool:
        """A statement of ``fn``'s own body (not under an ``if`` or a loop) assigns
        ``self.<attr>`` before source position ``at``, and no call of a traced method of
        ``self`` comes between (it would store the trace's value again)."""
        ctx = self.ctx
        stores = [
            ctx.source_order(node)
            for node in attributes_by_name(ctx).get(attr, [])
            if isinstance(node.value, cst.Name)
            and node.value.value == "self"
            and ctx.enclosing_function(node) is fn
            and ctx.source_order(node) < at
            and _is_store(ctx, node)
            and at_top_level(ctx, node, fn)
        ]
        if not stores:
            return False
        last = max(stores)
        cls = ctx.enclosing_class(fn)
        for name in {m.name.value for m in ctx.traced if isinstance(m, cst.FunctionDef)}:
            for node in attributes_by_name(ctx).get(name, []):
                call = ctx.parent(node)
                if (
                    isinstance(call, cst.Call)
                    and call.func is node
                    and isinstance(node.value, cst.Name)
                    and node.value.value == "self"
                    and ctx.enclosing_function(node) is fn
                    and ctx.enclosing_class(fn) is cls
                    and last < ctx.source_order(node) < at
                ):
                    return False
        return True

    def _only_keras_calls(self, method: str) -> bool:
        """No code of the module outside traced code calls ``.method(...)``; an override
        delegating to its base (``super().compute_loss(...)``) runs where it runs."""
        for node in attributes_by_name(self.ctx).get(method, []):
            fn = self.ctx.enclosing_function(node)
            if isinstance(fn, cst.FunctionDef) and fn.name.value == method:
                continue
            if fn is None or fn not in self.ctx.traced:
                return False
        return True

    def called_eagerly_before(self, read: Read) -> bool:
        """The eager code that holds ``read`` (``model.decoder.last_scores``) last used the
        object, or one that holds it, before the read by calling it (``model(x)``) or a
        method this module defines (``model.generate(x)``): that ran the Python body eagerly
        and stored a concrete value; what a trace left is gone.  A library method instead
        (``model.fit(...)``, ``model.predict(...)``) may have traced it."""
        ctx = self.ctx
        prefixes: set[str] = set()
        for owner in _owner_texts(ctx, read.receiver):
            prefixes |= {owner[:i] for i, ch in enumerate(owner) if ch in ".["} | {owner}
        at = ctx.source_order(read.node)
        last: tuple[int, bool] | None = None
        for call in self._calls.get(read.function, []):
            func = call.func
            if ctx.code(func) in prefixes:
                eager = True
            elif isinstance(func, cst.Attribute) and ctx.code(func.value) in prefixes:
                eager = self._runs_eagerly(func.attr.value)
            else:
                continue
            order = ctx.source_order(call)
            if order < at and (last is None or order > last[0]):
                last = (order, eager)
        return last is not None and last[1]

    def _runs_eagerly(self, method: str) -> bool:
        """A method of this name is defined here, and none of that name is a ``tf.function``
        or another root of tracing (called eagerly, it runs its body eagerly)."""
        defs = self._defined.get(method, [])
        roots = (self.ctx.traced.get(d) for d in defs)
        return bool(defs) and all(r is None or r.kind is TraceKind.CALLEE for r in roots)

    def _foreign(self, expr: cst.BaseExpression, depth: int) -> bool:
        """``expr`` is surely no object of this module's classes: every binding of the name
        is a literal or what a library call returns (``parser.parse_args()``,
        ``json.load(f)``), followed through attribute calls on such values."""
        ctx = self.ctx
        if depth > 4:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            res = ctx.resolve(func)
            if res.imported and not res.local:
                return True
            return isinstance(func, cst.Attribute) and self._foreign(func.value, depth + 1)
        if isinstance(expr, cst.Attribute) and not isinstance(expr.value, cst.Name):
            return self._foreign(expr.value, depth + 1)
        if isinstance(expr, cst.BaseString | cst.Integer | cst.Float | cst.Dict | cst.List):
            return True
        if type(expr) is not cst.Name:
            return False
        bindings = ctx.bindings(expr)
        if not bindings:
            return False
        for binding in bindings:
            value = assigned_value(ctx, binding.node) if type(binding.node) is cst.Name else None
            if value is None or not self._foreign(value, depth + 1):
                return False
        return True

    def _called_beside_the_object(self, method: cst.FunctionDef) -> bool:
        """``method`` is an accessor (no arguments but ``self``) that the run calls, and
        only from traced code or step functions (``loss.report_stats()`` in a trainer's
        ``train_step``, right after the loss ran in the same step): it reads what this call
        stored, not what a trace left.  Other modules tell (``ProjectView.accessor_calls``);
        until they have, the module asks.  An accessor the run never calls is public API,
        for users to call eagerly."""
        params = [*method.params.posonly_params, *method.params.params]
        if len(params) != 1 or isinstance(method.params.star_arg, cst.Param) or method.decorators:
            return False
        name = method.name.value
        if name in _FRAMEWORK_EAGER or name.startswith("on_"):
            return False  # Keras calls it eagerly itself (`Metric.result` at epoch end)
        eager = self.ctx.view.accessor_calls.get(name)
        if eager is None:
            self.ctx.asked_accessors.add(name)
        return eager is False

    def _helper_of_traced_code(self, method: cst.FunctionDef, read: cst.CSTNode) -> bool:
        """``method`` is a helper of traced code, not an accessor users call eagerly: it takes
        arguments besides ``self`` and hands the attribute to a TensorFlow op with them
        (``get_targets(self, x): return tf.gather(x, self.index_targets)``), and nothing in
        this module calls it from eager code.  Its callers are traced methods, or overrides in
        subclasses that traced code dispatches to, so it reads the value of the same trace."""
        ctx = self.ctx
        params = [*method.params.posonly_params, *method.params.params]
        if len(params) < 2 or any(
            isinstance(d.decorator, cst.Name) and d.decorator.value in ("property", "staticmethod")
            for d in method.decorators
        ):
            return False
        parent = ctx.parent(ctx.parent(read))  # Attribute -> Arg -> Call
        if not (
            isinstance(parent, cst.Call)
            and ctx.resolve(parent.func).startswith("tensorflow.", "keras.")
        ):
            return False
        for node in attributes_by_name(ctx).get(method.name.value, []):
            fn = ctx.enclosing_function(node)
            if fn is None or fn not in ctx.traced:
                return False
        return True


def _owner_texts(ctx: ModuleContext, owner: cst.BaseExpression) -> list[str]:
    """How the object ``owner`` is spelt where it was reached: its own code, and for a loop
    or comprehension variable (``layer`` in ``for layer in model.layers``) the iterable's."""
    texts = [ctx.code(owner)]
    if isinstance(owner, cst.Name):
        for binding in ctx.bindings(owner):
            loop = ctx.parent(binding.node)
            if isinstance(loop, cst.For | cst.CompFor) and loop.target is binding.node:
                texts.append(ctx.code(loop.iter) + "[")
    return texts


def _static_metadata(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """``node`` is only asked for its static shape or dtype (``x.shape[-1]``, ``x.dtype``,
    ``x.get_shape()``)."""
    parent = ctx.parent(node)
    return (
        isinstance(parent, cst.Attribute)
        and parent.value is node
        and parent.attr.value in ("shape", "dtype", "get_shape", "ndim")
    )


def written_eagerly(ctx: ModuleContext, attr: str, cls: cst.ClassDef | None) -> bool:
    """A method of ``cls`` that is not traced assigns ``self.<attr>`` (``reset()`` putting a
    flag back); ``__init__``/``build`` and ``__call__`` do not count."""
    if cls is None:
        return False
    for node in attributes_by_name(ctx).get(attr, []):
        parent = ctx.parent(node)
        if not (isinstance(parent, cst.AssignTarget) and parent.target is node):
            continue
        if not (isinstance(node.value, cst.Name) and node.value.value in _SELF):
            continue
        method = method_of(ctx, ctx.enclosing_function(node))
        if method is None or ctx.enclosing_class(method) is not cls:
            continue
        if method.name.value in CREATION_METHODS or method.name.value == "__call__":
            continue  # before any trace, or where the object is called (around `call`)
        if method in ctx.traced:
            continue
        return True
    return False


# Calls that return a copy of the object they are given (``attr.evolve(state, n=1)``).
_COPIERS = ("attr.evolve", "attr.assoc", "dataclasses.replace", "copy.copy", "copy.deepcopy")


def copy_made_here(
    ctx: ModuleContext, root: cst.Name, fn: FunctionNode, at: cst.CSTNode
) -> cst.Call | None:
    """The call that made ``root`` a copy in ``fn``'s own body, before ``at`` and on every
    path to it (a statement of the body itself, under no branch or loop): ``state =
    attr.evolve(state, counters=dict(state.counters))`` before ``state.counters[k] += v``.
    Writes through ``root`` then go to an object this call made."""
    body = fn.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    order = {id(stmt): i for i, stmt in enumerate(body.body)}
    holder = next((a for a in ctx.ancestors(at) if id(a) in order), None)
    if holder is None:
        return None  # in a nested function, or not in this body
    found: cst.Call | None = None
    for stmt, assign in single_assignments(body):
        if order[id(stmt)] >= order[id(holder)]:
            break
        target = assign.targets[0].target
        if isinstance(target, cst.Name) and target.value == root.value:
            value = assign.value
            copied = isinstance(value, cst.Call) and ctx.resolve(value.func).is_(*_COPIERS)
            found = value if copied else None  # type: ignore[assignment]
    return found


def fresh_in_copy(ctx: ModuleContext, copy: cst.Call, field: str | None) -> bool:
    """What the copy ``copy`` holds in ``field`` is its own: a deep copy, or a shallow one
    (``attr.evolve``, ``dataclasses.replace``) given a new value for that field
    (``counters=dict(state.counters)``); ``field`` None: the copy itself."""
    if field is None or ctx.resolve(copy.func).is_("copy.deepcopy"):
        return True
    for arg in copy.args:
        if arg.keyword is not None and arg.keyword.value == field:
            return isinstance(
                arg.value, cst.Call | cst.Dict | cst.List | cst.Set | cst.DictComp | cst.ListComp
            )
    return False


def copied_here(ctx: ModuleContext, expr: cst.BaseExpression, fn: FunctionNode) -> bool:
    """``expr`` (``state.counters``, ``state``) is part of a copy ``fn`` made of its root
    before ``expr`` is used, and that part is the copy's own (``fresh_in_copy``)."""
    root = root_name(expr)
    if root is None:
        return False
    copy = copy_made_here(ctx, root, fn, expr)
    if copy is None:
        return False
    field: str | None = None
    node: cst.BaseExpression = expr
    while not isinstance(node, cst.Name):
        if isinstance(node, cst.Attribute) and node.value is root:
            field = node.attr.value
        node = node.value if isinstance(node, cst.Attribute | cst.Subscript) else root
    return fresh_in_copy(ctx, copy, field)


# Methods that run where the object is called, inside the same trace as ``call``.
_CALLED_WITH_CALL = frozenset({"__call__", "compute_mask"})
# Hooks of `keras.Model` that the built-in steps (Keras 3 and tf_keras) call after the model.
_STEP_HOOKS = frozenset({"compute_loss", "compute_metrics"})


def _loss_signature(method: cst.FunctionDef) -> bool:
    """``def loss(self, y_true, y_pred)``: a layer's loss or metric, which ``compile()`` takes
    and the compiled step calls right after the model, in the step's trace."""
    names = [p.name.value for p in method.params.params[1:3]]
    return names == ["y_true", "y_pred"]


def assigns_on_every_branch(ctx: ModuleContext, node: cst.If, target: cst.BaseExpression) -> bool:
    """Every branch of the ``if`` chain ``node`` (an ``else`` included) assigns ``target``."""
    return _assigns_on_every_branch(ctx, node, ctx.code(target))


def stores_only(ctx: ModuleContext, attr: str, cls: cst.ClassDef | None, literal: str) -> bool:
    """Every write of ``self.<attr>`` in the methods of ``cls`` (``__init__``/``build``
    aside) stores the literal ``literal`` (``self._first_call = False`` at the end of
    ``call``, after the one-time build it ends): a write per trace leaves what a write per
    call would, since nothing stores another value afterwards."""
    if cls is None:
        return False
    for node in attributes_by_name(ctx).get(attr, []):
        if not (isinstance(node.value, cst.Name) and node.value.value in _SELF):
            continue
        method = method_of(ctx, ctx.enclosing_function(node))
        if method is None or ctx.enclosing_class(method) is not cls:
            continue
        if method.name.value in CREATION_METHODS:
            continue
        written, value = _stored(ctx, node)
        if written and (value is None or ctx.code(value) != literal):
            return False
    return True


def one_literal(ctx: ModuleContext, attr: str) -> cst.BaseExpression | None:
    """The literal every write of ``<anything>.<attr>`` in the module stores (``self.knn =
    False`` in ``__init__``, whatever the argument said), when there is at least one write and
    all store the same literal; None otherwise."""
    found: cst.BaseExpression | None = None
    for node in attributes_by_name(ctx).get(attr, []):
        written, value = _stored(ctx, node)
        if not written:
            continue
        if not is_constant(value) or (found is not None and ctx.code(found) != ctx.code(value)):
            return None
        found = value
    return found


def stored_eagerly(ctx: ModuleContext, attr: str) -> list[cst.BaseExpression | None]:
    """What code that is not traced (module level, untraced functions) stores in
    ``<anything>.<attr>``, one entry per write; None for a write whose value is unknown
    (augmented, deleted, unpacked into)."""
    found: list[cst.BaseExpression | None] = []
    for node in attributes_by_name(ctx).get(attr, []):
        written, value = _stored(ctx, node)
        fn = ctx.enclosing_function(node)
        if written and (fn is None or fn not in ctx.traced):
            found.append(value)
    return found


def _stored(ctx: ModuleContext, node: cst.Attribute) -> tuple[bool, cst.BaseExpression | None]:
    """Whether ``node`` is written, and what a plain write stores (``x.a = v``, ``x.a: T =
    v``); None for any other write (augmented, deleted, unpacked into)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        stmt = ctx.parent(parent)
        return True, stmt.value if isinstance(stmt, cst.Assign) else None
    if isinstance(parent, cst.AnnAssign) and parent.target is node:
        return True, parent.value
    if isinstance(parent, cst.AugAssign | cst.Del | cst.Element | cst.Tuple | cst.List):
        return True, None
    return False, None


def is_constant(expr: cst.BaseExpression | None) -> bool:
    """A literal that is the same on every call: ``True``, ``None``, ``3``, ``"ready"``."""
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, cst.Integer | cst.Float | cst.SimpleString)


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


def restored_in_call(ctx: ModuleContext, target: cst.BaseExpression, fn: FunctionNode) -> bool:
    """``fn`` overrides ``target`` and puts the value it found back before it returns: its
    last write assigns a name bound to ``target`` before the first write (``saved =
    self.padding``), or the literal that ``fn`` compared ``target`` with before it (``causal
    = self.padding == "causal"`` ... ``self.padding = "causal"``).  The caller sees the
    attribute unchanged, in a trace as in eager code."""
    text = ctx.code(target)
    writes: list[cst.Assign] = []
    for node in walk.descendants(fn.body):
        if isinstance(node, cst.Assign) and any(ctx.code(t.target) == text for t in node.targets):
            writes.append(node)
        elif isinstance(node, cst.AugAssign) and ctx.code(node.target) == text:
            return False  # accumulates: not an override
    if len(writes) < 2:
        return False
    writes.sort(key=ctx.source_order)
    first, last = ctx.source_order(writes[0]), writes[-1].value
    if isinstance(last, cst.Name):
        saved = [
            b.node
            for b in ctx.bindings(last)
            if isinstance(b.node, cst.Name) and ctx.source_order(b.node) < first
        ]
        return len(saved) == 1 and _bound_to(ctx, saved[0], text)
    if not is_constant(last):
        return False
    literal = ctx.code(last)
    for node in walk.descendants(fn.body):
        if isinstance(node, cst.Comparison) and ctx.source_order(node) < first:
            sides = [ctx.code(node.left), *(ctx.code(c.comparator) for c in node.comparisons)]
            if text in sides and literal in sides:
                return True
    return False


def _bound_to(ctx: ModuleContext, name: cst.Name, text: str) -> bool:
    """``name`` is the target of ``name = <text>``."""
    target = ctx.parent(name)
    assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
    return isinstance(assign, cst.Assign) and ctx.code(assign.value) == text


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
    known = readers(ctx)
    for read in known.reads(target.attr.value):
        if read.function is not fn or not read.owned or read.spelt(ctx) != text:
            continue
        earlier = ctx.source_order(read.node) < limit or ctx.inside(read.node, statement)
        if earlier and not known.assigned_first(read, fn):
            return True
    return False


def _branching_if(ctx: ModuleContext, block: cst.CSTNode | None) -> cst.If | None:
    """The ``if`` statement (the head of an ``elif`` chain) one of whose branches is
    ``block``."""
    owner = ctx.parent(block) if block is not None else None
    if isinstance(owner, cst.Else):
        owner = ctx.parent(owner)
    if not isinstance(owner, cst.If):
        return None
    while isinstance(ctx.parent(owner), cst.If):  # an `elif`: the chain's head
        owner = ctx.parent(owner)  # type: ignore[assignment]
    return owner


def _assigns_on_every_branch(ctx: ModuleContext, node: cst.If, text: str) -> bool:
    """Every branch of ``node`` (an ``else`` included) assigns ``text`` by a statement of
    its own, from a value that does not read it."""

    def assigns(body: cst.BaseSuite) -> bool:
        for stmt in body.body if isinstance(body, cst.IndentedBlock) else ():
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if (
                    isinstance(small, cst.Assign)
                    and any(ctx.code(t.target) == text for t in small.targets)
                    and text not in ctx.code(small.value)
                ):
                    return True
        return False

    if not assigns(node.body):
        return False
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        return _assigns_on_every_branch(ctx, orelse, text)
    return isinstance(orelse, cst.Else) and assigns(orelse.body)


def _is_store(ctx: ModuleContext, node: cst.Attribute) -> bool:
    """``node`` is a target of an assignment (``self.x = ...``, ``self.a, self.b = ...``)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Element):
        holder = ctx.parent(parent)
        parent = ctx.parent(holder) if isinstance(holder, cst.Tuple | cst.List) else None
    return isinstance(parent, cst.AssignTarget)


def at_top_level(ctx: ModuleContext, node: cst.CSTNode, fn: cst.FunctionDef) -> bool:
    """``node`` sits in a statement of ``fn``'s body itself (no ``if``, loop, ``try`` or
    ``with`` around it)."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.SimpleStatementLine):
            return ctx.parent(anc) is fn.body
    return False
