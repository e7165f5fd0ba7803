"""Source positions of libcst nodes, computed one statement at a time.

libcst computes positions by generating the code of the whole module again; on a
TensorFlow module that cost as much as parsing it, although findings usually sit in a few
statements.  Here positions are generated for the innermost statement of a module, class
or function body that holds the node asked about, when it is first asked about.  CPython's
own tree (which the engine already has) says on which line and column each such statement
starts, so libcst's code generation can start right there with the right indentation.

The positions are libcst's own (the same ``PositionProvider`` code generation runs, only
on a part of the tree).  Each generated statement is checked against CPython's position
for it, and any disagreement (exotic formatting, a parser difference) falls back to
positions for the whole module.  ``tests/test_positions.py`` compares with libcst.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import NamedTuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from tflint_graph.cheap import parse_python

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _blocks(unit: cst.CSTNode, tree: ast.stmt) -> dict[cst.CSTNode, list[ast.stmt]]:
    """The indented blocks of compound statement ``unit`` with CPython's statements of each
    (``tree`` is CPython's node for ``unit``).  An ``elif`` is left inside its ``if``: libcst
    writes it as a nested ``If``, which cannot be generated on its own."""
    found: dict[cst.CSTNode, list[ast.stmt]] = {}
    if isinstance(unit, cst.FunctionDef | cst.ClassDef) and isinstance(tree, _DEFS):
        found[unit.body] = tree.body
    elif isinstance(unit, cst.If) and isinstance(tree, ast.If):
        found[unit.body] = tree.body
        if isinstance(unit.orelse, cst.Else):
            found[unit.orelse.body] = tree.orelse
    elif (isinstance(unit, cst.For) and isinstance(tree, ast.For | ast.AsyncFor)) or (
        isinstance(unit, cst.While) and isinstance(tree, ast.While)
    ):
        found[unit.body] = tree.body
        if unit.orelse is not None:
            found[unit.orelse.body] = tree.orelse
    elif isinstance(unit, cst.With) and isinstance(tree, ast.With | ast.AsyncWith):
        found[unit.body] = tree.body
    elif isinstance(unit, cst.Try) and isinstance(tree, ast.Try):
        found[unit.body] = tree.body
        if len(unit.handlers) == len(tree.handlers):
            for handler, theirs in zip(unit.handlers, tree.handlers, strict=True):
                found[handler.body] = theirs.body
        if unit.orelse is not None:
            found[unit.orelse.body] = tree.orelse
        if unit.finalbody is not None:
            found[unit.finalbody.body] = tree.finalbody
    return {block: body for block, body in found.items() if isinstance(block, cst.IndentedBlock)}


class _Start(NamedTuple):
    first_line: int  # where the statement's code begins: its first decorator, or itself
    line: int  # CPython's line and column of the statement (what libcst must agree with)
    column: int
    tree: ast.stmt


class _Sink:
    """Where libcst's code-generation state records positions (a provider's role)."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class Positions:
    """``positions[node]`` is libcst's ``PositionProvider`` range of ``node``."""

    def __init__(
        self,
        module: cst.Module,
        source: str,
        parents: Mapping[cst.CSTNode, cst.CSTNode],
        tree: ast.Module | None = None,
    ) -> None:
        self._module = module
        self._source = source
        self._parents = parents
        self._tree = tree
        self._sink = _Sink()
        self._done: set[cst.CSTNode] = set()
        self._starts: dict[cst.CSTNode, dict[cst.CSTNode, _Start] | None] = {}
        self._whole = False

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._sink._computed.get(node)
        if found is not None:
            return found
        if not self._whole:
            if self._generate_around(node):
                found = self._sink._computed.get(node)
                if found is not None:
                    return found
            self._generate_all()
        return self._sink._computed[node]

    def start_line(self, node: cst.CSTNode) -> int:
        """``self[node].start.line``, without generating any code when ``node`` is a
        statement of a module, class or function body (a ``def``, typically)."""
        found = self._sink._computed.get(node)
        if found is None and not self._whole:
            located = self._locate(node)
            if located is not None and located[0] is node:
                return located[1].line
        return self[node].start.line

    def end_line(self, node: cst.CSTNode) -> int:
        """``self[node].end.line``, likewise (the last line of its code)."""
        found = self._sink._computed.get(node)
        if found is None and not self._whole:
            located = self._locate(node)
            if located is not None and located[0] is node:
                end = located[1].tree.end_lineno
                if end is not None:
                    return end
        return self[node].end.line

    def _generate_around(self, node: cst.CSTNode) -> bool:
        located = self._locate(node)
        if located is None:
            return False
        unit, start, indents = located
        if unit in self._done:
            return True
        return self._generate(unit, start, indents)

    def _locate(self, node: cst.CSTNode) -> tuple[cst.CSTNode, _Start, list[str]] | None:
        """The innermost statement of a module, class or function body around ``node``,
        where it starts, and the indentation of its block."""
        chain = [node]
        parent = self._parents.get(node)
        while parent is not None:
            chain.append(parent)
            parent = self._parents.get(parent)
        chain.reverse()  # the module, a statement of its body, ...
        if chain[0] is not self._module or len(chain) < 2:
            return None
        tree = self._ast()
        if tree is None:
            return None
        starts = self._starts_in(self._module, self._module.body, tree.body)
        if starts is None or chain[1] not in starts:
            return None
        unit, start, indents, at = chain[1], starts[chain[1]], [], 1
        # Go down through the indented blocks of compound statements (def, class, if, for,
        # while, with, try) while the node lies in one.
        while at + 2 < len(chain):
            blocks = _blocks(unit, start.tree)
            # The block is the statement's child (a def's body) or grandchild (else: ...).
            j = next((j for j in (at + 1, at + 2) if chain[j] in blocks), len(chain))
            block = chain[j] if j + 1 < len(chain) else None
            if not isinstance(block, cst.IndentedBlock):
                break
            inner = self._starts_in(block, block.body, blocks[block])
            child = chain[j + 1]
            if inner is None or child not in inner:
                break
            indents.append(block.indent or self._module.default_indent)
            unit, start, at = child, inner[child], j + 1
        return unit, start, indents

    def _generate(self, unit: cst.CSTNode, start: _Start, indents: list[str]) -> bool:
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent,
            default_newline=self._module.default_newline,
            provider=self._sink,  # type: ignore[arg-type]
            line=start.first_line - len(unit.leading_lines),  # type: ignore[attr-defined]
        )
        state.indent_tokens = list(indents)
        unit._codegen(state)
        checked = unit.body[0] if isinstance(unit, cst.SimpleStatementLine) else unit
        got = self._sink._computed[checked].start
        if (got.line, got.column) != (start.line, start.column):
            return False
        self._done.add(unit)
        return True

    def _ast(self) -> ast.Module | None:
        if self._tree is None:
            try:
                self._tree = parse_python(self._source.replace("\r\n", "\n"))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
        return self._tree

    def _starts_in(
        self, owner: cst.CSTNode, body: object, statements: list[ast.stmt]
    ) -> dict[cst.CSTNode, _Start] | None:
        """Where each statement of ``body`` (libcst) starts, from ``statements`` (CPython's
        same body); None when the two do not list the same statements."""
        if owner in self._starts:
            return self._starts[owner]
        found: dict[cst.CSTNode, _Start] | None = {}
        position = 0
        for stmt in body:  # type: ignore[attr-defined]
            count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            if position + count > len(statements):
                found = None
                break
            node = statements[position]
            first = node.lineno
            decorators = getattr(node, "decorator_list", None)
            if decorators:
                first = min(first, decorators[0].lineno)
            found[stmt] = _Start(first, node.lineno, node.col_offset, node)  # type: ignore[index]
            position += count
        if found is not None and position != len(statements):
            found = None
        self._starts[owner] = found
        return found

    def _generate_all(self) -> None:
        self._whole = True
        computed = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        self._sink._computed.update(computed)
