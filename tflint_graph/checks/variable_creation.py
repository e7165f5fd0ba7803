"""Variable creation in traced code, shared by TFG205 and TFG208.

``tf.function`` allows variables to be created on its first trace only; every other trace
(including the second trace TensorFlow makes on the very first call) that creates one raises
``ValueError: tf.function only supports singleton tf.Variables created on the first call``.
Creation is fine when it is *guarded by state* that the first trace sets: ``if self.v is
None: self.v = ...``, ``if not hasattr(self, "v")``, ``if not self.built``, a ``global``
checked and assigned in the same ``if``.  A guard on a local (``v = None; if v is None:``)
or on anything else (``if training:``) is re-evaluated on every trace and does not help.

Verified with TensorFlow 2.21 / Keras 3 (and tf_keras 2.21 where noted): optimizers and
metric classes create variables when constructed; layers with weights (``Dense``, ``Conv2D``,
``BatchNormalization``, RNNs, ``Random*`` augmentation layers ...) when first called; Keras 3
dropout-style layers (``Dropout``, ``GaussianNoise``, RNNs) already when constructed (their
``SeedGenerator`` holds a variable), tf_keras ones never.  Layers without state
(``Flatten``, ``Reshape``, ``Activation``, ``ReLU``, ``Softmax``, pooling, merging layers,
``Lambda``, ``Rescaling`` ...) create nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from tflint_graph.model import walk
from tflint_graph.model.autograph import under_eager_check
from tflint_graph.model.calls import keyword
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import dotted, root_name
from tflint_graph.model.values import calls_in, declared_outer_names, is_init_scope
from tflint_graph.traced import traced_of

# Methods where creating variables is the normal, untraced place (Keras calls ``build``
# once, outside the step's trace or before it).
CREATION_METHODS = frozenset({"__init__", "build", "_build", "build_from_config"})

# Keras layers that own weights: they create variables when first called.
WEIGHTED_LAYERS = frozenset(
    {
        "Dense",
        "EinsumDense",
        "Embedding",
        "BatchNormalization",
        "SyncBatchNormalization",
        "LayerNormalization",
        "GroupNormalization",
        "RMSNormalization",
        "SpectralNormalization",
        "Normalization",
        "PReLU",
        "MultiHeadAttention",
        "GroupQueryAttention",
        "AdditiveAttention",
        "LSTM",
        "GRU",
        "SimpleRNN",
        "RNN",
        "LSTMCell",
        "GRUCell",
        "SimpleRNNCell",
        "StackedRNNCells",
        "ConvLSTM1D",
        "ConvLSTM2D",
        "ConvLSTM3D",
        "Bidirectional",
        "TimeDistributed",
        "LocallyConnected1D",
        "LocallyConnected2D",
    }
)
# Only when they are given no vocabulary / statistics do these create variables on build;
# lookups and TextVectorization create their tables eagerly: not reported.
_STATELESS_WHEN = {
    "Normalization": ("mean", "variance"),
}
_NEVER_WEIGHTED = frozenset({"TextVectorization", "IntegerLookup", "StringLookup"})
_CONV = re.compile(r"^(Conv|Convolution|SeparableConv|SeparableConvolution|DepthwiseConv)\d?D?")
# Keras 3 layers whose constructor makes a SeedGenerator (a variable).
SEEDED_LAYERS = frozenset(
    {
        "Dropout",
        "SpatialDropout1D",
        "SpatialDropout2D",
        "SpatialDropout3D",
        "GaussianNoise",
        "GaussianDropout",
        "AlphaDropout",
        "LSTM",
        "GRU",
        "SimpleRNN",
        "LSTMCell",
        "GRUCell",
        "SimpleRNNCell",
        "ConvLSTM1D",
        "ConvLSTM2D",
        "ConvLSTM3D",
    }
)
_INPUTS = ("keras.Input", "keras.layers.Input", "keras.layers.InputLayer")
_OPTIMIZER_EXTRA = ("keras.mixed_precision.LossScaleOptimizer",)
# Optimizers without slot variables (only plain SGD, when momentum is 0).
_SLOTLESS = ("SGD",)


def legacy_keras(ctx: ModuleContext) -> bool:
    """The module uses Keras 2 (``tf_keras``): dropout layers hold no seed variable."""
    return ctx.memo(
        "legacy-keras",
        ctx.module,
        lambda: "tf_keras" in ctx.source or "TF_USE_LEGACY_KERAS" in ctx.source,
    )


def _resolved_names(ctx: ModuleContext, func: cst.BaseExpression) -> frozenset[str]:
    res = traced_of(ctx).resolve(func)
    out: set[str] = set()
    for name in res.imported:
        for old, new in (
            ("tensorflow.optimizers.", "keras.optimizers."),
            ("tensorflow.metrics.", "keras.metrics."),
        ):
            if name.startswith(old):
                name = new + name[len(old) :]
        out.add(name)
    return frozenset(out)


def _capitalized(last: str) -> bool:
    return last[:1].isupper()


class Creation:
    """What a call constructs, and when it creates variables."""

    __slots__ = ("kind", "label", "when")

    def __init__(self, kind: str, label: str, when: str) -> None:
        self.kind = kind  # "layer", "model", "optimizer", "metric"
        self.label = label  # e.g. "keras.layers.Dense"
        self.when = when  # "construct" (the constructor creates them) or "call"


def keras_creation(ctx: ModuleContext, call: cst.Call, depth: int = 0) -> Creation | None:
    """The Keras object ``call`` constructs if it creates variables (now or when called)."""
    if depth > 4:
        return None
    legacy = legacy_keras(ctx)
    for name in sorted(_resolved_names(ctx, call.func)):
        parts = name.split(".")
        last = parts[-1]
        if not _capitalized(last):
            continue
        if name.startswith("keras.optimizers.") or name in _OPTIMIZER_EXTRA:
            if "schedules" in parts or "legacy" in parts or last == "Optimizer":
                continue
            return Creation("optimizer", name, "construct")
        if name.startswith("keras.metrics."):
            if last in ("Metric", "Reduce"):
                continue
            return Creation("metric", name, "construct")
        if name.startswith("keras.applications."):
            return Creation("model", name, "construct")
        if name.startswith("keras.layers."):
            found = _layer_creation(ctx, call, last, legacy, depth)
            if found is not None:
                return Creation("layer", name, found)
            continue
        if name in ("keras.Sequential",):
            when = _sequential_creation(ctx, call, legacy, depth)
            if when is not None:
                return Creation("model", name, when)
    return _local_class_creation(ctx, call, depth)


def _layer_creation(
    ctx: ModuleContext, call: cst.Call, last: str, legacy: bool, depth: int
) -> str | None:
    if last in SEEDED_LAYERS and not legacy:
        return "construct"
    if last in _NEVER_WEIGHTED:
        return None
    if last in _STATELESS_WHEN and all(keyword(call, k) is not None for k in _STATELESS_WHEN[last]):
        return None
    if last == "AdditiveAttention":
        scale = keyword(call, "use_scale")
        if isinstance(scale, cst.Name) and scale.value == "False":
            return None
    if last == "TimeDistributed":
        inner = call.args[0].value if call.args and call.args[0].keyword is None else None
        inner = inner or keyword(call, "layer")
        if not isinstance(inner, cst.Call) or keras_creation(ctx, inner, depth + 1) is None:
            return None
        return "call"
    if last in WEIGHTED_LAYERS or last.startswith("Random") or _CONV.match(last):
        return "call"
    return None


def _sequential_creation(
    ctx: ModuleContext, call: cst.Call, legacy: bool, depth: int
) -> str | None:
    layers = call.args[0].value if call.args and call.args[0].keyword is None else None
    layers = layers or keyword(call, "layers")
    if not isinstance(layers, cst.List | cst.Tuple):
        return None
    weighted = False
    has_input = False
    for el in layers.elements:
        value = el.value
        if not isinstance(value, cst.Call):
            continue
        names = _resolved_names(ctx, value.func)
        if any(n in _INPUTS for n in names):
            has_input = True
            continue
        if keyword(value, "input_shape") is not None or keyword(value, "input_dim") is not None:
            has_input = True
        inner = keras_creation(ctx, value, depth + 1)
        if inner is not None:
            if inner.when == "construct":
                return "construct"
            weighted = True
    if not weighted:
        return None
    return "construct" if has_input else "call"


def _local_class_creation(ctx: ModuleContext, call: cst.Call, depth: int) -> Creation | None:
    """``MyBlock(...)`` for a Keras layer/model/metric subclass of this module that creates
    variables: in ``__init__`` (now) or in other methods (when called)."""
    traced = traced_of(ctx)
    if not isinstance(call.func, cst.Name):
        return None
    classes = [a.node for a in ctx.bindings(call.func) if isinstance(a.node, cst.ClassDef)]
    if len(classes) != 1:
        return None
    cls = classes[0]
    kinds = traced.keras_kinds(cls)
    if not kinds or kinds == {"loss"}:
        return None
    kind = "metric" if "metric" in kinds else "model" if "model" in kinds else "layer"
    label = cls.name.value
    init = traced.find_method(cls, "__init__")
    if init is not None and _creates_variables(ctx, init, depth, construct_only=True):
        return Creation(kind, label, "construct")
    if kind == "metric":
        return None  # a metric's variables come from its constructor
    seen: set[cst.ClassDef] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if _creates_variables(ctx, current, depth, construct_only=False):
            return Creation(kind, label, "call")
        todo += traced.module_bases(current)
    return None


def _creates_variables(
    ctx: ModuleContext, node: cst.CSTNode, depth: int, *, construct_only: bool
) -> bool:
    for call in calls_in(node):
        if constructs_variable(ctx, call) or _is_weight_call(call):
            return True
        inner = keras_creation(ctx, call, depth + 1)
        if inner is not None and (inner.when == "construct" or not construct_only):
            return True
    return False


def constructs_variable(ctx: ModuleContext, call: cst.Call) -> bool:
    """``tf.Variable(...)`` (any spelling) or Keras 3's ``keras.Variable(...)``."""
    return ctx.resolve(call.func).is_(
        "tensorflow.Variable", "keras.Variable", "keras.backend.Variable"
    )


