"""Shared by TFG101/TFG107: trace-time diagnostics (SPEC §2), the prints and log calls that
are *meant* to run once per trace.

A message with no tensor value among its arguments that shows static metadata
(``x.shape``, ``x.dtype``, ``x.name``, ``x.shape.rank``, ``len(x.shape)``, the name of an
argument's type: ``type(opt).__name__``) or says it is
about tracing (``"tracing"``, ``"retracing"``, ``"traced"``) describes the trace itself:
``print("tracing", x.shape)`` is the documented way to see when a function traces.  Python
configuration the trace is built for (``self.units``, a literal default, an imported
constant, the items of a loop over ``self.blocks``, a helper's parameter that every traced
call passes such a value) may stand beside such metadata, and TFG107 lets a log message
show configuration alone.  A literal-only message (``print("step done")``) and a message
showing any other value (a ``range()`` counter, ``step``, something unknown) claim to run
per call and are still reported; so is one showing a tensor (``tf.shape(x)`` is a tensor).
Code that runs on the first trace only by design (one-time setup) may say anything without
a tensor value.

Each part of a message is read as one of :class:`Part`; the same reading decides whether an
``if`` around a warning is decided by static values (``if x.shape.rank != 4:``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from enum import Enum

import libcst as cst

from tflint_graph.checks.variable_creation import created_once
from tflint_graph.core.vocabulary import SETTINGS_CLASS
from tflint_graph.model import walk
from tflint_graph.model.calls import argument_passed, binds_self, passed_for
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import last_name
from tflint_graph.model.scopes import GlobalScope
from tflint_graph.model.tensors import holds_variable, is_variable_call, tensors
from tflint_graph.model.values import (
    assigned_value,
    attribute_values,
    calls_in,
    ends_in_exit,
    is_container_literal,
    module_constant,
    narrowing_types,
    sole_parameter,
)
from tflint_graph.traced import traced_of
from tflint_graph.traced.exports import exported_only

# Attributes every value TensorFlow traces with carries statically (a tensor, a variable, a
# TensorShape, a layer): reading them gives the same Python value on every call.
STATIC_ATTRIBUTES = frozenset({"shape", "dtype", "name", "ndim", "rank", "ndims", "device"})
# Attributes of a type (``type(opt).__name__``): a Python object argument retraces when it
# changes, so its type is fixed for each trace.
_TYPE_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__"})
# Methods that read static metadata (``x.get_shape()``, ``x.shape.as_list()``).
_STATIC_METHODS = frozenset({"get_shape", "as_list", "num_elements", "is_fully_defined"})
# Functions that apply a function to every item of a structure.
_PER_ITEM_MAPS = ("tensorflow.nest.map_structure", "tree.map_structure")
# Builtins that turn static metadata into another static value (``len(x.shape)``).
_STATIC_BUILTINS = frozenset({"len", "str", "repr", "tuple", "list", "int", "bool", "format"})
# Builtins whose result is as settled as their arguments (``float(idx)``, ``len(blocks)``,
# ``zip(self.blocks, rates)``).
_SETTLED_BUILTINS = frozenset(
    {"len", "str", "repr", "int", "float", "bool", "round", "abs", "min", "max", "sorted"}
    | {"enumerate", "zip", "reversed", "list", "tuple"}
)
# Modules whose classes hold tensors or arrays: `isinstance(x, tf.Tensor)` says nothing of
# a Python object.
_ARRAY_TYPES = ("tensorflow.", "keras.", "tf_keras.", "numpy.", "torch.", "jax.")
# How far up a chain of callees a parameter's value is followed.
_MAX_CHAIN = 8
# Builtins that test a value's type or attributes: decided while tracing.
_TYPE_TESTS = frozenset({"isinstance", "hasattr", "callable"})
# Python scalar types an `isinstance` test narrows a value to.
_SCALAR_TYPES = ("numbers.Real", "numbers.Number", "numbers.Integral", "numbers.Rational")
_SCALAR_BUILTINS = ("int", "float", "bool", "str")
# The methods where a class is set up once (Keras ``build``, ``__init__``).
_SETUP_METHODS = frozenset({"__init__", "build", "_build", "build_from_config"})
# "tracing", "retracing", "traced", "trace", "re-traced", and what the TF 1 era called it
# ("graph building time", "Building graph", "constructing the graph"): the message is about
# the trace.
_TRACE_WORD = re.compile(
    r"\b(?:(?:re-?)?trac(?:e|ed|es|ing)|graph[- ]?(?:building|construction)|"
    r"(?:build|construct)(?:s|ed|ing)?\s+(?:the\s+|a\s+)?graph)\b",
    re.IGNORECASE,
)
# Keywords of print/logging/warnings calls that carry the message (the others configure it).
MESSAGE_KEYWORDS = frozenset({"msg", "message"})


class Part(str, Enum):
    """What one part of a message (or of an ``if`` test) shows."""

    TENSOR = "tensor"  # a tensor value, or something interpolating one
    STATIC = "static"  # static metadata: x.shape, x.dtype, len(x.shape), isinstance(...)
    LITERAL = "literal"  # a literal written in the code
    CONFIG = "config"  # a Python setting: self.units, a literal default, a module constant
    OTHER = "other"  # anything else: may differ from call to call


def static_metadata(
    expr: cst.BaseExpression, is_builtin: Callable[[cst.Name, str], bool] | None = None
) -> bool:
    """``expr`` reads static metadata only, judged from its syntax: ``x.shape``,
    ``x.shape.rank``, ``x.shape[1]``, ``x.shape.as_list()``, ``x.get_shape()``,
    ``len(x.shape)``.  ``is_builtin(name, builtin)`` says whether a called name is that
    builtin (by default: spelled so)."""
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in _TYPE_ATTRIBUTES and _type_of(expr.value, is_builtin):
            return True
        return expr.attr.value in STATIC_ATTRIBUTES or static_metadata(expr.value, is_builtin)
    if isinstance(expr, cst.Subscript):
        return static_metadata(expr.value, is_builtin)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in _STATIC_METHODS or static_metadata(func.value, is_builtin)
        if isinstance(func, cst.Name) and func.value in _STATIC_BUILTINS and expr.args:
            builtin = is_builtin(func, func.value) if is_builtin else True
            return builtin and static_metadata(expr.args[0].value, is_builtin)
    return False


def _type_of(expr: cst.BaseExpression, is_builtin: Callable[[cst.Name, str], bool] | None) -> bool:
    """``type(x)`` (the builtin), or ``x.__class__``."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "__class__"
    if not isinstance(expr, cst.Call) or len(expr.args) != 1:
        return False
    func = expr.func
    if isinstance(func, cst.Name) and func.value == "type":
        return is_builtin(func, "type") if is_builtin else True
    return False


