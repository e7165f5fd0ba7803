"""What the names and expressions of one module denote: the definitions of the module they
reach (functions, methods, classes, attribute values), tf.function wrappers and options,
Keras base classes, tf.data datasets and tf.distribute strategies.

Traced-code discovery (``traced/``) and the rules ask the same questions; this object answers
each once per module (the walk of ``ModuleFacts``, resolutions and verdicts memoised).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TypeAlias

import libcst as cst

from tflint_graph.core.facts import TraceKind
from tflint_graph.core.vocabulary import (
    DATASET_CALLBACK_METHODS,
    DATASET_EXPERIMENTAL,
    DATASET_FACTORIES,
    DATASET_KWARGS,
    DATASET_METHODS,
    DATASET_NAME,
    DATASET_ONLY_KWARGS,
    DO_NOT_CONVERT,
    ESCAPE_HATCHES,
    KERAS2_MARK,
    LEGACY_SWITCH,
    NON_DATASET_LIBRARIES,
    PARTIAL,
    TF_FUNCTION,
)
from tflint_graph.model.calls import argument, is_true, keyword, super_method
from tflint_graph.model.collect import FunctionFacts, FunctionNode, ModuleFacts
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.names import Resolution, canonical, dotted, keras_kinds_of
from tflint_graph.model.scopes import ImportAssignment
from tflint_graph.model.values import (
    assigned_value,
    attributes_by_name,
    is_main_guard,
    names_by_text,
)
from tflint_graph.source.prefilter import EscapeParams, escape_params

_MAX_DEPTH = 6
_ESCAPE_NAMES = frozenset({"py_function", "numpy_function"})

# A class of this module, or the absolute name of a class of another module of the run.
ClassRef: TypeAlias = cst.ClassDef | str


def _defaulted(value: cst.BaseExpression, name: str) -> bool:
    """``value`` is ``name or Default()``: what ``name`` held (a parameter) is replaced
    by a default when None."""
    return (
        type(value) is cst.BooleanOperation
        and type(value.operator) is cst.Or
        and type(value.left) is cst.Name
        and value.left.value == name
        and type(value.right) is cst.Call
    )


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class Definitions:
    """The answers for one module (built once per analysis, before discovery)."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.ctx = ctx
        self.facts = ModuleFacts(ctx.module)
        self._keras_kinds: dict[cst.ClassDef, frozenset[str]] = {}
        self._keras2: dict[cst.ClassDef, bool] = {}
        self._module_keras: str | None = None
        self._extra = tuple(ctx.config.extra_function_decorators)
        self._resolved: dict[cst.CSTNode, Resolution] = {}
        self._dataset_memo: dict[cst.CSTNode, bool | None] = {}
        self._held: dict[tuple[cst.ClassDef, str], ClassRef | None] = {}
        self._families: dict[cst.ClassDef, set[cst.ClassDef]] = {}
        self._fresh: dict[TracedFunction, bool] = {}
        # (expression, function) -> the class it names / is an instance of.
        self._named: dict[tuple[cst.CSTNode, FunctionNode | None], ClassRef | None] = {}
        self._instances: dict[tuple[cst.CSTNode, FunctionNode | None], ClassRef | None] = {}
        self._escapes: EscapeParams | None = None

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
                value = self.assigned_value(a.node)
                if value is None or dotted(value) is None:
                    continue
                for name in self.resolve(value, depth + 1).imported:
                    imported.add(canonical(f"{name}.{tail}" if tail else name))
            res = Resolution(frozenset(imported), res.local)
        if depth == 0:
            self._resolved[expr] = res
        return res

    @cached_property
    def names_tf_function(self) -> bool:
        """Whether an expression of the module can denote ``tf.function``: every spelling
        of it ends in the name ``function`` (``tf.function``, ``def_function.function``,
        ``from tensorflow import function``), unless the configuration names project
        wrappers.  Without it, the tf.function question every call of a module asks
        (discovery, the retracing rules) has the answer No at once."""
        return bool(self._extra) or self.ctx.spells("function")

    def is_tf_function(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``tf.function`` itself (any spelling) or a configured project wrapper."""
        if not self.names_tf_function:
            return False
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
        if depth > _MAX_DEPTH or not self.names_tf_function:
            return None
        if self.is_tf_function(expr):
            return []
        if type(expr) is cst.Call:
            func = expr.func
            if self.resolve(func).is_(*PARTIAL):
                first = argument(expr, 0, "func")
                inner = self.tf_function_options(first, depth + 1) if first is not None else None
                return None if inner is None else [expr, *inner]
            if argument(expr, 0, "func") is None:  # a factory call with no function yet
                inner = self.tf_function_options(func, depth + 1)
                return None if inner is None else [expr, *inner]
            return None
        if type(expr) is cst.Name:
            for a in self.ctx.bindings(expr):
                if type(a.node) is cst.Name:
                    value = self.assigned_value(a.node)
                    if type(value) is cst.Call:
                        found = self.tf_function_options(value, depth + 1)
                        if found is not None:
                            return found
        return None

    def is_escape_hatch(self, expr: cst.BaseExpression) -> bool:
        res = self.resolve(expr)
        if res.is_(*ESCAPE_HATCHES):
            return True
        # `tf.py_function` through a `tf` the resolution cannot follow (`tf =
        # try_import_tensorflow()`, re-exported): the name is TensorFlow's alone.
        return (
            all(self.ctx.view.may_be_project(name) for name in res.imported)
            and isinstance(expr, cst.Attribute)
            and expr.attr.value in _ESCAPE_NAMES
            and isinstance(expr.value, cst.Name)
        )

    def escape_table(self) -> EscapeParams:
        """``ModuleSummary.escape_params`` of this module (from CPython's tree, as the
        summary of a module without traced code has it)."""
        if self._escapes is None:
            self._escapes = escape_params(self.ctx.cpython_tree(), self.ctx.source)
        return self._escapes

    def escape_params(self, fn: cst.FunctionDef) -> frozenset[str]:
        """Parameters of module-level function or method ``fn`` that only ever reach an
        escape hatch as its function (``def run_eagerly(func, inp): return
        tf.numpy_function(func, inp, tf.float32)``): a callable passed there runs eagerly on
        every call, never while tracing."""
        table = self.escape_table()
        if not table:
            return frozenset()
        ctx = self.ctx
        owner = ctx.parent(ctx.parent(fn))  # def -> block -> class, or def -> module
        if ctx.parent(fn) is ctx.module:
            qualname = fn.name.value
        elif isinstance(owner, cst.ClassDef) and ctx.parent(owner) is ctx.module:
            qualname = f"{owner.name.value}.{fn.name.value}"
        else:
            return frozenset()
        entry = table.get(qualname)
        return entry[1] if entry is not None else frozenset()

    def no_autograph_decorator(self, fn: FunctionNode) -> bool:
        """``@tf.autograph.experimental.do_not_convert`` on ``fn``."""
        if not isinstance(fn, cst.FunctionDef):
            return False
        for dec in fn.decorators:
            expr = dec.decorator
            target = expr.func if isinstance(expr, cst.Call) else expr
            if self.resolve(target).is_(*DO_NOT_CONVERT):
                return True
        return False

    def calls_in(self, caller: FunctionNode, callee: FunctionNode) -> Iterator[cst.Call]:
        """The calls in ``caller``'s own body that call ``callee`` (a construction calls
        ``__init__``, a call of an instance ``__call__``)."""
        facts = self.facts.bodies.get(caller)
        if facts is None:
            return
        for call in facts.calls:
            if any(f is callee for f, _ in self.callables(call.func, caller)) or (
                type(callee) is cst.FunctionDef
                and callee.name.value in ("__init__", "__call__")
                and callee in self.entered(call, caller)
            ):
                yield call

    def _eager_wrapper(self, fn: cst.FunctionDef) -> cst.FunctionDef | None:
        """The wrapper a decorator of this module puts in place of ``fn`` when the wrapper
        runs ``fn`` through ``tf.py_function`` & co. (``@map_decorator`` returning ``def
        wrapper(*a): return tf.py_function(func, a, ...)``): the name denotes the wrapper,
        and ``fn``'s body runs eagerly, on every call."""
        for dec in fn.decorators:
            target = dec.decorator
            if not isinstance(target, cst.Name):
                continue
            for a in self.ctx.bindings(target):
                factory = a.node
                if not isinstance(factory, cst.FunctionDef) or not factory.params.params:
                    continue
                wrapped = factory.params.params[0].name.value
                for inner in self.facts.bodies[factory].returns:
                    for wrapper, _ in self.callables(inner, factory, _MAX_DEPTH):
                        if isinstance(wrapper, cst.FunctionDef) and any(
                            self.is_escape_hatch(call.func)
                            and any(
                                isinstance(arg.value, cst.Name) and arg.value.value == wrapped
                                for arg in call.args
                            )
                            for call in self.facts.bodies[wrapper].calls
                        ):
                            return wrapper
        return None

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
            found = self.ctx.bindings(expr)
            if len(found) > 1 and self._main_block(expr) is None:
                # A demo copy under `if __name__ == "__main__":` is not what the module's
                # code calls when imported; the definition outside that block is.
                outside = [a for a in found if self._main_block(a.node) is None]
                found = outside or found
            for a in found:
                node = a.node
                if type(node) is cst.FunctionDef:
                    wrapper = self._eager_wrapper(node) if node.decorators else None
                    yield (wrapper, True) if wrapper is not None else (node, True)
                elif type(node) is cst.Name:
                    value = self.assigned_value(node)
                    if value is not None:
                        yield from self.callables(value, at, depth + 1)
        elif type(expr) is cst.Attribute:
            methods = self.methods_of(expr, at)
            if methods:
                yield from ((m, True) for m in methods)
            else:
                for value, owner in self.attribute_values(expr, at):
                    yield from self.callables(value, owner, depth + 1)
        elif type(expr) is cst.Call:
            func = expr.func
            res = self.resolve(func)
            if res.is_(*PARTIAL):
                yield from self.callables(argument(expr, 0, "func"), at, depth + 1)
            elif self.tf_function_options(func) is not None:
                # tf.function(fn), tf.function(jit_compile=True)(fn), xla(fn)
                yield from self.callables(argument(expr, 0, "func"), at, depth + 1)
            elif res.is_(*DO_NOT_CONVERT):
                for fn, _ in self.callables(argument(expr, 0, "func"), at, depth + 1):
                    yield fn, False
            elif not self.is_escape_hatch(func):
                # A factory defined here: `ds.map(make_augment(cfg))` maps what it returns.
                for factory, _ in self.callables(func, at, depth + 1):
                    if type(factory) is cst.FunctionDef:
                        for ret in self.facts.bodies[factory].returns:
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

    def _main_block(self, node: cst.CSTNode) -> cst.If | None:
        """The module-level ``if __name__ == "__main__":`` that ``node`` lies in."""
        for anc in self.ctx.ancestors(node):
            if type(anc) is cst.If and self.ctx.parent(anc) is self.ctx.module:
                return anc if is_main_guard(anc.test) else None
        return None

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
                return self.foreign(argument(expr, 0, "func"), depth + 1)
            return []
        if isinstance(expr, cst.IfExp):
            return self.foreign(expr.body, depth + 1) + self.foreign(expr.orelse, depth + 1)
        if not isinstance(expr, cst.Name | cst.Attribute):
            return []
        res = self.resolve(expr)
        names = sorted(
            {self.ctx.view.absolute(n) for n in res.imported if n.startswith(".") or "." in n}
        )
        return [n for n in names if self.ctx.view.may_be_project(n)]

    def assigned_value(self, target: cst.Name) -> cst.BaseExpression | None:
        """``value`` for a simple ``target = value`` assignment."""
        return assigned_value(self.ctx, target, with_items=False)

    def class_of(self, expr: cst.BaseExpression, at: FunctionNode | None) -> cst.ClassDef | None:
        """The module class an expression denotes or is surely an instance of."""
        ref = self.instance_class(expr, at)
        # Only a name bound here can name a class of this module (not `mod.Cls`, `tf`).
        if (
            ref is None
            and type(expr) is cst.Name
            and (
                expr.value == "cls"
                or any(not isinstance(a, ImportAssignment) for a in self.ctx.bindings(expr))
            )
        ):
            ref = self.named_class(expr, at)
        return ref if isinstance(ref, cst.ClassDef) else None

    # -- classes and their instances --------------------------------------------------
    def named_class(
        self, expr: cst.BaseExpression, at: FunctionNode | None, depth: int = 0
    ) -> ClassRef | None:
        """The class ``expr`` names (the class itself, not an instance): one of this module
        (``Augmenter``, ``cls`` in a method, an alias of one), or the absolute name of one of
        another module of the run (``helpers.Augmenter``), which may turn out to be a
        function there (then nothing is found under it)."""
        if depth == 0:
            key = (expr, at)
            if key not in self._named:
                self._named[key] = self._named_class(expr, at, 0)
            return self._named[key]
        return self._named_class(expr, at, depth)

    def _named_class(
        self, expr: cst.BaseExpression, at: FunctionNode | None, depth: int
    ) -> ClassRef | None:
        if depth > _MAX_DEPTH:
            return None
        if type(expr) is cst.Name:
            if expr.value == "cls" and type(at) is cst.FunctionDef:
                outer = self.ctx.enclosing_class(at)
                if outer is not None:
                    return outer
            found = self.ctx.bindings(expr)
            if found and not all(isinstance(a, ImportAssignment) for a in found):
                if len(found) != 1:
                    return None
                node = found[0].node
                if type(node) is cst.ClassDef:
                    return node
                if type(node) is cst.Name:  # `Aug = helpers.Augmenter`
                    value = self.assigned_value(node)
                    if type(value) is cst.Name or type(value) is cst.Attribute:
                        return self.named_class(value, at, depth + 1)
                return None
        elif type(expr) is not cst.Attribute:
            return None
        names = self.foreign(expr)
        return names[0] if len(names) == 1 else None

    def instance_class(
        self, expr: cst.BaseExpression, at: FunctionNode | None, depth: int = 0
    ) -> ClassRef | None:
        """The class ``expr`` is surely an instance of (see ``named_class``): a construction
        (``Augmenter()``), ``self`` in a method, a name every assignment of which constructs
        that class (``aug = Augmenter()``), an attribute every write of which in the module
        does (``self.helper = Helper()`` in ``__init__``).  ``None`` assignments are left
        out (``self.helper = None`` before a lazy build); anything else unknown is None."""
        if depth == 0:
            key = (expr, at)
            if key not in self._instances:
                self._instances[key] = self._instance_class(expr, at, 0)
            return self._instances[key]
        return self._instance_class(expr, at, depth)

    def _instance_class(
        self, expr: cst.BaseExpression, at: FunctionNode | None, depth: int
    ) -> ClassRef | None:
        if depth > _MAX_DEPTH:
            return None
        if type(expr) is cst.Call:
            return self.named_class(expr.func, at)
        if type(expr) is cst.Name:
            if expr.value == "self" and type(at) is cst.FunctionDef:
                outer = self.ctx.enclosing_class(at)
                if outer is not None:
                    return outer
            values: list[cst.BaseExpression] = []
            unknown = False
            for a in self.ctx.bindings(expr):
                value = self.assigned_value(a.node) if type(a.node) is cst.Name else None
                if value is None:
                    unknown = True  # a parameter, a loop variable, an import ...
                else:
                    values.append(value)
            if unknown and not any(_defaulted(v, expr.value) for v in values):
                return None
            return self._one_class(values, at, depth)
        if type(expr) is cst.Attribute:
            owner = self.instance_class(expr.value, at, depth + 1)
            if not isinstance(owner, cst.ClassDef):
                return None
            return self._attribute_class(owner, expr.attr.value)
        return None

    def _one_class(
        self, values: list[cst.BaseExpression], at: FunctionNode | None, depth: int
    ) -> ClassRef | None:
        """The one class all of ``values`` (None literals aside) construct."""
        found: set[ClassRef | None] = set()
        for value in values:
            if type(value) is cst.Name and value.value == "None":
                continue
            if type(value) is cst.BooleanOperation and type(value.operator) is cst.Or:
                # `aug = aug or Augmenter()`: the default a caller's None gets
                value = value.right
            constructed = type(value) is cst.Call
            found.add(self.instance_class(value, at, depth + 1) if constructed else None)
        return found.pop() if len(found) == 1 else None

    def _attribute_class(self, cls: cst.ClassDef, attr: str) -> ClassRef | None:
        """What ``attr`` of an instance of ``cls`` surely holds: the one class that every
        write of ``self.attr`` in the class, its module bases and its module subclasses
        constructs, when the module writes the attribute nowhere else."""
        key = (cls, attr)
        if key not in self._held:
            self._held[key] = None  # also cuts cycles (`self.next = Node()` in `Node`)
            self._held[key] = self._attribute_class_of(cls, attr)
        return self._held[key]

    def _attribute_class_of(self, cls: cst.ClassDef, attr: str) -> ClassRef | None:
        family = self._family(cls)
        values: list[tuple[cst.BaseExpression, FunctionNode | None]] = []
        for member in family:
            values += self.facts.self_values.get(member, {}).get(attr, [])
        if not values or not self._writes_recorded(attr):
            return None
        found: set[ClassRef | None] = set()
        for value, where in values:
            if type(value) is cst.Name and value.value == "None":
                continue
            if type(value) is not cst.Call:
                return None
            found.add(self.named_class(value.func, where))  # a construction
        return found.pop() if len(found) == 1 else None

    def _family(self, cls: cst.ClassDef) -> set[cst.ClassDef]:
        """``cls``, its bases in this module and the module's classes derived from it."""
        known = self._families.get(cls)
        if known is not None:
            return known
        up: set[cst.ClassDef] = set()
        todo = [cls]
        while todo:
            current = todo.pop()
            if current not in up:
                up.add(current)
                todo += self.module_bases(current)
        family = set(up)
        for other in self.facts.classes:
            if other not in family and cls in self._ancestry(other):
                family.add(other)
        self._families[cls] = family
        return family

    def _ancestry(self, cls: cst.ClassDef) -> set[cst.ClassDef]:
        seen: set[cst.ClassDef] = set()
        todo = list(self.module_bases(cls))
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo += self.module_bases(current)
        return seen

    def _writes_recorded(self, attr: str) -> bool:
        """Every write of ``<obj>.attr`` in the module is a plain ``self.attr = value``
        (what ``ModuleFacts.self_values`` records): no unpacking, augmented or loop target,
        no write through another object, no ``setattr``."""
        for node in attributes_by_name(self.ctx).get(attr, []):
            parent = self.ctx.parent(node)
            if type(parent) is cst.AssignTarget or (
                type(parent) is cst.AnnAssign and parent.target is node
            ):
                if not (type(node.value) is cst.Name and node.value.value == "self"):
                    return False
            elif self._stored(node, parent):
                return False
        for name in names_by_text(self.ctx).get("setattr", []):
            call = self.ctx.parent(name)
            if type(call) is cst.Call and any(
                type(arg.value) is cst.SimpleString and arg.value.evaluated_value == attr
                for arg in call.args
            ):
                return False
        return True

    def _stored(self, node: cst.Attribute, parent: cst.CSTNode | None) -> bool:
        """``node`` is written other than by a plain assignment (``self.a, self.b = ...``,
        ``self.n += 1``, ``for self.x in ...``, ``with ... as self.x``, ``del self.x``)."""
        child: cst.CSTNode = node
        while type(parent) in (cst.Element, cst.StarredElement, cst.Tuple, cst.List):
            child, parent = parent, self.ctx.parent(parent)  # type: ignore[assignment]
        if child is not node and type(parent) is cst.AssignTarget:
            return True
        if type(parent) in (cst.AugAssign, cst.For, cst.CompFor):
            return parent.target is child  # type: ignore[union-attr]
        return type(parent) in (cst.AsName, cst.Del)

    def constructed_here(self, expr: cst.BaseExpression, at: FunctionNode) -> bool:
        """``expr`` is a construction of a class (of this module or, by its name, another
        of the run: ``Registry()``) or a name that ``at`` binds only to such constructions
        (``registry = Registry()``): an object of this call."""
        if type(expr) is cst.Call:
            return self.named_class(expr.func, at) is not None
        if type(expr) is not cst.Name or expr.value in ("self", "cls"):
            return False
        found = self.ctx.bindings(expr)
        if not found:
            return False
        for a in found:
            node = a.node
            if type(node) is not cst.Name or self.ctx.enclosing_function(node) is not at:
                return False
            value = self.assigned_value(node)
            if type(value) is not cst.Call or self.named_class(value.func, at) is None:
                return False
        return True

    def fresh_receiver(
        self, call: cst.Call, method: str, at: FunctionNode, self_fresh: bool = False
    ) -> bool:
        """``call`` runs ``method`` on an object of this call of ``at``: a construction
        (``__init__``), or an object ``at`` constructs (see ``constructed_here``), or, when
        ``at``'s own ``self`` is such an object (``self_fresh``), what an attribute of it
        surely holds (``self.helper`` with ``self.helper = Helper()``); the object is the
        instance called (``aug(x)``, for ``__call__``) or the one before the dot."""
        func = call.func
        if method == "__init__" and self.named_class(func, at) is not None:
            return True
        if method == "__call__" and self._fresh_object(func, at, self_fresh):
            return True
        return type(func) is cst.Attribute and self._fresh_object(func.value, at, self_fresh)

    def _fresh_object(self, expr: cst.BaseExpression, at: FunctionNode, self_fresh: bool) -> bool:
        if self.constructed_here(expr, at):
            return True
        base = expr
        while type(base) is cst.Attribute:
            base = base.value
        return (
            self_fresh
            and base is not expr
            and type(base) is cst.Name
            and base.value == "self"
            and self.instance_class(expr, at) is not None
        )

    def self_is_fresh(self, fn: TracedFunction, depth: int = 0) -> bool:
        """``fn`` is a method that every traced call reaches through an object of the
        calling function's call (``registry = Registry(); registry.insert(...)``, an
        attribute of a fresh ``self`` constructed in ``__init__``): its ``self`` is new on
        each trace, so its state cannot outlive it."""
        known = self._fresh.get(fn)
        if known is not None:
            return known
        node, parent = fn.node, fn.parent
        if fn.kind is TraceKind.CALLEE and parent is None:
            result = fn.fresh_elsewhere  # called from other modules' traced code only
        elif (
            fn.kind is not TraceKind.CALLEE
            or parent is None
            or not isinstance(node, cst.FunctionDef)
            or self.ctx.enclosing_class(node) is None
            or depth > _MAX_DEPTH
        ):
            result = False
        else:
            self._fresh[fn] = False  # a cycle of calls proves nothing
            parent_fresh = self.self_is_fresh(parent, depth + 1)
            sites = list(self.calls_in(parent.node, node))
            result = bool(sites) and all(
                self.fresh_receiver(call, node.name.value, parent.node, parent_fresh)
                for call in sites
            )
        self._fresh[fn] = result
        return result

    def _super_class(self, expr: cst.BaseExpression, at: FunctionNode | None) -> bool:
        """``super()`` inside a method."""
        return (
            type(expr) is cst.Call
            and type(expr.func) is cst.Name
            and expr.func.value == "super"
            and self.ctx.resolve(expr.func).is_builtin("super")
            and type(at) is cst.FunctionDef
        )

    def methods_of(self, expr: cst.Attribute, at: FunctionNode | None) -> list[cst.FunctionDef]:
        name = expr.attr.value
        if self._super_class(expr.value, at):
            assert isinstance(at, cst.FunctionDef)
            cls = self.ctx.enclosing_class(at)
            if cls is None:
                return []
            for base in self.module_bases(cls):
                method = self.find_method(base, name, frozenset({cls}))
                if method is not None:
                    return [method]
            return []
        cls = self.class_of(expr.value, at)
        if cls is None:
            return []
        method = self.find_method(cls, name)
        return [method] if method is not None else []

    def attribute_values(
        self, expr: cst.Attribute, at: FunctionNode | None
    ) -> list[tuple[cst.BaseExpression, FunctionNode | None]]:
        """What ``self.fn = ...`` assignments in the object's class (or its module bases) put
        in the attribute ``expr`` reads, with the method that assigns it."""
        cls = self.class_of(expr.value, at)
        found: list[tuple[cst.BaseExpression, FunctionNode | None]] = []
        seen: set[cst.ClassDef] = set()
        todo = [cls] if cls is not None else []
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            found += self.facts.self_values.get(current, {}).get(expr.attr.value, [])
            todo += self.module_bases(current)
        return found

    def find_method(
        self, cls: cst.ClassDef, name: str, seen: frozenset[cst.ClassDef] = frozenset()
    ) -> cst.FunctionDef | None:
        """``name`` defined in ``cls`` or, failing that, in a base class of this module."""
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        for base in self.module_bases(cls):
            if base not in seen:
                found = self.find_method(base, name, seen | {cls})
                if found is not None:
                    return found
        return None

    def module_bases(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        bases = []
        for arg in cls.bases:
            if isinstance(arg.value, cst.Name):
                for a in self.ctx.bindings(arg.value):
                    if isinstance(a.node, cst.ClassDef) and a.node is not cls:
                        bases.append(a.node)
        return bases

    # -- Keras ------------------------------------------------------------------------
    def keras_kinds(self, cls: cst.ClassDef) -> frozenset[str]:
        """Which Keras base classes ``cls`` derives from (``model``, ``layer``, ...)."""
        if cls not in self._keras_kinds:
            kinds, legacy = self._keras_bases(cls, frozenset())
            self._keras_kinds[cls] = kinds
            self._keras2[cls] = legacy and bool(kinds)
        return self._keras_kinds[cls]

    def keras_version(self, cls: cst.ClassDef) -> str:
        """``"2"`` or ``"3"``: the Keras the class runs under (SPEC §1).  A base spelt as
        Keras 2 only (``tf_keras``...) decides; else the run's ``keras-version``, unless
        the module switches ``tf.keras`` to Keras 2 itself (``TF_USE_LEGACY_KERAS``)."""
        self.keras_kinds(cls)
        return "2" if self._keras2.get(cls) else self.module_keras_version()

    def module_keras_version(self) -> str:
        """The Keras of this module's ``keras``/``tf.keras`` names (``compile()`` losses):
        its project's ``keras-version`` (``Config.keras_of``), but Keras 2 where the module
        switches ``tf.keras`` to it (``TF_USE_LEGACY_KERAS``) or imports ``tf_keras`` and no
        plain ``keras``."""
        if self._module_keras is None:
            version = self.ctx.config.keras_of(self.ctx.path)
            source = self.ctx.source
            if version != "2" and (
                LEGACY_SWITCH in source
                or ("tf_keras" in source and {"tf_keras"} == self._keras_imports())
            ):
                version = "2"
            self._module_keras = "2" if version == "2" else "3"
        return self._module_keras

    def _keras_imports(self) -> set[str]:
        """Which of ``keras`` and ``tf_keras`` the module's top-level imports name."""
        found: set[str] = set()
        for stmt in self.ctx.module.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Import):
                    heads = [dotted(a.name) or "" for a in small.names]
                elif isinstance(small, cst.ImportFrom) and small.module is not None:
                    heads = [dotted(small.module) or ""] if not small.relative else []
                else:
                    continue
                found |= {h.split(".")[0] for h in heads} & {"keras", "tf_keras"}
        return found

    def _keras_bases(
        self, cls: cst.ClassDef, seen: frozenset[cst.ClassDef]
    ) -> tuple[frozenset[str], bool]:
        kinds: set[str] = set()
        legacy = False
        for arg in cls.bases:
            if arg.keyword is not None:
                continue
            res = self.resolve(arg.value)
            direct = keras_kinds_of(res.imported)
            kinds |= direct
            legacy = legacy or (res.keras2 and bool(direct))
            # A base class defined in another module of the run.
            view = self.ctx.view
            for name in res.imported if view.keras_classes else ():
                remote = view.keras_classes.get(view.absolute(name), frozenset())
                legacy = legacy or KERAS2_MARK in remote
                kinds |= remote - {KERAS2_MARK}
        for base in self.module_bases(cls):
            if base not in seen:
                more, old = self._keras_bases(base, seen | {cls})
                kinds |= more
                legacy = legacy or old
        return frozenset(kinds), legacy

    def dynamic_layer(self, cls: cst.ClassDef) -> bool:
        """``super().__init__(dynamic=True)`` (or fourth positionally, Keras 2's order), or
        ``dynamic=dynamic`` from a parameter of ``__init__`` that defaults to True: Keras 2
        runs the layer eagerly (Keras 3 refuses the argument, so the layer is never traced
        there either)."""
        init = self.find_method(cls, "__init__")
        if init is None:
            return False
        defaults = {
            param.name.value: param.default
            for param in (*init.params.params, *init.params.kwonly_params)
            if param.default is not None
        }
        for call in self.facts.bodies.get(init, FunctionFacts()).calls:
            value = keyword(call, "dynamic")
            if (
                value is None
                and super_method(call) == "__init__"
                and len(call.args) > 3
                and self._layer_base(cls)
            ):
                # `super().__init__(trainable, name, dtype, dynamic)`: Keras 2's order
                positional = call.args[3]
                value = None if positional.keyword or positional.star else positional.value
            if isinstance(value, cst.Name) and value.value in defaults:
                value = defaults[value.value]
            if is_true(value):
                return True
        return False

    def _layer_base(self, cls: cst.ClassDef) -> bool:
        """``cls`` derives from Keras's ``Layer`` itself (whose constructor takes
        ``trainable, name, dtype, dynamic`` in that order), not from a layer or a class of
        the project with a constructor of its own."""
        bases = [base for base in cls.bases if base.keyword is None]
        return bool(bases) and all(
            self.ctx.resolve(base.value).is_("keras.layers.Layer") for base in bases
        )

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
            if res.startswith(*NON_DATASET_LIBRARIES):
                return False
            # `make_dataset().map(f)`: a function of this module that returns a dataset.
            if depth < _MAX_DEPTH and not res.imported:
                for fn, _ in self.callables(func, None, depth + 1):
                    returns = self.facts.bodies.get(fn, FunctionFacts()).returns
                    if any(self._dataset_evidence(r, depth + 1) for r in returns):
                        return True
            return None
        if isinstance(expr, cst.Name):
            verdicts: set[bool | None] = set()
            for a in self.ctx.bindings(expr):
                node = a.node
                if isinstance(node, cst.Name):
                    value = self.assigned_value(node)
                    if value is not None:
                        verdicts.add(self._dataset_evidence(value, depth + 1))
                elif isinstance(node, cst.Param):
                    if node.annotation is not None:
                        ann = self.resolve(node.annotation.annotation)
                        if ann.startswith("tensorflow.data."):
                            verdicts.add(True)
                        elif ann.startswith(*NON_DATASET_LIBRARIES):
                            verdicts.add(False)
                elif isinstance(node, cst.FunctionDef | cst.ClassDef):
                    verdicts.add(False)
            if True in verdicts:
                return True
            if False in verdicts:
                return False
            return True if DATASET_NAME.search(expr.value) else None
        if isinstance(expr, cst.Attribute):
            res = self.resolve(expr)
            if res.startswith("tensorflow.data."):
                return True
            if res.startswith(*NON_DATASET_LIBRARIES):
                return False
            return True if DATASET_NAME.search(expr.attr.value) else None
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
        allowed = DATASET_KWARGS.get(method)
        if allowed is None:
            return False
        return any(a.keyword is not None and a.keyword.value not in allowed for a in call.args)

    def dataset_callback(self, call: cst.Call) -> str | None:
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
            a.keyword is not None and a.keyword.value in DATASET_ONLY_KWARGS for a in call.args
        )
        return method if evidence is True or has_dataset_kwarg else None

    def dataset_experimental(self, call: cst.Call) -> str | None:
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
                    value = self.assigned_value(a.node)
                    if isinstance(value, cst.Call) and self._is_strategy_factory(value.func):
                        return True
                elif (
                    isinstance(a.node, cst.Param)
                    and a.node.annotation is not None
                    and self._is_strategy_factory(a.node.annotation.annotation)
                ):
                    return True
        return False

    def inherited(self, func: cst.BaseExpression, at: FunctionNode) -> list[str]:
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
        if cls is None:
            return []
        return [f"{base}.{func.attr.value}" for base in self.foreign_bases(cls)]

    def foreign_bases(self, cls: cst.ClassDef) -> list[str]:
        """Absolute names of the bases of ``cls`` and of its module bases that other modules
        of the run may define."""
        found: list[str] = []
        todo = [cls]
        seen: set[cst.ClassDef] = set()
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo += self.module_bases(current)
            for arg in current.bases:
                if arg.keyword is None:
                    found += self.foreign(arg.value)
        return sorted(set(found))

    # -- what a call runs besides what its callee evaluates to -------------------------
    def entered(self, call: cst.Call, at: FunctionNode | None) -> list[cst.FunctionDef]:
        """The methods of this module a call runs when its callee is a class or an instance
        rather than a function: ``Augmenter(...)`` runs ``Augmenter.__init__`` (its own or a
        module base's), ``aug(x)`` runs ``__call__``."""
        name, cls = self._entry(call, at)
        if not isinstance(cls, cst.ClassDef):
            return []
        method = self.find_method(cls, name)
        return [method] if method is not None else []

    def _entry(self, call: cst.Call, at: FunctionNode | None) -> tuple[str, ClassRef | None]:
        """(``__init__``, the class) for a construction, (``__call__``, the class) for a
        call of an instance, (``""``, None) otherwise."""
        func = call.func
        if type(func) is not cst.Name and type(func) is not cst.Attribute:
            return "", None
        cls = self.named_class(func, at)
        if cls is not None:
            return "__init__", cls
        cls = self.instance_class(func, at)
        return ("__call__", cls) if cls is not None else ("", None)

    def _foreign_attribute(self, func: cst.Attribute, at: FunctionNode | None) -> list[str]:
        """``foreign_methods`` of ``obj.name(...)``: ``name`` looked up on ``obj``'s class."""
        name = func.attr.value
        if self._super_class(func.value, at):
            assert isinstance(at, cst.FunctionDef)
            cls = self.ctx.enclosing_class(at)
            return [f"{b}.{name}" for b in self.foreign_bases(cls)] if cls else []
        owner = self.instance_class(func.value, at) or self.named_class(func.value, at)
        if isinstance(owner, str):
            # `helpers.Augmenter.make` names itself; an instance's class does not.
            return [] if self.foreign(func) else [f"{owner}.{name}"]
        if owner is not None and not self.attribute_values(func, at):
            return [f"{b}.{name}" for b in self.foreign_bases(owner)]
        return []

    def foreign_methods(self, call: cst.Call, at: FunctionNode | None) -> list[str]:
        """Absolute names of the methods of other modules' classes that a call runs and that
        the callee's own name does not say (``Outgoing`` targets), when it runs no function
        of this module: a method of an instance of an imported class (``aug.apply`` with
        ``aug = Augmenter()``, ``self.helper.run``), one inherited from a base class defined
        elsewhere (``self.embed``, ``super().call``), the ``__init__`` of such a base for a
        class of this module constructed here, and ``__call__`` of an instance."""
        func = call.func
        if type(func) is cst.Attribute:
            found = self._foreign_attribute(func, at)
            if found:
                return found
        name, cls = self._entry(call, at)
        if isinstance(cls, str):
            # A constructor names its class already: the module that defines it runs
            # `__init__` (``external``); an instance's `__call__` needs naming.
            return [f"{cls}.__call__"] if name == "__call__" else []
        if cls is not None:
            return [f"{b}.{name}" for b in self.foreign_bases(cls)]
        return []

    def defined(self, qualname: str) -> list[tuple[FunctionNode, bool]]:
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

    def external(self, qualname: str) -> tuple[list[tuple[FunctionNode, bool]], list[str]]:
        """What traced code of another module runs by calling ``qualname`` of this module:
        the functions ``defined`` gives, else, for a class, its ``__init__``; and the
        absolute names of the methods a class here inherits from further modules
        (``Augmenter.apply`` defined on ``base.Base``), which those modules define."""
        found = self.defined(qualname)
        head, _, rest = qualname.partition(".")
        if found or "." in rest:
            return found, []
        cls = next(
            (s for s in self.ctx.module.body if type(s) is cst.ClassDef and s.name.value == head),
            None,
        )
        if cls is None:
            return [], []
        name = rest or "__init__"
        method = self.find_method(cls, name)
        if method is not None:
            return [(method, True)], []
        return [], [f"{base}.{name}" for base in self.foreign_bases(cls)]
