"""The traced code of one module (SPEC §1), as rules and the run ask about it.

``find_traced(ctx)`` finds the roots (``roots.py``), follows what they reach
(``follow.py``) and returns one :class:`TracedCode`: a mapping from each traced function to
why it is traced, with the module's definitions (``model.definitions``) and the traced calls
into other modules.  ``run.dispatch`` stores it as ``ctx.traced`` before any rule runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from tflint_graph.core.facts import Outgoing
from tflint_graph.model.collect import FunctionNode, ModuleFacts
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.eager import TracingGuards
from tflint_graph.model.names import Resolution, dotted
from tflint_graph.model.setup import OneTimeSetup
from tflint_graph.model.tensors import tensors
from tflint_graph.traced.arguments import ArgumentGuards
from tflint_graph.traced.follow import Follower
from tflint_graph.traced.outgoing import OutgoingCalls
from tflint_graph.traced.roots import Search, find_roots


class TracedCode(dict[FunctionNode, TracedFunction]):
    """Every traced function of a module (``traced[fn]`` says why), and the questions about
    the module's definitions that rules ask next to it.

    A dict, so that the lookups every visited node makes (``fn in traced``,
    ``traced.get(fn)``) cost what a dict's do."""

    # What names and expressions of the module denote: ``model.definitions`` answers, and
    # its bound methods are set on each instance (rules ask per node; a forwarding method
    # would double the calls).
    resolve: Callable[[cst.BaseExpression], Resolution]
    """Qualified names of an expression, also through simple aliases of the module."""
    callables: Callable[
        [cst.BaseExpression | None, FunctionNode | None], Iterator[tuple[FunctionNode, bool]]
    ]
    """Functions of this module an expression evaluates to, with an autograph flag."""
    defined: Callable[[str], list[tuple[FunctionNode, bool]]]
    """The functions a module-level name (``normalize``, ``Trainer.step``) denotes."""
    methods_of: Callable[[cst.Attribute, FunctionNode | None], list[cst.FunctionDef]]
    """The methods of this module ``obj.name`` calls (``self.helper``, ``super().call``)."""
    attribute_values: Callable[
        [cst.Attribute, FunctionNode | None], list[tuple[cst.BaseExpression, FunctionNode | None]]
    ]
    """What ``self.x = ...`` assignments put in the attribute read, with their methods."""
    assigned_value: Callable[[cst.Name], cst.BaseExpression | None]
    """``value`` of a simple ``name = value``."""
    module_bases: Callable[[cst.ClassDef], list[cst.ClassDef]]
    """A class's bases defined in this module."""
    find_method: Callable[[cst.ClassDef, str], cst.FunctionDef | None]
    """A method of a class or of its bases in this module."""
    keras_kinds: Callable[[cst.ClassDef], frozenset[str]]
    """Which Keras bases (``model``, ``layer``, ``loss``, ``metric``) a class derives from."""
    keras_version: Callable[[cst.ClassDef], str]
    """``"2"`` or ``"3"``: the Keras a class runs under (``tf_keras`` bases are always 2)."""
    is_tf_function: Callable[[cst.BaseExpression], bool]
    """``tf.function`` itself (any spelling) or a configured project wrapper."""
    tf_function_options: Callable[[cst.BaseExpression], list[cst.Call] | None]
    """The calls configuring the tf.function an expression applies, or None."""
    is_dataset: Callable[[cst.BaseExpression], bool]
    """Plausibly a ``tf.data.Dataset``, and nothing says otherwise."""
    is_strategy: Callable[[cst.BaseExpression], bool]
    """A ``tf.distribute`` strategy, by name, construction or annotation."""

    def __init__(
        self,
        functions: dict[FunctionNode, TracedFunction],
        definitions: Definitions,
        outgoing: list[Outgoing],
        guards: TracingGuards | None = None,
    ) -> None:
        super().__init__(functions)
        self.definitions = definitions
        # Tests whose value is known while tracing (``model.eager``).
        self.guards = guards or TracingGuards(definitions)
        # What runs on the first trace only, by design (``model.setup``).
        self.setup = OneTimeSetup(definitions, self.guards)
        # Branches that what the traced callers pass rules out (``traced.arguments``).
        self.arguments = ArgumentGuards(definitions)
        # The module's defs, classes and calls, from one walk (``model.collect``).
        self.facts: ModuleFacts = definitions.facts
        # Traced calls into other modules of the run, for the project to follow.
        self.outgoing = outgoing
        for name in QUERIES:
            setattr(self, name, getattr(definitions, name))

    def self_is_fresh(self, fn: TracedFunction) -> bool:
        """``fn`` is a method that every traced call reaches through an object of the calling
        function's call (``registry = Registry(); registry.insert(...)``): its ``self`` is
        new on each trace, so its state cannot outlive it (``Definitions.self_is_fresh``)."""
        return self.definitions.self_is_fresh(fn)


QUERIES = (
    "resolve",
    "callables",
    "defined",
    "methods_of",
    "attribute_values",
    "assigned_value",
    "module_bases",
    "find_method",
    "keras_kinds",
    "keras_version",
    "is_tf_function",
    "tf_function_options",
    "is_dataset",
    "is_strategy",
)


def find_traced(ctx: ModuleContext) -> TracedCode:
    """Every traced function of the module, with the reason and chain."""
    definitions = Definitions(ctx)
    if _tf1_only(ctx.module):
        # The module cannot be imported under TensorFlow 2: none of its code is ever traced.
        return TracedCode({}, definitions, [])
    outgoing = OutgoingCalls(ctx, definitions)
    search = Search(ctx, definitions, outgoing)
    roots = find_roots(search)
    guards = TracingGuards(definitions)
    follower = Follower(ctx, definitions, search.escaped, outgoing, guards)
    follower.add_roots(roots)
    follower.add_external(ctx.view.roots)
    traced = TracedCode(follower.run(), definitions, outgoing.found, guards)
    ctx.traced = traced  # what the calls into other modules pass is judged with it
    outgoing.finish(
        traced.arguments.present,
        traced.setup.covers,
        traced.arguments.fresh_value,
        traced.arguments.truth,
        traced.arguments.ruled_out,
        lambda value, caller: tensors(ctx, caller).is_tensor(value),
    )
    return traced


def traced_of(ctx: ModuleContext) -> TracedCode:
    """``ctx.traced`` as the ``TracedCode`` ``find_traced`` made (it runs before any rule)."""
    traced = ctx.traced
    if not isinstance(traced, TracedCode):
        raise TypeError("find_traced(ctx) must run before anything asks for traced code")
    return traced


def _tf1_only(module: cst.Module) -> bool:
    """An unconditional top-level import of ``tensorflow.contrib``, which TensorFlow 2 no
    longer has (``from tensorflow.contrib import image``)."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None:
                name = dotted(small.module) or ""
            elif isinstance(small, cst.Import):
                name = next((dotted(a.name) or "" for a in small.names), "")
            else:
                continue
            if name == "tensorflow.contrib" or name.startswith("tensorflow.contrib."):
                return True
    return False
