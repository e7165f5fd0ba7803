from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.trace_diagnostics import static_metadata
from tflint_graph.core.vocabulary import KERAS_INPUTS, OPTIMIZER_NAME
from tflint_graph.model import walk
from tflint_graph.model.calls import argument_passed
from tflint_graph.model.certain import certain_tensors
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import dotted, last_name, root_name
from tflint_graph.model.state import (
    assigns_on_every_branch,
    copied_here,
    getattr_read,
    is_constant,
    owned_by_self,
    owning_class,
    read_before,
    readers,
    restored_in_call,
    restored_on_exit,
    stored_eagerly,
    stores_only,
    written_eagerly,
)
from tflint_graph.model.tensors import Kind, is_variable_call, tensors
from tflint_graph.model.values import (
    assigned_value,
    attribute_values,
    is_container_literal,
    name_values,
    narrowing_types,
)
from tflint_graph.traced import traced_of

# Attributes Keras keeps on tensors (`outputs._keras_mask = mask`): set on a tensor of the
# trace, whatever the analysis knows of the object.
_TENSOR_METADATA = frozenset({"_keras_mask", "_keras_history", "_keras_shape"})

# Values whose creation per trace TFG205/TFG208 report; TFG106 leaves them alone.
_VARIABLE_OWNERS = (
    "tensorflow.Variable",
    "keras.layers.",
    "keras.optimizers.",
    "keras.metrics.",
    "keras.Model",
    "keras.Sequential",
    "keras.models.",
)
# Methods that put values into a list, dict or set.
_FILLS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})
# An optimizer's hyperparameters that Keras keeps in variables.
_HYPERPARAMETERS = frozenset({"learning_rate", "lr"})
# Flags of Keras's build protocol, set by layers themselves.
_KERAS_FLAGS = frozenset({"built", "_built"})
# Objects a layer builds once and keeps (lookup tables, layers, tokenizers' helpers).
_BUILT_OBJECTS = ("tensorflow.lookup.", "keras.", "tensorflow.keras.")


def _static_only(value: cst.BaseExpression) -> bool:
    """``value`` holds static metadata only: ``x.shape``, or a comprehension of it; whether an
    argument was given (``weights is not None``: fixed for each trace, as passing None instead
    traces anew); the keys of a Python dict (``sorted(inputs.keys())``)."""
    if isinstance(value, cst.DictComp):
        return static_metadata(value.value)
    if isinstance(value, cst.ListComp | cst.GeneratorExp | cst.SetComp):
        return static_metadata(value.elt)
    if isinstance(value, cst.Comparison):
        return all(
            isinstance(c.operator, cst.Is | cst.IsNot)
            and isinstance(c.comparator, cst.Name)
            and c.comparator.value == "None"
            for c in value.comparisons
        )
    if (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "keys"
    ):
        return True
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("sorted", "list", "tuple", "len")
        and len(value.args) == 1
    ):
        return _static_only(value.args[0].value)
    return static_metadata(value)


