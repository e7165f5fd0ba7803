"""Where traced code starts (SPEC §1): one small function per traced-code kind.

A kind that looks at the whole module (decorated functions, Keras methods) is a row of
``MODULE_KINDS``; a kind recognised at a call (``tf.function(fn)``, ``ds.map(fn)``,
``compile(loss=fn)``...) is a row of ``CALL_KINDS``, tried in order until one claims the
call.  To add a kind: write its function here, add its row, put its TensorFlow names in
``core/vocabulary.py`` (CONTRIBUTING.md has a worked example).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from tflint_graph.core.facts import TraceKind
from tflint_graph.core.vocabulary import (
    ALWAYS_TRACING,
    CALLBACK_ENTRIES,
    DO_NOT_CONVERT,
    EAGER_SWITCHES,
    KERAS_LABELS,
    KERAS_METHODS,
    KERAS_STEPS,
    PARTIAL,
    PY_METRIC_MARK,
    TRACING_ENTRIES,
)
from tflint_graph.model import walk
from tflint_graph.model.calls import argument, is_false, is_true, keyword
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.names import dotted, last_name
from tflint_graph.model.values import is_main_guard, mentions
from tflint_graph.traced.outgoing import OutgoingCalls


@dataclass(frozen=True, slots=True)
class Root:
    """A function TensorFlow traces for a reason of its own (not because traced code calls it)."""

    fn: FunctionNode
    kind: TraceKind
    reason: str
    autograph: bool = True
    signature: cst.BaseExpression | None = None  # its input_signature, when given
    unconverted: str = ""  # why AutoGraph leaves it alone, when Keras decides that
    # AutoGraph features its tf.function turns on (`experimental_autograph_options`).
    features: frozenset[str] = frozenset()


class Search:
    """What the kinds read, and where they put what they find."""

    def __init__(
        self, ctx: ModuleContext, definitions: Definitions, outgoing: OutgoingCalls
    ) -> None:
        self.ctx = ctx
        self.definitions = definitions
        self.outgoing = outgoing
        self.found: list[tuple[int, Root]] = []
        # Functions whose decorator hands them to tf.py_function & co.: never traced.
        self.escaped: set[FunctionNode] = set()
        # A real `compile(run_eagerly=True)` or `model.run_eagerly = True` in the module: its
        # models' steps (and the losses given to compile) may run eagerly, so do not guess.
        # Layers, Loss and Metric classes stay traced: they are used by other models too.
        self.keras_eager = _sets_run_eagerly(ctx, definitions)
        # A notebook or script no other module can import, that never hands Keras anything
        # to trace: its models and layers are only ever called eagerly (Keras 3 runs `call`
        # as Python on eager tensors), so nothing of theirs is traced.
        self.keras_untraced = _keras_never_traced(ctx, definitions)
        # Spans of functions after an unconditional `tf.config.run_functions_eagerly(True)`.
        self.switched_eager = _switched_eager(ctx, definitions)

    def root(
        self,
        fn: FunctionNode,
        kind: TraceKind,
        reason: str,
        autograph: bool = True,
        signature: cst.BaseExpression | None = None,
        unconverted: str = "",
        features: frozenset[str] = frozenset(),
    ) -> None:
        if kind is not TraceKind.DATASET and self._defined_eager(fn):
            return  # tf.data traces its callbacks whatever the switch says
        root = Root(
            fn, kind, reason, autograph and not unconverted, signature, unconverted, features
        )
        self.found.append((self.ctx.source_order(fn), root))

    def _defined_eager(self, fn: FunctionNode) -> bool:
        """``fn`` is defined in a function after that function switched every
        ``tf.function`` to eager and before it switched them back: it runs as Python."""
        if not self.switched_eager:
            return False
        line = self.ctx.line(fn)
        around = {id(a) for a in self.ctx.ancestors(fn)}
        return any(
            id(holder) in around and start < line < end
            for holder, start, end in self.switched_eager
        )


def _switched_eager(
    ctx: ModuleContext, definitions: Definitions
) -> list[tuple[FunctionNode, int, int]]:
    """(function, first line, last line) of each stretch of a function's body that follows
    a statement ``tf.config.run_functions_eagerly(True)`` at its top level (not under an
    ``if``), up to a statement switching it off: every ``tf.function`` the function defines
    there runs eagerly (a loss factory that needs ``.numpy()`` and says so by switching).
    Module code that switches is TFG402's finding, and its functions keep theirs: the advice
    there is to remove the switch."""
    if not any(ctx.spells(s.rpartition(".")[2]) for s in EAGER_SWITCHES):
        return []
    if ctx.spells("get_concrete_function") or any(
        definitions.resolve(call.func).is_(*EAGER_SWITCHES) and _switch_value_of(call) is not True
        for _, call in definitions.facts.calls
    ):
        # Switched back, or traced whatever the switch says: the switch is read at each call,
        # and a function made while it was on may run once it is off.
        return []
    found: list[tuple[FunctionNode, int, int]] = []
    bodies = [
        (fn, fn.body.body)
        for fn in definitions.facts.functions
        if isinstance(fn.body, cst.IndentedBlock)
    ]
    for holder, body in bodies:
        start: int | None = None
        for stmt in body:
            value = _switch_value(definitions, stmt)
            if value is True and start is None:
                start = ctx.line(stmt)
            elif value is False and start is not None:
                found.append((holder, start, ctx.line(stmt)))
                start = None
        if start is not None:
            found.append((holder, start, ctx.end_line(holder) + 1))
    return found


def _switch_value(definitions: Definitions, stmt: cst.CSTNode) -> bool | None:
    """True/False when ``stmt`` is ``tf.config.run_functions_eagerly(<literal>)``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    expr = stmt.body[0]
    call = expr.value if isinstance(expr, cst.Expr) else None
    if not isinstance(call, cst.Call) or not definitions.resolve(call.func).is_(*EAGER_SWITCHES):
        return None
    return _switch_value_of(call)


