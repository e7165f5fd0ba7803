from __future__ import annotations

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.messages import shorten
from tflint_graph.model import walk
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.names import dotted
from tflint_graph.model.tensors import NO_OP_CALLS, tensors
from tflint_graph.model.values import sole_parameter
from tflint_graph.traced import traced_of

# Where TensorFlow's runtime error classes live, in every spelling the resolver leaves.
_ERROR_MODULES = (
    "tensorflow.errors.",
    "tensorflow.python.framework.errors.",
    "tensorflow.python.framework.errors_impl.",
)
# Classes there that TensorFlow raises while tracing, in Python: catching them works.
_TRACE_TIME_ERRORS = frozenset({"OperatorNotAllowedInGraphError", "InaccessibleTensorError"})
_BROAD = ("builtins.Exception", "builtins.BaseException")
# TensorFlow APIs that do their work in Python when called (file system, checkpoints,
# configuration): errors they raise, tf.errors.* included, happen while tracing.
_PYTHON_SIDE = (
    "tensorflow.io.gfile.",
    "tensorflow.saved_model.",
    "tensorflow.train.",
    "tensorflow.config.",
    "tensorflow.distribute.",
    "tensorflow.nest.",
    "tensorflow.autograph.",
    "tensorflow.summary.create_",
    "tensorflow.data.experimental.load",
    "tensorflow.errors.",
    "tensorflow.dtypes.",
    "tensorflow.types.",
    "tensorflow.test.",
    "tensorflow.sysconfig.",
    "tensorflow.version.",
    "tensorflow.lite.",
    "tensorflow.experimental.dtensor.",
    "keras.models.load_model",
    "keras.saving.",
)
# Errors that loading code raises in Python (op libraries, files, checkpoints).
_LOADING_ERRORS = frozenset({"NotFoundError"})
# A tensor method that does not run an op.
_STATIC_METHODS = frozenset({"get_shape", "set_shape", "numpy", "ref", "experimental_ref"})


