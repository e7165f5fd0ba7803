from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.model.autograph import converts, is_graph_loop
from tflint_graph.model.certain import certain_tensors, passed_python_sequences
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.tensors import TensorInference, iterated_in_python, tensors
from tflint_graph.model.values import (
    assigned_value,
    attribute_values,
    owner_of,
    sole_parameter,
)
from tflint_graph.traced import traced_of

_GROW_METHODS = frozenset({"append", "extend", "insert"})


class PythonListInGraphLoop(Rule):
    """Growing a Python list inside a loop that AutoGraph turns into `tf.while_loop`."""

    code = "TFG207"
    name = "python-list-in-graph-loop"
    RAISES_WHILE_TRACING = True

    VALID = [
        """
import tensorflow as tf

@tf.function
def step(x):
    parts = []
    for i in range(3):  # a Python int: unrolled
        parts.append(x * i)
    return tf.stack(parts)
""",
        """
import tensorflow as tf

@tf.function
def step(x, n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta = ta.write(i, x * tf.cast(i, tf.float32))
    return ta.stack()
""",
        """
import tensorflow as tf

@tf.function
def step(x, n):
    total = tf.constant(0.0)
    for i in tf.range(n):
        parts = []  # created in the loop body and consumed there
        parts.append(x)
        parts.append(x * 2.0)
        total += tf.reduce_sum(tf.stack(parts))
    return total
""",
        """
import tensorflow as tf

def collect(ds):
    out = []
    for x in ds:  # eager code
        out.append(x)
    return out
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def step(x, n):
    outputs = []
    for i in tf.range(n):
        outputs.append(x * tf.cast(i, tf.float32))  # TFG207
    return tf.stack(outputs)
""",
        """
import tensorflow as tf

@tf.function
def step(x):
    rows = []
    i = tf.constant(0)
    while i < tf.shape(x)[0]:
        rows += [x[i] * 2.0]  # TFG207
        i += 1
    return tf.stack(rows)
""",
        """
import tensorflow as tf

@tf.function
def total(ds):
    seen = []
    for batch in ds.batch(2):
        seen.extend([batch])  # TFG207
    return len(seen)

total(tf.data.Dataset.range(4))
""",
    ]

    # -- which loop ---------------------------------------------------------------------
    def _graph_loop(
        self, loop: cst.For | cst.While, fn: TracedFunction, inference: TensorInference
    ) -> bool:
        if not converts(fn):
            return False
        if isinstance(loop, cst.For) and self._python_sequence_param(loop.iter, fn):
            return False
        if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call):
            res = self.ctx.resolve(loop.iter.func)
            if res.is_builtin("range"):
                # `range(num_classes)` over a bare parameter: a graph loop only where
                # something shows a tensor is passed (callers mostly pass a Python int,
                # which unrolls); `range(tf.shape(x)[0])` is one.
                definitions = traced_of(self.ctx).definitions
                certain = certain_tensors(self.ctx, fn, definitions)
                return any(certain.is_tensor(a.value) for a in loop.iter.args)
            if res.is_builtin("enumerate") or res.is_builtin("zip"):
                # AutoGraph converts enumerate()/zip() of datasets; of a tensor they stay
                # Python iteration and fail before any list grows (TFG203's concern).
                traced = traced_of(self.ctx)
                return any(traced.is_dataset(a.value) for a in loop.iter.args)
        return is_graph_loop(self.ctx, loop, fn, inference, traced_of(self.ctx).definitions)

    def _python_sequence_param(self, it: cst.BaseExpression, fn: TracedFunction) -> bool:
        """``for v in variables`` over a parameter the body also iterates as only a Python
        sequence can be (``zip(variables, ...)``, a comprehension): a list, whose loop
        unrolls, or a tensor, which raises at that other iteration first (TFG203); or one
        every call of the module passes a Python list or tuple."""
        param = sole_parameter(self.ctx, it)
        return param is not None and (
            iterated_in_python(self.ctx, fn, param)
            or (
                fn.input_signature is None  # a TensorSpec makes the list a tensor
                and passed_python_sequences(
                    self.ctx, traced_of(self.ctx).definitions, fn.node, param
                )
            )
        )

    def _enclosing_loop(self, node: cst.CSTNode, fn: TracedFunction) -> cst.For | cst.While | None:
        inference = tensors(self.ctx, fn)
        child = node
        for anc in self.ctx.ancestors(node):
            if anc is fn.node:
                return None
            if (
                isinstance(anc, cst.For | cst.While)
                and child is anc.body
                and self._graph_loop(anc, fn, inference)
            ):
                return anc
            child = anc
        return None

    # -- which list ---------------------------------------------------------------------

    def _is_list(self, value: cst.BaseExpression | None) -> bool:
        if isinstance(value, cst.List | cst.ListComp):
            return True
        if isinstance(value, cst.Call):
            return self.ctx.resolve(value.func).is_builtin("list")
        if isinstance(value, cst.BinaryOperation) and isinstance(
            value.operator, cst.Add | cst.Multiply
        ):
            return self._is_list(value.left) or self._is_list(value.right)
        return False

    def _bound_value(self, target: cst.CSTNode) -> cst.BaseExpression | None:
        """The value bound to ``target``, also in ``xs, ys = [], []``."""
        value = assigned_value(self.ctx, target)
        if value is not None:
            return value
        element = self.ctx.parent(target)
        holder = self.ctx.parent(element) if isinstance(element, cst.Element) else None
        if not isinstance(holder, cst.Tuple | cst.List):
            return None
        value = assigned_value(self.ctx, holder)
        if not isinstance(value, cst.Tuple | cst.List):
            return None
        if len(value.elements) != len(holder.elements):
            return None
        index = holder.elements.index(element)
        item = value.elements[index]
        return None if isinstance(item, cst.StarredElement) else item.value

    def _is_growth(self, target: cst.CSTNode, grow: cst.CSTNode) -> bool:
        """The binding ``target`` is the growing statement itself (``xs += ...``)."""
        return self.ctx.inside(target, grow)

    def _grown_list(
        self,
        receiver: cst.BaseExpression,
        grow: cst.CSTNode,
        loop: cst.CSTNode,
        fn: TracedFunction,
    ) -> bool:
        """``receiver`` is a Python list created outside ``loop`` whose growth is seen after
        the loop (a local read after it, or a list that outlives the call)."""
        body = loop.body
        if isinstance(receiver, cst.Attribute):
            values = list(attribute_values(self.ctx, receiver, fn))
            if any(self.ctx.inside(v, body) and not self._is_growth(v, grow) for v in values):
                return False
            return any(self._is_list(v) and not self.ctx.inside(v, body) for v in values)
        if not isinstance(receiver, cst.Name):
            return False
        found = self.ctx.bindings(receiver)
        if not found:
            return False
        is_list = False
        for a in found:
            target = a.node
            if isinstance(target, cst.Param):
                is_list = is_list or self._is_list(target.default)
                continue
            if self.ctx.inside(target, body):
                if not self._is_growth(target, grow):
                    return False  # rebound in the loop body: a fresh list per iteration
                continue
            is_list = is_list or self._is_list(self._bound_value(target))
        if not is_list:
            return False
        own = self.ctx.function_scope(fn.node)
        if owner_of(self.ctx, receiver, fn) is not None or any(a.scope is not own for a in found):
            return True  # module-level, closure, default argument: outlives the loop
        # A local list: only its use after the loop shows the lost entries.
        return any(not self.ctx.inside(ref.node, body) for a in found for ref in a.references)

    # -- report -------------------------------------------------------------------------
    def _header(self, loop: cst.For | cst.While) -> str:
        if isinstance(loop, cst.For):
            text = f"for {self.ctx.code(loop.target)} in {self.ctx.code(loop.iter)}"
        else:
            text = f"while {self.ctx.code(loop.test)}"
        return shorten(text, 50)

    def _check(
        self,
        node: cst.CSTNode,
        receiver: cst.BaseExpression,
        action: str,
        fn: TracedFunction,
        *,
        rebinds: bool,
    ) -> None:
        loop = self._enclosing_loop(node, fn)
        if loop is None or not self._grown_list(receiver, node, loop, fn):
            return
        name = " ".join(self.ctx.code(receiver).split())
        if rebinds:
            what = (
                f"makes {name} a loop variable that changes length: TypeError ('{name}' does "
                "not have the same nested structure after one iteration)"
            )
        else:
            what = (
                f"runs once while tracing: list {name} gets one entry, not one per "
                "iteration, and a tensor made in the loop raises InaccessibleTensorError "
                "when used after it"
            )
        self.report(
            node,
            f"{action} inside `{self._header(loop)}` in {fn.where}, which AutoGraph turns "
            f"into a tf.while_loop, {what}; collect the values in a tf.TensorArray "
            "(`ta = ta.write(i, value)`, then `ta.stack()`)",
            fn,
        )

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GROW_METHODS:
            receiver = func.value
            action = f"{' '.join(self.ctx.code(receiver).split())}.{func.attr.value}()"
            self._check(node, receiver, action, fn, rebinds=False)

    def visit_AugAssign(self, node: cst.AugAssign, fn: TracedFunction) -> None:
        if isinstance(node.operator, cst.AddAssign) and self._is_list(node.value):
            target = node.target
            action = f"`{' '.join(self.ctx.code(target).split())} += ...`"
            self._check(node, target, action, fn, rebinds=True)

    def visit_Assign(self, node: cst.Assign, fn: TracedFunction) -> None:
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.BinaryOperation):
            return
        target = node.targets[0].target
        if not isinstance(target, cst.Name) or not isinstance(value.operator, cst.Add):
            return
        operands = (value.left, value.right)
        if any(isinstance(o, cst.Name) and o.value == target.value for o in operands) and any(
            self._is_list(o) for o in operands
        ):
            action = f"`{target.value} = {' '.join(self.ctx.code(value).split())}`"
            self._check(node, target, action, fn, rebinds=True)