def _switch_value_of(call: cst.Call) -> bool | None:
    value = argument(call, 0, "run_eagerly", strict=True)
    if is_true(value):
        return True
    return False if is_false(value) else None


def find_roots(search: Search) -> list[Root]:
    """Every root of the module, in source order (a function found twice keeps the first)."""
    for kind in MODULE_KINDS:
        kind(search)
    for at, call in search.definitions.facts.calls:
        for call_kind in CALL_KINDS:
            if call_kind(search, at, call):
                break
    search.found.sort(key=lambda found: found[0])
    return [root for _, root in search.found]


# -- kinds found over the module --------------------------------------------------------
def decorated(search: Search) -> None:
    """``@tf.function`` in any spelling, with options, or a configured project wrapper."""
    for fn in search.definitions.facts.functions:
        reason, autograph, signature, features = decorator_root(search, fn)
        if reason:
            search.root(fn, TraceKind.DECORATED, reason, autograph, signature, features=features)


def keras_methods(search: Search) -> None:
    """The methods Keras traces of a model, layer, loss or metric class."""
    definitions = search.definitions
    for cls in definitions.facts.classes:
        kinds = definitions.keras_kinds(cls)
        if not kinds or definitions.dynamic_layer(cls) or ("model" in kinds and search.keras_eager):
            continue
        if search.keras_untraced or cls.name.value in search.ctx.view.eager_classes:
            continue
        if not _importable(search.ctx) and not mentions(search.ctx, cls):
            continue  # a notebook's class nothing constructs (an exercise's skeleton)
        if not _importable(search.ctx) and _driven_eagerly(search.ctx, definitions, cls):
            continue  # a notebook's model only ever called (or stepped) by its own eager code
        wanted: list[str] = []
        for kind in ("model", "layer", "loss", "metric"):
            if kind in kinds:
                wanted += [m for m in KERAS_METHODS[kind] if m not in wanted]
        if kinds <= {"layer"} and _call_bypassed(definitions, cls):
            wanted.remove("call")  # only what calls the object runs it: a callee if traced
        if "model" in kinds:
            base = "Model"
        elif "loss" in kinds:
            base = "Loss"
        elif "metric" in kinds:
            base = "Metric"
        else:
            base = "Layer"
        rebound = _rebound_on_instances(cls) | _rebound_on_the_class(search.ctx.module, cls)
        if PY_METRIC_MARK in kinds:
            rebound |= {"update_state", "result"}  # the base's `__new__` wraps them
        version = definitions.keras_version(cls)
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value in wanted:
                name = stmt.name.value
                if name in rebound:
                    continue  # the instance runs what `__init__`/`__new__` put there instead
                if _declared_eager(search.ctx, stmt):
                    continue  # it says it must run eagerly (`run_eagerly=True`), first thing
                label = KERAS_LABELS.get(name, f"Keras {base}.{name}")
                method = name if name in KERAS_STEPS else f"{base}.{name}"
                search.root(stmt, TraceKind.KERAS, label, unconverted=_unconverted(version, method))