def _is_weight_call(call: cst.Call) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in ("add_weight", "add_variable")
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
    )


def is_self_weight_call(call: cst.Call) -> bool:
    """``self.add_weight(...)`` / ``self.add_variable(...)``."""
    return _is_weight_call(call)


def optimizer_has_slots(ctx: ModuleContext, call: cst.Call) -> bool:
    """Constructing this optimizer gives one that creates slot variables when it first
    applies gradients (Keras 3: everything but plain SGD; tf_keras: every optimizer)."""
    if legacy_keras(ctx):
        return True
    names = _resolved_names(ctx, call.func)
    if not any(n.rsplit(".", 1)[-1] in _SLOTLESS for n in names):
        return True
    momentum = keyword(call, "momentum")
    if momentum is None and len(call.args) >= 2 and call.args[1].keyword is None:
        momentum = call.args[1].value
    if momentum is None:
        return False
    if isinstance(momentum, cst.Integer | cst.Float):
        return float(momentum.value) != 0.0
    return True  # a computed momentum: may be non-zero


# -- guards ------------------------------------------------------------------------------


def created_once(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` (a creation) runs on the first trace only, or is not really traced: guarded
    by state the guarded block sets, under ``tf.init_scope()`` or ``if
    tf.executing_eagerly():``, in ``__init__``/``build``, or in a callee whose every call
    site is guarded."""
    return _created_once(ctx, node, fn, 0)


def _created_once(
    ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction, depth: int, *, site: bool = False
) -> bool:
    fn_node = fn.node
    if isinstance(fn_node, cst.FunctionDef) and fn_node.name.value in CREATION_METHODS:
        return True
    if _state_guarded(ctx, node, fn_node, site) or under_eager_check(ctx, node, fn):
        return True
    parent = fn.parent
    if fn.kind is not TraceKind.CALLEE or parent is None or depth > 8:
        return False
    if isinstance(fn_node, cst.Lambda):
        # A lambda in a traced body: its creation is guarded where the lambda is written.
        return _created_once(ctx, fn_node, parent, depth + 1)
    sites = list(_call_sites(ctx, fn_node, parent))
    if not sites:
        return True  # reached some other way (passed as an argument ...): do not guess
    # At a call site the callee may be what sets the state: `if self.v is None: self._init()`.
    return all(_created_once(ctx, s, parent, depth + 1, site=True) for s in sites)


def _call_sites(
    ctx: ModuleContext, callee: FunctionNode, parent: TracedFunction
) -> Iterator[cst.Call]:
    traced = traced_of(ctx)
    facts = traced.facts.bodies.get(parent.node)
    if facts is None:
        return
    for call in facts.calls:
        if any(fn is callee for fn, _ in traced.callables(call.func, parent.node)):
            yield call


def _state_guarded(
    ctx: ModuleContext, node: cst.CSTNode, fn: FunctionNode, site: bool = False
) -> bool:
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is fn:
            return False
        if isinstance(anc, cst.If) and child is not anc.test:
            if _is_state_guard(ctx, anc.test, anc, fn, site):
                return True
        elif isinstance(anc, cst.IfExp) and child is not anc.test:
            if _is_state_guard(ctx, anc.test, _statement_of(ctx, anc), fn, site):
                return True
        elif isinstance(anc, cst.BooleanOperation) and child is anc.right:
            # `self.v = self.v or tf.Variable(...)`
            if _is_state_guard(ctx, anc.left, _statement_of(ctx, anc), fn, site):
                return True
        elif isinstance(anc, cst.With) and is_init_scope(ctx, anc):
            return True
        child = anc
    return False


def _statement_of(ctx: ModuleContext, node: cst.CSTNode) -> cst.CSTNode:
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            return anc
    return node


_BUILT_FLAGS = frozenset({"built", "_built", "initialized", "_initialized"})


def _is_state_guard(
    ctx: ModuleContext,
    test: cst.BaseExpression,
    block: cst.CSTNode,
    fn: FunctionNode,
    site: bool = False,
) -> bool:
    """``test`` reads state that outlives the trace and ``block`` (what it guards) sets or
    touches: the first trace flips it, later traces skip the creation.  Around the call of
    a creating helper (``site``), reading state is enough: the helper may set it."""
    refs: set[str] = set()
    attrs: set[str] = set()
    for expr in _state_refs(ctx, test, fn):
        text = dotted(expr)
        if text is None:
            continue
        if isinstance(expr, cst.Attribute) and expr.attr.value in _BUILT_FLAGS:
            return True  # Keras sets `built` itself
        refs.add(text)
    for call in calls_in(test):
        if (
            isinstance(call.func, cst.Name)
            and call.func.value in ("hasattr", "getattr")
            and len(call.args) >= 2
            and isinstance(call.args[1].value, cst.SimpleString)
        ):
            attr = call.args[1].value.evaluated_value
            if isinstance(attr, str):
                attrs.add(attr)
    if not refs and not attrs:
        return False
    if site:
        return True
    parts: list[cst.CSTNode] = [block]
    if isinstance(block, cst.If):
        parts = [block.body] + ([block.orelse] if block.orelse is not None else [])
    for part in parts:
        for expr in _dotted_exprs(part):
            text = dotted(expr) or ""
            if any(text == r or text.startswith(r + ".") for r in refs):
                return True
            if isinstance(expr, cst.Attribute) and any(
                text.endswith("." + a) or f".{a}." in text for a in attrs
            ):
                return True
    return False


def _state_refs(
    ctx: ModuleContext, test: cst.BaseExpression, fn: FunctionNode
) -> Iterator[cst.BaseExpression]:
    """Names and attribute chains in ``test`` that outlive one trace of ``fn``."""
    outer = declared_outer_names(ctx, fn)
    for expr in _dotted_exprs(test):
        root = root_name(expr)
        if root is None:
            continue
        res = ctx.resolve(root)
        if res.imported and not res.local:
            continue  # a module (tf.executing_eagerly) or builtin
        if root.value in outer:
            yield expr
            continue
        found = ctx.bindings(root)
        if not found:
            continue
        if root.value in ("self", "cls"):
            yield expr
            continue
        own = ctx.function_scope(fn)
        if any(a.scope is own for a in found):
            continue  # a local or parameter: reset on every trace
        yield expr


class _Chains(walk.Visitor):
    def __init__(self) -> None:
        self.found: list[cst.BaseExpression] = []

    def visit_Attribute(self, attr: cst.Attribute) -> bool:
        if dotted(attr) is not None:
            self.found.append(attr)
        else:
            self.walk(attr.value)  # not the attribute's own name
        return False

    def visit_Name(self, name: cst.Name) -> None:
        self.found.append(name)

    def visit_Arg(self, arg: cst.Arg) -> bool:
        self.walk(arg.value)  # not the keyword's name
        return False


def _dotted_exprs(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Maximal ``a.b.c`` chains and bare names in ``node``."""
    chains = _Chains()
    chains.walk(node)
    return chains.found
