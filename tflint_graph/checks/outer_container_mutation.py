from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.model import walk
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import root_name
from tflint_graph.model.state import at_top_level, copied_here, owning_class, readers
from tflint_graph.model.values import (
    Owner,
    is_container_literal,
    names_a_class,
    owner_of,
    passed_values,
    receiver_is_outer,
    sole_parameter,
    values_of,
)
from tflint_graph.traced import traced_of

# Only lists/dicts have these, so any receiver that outlives the call is a container.
_CONTAINER_ONLY = frozenset({"append", "extend", "insert", "setdefault", "popitem"})
# Common on other objects too (`layers.add`, `tracker.update`): need evidence of a container.
_AMBIGUOUS = frozenset({"pop", "remove", "clear", "update", "add", "discard"})
# How many positional arguments the builtin methods take (none takes keywords): a call that
# does not fit is another object's method of the same name (`store.append(ids, values)`).
_ARITY = {
    "append": (1, 1),
    "extend": (1, 1),
    "insert": (2, 2),
    "setdefault": (1, 2),
    "popitem": (0, 0),
}


class OuterContainerMutation(Rule):
    """Mutating a Python list, dict or set that outlives the traced call."""

    code = "TFG102"
    name = "outer-container-mutation"
    QUIET_IN_TESTS = True

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(xs):
    parts = []
    for i in range(3):
        parts.append(xs[i] * 2)
    return tf.stack(parts)
""",
        """
import tensorflow as tf

history = []

def train(ds, model):
    for x in ds:
        history.append(model(x))  # eager loop: fine
""",
        """
import tensorflow as tf

def parse(features):
    features["image"] = tf.cast(features["image"], tf.float32)
    return features

ds = tf.data.TFRecordDataset("f").map(parse)
""",
        """
import tensorflow as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = tf.keras.Sequential()

    def call(self, x):
        self.blocks.add(x)  # not known to be a Python container
        return x
""",
    ]
    INVALID = [
        """
import tensorflow as tf

losses = []

@tf.function
def step(x):
    loss = tf.reduce_sum(x)
    losses.append(loss)  # TFG102
    return loss
""",
        """
import tensorflow as tf

class Trainer(tf.Module):
    def __init__(self):
        self.seen = set()
        self.cache = {}

    @tf.function
    def __call__(self, x):
        self.seen.add("call")  # TFG102
        self.cache["last"] = x  # TFG102
        return x

    def latest(self):
        return self.cache["last"]  # eager code reads what the trace stored
""",
        """
import tensorflow as tf

@tf.function
def step(x, outputs=[]):
    outputs.append(x)  # TFG102
    return x