def _declared_eager(ctx: ModuleContext, method: cst.FunctionDef) -> bool:
    """The method's first statement (after its docstring) is ``if not tf.executing_eagerly():``
    (or ``if tf.inside_function():``) over a block that raises or warns: its author says it
    runs eagerly only (a metric computed with NumPy, ``model.run_eagerly = True``), and what
    follows is not traced code by contract."""
    body = method.body.body if isinstance(method.body, cst.IndentedBlock) else []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Expr)
            and isinstance(s.value, cst.SimpleString | cst.ConcatenatedString)
            for s in stmt.body
        ):
            continue  # the docstring
        if not isinstance(stmt, cst.If):
            return False
        test = stmt.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        inner = test.expression if negated else test  # type: ignore[attr-defined]
        if not isinstance(inner, cst.Call):
            return False
        res = ctx.resolve(inner.func)
        tracing = (negated and res.is_("tensorflow.executing_eagerly")) or (
            not negated and res.is_("tensorflow.inside_function")
        )
        return tracing and any(
            isinstance(node, cst.Raise)
            or (
                isinstance(node, cst.Call)
                and (
                    ctx.resolve(node.func).is_("warnings.warn")
                    or last_name(node.func) in ("warning", "warn", "error")
                )
            )
            for node in walk.descendants(stmt.body)
        )
    return False


def _call_bypassed(definitions: Definitions, cls: cst.ClassDef) -> bool:
    """The layer's own ``__call__`` (or a module base's) never runs ``Layer.__call__``: Keras
    never traces ``call`` for it (an image processor called on file names and arrays), and
    traced code that calls the object reaches ``call`` through that ``__call__``."""
    method = definitions.find_method(cls, "__call__")
    return method is not None and not any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "__call__"
        for node in walk.descendants(method.body)
    )


def _rebound_on_instances(cls: cst.ClassDef) -> set[str]:
    """Method names the class's ``__new__``/``__init__`` rebind on the instance
    (``obj.update_state = types.MethodType(wrapper, obj)``, often a ``tf.py_function``
    wrapper): Keras calls the instance's attribute, not the class's method."""
    found: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in ("__new__", "__init__"):
            found |= _attributes_assigned(stmt.body.body)
    return found


def _rebound_on_the_class(module: cst.Module, cls: cst.ClassDef) -> set[str]:
    """Method names a module-level ``Cls.call = tf.autograph.to_graph(Cls.call)`` (or any
    other value) replaces: Keras calls what is there, not the ``def``."""
    return _attributes_assigned(module.body, cls.name.value)


def _attributes_assigned(
    lines: Sequence[cst.BaseStatement | cst.BaseSmallStatement], owner: str | None = None
) -> set[str]:
    """``attr`` of every ``<name>.attr = ...`` among ``lines`` (``<name>`` is ``owner``
    when given)."""
    found: set[str] = set()
    for line in lines:
        for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            for t in small.targets if isinstance(small, cst.Assign) else ():
                target = t.target
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and owner in (None, target.value.value)
                ):
                    found.add(target.attr.value)
    return found


# -- kinds found at a call: each says whether the call was its kind ---------------------
def wrapped(search: Search, at: FunctionNode | None, call: cst.Call) -> bool:
    """``tf.function(fn)``, ``tf.function(jit_compile=True)(fn)``, ``partial(tf.function)``."""
    options = search.definitions.tf_function_options(call.func)
    if options is None:
        return False
    options = [call, *options]
    target = argument(call, 0, "func")
    for fn, autograph in search.definitions.callables(target, at):
        autograph = autograph and not any(is_false(keyword(c, "autograph")) for c in options)
        signature = next(
            (s for c in options if (s := keyword(c, "input_signature")) is not None), None
        )
        search.root(
            fn,
            TraceKind.WRAPPED,
            "wrapped by tf.function()",
            autograph,
            signature,
            features=autograph_features(search, options),
        )
    search.outgoing.send(target, TraceKind.WRAPPED, "wrapped by tf.function()", None)
    return True