class PythonStateMutation(Rule):
    """Assigning a Python attribute in traced code happens once per trace, not per call."""

    code = "TFG106"
    name = "python-state-mutation"
    QUIET_IN_TESTS = True

    VALID = [
        """
import tensorflow as tf

class Counter(tf.Module):
    def __init__(self):
        self.steps = tf.Variable(0)

    @tf.function
    def __call__(self, x):
        self.steps.assign_add(1)
        return x
""",
        """
import tensorflow as tf

class Scale(tf.Module):
    def __init__(self):
        self.v = None

    @tf.function
    def __call__(self, x):
        if self.v is None:
            self.v = tf.Variable(tf.ones_like(x))
        return self.v * x
""",
        """
import tensorflow as tf

class Config:
    pass

@tf.function
def step(x):
    cfg = Config()
    cfg.scale = 2.0  # a fresh object of this call
    return x * cfg.scale
""",
        """
import tensorflow as tf

class Backbone(tf.keras.layers.Layer):
    def call(self, x):
        self.endpoints = {}  # per-trace scratch: set first, read by no eager code
        self.endpoints["stem"] = x
        return self.endpoints["stem"] * 2
""",
        """
import tensorflow as tf

class Tokenizer(tf.keras.layers.Layer):
    def _maybe_init(self):
        if getattr(self, "table", None) is None:
            self._init_table()

    def _init_table(self):
        keys = tf.constant(["a", "b"])
        init = tf.lookup.KeyValueTensorInitializer(keys, tf.constant([0, 1]))
        self.table = tf.lookup.StaticHashTable(init, -1)  # one-time setup via a helper

    def call(self, x):
        self._maybe_init()
        return self.table.lookup(x)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

class Model(tf.keras.Model):
    def train_step(self, data):
        self.step_count += 1  # TFG106
        return {}
""",
        """
import tensorflow as tf

class Attention(tf.keras.layers.Layer):
    def call(self, q, k):
        scores = tf.matmul(q, k, transpose_b=True)
        self.last_scores = scores  # TFG106
        return scores

    def attention_map(self):
        return self.last_scores.numpy()  # eager code reads the graph tensor
""",
        """
import tensorflow as tf

class Model(tf.keras.Model):
    def train_step(self, data):
        self.total = self.total + tf.reduce_sum(data)  # TFG106
        return {}
""",
    ]

    def _check(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression | None,
        fn: TracedFunction,
        statement: cst.CSTNode,
        *,
        augmented: bool = False,
    ) -> None:
        if not isinstance(target, cst.Attribute):
            if isinstance(target, cst.Tuple | cst.List):  # `self.a, self.b = ...`
                for el in target.elements:
                    self._check(el.value, None, fn, statement)
            return
        ctx = self.ctx
        root = root_name(target)
        if root is not None and ctx.bindings(root) and ctx.is_local_to(root, fn.node):
            return  # an object created within this call
        if copied_here(ctx, target.value, fn.node):
            return  # `state = attr.evolve(state, ...)` first: this call's own copy
        if root is not None and self._made_by_enclosing_trace(root, fn):
            return  # a closure's object that the enclosing traced function makes per trace
        if root is not None and traced_of(ctx).arguments.made_per_trace(root, fn.node):
            return  # a parameter every trace fills with an object made in that trace
        if isinstance(target.value, cst.Name) and (
            self._symbolic_tensor(target.value, fn)
            or (target.attr.value in _TENSOR_METADATA and target.value.value not in ("self", "cls"))
        ):
            return  # `tensor._keras_history = ...`: metadata of a symbolic tensor of this trace
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("assign", "assign_add", "assign_sub")
            and ctx.code(value.func.value) == ctx.code(target)
        ):
            return  # `self.v = self.v.assign_add(x)`: the op runs in the graph; still the variable
        if isinstance(value, cst.Call) and ctx.resolve(value.func).startswith(*_VARIABLE_OWNERS):
            return  # creating variables or their Keras owners is TFG205's and TFG208's concern
        if traced_of(ctx).setup.covers(target, fn):
            return
        if restored_on_exit(ctx, target, fn.node):
            return  # a scoped override: the context manager puts the old value back
        if restored_in_call(ctx, target, fn.node):
            return  # a scoped override: the call puts back the value it found
        if target.attr.value in _KERAS_FLAGS:
            return  # Keras's own build protocol: the layer says whether build() must run
        if target.attr.value in _HYPERPARAMETERS and OPTIMIZER_NAME.match(last_name(target.value)):
            # `self.optimizer.learning_rate = lr`: Keras's setter assigns the optimizer's
            # variable, an op of the graph that runs on every call (verified, Keras 3.15 and
            # tf_keras 2.21)
            return
        text = dotted(target) or ctx.code(target)
        on_self = (
            isinstance(target.value, cst.Name) and target.value.value in ("self", "cls")
        ) or owned_by_self(target.value)
        # A module object's or a parameter's attribute is anyone's to read: only state on
        # `self` (or on an object it holds: `self.layer.kernel = w` before calling the
        # sublayer) can be shown to be per-trace scratch.
        if on_self and traced_of(ctx).self_is_fresh(fn):
            return  # `self` is an object the traced caller made in this call
        if (
            augmented
            and on_self
            and readers(ctx).assigned_first(target, fn.node)
            and not _reads_every_attribute(ctx, fn.node)
        ):
            # `self.params = k * d; self.params += b`: the call computes the value afresh
            # before adding to it, so nothing accumulates across calls: one write.
            augmented = False
        if (
            not augmented
            and on_self
            and is_constant(value)
            and stores_only(ctx, target.attr.value, owning_class(ctx, fn.node), ctx.code(value))
        ):
            # `self._first_building_call = False` after the one-time build: every call stores
            # the same literal and no method stores another, so once per trace is the same.
            return
        if not augmented and not on_self and self._flag_set_first(target, value, fn, statement):
            return  # `model.trainable = False` before the step uses the model: every call's value
        if not augmented and value is not None and self._idempotent(target, value, fn):
            return  # `self.frozen = self.frozen and self.trainable`: once equals every call
        if not augmented and value is not None and self._same_for_every_element(target, value, fn):
            return  # a Dataset function traces once: each element would store this same value
        if augmented or not on_self or read_before(ctx, target, statement, fn.node):
            variable = None if augmented else self._variable_replaced(target, value, fn)
            if variable is not None:
                self.report(
                    target,
                    f"{text} holds a tf.Variable (line {variable}), which this assignment "
                    f"replaces with a symbolic tensor of the trace of {fn.where}: the next "
                    "trace reads a tensor of another graph (InaccessibleTensorError) and "
                    "training no longer reaches the variable; compute into a local name, or "
                    ".assign() the new value to the variable",
                    fn,
                )
                return
            self.report(
                target,
                f"assignment to {text} runs only while tracing {fn.where}; later calls do not "
                "update it; keep changing state in a tf.Variable and .assign() to it",
                fn,
            )
            return
        cls = owning_class(ctx, fn.node)
        reader = readers(ctx).eager_reader(
            target.attr.value,
            cls,
            every_trace=self._runs_every_trace(statement, fn, target),
            keras_call=cls is not None
            and fn.kind is TraceKind.KERAS
            and isinstance(fn.node, cst.FunctionDef)
            and fn.node.name.value == "call",
        )
        if reader is None:
            return  # per-trace scratch: set before any read of this trace, read by no eager code
        if self._from_keras_input(statement, cls):
            # `out, self.output_state = step(x, self.input_state)` with `self.input_state =
            # keras.Input(...)`: a symbolic Keras tensor whoever runs it, kept to wire the
            # outputs of a functional model, which computes it on every call.
            return
        if value is not None and (
            _static_only(value) or self._static_helper(value) or self._python_count(value, fn)
        ):
            # `{k: t.get_shape() for k, t in endpoints.items()}`: static shapes, which an
            # eager reader may read as they are.
            return
        if self._emptied_then_filled(target, value, fn):
            # `self._masks = []`, then `self._masks.append(m)`: TFG102 reports the leak
            # where the tensors go in; an empty list read eagerly is what eager calls leave.
            return
        if is_constant(value) and not written_eagerly(ctx, target.attr.value, cls):
            # `self._ready = True`: every call would store the same literal, and no eager code
            # puts another value back, so the last trace left what eager calls would leave.
            return
        if value is not None and tensors(ctx, fn).is_tensor(value):
            self.report(
                target,
                f"{text} keeps a symbolic tensor of the trace of {fn.where}; {reader} reads it "
                "outside traced code and gets a graph tensor, not this call's value; return it "
                "from the traced function, or .assign() it to a tf.Variable",
                fn,
            )
            return
        self.report(
            target,
            f"assignment to {text} runs only while tracing {fn.where}, but {reader} reads it "
            f"outside traced code and sees what the last trace stored; {self._advice(value)}",
            fn,
        )

    def _flag_set_first(
        self,
        target: cst.Attribute,
        value: cst.BaseExpression | None,
        fn: TracedFunction,
        statement: cst.CSTNode,
    ) -> bool:
        """``target`` (on an object other than ``self``) gets a literal in statements that
        every trace runs, outside any branch or loop, the first of them before ``fn`` reads it
        or calls anything that might (``disc.trainable = True``, ``disc(x)``, ``disc.trainable
        = False`` in a GAN step), and no eager code of the module stores another value there:
        a mode flag of this call.  Every call would store the same literals, so storing them
        once per trace leaves what per-call runs leave, and this trace's own reads see them."""
        ctx = self.ctx
        if not is_constant(value):
            return False
        text = ctx.code(target)
        writes: list[cst.CSTNode] = []
        for node in walk.descendants(fn.node):
            if isinstance(node, cst.Assign) and ctx.enclosing_function(node) is fn.node:
                if any(ctx.code(t.target) == text for t in node.targets):
                    if not is_constant(node.value) or not self._runs_every_trace(node, fn):
                        return False
                    writes.append(node)
            elif isinstance(node, cst.AugAssign | cst.AnnAssign) and ctx.code(node.target) == text:
                return False
        if statement not in writes:
            return False
        first = ctx.source_order(writes[0])
        for node in walk.descendants(fn.node):
            if ctx.source_order(node) >= first or ctx.enclosing_function(node) is not fn.node:
                continue
            if isinstance(node, cst.Attribute) and ctx.code(node) == text:
                return False  # read before this call sets it: carried from another call
            if isinstance(node, cst.Call) and not ctx.resolve(node.func).imported:
                # `decoder(x)` first: it may read the flag a trace left, and so may a call of
                # another object, which can hold this one (a model and its backbone).
                return False
        literals = {ctx.code(w.value) for w in writes if isinstance(w, cst.Assign)}
        return all(
            stored is not None and ctx.code(stored) in literals
            for stored in stored_eagerly(ctx, target.attr.value)
        )  # eager code that puts another value there between calls observes the difference

    def _from_keras_input(self, statement: cst.CSTNode, cls: cst.ClassDef | None) -> bool:
        """The assigned value reads ``self.<a>``, which the class sets to a ``keras.Input``."""
        value = statement.value if isinstance(statement, cst.Assign | cst.AnnAssign) else None
        if value is None or cls is None:
            return False
        ctx = self.ctx
        inputs = {
            attr
            for attr, values in traced_of(ctx).facts.self_values.get(cls, {}).items()
            if any(
                isinstance(v, cst.Call) and ctx.resolve(v.func).is_(*KERAS_INPUTS)
                for v, _ in values
            )
        }
        return bool(inputs) and self._reads_self(value, inputs, 0)

    def _reads_self(self, value: cst.BaseExpression, attrs: set[str], depth: int) -> bool:
        """``value`` reads ``self.<a>`` for an ``a`` of ``attrs``, directly or through the
        values of the local names it reads (``memory = tf.concat([self.state, x], 1)``)."""
        for node in (value, *walk.descendants(value)):
            if (
                isinstance(node, cst.Attribute)
                and node.attr.value in attrs
                and isinstance(node.value, cst.Name)
                and node.value.value == "self"
            ):
                return True
            if isinstance(node, cst.Name) and depth < 3 and node.value != "self":
                # every value the name may hold (`memory` made from the input in one mode and
                # from a variable in another is no wiring in the other mode)
                values = list(name_values(self.ctx, node))
                if values and all(self._reads_self(v, attrs, depth + 1) for v in values):
                    return True
        return False

    def _emptied_then_filled(
        self, target: cst.Attribute, value: cst.BaseExpression | None, fn: TracedFunction
    ) -> bool:
        """``value`` is an empty list, dict or set, and ``fn`` goes on to fill ``target``
        (``.append``/``.extend``/``.update``/item assignment after the write)."""
        ctx = self.ctx
        empty = (isinstance(value, cst.List | cst.Dict | cst.Set) and not value.elements) or (
            isinstance(value, cst.Call)
            and not value.args
            and isinstance(value.func, cst.Name)
            and value.func.value in ("list", "dict", "set")
        )
        if not empty:
            return False
        text = ctx.code(target)
        after = ctx.source_order(target)
        for node in walk.descendants(fn.node):
            if ctx.source_order(node) <= after:
                continue
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in _FILLS
                and ctx.code(node.func.value) == text
            ):
                return True
            if isinstance(node, cst.Subscript):
                parent = ctx.parent(node)
                if isinstance(parent, cst.AssignTarget) and ctx.code(node.value) == text:
                    return True
        return False

    def _runs_every_trace(
        self, node: cst.CSTNode, fn: TracedFunction, target: cst.BaseExpression | None = None
    ) -> bool:
        child: cst.CSTNode = node
        for anc in self.ctx.ancestors(node):
            if anc is fn.node:
                return True
            if isinstance(anc, cst.Else):
                pass
            elif isinstance(anc, cst.If) and child is not anc.test and target is not None:
                # `if mask is not None: self.lengths = ... else: self.lengths = ...`
                head = anc
                while isinstance(self.ctx.parent(head), cst.If):
                    head = self.ctx.parent(head)  # type: ignore[assignment]
                if not assigns_on_every_branch(self.ctx, head, target):
                    return False
            elif not isinstance(anc, cst.IndentedBlock | cst.SimpleStatementLine | cst.With):
                return False  # `if t > 0: obj.flag = True`: a branch AutoGraph may trace too
            child = anc
        return False

    def _idempotent(
        self, target: cst.Attribute, value: cst.BaseExpression, fn: TracedFunction
    ) -> bool:
        """``value`` combines the target's own value with Python settings through ``and``,
        ``or``, ``min`` or ``max`` (``self.frozen = self.frozen and self.trainable``): applying
        it again changes nothing, so storing it once per trace leaves what per-call runs would."""
        ctx = self.ctx
        if isinstance(value, cst.IfExp):
            # `self.w = 8 if self.w is None else self.w`: a default filled in once, then kept
            # and nothing eager puts None back (`reset()`), which would fill it again.
            mine = ctx.code(target)
            kept = [b for b in (value.body, value.orelse) if ctx.code(b) == mine]
            other = [b for b in (value.body, value.orelse) if ctx.code(b) != mine]
            test = value.test
            return (
                len(kept) == 1
                and len(other) == 1
                and is_constant(other[0])
                and isinstance(test, cst.Comparison)
                and ctx.code(test.left) == mine
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Is | cst.IsNot)
                and ctx.code(test.comparisons[0].comparator) == "None"
                and not written_eagerly(ctx, target.attr.value, owning_class(ctx, fn.node))
            )
        if (
            isinstance(value, cst.Call)
            and len(value.args) == 3
            and ctx.resolve(value.func).is_builtin("getattr")
            and getattr_read(value) == (value.args[0].value, target.attr.value)
            and ctx.code(value.args[0].value) == ctx.code(target.value)
            and is_constant(value.args[2].value)
        ):
            # `self.calls = getattr(self, "calls", 0)`: the same default filled in once
            return not written_eagerly(ctx, target.attr.value, owning_class(ctx, fn.node))
        if isinstance(value, cst.BooleanOperation):
            operands: list[cst.BaseExpression] = []
            pending: list[cst.BaseExpression] = [value]
            while pending:
                expr = pending.pop()
                if isinstance(expr, cst.BooleanOperation):
                    pending += [expr.left, expr.right]
                else:
                    operands.append(expr)
        elif (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and any(ctx.resolve(value.func).is_builtin(b) for b in ("min", "max"))
            and all(a.star == "" and a.keyword is None for a in value.args)
        ):
            operands = [a.value for a in value.args]
        else:
            return False
        mine = ctx.code(target)
        if not any(ctx.code(o) == mine for o in operands):
            return False
        inference = tensors(ctx, fn)
        return all(
            isinstance(o, cst.Name | cst.Attribute | cst.Integer | cst.Float)
            and not inference.may_be_tensor(o)
            for o in operands
        )

    def _same_for_every_element(
        self, target: cst.Attribute, value: cst.BaseExpression, fn: TracedFunction
    ) -> bool:
        """``fn`` is traced only for a ``Dataset`` transformation, which traces its function
        once and runs the graph for every element; ``value`` is a Python value, not the
        target's own, so it is the same for every element: storing it once, while tracing,
        leaves what storing it per element would (``decoder.size = size`` with ``size`` bound
        by ``functools.partial``)."""
        if not fn.dataset_only:
            return False
        mine = self.ctx.code(target)
        if any(
            isinstance(part, cst.Name | cst.Attribute) and self.ctx.code(part) == mine
            for part in (value, *walk.descendants(value))
        ):
            return False
        return self._python_value(value, fn, 0)

    def _python_value(self, value: cst.BaseExpression, fn: TracedFunction, depth: int) -> bool:
        """``value`` calls nothing and each name in it holds a Python value while ``fn``
        traces: a parameter the trace's caller fills with one (followed up the chain of
        callers), a value captured from untraced code, a local bound to such a value."""
        ctx = self.ctx
        if depth > 8:
            return False
        for part in (value, *walk.descendants(value)):
            if isinstance(part, cst.Call | cst.Lambda | cst.Await | cst.Yield):
                return False
            if not isinstance(part, cst.Name) or ctx.resolve(part).imported:
                continue
            found = ctx.bindings(part)
            if not found:
                return False
            for a in found:
                node = a.node
                if isinstance(node, cst.Param):
                    if ctx.parent(ctx.parent(node)) is fn.node:
                        if not self._python_argument(node, fn, depth):
                            return False
                    elif any(anc is fn.node for anc in ctx.ancestors(node)):
                        return False  # a lambda's or nested function's parameter
                    continue  # captured from a function around this one
                bound = assigned_value(ctx, node)
                if bound is None or not self._python_value(bound, fn, depth + 1):
                    return False
        return True

    def _python_argument(self, param: cst.Param, fn: TracedFunction, depth: int) -> bool:
        """Every trace fills ``param`` of ``fn`` with a Python value: a root's non-element
        parameter, or what every traced caller (each traced for a Dataset only) passes."""
        if fn.parent is None:
            return tensors(self.ctx, fn).param_kind(param) is None
        if fn.kind is not TraceKind.CALLEE:
            return False
        sites = traced_of(self.ctx).arguments.traced_callers(fn.node)
        for caller, call in sites:
            arg = argument_passed(self.ctx, call, fn.node, param)
            if (
                arg is None
                or not caller.dataset_only
                or not self._python_value(arg, caller, depth + 1)
            ):
                return False
        return bool(sites)

    def _static_helper(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """``_shape_tuple(t)``, or ``tf.nest.map_structure(_shape_tuple, inputs)``: a function
        of this module whose every ``return`` gives static metadata or None."""
        if not isinstance(value, cst.Call) or depth > 2:
            return False
        ctx = self.ctx
        func = value.func
        if ctx.resolve(func).is_("tensorflow.nest.map_structure") and value.args:
            func = value.args[0].value
        definitions = traced_of(ctx).definitions
        found = [f for f, _ in definitions.callables(func, ctx.enclosing_function(value))]
        return bool(found) and all(
            isinstance(f, cst.FunctionDef) and self._returns_static(f, depth) for f in found
        )

    def _returns_static(self, fn: cst.FunctionDef, depth: int) -> bool:
        results = [
            r.value
            for r in walk.descendants(fn.body)
            if isinstance(r, cst.Return) and self.ctx.enclosing_function(r) is fn
        ]
        if not results:
            return False
        for result in results:
            if result is None or (isinstance(result, cst.Name) and result.value == "None"):
                continue
            if isinstance(result, cst.Name):
                bound = list(name_values(self.ctx, result))
                if bound and all(
                    _static_only(v) or self._static_helper(v, depth + 1) for v in bound
                ):
                    continue
                return False
            if not (_static_only(result) or self._static_helper(result, depth + 1)):
                return False
        return True

    def _made_by_enclosing_trace(self, root: cst.Name, fn: TracedFunction) -> bool:
        """``root`` is a local (no parameter) of a function that encloses ``fn`` and whose
        trace traces ``fn`` too (a ``tf.cond`` branch or loop body defined inside a
        ``tf.function``): each trace of that function makes the object anew.  So is a
        parameter of such a function that every trace fills with an object made in that trace
        (``made_per_trace``: a ``tf.while_loop`` body's loop variables)."""
        ctx = self.ctx
        arguments = traced_of(ctx).arguments
        outer = fn.parent
        while outer is not None:
            if any(a is outer.node for a in ctx.ancestors(fn.node)):
                if ctx.is_local_to(root, outer.node):
                    return True
                if arguments.made_per_trace(root, outer.node):
                    return True  # its parameter, filled per trace (a loop variable)
            outer = outer.parent
        return False

    def _python_count(self, value: cst.BaseExpression, fn: TracedFunction) -> bool:
        """``len(args)``: a Python int fixed by the structure of this trace's inputs.  Only
        AutoGraph's ``len`` of a tensor may give a tensor (a dimension unknown while tracing),
        so it counts where AutoGraph is off, or when the argument is no tensor."""
        if not (
            isinstance(value, cst.Call)
            and len(value.args) == 1
            and self.ctx.resolve(value.func).is_builtin("len")
        ):
            return False
        return not fn.autograph or not tensors(self.ctx, fn).is_tensor(value.args[0].value)

    def _symbolic_tensor(self, name: cst.Name, fn: TracedFunction) -> bool:
        """``name`` surely holds a tensor here (``model.certain``), or is read under ``if
        isinstance(name, tf.Tensor):``: an attribute set on it lives and dies with it."""
        ctx = self.ctx
        for types in narrowing_types(ctx, name, fn.node):
            if types and all(ctx.resolve(t).startswith("tensorflow.") for t in types):
                return True
        definitions = traced_of(ctx).definitions
        return certain_tensors(ctx, fn, definitions).kind(name) is Kind.TENSOR

    def _variable_replaced(
        self, target: cst.Attribute, value: cst.BaseExpression | None, fn: TracedFunction
    ) -> int | None:
        """The line where another method puts a ``tf.Variable`` in the attribute that
        ``self.<attr> = <tensor>`` rebinds here (``self.pos_embed = tf.cast(self.pos_embed,
        ...)`` of an ``add_weight``); None otherwise."""
        if value is None or not tensors(self.ctx, fn).is_tensor(value):
            return None
        for other in attribute_values(self.ctx, target, fn):
            if is_variable_call(self.ctx, other) and self.ctx.enclosing_function(
                other
            ) is not self.ctx.enclosing_function(target):
                return self.ctx.line(other)
        return None

    def _advice(self, value: cst.BaseExpression | None) -> str:
        """What to do instead, for the kind of value stored."""
        if value is not None and (
            is_container_literal(self.ctx, value)
            or (isinstance(value, cst.Call) and not self.ctx.resolve(value.func).imported)
            or (
                isinstance(value, cst.Call)
                and self.ctx.resolve(value.func).startswith(*_BUILT_OBJECTS)
            )
        ):
            return "build it once in __init__() or build(), or return it"
        return "keep changing state in a tf.Variable and .assign() to it"

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        for t in node.targets:
            self._check(t.target, node.value, fn, node)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        self._check(node.target, None, fn, node, augmented=True)

    def visit_AnnAssign(self, node: cst.AnnAssign, fn: TracedFunction) -> None:
        if node.value is not None:
            self._check(node.target, node.value, fn, node)


def _reads_every_attribute(ctx: ModuleContext, fn: FunctionNode) -> bool:
    """``fn`` reads its object's attributes wholesale (``vars(self)``, ``self.__dict__``,
    ``getattr(self, name)`` with a computed name), so a write from it may carry an old value
    on.  (``getattr(self, "calls", 0)`` is an ordinary read of ``self.calls``.)"""
    for node in walk.descendants(fn):
        if isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return True
        if not isinstance(node, cst.Call):
            continue
        res = ctx.resolve(node.func)
        if res.is_builtin("vars"):
            return True
        if (
            res.is_builtin("getattr")
            and len(node.args) > 1
            and not isinstance(node.args[1].value, cst.SimpleString)
        ):
            return True
    return False
