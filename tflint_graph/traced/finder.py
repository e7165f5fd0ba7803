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

from tflint_graph.core.facts import Outgoing, may_be_project
from tflint_graph.model import walk
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import Resolution, canonical, dotted, keras_kinds_of
from tflint_graph.model.values import assigned_value
from tflint_graph.source.prefilter import DATASET_CALLBACK_METHODS, DATASET_EXPERIMENTAL

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
# The keyword arguments tf.data's callback methods accept.  A call with any other keyword
# (`dataset.map(fn, batched=True)` of Hugging Face `datasets`) is not tf.data.
_DATASET_KWARGS: dict[str, frozenset[str]] = {
    "map": frozenset(
        {
            "map_func",
            "num_parallel_calls",
            "deterministic",
            "synchronous",
            "use_unbounded_threadpool",
            "name",
        }
    ),
    "filter": frozenset({"predicate", "name"}),
    "flat_map": frozenset({"map_func", "name"}),
    "interleave": frozenset(
        {"map_func", "cycle_length", "block_length", "num_parallel_calls", "deterministic", "name"}
    ),
    "parallel_interleave": frozenset(
        {
            "map_func",
            "cycle_length",
            "block_length",
            "sloppy",
            "buffer_output_elements",
            "prefetch_input_elements",
        }
    ),
    "reduce": frozenset({"initial_state", "reduce_func", "name"}),
    "scan": frozenset({"initial_state", "scan_func", "name"}),
    "group_by_window": frozenset(
        {"key_func", "reduce_func", "window_size", "window_size_func", "name"}
    ),
    "group_by_reducer": frozenset({"key_func", "reducer"}),
    "bucket_by_sequence_length": frozenset(
        {
            "element_length_func",
            "bucket_boundaries",
            "bucket_batch_sizes",
            "padded_shapes",
            "padding_values",
            "pad_to_bucket_boundary",
            "no_padding",
            "drop_remainder",
            "name",
        }
    ),
    "rejection_resample": frozenset({"class_func", "target_dist", "initial_dist", "seed", "name"}),
    "take_while": frozenset({"predicate", "name"}),
    "map_with_legacy_function": frozenset({"map_func", "num_parallel_calls", "deterministic"}),
    "filter_with_legacy_function": frozenset({"predicate"}),
}
# Well-known libraries whose objects have an eager `.map`/`.filter` of their own: a value
# built by one of these is not a tf.data dataset, whatever its name.  (A call into the
# project's own modules stays unknown: `ds = build_dataset()` may well be tf.data.)
_NON_DATASET_LIBRARIES = (
    "builtins.",
    "collections.",
    "concurrent.",
    "dask.",
    "datasets.",
    "itertools.",
    "jax.",
    "multiprocessing.",
    "numpy.",
    "pandas.",
    "polars.",
    "pyspark.",
    "ray.",
    "sklearn.",
    "torch.",
    "torchdata.",
    "torchvision.",
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


class _Collector(walk.Visitor):
    def __init__(self) -> None:
        self.stack: list[FunctionNode | None] = [None]
        self.facts: dict[FunctionNode | None, _FunctionFacts] = {None: _FunctionFacts()}
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.calls: list[tuple[FunctionNode | None, cst.Call]] = []
        self.class_stack: list[cst.ClassDef] = []
        # `self.x = value` per class (in its methods, and functions nested in them), with the
        # function that assigns it.
        self.self_values: dict[
            cst.ClassDef, dict[str, list[tuple[cst.BaseExpression, FunctionNode | None]]]
        ] = {}

    def _here(self) -> _FunctionFacts:
        return self.facts[self.stack[-1]]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.functions.append(node)
        # Decorators, defaults and annotations belong to the enclosing scope.
        for dec in node.decorators:
            self.walk(dec)
        self.walk(node.params)
        if node.returns is not None:
            self.walk(node.returns)
        self.stack.append(node)
        self.facts[node] = _FunctionFacts()
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._here().lambdas.append(node)
        self.walk(node.params)
        self.stack.append(node)
        self.facts[node] = _FunctionFacts()
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)
        self.class_stack.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def _record_self(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if (
            value is not None
            and self.class_stack
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            values = self.self_values.setdefault(self.class_stack[-1], {})
            values.setdefault(target.attr.value, []).append((value, self.stack[-1]))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._record_self(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record_self(node.target, node.value)

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


class _RunEagerlyAssignment(walk.Visitor):
    """``model.run_eagerly = True`` (or ``run_eagerly = True`` in a class body)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            name = (
                target.attr.value
                if isinstance(target, cst.Attribute)
                else (target.value if isinstance(target, cst.Name) else "")
            )
            if name == "run_eagerly" and _is_true(node.value):
                self.found = True


def _is_false(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class _InnerNodes(walk.Visitor):
    """Calls and lambdas inside an expression (used to fence off escape-hatch arguments)."""

    def __init__(self) -> None:
        self.found: set[cst.CSTNode] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self.found.add(node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.found.add(node)


class TraceFinder:
    """Computes ``ctx.traced`` for one module."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.collector = _Collector()
        self.collector.walk(ctx.module)
        self.facts = self.collector.facts
        self.escaped: set[FunctionNode] = set()
        self._keras_kinds: dict[cst.ClassDef, frozenset[str]] = {}
        self._extra = tuple(ctx.config.extra_function_decorators)
        self._resolved: dict[cst.CSTNode, Resolution] = {}
        self._dataset_memo: dict[cst.CSTNode, bool | None] = {}
        # Traced calls into other modules of the run, for the project to follow.
        self.outgoing: list[Outgoing] = []

    # -- name helpers -----------------------------------------------------------------
    def resolve(self, expr: cst.BaseExpression, depth: int = 0) -> Resolution:
        """Like ``ctx.resolve``, but also through simple aliases of the module
        (``Model = tf.keras.Model``, ``fn = tf.function``, ``K = tf.keras``)."""
        cached = self._resolved.get(expr)
        if cached is not None:
            return cached
        res = self.ctx.resolve(expr)
        path = dotted(expr)
        if res.local and path is not None and depth < 4:
            tail = path.partition(".")[2]
            base = expr
            while isinstance(base, cst.Attribute):
                base = base.value
            assert isinstance(base, cst.Name)
            imported = set(res.imported)
            for a in self.ctx.bindings(base):
                if not isinstance(a.node, cst.Name):
                    continue
                value = self._assigned_value(a.node)
                if value is None or dotted(value) is None:
                    continue
                for name in self.resolve(value, depth + 1).imported:
                    imported.add(canonical(f"{name}.{tail}" if tail else name))
            res = Resolution(frozenset(imported), res.local)
        if depth == 0:
            self._resolved[expr] = res
        return res

    def is_tf_function(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``tf.function`` itself (any spelling) or a configured project wrapper."""
        res = self.resolve(expr)
        if res.is_(*TF_FUNCTION):
            return True
        if self._extra:
            text = dotted(expr)
            for entry in self._extra:
                if res.is_(entry) or text == entry or (text and entry.endswith("." + text)):
                    return True
        return False

    def tf_function_options(
        self, expr: cst.BaseExpression, depth: int = 0
    ) -> list[cst.Call] | None:
        """When ``expr`` applied to a function makes a ``tf.function``, the calls whose
        keywords configure it: ``tf.function`` -> [], ``tf.function(jit_compile=True)`` and
        ``functools.partial(tf.function, ...)`` -> [that call]; a module-level name bound to one
        of these (``xla = tf.function(jit_compile=True)``) too.  None otherwise."""
        if depth > _MAX_DEPTH:
            return None
        if self.is_tf_function(expr):
            return []
        if type(expr) is cst.Call:
            func = expr.func
            if self.resolve(func).is_(*PARTIAL):
                first = _arg(expr, 0, "func")
                inner = self.tf_function_options(first, depth + 1) if first is not None else None
                return None if inner is None else [expr, *inner]
            if _arg(expr, 0, "func") is None:  # a factory call with no function yet
                inner = self.tf_function_options(func, depth + 1)
                return None if inner is None else [expr, *inner]
            return None
        if type(expr) is cst.Name:
            for a in self.ctx.bindings(expr):
                if type(a.node) is cst.Name:
                    value = self._assigned_value(a.node)
                    if type(value) is cst.Call:
                        found = self.tf_function_options(value, depth + 1)
                        if found is not None:
                            return found
        return None

    def is_escape_hatch(self, expr: cst.BaseExpression) -> bool:
        return self.resolve(expr).is_(*ESCAPE_HATCHES)

    def _no_autograph_decorator(self, fn: FunctionNode) -> bool:
        """``@tf.autograph.experimental.do_not_convert`` on ``fn``."""
        if not isinstance(fn, cst.FunctionDef):
            return False
        for dec in fn.decorators:
            expr = dec.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if self.resolve(target).is_(*DO_NOT_CONVERT):
                return True
        return False

    # -- resolving callables ----------------------------------------------------------
    def callables(
        self, expr: cst.BaseExpression | None, at: FunctionNode | None, depth: int = 0
    ) -> Iterator[tuple[FunctionNode, bool]]:
        """Functions of this module that ``expr`` evaluates to, with an autograph flag."""
        if expr is None or depth > _MAX_DEPTH:
            return
        if type(expr) is cst.Lambda:
            yield expr, True
        elif type(expr) is cst.Name:
            for a in self.ctx.bindings(expr):
                node = a.node
                if type(node) is cst.FunctionDef:
                    yield node, True
                elif type(node) is cst.Name:
                    value = self._assigned_value(node)
                    if value is not None:
                        yield from self.callables(value, at, depth + 1)
        elif type(expr) is cst.Attribute:
            methods = self._methods_of(expr, at)
            if methods:
                yield from ((m, True) for m in methods)
            else:
                for value, owner in self._attribute_values(expr, at):
                    yield from self.callables(value, owner, depth + 1)
        elif type(expr) is cst.Call:
            func = expr.func
            res = self.resolve(func)
            if res.is_(*PARTIAL):
                yield from self.callables(_arg(expr, 0, "func"), at, depth + 1)
            elif self.tf_function_options(func) is not None:
                # tf.function(fn), tf.function(jit_compile=True)(fn), xla(fn)
                yield from self.callables(_arg(expr, 0, "func"), at, depth + 1)
            elif res.is_(*DO_NOT_CONVERT):
                for fn, _ in self.callables(_arg(expr, 0, "func"), at, depth + 1):
                    yield fn, False
            elif not self.is_escape_hatch(func):
                # A factory defined here: `ds.map(make_augment(cfg))` maps what it returns.
                for factory, _ in self.callables(func, at, depth + 1):
                    if type(factory) is cst.FunctionDef:
                        for ret in self.facts[factory].returns:
                            yield from self.callables(ret, factory, depth + 1)
        elif isinstance(expr, cst.IfExp):
            # `loss=FocalLoss() if focal else weighted_bce`: either branch may be used.
            yield from self.callables(expr.body, at, depth + 1)
            yield from self.callables(expr.orelse, at, depth + 1)
        elif isinstance(expr, cst.BooleanOperation):
            # `fn or default_fn`
            yield from self.callables(expr.left, at, depth + 1)
            yield from self.callables(expr.right, at, depth + 1)
        elif isinstance(expr, cst.List | cst.Tuple | cst.Set):
            for el in expr.elements:
                yield from self.callables(el.value, at, depth + 1)
        elif isinstance(expr, cst.Dict):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    yield from self.callables(el.value, at, depth + 1)

    def foreign(self, expr: cst.BaseExpression | None, depth: int = 0) -> list[str]:
        """Absolute names of functions in other modules of the project that ``expr``
        denotes (``helpers.normalize``, ``partial(normalize, k=1)``), when it denotes no
        function of this module."""
        if expr is None or depth > _MAX_DEPTH:
            return []
        if isinstance(expr, cst.Call):
            if (
                self.resolve(expr.func).is_(*PARTIAL)
                or self.tf_function_options(expr.func) is not None
            ):
                return self.foreign(_arg(expr, 0, "func"), depth + 1)
            return []
        if isinstance(expr, cst.IfExp):
            return self.foreign(expr.body, depth + 1) + self.foreign(expr.orelse, depth + 1)
        if not isinstance(expr, cst.Name | cst.Attribute):
            return []
        res = self.resolve(expr)
        names = sorted(
            {self.ctx.view.absolute(n) for n in res.imported if n.startswith(".") or "." in n}
        )
        return [n for n in names if may_be_project(n)]

    def _send(
        self,
        expr: cst.BaseExpression | None,
        kind: TraceKind,
        reason: str,
        parent: TracedFunction | None,
        autograph: bool = True,
    ) -> None:
        chain = parent.chain if parent is not None else ()
        if parent is None:
            reason = f"{reason} in {self.ctx.path}"
        for target in self.foreign(expr):
            self.outgoing.append(Outgoing(target, kind, reason, chain, autograph))

    def _assigned_value(self, target: cst.Name) -> cst.BaseExpression | None:
        """``value`` for a simple ``target = value`` assignment."""
        return assigned_value(self.ctx, target, with_items=False)

    def _class_of_expr(
        self, expr: cst.BaseExpression, at: FunctionNode | None
    ) -> cst.ClassDef | None:
        """The module class an expression denotes or is an instance of."""
        if type(expr) is cst.Name:
            if expr.value in ("self", "cls") and type(at) is cst.FunctionDef:
                outer = self.ctx.enclosing_class(at)
                if outer is not None:
                    return outer
            for a in self.ctx.bindings(expr):
                if type(a.node) is cst.ClassDef:
                    return a.node
                if type(a.node) is cst.Name:
                    value = self._assigned_value(a.node)
                    if type(value) is cst.Call and type(value.func) is cst.Name:
                        for b in self.ctx.bindings(value.func):
                            if type(b.node) is cst.ClassDef:
                                return b.node
        return None

    def _super_class(self, expr: cst.BaseExpression, at: FunctionNode | None) -> bool:
        """``super()`` inside a method."""
        return (
            type(expr) is cst.Call
            and type(expr.func) is cst.Name
            and expr.func.value == "super"
            and self.ctx.resolve(expr.func).is_builtin("super")
            and type(at) is cst.FunctionDef
        )

    def _methods_of(self, expr: cst.Attribute, at: FunctionNode | None) -> list[cst.FunctionDef]:
        name = expr.attr.value
        if self._super_class(expr.value, at):
            assert isinstance(at, cst.FunctionDef)
            cls = self.ctx.enclosing_class(at)
            if cls is None:
                return []
            for base in self._module_bases(cls):
                method = self.find_method(base, name, frozenset({cls}))
                if method is not None:
                    return [method]
            return []
        cls = self._class_of_expr(expr.value, at)
        if cls is None:
            return []
        method = self.find_method(cls, name)
        return [method] if method is not None else []

    def _attribute_values(
        self, expr: cst.Attribute, at: FunctionNode | None
    ) -> list[tuple[cst.BaseExpression, FunctionNode | None]]:
        """What ``self.fn = ...`` assignments in the object's class (or its module bases) put
        in the attribute ``expr`` reads, with the method that assigns it."""
        cls = self._class_of_expr(expr.value, at)
        found: list[tuple[cst.BaseExpression, FunctionNode | None]] = []
        seen: set[cst.ClassDef] = set()
        todo = [cls] if cls is not None else []
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            found += self.collector.self_values.get(current, {}).get(expr.attr.value, [])
            todo += self._module_bases(current)
        return found

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
            res = self.resolve(arg.value)
            kinds |= keras_kinds_of(res.imported)
            # A base class defined in another module of the run.
            view = self.ctx.view
            for name in res.imported if view.keras_classes else ():
                kinds |= view.keras_classes.get(view.absolute(name), frozenset())
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
            if _is_true(_kwarg(call, "dynamic")):
                return True
        return False

    # -- tf.data ----------------------------------------------------------------------
    def is_dataset(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is plausibly a ``tf.data.Dataset`` and nothing says otherwise."""
        return self._dataset_evidence(expr, 0) is True

    def _dataset_evidence(self, expr: cst.BaseExpression, depth: int) -> bool | None:
        """True: a tf.data dataset (by construction, annotation or a dataset-like name);
        False: something else (another library's object, a literal); None: unknown."""
        if depth > _MAX_DEPTH:
            return None
        if expr in self._dataset_memo:
            return self._dataset_memo[expr]  # also cuts cycles (`ds = ds.map(f)`)
        self._dataset_memo[expr] = None
        verdict = self._dataset_evidence_of(expr, depth)
        self._dataset_memo[expr] = verdict
        return verdict

    def _dataset_evidence_of(self, expr: cst.BaseExpression, depth: int) -> bool | None:
        if isinstance(expr, cst.Call):
            func = expr.func
            res = self.resolve(func)
            if res.startswith(*DATASET_FACTORIES):
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS:
                if self._foreign_kwargs(expr, func.attr.value):
                    return False
                # Method chains are finite syntax: no depth needed.
                return self._dataset_evidence(func.value, depth)
            if res.startswith(*_NON_DATASET_LIBRARIES):
                return False
            # `make_dataset().map(f)`: a function of this module that returns a dataset.
            if depth < _MAX_DEPTH and not res.imported:
                for fn, _ in self.callables(func, None, depth + 1):
                    returns = self.facts.get(fn, _FunctionFacts()).returns
                    if any(self._dataset_evidence(r, depth + 1) for r in returns):
                        return True
            return None
        if isinstance(expr, cst.Name):
            verdicts: set[bool | None] = set()
            for a in self.ctx.bindings(expr):
                node = a.node
                if isinstance(node, cst.Name):
                    value = self._assigned_value(node)
                    if value is not None:
                        verdicts.add(self._dataset_evidence(value, depth + 1))
                elif isinstance(node, cst.Param):
                    if node.annotation is not None:
                        ann = self.resolve(node.annotation.annotation)
                        if ann.startswith("tensorflow.data."):
                            verdicts.add(True)
                        elif ann.startswith(*_NON_DATASET_LIBRARIES):
                            verdicts.add(False)
                elif isinstance(node, cst.FunctionDef | cst.ClassDef):
                    verdicts.add(False)
            if True in verdicts:
                return True
            if False in verdicts:
                return False
            return True if _DATASET_NAME.search(expr.value) else None
        if isinstance(expr, cst.Attribute):
            res = self.resolve(expr)
            if res.startswith("tensorflow.data."):
                return True
            if res.startswith(*_NON_DATASET_LIBRARIES):
                return False
            return True if _DATASET_NAME.search(expr.attr.value) else None
        if isinstance(
            expr,
            cst.List
            | cst.Tuple
            | cst.Dict
            | cst.Set
            | cst.ListComp
            | cst.DictComp
            | cst.SetComp
            | cst.GeneratorExp
            | cst.BaseNumber
            | cst.BaseString,
        ):
            return False
        return None

    @staticmethod
    def _foreign_kwargs(call: cst.Call, method: str) -> bool:
        """A keyword that tf.data's ``method`` does not accept (``batched=True``)."""
        allowed = _DATASET_KWARGS.get(method)
        if allowed is None:
            return False
        return any(a.keyword is not None and a.keyword.value not in allowed for a in call.args)

    def _dataset_callback_call(self, call: cst.Call) -> str | None:
        """``Dataset.map`` etc. when the receiver is plausibly a ``tf.data.Dataset``."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method not in DATASET_CALLBACK_METHODS or self._foreign_kwargs(call, method):
            return None
        evidence = self._dataset_evidence(func.value, 0)
        if evidence is False:
            return None
        has_dataset_kwarg = any(
            a.keyword is not None and a.keyword.value in _DATASET_ONLY_KWARGS for a in call.args
        )
        return method if evidence is True or has_dataset_kwarg else None

    def _dataset_experimental(self, call: cst.Call) -> str | None:
        """``tf.data.experimental.map_and_batch(fn, ...)`` and friends."""
        for name in self.resolve(call.func).imported:
            if name.startswith("tensorflow.data.experimental.") and (
                _last(name) in DATASET_EXPERIMENTAL
            ):
                return _last(name)
        return None

    # -- distribution -----------------------------------------------------------------
    def _is_strategy_factory(self, expr: cst.BaseExpression) -> bool:
        return any(
            name.startswith("tensorflow.distribute.")
            and (_last(name).endswith("Strategy") or _last(name) == "get_strategy")
            for name in self.resolve(expr).imported
        )

    def is_strategy(self, expr: cst.BaseExpression) -> bool:
        """A ``tf.distribute`` strategy: by name, construction or annotation."""
        text = dotted(expr) or ""
        if "strategy" in text.lower():
            return True
        if isinstance(expr, cst.Call):
            return self._is_strategy_factory(expr.func)
        if isinstance(expr, cst.Name):
            for a in self.ctx.bindings(expr):
                if isinstance(a.node, cst.Name):
                    value = self._assigned_value(a.node)
                    if isinstance(value, cst.Call) and self._is_strategy_factory(value.func):
                        return True
                elif (
                    isinstance(a.node, cst.Param)
                    and a.node.annotation is not None
                    and self._is_strategy_factory(a.node.annotation.annotation)
                ):
                    return True
        return False

    # -- discovery --------------------------------------------------------------------
    def _decorator_root(self, fn: cst.FunctionDef) -> tuple[str, bool, cst.BaseExpression | None]:
        """(reason, autograph, input_signature) when a decorator makes ``fn`` traced."""
        autograph = True
        traced: tuple[str, cst.BaseExpression | None] | None = None
        for dec in fn.decorators:
            expr = dec.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if self.resolve(target).is_(*DO_NOT_CONVERT):
                autograph = False
                continue
            if self.is_escape_hatch(target):
                self.escaped.add(fn)
                return ("", False, None)
            options = self.tf_function_options(expr)
            if options is None:
                continue
            if isinstance(expr, cst.Call) and self.resolve(target).is_(*PARTIAL):
                target = _arg(expr, 0, "func") or target
            label = dotted(target) or "tf.function"
            if any(_is_false(_kwarg(c, "autograph")) for c in options):
                autograph = False
            signature = next(
                (s for c in options if (s := _kwarg(c, "input_signature")) is not None), None
            )
            traced = (f"decorated with @{label}", signature)
        if traced is None:
            return ("", True, None)
        return (traced[0], autograph, traced[1])

    def _sets_run_eagerly(self) -> bool:
        if "run_eagerly" not in self.ctx.source:  # cheap exit for almost every module
            return False
        for _, call in self.collector.calls:
            if _is_true(_kwarg(call, "run_eagerly")):
                return True
        finder = _RunEagerlyAssignment()
        finder.walk(self.ctx.module)
        return finder.found

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
            autograph = autograph and not self._no_autograph_decorator(fn)
            info = TracedFunction(fn, display, kind, reason, chain, autograph, signature, parent)
            traced[fn] = info
            order.append(info)

        roots: list[tuple[int, FunctionNode, TraceKind, str, bool, object]] = []

        def root(
            fn: FunctionNode,
            kind: TraceKind,
            reason: str,
            autograph: bool = True,
            signature: cst.BaseExpression | None = None,
        ) -> None:
            roots.append((ctx.source_order(fn), fn, kind, reason, autograph, signature))

        for fn in self.collector.functions:
            reason, autograph, signature = self._decorator_root(fn)
            if reason:
                root(fn, TraceKind.DECORATED, reason, autograph, signature)

        # A real `compile(run_eagerly=True)` or `model.run_eagerly = True` in the module: its
        # models' steps (and the losses given to compile) may run eagerly, so do not guess.
        # Layers, Loss and Metric classes stay traced: they are used by other models too.
        keras_eager = self._sets_run_eagerly()
        for cls in self.collector.classes:
            kinds = self.keras_kinds(cls)
            if not kinds or self._dynamic_layer(cls) or ("model" in kinds and keras_eager):
                continue
            wanted: list[str] = []
            for kind in ("model", "layer", "loss", "metric"):
                if kind in kinds:
                    wanted += [m for m in KERAS_METHODS[kind] if m not in wanted]
            if "model" in kinds:
                base = "Model"
            elif "loss" in kinds:
                base = "Loss"
            elif "metric" in kinds:
                base = "Metric"
            else:
                base = "Layer"
            for stmt in cls.body.body:
                if isinstance(stmt, cst.FunctionDef) and stmt.name.value in wanted:
                    name = stmt.name.value
                    root(stmt, TraceKind.KERAS, KERAS_LABELS.get(name, f"Keras {base}.{name}"))

        for at, call in self.collector.calls:
            res = self.resolve(call.func)
            options = self.tf_function_options(call.func)
            if options is not None:
                options = [call, *options]
                for fn, autograph in self.callables(_arg(call, 0, "func"), at):
                    autograph = autograph and not any(
                        _is_false(_kwarg(c, "autograph")) for c in options
                    )
                    signature = next(
                        (s for c in options if (s := _kwarg(c, "input_signature")) is not None),
                        None,
                    )
                    root(fn, TraceKind.WRAPPED, "wrapped by tf.function()", autograph, signature)
                self._send(
                    _arg(call, 0, "func"), TraceKind.WRAPPED, "wrapped by tf.function()", None
                )
            elif res.is_(*ALWAYS_TRACING):
                label = next(v for k, v in ALWAYS_TRACING.items() if res.is_(k))
                for fn, autograph in self.callables(_arg(call, 0, "fn", "function"), at):
                    root(fn, TraceKind.CONTROL_FLOW, label, autograph)
                self._send(_arg(call, 0, "fn", "function"), TraceKind.CONTROL_FLOW, label, None)
            elif (method := self._dataset_callback_call(call)) is not None:
                for arg in call.args:
                    for fn, autograph in self.callables(arg.value, at):
                        root(fn, TraceKind.DATASET, f"Dataset.{method} callback", autograph)
                    self._send(arg.value, TraceKind.DATASET, f"Dataset.{method} callback", None)
            elif (name := self._dataset_experimental(call)) is not None:
                for arg in call.args:
                    for fn, autograph in self.callables(arg.value, at):
                        label = f"tf.data.experimental.{name} callback"
                        root(fn, TraceKind.DATASET, label, autograph)
                    self._send(
                        arg.value, TraceKind.DATASET, f"tf.data.experimental.{name} callback", None
                    )
            elif (
                isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "compile"
                and not keras_eager
            ):
                for key in ("loss", "metrics", "weighted_metrics"):
                    for fn, autograph in self.callables(_kwarg(call, key), at):
                        root(fn, TraceKind.KERAS, f"Keras {key} passed to compile()", autograph)
                    value = _kwarg(call, key)
                    label = f"Keras {key} passed to compile()"
                    for item in _elements(value):
                        self._send(item, TraceKind.KERAS, label, None)

        roots.sort(key=lambda r: r[0])
        for _, fn, kind, reason, autograph, signature in roots:
            add(fn, kind, reason, autograph=autograph, signature=signature)  # type: ignore[arg-type]

        # Roots handed over by other modules of the run: `helpers.normalize` called from a
        # traced step in train.py.  A function already traced here keeps its own reason and
        # only learns about the outside caller (TFG401 wants to know).
        for ext in self.ctx.view.roots:
            for fn, autograph in self._defined(ext.qualname):
                if fn in traced:
                    if ext.chain:
                        traced[fn].callers_elsewhere.append(ext.chain[-1])
                    continue
                if fn in self.escaped:
                    continue
                display = _display(ctx, fn)
                info = TracedFunction(
                    fn,
                    display,
                    ext.kind,
                    ext.reason,
                    (*ext.chain, display),
                    ext.autograph and autograph and not self._no_autograph_decorator(fn),
                )
                traced[fn] = info
                order.append(info)

        # Breadth-first over what traced code reaches, so chains are shortest.
        while order:
            info = order.popleft()
            self._follow(info, add)
        return traced

    def _inherited(self, func: cst.BaseExpression, at: FunctionNode) -> list[str]:
        """``self.embed(...)`` where ``embed`` comes from a base class defined in another
        module of the run: ``pkg.base.EncoderBase.embed``."""
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
            and isinstance(at, cst.FunctionDef)
        ):
            return []
        cls = self.ctx.enclosing_class(at)
        found: list[str] = []
        todo = [cls] if cls is not None else []
        seen: set[cst.ClassDef] = set()
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo += self._module_bases(current)
            for arg in current.bases:
                if arg.keyword is None:
                    for name in self.foreign(arg.value):
                        found.append(f"{name}.{func.attr.value}")
        return sorted(set(found))

    def _from(self, info: TracedFunction) -> str:
        return f"called from {info.display} in {self.ctx.path}"

    def _defined(self, qualname: str) -> list[tuple[FunctionNode, bool]]:
        """The functions a module-level name (``normalize``, ``Trainer.step``) denotes."""
        head, _, rest = qualname.partition(".")
        found: list[tuple[FunctionNode, bool]] = []
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == head and not rest:
                found.append((stmt, True))
            elif isinstance(stmt, cst.ClassDef) and stmt.name.value == head and rest:
                method = self.find_method(stmt, rest)
                if method is not None:
                    found.append((method, True))
            elif isinstance(stmt, cst.SimpleStatementLine) and not rest:
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == head
                        for t in small.targets
                    ):
                        found += self.callables(small.value, None)
        return found

    def _follow(self, info: TracedFunction, add) -> None:  # type: ignore[no-untyped-def]
        facts = self.facts.get(info.node)
        if facts is None:
            return
        # Everything inside the arguments of tf.py_function & co. runs eagerly: calls there
        # (`functools.partial(fn, k)`) and lambdas there are not traced.
        fenced: set[cst.CSTNode] = set()
        for call in facts.calls:
            if self.is_escape_hatch(call.func):
                inner = _InnerNodes()
                for arg in call.args:
                    inner.walk(arg.value)
                fenced |= inner.found
        for call in facts.calls:
            if call in fenced:
                continue
            func = call.func
            if self.is_escape_hatch(func):
                continue
            res = self.resolve(func)
            label = None
            if not res.imported.isdisjoint(CONTROL_FLOW):  # rare: spare most calls the scan
                label = next((v for k, v in CONTROL_FLOW.items() if res.is_(k)), None)
            if (
                label is None
                and isinstance(func, cst.Attribute)
                and func.attr.value in STRATEGY_RUN
                and self.is_strategy(func.value)
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
                    self._send(
                        arg.value,
                        TraceKind.CONTROL_FLOW,
                        f"{label} callable in {info.display} ({self.ctx.path})",
                        info,
                        info.autograph,
                    )
                continue
            local = False
            for fn, _ in self.callables(func, info.node):
                local = True
                add(fn, TraceKind.CALLEE, f"called from {info.display}", info, info.autograph)
            if not local:
                self._send(func, TraceKind.CALLEE, self._from(info), info, info.autograph)
                for target in self._inherited(func, info.node):
                    self.outgoing.append(
                        Outgoing(
                            target, TraceKind.CALLEE, self._from(info), info.chain, info.autograph
                        )
                    )
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
            if lam not in fenced:
                add(lam, TraceKind.CALLEE, f"lambda in {info.display}", info, info.autograph)


def _elements(expr: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The items of a list/tuple/dict literal (``metrics=[a, b]``), or ``expr`` itself."""
    if isinstance(expr, cst.List | cst.Tuple | cst.Set):
        return [el.value for el in expr.elements]
    if isinstance(expr, cst.Dict):
        return [el.value for el in expr.elements if isinstance(el, cst.DictElement)]
    return [expr] if expr is not None else []


def find_traced(ctx: ModuleContext) -> dict[FunctionNode, TracedFunction]:
    """Every traced function of the module, with the reason and chain."""
    finder = TraceFinder(ctx)
    ctx.trace_finder = finder  # rules reuse its dataset and callable resolution
    return finder.find()
