from __future__ import annotations

import re
import string

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.core.finding import Severity
from tflint_graph.core.paths import is_test_file
from tflint_graph.model import walk
from tflint_graph.model.context import ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.tensors import tensors
from tflint_graph.model.values import module_constant

# Builtins that build no op when every argument is a plain Python value.
_PURE_BUILTINS = frozenset(
    {
        "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "format",
        "int", "isinstance", "len", "list", "max", "min", "pow", "print", "range", "repr",
        "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
    }
)  # fmt: skip
_CONSTANTS = frozenset({"True", "False", "None"})
# Anything here may run code whose work is unknown (or is a stub): stay silent.
_UNKNOWN = (
    cst.Attribute,
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.Global,
    cst.Nonlocal,
    cst.Yield,
    cst.Await,
    cst.Import,
    cst.ImportFrom,
    cst.Raise,
    cst.Try,
    cst.With,
)
_LITERALS = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
)


# Methods of Python's own str/list/dict/set/tuple values: on a receiver built only from
# literals and Python-valued names they build no op.
_PURE_METHODS = frozenset(
    {
        "append", "extend", "insert", "pop", "items", "keys", "values", "get", "update",
        "setdefault", "add", "copy", "join", "format", "split", "strip", "lower", "upper",
        "replace", "startswith", "endswith", "count", "index", "sort",
    }
)  # fmt: skip


# Methods only Python's dicts, lists and strings have (no tensor, variable or Keras object
# does): the receiver is surely a plain container even when it is an argument.
_CONTAINER_ONLY = frozenset(
    {
        "items", "keys", "values", "append", "extend", "setdefault", "join", "split",
        "strip", "lower", "upper", "startswith", "endswith",
    }
)  # fmt: skip


def _python_default(ctx: ModuleContext, default: cst.BaseExpression | None, depth: int = 0) -> bool:
    """A default that is surely a plain Python value: literals, tuples/lists of them, and
    module-level constants assigned such a value exactly once (``dims=KERNELS``)."""
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    if isinstance(default, cst.Name):
        if default.value in _CONSTANTS:
            return True
        value = module_constant(ctx, default) if depth <= 3 else None
        return value is not None and _python_default(ctx, value, depth + 1)
    if isinstance(default, cst.Tuple | cst.List):
        return all(_python_default(ctx, el.value, depth) for el in default.elements)
    return isinstance(default, _LITERALS)


def _is_stub(body: cst.BaseSuite) -> bool:
    """``pass``, ``...`` or a docstring only: a placeholder, not a pure-Python body."""
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            return False
        small = stmt.body
        for s in small:
            if isinstance(s, cst.Pass):
                continue
            if isinstance(s, cst.Expr) and isinstance(
                s.value, cst.Ellipsis | cst.SimpleString | cst.ConcatenatedString
            ):
                continue
            return False
    return True


