"""Name resolution: what a name or dotted expression in the source really refers to.

Built on libcst's scope analysis, so shadowing follows Python's rules: a parameter or local
called ``print`` is not the builtin, ``from mylib import random`` is not the stdlib, and a
name bound by both an import and an assignment (``try: import tensorflow as tf / except
ImportError: tf = None``) keeps every binding.  Every TensorFlow/Keras spelling is mapped to
one canonical dotted name, so rules compare against ``tensorflow.function`` or
``keras.Model`` and never care how the module imported them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from tflint_graph.core.vocabulary import canonical, keras2_only, keras_kinds_of
from tflint_graph.model.scopes import Source


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of plain attribute accesses on a name, else None."""
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def last_name(func: cst.BaseExpression) -> str:
    """The name a call's function is spelt with last: ``save`` of ``np.save`` and of
    ``saver.save``, ``open`` of ``open``; "" for anything else (``f()()``, ``fns[0]``)."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def root_name(node: cst.BaseExpression) -> cst.Name | None:
    """The leftmost name of ``a.b.c`` (or of ``a.b[0].c()``), if there is one."""
    while True:
        if isinstance(node, cst.Name):
            return node
        if isinstance(node, cst.Attribute | cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return None


@dataclass(frozen=True, slots=True)
class Resolution:
    """What an expression may refer to.

    ``imported`` holds canonical names of imports and builtins (``tensorflow.function``,
    ``builtins.print``); ``local`` is true when some binding of the root name is an ordinary
    assignment, parameter, def or class of the analysed code.
    """

    imported: frozenset[str]
    local: bool
    # Some import binding is a Keras-2-only spelling (``tf_keras.layers.Layer``,
    # ``keras.engine.base_layer.Layer``), which canonical names no longer show (SPEC §1).
    keras2: bool = False

    def is_(self, *targets: str) -> bool:
        """Any import binding is one of ``targets`` (``try/except ImportError`` keeps both)."""
        return bool(self.imported) and not self.imported.isdisjoint(targets)

    def startswith(self, *prefixes: str) -> bool:
        return any(name.startswith(prefixes) for name in self.imported)

    def is_builtin(self, name: str) -> bool:
        """The builtin ``name`` and nothing else: a local or imported rebinding disqualifies."""
        return not self.local and self.imported == {f"builtins.{name}"}


_NOTHING = Resolution(frozenset(), False)


class Resolver:
    """Resolves names and attribute chains from the module's qualified names
    (``scopes.ModuleScopes.qualified_names``)."""

    def __init__(self, qualified: Callable[[cst.CSTNode], set[tuple[str, Source]]]) -> None:
        self._qualified = qualified
        self._cache: dict[cst.CSTNode, Resolution] = {}

    def resolve(self, node: cst.BaseExpression) -> Resolution:
        """Resolve ``name`` or ``name.attr.attr``; anything else resolves to nothing."""
        cached = self._cache.get(node)
        if cached is not None:
            return cached
        result = _NOTHING
        path = dotted(node)
        if path is not None:
            _head, _, tail = path.partition(".")
            base = root_name(node)
            assert base is not None
            imported: set[str] = set()
            local = keras2 = False
            for name, source in self._qualified(base):
                if source is not Source.LOCAL:
                    full = f"{name}.{tail}" if tail else name
                    spelt = canonical(full)
                    imported.add(spelt)
                    # Every Keras-2-only spelling is canonically `keras.*`: most names
                    # (`tf.reduce_sum`) are spared the check.
                    if spelt.startswith("keras."):
                        keras2 = keras2 or keras2_only(full)
                else:
                    local = True
            result = Resolution(frozenset(imported), local, keras2)
        self._cache[node] = result
        return result

    def call_target(self, call: cst.Call) -> Resolution:
        return self.resolve(call.func)


__all__ = ["Resolution", "Resolver", "canonical", "dotted", "keras_kinds_of", "root_name"]