def always_tracing(search: Search, at: FunctionNode | None, call: cst.Call) -> bool:
    """Callables traced even when called eagerly: ``tf.vectorized_map``, a Keras ``Lambda``."""
    res = search.definitions.resolve(call.func)
    if not res.is_(*ALWAYS_TRACING):
        return False
    label = next(v for k, v in ALWAYS_TRACING.items() if res.is_(k))
    target = argument(call, 0, "fn", "function")
    # Neither Keras converts a Lambda layer's function (verified: TF 2.21, Keras 3.15 and
    # tf_keras 2.21).
    why = _LAMBDA_UNCONVERTED if label.startswith("Keras") else ""
    for fn, autograph in search.definitions.callables(target, at):
        search.root(fn, TraceKind.CONTROL_FLOW, label, autograph, unconverted=why)
    search.outgoing.send(target, TraceKind.CONTROL_FLOW, label, None)
    return True


def dataset_callbacks(search: Search, at: FunctionNode | None, call: cst.Call) -> bool:
    """``ds.map(fn)``, ``ds.filter(fn)``... on what is plausibly a ``tf.data.Dataset``."""
    method = search.definitions.dataset_callback(call)
    if method is None:
        return False
    _every_argument(search, at, call, f"Dataset.{method} callback")
    return True


def dataset_experimental(search: Search, at: FunctionNode | None, call: cst.Call) -> bool:
    """``tf.data.experimental.map_and_batch(fn, ...)`` and friends."""
    name = search.definitions.dataset_experimental(call)
    if name is None:
        return False
    _every_argument(search, at, call, f"tf.data.experimental.{name} callback")
    return True


def compile_arguments(search: Search, at: FunctionNode | None, call: cst.Call) -> bool:
    """Losses and metrics passed to Keras ``compile()`` (unless the module runs eagerly)."""
    if not (
        isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "compile"
        and not search.keras_eager
    ):
        return False
    version = search.definitions.module_keras_version()
    for key in ("loss", "metrics", "weighted_metrics"):
        label = f"Keras {key} passed to compile()"
        value = keyword(call, key)
        why = _unconverted(version, f"the {key} given to compile()")
        for fn, autograph in search.definitions.callables(value, at):
            search.root(fn, TraceKind.KERAS, label, autograph, unconverted=why)
        for item in _elements(value):
            search.outgoing.send(item, TraceKind.KERAS, label, None)
    return True


MODULE_KINDS: tuple[Callable[[Search], None], ...] = (decorated, keras_methods)
CALL_KINDS: tuple[Callable[[Search, FunctionNode | None, cst.Call], bool], ...] = (
    wrapped,
    always_tracing,
    dataset_callbacks,
    dataset_experimental,
    compile_arguments,
)


# -- helpers ----------------------------------------------------------------------------
_LAMBDA_UNCONVERTED = "Keras does not AutoGraph-convert a Lambda layer's function"


def _unconverted(version: str, method: str) -> str:
    """Why AutoGraph leaves a Keras root alone (SPEC §1), or "" where Keras converts it:
    Keras 3 converts none; Keras 2 all but the steps."""
    if version == "2":
        if method not in KERAS_STEPS:
            return ""
        return (
            f"Keras 2 calls {method}() from its own library code, which AutoGraph does not convert"
        )
    what = method if method.startswith("the ") else f"{method}()"
    return f"Keras 3 does not AutoGraph-convert {what}, nor the plain functions it calls"


_FEATURE = "tensorflow.autograph.experimental.Feature."


def autograph_features(search: Search, options: list[cst.Call]) -> frozenset[str]:
    """The ``tf.autograph.experimental.Feature`` members that ``experimental_autograph_options``
    names in a tf.function's options (one, or a tuple or list of them): ``BUILTIN_FUNCTIONS``
    turns ``print`` into ``tf.print``, ``ASSERT_STATEMENTS`` ``assert`` into ``tf.Assert``,
    ``ALL`` both."""
    found: set[str] = set()
    for call in options:
        value = keyword(call, "experimental_autograph_options")
        if value is None:
            continue
        items = (
            [e.value for e in value.elements]
            if isinstance(value, cst.Tuple | cst.List)
            else [value]
        )
        for item in items:
            for name in search.definitions.resolve(item).imported:
                if name.startswith(_FEATURE):
                    found.add(name[len(_FEATURE) :])
    return frozenset(found)