""",
    ]

    def _known_container(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        return any(is_container_literal(self.ctx, v) for v in values_of(self.ctx, receiver, fn))

    def _report(self, node: cst.CSTNode, what: str, action: str, fn: TracedFunction) -> None:
        self.report(
            node,
            f"{action} mutates {what} only while tracing {fn.where}; later calls do not "
            "repeat it; return the values as tensors, or use tf.TensorArray or a tf.Variable",
            fn,
        )

    def _wanted(self, node: cst.CSTNode, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        """Not one-time setup, and not per-trace scratch on ``self``: a container that the
        traced call (or the traced function that called it) rebinds to a fresh one before
        filling it, which no eager code reads."""
        ctx = self.ctx
        if traced_of(ctx).setup.covers(node, fn):
            return False
        root = root_name(receiver)
        if (
            root is not None
            and root.value not in ("self", "cls")
            and traced_of(ctx).arguments.made_per_trace(root, fn.node)
        ):
            # `fill(x, parts)` with `parts = []` made in the calling trace, or a part of such
            # an object (`maps.dense[k] = v`, `maps = Maps(dense={})` in the caller)
            return False
        if isinstance(receiver, cst.Name) and self._copied_by_keras3(receiver, fn):
            return False
        if copied_here(ctx, receiver, fn.node):
            return False  # `state = attr.evolve(state, counters=dict(...))`: this call's copy
        if not (
            isinstance(receiver, cst.Attribute)
            and isinstance(receiver.value, cst.Name)
            and receiver.value.value in ("self", "cls")
        ):
            return True
        if traced_of(ctx).self_is_fresh(fn):
            return False  # `self` is an object the traced caller made in this call
        if _emptied_at_the_end(ctx, fn.node, receiver.attr.value, node):
            return False  # filled and emptied within each call: what a trace leaves is empty
        cls = owning_class(ctx, fn.node)
        if cls is None or not self._reset_before(cls, receiver.attr.value, node, fn):
            return True
        return readers(ctx).eager_reader(receiver.attr.value, cls) is not None

    def _copied_by_keras3(self, receiver: cst.Name, fn: TracedFunction) -> bool:
        """``receiver`` is a parameter of a Keras 3 ``Layer.call``: ``Layer.__call__`` hands
        ``call`` rebuilt lists and dicts, eager or traced (verified, Keras 3.15), so what it
        changes in them never reaches the caller in either mode."""
        node = fn.node
        if fn.kind is not TraceKind.KERAS or not (
            isinstance(node, cst.FunctionDef) and node.name.value == "call"
        ):
            return False
        param = sole_parameter(self.ctx, receiver)
        if param is None or param not in (*node.params.params, *node.params.kwonly_params):
            return False
        cls = owning_class(self.ctx, node)
        return cls is not None and traced_of(self.ctx).definitions.keras_version(cls) == "3"

    def _reset_before(
        self, cls: cst.ClassDef, attr: str, node: cst.CSTNode, fn: TracedFunction
    ) -> bool:
        callers = set()
        caller: TracedFunction | None = fn.parent
        while caller is not None and len(callers) < 8:
            callers.add(caller.node)
            caller = caller.parent
        order = self.ctx.source_order(node)
        traced = traced_of(self.ctx)
        resets = set()
        for value, where in traced.facts.self_values.get(cls, {}).get(attr, []):
            if where is fn.node and self.ctx.source_order(value) < order:
                return True
            if where in callers:
                return True
            if (
                isinstance(where, cst.FunctionDef)
                and is_container_literal(self.ctx, value)
                and self._always_rebinds(value, where)
            ):
                resets.add(where.name.value)
        if resets and self._reset_call_before(fn.node, resets, order):
            return True
        # `__call__` (of the class or a base, here or in another module of the run) making a
        # fresh one before Keras runs `call`.
        for base in cls.bases:
            for ref in traced.definitions.foreign(base.value):
                if attr in self.ctx.view.call_resets.get(ref, ()):
                    return True
        for owner in (cls, *traced.module_bases(cls)):
            for value, where in traced.facts.self_values.get(owner, {}).get(attr, []):
                if (
                    isinstance(where, cst.FunctionDef)
                    and where.name.value == "__call__"
                    and is_container_literal(self.ctx, value)
                ):
                    return True
        return False

    def _always_rebinds(self, value: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """``self.x = <value>`` runs on every call of ``method``: a statement of its own body
        with no ``return``/``raise`` before it, and no other method of the module has that
        name (a subclass's override would reset nothing)."""
        ctx = self.ctx
        if not at_top_level(ctx, value, method) or not isinstance(method.body, cst.IndentedBlock):
            return False
        if sum(1 for f in traced_of(ctx).facts.functions if f.name.value == method.name.value) > 1:
            return False
        at = ctx.source_order(value)
        for stmt in method.body.body:
            if ctx.source_order(stmt) >= at:
                return True
            if any(isinstance(n, cst.Return | cst.Raise) for n in walk.descendants(stmt)):
                return False
        return True

    def _reset_call_before(self, fn: FunctionNode, resets: set[str], order: int) -> bool:
        """A statement of ``fn``'s own body before ``order`` is ``self.<m>()`` with ``m`` a
        method that rebinds the container to a fresh one whatever happens
        (``self.reset_losses()`` first thing in the call): what follows fills this call's."""
        if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
            return False
        for stmt in fn.body.body:
            if self.ctx.source_order(stmt) >= order:
                return False
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                call = small.value if isinstance(small, cst.Expr) else None
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and isinstance(call.func.value, cst.Name)
                    and call.func.value.value == "self"
                    and call.func.attr.value in resets
                ):
                    return True
        return False

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method not in _CONTAINER_ONLY and method not in _AMBIGUOUS:
            return
        receiver = func.value
        # `self.history["loss"].append(loss)`: an item of a container that outlives the call
        # is filled; the container decides (only methods no other type has).
        item = receiver
        while isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        if item is not receiver and (
            method not in _CONTAINER_ONLY or self._refilled_here(item, node, fn)
        ):
            return  # an item this call sets to a fresh container before filling it: scratch
        what = receiver_is_outer(self.ctx, receiver, fn)
        if what is None:
            return
        if method in _AMBIGUOUS and not self._known_container(receiver, fn):
            return
        if method in _ARITY and (
            not _fits_builtin(node, method) or (item is receiver and self._an_object(receiver, fn))
        ):
            return  # `store.append(index, value)`: another type's method
        if not self._wanted(node, receiver, fn):
            return
        shown = "" if item is receiver else shorten(self.ctx.code(item))
        self._report(node, what, f"{shown}.{method}()", fn)

    def _refilled_here(
        self, item: cst.BaseExpression, node: cst.CSTNode, fn: TracedFunction
    ) -> bool:
        """``self.endpoints["feats"] = []`` earlier in the traced body itself (not under an
        ``if``: a guard that makes it once is setup, and the fills accumulate): what the call
        fills is its own container."""
        ctx = self.ctx
        code = ctx.code(item)
        order = ctx.source_order(node)
        if not isinstance(fn.node, cst.FunctionDef):
            return False
        for part in walk.descendants(fn.node):
            if (
                isinstance(part, cst.Assign)
                and at_top_level(ctx, part, fn.node)
                and ctx.source_order(part) < order
                and any(ctx.code(t.target) == code for t in part.targets)
                and is_container_literal(ctx, part.value)
            ):
                return True
        return False

    def _an_object(self, receiver: cst.BaseExpression, fn: TracedFunction) -> bool:
        """Everything the receiver may hold is an instance of a class (a CapWords
        constructor that is no container type): `buffer = ReplayBuffer(n)` has its own
        `insert`."""
        values = list(values_of(self.ctx, receiver, fn))
        if not values and isinstance(receiver, cst.Name):
            values = passed_values(self.ctx, receiver)  # `def make_dataset(buffer): ...`
        return bool(values) and all(
            isinstance(v, cst.Call)
            and not is_container_literal(self.ctx, v)
            and names_a_class(v.func)
            for v in values
        )

    def _check_item_target(
        self, target: cst.BaseExpression, fn: TracedFunction, *, overwrite: bool = False
    ) -> None:
        if not isinstance(target, cst.Subscript):
            return
        receiver = target.value
        what = receiver_is_outer(self.ctx, receiver, fn)
        if what is None:
            return
        # Mutating a parameter in place is idiomatic for tf.data dict features; only a
        # mutable default really outlives the call.
        if (
            isinstance(receiver, cst.Name)
            and owner_of(self.ctx, receiver, fn) is Owner.PARAMETER
            and not self._known_container(receiver, fn)
        ):
            return
        if not self._wanted(target, receiver, fn):
            return
        if overwrite and self._named_slot(target, receiver, fn):
            return
        self._report(target, what, "item assignment", fn)

    def _named_slot(
        self, target: cst.Subscript, receiver: cst.BaseExpression, fn: TracedFunction
    ) -> bool:
        """``self.endpoints["head"] = x``: every trace overwrites the same named slot of a
        container on ``self`` (nothing accumulates) and no eager code reads it."""
        if not (
            isinstance(receiver, cst.Attribute)
            and isinstance(receiver.value, cst.Name)
            and receiver.value.value in ("self", "cls")
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
            and _fixed_key(target.slice[0].slice.value)
        ):
            return False
        cls = owning_class(self.ctx, fn.node)
        return readers(self.ctx).eager_reader(receiver.attr.value, cls) is None

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for t in node.targets:
            self._check_item_target(t.target, fn, overwrite=True)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        self._check_item_target(node.target, fn)

    def visit_Del(self, node: cst.Del, fn: TracedFunction) -> None:
        targets = node.target.elements if isinstance(node.target, cst.Tuple) else []
        for t in [el.value for el in targets] or [node.target]:
            self._check_item_target(t, fn)