class GraphErrorCaughtInPython(Rule):
    """A Python `except` in traced code cannot catch errors TensorFlow ops raise at run time."""

    code = "TFG206"
    name = "graph-error-caught-in-python"

    VALID = [
        """
import tensorflow as tf

@tf.function
def safe_log(x):
    ok = tf.reduce_all(tf.math.is_finite(x))
    return tf.cond(ok, lambda: tf.math.log(x), lambda: tf.zeros_like(x))

def run(x):
    try:
        return safe_log(x)
    except tf.errors.InvalidArgumentError:  # eager code: catches the runtime error
        return None
""",
        """
import tensorflow as tf

@tf.function
def step(x, config):
    try:
        scale = config["scale"]  # a trace-time lookup: KeyError happens while tracing
    except KeyError:
        scale = 1.0
    try:
        import extra_ops
    except Exception:
        extra_ops = None
    return x * scale
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def checked(x):
    try:
        y = tf.debugging.check_numerics(x, "x has NaNs")
    except tf.errors.InvalidArgumentError:  # TFG206
        y = tf.zeros_like(x)
    return y
""",
        """
import tensorflow as tf

def parse(record):
    try:
        image = tf.io.decode_jpeg(record)
    except Exception:  # TFG206
        image = tf.zeros([8, 8, 3], tf.uint8)
    return image

ds = tf.data.Dataset.from_tensor_slices([b"not a jpeg"]).map(parse)
""",
    ]

    def visit_ExceptHandler(self, node: cst.ExceptHandler, fn: TracedFunction) -> None:
        self._check(node, fn)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler, fn: TracedFunction) -> None:
        self._check(node, fn)

    def _check(self, node: cst.ExceptHandler | cst.ExceptStarHandler, fn: TracedFunction) -> None:
        ctx = self.ctx
        try_node = ctx.parent(node)
        if not isinstance(try_node, cst.Try | cst.TryStar):
            return
        if traced_of(ctx).guards.untraced(try_node, fn.node):
            return
        runtime = self._runtime_errors(node.type)
        if runtime:
            if self._raises_in_python(try_node.body):
                return
            loading = all(r.rsplit(".", 1)[-1] in _LOADING_ERRORS for r in runtime)
            if loading and self._first_op(try_node.body, fn) is None:
                # NotFoundError around project code only (a lazily loaded op library, a
                # checkpoint helper): Python raises it while tracing; as a graph error it
                # comes from a file-reading op, which would be called here.
                return
            names = ", ".join(runtime)
            self.report(
                node,
                f"except {names} in {fn.where} never catches the runtime error: "
                "inside a graph TensorFlow ops fail when the graph runs, after the Python "
                "try/except has finished (it only sees trace-time errors); check the "
                "values with tf.debugging.*/tf.cond/tf.where inside the graph, or catch "
                "the error around the call of the tf.function",
                fn,
            )
            return
        if not self._broad(node.type):
            return
        if diagnostics_only(self.ctx, try_node.body) and numpy_of_tensor(
            self.ctx, try_node.body, fn
        ):
            return  # `try: print(t.numpy()) except: pass`: it probes for graph mode
        if self._reraises(node.body) or self._raises_in_python(try_node.body):
            return
        op = self._first_op(try_node.body, fn)
        if op is None:
            return
        caught = "except:" if node.type is None else f"except {shorten(ctx.code(node.type))}"
        self.report(
            node,
            f"{caught} around {op}() in {fn.where} catches only trace-time errors: a "
            "TensorFlow op that fails (InvalidArgumentError, ...) raises when the graph "
            "runs, after this try/except has finished; handle bad values inside the graph "
            "(tf.cond, tf.where, tf.debugging.*) or catch the error around the call of the "
            "tf.function",
            fn,
        )

    # -- the handler's types -----------------------------------------------------------
    def _types(self, expr: cst.BaseExpression | None) -> list[cst.BaseExpression]:
        if expr is None:
            return []
        if isinstance(expr, cst.Tuple):
            return [el.value for el in expr.elements]
        return [expr]

    def _resolve(self, expr: cst.BaseExpression) -> frozenset[str]:
        traced = traced_of(self.ctx)
        res = traced.resolve(expr)
        return res.imported

    def _runtime_errors(self, expr: cst.BaseExpression | None) -> list[str]:
        """The handler's types that are TensorFlow runtime errors (``tf.errors.*``)."""
        found = []
        for t in self._types(expr):
            for name in sorted(self._resolve(t)):
                if not name.startswith(_ERROR_MODULES):
                    continue
                last = name.rsplit(".", 1)[-1]
                if last.endswith("Error") and last not in _TRACE_TIME_ERRORS:
                    found.append(dotted(t) or last)
                    break
        return found

    def _broad(self, expr: cst.BaseExpression | None) -> bool:
        if expr is None:
            return True
        return any(self.ctx.resolve(t).is_(*_BROAD) for t in self._types(expr))

    @staticmethod
    def _reraises(body: cst.BaseSuite) -> bool:
        """Every path through the handler ends in ``raise`` (``raise X(...) from e``, or
        ``if <known case>: raise X(...)`` / ``else: raise``): it only adds context to the
        error, it does not swallow it, and in a graph the original error still propagates."""
        return _always_raises(body)

    # -- the try body ------------------------------------------------------------------
    def _raises_in_python(self, body: cst.BaseSuite) -> bool:
        """The try body itself raises a tf.errors class in Python, or calls a
        Python-side TensorFlow API (gfile, checkpoints) that raises them eagerly."""
        ctx = self.ctx
        for node in _own_nodes(body):
            if isinstance(node, cst.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
                if any(n.startswith(_ERROR_MODULES) for n in self._resolve(exc)):
                    return True
            if isinstance(node, cst.Call) and ctx.resolve(node.func).startswith(*_PYTHON_SIDE):
                return True
        return False

    def _first_op(self, body: cst.BaseSuite, fn: TracedFunction) -> str | None:
        """The first TensorFlow op the try body runs (in the graph), by name; none under an
        eager guard (``if hasattr(t, "numpy"):``), which the trace skips."""
        ctx = self.ctx
        inference = tensors(ctx, fn)
        guards = traced_of(ctx).guards
        for node in _own_nodes(body):
            if not isinstance(node, cst.Call) or guards.untraced(node, fn.node):
                continue
            func = node.func
            res = ctx.resolve(func)
            if res.imported:
                if not res.startswith("tensorflow.", "keras.ops."):
                    continue
                if res.is_(*NO_OP_CALLS) or res.startswith(*_PYTHON_SIDE):
                    continue
                if _constructs_a_class(res.imported):
                    continue
                return dotted(func) or shorten(ctx.code(func))
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value not in _STATIC_METHODS
                and inference.is_tensor(func.value)
            ):
                return shorten(ctx.code(func))
        return None


