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

import libcst as cst

from tflint_graph.core.vocabulary import KERAS_INPUTS
from tflint_graph.model.calls import keyword
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.values import calls_in
from tflint_graph.model.walk import descendants
from tflint_graph.traced import traced_of

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
_OPTIMIZER_EXTRA = ("keras.mixed_precision.LossScaleOptimizer",)
# Makes its shadow variables when `.apply(var_list)` runs.
_MOVING_AVERAGES = ("tensorflow.train.ExponentialMovingAverage",)
# Optimizers without slot variables (only plain SGD, when momentum is 0).
_SLOTLESS = ("SGD",)


def legacy_keras(ctx: ModuleContext) -> bool:
    """The module uses Keras 2 (``tf_keras``, or the project's declared Keras, SPEC §1):
    dropout layers hold no seed variable."""
    return ctx.memo(
        "legacy-keras",
        ctx.module,
        lambda: (
            "tf_keras" in ctx.source
            or "TF_USE_LEGACY_KERAS" in ctx.source
            or traced_of(ctx).definitions.module_keras_version() == "2"
        ),
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
        if name in _MOVING_AVERAGES:
            return Creation("moving average", name, "apply")
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
        if any(n in KERAS_INPUTS for n in names):
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
    """``node`` (a creation) runs on the first trace only, or is not really traced: one-time
    setup as ``model.setup`` defines it."""
    return traced_of(ctx).setup.covers(node, fn)


_CREATOR_SCOPES = ("tensorflow.variable_creator_scope",)


def creator_decides(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` runs under ``with tf.variable_creator_scope(creator):`` whose creator may
    make something else than a variable (a constant, a looked-up tensor): only a creator of
    this module that hands every request on (``return next_creator(**kwargs)``) still
    creates one."""
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            return False
        if not isinstance(anc, cst.With):
            continue
        for item in anc.items:
            scope = item.item
            if isinstance(scope, cst.Call) and ctx.resolve(scope.func).is_(*_CREATOR_SCOPES):
                creator = scope.args[0].value if scope.args else None
                definitions = traced_of(ctx).definitions
                found = [c for c, _ in definitions.callables(creator, fn.node)]
                if not found or not all(_passes_on(c) for c in found):
                    return True
    return False


def _passes_on(creator: cst.FunctionDef | cst.Lambda) -> bool:
    """The creator returns what its first parameter (the next creator) makes, on every
    path: each ``return`` is a call of it."""
    params = creator.params.params
    if not params:
        return False
    name = params[0].name.value
    if isinstance(creator, cst.Lambda):
        return _calls_name(creator.body, name)
    returns = [n for n in descendants(creator.body) if isinstance(n, cst.Return)]
    return bool(returns) and all(_calls_name(r.value, name) for r in returns)


def _calls_name(expr: cst.BaseExpression | None, name: str) -> bool:
    return (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == name
    )
