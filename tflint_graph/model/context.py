"""Per-module analysis state shared by traced-code discovery and the rules.

One parse, one metadata pass: positions, parents, scopes and qualified names are resolved
at most once per module (positions and parents when first asked for) and every rule reads
them from here.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from tflint_graph.core.config import Config
from tflint_graph.core.facts import ProjectView, RemoteFinding, TraceKind
from tflint_graph.core.vocabulary import canonical
from tflint_graph.model import walk
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.names import Resolution, Resolver
from tflint_graph.model.positions import Positions, Snippets
from tflint_graph.model.scopes import Assignment, ModuleScopes, Scope
from tflint_graph.source.fromast import is_built

T = TypeVar("T")


@dataclass(eq=False)
class TracedFunction:
    """A function whose Python body TensorFlow runs symbolically, and why."""

    node: FunctionNode
    display: str  # "step()" or "lambda (line 12)"
    kind: TraceKind
    reason: str  # "decorated with @tf.function", "called from step()", ...
    chain: tuple[str, ...]
    autograph: bool = True
    input_signature: cst.BaseExpression | None = None
    parent: TracedFunction | None = field(default=None, repr=False)
    # Why AutoGraph leaves the body alone when Keras decides it ("Keras 3 does not
    # AutoGraph-convert Layer.call() or the plain functions it calls"); "" otherwise.
    unconverted: str = field(default="", repr=False)
    # Traced functions of other modules that call this one ("step() in train.py").
    callers_elsewhere: list[str] = field(default_factory=list, repr=False)
    # For a function other modules' traced code calls: per such call, the arguments it passes
    # a value that is not None (``ExternalRoot.passed``).
    passed_elsewhere: tuple[frozenset[str], ...] | None = field(default=None, repr=False)
    # Every call from other modules is one-time setup there (``ExternalRoot.setup``).
    setup_elsewhere: bool = field(default=False, repr=False)
    # Every call from other modules is made on an object the caller constructs
    # (``ExternalRoot.fresh``).
    fresh_elsewhere: bool = field(default=False, repr=False)
    # AutoGraph features its tf.function turns on (``BUILTIN_FUNCTIONS``, ``ALL``...), which
    # AutoGraph applies to the callees it converts too.
    autograph_features: frozenset[str] = field(default=frozenset(), repr=False)
    # The traced calls of this module that reach it, with the function making each; None
    # when traced code also reaches it some other way (handed on, constructed, a root).
    sites: list[tuple[cst.Call, TracedFunction]] | None = field(default=None, repr=False)

    @property
    def dataset_only(self) -> bool:
        """Traced for a ``Dataset`` transformation only (its root is one, and no other
        module's traced code calls it): tf.data traces it once and runs the graph for every
        element, which shares every Python value but the element itself."""
        root = self
        while root.parent is not None:
            root = root.parent
        return root.kind is TraceKind.DATASET and not self.callers_elsewhere

    @property
    def where(self) -> str:
        """How messages name this function: ``augment() (traced via step() -> augment())``."""
        if len(self.chain) > 1:
            return f"{self.display} (traced via {' -> '.join(self.chain)})"
        return self.display


class Prepared:
    """What an analysis learns from the tree alone (no view or configuration plays a part):
    the tree's index, its scopes and name resolutions.  The engine keeps it with a tree it
    remembers, for the module's next analysis."""

    def __init__(self, module: cst.Module) -> None:
        self.index = walk.Index(module)
        self.scopes = ModuleScopes(module)
        self.resolver = Resolver(self.scopes.qualified_names)

    @property
    def tree(self) -> cst.Module:
        """The tree it was prepared from."""
        return self.index.root

    def release(self) -> None:
        """Break its reference cycles (see ``ModuleScopes.release``); unusable after."""
        self.scopes.release()
        self.index.release()


class ModuleContext:
    """Everything rules may ask about one parsed module."""

    def __init__(
        self,
        path: str,
        source: str,
        module: cst.Module,
        config: Config,
        view: ProjectView | None = None,
        prepared: Prepared | None = None,
    ) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.config = config
        # What the rest of the run says about this module (empty for a lone source).
        self.view = view or ProjectView()
        # CPython's tree of the same source, when the engine has one (positions use it).
        self.python_tree: ast.Module | None = None
        # One walk first: every later walk reads children from it (see ``walk.Index``);
        # parents leave formatting nodes out (no rule asks about them).  Scopes and qualified
        # names serve every question traced-code discovery asks; positions are resolved on
        # first use (a module without traced code or findings may never need them).
        # ``prepared`` comes from an earlier analysis of the same tree.
        self.prepared = prepared or Prepared(module)
        # A context dropped without ``release`` (the library's callers) lets go of what it
        # prepared when it is collected.
        self._finalizer = weakref.finalize(self, self.prepared.index.release)
        if prepared is not None:
            self._finalizer.detach()
        self._index = self.prepared.index
        self._parents = self._index.parents
        self._order = self._index.order
        self._scopes = self.prepared.scopes
        self.resolver = self.prepared.resolver
        if self.view.aliases:
            self._aliased: dict[cst.CSTNode, Resolution] = {}
            self.resolve = self._resolve_aliased  # type: ignore[method-assign]
        # Which functions are traced: ``traced.find_traced`` sets its ``TracedCode`` here
        # before any rule runs (``traced.traced_of`` gives it with its queries).
        self.traced: Mapping[FunctionNode, TracedFunction] = {}
        self._memo: dict[tuple[str, cst.CSTNode], Any] = {}
        # Findings about functions of other modules (see ``Rule.report_elsewhere``).
        self.remote: list[RemoteFinding] = []
        # Accessors whose eager callers only other modules can show (``model.state``).
        self.asked_accessors: set[str] = set()
        # Names looked up in ``view.tracing_values`` (``ModuleSummary.asked_tracing``).
        self.asked_tracing: set[str] = set()

    def release(self, keep_prepared: bool = False) -> Prepared | None:
        """Forget everything: the analysis holds reference cycles (scopes, the traced code
        and the inferences that point back here), broken here so that memory comes back
        without cyclic garbage collection.  Nothing may be asked afterwards.  With
        ``keep_prepared`` the tree's ``Prepared`` survives and is returned (its owner must
        release it)."""
        prepared: Prepared | None = self.prepared
        self._finalizer.detach()
        if not keep_prepared:
            self.prepared.release()
            prepared = None
        self.__dict__.clear()
        return prepared

    def memo(self, kind: str, node: cst.CSTNode, compute: Callable[[], T]) -> T:
        """Compute a per-node fact once per module (rules ask the same questions often)."""
        key = (kind, node)
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    def cpython_tree(self) -> ast.Module:
        """CPython's tree of the source: the engine's, else parsed now (empty when CPython
        rejects the source), for the facts read from it (``prefilter``)."""
        if self.python_tree is not None:
            return self.python_tree
        return self._parsed_by_cpython

    @cached_property
    def _parsed_by_cpython(self) -> ast.Module:
        try:
            return ast.parse(self.source)
        except (SyntaxError, ValueError):
            return ast.Module(body=[], type_ignores=[])

    # -- metadata ---------------------------------------------------------------------
    @cached_property
    def _positions(self) -> Positions:
        # A tree built from CPython's has no formatting: libcst parses the statements asked about.
        kind = Snippets if is_built(self.module) else Positions
        return kind(self.module, self.source, self._parents, self.python_tree)

    def nodes_in_order(self) -> list[cst.CSTNode]:
        """Every semantic node of the module, ranked as ``source_order`` ranks them."""
        return list(self._order)

    def spells(self, identifier: str) -> bool:
        """Whether ``identifier`` is a name anywhere in the module (a variable, an attribute,
        a part of an import).  The text answers No for most modules without a walk; text
        outside ASCII may spell it another way (CPython normalises identifiers)."""
        if self.source.isascii() and identifier not in self.source:
            return False
        return any(type(n) is cst.Name and n.value == identifier for n in self._order)  # type: ignore[attr-defined]

    def source_order(self, node: cst.CSTNode) -> int:
        """Sorts nodes as their start positions would, without computing positions."""
        return self._order[node]

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._positions[node]

    def line(self, node: cst.CSTNode) -> int:
        """``position(node).start.line``, cheaper for a statement such as a def."""
        return self._positions.start_line(node)

    def end_line(self, node: cst.CSTNode) -> int:
        """``position(node).end.line``, cheaper for a statement such as a def."""
        return self._positions.end_line(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self._parents.get(node)
        while parent is not None:
            yield parent
            parent = self._parents.get(parent)

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """``container`` is an ancestor of ``node``."""
        return any(anc is container for anc in self.ancestors(node))

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self._scopes.scope(node)

    def resolve(self, node: cst.BaseExpression) -> Resolution:
        return self.resolver.resolve(node)

    def _resolve_aliased(self, node: cst.BaseExpression) -> Resolution:
        """``resolve``, with the view's re-exported modules read as what they are."""
        cached = self._aliased.get(node)
        if cached is None:
            res = self.resolver.resolve(node)
            names = {_unalias(n, self.view.aliases) for n in res.imported}
            cached = self._aliased[node] = Resolution(frozenset(names), res.local)
        return cached

    def code(self, node: cst.CSTNode) -> str:
        """The source of ``node`` as libcst writes it; a statement's code starts at the
        statement (the comments and blank lines above it are not its own)."""
        positions = self._positions
        if isinstance(positions, Snippets):
            return positions.code(node)
        if getattr(node, "leading_lines", None):
            node = node.with_changes(leading_lines=())
        return self.module.code_for_node(node)

    # -- structure --------------------------------------------------------------------
    def enclosing_function(self, node: cst.CSTNode) -> FunctionNode | None:
        """The innermost def or lambda whose *body* contains ``node``."""
        child = node
        for parent in self.ancestors(node):
            if type(parent) is cst.FunctionDef and child is parent.body:
                return parent
            if type(parent) is cst.Lambda and child is parent.body:
                return parent
            child = parent
        return None

    def enclosing_class(self, fn: cst.FunctionDef) -> cst.ClassDef | None:
        """The class whose body defines ``fn`` directly (so ``fn`` is a method)."""
        block = self.parent(fn)
        owner = self.parent(block) if block is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def bindings(self, name: cst.Name) -> list[Assignment]:
        """Non-import, non-builtin bindings visible where ``name`` is used."""
        scope = self.scope(name)
        if scope is None:
            return []
        return [a for a in scope[name.value] if isinstance(a, Assignment)]

    def function_scope(self, fn: FunctionNode) -> Scope | None:
        """The scope of a function's own body (its locals and parameters)."""
        if isinstance(fn, cst.FunctionDef):
            body = fn.body.body
            if body:
                return self.scope(body[0])
            return None
        return self.scope(fn.body)

    def is_local_to(self, name: cst.Name, fn: FunctionNode) -> bool:
        """``name`` is bound only in ``fn``'s own scope and not as one of its parameters."""
        own = self.function_scope(fn)
        found = self.bindings(name)
        return bool(found) and all(
            a.scope is own and not isinstance(a.node, cst.Param) for a in found
        )

    @cached_property
    def mentions_keras_eager(self) -> bool:
        """``run_eagerly=True`` anywhere: Keras steps may run eagerly, so do not guess."""
        return "run_eagerly" in self.source


def _unalias(name: str, aliases: dict[str, str]) -> str:
    for alias, target in aliases.items():
        if name == alias or name.startswith(alias + "."):
            return canonical(target + name[len(alias) :])
    return name