def _inert(ctx: ModuleContext, name: cst.Name) -> bool:
    """A use of ``name`` that builds no op even when it holds tensors (verified with
    TensorFlow 2.21: the graph holds only the placeholders and a string constant): formatted
    into a string without a format spec (``f"{x}"``, ``"{}".format(x)``, ``"%s" % x``,
    ``str(x)``), or merged into a dict (``{**a}``, ``dict(a)``, ``d.update(a)``)."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.FormattedStringExpression):
        return parent.format_spec is None and parent.conversion in (None, "s", "r", "a")
    if isinstance(parent, cst.StarredDictElement):
        return True
    operand: cst.CSTNode = name
    if isinstance(parent, cst.Element) and isinstance(ctx.parent(parent), cst.Tuple):
        operand = ctx.parent(parent)  # `"%s-%s" % (a, b)`
        parent = ctx.parent(operand)
        if not isinstance(parent, cst.BinaryOperation):
            return False
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo):
        return parent.right is operand and _percent_template(parent.left)
    if not isinstance(parent, cst.Arg) or parent.value is not name or parent.keyword is not None:
        return False
    call = ctx.parent(parent)
    if not isinstance(call, cst.Call):
        return False
    func = call.func
    if isinstance(func, cst.Attribute):
        if func.attr.value == "format":
            return _format_template(func.value)
        return func.attr.value == "update"
    res = ctx.resolve(func)
    if res.is_builtin("dict"):
        return True  # `dict(a)`, `dict(a, **b)`
    return (res.is_builtin("str") or res.is_builtin("repr")) and len(call.args) == 1


def _literal(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _format_template(expr: cst.BaseExpression) -> bool:
    """A ``str.format`` template whose fields only print their argument (``{}``, ``{0}``,
    ``{name!r}``): no format spec (a tensor rejects one), no item or attribute lookup."""
    text = _literal(expr)
    if text is None:
        return False
    try:
        fields = [f for f in string.Formatter().parse(text) if f[1] is not None]
    except ValueError:
        return False
    return all(
        not spec and conversion in (None, "s", "r", "a") and not re.search(r"[.\[]", field)
        for _, field, spec, conversion in fields
    )


def _percent_template(expr: cst.BaseExpression) -> bool:
    """A ``%`` template with only ``%s``/``%r``/``%a`` conversions (``%d`` rejects a tensor)."""
    text = _literal(expr)
    if text is None:
        return False
    conversions = re.findall(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?(.)", text)
    return all(c in "sra%" for c in conversions)


class _PurePython(walk.Visitor):
    """Walks a body and clears ``pure`` at the first thing that may build an op."""

    def __init__(self, ctx: ModuleContext, fn: TracedFunction, python_params: set[cst.Param]):
        self.ctx = ctx
        self.fn = fn
        self.python_params = python_params
        self.pure = True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self.pure:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in _CONTAINER_ONLY
                and isinstance(func.value, cst.Name)
            ):
                pass  # `metrics.items()`: a method tensors do not have, on a plain name
            elif isinstance(func, cst.Attribute) and func.attr.value in _PURE_METHODS:
                self.walk(func.value)  # `names.append(...)` on a plain Python value
            elif not (
                isinstance(func, cst.Name)
                and any(self.ctx.resolve(func).is_builtin(b) for b in _PURE_BUILTINS)
            ):
                self.pure = False
                return False
            for arg in node.args:
                self.walk(arg.value)  # skip the callee and keyword names
            return False
        if isinstance(node, _UNKNOWN):
            self.pure = False
            return False
        if isinstance(node, cst.Name):
            if not self._python_name(node) and not (
                self._parameter(node) and _inert(self.ctx, node)
            ):
                self.pure = False
            return False
        return True

    def _parameter(self, name: cst.Name) -> bool:
        """``name`` is a parameter of the traced function (whatever it holds)."""
        bindings = self.ctx.bindings(name)
        params = self.fn.node.params
        own = {*params.posonly_params, *params.params, *params.kwonly_params}
        own |= {p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
        return bool(bindings) and all(a.node in own for a in bindings)

    def _python_name(self, name: cst.Name) -> bool:
        if name.value in _CONSTANTS:
            return True
        bindings = self.ctx.bindings(name)
        if not bindings:
            return False  # a builtin used as a value, an import, or unknown
        for assignment in bindings:
            node = assignment.node
            if isinstance(node, cst.Param):
                if node not in self.python_params:
                    return False
                continue
            if self.fn.node not in set(self.ctx.ancestors(node)):
                return False  # a global or closure value: may be a tensor or variable
        return True


class NoTensorWork(Rule):
    """`@tf.function` on a body that calls no TensorFlow op at all."""

    code = "TFG404"
    name = "no-tensor-work"
    severity = Severity.INFO
    traced_only = False  # the def itself is visited from the enclosing (often eager) scope

    VALID = [
        """
import tensorflow as tf

@tf.function
def double(x):
    return x * 2  # an op on a tensor argument
""",
        """
import tensorflow as tf

def helper(n):
    return n + 1

@tf.function
def step(n=3):
    return helper(n)  # unknown work: silent
""",
        """
import tensorflow as tf

@tf.function
def log_it():
    tf.print("hello")
""",
        """
import tensorflow as tf

@tf.function
def flat(x, sizes=(2, 3)):
    parts = []
    for n in sizes:
        parts.append(x.get(n))  # a method of an argument that may be a tensor structure
    return parts
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def schedule(step=0, warmup=100):  # TFG404
    return min(1.0, (step + 1) / warmup)
""",
        """
import tensorflow as tf

@tf.function(jit_compile=True)
def config():  # TFG404
    sizes = [32, 64, 128]
    return {"sizes": sizes, "total": sum(sizes)}
""",
        """
import tensorflow as tf

@tf.function
def lr_table(base=1e-3, epochs=30, shape=((784, 128), (10,))):  # TFG404
    table = []
    for epoch in range(epochs):
        table.append(base * 0.9**epoch)
    return table, ", ".join(str(s) for s in shape)
""",
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef, fn: TracedFunction | None) -> None:
        if is_test_file(self.ctx.path):
            return  # a test may decorate a Python-only body on purpose
        traced = self.ctx.traced.get(node)
        if traced is None or traced.kind is not TraceKind.DECORATED or traced.parent is not None:
            return
        if node.asynchronous is not None or _is_stub(node.body):
            return
        kinds = tensors(self.ctx, traced)
        params = node.params
        python_params = {
            p
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if _python_default(self.ctx, p.default) and kinds.param_kind(p) is None
        }
        walker = _PurePython(self.ctx, traced, python_params)
        walker.walk(node.body)
        if not walker.pure:
            return
        self.report(
            node,
            f"{traced.where} is a tf.function whose body builds no TensorFlow op: every new "
            "argument value costs a trace and a graph-cache entry just to run plain Python "
            "once; drop the @tf.function decorator (or compute this in Python outside the "
            "graph)",
            traced,
            fix="remove the @tf.function decorator",
        )
