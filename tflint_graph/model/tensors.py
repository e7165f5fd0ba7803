"""Which values in traced code are symbolic tensors (SPEC §2, TFG2xx preamble).

A small, explainable, flow-insensitive analysis per traced function.  Every answer is one of
three kinds:

* ``TENSOR``: certainly a symbolic ``tf.Tensor`` (or ``tf.Variable``) while tracing;
* ``SEQUENCE``: a Python tuple, list or namedtuple of tensors (``tf.split``,
  ``tf.nn.moments``, ``tf.math.top_k``): unpacking it, ``len()`` and Python iteration are
  fine, and its items (names bound by unpacking it, ``parts[0]``, the variable of a loop
  over it, a namedtuple field) are tensors;
* ``STRUCTURE``: a tensor *or* a Python structure of tensors (Keras ``call`` inputs, a
  ``tf.data`` element, the result of ``tf.cond``): NumPy calls and ``.numpy()`` fail on
  either, but unpacking or ``bool()`` may be fine, so rules about those stay silent;
* ``None``: a Python value, or unknown.  When unsure, the answer is ``None``.

Sources of tensors: parameters of ``tf.function`` roots without a Python default (unless an
annotation or ``input_signature`` says otherwise), results of ``tensorflow``/``keras.ops``
calls and tensor methods, operators and subscripts on tensors, names assigned only from
tensors, and loop variables of loops over tensors.  The APIs that return Python values or
Python sequences of tensors (``tf.compat.v1.executing_eagerly_outside_functions``,
``tf.split``) are the verified table of ``model.tf_returns``.  Static facts (``x.shape[0]``,
``x.dtype``, ``len()`` of a Python list) are not tensors.
"""

from __future__ import annotations

from enum import Enum

import libcst as cst

from tflint_graph.core.vocabulary import KERAS_STEPS
from tflint_graph.model import walk
from tflint_graph.model.calls import (
    argument,
    argument_keys,
    binds_self,
    gets_instance,
    keyword,
    partial_of,
    passed_for,
)
from tflint_graph.model.context import ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import Resolution
from tflint_graph.model.tf_returns import FLAGS, RAW_OPS, RETURNS
from tflint_graph.model.values import (
    assigned_value,
    attribute_values,
    mentions,
    narrowing_types,
    sole_parameter,
)


class Kind(str, Enum):
    TENSOR = "tensor"
    SEQUENCE = "sequence"
    STRUCTURE = "structure"


# What the kinds of model.tf_returns mean here; the Python kinds (PYTHON_KINDS) are no
# tensor (None).
_TABLE_KINDS: dict[str, Kind] = {
    "sequence": Kind.SEQUENCE,
    "structure": Kind.STRUCTURE,
    "dict": Kind.STRUCTURE,
    "tensor": Kind.TENSOR,
}