def decorator_root(
    search: Search, fn: cst.FunctionDef
) -> tuple[str, bool, cst.BaseExpression | None, frozenset[str]]:
    """(reason, autograph, input_signature, AutoGraph features) when a decorator makes ``fn``
    traced; an escape-hatch decorator (``@tf.py_function``...) puts it in
    ``search.escaped``."""
    definitions = search.definitions
    autograph = True
    traced: tuple[str, cst.BaseExpression | None, frozenset[str]] | None = None
    for dec in fn.decorators:
        expr = dec.decorator
        target = expr.func if isinstance(expr, cst.Call) else expr
        if definitions.resolve(target).is_(*DO_NOT_CONVERT):
            autograph = False
            continue
        if definitions.is_escape_hatch(target):
            search.escaped.add(fn)
            return ("", False, None, frozenset())
        options = definitions.tf_function_options(expr)
        if options is None:
            continue
        if isinstance(expr, cst.Call) and definitions.resolve(target).is_(*PARTIAL):
            target = argument(expr, 0, "func") or target
        label = dotted(target) or "tf.function"
        if any(is_false(keyword(c, "autograph")) for c in options):
            autograph = False
        signature = next(
            (s for c in options if (s := keyword(c, "input_signature")) is not None), None
        )
        traced = (f"decorated with @{label}", signature, autograph_features(search, options))
    if traced is None:
        return ("", True, None, frozenset())
    return (traced[0], autograph, traced[1], traced[2])


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
            if name == "run_eagerly" and is_true(node.value):
                self.found = True


def _keras_never_traced(ctx: ModuleContext, definitions: Definitions) -> bool:
    if _importable(ctx):
        return False  # another module may import its classes and fit them (stdin: unknown)
    return _hands_keras_nothing(ctx, definitions)


def _importable(ctx: ModuleContext) -> bool:
    """Another module could import this one: not a notebook, nor a ``.py`` file whose name
    is no identifier (``demo-eager.py``)."""
    path = Path(ctx.path)
    return path.suffix != ".ipynb" and not (path.suffix == ".py" and not path.stem.isidentifier())


def eager_script_classes(ctx: ModuleContext, definitions: Definitions) -> frozenset[str]:
    """``ModuleSummary.eager_script``: the module-level Keras classes of a program (it reads
    its command line) whose own code hands Keras nothing to trace; the run decides whether
    another module uses them."""
    if not _is_script(ctx.module) or not _hands_keras_nothing(ctx, definitions):
        return frozenset()
    return frozenset(
        stmt.name.value
        for stmt in ctx.module.body
        if isinstance(stmt, cst.ClassDef) and definitions.keras_kinds(stmt)
    )


