"""What a rule's ``fix()`` is handed besides the node: a :class:`Site`, the questions a
rewrite asks about the module around it.

A fix is asked twice.  While the module is analysed (:class:`LintSite`, over the analysis's
own model) it says whether the finding can be rewritten at all, so that every finding
carries its ``fix_safety``; when ``--fix``/``--diff`` applies it (:class:`FixSite`, over a
fresh libcst parse: the analysis's model is not kept for fixing) it builds the rewrite that
goes to disk.  Both sites answer alike, so a finding called fixable is fixed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Any

import libcst as cst
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    ScopeProvider,
)

from tflint_graph.core.finding import FixSafety
from tflint_graph.core.vocabulary import canonical
from tflint_graph.model.context import ModuleContext

__all__ = ["FixSafety", "FixSite", "LintSite", "Site"]


class Site:
    """Questions about the nodes of one module that fixes ask."""

    module: cst.Module

    def line(self, node: cst.CSTNode) -> int:
        raise NotImplementedError

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        raise NotImplementedError

    def qualified_names(self, node: cst.CSTNode) -> Collection[str]:
        """The imported or builtin names ``node`` may denote, spelled as the analysis spells
        them (``sys.stdout``, ``numpy.random.normal``, ``tensorflow.function`` for
        ``tf.compat.v2.function``)."""
        raise NotImplementedError

    def _scope(self, node: cst.CSTNode) -> Any:
        """libcst's scope of ``node``, or the analysis's (both map a name to its bindings,
        each with the ``node`` that binds it)."""
        raise NotImplementedError

    def is_(self, node: cst.CSTNode, *names: str) -> bool:
        """``node`` denotes one of ``names`` and nothing else."""
        found = set(self.qualified_names(node))
        return bool(found) and found <= set(names)

    def tensorflow_alias(self, node: cst.CSTNode) -> str | None:
        """A name bound to the ``tensorflow`` module wherever ``node`` runs, or None: a fix
        that writes ``tf.something`` must use the module's own binding."""
        scope = self._scope(node)
        if scope is None:
            return None
        line = self.line(node)
        for name, imports in self._tensorflow_imports.items():
            if any(self.line(i) >= line for i in imports):
                continue  # imported below the node: may not be bound yet when it runs
            bindings = scope[name]
            if bindings and all(getattr(b, "node", None) in imports for b in bindings):
                return name
        return None

    @cached_property
    def _tensorflow_imports(self) -> dict[str, list[cst.Import]]:
        """Module-level ``import tensorflow as X`` / ``import tensorflow`` statements, by the
        name they bind to the tensorflow package."""
        found: dict[str, list[cst.Import]] = {}
        for statement in self.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.Import):
                    continue
                for alias in small.names:
                    dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
                    if dotted != "tensorflow":
                        continue
                    if alias.asname is None:
                        found.setdefault("tensorflow", []).append(small)
                    elif isinstance(alias.asname.name, cst.Name):
                        found.setdefault(alias.asname.name.value, []).append(small)
        return found


class FixSite(Site):
    """The site of a fresh parse, for applying fixes (metadata is computed on first use)."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.module = wrapper.module
        self._wrapper = wrapper

    def line(self, node: cst.CSTNode) -> int:
        return self._positions[node].start.line

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def qualified_names(self, node: cst.CSTNode) -> Collection[str]:
        names = self._qualified.get(node, set())
        if callable(names):  # libcst computes qualified names lazily
            names = names()
        return {canonical(q.name) for q in names}

    def _scope(self, node: cst.CSTNode) -> Any:
        return self._scopes.get(node)

    @cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return self._wrapper.resolve(PositionProvider)

    @cached_property
    def _parents(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        return self._wrapper.resolve(ParentNodeProvider)

    @cached_property
    def _scopes(self) -> Mapping[cst.CSTNode, Any]:
        return self._wrapper.resolve(ScopeProvider)

    @cached_property
    def _qualified(self) -> Mapping[cst.CSTNode, Collection[QualifiedName]]:
        return self._wrapper.resolve(QualifiedNameProvider)


class LintSite(Site):
    """The site of the module being analysed: answers from the analysis's own model, for
    deciding while linting whether a finding can be fixed."""

    def __init__(self, ctx: ModuleContext) -> None:
        self.module = ctx.module
        self._ctx = ctx

    def line(self, node: cst.CSTNode) -> int:
        return self._ctx.line(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._ctx.parent(node)

    def qualified_names(self, node: cst.CSTNode) -> Collection[str]:
        if not isinstance(node, cst.BaseExpression):
            return set()
        return self._ctx.resolve(node).imported

    def _scope(self, node: cst.CSTNode) -> Any:
        return self._ctx.scope(node)
