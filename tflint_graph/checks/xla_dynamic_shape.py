"""`jit_compile=True` on a tf.function whose input shapes vary: XLA recompiles per shape."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tflint_graph.checks.base import ModuleRule
from tflint_graph.core.finding import Severity
from tflint_graph.model.calls import argument
from tflint_graph.model.context import FunctionNode, ModuleContext
from tflint_graph.model.values import assigned_value, int_literal
from tflint_graph.traced import TracedCode, traced_of
from tflint_graph.traced.callsites import (
    TfFunctionRef,
    decorated,
    imported_names,
    tf_function_calls,
    wrapped,
)

_TENSOR_SPEC = ("tensorflow.TensorSpec",)
_TENSOR_SHAPE = ("tensorflow.TensorShape",)
# Calls that build an array of a statically written shape: (shape argument index, keyword).
_SHAPED = {
    "tensorflow.zeros": (0, "shape"),
    "tensorflow.ones": (0, "shape"),
    "tensorflow.fill": (0, "dims"),
    "tensorflow.random.normal": (0, "shape"),
    "tensorflow.random.uniform": (0, "shape"),
    "tensorflow.random.truncated_normal": (0, "shape"),
    "tensorflow.random.stateless_normal": (0, "shape"),
    "tensorflow.random.stateless_uniform": (0, "shape"),
    "numpy.zeros": (0, "shape"),
    "numpy.ones": (0, "shape"),
    "numpy.empty": (0, "shape"),
    "numpy.full": (0, "shape"),
}
_MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class _LoopDim:
    """A dimension written as the variable of a ``for`` over literal sizes."""

    name: str
    sizes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Opaque:
    """A dimension whose value is not known (a parameter, an expression)."""

    text: str


Dim = int | _LoopDim | _Opaque


@dataclass(frozen=True, slots=True)
class _Shaped:
    """One argument of one call whose shape (its rank at least) is written in the source."""

    call: cst.Call
    dims: tuple[Dim, ...]

    def differs(self, other: _Shaped) -> bool:
        """Surely another shape: another rank, or two different sizes in one position."""
        if len(self.dims) != len(other.dims):
            return True
        return any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(self.dims, other.dims, strict=True)
        )

    def looped(self) -> _LoopDim | None:
        """The loop variable dimension that takes several sizes, if any."""
        for d in self.dims:
            if isinstance(d, _LoopDim) and len(set(d.sizes)) > 1:
                return d
        return None

    def text(self) -> str:
        shown = (
            str(d) if isinstance(d, int) else d.name if isinstance(d, _LoopDim) else d.text
            for d in self.dims
        )
        return "[" + ", ".join(shown) + "]"


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


class XlaDynamicShape(ModuleRule):
    """`jit_compile=True` with `None` dims or varying input shapes: XLA recompiles per shape."""

    code = "TFG304"
    name = "xla-dynamic-shape"
    severity = Severity.INFO
    QUIET_IN_TESTS = True  # a test compiling for several shapes does it on purpose

    VALID = [
        """
import tensorflow as tf

@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([32, 28], tf.float32)])
def step(x):
    return tf.reduce_sum(x * 2.0)

@tf.function(input_signature=[tf.TensorSpec([None, 28], tf.float32)])
def serve(x):
    return tf.reduce_sum(x * 2.0)  # no XLA: one graph serves every batch size
""",
        """
import tensorflow as tf

@tf.function(jit_compile=True)
def step(x):
    return tf.reduce_sum(x * 2.0)

step(tf.zeros([8, 4]))
step(tf.ones([8, 4]))  # the same shape: compiled once
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 28], tf.float32)])
def step(x):  # TFG304
    return tf.reduce_sum(x * 2.0)
""",
        """
import tensorflow as tf

@tf.function(jit_compile=True)
def step(x):  # TFG304
    return tf.reduce_sum(x * 2.0)

for n in (8, 16, 32):
    step(tf.zeros([n, 4]))