def _is_script(module: cst.Module) -> bool:
    """A program, not a library: it reads its command line (``parse_args()``,
    ``app.run(main)``, ``fire.Fire(...)``) at import or under ``if __name__ == "__main__":``.
    A guard that only runs smoke tests of the classes (a layer library's ``_test_*()``) is
    no program: others are meant to import and fit those classes."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and is_main_guard(stmt.test):
            if any(_reads_command_line(n) for n in walk.descendants(stmt.body)):
                return True
        elif isinstance(stmt, cst.SimpleStatementLine) and any(
            _reads_command_line(n) for n in walk.descendants(stmt)
        ):
            return True
    return False


def _reads_command_line(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = last_name(func)
    return name in ("parse_args", "parse_known_args", "Fire") or (
        name == "run" and isinstance(func, cst.Attribute) and dotted(func.value) == "app"
    )


def _hands_keras_nothing(ctx: ModuleContext, definitions: Definitions) -> bool:
    """Nothing in the module fits, compiles, builds, saves or wraps in ``tf.function`` what it
    makes, or hands a Keras object to code that traces it; no function is decorated."""
    keras = _keras_names(ctx, definitions)
    for at, call in definitions.facts.calls:
        func = call.func
        if isinstance(func, cst.Name) and not ctx.resolve(func).imported:
            continue  # the script's own `evaluate(model, ...)`, not Keras's
        name = last_name(func)
        if name in TRACING_ENTRIES and not _saves_no_graph(ctx, definitions, func):
            return False
        if name in CALLBACK_ENTRIES and any(
            _mentions(callee, keras)
            for arg in call.args
            for callee in _callables_of(definitions, arg.value, at)
        ):
            return False
    return not any(
        not plain_python_decorator(ctx, d)
        for fn in definitions.facts.functions
        if isinstance(fn, cst.FunctionDef)
        for d in fn.decorators
    )


def plain_python_decorator(ctx: ModuleContext, decorator: cst.Decorator) -> bool:
    """``@property`` and its ``@x.setter``, ``@staticmethod``, ``@classmethod``, and
    ``functools``/``abc`` decorators: none of them hands the function to TensorFlow."""
    expr = decorator.decorator
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("setter", "getter", "deleter"):
        return True
    res = ctx.resolve(expr.func if isinstance(expr, cst.Call) else expr)
    return res.is_(
        "builtins.property", "builtins.staticmethod", "builtins.classmethod"
    ) or res.startswith("functools.", "abc.")


def _saves_no_graph(ctx: ModuleContext, definitions: Definitions, func: cst.BaseExpression) -> bool:
    """A ``save`` that writes no traced function: another library's (``np.save``), or a
    ``tf.train.Checkpoint``'s (variables only)."""
    if not (isinstance(func, cst.Attribute) and func.attr.value == "save"):
        return False
    res = ctx.resolve(func)
    if res.imported and not res.startswith("tensorflow.", "keras."):
        return True
    receiver = func.value
    if not isinstance(receiver, cst.Name):
        return False
    values = [
        definitions.assigned_value(b.node)
        for b in ctx.bindings(receiver)
        if isinstance(b.node, cst.Name)
    ]
    return bool(values) and all(
        isinstance(v, cst.Call)
        and ctx.resolve(v.func).is_(
            "tensorflow.train.Checkpoint", "tensorflow.train.CheckpointManager"
        )
        for v in values
    )


def _driven_eagerly(ctx: ModuleContext, definitions: Definitions, cls: cst.ClassDef) -> bool:
    """Every instance of ``cls`` the module makes is bound to a name or an attribute
    (``model = Net()``, ``self.model = Net()``) and only ever called, stepped
    (``model.train_step(batch)``) or read from, by eager code: nothing fits, compiles, saves or
    wraps it, passes it on, or subclasses the class, so Keras never traces its methods (they
    run as Python on eager tensors, each call)."""
    name = cls.name.value
    holders: set[str] = set()
    for node in walk.descendants(ctx.module):
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and isinstance(node.value.func, cst.Name)
            and node.value.func.value == name
        ):
            for target in node.targets:
                if not isinstance(target.target, cst.Name | cst.Attribute):
                    return False
                holders.add(ctx.code(target.target))
    if not holders:
        return False
    # The functional API calls layers on symbolic inputs: calling an instance may trace it.
    functional = any(last_name(call.func) == "Input" for _, call in definitions.facts.calls)
    handed = handed_functions(definitions)
    methods = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    methods |= {m for names in KERAS_METHODS.values() for m in names} | {"call", "__call__"}
    for node in walk.descendants(ctx.module):
        if not isinstance(node, cst.Name | cst.Attribute):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue  # `self.model`'s `model`: a name of an attribute, not a variable
        if isinstance(node, cst.Name) and node.value == name:
            allowed = _class_use_allowed(ctx, node)
        elif ctx.code(node) in holders:
            allowed = _instance_use_allowed(ctx, definitions, node, handed, functional, methods)
        else:
            continue
        if not allowed:
            return False
    return True


def handed_functions(definitions: Definitions) -> set[str]:
    """Names given to calls that trace what they get (``tf.function(step)``, ``ds.map(f)``)."""
    found: set[str] = set()
    for _, call in definitions.facts.calls:
        if last_name(call.func) in TRACING_ENTRIES | CALLBACK_ENTRIES:
            for arg in call.args:
                finder = _Names()
                finder.walk(arg.value)
                found |= finder.found
    return found


