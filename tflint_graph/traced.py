"""Find the code TensorFlow traces (SPEC §1).

Roots are found first (``@tf.function``, ``tf.function(fn)``, Keras steps, ``tf.data``
callbacks, compile() losses and metrics); then a breadth-first walk follows what traced code
calls or hands to graph control flow, so each callee gets the shortest chain from a root.
Bodies given to ``tf.py_function``/``tf.numpy_function`` are never traced.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from tflint_graph.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.names import dotted

TF_FUNCTION = ("tensorflow.function",)
ESCAPE_HATCHES = (
    "tensorflow.py_function",
    "tensorflow.numpy_function",
    "tensorflow.py_func",
    "tensorflow.compat.v1.py_func",
    "tensorflow.experimental.numpy_function",
)
DO_NOT_CONVERT = ("tensorflow.autograph.experimental.do_not_convert",)
PARTIAL = ("functools.partial",)

# Graph control flow whose callables run symbolically when called from traced code.
CONTROL_FLOW = {
    "tensorflow.cond": "tf.cond",
    "tensorflow.while_loop": "tf.while_loop",
    "tensorflow.switch_case": "tf.switch_case",
    "tensorflow.case": "tf.case",
    "tensorflow.map_fn": "tf.map_fn",
    "tensorflow.scan": "tf.scan",
    "tensorflow.foldl": "tf.foldl",
    "tensorflow.foldr": "tf.foldr",
    "tensorflow.vectorized_map": "tf.vectorized_map",
    "tensorflow.recompute_grad": "tf.recompute_grad",
    "keras.ops.cond": "keras.ops.cond",
    "keras.ops.while_loop": "keras.ops.while_loop",
    "keras.ops.fori_loop": "keras.ops.fori_loop",
    "keras.ops.scan": "keras.ops.scan",
    "keras.ops.map": "keras.ops.map",
    "keras.ops.switch": "keras.ops.switch",
    "keras.ops.vectorized_map": "keras.ops.vectorized_map",
}
# These trace their callable even when called eagerly.
ALWAYS_TRACING = {
    "tensorflow.vectorized_map": "tf.vectorized_map callable",
    "keras.layers.Lambda": "Keras Lambda layer",
}
STRATEGY_RUN = ("run", "experimental_run_v2")

DATASET_CALLBACK_METHODS = frozenset(
    {
        "map",
        "filter",
        "flat_map",
        "interleave",
        "parallel_interleave",
        "reduce",
        "scan",
        "group_by_window",
        "group_by_reducer",
        "bucket_by_sequence_length",
        "rejection_resample",
        "take_while",
        "map_with_legacy_function",
        "filter_with_legacy_function",
    }
)
# Methods that return another Dataset: `ds.shuffle(10).batch(4).map(f)` is still a dataset.
DATASET_METHODS = DATASET_CALLBACK_METHODS | {
    "batch",
    "padded_batch",
    "ragged_batch",
    "sparse_batch",
    "unbatch",
    "shuffle",
    "repeat",
    "prefetch",
    "cache",
    "take",
    "skip",
    "shard",
    "window",
    "concatenate",
    "zip",
    "enumerate",
    "apply",
    "with_options",
    "ignore_errors",
    "assert_cardinality",
    "unique",
    "rebatch",
    "snapshot",
    "from_tensor_slices",
    "from_tensors",
    "from_generator",
    "range",
    "list_files",
    "load",
    "sample_from_datasets",
    "choose_from_datasets",
    "random",
    "counter",
}
DATASET_FACTORIES = (
    "tensorflow.data.",
    "tensorflow_datasets.load",
    "keras.utils.image_dataset_from_directory",
    "keras.utils.text_dataset_from_directory",
    "keras.utils.audio_dataset_from_directory",
    "keras.utils.timeseries_dataset_from_array",
    "keras.preprocessing.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory",
    "keras.preprocessing.timeseries_dataset_from_array",
)
_DATASET_NAME = re.compile(r"(?:^|_)(?:ds|dataset|dset|datasets|pipeline)(?:$|_)", re.IGNORECASE)
_DATASET_ONLY_KWARGS = frozenset({"num_parallel_calls", "deterministic", "cycle_length"})

KERAS_METHODS = {
    "model": ("train_step", "test_step", "predict_step", "call"),
    "layer": ("call",),
    "loss": ("call",),
    "metric": ("update_state",),
}
KERAS_LABELS = {
    "train_step": "Keras train_step",
    "test_step": "Keras test_step",
    "predict_step": "Keras predict_step",
}
_MAX_DEPTH = 6


@dataclass
class _FunctionFacts:
    """What one function body contains, gathered in a single walk of the module."""

    calls: list[cst.Call] = field(default_factory=list)
    lambdas: list[cst.Lambda] = field(default_factory=list)
    returns: list[cst.BaseExpression] = field(default_factory=list)


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stack: list[FunctionNode | None] = [None]
        self.facts: dict[FunctionNode | None, _FunctionFacts] = {None: _FunctionFacts()}
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.calls: list[tuple[FunctionNode | None, cst.Call]] = []

    def _here(self) -> _FunctionFacts:
        return self.facts[self.stack[-1]]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.functions.append(node)
        # Decorators, defaults and annotations belong to the enclosing scope.
        for dec in node.decorators:
            dec.visit(self)
        node.params.visit(self)
        if node.returns is not None:
            node.returns.visit(self)
        self.stack.append(node)
        self.facts[node] = _FunctionFacts()
        node.body.visit(self)
        self.stack.pop()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._here().lambdas.append(node)
        node.params.visit(self)
        self.stack.append(node)
        self.facts[node] = _FunctionFacts()
        node.body.visit(self)
        self.stack.pop()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._here().calls.append(node)
        self.calls.append((self.stack[-1], node))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._here().returns.append(node.value)


def _display(ctx: ModuleContext, fn: FunctionNode) -> str:
    if isinstance(fn, cst.FunctionDef):
        return f"{fn.name.value}()"
    return f"lambda (line {ctx.position(fn).start.line})"


def _short(fn: FunctionNode, ctx: ModuleContext) -> str:
    return _display(ctx, fn)


def _arg(call: cst.Call, index: int, *keywords: str) -> cst.BaseExpression | None:
    """The argument at positional ``index`` or given by one of ``keywords``."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if index < len(positional):
        return positional[index].value
    for a in call.args:
        if a.keyword is not None and a.keyword.value in keywords:
            return a.value
    return None


