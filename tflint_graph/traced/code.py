"""The traced code of one module (SPEC §1), as rules and the run ask about it.

``find_traced(ctx)`` finds the roots (``roots.py``), follows what they reach
(``follow.py``) and returns one :class:`TracedCode`: a mapping from each traced function to
why it is traced, with the module's definitions (``model.definitions``) and the traced calls
into other modules.  ``run.dispatch`` stores it as ``ctx.traced`` before any rule runs.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView

import libcst as cst

from tflint_graph.core.facts import Outgoing
from tflint_graph.model.collect import FunctionNode, ModuleFacts
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.names import Resolution
from tflint_graph.traced.follow import Follower
from tflint_graph.traced.outgoing import OutgoingCalls
from tflint_graph.traced.roots import Search, find_roots


class TracedCode(Mapping[FunctionNode, TracedFunction]):
    """Every traced function of a module (``traced[fn]`` says why), and the questions about
    the module's definitions that rules ask next to it."""

    def __init__(
        self,
        functions: dict[FunctionNode, TracedFunction],
        definitions: Definitions,
        outgoing: list[Outgoing],
    ) -> None:
        self.functions = functions
        self.definitions = definitions
        # The module's defs, classes and calls, from one walk (``model.collect``).
        self.facts: ModuleFacts = definitions.facts
        # Traced calls into other modules of the run, for the project to follow.
        self.outgoing = outgoing

    # -- the mapping ---------------------------------------------------------------------
    def __getitem__(self, fn: FunctionNode) -> TracedFunction:
        return self.functions[fn]

    def __iter__(self) -> Iterator[FunctionNode]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def __contains__(self, fn: object) -> bool:
        return fn in self.functions

    # The dict's own views and lookups: the dispatcher asks once per visited node, and the
    # mixins' versions (a KeyError per miss) cost more than the rest of that lookup.
    def get(self, fn: FunctionNode, default: TracedFunction | None = None) -> TracedFunction | None:  # type: ignore[override]
        return self.functions.get(fn, default)

    def keys(self) -> KeysView[FunctionNode]:
        return self.functions.keys()

    def values(self) -> ValuesView[TracedFunction]:
        return self.functions.values()

    def items(self) -> ItemsView[FunctionNode, TracedFunction]:
        return self.functions.items()

    # -- what names and expressions denote (see ``model.definitions``) ------------------
    def resolve(self, expr: cst.BaseExpression) -> Resolution:
        """Qualified names of ``expr``, also through simple aliases of the module."""
        return self.definitions.resolve(expr)

    def callables(
        self, expr: cst.BaseExpression | None, at: FunctionNode | None
    ) -> Iterator[tuple[FunctionNode, bool]]:
        """Functions of this module ``expr`` evaluates to, with an autograph flag."""
        return self.definitions.callables(expr, at)

    def defined(self, qualname: str) -> list[tuple[FunctionNode, bool]]:
        """The functions a module-level name (``normalize``, ``Trainer.step``) denotes."""
        return self.definitions.defined(qualname)

    def methods_of(self, expr: cst.Attribute, at: FunctionNode | None) -> list[cst.FunctionDef]:
        return self.definitions.methods_of(expr, at)

    def attribute_values(
        self, expr: cst.Attribute, at: FunctionNode | None
    ) -> list[tuple[cst.BaseExpression, FunctionNode | None]]:
        return self.definitions.attribute_values(expr, at)

    def assigned_value(self, target: cst.Name) -> cst.BaseExpression | None:
        return self.definitions.assigned_value(target)

    def module_bases(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        return self.definitions.module_bases(cls)

    def find_method(self, cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
        return self.definitions.find_method(cls, name)

    def keras_kinds(self, cls: cst.ClassDef) -> frozenset[str]:
        return self.definitions.keras_kinds(cls)

    def is_tf_function(self, expr: cst.BaseExpression) -> bool:
        return self.definitions.is_tf_function(expr)

    def tf_function_options(self, expr: cst.BaseExpression) -> list[cst.Call] | None:
        return self.definitions.tf_function_options(expr)

    def is_dataset(self, expr: cst.BaseExpression) -> bool:
        return self.definitions.is_dataset(expr)

    def is_strategy(self, expr: cst.BaseExpression) -> bool:
        return self.definitions.is_strategy(expr)


def find_traced(ctx: ModuleContext) -> TracedCode:
    """Every traced function of the module, with the reason and chain."""
    definitions = Definitions(ctx)
    outgoing = OutgoingCalls(ctx, definitions)
    search = Search(ctx, definitions, outgoing)
    roots = find_roots(search)
    follower = Follower(ctx, definitions, search.escaped, outgoing)
    follower.add_roots(roots)
    follower.add_external(ctx.view.roots)
    return TracedCode(follower.run(), definitions, outgoing.found)


def traced_of(ctx: ModuleContext) -> TracedCode:
    """``ctx.traced`` as the ``TracedCode`` ``find_traced`` made (it runs before any rule)."""
    traced = ctx.traced
    if not isinstance(traced, TracedCode):
        raise TypeError("find_traced(ctx) must run before anything asks for traced code")
    return traced