def _class_use_allowed(ctx: ModuleContext, node: cst.Name) -> bool:
    """The class's own name, a construction bound to a holder, or ``super(Cls, self)``."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.ClassDef) and parent.name is node:
        return True
    if isinstance(parent, cst.Call) and parent.func is node:
        return isinstance(ctx.parent(parent), cst.Assign)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value == "super"
            and call.args[0] is parent
        )
    return False


def _instance_use_allowed(
    ctx: ModuleContext,
    definitions: Definitions,
    node: cst.BaseExpression,
    handed: set[str],
    functional: bool,
    methods: set[str],
) -> bool:
    """``node`` (a holder of an instance) is bound, called, or asked for an attribute or a
    method that traces nothing, in eager code."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.AssignTarget):
        return True
    if isinstance(parent, cst.Call) and parent.func is node:
        return not functional and _eager_code(ctx, definitions, node, handed)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        attr = parent.attr.value
        if attr in TRACING_ENTRIES or (attr in methods and isinstance(ctx.parent(parent), cst.Arg)):
            return False  # `model.fit(...)`, or `tf.function(model.train_step)`: handed on
        return _eager_code(ctx, definitions, node, handed)
    return False


def _eager_code(
    ctx: ModuleContext, definitions: Definitions, node: cst.CSTNode, handed: set[str]
) -> bool:
    """``node`` sits at module level or in a plain function of no Keras class that nothing
    hands to a tracing call."""
    fn = ctx.enclosing_function(node)
    while fn is not None:
        if not isinstance(fn, cst.FunctionDef) or fn.name.value in handed:
            return False
        if any(not plain_python_decorator(ctx, d) for d in fn.decorators):
            return False
        owner = ctx.enclosing_class(fn)
        if owner is not None and definitions.keras_kinds(owner):
            return False
        fn = ctx.enclosing_function(fn)
    return True


def _keras_names(ctx: ModuleContext, definitions: Definitions) -> set[str]:
    """The module's Keras classes, and the names it binds to their instances."""
    classes = {c for c in definitions.facts.classes if definitions.keras_kinds(c)}
    names = {c.name.value for c in classes}
    for stmt in ctx.module.body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (
                isinstance(small, cst.Assign)
                and isinstance(small.value, cst.Call)
                and isinstance(small.value.func, cst.Name)
                and small.value.func.value in names
            ):
                names |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    return names


def _callables_of(
    definitions: Definitions, expr: cst.BaseExpression, at: FunctionNode | None
) -> list[cst.CSTNode]:
    """A lambda given in place, or the module functions a name denotes (and an unknown
    callable, which may be anything: the argument itself)."""
    if isinstance(expr, cst.Lambda):
        return [expr]
    found: list[cst.CSTNode] = [fn for fn, _ in definitions.callables(expr, at)]
    return found or [expr]


class _Names(walk.Visitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    finder = _Names()
    finder.walk(node)
    return bool(finder.found & names)


def _sets_run_eagerly(ctx: ModuleContext, definitions: Definitions) -> bool:
    if "run_eagerly" not in ctx.source:  # cheap exit for almost every module
        return False
    for _, call in definitions.facts.calls:
        if is_true(keyword(call, "run_eagerly")):
            return True
    finder = _RunEagerlyAssignment()
    finder.walk(ctx.module)
    return finder.found


def _every_argument(search: Search, at: FunctionNode | None, call: cst.Call, label: str) -> None:
    """Every function passed to ``call`` is a tf.data callback (whatever its position), and
    so is the ``__call__`` of an object passed (``ds.map(PairAugmenter(cfg))``, ``aug = aug
    or Augmenter(); ds.map(aug)``), of this module's class or another module's."""
    for arg in call.args:
        found = False
        for fn, autograph in search.definitions.callables(arg.value, at):
            found = True
            search.root(fn, TraceKind.DATASET, label, autograph)
        search.outgoing.send(arg.value, TraceKind.DATASET, label, None)
        cls = None if found else search.definitions.instance_class(arg.value, at)
        if isinstance(cls, cst.ClassDef):
            method = search.definitions.find_method(cls, "__call__")
            if method is not None:
                search.root(method, TraceKind.DATASET, label, True)
        elif isinstance(cls, str):
            search.outgoing.root(f"{cls}.__call__", TraceKind.DATASET, label)


def _elements(expr: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The items of a list/tuple/dict literal (``metrics=[a, b]``), or ``expr`` itself."""
    if isinstance(expr, cst.List | cst.Tuple | cst.Set):
        return [el.value for el in expr.elements]
    if isinstance(expr, cst.Dict):
        return [el.value for el in expr.elements if isinstance(el, cst.DictElement)]
    return [expr] if expr is not None else []