# tensorflow.* calls that do not return a tensor (prefixes match whole namespaces); the
# verified table of model.tf_returns comes first.
_NOT_TENSOR_PREFIXES = (
    "tensorflow.data.",
    "tensorflow.config.",
    "tensorflow.distribute.",
    "tensorflow.io.gfile.",
    "tensorflow.summary.",
    "tensorflow.saved_model.",
    "tensorflow.train.",
    "tensorflow.nest.",
    "tensorflow.debugging.",
    "tensorflow.autograph.",
    "tensorflow.compat.",
    "tensorflow.experimental.",
    "tensorflow.keras.",
    "tensorflow.errors.",
    "tensorflow.dtypes.",
    "tensorflow.types.",
    "tensorflow.random.Generator",
    "tensorflow.random.experimental.",
    "tensorflow.lookup.",
    "tensorflow.feature_column.",
    "tensorflow.estimator.",
    "tensorflow.tpu.",
    "tensorflow.sysconfig.",
    "tensorflow.test.",
    "tensorflow.version.",
    "tensorflow.image.ResizeMethod",
)
# TensorFlow calls that build no graph op (nothing that could fail when the graph runs).
NO_OP_CALLS = frozenset(
    {
        "tensorflow.function",
        "tensorflow.print",
        "tensorflow.TensorSpec",
        "tensorflow.TensorShape",
        "tensorflow.RaggedTensorSpec",
        "tensorflow.SparseTensorSpec",
        "tensorflow.GradientTape",
        "tensorflow.name_scope",
        "tensorflow.device",
        "tensorflow.init_scope",
        "tensorflow.control_dependencies",
        "tensorflow.executing_eagerly",
        "tensorflow.inside_function",
        "tensorflow.is_tensor",
        "tensorflow.get_static_value",
        "tensorflow.as_dtype",
        "tensorflow.DType",
        "tensorflow.Module",
        "tensorflow.get_logger",
        "tensorflow.Graph",
        "tensorflow.no_op",
    }
)
_NOT_TENSOR = NO_OP_CALLS | frozenset(
    {
        "tensorflow.Assert",
        "tensorflow.TensorArray",
        "tensorflow.py_function",
        "tensorflow.numpy_function",
        "tensorflow.no_gradient",
        "tensorflow.custom_gradient",
        "tensorflow.recompute_grad",
        "tensorflow.group",
        "keras.ops.convert_to_numpy",
    }
)
# Attributes of a tensor that are static Python values.
_STATIC_ATTRIBUTES = frozenset(
    {"shape", "dtype", "ndim", "name", "device", "op", "graph", "value_index", "trainable"}
)
# Tensor methods that do not return a tensor.
_NOT_TENSOR_METHODS = frozenset(
    {
        "numpy",
        "get_shape",
        "set_shape",
        "assign",
        "assign_add",
        "assign_sub",
        "ref",
        "experimental_ref",
        "eval",
        "consumers",
        "__len__",
        # A mapping's methods: a receiver that has them is a dict of tensors (the outputs
        # per level of a detector), whose keys and items are Python sequences.
        "keys",
        "values",
        "items",
        # TensorShape's (a receiver that has them is a shape, not a tensor): Python values.
        "as_list",
        "is_fully_defined",
        "is_compatible_with",
        "num_elements",
        "merge_with",
        "concatenate",
    }
)
# Parameters whose names say "Python flag or config", whatever the signature says.
_PYTHON_PARAMS = frozenset(
    {
        "self",
        "cls",
        "training",
        "is_training",
        "mode",
        "verbose",
        "debug",
        "name",
        "config",
        "params",
    }
)
_PYTHON_ANNOTATIONS = frozenset(
    {
        "int",
        "float",
        "str",
        "bool",
        "bytes",
        "list",
        "dict",
        "tuple",
        "set",
        "callable",
        "Callable",
        "List",
        "Dict",
        "Tuple",
        "Sequence",
        "Mapping",
        "Optional",
        "Any",
    }
)


def _python_annotation(ctx: ModuleContext, ann: cst.BaseExpression) -> bool:
    """``ann`` names a Python value: a builtin or ``typing`` type, or a union of them
    (``Union[int, Tuple[int]]``, ``int | None``), whose members a ``tf.function`` keeps as
    Python values in its signature."""
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        return all(_python_annotation(ctx, side) for side in (ann.left, ann.right))
    if isinstance(ann, cst.Name) and ann.value == "None":
        return True
    if isinstance(ann, cst.Subscript) and ctx.code(ann.value).rsplit(".", 1)[-1] == "Union":
        members = [el.slice.value for el in ann.slice if isinstance(el.slice, cst.Index)]
        return bool(members) and all(_python_annotation(ctx, m) for m in members)
    text = ctx.code(ann).split("[")[0].rsplit(".", 1)[-1]
    return text in _PYTHON_ANNOTATIONS or ctx.resolve(ann).startswith("builtins.", "typing.")


def _not_a_tensor(name: str) -> bool:
    return name in _NOT_TENSOR or name.startswith(_NOT_TENSOR_PREFIXES)


# Builtin types an `isinstance` test narrows a value to: a Python container, no tensor.
_PYTHON_CONTAINERS = ("list", "tuple", "dict")
# Types no tensor is an instance of: a name narrowed to them holds a Python value.
_PYTHON_TYPES = (*_PYTHON_CONTAINERS, "int", "float", "bool", "str")


