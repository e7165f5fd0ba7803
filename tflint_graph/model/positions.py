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
positions for the whole module.  ``tests/model/test_positions.py`` compares with libcst.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import NamedTuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from tflint_graph.model import walk
from tflint_graph.source.fromast import Unsupported, starts_line
from tflint_graph.source.prefilter import parse_python

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
    last: ast.stmt  # CPython's last statement of it (``a = 1; b = 2`` is one libcst line)


class _Sink:
    """Where libcst's code-generation state records positions (a provider's role)."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


def _agrees(sink: _Sink, unit: cst.CSTNode, start: _Start) -> bool:
    """Whether the generated ``unit`` starts where CPython says its statement starts."""
    checked = unit.body[0] if isinstance(unit, cst.SimpleStatementLine) else unit
    got = sink._computed[checked].start
    return (got.line, got.column) == (start.line, start.column)


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
        if not _agrees(self._sink, unit, start):
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
            last = statements[position + count - 1]
            found[stmt] = _Start(first, node.lineno, node.col_offset, node, last)  # type: ignore[index]
            position += count
        if found is not None and position != len(statements):
            found = None
        self._starts[owner] = found
        return found

    def _generate_all(self) -> None:
        self._whole = True
        computed = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        self._sink._computed.update(computed)


class Snippets(Positions):
    """Positions and code of a tree ``fromast`` built, which holds no formatting to generate
    them from.  libcst parses the statement around the node asked about, as the source
    writes it (CPython's tree says where it starts and ends); that statement's own nodes,
    paired one to one with the built ones, give libcst's positions and code.  A statement
    of a nested block is parsed inside an ``if 1:`` at its own indentation, on its own lines.
    """

    def __init__(
        self,
        module: cst.Module,
        source: str,
        parents: Mapping[cst.CSTNode, cst.CSTNode],
        tree: ast.Module | None = None,
    ) -> None:
        super().__init__(module, source, parents, tree)
        self._lines = source.split("\n")
        # Each built node paired so far: libcst's node, and the module libcst parsed it in.
        self._real: dict[cst.CSTNode, tuple[cst.CSTNode, cst.Module]] = {}
        self._headers: set[cst.CSTNode] = set()  # defs and classes whose header is paired

    def code(self, node: cst.CSTNode) -> str:
        """libcst's ``code_for_node`` of ``node``, for an expression or a simple statement:
        without the comments and blank lines above a statement, and a compound statement's
        code ends with its last statement (not with comments after it)."""
        if node not in self._real:
            self[node]  # pairs the statement around it (or the whole module)
        real, parsed = self._real[node]
        if getattr(real, "leading_lines", None):
            real = real.with_changes(leading_lines=())
        return parsed.code_for_node(real)

    def _generate_around(self, node: cst.CSTNode) -> bool:
        located = self._locate(node)
        if located is None:
            return False
        unit, start, indents = located
        if unit in self._done:
            return True
        # A node in the header of a def or class (a decorator, a parameter, an annotation)
        # needs only the header parsed, not the whole body.
        if isinstance(unit, cst.FunctionDef | cst.ClassDef) and self._in_header(node, unit):
            return unit in self._headers or self._generate(unit, start, indents, header=True)
        return self._generate(unit, start, indents)

    def _in_header(self, node: cst.CSTNode, unit: cst.FunctionDef | cst.ClassDef) -> bool:
        child, parent = node, self._parents.get(node)
        while parent is not None and parent is not unit:
            child, parent = parent, self._parents.get(parent)
        return parent is unit and child is not unit.body

    def _generate(
        self, unit: cst.CSTNode, start: _Start, indents: list[str], header: bool = False
    ) -> bool:
        end = start.last.end_lineno
        if end is None:
            return False
        stub = ""
        body = getattr(start.tree, "body", None)
        if header and body and starts_line(self._lines, body[0]):
            # The header's lines, with ``pass`` for a body at the body's indentation.
            decorators = getattr(body[0], "decorator_list", None)
            end = (decorators[0] if decorators else body[0]).lineno - 1
            line = self._lines[body[0].lineno - 1]
            stub = line[: len(line) - len(line.lstrip())] + "pass\n"
        else:
            header = False
        text = "\n".join(self._lines[start.first_line - 1 : end]) + "\n" + stub
        nested = bool(indents)
        try:
            parsed = cst.parse_module("if 1:\n" + text if nested else text)
        except cst.ParserSyntaxError:
            return False
        real = parsed.body[0].body.body[0] if nested else parsed.body[0]  # type: ignore[attr-defined]
        # Header only: the unit itself (its range runs to the end of its body) and its body
        # stay unpaired.
        skip = unit.body if header else None  # type: ignore[attr-defined]
        if not self._pair(unit, real, parsed, skip):
            return False
        sink = _Sink()
        state = PositionProvidingCodegenState(
            default_indent=parsed.default_indent,
            default_newline=parsed.default_newline,
            provider=sink,  # type: ignore[arg-type]
            line=start.first_line - 1 if nested else start.first_line,
        )
        parsed._codegen(state)
        if not _agrees(sink, real, start):
            return False
        self._take(sink, unit, skip)
        if header:
            del self._real[unit]
            self._sink._computed.pop(unit, None)
            self._headers.add(unit)
        else:
            self._done.add(unit)
        return True

    def _generate_all(self) -> None:
        self._whole = True
        try:
            parsed = cst.parse_module(self._source)
        except Exception as exc:
            raise Unsupported(f"libcst cannot parse it: {exc}") from None
        if not self._pair(self._module, parsed, parsed):
            # The engine analyses libcst's own tree instead (never seen on real code).
            raise Unsupported("libcst's tree differs from the one built from CPython's")
        sink = _Sink()
        sink._computed = dict(
            MetadataWrapper(parsed, unsafe_skip_copy=True).resolve(PositionProvider)
        )
        self._take(sink, self._module)

    def _pair(
        self,
        built: cst.CSTNode,
        real: cst.CSTNode,
        parsed: cst.Module,
        skip: cst.CSTNode | None = None,
    ) -> bool:
        """Pair ``built`` and its semantic nodes with ``real``'s (the same shape), except
        ``skip`` and what is under it."""
        found: dict[cst.CSTNode, tuple[cst.CSTNode, cst.Module]] = {}
        stack = [(built, real)]
        while stack:
            ours, theirs = stack.pop()
            if type(ours) is not type(theirs):
                return False
            if ours is skip:
                continue
            found[ours] = (theirs, parsed)
            below, above = walk.children(ours), walk.children(theirs)
            if len(below) != len(above):
                return False
            stack.extend(zip(below, above, strict=True))
        self._real.update(found)
        return True

    def _take(self, sink: _Sink, top: cst.CSTNode, skip: cst.CSTNode | None = None) -> None:
        """Positions of the built nodes under ``top`` (but not under ``skip``) from libcst's
        paired ones."""
        computed = self._sink._computed
        stack = [top]
        while stack:
            node = stack.pop()
            if node is skip:
                continue
            where = sink._computed.get(self._real[node][0])
            if where is not None:
                computed[node] = where
            stack.extend(walk.children(node))