def numpy_of_tensor(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` calls ``.numpy()`` on what may be a tensor (or a bare parameter) on every path
    through it — not under an ``if``, a conditional expression, ``and``/``or``, a loop or an
    inner ``try``: that raises AttributeError while tracing, before anything after it runs."""
    inference = tensors(ctx, fn)
    for part in _own_nodes(node):
        if not (
            isinstance(part, cst.Call)
            and isinstance(part.func, cst.Attribute)
            and part.func.attr.value == "numpy"
            and not part.args
            and (
                inference.may_be_tensor(part.func.value)
                or sole_parameter(ctx, part.func.value) is not None
            )
        ):
            continue
        for anc in ctx.ancestors(part):
            if anc is node:
                return True
            if isinstance(anc, _CONDITIONAL):
                break
    return False


# Nodes whose parts may not run: a `.numpy()` inside them may never be reached.
_CONDITIONAL = (
    cst.If,
    cst.IfExp,
    cst.BooleanOperation,
    cst.For,
    cst.While,
    cst.Try,
    cst.TryStar,
    cst.Lambda,
    cst.FunctionDef,
    cst.CompFor,
)


def diagnostics_only(ctx: ModuleContext, body: cst.BaseSuite) -> bool:
    """Every statement of ``body`` only prints or logs (``print(...)``, ``logging.info(...)``,
    ``logger.debug(...)``): a ``try`` around them changes nothing the function computes."""
    statements = body.body
    if not statements:
        return False
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if not isinstance(call, cst.Call):
                return False
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else None
            if not (ctx.resolve(func).is_builtin("print") or name in _LOG_METHODS):
                return False
    return True


_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "log", "print"})


# TensorFlow classes whose construction puts no op that can fail later in the graph.
_OBJECT_CLASSES = frozenset(
    {"TensorArray", "TensorShape", "TensorSpec", "SparseTensor", "IndexedSlices", "Module"}
)


def _constructs_a_class(names: frozenset[str]) -> bool:
    """``tf.TensorArray(...)``, ``nn_ops._NonAtrousConvolution(...)``: making an object puts
    no op in the graph that can fail when it runs (a version fallback around it catches
    what Python raises while tracing).  Capitalised ops are ops (``tf.raw_ops.MatMul``,
    ``tf.debugging.Assert``): only known classes and private ones count."""
    return bool(names) and all(_object_class(n) for n in names)


def _object_class(name: str) -> bool:
    if name.startswith("tensorflow.raw_ops."):
        return False
    last = name.rsplit(".", 1)[-1]
    return last in _OBJECT_CLASSES or (last[:1] == "_" and last[1:2].isupper())


def _always_raises(body: cst.BaseSuite) -> bool:
    """Every path through ``body`` ends in a ``raise``."""
    stmts = body.body
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(body, cst.SimpleStatementSuite):
        return isinstance(last, cst.Raise)
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], cst.Raise)
    return isinstance(last, cst.If) and _if_always_raises(last)


def _if_always_raises(node: cst.If) -> bool:
    """Both branches of ``node`` (every ``elif`` too) end in a ``raise``."""
    orelse = node.orelse
    if orelse is None or not _always_raises(node.body):
        return False
    if isinstance(orelse, cst.If):
        return _if_always_raises(orelse)
    return _always_raises(orelse.body)


def _own_nodes(body: cst.CSTNode) -> list[cst.CSTNode]:
    """Nodes of ``body`` in source order, not descending into nested defs, lambdas or
    classes (their code does not run inside the try)."""
    found: list[cst.CSTNode] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            continue
        found.append(node)
        stack.extend(reversed(walk.children(node)))
    return found