# Kinds whose items are tensors when a Python loop iterates them.
_HOLDS_TENSORS = (Kind.TENSOR, Kind.SEQUENCE)


def _table_kind(call: cst.Call, names: list[str]) -> Kind | None:
    """The kind model.tf_returns gives a call of one of ``names`` (all listed there)."""
    found = {
        _flag_kind(call, name) if name in FLAGS else _TABLE_KINDS.get(RETURNS[name])
        for name in names
    }
    return next(iter(found)) if len(found) == 1 else None


def _flag_kind(call: cst.Call, name: str) -> Kind | None:
    """``tf.linalg.svd(x, compute_uv=False)`` is a tensor, ``tf.linalg.svd(x)`` a tuple."""
    keyword, position, default, when_true, when_false = FLAGS[name]
    if any(arg.star for arg in call.args):
        return Kind.STRUCTURE
    value = argument(call, position, keyword)
    if value is None:
        flag = default
    elif isinstance(value, cst.Name) and value.value in ("True", "False"):
        flag = value.value == "True"
    else:
        return Kind.STRUCTURE  # decided at run time: a tensor or a tuple of tensors
    return _TABLE_KINDS.get(when_true if flag else when_false)


def api_kind(call: cst.Call, res: Resolution) -> Kind | None:
    """What a call of an imported function (``res``, its resolution) returns while tracing."""
    listed = [n for n in res.imported if n in RETURNS or n in FLAGS]
    if listed:
        return _table_kind(call, listed)
    if res.startswith(RAW_OPS):
        return Kind.STRUCTURE  # one output: a tensor; several: a namedtuple of them
    if res.startswith("tensorflow.", "keras.ops."):
        if any(_not_a_tensor(n) for n in res.imported):
            return None
        if res.startswith("tensorflow.python."):
            # TensorFlow's private modules (`from tensorflow.python.util import nest`):
            # helpers of every kind, not ops; what they return is unknown.
            return None
        return Kind.TENSOR
    return None


def _arithmetic_on_structure(
    expr: cst.BinaryOperation, left: Kind | None, right: Kind | None
) -> bool:
    """``inputs + 1.0``, ``x / 255`` on a tensor-or-structure (``left``/``right``: the
    operands' kinds): Python sequences support no arithmetic with a number but repetition
    (``seq * 2``), so the value is a tensor."""
    for kind, other in ((left, expr.right), (right, expr.left)):
        if kind is not Kind.STRUCTURE:
            continue
        if isinstance(other, cst.Float):
            return True
        if isinstance(other, cst.Integer) and not isinstance(expr.operator, cst.Multiply):
            return True
    return False


def _field(attr: cst.Attribute) -> bool:
    """``attr`` may name a namedtuple field (not a private name or ``index``)."""
    name = attr.attr.value
    return not name.startswith("_") and name != "index"