# Builtins that read a dict's keys (or their number) when given a dict.
_OVER_KEYS = ("sorted", "list", "tuple", "set", "len")


def _is_dict(expr: cst.BaseExpression | None) -> bool:
    if isinstance(expr, cst.Dict | cst.DictComp):
        return True
    return (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict"
    )


# Methods of `str` that a tensor does not have.
_STR_METHODS = frozenset(
    {"startswith", "endswith", "lower", "upper", "split", "strip", "replace", "isdigit"}
)


class _StringUses(walk.Visitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found or isinstance(node, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            owner = node.func.value
            if (
                isinstance(owner, cst.Name)
                and owner.value == self.name
                and node.func.attr.value in _STR_METHODS
            ):
                self.found = True
        elif isinstance(node, cst.Comparison) and _is_name(node.left, self.name):
            for target in node.comparisons:
                if isinstance(target.operator, cst.Equal | cst.NotEqual | cst.In | cst.NotIn):
                    self.found |= _strings(target.comparator)
        return True


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _strings(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString | cst.ConcatenatedString):
        return True
    if isinstance(expr, cst.Tuple | cst.List | cst.Set):
        return bool(expr.elements) and all(_strings(e.value) for e in expr.elements)
    return False


def _python_string(fn: FunctionNode, name: str) -> bool:
    """The body of ``fn`` uses ``name`` as a Python string: a ``str`` method on it, or a
    comparison with string literals."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    uses = _StringUses(name)
    for stmt in fn.body.body:
        uses.walk(stmt)
    return uses.found


def says_tracing(text: str) -> bool:
    """``text`` says it is about tracing ("tracing", "retraced", ...)."""
    return _TRACE_WORD.search(text) is not None


class MessageReader:
    """Reads the parts of messages within one traced function."""

    def __init__(self, ctx: ModuleContext, fn: TracedFunction) -> None:
        self.ctx = ctx
        self.fn = fn
        self.inference = tensors(ctx, fn)
        self.parts: set[Part] = set()
        self.texts: list[str] = []
        self._following: set[str] = set()

    def read_all(self, exprs: Iterable[cst.BaseExpression]) -> MessageReader:
        for expr in exprs:
            self.read(expr)
        return self

    def read(self, expr: cst.BaseExpression) -> None:
        """Adds what ``expr`` shows to ``self.parts`` (and its literal text to ``self.texts``)."""
        if isinstance(expr, cst.SimpleString):
            value = expr.evaluated_value
            if isinstance(value, str):
                self.texts.append(value)
            self.parts.add(Part.LITERAL)
        elif isinstance(expr, cst.ConcatenatedString):
            self.read(expr.left)
            self.read(expr.right)
        elif isinstance(expr, cst.FormattedString):
            self._read_fstring(expr.parts)
        elif isinstance(expr, cst.Tuple | cst.List):
            self.read_all(el.value for el in expr.elements)
        elif _literal(expr):
            self.parts.add(Part.LITERAL)
        elif self._is_format(expr):
            assert isinstance(expr, cst.Call)
            assert isinstance(expr.func, cst.Attribute)
            self.read(expr.func.value)
            self.read_all(arg.value for arg in expr.args)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
            self.read(expr.left)
            right = expr.right
            if isinstance(right, cst.Tuple | cst.Dict):
                self.read_all(el.value for el in right.elements)
            else:
                self.read(right)
        elif isinstance(expr, cst.UnaryOperation):
            self.read(expr.expression)
        elif isinstance(expr, cst.BooleanOperation):
            self.read(expr.left)
            self.read(expr.right)
        elif isinstance(expr, cst.BinaryOperation):
            self._read_compound(expr, [expr.left, expr.right])
        elif isinstance(expr, cst.Comparison) and _none_test(expr):
            # `mask is not None`: whether an argument was given is fixed for each trace (a
            # tensor is never None, and passing None instead retraces).
            self.parts.add(Part.STATIC)
        elif isinstance(expr, cst.Comparison):
            self._read_compound(expr, [expr.left, *(c.comparator for c in expr.comparisons)])
        else:
            part = self._part(expr)
            if part is not None:
                self.parts.add(part)

    def _read_fstring(self, parts: Iterable[cst.BaseFormattedStringContent]) -> None:
        self.parts.add(Part.LITERAL)
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                self.texts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression):
                self.read(part.expression)
                if part.format_spec is not None:
                    self._read_fstring(part.format_spec)

    def _read_compound(self, expr: cst.BaseExpression, operands: list[cst.BaseExpression]) -> None:
        if self.inference.is_tensor(expr):
            self.parts.add(Part.TENSOR)
        else:
            self.read_all(operands)

    @staticmethod
    def _is_format(expr: cst.BaseExpression) -> bool:
        """``"...".format(...)`` on a string literal."""
        return (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "format"
            and isinstance(expr.func.value, cst.SimpleString | cst.ConcatenatedString)
        )

    def _is_builtin(self, name: cst.Name, builtin: str) -> bool:
        return self.ctx.resolve(name).is_builtin(builtin)

    def _part(self, expr: cst.BaseExpression) -> Part | None:
        if static_metadata(expr, self._is_builtin):
            return Part.STATIC
        if self._static_per_item(expr):
            return Part.STATIC
        if isinstance(expr, cst.ListComp | cst.SetComp | cst.GeneratorExp) and static_metadata(
            expr.elt, self._is_builtin
        ):
            return Part.STATIC  # `[v.name for v in empty_grads]`: names, shapes, dtypes
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "keys"
            and not expr.args
        ):
            return Part.STATIC  # `features.keys()`: the names of a Python dict's entries
        if self._keys_of_a_dict(expr):
            return Part.STATIC  # `sorted(out)` with `out = {...}`: its keys, Python strings
        if isinstance(expr, cst.Name) and self._python_scalar_here(expr):
            # `if isinstance(rate, numbers.Real): ... log(rate)`: a Python number, which a
            # trace takes as part of its signature: the same on every call of this trace.
            return Part.STATIC
        if isinstance(expr, cst.Name) and self._string_parameter(expr):
            # `if dataset_name == "clean":`, `name.startswith("ood/")`: a Python string
            # argument, part of the trace's signature like a Python number.
            return Part.STATIC
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Name)
            and any(self._is_builtin(expr.func, test) for test in _TYPE_TESTS)
        ):
            return Part.STATIC
        if self.inference.may_be_tensor(expr) or holds_variable(self.ctx, self.fn, expr):
            return Part.TENSOR
        if self._size_of_local_container(expr):
            return Part.STATIC
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Name)
            and expr.args
            and any(self._is_builtin(expr.func, b) for b in _SETTLED_BUILTINS)
        ):
            # `float(idx)`, `len(self.blocks)`: as settled as what they are given.
            parts: set[Part] = set()
            for arg in expr.args:
                parts |= self._inner(arg.value)
            return _worst(parts)
        if isinstance(expr, cst.Call) and expr.args and self._math(expr.func):
            # `int(np.sqrt(length))` of a static length: arithmetic on what it is given.
            parts = set()
            for arg in expr.args:
                parts |= self._inner(arg.value)
            return _worst(parts)
        if isinstance(expr, cst.Name):
            return self._name_part(expr)
        if isinstance(expr, cst.Attribute):
            return self._attribute_part(expr)
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "get"
            and 1 <= len(expr.args) <= 2
            and all(a.keyword is None and not a.star for a in expr.args)
            and (self.ctx.resolve(expr.func.value).imported or self._in_settings(expr.func.value))
        ):
            # `CONF.specs.get(name)` of an imported configuration: a lookup, as settled as
            # the mapping, the key and the default (a dict of this module may be a counter)
            parts = self._inner(expr.func.value)
            for arg in expr.args:
                parts |= self._inner(arg.value)
            return _worst(parts)
        if isinstance(expr, cst.Subscript):
            # `node[0]` of a Python config entry: as settled as the container and the index
            parts = self._inner(expr.value)
            for element in expr.slice:
                index = element.slice
                if not isinstance(index, cst.Index):
                    return Part.OTHER
                parts |= self._inner(index.value)
            return _worst(parts)
        return Part.OTHER

    def _size_of_local_container(self, expr: cst.BaseExpression) -> bool:
        """``len(updates)`` of a list, dict or set this call makes (``updates = []``, filled
        while tracing): Python control flow sizes it, the same on every trace of the
        same signature, so the count describes how the graph was built."""
        if not (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Name)
            and self._is_builtin(expr.func, "len")
            and len(expr.args) == 1
            and isinstance(expr.args[0].value, cst.Name)
        ):
            return False
        found = self.ctx.bindings(expr.args[0].value)
        return bool(found) and all(
            self.ctx.enclosing_function(b.node) is self.fn.node
            and (value := assigned_value(self.ctx, b.node)) is not None
            and is_container_literal(self.ctx, value)
            for b in found
        )

    def _static_per_item(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """``tf.nest.map_structure(lambda x: list(x.shape), d)``: static metadata of every
        item of a structure; also through a local name bound to such a lambda (``shape =
        lambda d: tf.nest.map_structure(...)``, then ``shape(inputs)``)."""
        if not isinstance(expr, cst.Call) or depth > 2:
            return False
        func = expr.func
        if self.ctx.resolve(func).is_(*_PER_ITEM_MAPS):
            mapped = expr.args[0].value if expr.args else None
            return isinstance(mapped, cst.Lambda) and static_metadata(mapped.body, self._is_builtin)
        if isinstance(func, cst.Name):
            bound = self.ctx.bindings(func)
            value = assigned_value(self.ctx, bound[0].node) if len(bound) == 1 else None
            if isinstance(value, cst.Lambda):
                body = value.body
                return static_metadata(body, self._is_builtin) or self._static_per_item(
                    body, depth + 1
                )
        return False

    def _python_scalar_here(self, name: cst.Name) -> bool:
        """``name`` is read inside ``if isinstance(name, <Python scalar types>):``."""
        return any(
            all(
                self.ctx.resolve(t).is_(*_SCALAR_TYPES)
                or any(self.ctx.resolve(t).is_builtin(b) for b in _SCALAR_BUILTINS)
                for t in types
            )
            for types in narrowing_types(self.ctx, name, self.fn.node)
        )

    def _keys_of_a_dict(self, expr: cst.BaseExpression) -> bool:
        """``sorted(d)``, ``list(d)``, ``len(d)``... of a name every binding of which in
        this function is a Python dict (a display, a comprehension, ``dict(...)``)."""
        if not (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Name)
            and len(expr.args) == 1
            and any(self._is_builtin(expr.func, b) for b in _OVER_KEYS)
        ):
            return False
        arg = expr.args[0].value
        if _is_dict(arg):
            return True
        if not isinstance(arg, cst.Name):
            return False
        found = self.ctx.bindings(arg)
        values = [
            assigned_value(self.ctx, a.node, with_items=False)
            for a in found
            if self.ctx.enclosing_function(a.node) is self.fn.node
        ]
        if bool(found) and len(values) == len(found) and all(_is_dict(v) for v in values):
            return True
        return self._read_by_name(arg)

    def _read_by_name(self, name: cst.Name) -> bool:
        """The function reads ``name`` by string keys: ``features["age"]``, ``features[c]``
        for ``c`` over a list of strings, ``.get("age")``, ``.items()``: a Python dict of
        columns (a ``tf.data`` element), whose keys are fixed for the trace."""
        for node in walk.descendants(self.fn.node):
            if type(node) is cst.Subscript and isinstance(node.value, cst.Name):
                if node.value.value != name.value or len(node.slice) != 1:
                    continue
                index = node.slice[0].slice
                key = index.value if isinstance(index, cst.Index) else None
                if isinstance(key, cst.SimpleString) or (
                    isinstance(key, cst.Name) and self._over_strings(key)
                ):
                    return True
            elif (
                type(node) is cst.Call
                and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.value.value == name.value
                and node.func.attr.value in ("items", "keys", "get")
                and (
                    node.func.attr.value != "get"
                    or (node.args and isinstance(node.args[0].value, cst.SimpleString))
                )
            ):
                return True
        return False

    def _over_strings(self, name: cst.Name) -> bool:
        """``name`` is the target of a ``for`` or comprehension over a list of string
        literals (written there, or a name bound to one)."""
        for a in self.ctx.bindings(name):
            loop = self.ctx.parent(a.node)
            if not (isinstance(loop, cst.For | cst.CompFor) and loop.target is a.node):
                return False
            source = loop.iter
            if isinstance(source, cst.Name):
                values = [
                    assigned_value(self.ctx, b.node, with_items=False)
                    for b in self.ctx.bindings(source)
                ]
                if len(values) != 1 or values[0] is None:
                    return False
                source = values[0]
            if not (
                isinstance(source, cst.List | cst.Tuple)
                and source.elements
                and all(isinstance(e.value, cst.SimpleString) for e in source.elements)
            ):
                return False
        return bool(self.ctx.bindings(name))

    def _string_parameter(self, name: cst.Name) -> bool:
        """``name`` is a parameter of the traced function (or of one enclosing it, for a
        step function nested in a tf.function) that the code uses as a Python string (see
        ``_python_string``), and nothing rebinds it."""
        param = sole_parameter(self.ctx, name)
        if param is None:
            return False
        owner = self.ctx.parent(self.ctx.parent(param))
        if owner is not self.fn.node and not any(
            anc is owner for anc in self.ctx.ancestors(self.fn.node)
        ):
            return False
        return _python_string(self.fn.node, name.value) or (
            isinstance(owner, cst.FunctionDef) and _python_string(owner, name.value)
        )

    def _math(self, func: cst.BaseExpression) -> bool:
        """A NumPy or ``math`` function that computes from its arguments alone (not
        ``np.random.*``)."""
        res = self.ctx.resolve(func)
        return (
            bool(res.imported)
            and res.startswith("numpy.", "math.")
            and not res.startswith("numpy.random.")
        )

    def _name_part(self, name: cst.Name) -> Part | None:
        res = self.ctx.resolve(name)
        if res.imported and not res.local:
            return Part.CONFIG  # an imported constant, a builtin (UserWarning)
        constant = module_constant(self.ctx, name)
        if constant is not None:
            if _literal(constant) or _frozen_settings(self.ctx, name):
                return Part.CONFIG
            return Part.OTHER
        found = self.ctx.bindings(name)
        if not found:
            return Part.OTHER
        if name.value in self._following:
            # `p = 1.0 - p`: what the name holds is what its other bindings hold.
            return None
        parts: set[Part] = set()
        self._following.add(name.value)
        try:
            for a in found:
                node = a.node
                if isinstance(node, cst.Param):
                    parts.add(self._param_part(node))
                    continue
                if self.ctx.enclosing_function(node) is not self.fn.node:
                    return Part.OTHER
                if isinstance(self.ctx.parent(node), cst.AsName) and isinstance(
                    self.ctx.parent(self.ctx.parent(node)), cst.ExceptHandler
                ):
                    # `except TypeError as e`: a Python error of this trace, raised while
                    # tracing; it says the same on every call of it.
                    parts.add(Part.STATIC)
                    continue
                if self._dict_key(node):
                    parts.add(Part.CONFIG)  # a key of a dict the trace was handed
                    continue
                value = assigned_value(self.ctx, node, with_items=False)
                if value is None:
                    value = _paired_value(self.ctx, node)
                if value is None:
                    value = _loop_iterable(self.ctx, node)
                if value is None:
                    value = _unpacked_from_static(self.ctx, node, self._is_builtin)
                if value is None:
                    return Part.OTHER
                parts |= self._inner(value)
        finally:
            self._following.discard(name.value)
        return _worst(parts)

    def _dict_key(self, target: cst.CSTNode) -> bool:
        """``target`` takes the keys of a dict the function reads by key (``k`` in ``for k, v
        in features.items()``, ``for k in features``): Python strings, the structure of what
        the trace was handed, the same on every call that reuses it."""
        loop = self.ctx.parent(target)
        first = True
        if isinstance(loop, cst.Element):
            tuple_ = self.ctx.parent(loop)
            first = isinstance(tuple_, cst.Tuple) and tuple_.elements[0] is loop
            loop = self.ctx.parent(tuple_)
        if not (isinstance(loop, cst.For) and loop.asynchronous is None and first):
            return False
        iterable = loop.iter
        pairs = target is not loop.target
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
            method = iterable.func.attr.value
            if iterable.args or method != ("items" if pairs else "keys"):
                return False
            iterable = iterable.func.value
        elif pairs:
            return False
        return isinstance(iterable, cst.Name) and self._read_by_name(iterable)

    def _inner(self, expr: cst.BaseExpression, fn: TracedFunction | None = None) -> set[Part]:
        inner = MessageReader(self.ctx, fn or self.fn)
        if fn is None:
            inner._following = self._following
        inner.read(expr)
        return inner.parts

    def _param_part(self, param: cst.Param) -> Part:
        """A parameter of ``self.fn``: a Python setting when it has a literal default (a root's
        ``training=False``), or when every traced call of a callee passes settings."""
        if self.ctx.parent(self.ctx.parent(param)) is not self.fn.node:
            return Part.OTHER
        if self.inference.param_kind(param) is not None:
            return Part.OTHER
        default = param.default
        if self.fn.kind is TraceKind.DATASET and self.fn.parent is None:
            # Not an element (`partial(preprocess, policy=name)`): a Python value every
            # element of the pipeline shares, a setting the trace is built with.
            return Part.CONFIG
        if self.fn.kind is not TraceKind.CALLEE or self.fn.parent is None:
            return Part.CONFIG if default is not None and _literal(default) else Part.OTHER
        parent = self.fn.parent
        node = self.fn.node
        sites = list(traced_of(self.ctx).definitions.calls_in(parent.node, node))
        if not sites or len(self.fn.chain) > _MAX_CHAIN:
            return Part.OTHER  # passed as a value, or called elsewhere: do not guess
        parts: set[Part] = set()
        for call in sites:
            arg = passed_for(call, node.params, param, bound=binds_self(self.ctx, node, call.func))
            if arg is None:
                return Part.OTHER
            parts |= self._inner(arg, parent)
        part = _worst(parts)
        # A literal the caller passes is a setting the callee is traced with.
        return Part.CONFIG if part is Part.LITERAL else part

    def _attribute_part(self, attr: cst.Attribute) -> Part:
        if self.ctx.resolve(attr).imported:
            return Part.CONFIG  # tf.float32, logging.INFO, FLAGS.batch_size
        base = attr.value
        while isinstance(base, cst.Attribute):
            if holds_variable(self.ctx, self.fn, base):
                return Part.TENSOR
            attr, base = base, base.value
        if not (isinstance(base, cst.Name) and base.value in ("self", "cls")):
            if self._in_settings(base):
                return Part.CONFIG  # `CONF.data.batch_size` with `CONF = Config()`
            if isinstance(base, cst.Name) and self.fn.dataset_only and self._python_object(base):
                # A tf.data function traces once and every element reuses the trace, so a
                # Python object's settings read there are the same for every element.
                return Part.CONFIG
            return Part.OTHER
        if attr.attr.value in self._accumulated():
            return Part.OTHER  # `self.steps += 1`: a count, not a setting
        # `self.units`: configuration when only set up once (in __init__/build, or in the
        # class body) to a value that is no tensor.
        for value in attribute_values(self.ctx, attr, self.fn):
            where = self.ctx.enclosing_function(value)
            if where is not None and not (
                isinstance(where, cst.FunctionDef) and where.name.value in _SETUP_METHODS
            ):
                return Part.OTHER
            if isinstance(value, cst.Call) and self.ctx.resolve(value.func).startswith(
                "tensorflow.", "keras."
            ):
                return Part.OTHER
        return Part.CONFIG

    def _in_settings(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is the project's settings object or a part of it (``CONF.data.specs``),
        a module-level name bound once to ``Config()``."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return isinstance(expr, cst.Name) and _frozen_settings(self.ctx, expr)

    def _python_object(self, name: cst.Name, depth: int = 0) -> bool:
        """``name`` holds a Python object, no tensor: it is read under ``isinstance(name,
        Decoder)`` of a class that is not TensorFlow's, Keras's or NumPy's, or it is a callee's
        parameter that every traced call passes such an object (or one of its attributes)."""
        ctx = self.ctx
        for types in narrowing_types(ctx, name, self.fn.node):
            if types and not any(ctx.resolve(t).startswith(*_ARRAY_TYPES) for t in types):
                return True
        param = sole_parameter(ctx, name)
        if param is None:
            return False
        node = self.fn.node
        if ctx.parent(ctx.parent(param)) is not node or self.inference.param_kind(param):
            return False
        if self.fn.kind is not TraceKind.CALLEE or self.fn.parent is None or depth > _MAX_CHAIN:
            return False
        sites = traced_of(ctx).arguments.traced_callers(node)
        for caller, call in sites:
            arg = argument_passed(ctx, call, node, param)
            while isinstance(arg, cst.Attribute):
                arg = arg.value
            if not (
                isinstance(arg, cst.Name)
                and caller.dataset_only
                and MessageReader(ctx, caller)._python_object(arg, depth + 1)
            ):
                return False
        return bool(sites)

    def _accumulated(self) -> frozenset[str]:
        """Attributes of ``self`` that the class of ``self.fn`` updates in place."""
        node = self.fn.node
        cls = self.ctx.enclosing_class(node) if isinstance(node, cst.FunctionDef) else None
        if cls is None:
            return frozenset()
        return self.ctx.memo("accumulated-attributes", cls, lambda: _accumulated_in(cls))


def _accumulated_in(cls: cst.ClassDef) -> frozenset[str]:
    return frozenset(
        n.target.attr.value
        for n in walk.descendants(cls)
        if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Attribute)
    )


def _paired_value(ctx: ModuleContext, target: cst.CSTNode) -> cst.BaseExpression | None:
    """``b`` for ``a`` in ``a, b = b, c``: the value paired with a name in a tuple
    assignment from a display of the same length."""
    element = ctx.parent(target)
    targets = ctx.parent(element) if isinstance(element, cst.Element) else None
    holder = ctx.parent(targets) if isinstance(targets, cst.Tuple | cst.List) else None
    stmt = ctx.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not isinstance(stmt, cst.Assign) or not isinstance(targets, cst.Tuple | cst.List):
        return None
    value = stmt.value
    if not isinstance(value, cst.Tuple | cst.List) or len(value.elements) != len(targets.elements):
        return None
    if any(isinstance(e, cst.StarredElement) for e in (*value.elements, *targets.elements)):
        return None
    index = next(i for i, e in enumerate(targets.elements) if e is element)
    return value.elements[index].value


def _loop_iterable(ctx: ModuleContext, target: cst.CSTNode) -> cst.BaseExpression | None:
    """For the target of a Python ``for`` (``idx`` in ``for idx, b in enumerate(self.blocks)``):
    the iterable, unwrapped from builtins that keep its items (a loop over a Python sequence
    unrolls, so each pass has one value per trace); None otherwise."""
    loop = ctx.parent(target)
    while isinstance(loop, cst.Tuple | cst.List | cst.Element):
        loop = ctx.parent(loop)
    if not isinstance(loop, cst.For) or loop.asynchronous is not None:
        return None
    iterable = loop.iter
    while (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value in ("enumerate", "reversed")
        and iterable.args
    ):
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Call) and ctx.resolve(iterable.func).is_builtin("range"):
        # `for i in range(3)`: a counter of iterations, which a message shows as progress.
        return None
    return iterable


def _unpacked_from_static(
    ctx: ModuleContext, target: cst.CSTNode, is_builtin: Callable[[cst.Name, str], bool]
) -> cst.BaseExpression | None:
    """The static value ``target`` is unpacked from (``_, h, w, c = x.shape.as_list()``):
    each item of static metadata is static too."""
    node = ctx.parent(target)
    while isinstance(node, cst.Element | cst.StarredElement | cst.Tuple | cst.List):
        node = ctx.parent(node)
    if not isinstance(node, cst.AssignTarget):
        return None
    stmt = ctx.parent(node)
    if isinstance(stmt, cst.Assign) and static_metadata(stmt.value, is_builtin):
        return stmt.value
    return None


def _frozen_settings(ctx: ModuleContext, name: cst.Name) -> bool:
    """``name`` is bound once at module level to ``Config()``, ``TrainSettings(...)`` (the
    project's settings object, made at import), and nothing in the module changes it: no
    attribute or item of it is assigned (``CONF.epoch = epoch``), no method that changes a
    value is called on it (``CONF.lr.assign(...)``), and its class, when defined here, makes
    no variable.  What another module does to it this module cannot see."""
    value = module_constant(ctx, name)
    if not (isinstance(value, cst.Call) and SETTINGS_CLASS.search(last_name(value.func))):
        return False
    if name.value in ctx.memo("settings-changed", ctx.module, lambda: _changed_roots(ctx)):
        return False
    res = ctx.resolve(value.func)
    if res.local:
        for a in ctx.bindings(value.func) if isinstance(value.func, cst.Name) else ():
            cls = a.node
            if isinstance(cls, cst.ClassDef) and any(
                is_variable_call(ctx, c) for c in calls_in(cls.body)
            ):
                return False
    return True


# Methods that change what an object holds.
_CHANGING_METHODS = frozenset(
    {
        "assign",
        "assign_add",
        "assign_sub",
        "append",
        "extend",
        "insert",
        "update",
        "pop",
        "setdefault",
        "clear",
        "add",
        "remove",
        "discard",
        "popitem",
    }
)


def _changed_roots(ctx: ModuleContext) -> frozenset[str]:
    """Names whose attributes or items some statement of the module assigns, deletes or
    changes through a method (``CONF.epoch = 3``, ``CONF.data["k"] += 1``,
    ``CONF.lr.assign(x)``, ``setattr(CONF, ...)``)."""
    found: set[str] = set()
    for node in walk.descendants(ctx.module):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.AugAssign | cst.AnnAssign | cst.Del):
            targets = [node.target]
        elif isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _CHANGING_METHODS:
                targets = [func.value]
            elif isinstance(func, cst.Name) and func.value in ("setattr", "delattr") and node.args:
                targets = [node.args[0].value]
        for target in targets:
            if isinstance(target, cst.Name) and not isinstance(node, cst.Call):
                continue  # rebinding a name is not changing the object
            while isinstance(target, cst.Attribute | cst.Subscript):
                target = target.value
            if isinstance(target, cst.Name):
                found.add(target.value)
    return frozenset(found)


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.Tuple | cst.List):
        return all(_literal(el.value) for el in expr.elements)
    return isinstance(
        expr, cst.SimpleString | cst.ConcatenatedString | cst.Integer | cst.Float | cst.Imaginary
    )


def _none_test(expr: cst.Comparison) -> bool:
    """``x is None`` / ``x is not None`` on a name or attribute."""
    if len(expr.comparisons) != 1:
        return False
    target = expr.comparisons[0]
    return (
        isinstance(target.operator, cst.Is | cst.IsNot)
        and isinstance(target.comparator, cst.Name)
        and target.comparator.value == "None"
        and isinstance(expr.left, cst.Name | cst.Attribute)
    )


def _worst(parts: set[Part]) -> Part:
    for part in (Part.TENSOR, Part.OTHER, Part.STATIC, Part.CONFIG, Part.LITERAL):
        if part in parts:
            return part
    return Part.OTHER


def message_arguments(call: cst.Call) -> list[cst.BaseExpression]:
    """What a print/logging/warnings call shows: its positional arguments (the format and
    its values, a level, a category) and ``msg=``/``message=``."""
    return [
        arg.value
        for arg in call.args
        if arg.keyword is None or arg.keyword.value in MESSAGE_KEYWORDS
    ]


def is_trace_time_diagnostic(ctx: ModuleContext, call: cst.Call, fn: TracedFunction) -> bool:
    """``call`` (a print, a log call, ``warnings.warn``) is a trace-time diagnostic: no tensor
    value among its arguments, and it shows static metadata or says it is about tracing, or
    it is part of one-time setup."""
    if fn.parent is None and fn.input_signature is not None and exported_only(ctx, fn.node):
        return True  # traced once, to be saved, and never called from Python
    if under_trace_only_guard(ctx, call, fn):
        return True  # `if not tf.executing_eagerly(): print("traced with", x)`
    if _before_raise(ctx, call):
        return True  # `logger.error("shapes differ"); raise ValueError(...)`: the call fails
    reader = MessageReader(ctx, fn).read_all(message_arguments(call))
    if Part.TENSOR in reader.parts:
        return False
    if created_once(ctx, call, fn):
        return True
    if Part.OTHER in reader.parts:
        return False
    if Part.STATIC in reader.parts or any(says_tracing(t) for t in reader.texts):
        return True
    if Part.CONFIG not in reader.parts and not all(map(_heading, reader.texts)):
        return False  # `print("Running train step")`: a sentence claims an event per call
    return _in_static_dump(ctx, call, fn, heading=Part.CONFIG not in reader.parts)


# A banner or a heading, not a sentence: `=== INPUT DEBUG ===`, `-----`, `features:`.
_SEPARATOR = re.compile(r"[=\-*#~_]{3,}")


def _heading(text: str) -> bool:
    text = text.strip()
    return not text or text.endswith(":") or bool(_SEPARATOR.search(text))


def _in_static_dump(
    ctx: ModuleContext, call: cst.Call, fn: TracedFunction, *, heading: bool
) -> bool:
    """A print of literals or settings only (``print("=== INPUT DEBUG ===")``) that is part of
    a debug dump of static metadata: the run of prints around it shows static metadata and no
    tensor or per-call value, or it heads a loop whose body starts with such a run
    (``for name, col in inputs.items(): print(f"{name}:"); print(col.shape)``).  The banner
    and the keys belong to that one trace-time diagnostic; they claim nothing per call.  A
    literal-only print (``heading``) must come before static metadata, as a banner does: after
    it (``print(x.shape); print("step done")``) it still claims an event of every call."""
    line = ctx.parent(ctx.parent(call))
    block = ctx.parent(line)
    if not isinstance(block, cst.IndentedBlock | cst.Module) or _print_of(ctx, line) is not call:
        return False
    body = list(block.body)
    at = body.index(line)
    start = at
    while start > 0 and _print_of(ctx, body[start - 1]) is not None:
        start -= 1
    end = at + 1
    while end < len(body) and _print_of(ctx, body[end]) is not None:
        end += 1
    before = _dump_kinds(ctx, fn, body[start:at], call)
    after = _dump_kinds(ctx, fn, body[at + 1 : end], call)
    if end < len(body) and isinstance(body[end], cst.For):
        inner = body[end].body
        if isinstance(inner, cst.IndentedBlock):
            first = list(inner.body)
            stop = 0
            while stop < len(first) and _print_of(ctx, first[stop]) is not None:
                stop += 1
            after |= _dump_kinds(ctx, fn, first[:stop], call)
    if Part.TENSOR in before | after:
        return False
    return Part.STATIC in (after if heading else before | after)


def _print_of(ctx: ModuleContext, stmt: cst.CSTNode) -> cst.Call | None:
    """The ``print(...)`` call that is the whole of ``stmt``, if it is one."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    expr = stmt.body[0]
    value = expr.value if isinstance(expr, cst.Expr) else None
    if isinstance(value, cst.Call) and ctx.resolve(value.func).is_builtin("print"):
        return value
    return None


def _dump_kinds(
    ctx: ModuleContext, fn: TracedFunction, stmts: list[cst.BaseStatement], own: cst.Call
) -> set[Part]:
    """What the prints of ``stmts`` other than ``own`` show, each at its worst: ``TENSOR``
    (a tensor or a per-call value), ``STATIC`` metadata, or ``LITERAL`` (literals, settings)."""
    kinds: set[Part] = set()
    for stmt in stmts:
        call = _print_of(ctx, stmt)
        if call is None or call is own:
            continue
        parts = MessageReader(ctx, fn).read_all(message_arguments(call)).parts
        if parts & {Part.TENSOR, Part.OTHER}:
            kinds.add(Part.TENSOR)
        elif Part.STATIC in parts:
            kinds.add(Part.STATIC)
        else:
            kinds.add(Part.LITERAL)
    return kinds


# Flags that say a function runs eagerly (`model.run_eagerly`, `conf.train_eagerly`): where
# they are false the function was wrapped in a tf.function and is being traced.
_EAGER_FLAGS = frozenset(
    {
        "eager",
        "eagerly",
        "eager_mode",
        "run_eager",
        "run_eagerly",
        "train_eagerly",
        "execute_eagerly",
    }
)


def _eager_flag(expr: cst.BaseExpression) -> bool:
    name = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", "")
    return name in _EAGER_FLAGS


_MODE_TESTS = (
    "tensorflow.executing_eagerly",
    "tensorflow.inside_function",
    "tensorflow.compat.v1.executing_eagerly",
)


def _asks_execution_mode(ctx: ModuleContext, test: cst.BaseExpression) -> bool:
    """``test`` calls ``tf.executing_eagerly()``/``tf.inside_function()`` or a project helper
    (one that returns such a test): false in eager code, unlike a backend check, which holds
    in eager and traced code alike."""
    for node in (test, *walk.descendants(test)):
        if isinstance(node, cst.Call):
            res = ctx.resolve(node.func)
            if res.is_(*_MODE_TESTS) or not res.imported:
                return True
    return False


def under_trace_only_guard(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` lies in the body of an ``if`` whose test holds only while TensorFlow traces
    (``if not tf.executing_eagerly():``, ``if tf.inside_function():``, a project helper that
    returns such a test) or denies an eager-mode flag (``if not self.run_eagerly:``): the
    author asked for it to run at trace time, once per trace."""
    guards = traced_of(ctx).guards
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            return False
        if isinstance(anc, cst.If) and child is anc.body:
            test = anc.test
            if guards.value(test) is True and _asks_execution_mode(ctx, test):
                return True
            if (
                isinstance(test, cst.UnaryOperation)
                and isinstance(test.operator, cst.Not)
                and _eager_flag(test.expression)
            ):
                return True
        child = anc
    return False


_LEAVES = (cst.Return, cst.Break, cst.Continue)


def _before_raise(ctx: ModuleContext, call: cst.Call) -> bool:
    """``call`` is a statement after which the code goes on to a ``raise`` with nothing in
    between but the rest of its ``if``/``else`` branch (``if ...: logger.error(msg) else:
    logger.error(other)`` then ``raise AssertionError(msg)``): whether traced or not, the
    message goes out once and the call fails right after it."""
    node: cst.CSTNode | None = ctx.parent(call)
    if not isinstance(node, cst.Expr):
        return False
    node = ctx.parent(node)  # the SimpleStatementLine
    while node is not None:
        block = ctx.parent(node)
        if not isinstance(block, cst.IndentedBlock):
            return False
        body = list(block.body)
        at = next((i for i, s in enumerate(body) if s is node), len(body))
        rest = body[at + 1 :]
        if rest:
            # Plain statements, then a `raise` (`_id = path; raise RuntimeError(...)`).
            for stmt in rest:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    return False
                if any(isinstance(small, cst.Raise) for small in stmt.body):
                    return True
                if any(
                    isinstance(small, cst.Return | cst.Break | cst.Continue) for small in stmt.body
                ):
                    return False
            return False
        owner = ctx.parent(block)
        if isinstance(owner, cst.Else):
            owner = ctx.parent(owner)
        while isinstance(owner, cst.If) and isinstance(ctx.parent(owner), cst.If):
            owner = ctx.parent(owner)  # an `elif` is the `orelse` of the `if` above it
        if not isinstance(owner, cst.If):
            return False
        node = owner
    return False


def decided_statically(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` runs under an ``if`` (either branch) whose test reads static metadata and
    nothing that may change from call to call: ``if a.shape[-1] != b.shape[-1]:``,
    ``if x.shape.rank != 4:``, ``if isinstance(x, tf.RaggedTensor):``."""
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            return False
        if isinstance(anc, cst.If) and child is not anc.test:
            parts = MessageReader(ctx, fn).read_all([anc.test]).parts
            if Part.STATIC in parts and not parts & {Part.TENSOR, Part.OTHER}:
                return True
        child = anc
    return False


# Handlers of errors that can only come from Python while the trace is built.
_TRACE_TIME_ERRORS = ("builtins.ImportError", "builtins.ModuleNotFoundError")
# Python's own exceptions: in traced code only Python raises them, while tracing (TensorFlow
# raises its runtime errors, `tf.errors.*`, when the graph runs).
_PYTHON_ERRORS = (
    *_TRACE_TIME_ERRORS,
    "builtins.TypeError",
    "builtins.ValueError",
    "builtins.AttributeError",
    "builtins.KeyError",
    "builtins.IndexError",
    "builtins.NotImplementedError",
)


def in_python_error_handler(ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction) -> bool:
    """``node`` lies in an ``except`` handler of Python's own errors (``except TypeError:``
    around a call with ``training=``): it runs only while tracing, on a path the trace
    chose, so a message there is a trace-time diagnostic."""
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            return False
        if isinstance(anc, cst.ExceptHandler) and anc.type is not None:
            return _catches_python_errors(ctx, anc)
    return False


def _catches_python_errors(ctx: ModuleContext, handler: cst.ExceptHandler) -> bool:
    """``handler`` names Python's own errors only (``except (TypeError, KeyError):``)."""
    if handler.type is None:
        return False
    kinds = handler.type
    exprs = [el.value for el in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    return all(ctx.resolve(t).is_(*_PYTHON_ERRORS) for t in exprs)


def decided_when_tracing(
    ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction, depth: int = 0
) -> bool:
    """``node`` runs on a path chosen while the trace is built: under an ``if`` (either
    branch) whose test holds static metadata, Python settings or literals only (``if method
    is not None:``, ``if max_inputs > 0:``), after ``if <such a test>: return`` in the same
    block, in a handler of Python's own errors (``except ImportError:``), in the
    fallback ``getattr`` takes when an object lacks an attribute (``getattr(agent, "hook",
    lambda: logging.info("no hook"))()``), or in a helper that the traced caller calls only
    on such paths (``if augname.startswith("ft"): preprocess_for_finetune(...)``)."""
    child: cst.CSTNode = node
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            if isinstance(anc, cst.Lambda):
                return _getattr_fallback(ctx, anc)
            return _called_on_decided_paths(ctx, fn, depth)
        if isinstance(anc, cst.If | cst.IfExp | cst.While) and child is not anc.test:
            if not _settled(ctx, fn, anc.test):
                return False  # it depends on this call's values (AutoGraph traces it anyway)
            if not isinstance(anc, cst.While):
                return True
        elif isinstance(anc, cst.ExceptHandler) and _catches_python_errors(ctx, anc):
            return True
        elif isinstance(anc, cst.IndentedBlock):
            for stmt in anc.body:
                if stmt is child:
                    break
                if (
                    isinstance(stmt, cst.If)
                    and stmt.orelse is None
                    and ends_in_exit(stmt.body)
                    and _settled(ctx, fn, stmt.test)
                ):
                    return True
        child = anc
    return False


def _called_on_decided_paths(ctx: ModuleContext, fn: TracedFunction, depth: int) -> bool:
    """Callee ``fn`` is called from its traced caller only on paths decided while tracing."""
    parent = fn.parent
    if fn.kind is not TraceKind.CALLEE or parent is None or depth >= _MAX_CHAIN:
        return False
    sites = list(traced_of(ctx).definitions.calls_in(parent.node, fn.node))
    return bool(sites) and all(decided_when_tracing(ctx, s, parent, depth + 1) for s in sites)


def _getattr_fallback(ctx: ModuleContext, fn: cst.Lambda) -> bool:
    arg = ctx.parent(fn)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and len(call.args) == 3
        and call.args[2] is arg
        and ctx.resolve(call.func).is_("builtins.getattr")
    )


def _settled(ctx: ModuleContext, fn: TracedFunction, test: cst.BaseExpression) -> bool:
    """``test`` has one value for each trace: no tensor in it, and no Python state that
    changes without a retrace (an attribute the class counts up, a global some code
    rebinds).  A Python argument may change, but a new value makes a new trace."""
    reader = MessageReader(ctx, fn).read_all([test])
    if not reader.parts or Part.TENSOR in reader.parts:
        return False
    counted = reader._accumulated()
    for node in (test, *walk.descendants(test)):
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in ("self", "cls")
            and node.attr.value in counted
        ):
            return False
        if isinstance(node, cst.Name):
            found = ctx.bindings(node)
            if len(found) > 1 and any(isinstance(a.scope, GlobalScope) for a in found):
                return False
    return True