""",
    ]

    def check(self) -> None:
        source = self.ctx.source
        if (
            "jit_compile" not in source
            and "experimental_compile" not in source
            and not any(f.jit_compile for f in self.ctx.view.tf_functions.values())
        ):
            return  # no XLA here, and no compiled tf.function of another module
        traced = traced_of(self.ctx)
        refs = list(self._definitions(traced))
        for where, ref, signature, display in refs:
            dynamic = self._dynamic_specs(signature, ref) if signature is not None else None
            if dynamic:
                dims = "; ".join(dynamic)
                self.report(
                    where,
                    f"{_flag(ref)} on {display} with None dimensions in its "
                    f"input_signature ({dims}): XLA compiles the function again for every new "
                    "input shape it is called with; give the spec fixed dimensions, pad inputs "
                    "to a few bucket sizes, or drop jit_compile",
                    None,
                    fix="fix the dimensions in input_signature, or pad inputs to a few sizes",
                )
        self._varying_calls({ref.info: (where, ref) for where, ref, sig, _ in refs if sig is None})

    # -- tf.functions defined here ----------------------------------------------------
    def _definitions(
        self, traced: TracedCode
    ) -> Iterator[tuple[cst.CSTNode, TfFunctionRef, cst.BaseExpression | None, str]]:
        """(where to report, the tf.function, its input_signature, its name) for every
        jit-compiled tf.function this module defines."""
        ctx = self.ctx
        # Trace discovery already collected every def and call of the module.
        for fn in traced.facts.functions:
            ref = decorated(ctx, fn)
            if ref is not None and ref.info.jit_compile:
                yield fn, ref, _given(ref.keyword("input_signature")), ref.info.display
        for _, call in traced.facts.calls:
            options = traced.tf_function_options(call.func)
            if options is None or not call.args or call.args[0].keyword is not None:
                continue
            if call.args[0].star:
                continue
            name = _bound_name(ctx, call)
            first = call.args[0].value
            display = f"{name}()" if name else "this tf.function"
            if name is None and isinstance(first, cst.Name | cst.Attribute):
                display = f"tf.function({ctx.code(first)})"
            ref = wrapped(ctx, call, name or ctx.code(first), ctx.enclosing_function(call))
            if ref is None or not ref.info.jit_compile:
                continue
            signature = ref.keyword("input_signature")
            if signature is None and len(call.args) > 1 and call.args[1].keyword is None:
                signature = call.args[1].value  # tf.function(f, [spec, ...])
            where: cst.CSTNode = ref.node if isinstance(ref.node, cst.FunctionDef) else call
            yield where, ref, _given(signature), display

    # -- None dimensions in input_signature -------------------------------------------
    def _dynamic_specs(self, signature: cst.BaseExpression, ref: TfFunctionRef) -> list[str]:
        """``x: [None, 28]`` for each TensorSpec of the signature with an unknown dimension.
        Empty when the signature is not written out (then nothing is certain)."""
        value = self._follow(signature)
        if not isinstance(value, cst.List | cst.Tuple):
            return []
        params = _param_names(self.ctx, ref.node)
        found: list[str] = []
        for index, element in enumerate(value.elements):
            if isinstance(element, cst.StarredElement):
                return found
            label = params[index] if index < len(params) else f"input_signature[{index}]"
            for spec in self._specs(element.value, 0):
                shape = self._spec_shape(spec)
                if shape is not None:
                    found.append(f"{label}: {shape}")
        return found

    def _specs(self, expr: cst.BaseExpression, depth: int) -> Iterator[cst.Call]:
        """The ``tf.TensorSpec(...)`` calls of a (possibly nested) signature element."""
        if depth > _MAX_DEPTH:
            return
        expr = self._follow(expr)
        if isinstance(expr, cst.Call) and traced_of(self.ctx).resolve(expr.func).is_(*_TENSOR_SPEC):
            yield expr
        elif isinstance(expr, cst.List | cst.Tuple | cst.Set):
            for element in expr.elements:
                if not isinstance(element, cst.StarredElement):
                    yield from self._specs(element.value, depth + 1)
        elif isinstance(expr, cst.Dict):
            for item in expr.elements:
                if isinstance(item, cst.DictElement):
                    yield from self._specs(item.value, depth + 1)

    def _spec_shape(self, spec: cst.Call) -> str | None:
        """``[None, 28]`` / ``unknown rank`` when the spec leaves a dimension open."""
        shape = argument(spec, 0, "shape", strict=True)
        if shape is None:
            return None
        shape = self._follow(shape)
        if isinstance(shape, cst.Call) and traced_of(self.ctx).resolve(shape.func).is_(
            *_TENSOR_SHAPE
        ):
            inner = argument(shape, 0, "dims", strict=True)
            if inner is None:
                return None
            shape = self._follow(inner)
        if _is_none(shape):
            return "unknown rank"
        if not isinstance(shape, cst.List | cst.Tuple):
            return None
        dims = []
        for element in shape.elements:
            if isinstance(element, cst.StarredElement):
                return None
            dims.append(element.value)
        if not any(_is_none(d) for d in dims):
            return None
        return "[" + ", ".join(self.ctx.code(d) for d in dims) + "]"

    def _follow(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """A name assigned exactly once stands for its value."""
        for _ in range(_MAX_DEPTH):
            if not isinstance(expr, cst.Name) or _is_none(expr):
                return expr
            bindings = self.ctx.bindings(expr)
            if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Name):
                return expr
            value = assigned_value(self.ctx, bindings[0].node, with_items=False)
            if value is None:
                return expr
            expr = value
        return expr

    # -- no signature, called with shapes that vary -----------------------------------
    def _varying_calls(self, local: dict[object, tuple[cst.CSTNode, TfFunctionRef]]) -> None:
        groups: dict[object, list[cst.Call]] = {}
        refs: dict[object, TfFunctionRef] = {}
        for call, ref in tf_function_calls(self.ctx):
            info = ref.info
            if not info.jit_compile or info.signature or not isinstance(call.func, cst.Name):
                continue
            if ref.node is not None and info not in local:
                continue  # configured here in a way we did not read: leave it
            if len(self.ctx.bindings(call.func)) > 1:
                continue
            groups.setdefault(info, []).append(call)
            refs[info] = ref
        for info, calls in groups.items():
            evidence = self._evidence(calls)
            if evidence is None:
                continue
            varying, why = evidence
            ref = refs[info]
            fix = "pad inputs to a few fixed shapes, or drop jit_compile"
            if info in local:
                self.report(
                    local[info][0],
                    f"{_flag(ref)} on {ref.info.display} without input_signature, and it is "
                    f"called with {why}: it retraces and XLA compiles it again for every new "
                    "input shape; call it with fixed shapes (pad inputs to a few bucket "
                    "sizes) or drop jit_compile",
                    None,
                    fix=fix,
                )
                continue
            # Defined in another module: reported at its def there (SPEC), naming the call.
            for target in imported_names(self.ctx, varying.call.func)[:1]:
                self.report_elsewhere(
                    target,
                    f"{_flag(ref)} on {ref.info.display} without input_signature, and "
                    f"{self.ctx.path} calls it with {why}: it retraces and XLA "
                    "compiles it again for every new input shape; call it with fixed shapes "
                    "(pad inputs to a few bucket sizes) or drop jit_compile",
                    fix=fix,
                )

    def _evidence(self, calls: list[cst.Call]) -> tuple[_Shaped, str] | None:
        """Two calls (or one call in a loop) whose argument in the same position surely
        has different shapes."""
        seen: dict[object, list[_Shaped]] = {}
        for call in calls:
            for key, value in _call_args(call):
                shaped = self._shape_of(value, call, 0)
                if shaped is None:
                    continue
                loop = shaped.looped()
                if loop is not None:
                    line = self.ctx.position(call).start.line
                    sizes = list(dict.fromkeys(loop.sizes))
                    listed = ", ".join(str(s) for s in sizes[:4])
                    listed += ", ..." if len(sizes) > 4 else ""
                    why = f"shapes {shaped.text()} for {loop.name} in {listed} (line {line})"
                    return shaped, why
                for before in seen.get(key, ()):
                    if before.differs(shaped):
                        a = self.ctx.position(before.call).start.line
                        b = self.ctx.position(call).start.line
                        why = f"shapes {before.text()} (line {a}) and {shaped.text()} (line {b})"
                        return shaped, why
                seen.setdefault(key, []).append(shaped)
        return None

    def _shape_of(self, expr: cst.BaseExpression, call: cst.Call, depth: int) -> _Shaped | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            bindings = self.ctx.bindings(expr)
            if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Name):
                return None
            value = assigned_value(self.ctx, bindings[0].node, with_items=False)
            return None if value is None else self._shape_of(value, call, depth + 1)
        if not isinstance(expr, cst.Call):
            return None
        res = traced_of(self.ctx).resolve(expr.func)
        for name, (index, keyword) in _SHAPED.items():
            if res.is_(name):
                shape = argument(expr, index, keyword, strict=True)
                if shape is None:
                    return None
                dims = self._dims(shape, call)
                return None if dims is None else _Shaped(call, dims)
        return None

    def _dims(self, shape: cst.BaseExpression, call: cst.Call) -> tuple[Dim, ...] | None:
        """The dimensions of a written shape: ``[n, 4]``, ``(8, 4)``, ``8``; None when not
        even the rank is written."""
        shape = self._follow(shape)
        if isinstance(shape, cst.List | cst.Tuple):
            dims: list[Dim] = []
            for element in shape.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                dims.append(self._dim(element.value, call))
            return tuple(dims)
        single = self._dim(shape, call)
        return None if isinstance(single, _Opaque) else (single,)

    def _dim(self, expr: cst.BaseExpression, call: cst.Call) -> Dim:
        opaque = _Opaque(self.ctx.code(expr))
        value = int_literal(expr)
        if value is not None:
            return value
        if not isinstance(expr, cst.Name):
            return opaque
        bindings = self.ctx.bindings(expr)
        if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Name):
            return opaque
        target = bindings[0].node
        loop = self.ctx.parent(target)
        if isinstance(loop, cst.For) and loop.target is target:
            # The size varies per iteration only where both the shape and the call are
            # evaluated inside the loop.
            for node in (expr, call):
                if not any(a is loop.body for a in self.ctx.ancestors(node)):
                    return opaque
            sizes = _literal_sizes(traced_of(self.ctx), loop.iter)
            if sizes is None or not sizes:
                return opaque
            return sizes[0] if len(set(sizes)) == 1 else _LoopDim(target.value, sizes)
        value = assigned_value(self.ctx, target, with_items=False)
        found = int_literal(value) if value is not None else None
        return opaque if found is None else found


def _flag(ref: TfFunctionRef) -> str:
    """How the source asked for XLA."""
    if ref.keyword("jit_compile") is None and ref.keyword("experimental_compile") is not None:
        return "experimental_compile=True"
    return "jit_compile=True"


def _given(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    return None if expr is None or _is_none(expr) else expr


def _bound_name(ctx: ModuleContext, call: cst.Call) -> str | None:
    """``step`` for ``step = tf.function(...)``, ``self.step`` for the attribute form."""
    target = ctx.parent(call)
    if isinstance(target, cst.Assign) and len(target.targets) == 1:
        name = target.targets[0].target
        if isinstance(name, cst.Name | cst.Attribute):
            return ctx.code(name)
    return None


def _param_names(ctx: ModuleContext, node: FunctionNode | None) -> list[str]:
    """The parameters an input_signature describes (``self`` of a method excluded)."""
    if node is None:
        return []
    names = [p.name.value for p in node.params.params]
    if isinstance(node, cst.FunctionDef) and ctx.enclosing_class(node) is not None:
        static = any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in node.decorators
        )
        if not static:
            names = names[1:]
    return names


def _call_args(call: cst.Call) -> Iterator[tuple[object, cst.BaseExpression]]:
    """(position or keyword, value) for every argument; nothing after a ``*args``."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return
        if arg.keyword is not None:
            yield arg.keyword.value, arg.value
        else:
            yield index, arg.value


def _literal_sizes(traced: TracedCode, expr: cst.BaseExpression) -> tuple[int, ...] | None:
    """The ints a ``for`` over ``(8, 16, 32)`` or ``range(8, 64, 8)`` binds, in order."""
    if isinstance(expr, cst.List | cst.Tuple):
        values = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                return None
            value = int_literal(element.value)
            if value is None:
                return None
            values.append(value)
        return tuple(values)
    if isinstance(expr, cst.Call) and traced.resolve(expr.func).is_builtin("range"):
        bounds = [
            int_literal(a.value) if a.keyword is None and not a.star else None for a in expr.args
        ]
        if not bounds or len(bounds) > 3 or any(b is None for b in bounds):
            return None
        values = range(*(b for b in bounds if b is not None))
        return tuple(values) if len(values) <= 10_000 else None
    return None