def _fits_builtin(node: cst.Call, method: str) -> bool:
    if any(a.star or a.keyword is not None for a in node.args):
        return not any(a.keyword is not None and not a.star for a in node.args)
    low, high = _ARITY[method]
    return low <= len(node.args) <= high


def _emptied_at_the_end(ctx: ModuleContext, fn: FunctionNode, attr: str, node: cst.CSTNode) -> bool:
    """After ``node``, ``fn``'s body empties ``self.attr`` (``self.features.clear()``,
    ``self.x = []``) on every path: no ``return`` or ``raise`` comes before that statement, so
    each call fills the container and leaves it empty, as an eager call would."""
    if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
        return False
    after = ctx.source_order(node)
    for stmt in fn.body.body:
        if _empties(stmt, attr) and (
            ctx.source_order(stmt) > after or any(a is stmt for a in ctx.ancestors(node))
        ):
            return True  # later, or the emptying itself
        if _exits(stmt):
            return False
    return False


def _empties(stmt: cst.BaseStatement, attr: str) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]

    def on_self(expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.Attribute)
            and expr.attr.value == attr
            and isinstance(expr.value, cst.Name)
            and expr.value.value == "self"
        )

    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value == "clear"
            and not small.value.args
            and on_self(func.value)
        )
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        value = small.value
        empty = isinstance(value, cst.List | cst.Dict) and not value.elements
        return empty and on_self(small.targets[0].target)
    return False


class _Exits(walk.Visitor):
    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            return False
        if isinstance(node, cst.Return | cst.Raise):
            self.found = True
        return not self.found


def _exits(stmt: cst.BaseStatement) -> bool:
    exits = _Exits()
    exits.walk(stmt)
    return exits.found


def _fixed_key(key: cst.BaseExpression) -> bool:
    """A key spelled from literals (``"head"``, ``"block_%s" % i``, ``f"block_{i}"``,
    ``"a/" + name``): the same slot on every trace, not one per call."""
    if isinstance(key, cst.SimpleString | cst.Integer | cst.FormattedString):
        return True
    if isinstance(key, cst.ConcatenatedString):
        return True
    if isinstance(key, cst.BinaryOperation) and isinstance(key.operator, cst.Modulo | cst.Add):
        return isinstance(key.left, cst.SimpleString | cst.FormattedString)
    if isinstance(key, cst.Call) and isinstance(key.func, cst.Attribute):
        return key.func.attr.value == "format" and isinstance(key.func.value, cst.SimpleString)
    return False
