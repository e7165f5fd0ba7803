"""What a rule's ``fix()`` is handed besides the node: a fresh libcst parse of the file being
fixed and the answers a rewrite needs to be provably equivalent (the analysis's own model is
not kept for fixing; ``tflint_graph.output.fix`` parses the file again)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Literal

import libcst as cst
from libcst.metadata import (
    Assignment,
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

# "safe": keeps what the code does, so --fix applies it; "unsafe": may change it.
FixSafety = Literal["safe", "unsafe"]


class FixSite:
    """Questions about the original nodes of ``wrapper``'s module (metadata is computed on
    first use)."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.module = wrapper.module
        self._wrapper = wrapper

    def line(self, node: cst.CSTNode) -> int:
        return self._positions[node].start.line

    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self._scopes.get(node)

    def qualified_names(self, node: cst.CSTNode) -> Collection[QualifiedName]:
        names = self._qualified.get(node, set())
        if callable(names):  # libcst computes qualified names lazily
            names = names()
        return names

    def tensorflow_alias(self, node: cst.CSTNode) -> str | None:
        """A name bound to the ``tensorflow`` module wherever ``node`` runs, or None: a fix
        that writes ``tf.something`` must use the module's own binding."""
        scope = self.scope(node)
        if scope is None:
            return None
        line = self.line(node)
        for name, imports in self._tensorflow_imports.items():
            if any(self.line(i) >= line for i in imports):
                continue  # imported below the node: may not be bound yet when it runs
            bindings = scope[name]
            if bindings and all(isinstance(b, Assignment) and b.node in imports for b in bindings):
                return name
        return None

    @cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return self._wrapper.resolve(PositionProvider)

    @cached_property
    def _scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        return self._wrapper.resolve(ScopeProvider)

    @cached_property
    def _qualified(self) -> Mapping[cst.CSTNode, Collection[QualifiedName]]:
        return self._wrapper.resolve(QualifiedNameProvider)

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