class TensorInference:
    """Answers "is this expression a symbolic tensor?" within one traced function."""

    def __init__(self, ctx: ModuleContext, fn: TracedFunction) -> None:
        self.ctx = ctx
        self.fn = fn
        self._scope = ctx.function_scope(fn.node)
        self._names: dict[str, Kind | None] = {}
        self._visiting: set[str] = set()
        self._params = _param_kinds(ctx, fn)
        # The parameters' kinds rest on evidence (``model.certain``), not on the assumption
        # that a tf.function gets tensors: a test reading one decides a conditional too.
        self.params_certain = False
        # Bare parameters taken for structures for want of evidence (``model.certain``): they
        # may as well hold a Python number (see ``model.certain.maybe_number``).
        self.unproven: set[cst.Param] = set()

    # -- public -----------------------------------------------------------------------
    def kind(self, expr: cst.BaseExpression) -> Kind | None:
        """TENSOR, STRUCTURE or None for ``expr`` (an expression inside ``self.fn``)."""
        if isinstance(expr, cst.Name):
            if self._narrowed_to_python(expr):
                return None
            return self._name_kind(expr)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in _STATIC_ATTRIBUTES:
                return None
            if self.ctx.resolve(expr).imported:
                return None  # tf.float32, tf.newaxis, a module constant
            if _field(expr) and self.kind(expr.value) is Kind.SEQUENCE:
                return Kind.TENSOR  # `tf.math.top_k(x, 2).values`: a namedtuple's field
            return None
        if isinstance(expr, cst.Subscript):
            base = self.kind(expr.value)
            if base is Kind.TENSOR:
                return Kind.TENSOR
            if base is Kind.SEQUENCE:
                # `parts[0]` is one of the tensors; `parts[1:]` is a shorter list of them.
                if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
                    return Kind.TENSOR
                return Kind.SEQUENCE if len(expr.slice) == 1 else None
            return Kind.STRUCTURE if base is Kind.STRUCTURE else None
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.kind(expr.left), self.kind(expr.right)
            if Kind.TENSOR in (left, right):
                return Kind.TENSOR
            return Kind.TENSOR if _arithmetic_on_structure(expr, left, right) else None
        if isinstance(expr, cst.Comparison):
            if any(
                isinstance(t.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
                for t in expr.comparisons
            ):
                return None
            operands = [expr.left, *(t.comparator for t in expr.comparisons)]
            kinds = [self.kind(o) for o in operands]
            if Kind.TENSOR in kinds:
                return Kind.TENSOR
            # `inputs > 0` on Keras inputs or a dataset element: a Python list or tuple
            # cannot be ordered against a number, so the value is a tensor.
            numbers = any(isinstance(o, cst.Integer | cst.Float) for o in operands)
            return Kind.TENSOR if numbers and Kind.STRUCTURE in kinds else None
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return None
            return Kind.TENSOR if self.kind(expr.expression) is Kind.TENSOR else None
        if isinstance(expr, cst.IfExp):
            if (
                self.fn.autograph
                and self.kind(expr.test) is Kind.TENSOR
                and (self.params_certain or not self._reads_parameter(expr.test))
            ):
                # AutoGraph makes it a tf.cond, whose results are tensors (a test on a
                # parameter may be on the Python value a call passes: a Python `if`)
                return Kind.TENSOR
            a, b = self.kind(expr.body), self.kind(expr.orelse)
            return a if a is b else None
        if isinstance(expr, cst.ListComp):
            # A Python list (AutoGraph leaves comprehensions to Python) of tensors.
            return Kind.SEQUENCE if self.kind(expr.elt) is Kind.TENSOR else None
        return None

    def _reads_parameter(self, expr: cst.BaseExpression) -> bool:
        return any(
            isinstance(n, cst.Name)
            and any(isinstance(a.node, cst.Param) for a in self.ctx.bindings(n))
            for n in (expr, *walk.descendants(expr))
        )

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is Kind.TENSOR

    def may_be_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is not None

    def param_kind(self, param: cst.Param) -> Kind | None:
        """What parameter ``param`` of ``self.fn`` holds while tracing."""
        return self._params.get(param)

    def params(self) -> dict[cst.Param, Kind | None]:
        """Each parameter of ``self.fn`` with what it holds while tracing (a copy)."""
        return dict(self._params)

    def set_param_kind(self, param: cst.Param, kind: Kind | None) -> None:
        """Answer ``kind`` for ``param`` from now on (a stricter question's assumption)."""
        self._params[param] = kind
        self._names.clear()

    # -- calls --------------------------------------------------------------------------
    def _call_kind(self, call: cst.Call) -> Kind | None:
        func = call.func
        res = self.ctx.resolve(func)
        if res.imported:
            return api_kind(call, res)
        if isinstance(func, cst.Attribute):
            receiver = self.kind(func.value)
            method = func.attr.value
            if receiver is Kind.TENSOR and method not in _NOT_TENSOR_METHODS:
                return Kind.TENSOR
            if method in ("read_value", "value") and receiver is not None:
                return Kind.TENSOR
        return None

    # -- names --------------------------------------------------------------------------
    def _narrowed_to_python(self, name: cst.Name) -> bool:
        """``name`` is read in the body of ``if isinstance(name, (list, tuple)):`` (alone or
        in an ``and``: ``assert isinstance(factor, int) and factor >= 1``): whatever its
        annotation says, it is a Python container or number there (no tensor is one)."""
        return any(
            all(any(self.ctx.resolve(t).is_builtin(b) for b in _PYTHON_TYPES) for t in types)
            for types in narrowing_types(self.ctx, name, self.fn.node)
        )

    def _name_kind(self, name: cst.Name) -> Kind | None:
        key = name.value
        if key in self._names:
            return self._names[key]
        if key in self._visiting:
            # `z = z + 1`: assume the hypothesis under test; the name's other bindings decide.
            return Kind.TENSOR
        self._visiting.add(key)
        try:
            result = self._compute_name(name)
        finally:
            self._visiting.discard(key)
        if not self._visiting:  # results that leaned on an assumption are not kept
            self._names[key] = result
        return result

    def _compute_name(self, name: cst.Name) -> Kind | None:
        found = self.ctx.bindings(name)
        if not found or any(a.scope is not self._scope for a in found):
            return None  # globals, closures, imports, builtins: Python values at trace time
        kinds: set[Kind | None] = set()
        for a in found:
            node = a.node
            if isinstance(node, cst.Param):
                kinds.add(self._params.get(node))
                continue
            kinds.add(self._binding_kind(node))
            if None in kinds:
                return None
        if len(kinds) == 1:
            return next(iter(kinds))
        return Kind.STRUCTURE if None not in kinds else None

    def _binding_kind(self, target: cst.CSTNode) -> Kind | None:
        value = assigned_value(self.ctx, target, with_items=False)
        if value is not None:
            return self.kind(value)
        parent = self.ctx.parent(target)
        if isinstance(parent, cst.AugAssign):
            return Kind.TENSOR if self.kind(parent.value) is Kind.TENSOR else None
        if isinstance(parent, cst.NamedExpr):
            return self.kind(parent.value)
        if isinstance(parent, cst.For) and parent.target is target:
            # `for row in t` (converted by AutoGraph), `for part in tf.split(t, 3)` (a Python
            # loop over a list of tensors): each item is a tensor.
            return Kind.TENSOR if self.kind(parent.iter) in _HOLDS_TENSORS else None
        if isinstance(parent, cst.Element | cst.StarredElement):
            return self._unpacked_kind(parent)
        return None

    def _unpacked_kind(self, element: cst.Element | cst.StarredElement) -> Kind | None:
        """A name in a tuple/list target: ``a, b = tf.split(t, 2)`` binds tensors, ``first,
        *rest = ...`` a list of them; ``a, b = pair`` parts of a structure of tensors; ``for
        i, part in enumerate(tf.unstack(t))`` a tensor for ``part``."""
        holder = self.ctx.parent(element)
        container = self.ctx.parent(holder) if holder is not None else None
        starred = isinstance(element, cst.StarredElement)
        if isinstance(container, cst.AssignTarget):
            stmt = self.ctx.parent(container)
            if not isinstance(stmt, cst.Assign):
                return None
            value = self.kind(stmt.value)
            if value is Kind.SEQUENCE:
                return Kind.SEQUENCE if starred else Kind.TENSOR
            return Kind.STRUCTURE if value is not None and not starred else None
        if (
            isinstance(container, cst.For)
            and container.target is holder
            and isinstance(holder, cst.Tuple | cst.List)
            and not starred
            and len(holder.elements) == 2
            and holder.elements[1] is element
        ):
            it = container.iter
            if (
                isinstance(it, cst.Call)
                and self.ctx.resolve(it.func).is_builtin("enumerate")
                and len(it.args) >= 1
                and not it.args[0].star
                and it.args[0].keyword is None
                and self.kind(it.args[0].value) is Kind.SEQUENCE
            ):
                return Kind.TENSOR
        return None


def _param_kinds(ctx: ModuleContext, fn: TracedFunction) -> dict[cst.Param, Kind | None]:
    """What each parameter of ``fn`` holds while tracing."""
    node = fn.node
    params = list(node.params.params) + list(node.params.posonly_params)
    params += list(node.params.kwonly_params)
    out: dict[cst.Param, Kind | None] = {}
    method = gets_instance(ctx, node)
    positional = [p for p in params if p not in node.params.kwonly_params]
    if method and positional:
        out[positional[0]] = None
    signature = _signature_specs(ctx, fn.input_signature)
    index = 0
    for p in params:
        if p in out:
            continue
        out[p] = _param_kind(ctx, fn, p, signature, index)
        index += 1
    return out


def _param_kind(
    ctx: ModuleContext,
    fn: TracedFunction,
    p: cst.Param,
    signature: list[cst.BaseExpression] | None,
    index: int,
) -> Kind | None:
    name = p.name.value
    if name in _PYTHON_PARAMS:
        return None
    if p.annotation is not None:
        ann = p.annotation.annotation
        res = ctx.resolve(ann)
        if res.startswith("tensorflow.Tensor", "tensorflow.Variable", "tensorflow.types."):
            if not loose_annotation(ctx, fn, p):
                return Kind.TENSOR
            # else decided as if it had no annotation
        elif _python_annotation(ctx, ann):
            return None
    if fn.kind in (TraceKind.DECORATED, TraceKind.WRAPPED) and fn.parent is None:
        if signature is not None:
            if index < len(signature):
                spec = signature[index]
                if isinstance(spec, cst.Call) and ctx.resolve(spec.func).is_(
                    "tensorflow.TensorSpec"
                ):
                    return Kind.TENSOR
                return Kind.STRUCTURE
            return None
        if p.default is None and p.star == "":
            return Kind.TENSOR
        return None
    if fn.kind is TraceKind.KERAS and _receives_tensors(fn):
        # Keras hands losses and metrics y_true/y_pred (and sample weights) as tensors.
        return Kind.TENSOR if p.default is None and p.star == "" else None
    if fn.kind is TraceKind.DATASET and _bound_to_python(ctx, fn, p):
        return None  # `map(partial(parse, image_size=size))`: a Python value, not an element
    if fn.kind is TraceKind.DATASET or (fn.kind is TraceKind.KERAS and _is_call_input(fn, p)):
        return Kind.STRUCTURE if p.default is None and p.star == "" else None
    if fn.kind is TraceKind.CALLEE and p.star == "":
        return _passed_kind(ctx, fn, p)
    return None


def _passed_kind(ctx: ModuleContext, fn: TracedFunction, p: cst.Param) -> Kind | None:
    """TENSOR when every traced call of the helper ``fn`` gives ``p`` a symbolic tensor,
    else None, as for any parameter nothing describes.  The calls are this module's
    (``TracedFunction.sites``, each judged by its caller's inference) and other modules'
    (their ``tensor:`` keys).  A structure passed on (``y`` of a step's ``x, y = data``,
    maybe a dict) is not enough: only a tensor is taken for one."""
    node = fn.node
    sites = fn.sites
    if sites is None or not isinstance(node, cst.FunctionDef | cst.Lambda):
        return None
    if fn.parent is None:
        # Reached from other modules' traced code: what each of those calls passes.
        passed = fn.passed_elsewhere
        keys = {f"tensor:{k}" for k in argument_keys(node, p, gets_instance(ctx, node))}
        if not passed or not all(keys & call for call in passed):
            return None
    elif not sites:
        return None
    busy = ctx.memo("passed-kinds-busy", ctx.module, set)
    if node in busy:
        return None  # recursion: a caller's parameters wait on this one
    busy.add(node)
    try:
        for call, caller in sites:
            value = passed_for(call, node.params, p, bound=binds_self(ctx, node, call.func))
            if value is None or value is p.default or not tensors(ctx, caller).is_tensor(value):
                return None
    finally:
        busy.discard(node)
    return Kind.TENSOR


def loose_annotation(ctx: ModuleContext, fn: TracedFunction, p: cst.Param) -> bool:
    """``p``'s ``Tensor`` annotation names a list of tensors loosely: the body of a helper
    (not a ``tf.function``, Keras method or ``Dataset`` callback, whose inputs the author
    annotates as what TensorFlow hands in) iterates it as only a Python sequence can be
    (``def style_loss(gen: Tensor, tgt: Tensor)`` zipping them)."""
    return fn.kind is TraceKind.CALLEE and iterated_in_python(ctx, fn, p)


def iterated_in_python(ctx: ModuleContext, fn: TracedFunction, p: cst.Param) -> bool:
    """The body iterates ``p`` where only a Python sequence can be iterated while tracing:
    ``zip(p, ...)``, ``enumerate(p)``, ``list(p)``, ``sorted(p)``, a comprehension over it
    (AutoGraph converts none of these): either every call passes a list or tuple, and a
    ``for`` over it unrolls, or a tensor makes that iteration raise first (TFG203)."""
    name = p.name.value
    for node in walk.descendants(fn.node):
        if isinstance(node, cst.CompFor):
            it = node.iter
        elif isinstance(node, cst.Call) and _iterating_builtin(ctx, node.func):
            for arg in node.args:
                if _is_name(arg.value, name) and sole_parameter(ctx, arg.value) is p:
                    return True
            continue
        else:
            continue
        if _is_name(it, name) and sole_parameter(ctx, it) is p:
            return True
    return False


def _iterating_builtin(ctx: ModuleContext, func: cst.BaseExpression) -> bool:
    res = ctx.resolve(func)
    return any(res.is_builtin(b) for b in _ITERATING)


_ITERATING = ("zip", "enumerate", "list", "tuple", "sorted", "reversed")


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _bound_to_python(ctx: ModuleContext, fn: TracedFunction, p: cst.Param) -> bool:
    """Every use of ``fn`` in the module gives ``p`` a Python value by keyword:
    ``functools.partial(fn, p=size)`` handed to ``Dataset.map``, or a call from another
    function that passes a value it captures (``fn(*element, p=size)`` in a closure): tf.data
    passes an element only to the other parameters.  The value must call nothing (a call may
    make a tensor, which the traced graph captures as one)."""
    node = fn.node
    if not isinstance(node, cst.FunctionDef) or ctx.enclosing_class(node) is not None:
        return False
    uses = mentions(ctx, node)
    for use in uses:
        parent = ctx.parent(use)
        if isinstance(parent, cst.Call) and parent.func is use:
            call, caller = parent, ctx.enclosing_function(parent)
        else:
            found = partial_of(ctx, use)
            if found is None:
                return False
            call, caller = found, None
        value = keyword(call, p.name.value)
        if value is None or not _python_value(ctx, value, caller):
            return False
    return bool(uses)


def _python_value(
    ctx: ModuleContext, value: cst.BaseExpression, caller: cst.CSTNode | None
) -> bool:
    """``value`` calls nothing, and its names are bound to no call's result; with ``caller``
    (a function calling from traced code), they are captured from outside it, not its own
    (its parameters may be elements)."""
    for part in (value, *walk.descendants(value)):
        if isinstance(part, cst.Call | cst.Lambda):
            return False
        if not isinstance(part, cst.Name):
            continue
        for a in ctx.bindings(part):
            if caller is not None and ctx.enclosing_function(a.node) is caller:
                return False
            if isinstance(a.node, cst.Param):
                continue
            if isinstance(assigned_value(ctx, a.node), cst.Call):
                return False  # `size = tf.constant(...)`, then `partial(parse, size=size)`
    return True


def _receives_tensors(fn: TracedFunction) -> bool:
    """``Loss.call``, ``Metric.update_state`` and loss/metric functions given to compile()."""
    return fn.reason.startswith(("Keras Loss.", "Keras Metric.")) or "passed to compile()" in (
        fn.reason
    )


_KERAS_INPUT_METHODS = frozenset({"call", *KERAS_STEPS})


def _is_call_input(fn: TracedFunction, p: cst.Param) -> bool:
    """The first argument after ``self`` of a Keras ``call`` (inputs, maybe a list) or of
    a step (the batch: a tensor or a tuple ``(x, y[, sample_weight])``)."""
    node = fn.node
    if not isinstance(node, cst.FunctionDef) or node.name.value not in _KERAS_INPUT_METHODS:
        return False
    params = node.params.params
    return len(params) >= 2 and params[1] is p


def _signature_specs(
    ctx: ModuleContext, signature: cst.BaseExpression | None
) -> list[cst.BaseExpression] | None:
    """The specs of a literal ``input_signature``, also one a name holds (``sig = [...]``
    assigned once, then ``tf.function(f, input_signature=sig)``)."""
    if isinstance(signature, cst.Name):
        found = ctx.bindings(signature)
        signature = assigned_value(ctx, found[0].node) if len(found) == 1 else None
    if isinstance(signature, cst.List | cst.Tuple):
        return [el.value for el in signature.elements]
    return None


def tensors(ctx: ModuleContext, fn: TracedFunction) -> TensorInference:
    """The (memoised) tensor inference for one traced function."""
    return ctx.memo("tensors", fn.node, lambda: TensorInference(ctx, fn))


# What creates a tf.Variable, and where Keras keeps them (for TFG202/TFG204 messages:
# `variable.numpy()` raises NotImplementedError in a graph, not AttributeError).
_VARIABLE_CALLS = (
    "tensorflow.Variable",
    "tensorflow.get_variable",
    "keras.Variable",
    "keras.backend.Variable",
    "keras.variables.Variable",
)
_VARIABLE_FACTORY_METHODS = frozenset({"add_weight", "add_variable"})
# Attributes of Keras layers and optimizers that hold one variable.
_VARIABLE_ATTRIBUTES = frozenset(
    {
        "kernel",
        "bias",
        "recurrent_kernel",
        "depthwise_kernel",
        "pointwise_kernel",
        "embeddings",
        "moving_mean",
        "moving_variance",
        "iterations",
    }
)
# Attributes of Keras objects and tf.Modules that hold a list of variables.
_VARIABLE_LISTS = frozenset(
    {
        "variables",
        "trainable_variables",
        "non_trainable_variables",
        "weights",
        "trainable_weights",
        "non_trainable_weights",
    }
)


def is_variable_call(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    """``tf.Variable(...)`` (any spelling) or ``self.add_weight(...)``."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if ctx.resolve(func).is_(*_VARIABLE_CALLS):
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in _VARIABLE_FACTORY_METHODS


def holds_variable(ctx: ModuleContext, fn: TracedFunction, expr: cst.BaseExpression) -> bool:
    """``expr`` is a ``tf.Variable`` as far as this module shows: a ``tf.Variable(...)``/
    ``add_weight(...)`` call, a name or ``self.attr`` assigned only such calls (``None``
    placeholders of lazy creation aside), a Keras weight attribute (``layer.kernel``,
    ``optimizer.iterations``), an item of ``model.trainable_variables``, or a loop variable
    over such a list."""
    if isinstance(expr, cst.Call):
        return is_variable_call(ctx, expr)
    if isinstance(expr, cst.Subscript):
        base = expr.value
        return isinstance(base, cst.Attribute) and base.attr.value in _VARIABLE_LISTS
    if isinstance(expr, cst.Attribute):
        if ctx.resolve(expr).imported:
            return False  # a module attribute such as tf.float32
        values = [v for v in attribute_values(ctx, expr, fn) if not _is_none(v)]
        if values:
            return all(is_variable_call(ctx, v) for v in values)
        return expr.attr.value in _VARIABLE_ATTRIBUTES
    if isinstance(expr, cst.Name):
        seen = False
        for a in ctx.bindings(expr):
            node = a.node
            if isinstance(node, cst.Param):
                return False
            loop = ctx.parent(node)
            if isinstance(loop, cst.For) and loop.target is node:
                it = loop.iter
                if not (isinstance(it, cst.Attribute) and it.attr.value in _VARIABLE_LISTS):
                    return False
                seen = True
                continue
            value = assigned_value(ctx, node)
            if value is None:
                return False
            if is_variable_call(ctx, value):
                seen = True
            elif not _is_none(value):
                return False
        return seen
    return False


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
