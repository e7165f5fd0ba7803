"""Scopes, bindings and qualified names of one module, in one pass over the tree.

This answers the same questions as libcst's ``ScopeProvider`` and ``QualifiedNameProvider``
(and follows their rules, including where they simplify Python: a walrus binds in the
comprehension, string annotations are not parsed), but builds everything in a single walk
that skips formatting nodes.  libcst's providers need three full visitor passes
(expression context, scopes, qualified names); on TensorFlow modules those passes were
most of the analysis time.  ``tests/model/test_scopes.py`` compares both over real code.

Vocabulary (as in libcst): a scope maps a name to its *assignments* (``scope[name]``: every
binding the name may have there, parents consulted as Python does); an *access* is a load
of a name, linked to the assignments it may read (``referents``) and they to it
(``references``).
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Iterator
from enum import Enum

import libcst as cst

from tflint_graph.model.walk import children


class Source(Enum):
    IMPORT = "import"
    BUILTIN = "builtin"
    LOCAL = "local"


class Access:
    """A load (or ``del``) of a name."""

    __slots__ = ("index", "node", "referents", "scope")

    def __init__(self, node: cst.Name, scope: Scope) -> None:
        self.node: cst.Name | cst.Attribute = node
        self.scope = scope
        self.index = scope.count
        self.referents: set[BaseAssignment] = set()


class BaseAssignment:
    index = -1

    def __init__(self, name: str, scope: Scope) -> None:
        self.name = name
        self.scope = scope
        self.references: set[Access] = set()

    def record_accesses(self, accesses: set[Access]) -> None:
        later = {a for a in accesses if a.scope is not self.scope or self.index < a.index}
        self.references |= later
        earlier = accesses - later
        if earlier and self.scope.parent is not self.scope:
            # Loads before this binding read whatever the enclosing scope binds.
            for shadowed in self.scope.parent[self.name]:
                shadowed.record_accesses(earlier)

    def qualified_names(self, full_name: str) -> set[tuple[str, Source]]:
        raise NotImplementedError


class Assignment(BaseAssignment):
    """A binding made by the analysed code: the node is a ``Name`` target, a ``Param``, a
    ``FunctionDef``/``ClassDef``, or (for imports) the ``Import``/``ImportFrom``."""

    def __init__(self, name: str, scope: Scope, node: cst.CSTNode, index: int) -> None:
        super().__init__(name, scope)
        self.node = node
        self.index = index

    def qualified_names(self, full_name: str) -> set[tuple[str, Source]]:
        return {(full_name, Source.LOCAL)}


class ImportAssignment(Assignment):
    def qualified_names(self, full_name: str) -> set[tuple[str, Source]]:
        """What ``full_name`` (a dotted name starting with this binding) imports."""
        node = self.node
        assert isinstance(node, cst.Import | cst.ImportFrom)
        module = ""
        if isinstance(node, cst.ImportFrom):
            if node.module is not None:
                module = full_name_of(node.module) or ""
            module = "." * len(node.relative) + module
        if isinstance(node.names, cst.ImportStar):
            return set()
        found: set[tuple[str, Source]] = set()
        for alias in node.names:
            real = full_name_of(alias.name)
            if not real:
                continue
            parts = real.split(".")
            for i in range(len(parts), 0, -1):
                imported = ".".join(parts[:i])
                bound = imported
                if module.endswith("."):
                    imported = module + imported
                elif module:
                    imported = f"{module}.{imported}"
                if alias.asname is not None:
                    bound = alias.evaluated_alias or bound
                if full_name.startswith(bound):
                    rest = full_name[len(bound) :]
                    if rest and not rest.startswith("."):
                        continue
                    rest = rest.lstrip(".")
                    found.add((f"{imported}.{rest}" if rest else imported, Source.IMPORT))
                    break
        return found


class BuiltinAssignment(BaseAssignment):
    def qualified_names(self, full_name: str) -> set[tuple[str, Source]]:
        return {(f"builtins.{self.name}", Source.BUILTIN)}


class Scope:
    """A namespace: module, function (or lambda), class or comprehension."""

    node: cst.CSTNode | None = None

    def __init__(self, parent: Scope | None, node: cst.CSTNode | None = None) -> None:
        self.parent: Scope = parent if parent is not None else self
        self.globals: Scope = self.parent.globals if parent is not None else self
        self.node = node
        self.count = 0  # assignment-like statements left so far: orders loads and bindings
        self._assignments: dict[str, set[BaseAssignment]] = defaultdict(set)
        self._overwrites: dict[str, Scope] = {}
        self.accesses: dict[str, set[Access]] = defaultdict(set)
        self._by_node: dict[cst.CSTNode, set[Access]] = {}

    def declared_outer(self) -> set[str]:
        """Names this scope declares ``global`` or ``nonlocal``."""
        return set(self._overwrites)

    # -- building ---------------------------------------------------------------------
    def _target(self, name: str) -> Scope:
        if name in self._overwrites:
            return _visible_parent(self, self._overwrites[name])._target(name)
        return self

    def record(self, name: str, node: cst.CSTNode, kind: type[Assignment] = Assignment) -> None:
        target = self._target(name)
        target._assignments[name].add(kind(name, target, node, target.count))

    def record_access(self, name: str, access: Access) -> None:
        self.accesses[name].add(access)
        self._by_node.setdefault(access.node, set()).add(access)

    # -- questions --------------------------------------------------------------------
    def visible_from_children(self, child: Scope) -> bool:
        return True

    def __contains__(self, name: str) -> bool:
        if name in self._overwrites:
            return name in self._overwrites[name]
        if self._assignments.get(name):
            return True
        return name in _visible_parent(self, self.parent)

    def __getitem__(self, name: str) -> set[BaseAssignment]:
        return self.resolve(name, self)

    def resolve(self, name: str, start: Scope) -> set[BaseAssignment]:
        """The assignments ``name`` may read, looked up from ``start`` (a child, or this)."""
        if name in self._overwrites:
            return _visible_parent(start, self._overwrites[name]).resolve(name, start)
        found = self._assignments.get(name)
        if found:
            return found
        return _visible_parent(start, self.parent).resolve(name, start)

    def qualified_names_for(self, node: cst.CSTNode) -> set[tuple[str, Source]]:
        """The qualified names ``node`` (a name or dotted name) denotes in this scope."""
        loads = self._by_node.get(node)
        if loads:
            return {
                qn for load in loads for a in load.referents for qn in a.qualified_names(a.name)
            }
        full = full_name_of(node)
        if full is None:
            return set()
        found: set[BaseAssignment] = set()
        prefix: str | None = full
        while prefix:
            if prefix in self:
                found = self[prefix]
                break
            dot = prefix.rfind(".")
            prefix = None if dot == -1 else prefix[:dot]
        for a in found:
            if isinstance(a, Assignment) and _is_binding_node(node, a.node):
                return a.qualified_names(full)
        return {qn for a in found for qn in a.qualified_names(full)}


class BuiltinScope(Scope):
    def __init__(self, module: GlobalScope) -> None:
        super().__init__(None)
        self.globals = module

    def __contains__(self, name: str) -> bool:
        return hasattr(builtins, name)

    def resolve(self, name: str, start: Scope) -> set[BaseAssignment]:
        found = self._assignments.get(name)
        if found:
            return found
        if hasattr(builtins, name):
            self._assignments[name].add(BuiltinAssignment(name, self))
            return self._assignments[name]
        return set()


# What released scopes point to instead of their parents (see ``ModuleScopes.release``).
_RELEASED = Scope(None)


class GlobalScope(Scope):
    def __init__(self) -> None:
        super().__init__(None)
        self.parent = BuiltinScope(self)


class FunctionScope(Scope):
    pass


class ClassScope(Scope):
    def visible_from_children(self, child: Scope) -> bool:
        return False  # methods do not see class-level names


class ComprehensionScope(Scope):
    pass


def _visible_parent(start: Scope, first: Scope) -> Scope:
    parent = first
    while not parent.visible_from_children(start):
        parent = parent.parent
    return parent


def full_name_of(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for names, attribute chains, and the callee of a call or subscript."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = full_name_of(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    if isinstance(node, cst.Call):
        return full_name_of(node.func)
    if isinstance(node, cst.Subscript):
        return full_name_of(node.value)
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        return node.name.value
    if isinstance(node, cst.Decorator):
        return full_name_of(node.decorator)
    return None


def _is_binding_node(node: cst.CSTNode, binding: cst.CSTNode) -> bool:
    if node is binding:
        return True
    if isinstance(binding, cst.Import | cst.ImportFrom):
        aliases = binding.names
        if isinstance(aliases, cst.ImportStar):
            return False
        return any(
            node is alias.name or (alias.asname is not None and node is alias.asname.name)
            for alias in aliases
        )
    return False


def _dotted_prefixes(
    node: cst.Attribute | cst.Name,
) -> Iterator[tuple[str, cst.Attribute | cst.Name]]:
    """``a.b.c`` then ``a.b`` then ``a``, each with its node; a call in the chain
    (``a.b().c``) continues from its callee."""
    if isinstance(node, cst.Name):
        yield node.value, node
        return
    value = node.value
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Attribute | cst.Name):
            yield from _dotted_prefixes(value.func)
        return
    if isinstance(value, cst.Attribute | cst.Name):
        inner = _dotted_prefixes(value)
        first = next(inner, None)
        if first is None:
            return
        yield f"{first[0]}.{node.attr.value}", node
        yield first
        yield from inner


_ASSIGNMENT_LIKE = frozenset(
    {
        cst.AnnAssign,
        cst.AsName,
        cst.Assign,
        cst.AugAssign,
        cst.ClassDef,
        cst.CompFor,
        cst.FunctionDef,
        cst.Global,
        cst.Import,
        cst.ImportFrom,
        cst.NamedExpr,
        cst.Nonlocal,
        cst.Parameters,
        cst.WithItem,
        cst.TypeVar,
        cst.TypeAlias,
        cst.TypeVarTuple,
        cst.ParamSpec,
    }
)
_LOAD, _STORE, _DEL = 0, 1, 2


class ModuleScopes:
    """Every scope of a module, the scope of each node, and qualified names."""

    def __init__(self, module: cst.Module) -> None:
        self.module_scope = GlobalScope()
        self.of: dict[cst.CSTNode, Scope] = {}
        self._scope: Scope = self.module_scope
        self._deferred: list[tuple[Access, cst.Attribute | None]] = []
        self._attribute: list[cst.Attribute | None] = [None]
        # Imports that are statements of the module body itself (not under an `if`/`try`):
        # which of them binds a name last is known before any function runs.
        self._top_imports = frozenset(
            small
            for stmt in module.body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if isinstance(small, cst.Import | cst.ImportFrom)
        )
        self._visit(module, _LOAD)
        self._infer_accesses()

    def release(self) -> None:
        """Drop the links between scopes, bindings and loads (they form reference cycles),
        so that the analysis is freed as soon as it is dropped, without cyclic garbage
        collection (the engine pauses it).  No query works afterwards."""
        for scope in {*self.of.values(), self.module_scope, self.module_scope.parent}:
            for bindings in scope._assignments.values():
                for binding in bindings:
                    binding.references = set()
            for accesses in scope.accesses.values():
                for access in accesses:
                    access.referents = set()
            scope._assignments = defaultdict(set)
            scope.accesses = defaultdict(set)
            scope._by_node = {}
            scope._overwrites = {}
            scope.parent = scope.globals = _RELEASED
        self.of = {}

    # -- queries ----------------------------------------------------------------------
    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.of.get(node)

    def qualified_names(self, node: cst.CSTNode) -> set[tuple[str, Source]]:
        scope = self.of.get(node)
        return scope.qualified_names_for(node) if scope is not None else set()

    # -- the walk ---------------------------------------------------------------------
    def _visit(self, node: cst.CSTNode, mode: int) -> None:
        special = _SPECIAL.get(type(node))
        if special is not None:
            special(self, node, mode)
        else:
            for child in children(node):
                self._visit(child, mode)
        self._leave(node)

    def _leave(self, node: cst.CSTNode) -> None:
        self.of[node] = self._scope
        if type(node) in _ASSIGNMENT_LIKE:  # exact types: isinstance on libcst's ABCs is slow
            self._scope.count += 1

    def _visit_all(self, nodes: object, mode: int = _LOAD) -> None:
        for child in nodes:  # type: ignore[attr-defined]
            self._visit(child, mode)

    def _name(self, node: cst.Name, mode: int) -> None:
        if mode == _STORE:
            self._scope.record(node.value, node)
        else:
            self._deferred.append((Access(node, self._scope), self._attribute[-1]))

    def _import(self, node: cst.Import | cst.ImportFrom, mode: int) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            self.of[alias] = self._scope
            bound = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(bound, cst.Name | cst.Attribute):
                for name, _ in _dotted_prefixes(bound):
                    self._scope.record(name, node, ImportAssignment)

    def _attribute_(self, node: cst.Attribute, mode: int) -> None:
        top = self._attribute[-1] is None
        if top:
            self._attribute[-1] = node
        self._visit(node.value, _LOAD)
        if top:
            self._attribute[-1] = None

    def _call(self, node: cst.Call, mode: int) -> None:
        self._attribute.append(None)
        for child in children(node):
            self._visit(child, _LOAD)
        self._attribute.pop()

    def _subscript(self, node: cst.Subscript, mode: int) -> None:
        for child in children(node):
            self._visit(child, _LOAD)

    def _assign(self, node: cst.Assign, mode: int) -> None:
        for target in node.targets:
            self._visit(target, _STORE)
        self._visit(node.value, _LOAD)

    def _ann_assign(self, node: cst.AnnAssign, mode: int) -> None:
        self._visit(node.target, _STORE)
        self._visit(node.annotation, _LOAD)
        if node.value is not None:
            self._visit(node.value, _LOAD)

    def _aug_assign(self, node: cst.AugAssign, mode: int) -> None:
        self._visit(node.target, _STORE)
        self._visit(node.operator, _LOAD)
        self._visit(node.value, _LOAD)

    def _named_expr(self, node: cst.NamedExpr, mode: int) -> None:
        self._visit(node.target, _STORE)
        self._visit(node.value, _LOAD)

    def _as_name(self, node: cst.AsName, mode: int) -> None:
        self._visit(node.name, _STORE)

    def _del(self, node: cst.Del, mode: int) -> None:
        self._visit(node.target, _DEL)

    def _for(self, node: cst.For, mode: int) -> None:
        self._visit(node.target, _STORE)
        self._scope.count += 1
        self._visit(node.iter, _LOAD)
        self._visit(node.body, _LOAD)
        if node.orelse is not None:
            self._visit(node.orelse, _LOAD)

    def _comp_for(self, node: cst.CompFor, mode: int) -> None:
        # An inner ``for`` of a comprehension: everything inside the comprehension scope.
        self._visit(node.target, _STORE)
        self._visit(node.iter, _LOAD)
        self._visit_all(node.ifs)
        if node.inner_for_in is not None:
            self._visit(node.inner_for_in, _LOAD)

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp, mode: int
    ) -> None:
        first = node.for_in
        # The first iterable is evaluated outside the comprehension's scope.
        self._visit(first.iter, _LOAD)
        self.of[first] = self._scope
        outer = self._scope
        self._scope = ComprehensionScope(outer, node)
        self._visit(first.target, _STORE)
        self._scope.count += 1
        self._visit_all(first.ifs)
        if first.inner_for_in is not None:
            self._visit(first.inner_for_in, _LOAD)
        if isinstance(node, cst.DictComp):
            self._visit(node.key, _LOAD)
            self._visit(node.value, _LOAD)
        else:
            self._visit(node.elt, _LOAD)
        self._scope = outer

    def _function(self, node: cst.FunctionDef, mode: int) -> None:
        outer = self._scope
        outer.record(node.name.value, node)
        self.of[node.name] = outer
        if node.type_parameters is not None:
            self._visit(node.type_parameters, _LOAD)
        self._scope = FunctionScope(outer, node)
        self._visit(node.params, _LOAD)
        self._visit(node.body, _LOAD)
        self._scope = outer
        self._visit_all(node.decorators)
        if node.returns is not None:
            self._visit(node.returns, _LOAD)

    def _lambda(self, node: cst.Lambda, mode: int) -> None:
        outer = self._scope
        self._scope = FunctionScope(outer, node)
        self._visit(node.params, _LOAD)
        self._visit(node.body, _LOAD)
        self._scope = outer

    def _param(self, node: cst.Param, mode: int) -> None:
        scope = self._scope
        scope.record(node.name.value, node)
        self.of[node.name] = scope
        # Defaults and annotations are evaluated where the function is defined.
        self._scope = scope.parent
        if node.default is not None:
            self._visit(node.default, _LOAD)
        if node.annotation is not None:
            self._visit(node.annotation, _LOAD)
        self._scope = scope

    def _arg(self, node: cst.Arg, mode: int) -> None:
        self._visit(node.value, _LOAD)  # a keyword's name is neither a load nor a binding

    def _class(self, node: cst.ClassDef, mode: int) -> None:
        outer = self._scope
        outer.record(node.name.value, node)
        self.of[node.name] = outer
        self._visit_all(node.decorators)
        if node.type_parameters is not None:
            self._visit(node.type_parameters, _LOAD)
        self._visit_all(node.bases)
        self._visit_all(node.keywords)
        self._scope = ClassScope(outer, node)
        self._visit_all(node.body.body)
        self._scope = outer

    def _global(self, node: cst.Global, mode: int) -> None:
        scope = self._scope
        for item in node.names:
            if scope is not scope.globals:
                scope._overwrites[item.name.value] = scope.globals

    def _nonlocal(self, node: cst.Nonlocal, mode: int) -> None:
        scope = self._scope
        for item in node.names:
            scope._overwrites[item.name.value] = scope.parent

    def _type_alias(self, node: cst.TypeAlias, mode: int) -> None:
        self._scope.record(node.name.value, node)
        if node.type_parameters is not None:
            self._visit(node.type_parameters, _LOAD)
        self._visit(node.value, _LOAD)

    def _type_var(self, node: cst.CSTNode, mode: int) -> None:
        self._scope.record(node.name.value, node)  # type: ignore[attr-defined]
        bound = getattr(node, "bound", None)
        if bound is not None:
            self._visit(bound, _LOAD)

    # -- loads, resolved once every binding is known -----------------------------------
    def _infer_accesses(self) -> None:
        groups: dict[tuple[Scope, str], set[Access]] = defaultdict(set)
        for access, attribute in self._deferred:
            name = access.node.value  # type: ignore[union-attr]
            if attribute is not None:
                # `import os.path` binds `os.path`: the load is of the longest bound prefix.
                for dotted, node in _dotted_prefixes(attribute):
                    if dotted in access.scope:
                        access.node, name = node, dotted
                        break
            groups[(access.scope, name)].add(access)
            _record_referents(access, name, self._top_imports)
            access.scope.record_access(name, access)
        for (scope, name), loads in groups.items():
            for assignment in scope.resolve(name, scope):
                assignment.record_accesses(loads)
        self._deferred = []


def _record_referents(
    access: Access, name: str, top_imports: frozenset[cst.CSTNode] = frozenset()
) -> None:
    scope = access.scope
    found = scope.resolve(name, scope)
    earlier = {a for a in found if a.scope is not scope or a.index < access.index}
    if not earlier and found and scope.parent is not scope:
        earlier = scope.parent.resolve(name, scope)
    if len(earlier) > 1 and all(
        isinstance(a, ImportAssignment) and a.node in top_imports for a in earlier
    ):
        # `import numpy as tf` then `import tensorflow as tf`, both plain statements of the
        # module: what follows them, and every function, sees the last.
        earlier = {max(earlier, key=lambda a: a.index)}  # type: ignore[attr-defined]
    access.referents |= earlier


_SPECIAL = {
    cst.Name: ModuleScopes._name,
    cst.Import: ModuleScopes._import,
    cst.ImportFrom: ModuleScopes._import,
    cst.Attribute: ModuleScopes._attribute_,
    cst.Call: ModuleScopes._call,
    cst.Subscript: ModuleScopes._subscript,
    cst.Assign: ModuleScopes._assign,
    cst.AnnAssign: ModuleScopes._ann_assign,
    cst.AugAssign: ModuleScopes._aug_assign,
    cst.NamedExpr: ModuleScopes._named_expr,
    cst.AsName: ModuleScopes._as_name,
    cst.Del: ModuleScopes._del,
    cst.For: ModuleScopes._for,
    cst.CompFor: ModuleScopes._comp_for,
    cst.ListComp: ModuleScopes._comprehension,
    cst.SetComp: ModuleScopes._comprehension,
    cst.DictComp: ModuleScopes._comprehension,
    cst.GeneratorExp: ModuleScopes._comprehension,
    cst.FunctionDef: ModuleScopes._function,
    cst.Lambda: ModuleScopes._lambda,
    cst.Param: ModuleScopes._param,
    cst.Arg: ModuleScopes._arg,
    cst.ClassDef: ModuleScopes._class,
    cst.Global: ModuleScopes._global,
    cst.Nonlocal: ModuleScopes._nonlocal,
    cst.TypeAlias: ModuleScopes._type_alias,
    cst.TypeVar: ModuleScopes._type_var,
    cst.TypeVarTuple: ModuleScopes._type_var,
    cst.ParamSpec: ModuleScopes._type_var,
}