def _kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def _is_false(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


class TraceFinder:
    """Computes ``ctx.traced`` for one module."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.collector = _Collector()
        ctx.module.visit(self.collector)
        self.facts = self.collector.facts
        self.class_by_node = {c: c for c in self.collector.classes}
        self.escaped: set[FunctionNode] = set()
        self._keras_kinds: dict[cst.ClassDef, frozenset[str]] = {}
        self._extra = tuple(ctx.config.extra_function_decorators)

    # -- name helpers -----------------------------------------------------------------
    def is_tf_function(self, expr: cst.BaseExpression) -> bool:
        res = self.ctx.resolve(expr)
        if res.is_(*TF_FUNCTION):
            return True
        if self._extra:
            text = dotted(expr)
            for entry in self._extra:
                if res.is_(entry) or text == entry or (text and entry.endswith("." + text)):
                    return True
        return False

    def is_escape_hatch(self, expr: cst.BaseExpression) -> bool:
        return self.ctx.resolve(expr).is_(*ESCAPE_HATCHES)

    # -- resolving callables ----------------------------------------------------------
    def callables(
        self, expr: cst.BaseExpression | None, at: FunctionNode | None, depth: int = 0
    ) -> Iterator[tuple[FunctionNode, bool]]:
        """Functions of this module that ``expr`` evaluates to, with an autograph flag."""
        if expr is None or depth > _MAX_DEPTH:
            return
        if isinstance(expr, cst.Lambda):
            yield expr, True
        elif isinstance(expr, cst.Name):
            for a in self.ctx.bindings(expr):
                node = a.node
                if isinstance(node, cst.FunctionDef):
                    yield node, True
                elif isinstance(node, cst.Name):
                    value = self._assigned_value(node)
                    if value is not None:
                        yield from self.callables(value, at, depth + 1)
        elif isinstance(expr, cst.Attribute):
            yield from ((m, True) for m in self._methods_of(expr, at))
        elif isinstance(expr, cst.Call):
            func = expr.func
            res = self.ctx.resolve(func)
            if res.is_(*PARTIAL) or self.is_tf_function(func):
                yield from self.callables(_arg(expr, 0, "func"), at, depth + 1)
            elif res.is_(*DO_NOT_CONVERT):
                for fn, _ in self.callables(_arg(expr, 0, "func"), at, depth + 1):
                    yield fn, False
            elif isinstance(func, cst.Call) and self.is_tf_function(func.func):
                # tf.function(jit_compile=True)(fn)
                yield from self.callables(_arg(expr, 0, "func"), at, depth + 1)
            elif not self.is_escape_hatch(func):
                # A factory defined here: `ds.map(make_augment(cfg))` maps what it returns.
                for factory, _ in self.callables(func, at, depth + 1):
                    if isinstance(factory, cst.FunctionDef):
                        for ret in self.facts[factory].returns:
                            yield from self.callables(ret, factory, depth + 1)
        elif isinstance(expr, cst.List | cst.Tuple | cst.Set):
            for el in expr.elements:
                yield from self.callables(el.value, at, depth + 1)
        elif isinstance(expr, cst.Dict):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    yield from self.callables(el.value, at, depth + 1)

    def _assigned_value(self, target: cst.Name) -> cst.BaseExpression | None:
        """``value`` for a simple ``target = value`` assignment."""
        parent = self.ctx.parent(target)
        if isinstance(parent, cst.AssignTarget):
            stmt = self.ctx.parent(parent)
            if isinstance(stmt, cst.Assign):
                return stmt.value
        if isinstance(parent, cst.AnnAssign) and parent.target is target:
            return parent.value
        return None

    def _class_of_expr(
        self, expr: cst.BaseExpression, at: FunctionNode | None
    ) -> cst.ClassDef | None:
        """The module class an expression denotes or is an instance of."""
        if isinstance(expr, cst.Name):
            if expr.value in ("self", "cls") and isinstance(at, cst.FunctionDef):
                outer = self.ctx.enclosing_class(at)
                if outer is not None:
                    return outer
            for a in self.ctx.bindings(expr):
                if isinstance(a.node, cst.ClassDef):
                    return a.node
                if isinstance(a.node, cst.Name):
                    value = self._assigned_value(a.node)
                    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                        for b in self.ctx.bindings(value.func):
                            if isinstance(b.node, cst.ClassDef):
                                return b.node
        return None

    def _methods_of(self, expr: cst.Attribute, at: FunctionNode | None) -> list[cst.FunctionDef]:
        cls = self._class_of_expr(expr.value, at)
        if cls is None:
            return []
        method = self.find_method(cls, expr.attr.value)
        return [method] if method is not None else []

    def find_method(
        self, cls: cst.ClassDef, name: str, seen: frozenset[cst.ClassDef] = frozenset()
    ) -> cst.FunctionDef | None:
        """``name`` defined in ``cls`` or, failing that, in a base class of this module."""
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        for base in self._module_bases(cls):
            if base not in seen:
                found = self.find_method(base, name, seen | {cls})
                if found is not None:
                    return found
        return None

    def _module_bases(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        bases = []
        for arg in cls.bases:
            if isinstance(arg.value, cst.Name):
                for a in self.ctx.bindings(arg.value):
                    if isinstance(a.node, cst.ClassDef) and a.node is not cls:
                        bases.append(a.node)
        return bases

    # -- Keras ------------------------------------------------------------------------
    def keras_kinds(
        self, cls: cst.ClassDef, seen: frozenset[cst.ClassDef] = frozenset()
    ) -> frozenset[str]:
        """Which Keras base classes ``cls`` derives from (``model``, ``layer``, ...)."""
        if cls in self._keras_kinds:
            return self._keras_kinds[cls]
        kinds: set[str] = set()
        for arg in cls.bases:
            if arg.keyword is not None:
                continue
            res = self.ctx.resolve(arg.value)
            if res.is_("keras.Model", "keras.Sequential") or res.startswith("keras.models."):
                kinds |= {"model", "layer"}
            elif res.startswith("keras.layers."):
                kinds.add("layer")
            elif res.startswith("keras.losses."):
                kinds.add("loss")
            elif res.startswith("keras.metrics."):
                kinds.add("metric")
        for base in self._module_bases(cls):
            if base not in seen:
                kinds |= self.keras_kinds(base, seen | {cls})
        result = frozenset(kinds)
        if not seen:
            self._keras_kinds[cls] = result
        return result

    def _dynamic_layer(self, cls: cst.ClassDef) -> bool:
        """``super().__init__(dynamic=True)``: Keras runs the layer eagerly."""
        init = self.find_method(cls, "__init__")
        if init is None:
            return False
        for call in self.facts.get(init, _FunctionFacts()).calls:
            value = _kwarg(call, "dynamic")
            if isinstance(value, cst.Name) and value.value == "True":
                return True
        return False

    # -- tf.data ----------------------------------------------------------------------
    def is_dataset(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            res = self.ctx.resolve(func)
            if res.startswith(*DATASET_FACTORIES):
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS:
                return self.is_dataset(func.value, depth + 1)
            return False
        if isinstance(expr, cst.Name):
            if _DATASET_NAME.search(expr.value):
                return True
            for a in self.ctx.bindings(expr):
                if isinstance(a.node, cst.Name):
                    value = self._assigned_value(a.node)
                    if value is not None and self.is_dataset(value, depth + 1):
                        return True
                elif isinstance(a.node, cst.Param) and a.node.annotation is not None:
                    ann = self.ctx.resolve(a.node.annotation.annotation)
                    if ann.startswith("tensorflow.data."):
                        return True
            return False
        if isinstance(expr, cst.Attribute):
            if self.ctx.resolve(expr).startswith("tensorflow.data."):
                return True
            return bool(_DATASET_NAME.search(expr.attr.value))
        return False

    def _dataset_callback_call(self, call: cst.Call) -> str | None:
        """``Dataset.map`` etc. when the receiver is plausibly a ``tf.data.Dataset``."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method not in DATASET_CALLBACK_METHODS:
            return None
        has_dataset_kwarg = any(
            a.keyword is not None and a.keyword.value in _DATASET_ONLY_KWARGS for a in call.args
        )
        if has_dataset_kwarg or self.is_dataset(func.value):
            return method
        return None

    # -- discovery --------------------------------------------------------------------
    def _decorator_root(self, fn: cst.FunctionDef) -> tuple[str, bool, cst.BaseExpression | None]:
        """(reason, autograph, input_signature) when a decorator makes ``fn`` traced."""
        autograph = True
        traced: tuple[str, cst.BaseExpression | None] | None = None
        for dec in fn.decorators:
            expr = dec.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if self.ctx.resolve(target).is_(*DO_NOT_CONVERT):
                autograph = False
                continue
            if self.is_escape_hatch(target):
                self.escaped.add(fn)
                return ("", False, None)
            call = expr if isinstance(expr, cst.Call) else None
            if call is not None and self.ctx.resolve(target).is_(*PARTIAL):
                first = _arg(call, 0, "func")
                if first is not None and self.is_tf_function(first):
                    target = first
                else:
                    continue
            if self.is_tf_function(target):
                label = dotted(target) or "tf.function"
                if call is not None and _is_false(_kwarg(call, "autograph")):
                    autograph = False
                signature = _kwarg(call, "input_signature") if call is not None else None
                traced = (f"decorated with @{label}", signature)
        if traced is None:
            return ("", True, None)
        return (traced[0], autograph, traced[1])

    def find(self) -> dict[FunctionNode, TracedFunction]:
        ctx = self.ctx
        traced: dict[FunctionNode, TracedFunction] = {}
        order: deque[TracedFunction] = deque()

        def add(
            fn: FunctionNode,
            kind: TraceKind,
            reason: str,
            parent: TracedFunction | None = None,
            autograph: bool = True,
            signature: cst.BaseExpression | None = None,
        ) -> None:
            if fn in traced or fn in self.escaped:
                return
            display = _display(ctx, fn)
            chain = (*parent.chain, display) if parent is not None else (display,)
            info = TracedFunction(fn, display, kind, reason, chain, autograph, signature, parent)
            traced[fn] = info
            order.append(info)

        roots: list[tuple[int, int, FunctionNode, TraceKind, str, bool, object]] = []

        def root(
            fn: FunctionNode,
            kind: TraceKind,
            reason: str,
            autograph: bool = True,
            signature: cst.BaseExpression | None = None,
        ) -> None:
            pos = ctx.position(fn).start
            roots.append((pos.line, pos.column, fn, kind, reason, autograph, signature))

        for fn in self.collector.functions:
            reason, autograph, signature = self._decorator_root(fn)
            if reason:
                root(fn, TraceKind.DECORATED, reason, autograph, signature)

        keras_eager = bool(re.search(r"run_eagerly\s*=\s*True", ctx.source))
        for cls in self.collector.classes:
            kinds = self.keras_kinds(cls)
            if not kinds or keras_eager or self._dynamic_layer(cls):
                continue
            wanted: list[str] = []
            for kind in ("model", "layer", "loss", "metric"):
                if kind in kinds:
                    wanted += [m for m in KERAS_METHODS[kind] if m not in wanted]
            for stmt in cls.body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value in wanted:
                    name = stmt.name.value
                    base = (
                        "Model"
                        if "model" in kinds
                        else (
                            "Loss"
                            if "loss" in kinds
                            else "Metric"
                            if "metric" in kinds
                            else "Layer"
                        )
                    )
                    label = KERAS_LABELS.get(name, f"Keras {base}.{name}")
                    root(stmt, TraceKind.KERAS, label)

        for at, call in self.collector.calls:
            res = ctx.resolve(call.func)
            if self.is_tf_function(call.func):
                for fn, autograph in self.callables(_arg(call, 0, "func"), at):
                    autograph = autograph and not _is_false(_kwarg(call, "autograph"))
                    root(
                        fn,
                        TraceKind.WRAPPED,
                        "wrapped by tf.function()",
                        autograph,
                        _kwarg(call, "input_signature"),
                    )
            elif isinstance(call.func, cst.Call) and self.is_tf_function(call.func.func):
                inner = call.func
                for fn, autograph in self.callables(_arg(call, 0, "func"), at):
                    autograph = autograph and not _is_false(_kwarg(inner, "autograph"))
                    root(
                        fn,
                        TraceKind.WRAPPED,
                        "wrapped by tf.function()",
                        autograph,
                        _kwarg(inner, "input_signature"),
                    )
            elif res.is_(*ALWAYS_TRACING):
                label = next(v for k, v in ALWAYS_TRACING.items() if res.is_(k))
                for fn, autograph in self.callables(_arg(call, 0, "fn", "function"), at):
                    root(fn, TraceKind.CONTROL_FLOW, label, autograph)
            elif (method := self._dataset_callback_call(call)) is not None:
                for arg in call.args:
                    for fn, autograph in self.callables(arg.value, at):
                        root(fn, TraceKind.DATASET, f"Dataset.{method} callback", autograph)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile":
                for key in ("loss", "metrics", "weighted_metrics"):
                    for fn, autograph in self.callables(_kwarg(call, key), at):
                        root(fn, TraceKind.KERAS, f"Keras {key} passed to compile()", autograph)

        roots.sort(key=lambda r: (r[0], r[1]))
        for _, _, fn, kind, reason, autograph, signature in roots:
            add(fn, kind, reason, autograph=autograph, signature=signature)  # type: ignore[arg-type]

        # Breadth-first over what traced code reaches, so chains are shortest.
        while order:
            info = order.popleft()
            self._follow(info, add)
        return traced

    def _follow(self, info: TracedFunction, add) -> None:  # type: ignore[no-untyped-def]
        facts = self.facts.get(info.node)
        if facts is None:
            return
        escaped_lambdas: set[cst.Lambda] = set()
        for call in facts.calls:
            func = call.func
            res = self.ctx.resolve(func)
            if self.is_escape_hatch(func):
                for arg in call.args:
                    if isinstance(arg.value, cst.Lambda):
                        escaped_lambdas.add(arg.value)
                continue
            label = next((v for k, v in CONTROL_FLOW.items() if res.is_(k)), None)
            if (
                label is None
                and isinstance(func, cst.Attribute)
                and (func.attr.value in STRATEGY_RUN and _is_strategy(func.value))
            ):
                label = "strategy.run"
            if label is not None:
                for arg in call.args:
                    for fn, autograph in self.callables(arg.value, info.node):
                        add(
                            fn,
                            TraceKind.CONTROL_FLOW,
                            f"{label} callable in {info.display}",
                            info,
                            autograph and info.autograph,
                        )
                continue
            for fn, _ in self.callables(func, info.node):
                add(fn, TraceKind.CALLEE, f"called from {info.display}", info, info.autograph)
            name = dotted(func) or "a call"
            for arg in call.args:
                if isinstance(arg.value, cst.Lambda):
                    continue  # handled with the other lambdas below
                for fn, _ in self.callables(arg.value, info.node):
                    if isinstance(fn, cst.FunctionDef):
                        add(
                            fn,
                            TraceKind.CALLEE,
                            f"passed to {name}() in {info.display}",
                            info,
                            info.autograph,
                        )
        for lam in facts.lambdas:
            if lam not in escaped_lambdas:
                add(lam, TraceKind.CALLEE, f"lambda in {info.display}", info, info.autograph)


def _is_strategy(expr: cst.BaseExpression) -> bool:
    text = dotted(expr) or ""
    return "strategy" in text.lower()


def find_traced(ctx: ModuleContext) -> dict[FunctionNode, TracedFunction]:
    """Every traced function of the module, with the reason and chain."""
    return TraceFinder(ctx).find()
