"""libcst trees built from CPython's tree, without libcst's parser.

Parsing a module with libcst costs about ten times CPython's parse, and two thirds of the
nodes it builds are formatting (whitespace, commas, brackets), which no rule looks at
(``walk`` never enters them).  The engine has CPython's tree of every module already; here
the same semantic nodes libcst's parser would give are built from it, with every formatting
field sharing one empty value.  Node types, fields and child order are libcst's, so every
rule runs unchanged; ``tests/source/test_fromast.py`` compares the trees with libcst's, field by
field, over every fixture, test case and package.

What such a tree cannot give is text: its formatting is not the source's, so positions
and code are never generated from it.  ``Snippets`` parses, with libcst, just the
statement around a node when a position or its code is first asked for, and reads them
from libcst's own node there.

Source this module does not rebuild (a ``match`` statement, parenthesised ``with`` items,
a lone ``\\r`` line break) raises ``Unsupported``; the engine then parses it with libcst.
Strings with several parts (implicit concatenation, f-strings) are parsed by libcst alone.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst


class Unsupported(Exception):
    """Source this module does not rebuild; parse it with libcst instead."""


class _Built(str):
    """The ``encoding`` of the modules built here: the mark travels with the tree."""


_BUILT = _Built("utf-8")


def is_built(module: cst.Module) -> bool:
    """Whether ``module`` was built here (it has no formatting to generate text from)."""
    return type(module.encoding) is _Built


def starts_line(lines: list[str], stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is the first thing on its line of ``lines`` (the source split at
    ``\n``), not a one-line body after a colon."""
    return not lines[stmt.lineno - 1].encode()[: stmt.col_offset].strip()


_DEFAULT = cst.MaybeSentinel.DEFAULT
_SHARED: dict[type, dict[str, Any]] = {}


def _shared(cls: type) -> dict[str, Any]:
    """One instance of each formatting default of ``cls``, shared by all its nodes (the
    defaults are frozen nodes; building them for every node cost as much as the node)."""
    found = _SHARED.get(cls)
    if found is None:
        found = _SHARED[cls] = {
            f.name: f.default_factory()
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            if f.default_factory is not dataclasses.MISSING
        }
    return found


def _make(cls: type, **fields: Any) -> Any:
    shared = _SHARED.get(cls) or _shared(cls)
    return cls(**shared, **fields) if shared else cls(**fields)


_BINARY: dict[type, type] = {
    ast.Add: cst.Add,
    ast.Sub: cst.Subtract,
    ast.Mult: cst.Multiply,
    ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide,
    ast.Mod: cst.Modulo,
    ast.Pow: cst.Power,
    ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift,
    ast.BitOr: cst.BitOr,
    ast.BitAnd: cst.BitAnd,
    ast.BitXor: cst.BitXor,
    ast.MatMult: cst.MatrixMultiply,
}
_AUGMENTED: dict[type, type] = {
    ast.Add: cst.AddAssign,
    ast.Sub: cst.SubtractAssign,
    ast.Mult: cst.MultiplyAssign,
    ast.Div: cst.DivideAssign,
    ast.FloorDiv: cst.FloorDivideAssign,
    ast.Mod: cst.ModuloAssign,
    ast.Pow: cst.PowerAssign,
    ast.LShift: cst.LeftShiftAssign,
    ast.RShift: cst.RightShiftAssign,
    ast.BitOr: cst.BitOrAssign,
    ast.BitAnd: cst.BitAndAssign,
    ast.BitXor: cst.BitXorAssign,
    ast.MatMult: cst.MatrixMultiplyAssign,
}
_UNARY: dict[type, type] = {
    ast.UAdd: cst.Plus,
    ast.USub: cst.Minus,
    ast.Invert: cst.BitInvert,
    ast.Not: cst.Not,
}
_COMPARE: dict[type, type] = {
    ast.Eq: cst.Equal,
    ast.NotEq: cst.NotEqual,
    ast.Lt: cst.LessThan,
    ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan,
    ast.GtE: cst.GreaterThanEqual,
    ast.In: cst.In,
    ast.NotIn: cst.NotIn,
    ast.Is: cst.Is,
    ast.IsNot: cst.IsNot,
}
_SMALL = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Pass,
    ast.Break,
    ast.Continue,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)
# One complete string literal (a prefix, its quotes, its text): a constant whose source is
# more than one of these (implicit concatenation) is left to libcst.
_STRING = re.compile(
    r"""[rRbBuU]{0,2}(?:'''(?:[^\\]|\\.)*?'''|\"\"\"(?:[^\\]|\\.)*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""",
    re.DOTALL,
)


class Builder:
    """Builds the libcst module of ``source`` from ``tree`` (``ast.parse(source)``)."""

    def __init__(self, source: str, tree: ast.Module) -> None:
        if "\r" in source or "\f" in source:
            raise Unsupported("line breaks or form feeds libcst and CPython count apart")
        self.source = source
        self.tree = tree
        self.lines = source.split("\n")

    def module(self) -> cst.Module:
        return _make(cst.Module, body=self.statements(self.tree.body), encoding=_BUILT)

    # -- text ---------------------------------------------------------------------------
    def _column(self, line: int, offset: int) -> int:
        """The character column of CPython's UTF-8 ``offset`` on ``line`` (1-based)."""
        text = self.lines[line - 1]
        return offset if text.isascii() else len(text.encode()[:offset].decode())

    def _rest_of_line(self, node: ast.expr | ast.stmt) -> str:
        """The text of ``node``'s first line from where it starts."""
        return self.lines[node.lineno - 1][self._column(node.lineno, node.col_offset) :]

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """The source text of ``node`` (without the parentheses around it)."""
        end_line, end_offset = node.end_lineno, node.end_col_offset
        assert end_line is not None and end_offset is not None
        start = self._column(node.lineno, node.col_offset)
        end = self._column(end_line, end_offset)
        if node.lineno == end_line:
            return self.lines[node.lineno - 1][start:end]
        first = self.lines[node.lineno - 1][start:]
        middle = self.lines[node.lineno : end_line - 1]
        return "\n".join([first, *middle, self.lines[end_line - 1][:end]])

    # -- statements ---------------------------------------------------------------------
    def statements(self, body: Sequence[ast.stmt]) -> list[cst.CSTNode]:
        """libcst's statements for ``body``: small statements on one line share a
        ``SimpleStatementLine``."""
        out: list[cst.CSTNode] = []
        line: list[cst.CSTNode] = []
        last = -1
        for stmt in body:
            if isinstance(stmt, _SMALL):
                if line and stmt.lineno != last:
                    out.append(_make(cst.SimpleStatementLine, body=line))
                    line = []
                line.append(self.stmt(stmt))
                last = stmt.end_lineno or stmt.lineno
                continue
            if line:
                out.append(_make(cst.SimpleStatementLine, body=line))
                line = []
            out.append(self.stmt(stmt))
        if line:
            out.append(_make(cst.SimpleStatementLine, body=line))
        return out

    def stmt(self, node: ast.stmt) -> Any:
        build = _STATEMENTS.get(type(node))
        if build is None:
            raise Unsupported(type(node).__name__)
        return build(self, node)

    def suite(self, body: Sequence[ast.stmt]) -> Any:
        if starts_line(self.lines, body[0]):
            return _make(cst.IndentedBlock, body=self.statements(body))
        return _make(cst.SimpleStatementSuite, body=[self.stmt(s) for s in body])

    def _else(self, body: Sequence[ast.stmt]) -> Any:
        return _make(cst.Else, body=self.suite(body)) if body else None

    def _expr_stmt(self, node: ast.Expr) -> Any:
        return _make(cst.Expr, value=self.expr(node.value))

    def _return(self, node: ast.Return) -> Any:
        return _make(cst.Return, value=self.opt(node.value))

    def _assert(self, node: ast.Assert) -> Any:
        return _make(cst.Assert, test=self.expr(node.test), msg=self.opt(node.msg))

    def _keyword_stmt(self, node: ast.Pass | ast.Break | ast.Continue) -> Any:
        return _make(_KEYWORDS[type(node)])

    def _global(self, node: ast.Global | ast.Nonlocal) -> Any:
        names = [_make(cst.NameItem, name=self._name_of(n)) for n in node.names]
        return _make(cst.Global if type(node) is ast.Global else cst.Nonlocal, names=names)

    def _assign(self, node: ast.Assign) -> Any:
        targets = [_make(cst.AssignTarget, target=self.expr(t)) for t in node.targets]
        return _make(cst.Assign, targets=targets, value=self.expr(node.value))

    def _augassign(self, node: ast.AugAssign) -> Any:
        return _make(
            cst.AugAssign,
            target=self.expr(node.target),
            operator=_make(_AUGMENTED[type(node.op)]),
            value=self.expr(node.value),
        )

    def _annassign(self, node: ast.AnnAssign) -> Any:
        return _make(
            cst.AnnAssign,
            target=self.expr(node.target),
            annotation=self._annotation(node.annotation),
            value=self.opt(node.value),
        )

    def _annotation(self, node: ast.expr) -> Any:
        return _make(cst.Annotation, annotation=self.expr(node))

    def _raise(self, node: ast.Raise) -> Any:
        cause = _make(cst.From, item=self.expr(node.cause)) if node.cause else None
        return _make(cst.Raise, exc=self.opt(node.exc), cause=cause)

    def _delete(self, node: ast.Delete) -> Any:
        if len(node.targets) == 1:
            return _make(cst.Del, target=self.expr(node.targets[0]))
        elements = [self._element(t) for t in node.targets]
        return _make(cst.Del, target=_make(cst.Tuple, elements=elements))

    def _dotted(self, name: str) -> Any:
        first, *rest = name.split(".")
        node = self._name_of(first)
        for part in rest:
            node = _make(cst.Attribute, value=node, attr=self._name_of(part))
        return node

    def _as(self, name: str | None) -> Any:
        return _make(cst.AsName, name=self._name_of(name)) if name else None

    def _import(self, node: ast.Import) -> Any:
        names = [
            _make(cst.ImportAlias, name=self._dotted(a.name), asname=self._as(a.asname))
            for a in node.names
        ]
        return _make(cst.Import, names=names)

    def _importfrom(self, node: ast.ImportFrom) -> Any:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _make(cst.ImportStar)
        else:
            names = [
                _make(cst.ImportAlias, name=self._name_of(a.name), asname=self._as(a.asname))
                for a in node.names
            ]
        return _make(
            cst.ImportFrom,
            module=self._dotted(node.module) if node.module else None,
            names=names,
            relative=[_make(cst.Dot)] * (node.level or 0),
        )

    def _functiondef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        return _make(
            cst.FunctionDef,
            name=self._name_of(node.name),
            params=self._parameters(node.args),
            body=self.suite(node.body),
            decorators=self._decorators(node.decorator_list),
            returns=self._annotation(node.returns) if node.returns else None,
            asynchronous=_make(cst.Asynchronous)
            if isinstance(node, ast.AsyncFunctionDef)
            else None,
        )

    def _decorators(self, decorators: list[ast.expr]) -> list[Any]:
        return [_make(cst.Decorator, decorator=self.expr(d)) for d in decorators]

    def _classdef(self, node: ast.ClassDef) -> Any:
        bases = [self._arg(b) for b in node.bases]
        keywords = [self._keyword(k) for k in node.keywords]
        return _make(
            cst.ClassDef,
            name=self._name_of(node.name),
            body=self.suite(node.body),
            bases=bases,
            keywords=keywords,
            decorators=self._decorators(node.decorator_list),
        )

    def _if(self, node: ast.If) -> Any:
        orelse: Any = None
        if node.orelse:
            first = node.orelse[0]
            if (
                len(node.orelse) == 1
                and isinstance(first, ast.If)
                and self._rest_of_line(first).startswith("elif")
            ):
                orelse = self._if(first)
            else:
                orelse = self._else(node.orelse)
        return _make(cst.If, test=self.expr(node.test), body=self.suite(node.body), orelse=orelse)

    def _for(self, node: ast.For | ast.AsyncFor) -> Any:
        return _make(
            cst.For,
            target=self.expr(node.target),
            iter=self.expr(node.iter),
            body=self.suite(node.body),
            orelse=self._else(node.orelse),
            asynchronous=_make(cst.Asynchronous) if isinstance(node, ast.AsyncFor) else None,
        )

    def _while(self, node: ast.While) -> Any:
        return _make(
            cst.While,
            test=self.expr(node.test),
            body=self.suite(node.body),
            orelse=self._else(node.orelse),
        )

    def _with(self, node: ast.With | ast.AsyncWith) -> Any:
        # ``with (a, b):`` is two items or one tuple depending on what follows: libcst's.
        rest = self._rest_of_line(node)
        if isinstance(node, ast.AsyncWith):
            rest = rest[len("async") :].lstrip()
        rest = rest[len("with") :].lstrip()
        if not rest or rest.startswith(("(", "\\")):
            raise Unsupported("parenthesised with items")
        items = [
            _make(
                cst.WithItem,
                item=self.expr(i.context_expr),
                asname=_make(cst.AsName, name=self.expr(i.optional_vars))
                if i.optional_vars
                else None,
            )
            for i in node.items
        ]
        return _make(
            cst.With,
            items=items,
            body=self.suite(node.body),
            asynchronous=_make(cst.Asynchronous) if isinstance(node, ast.AsyncWith) else None,
        )

    def _try(self, node: ast.Try | ast.TryStar) -> Any:
        star = isinstance(node, ast.TryStar)
        handler_cls = cst.ExceptStarHandler if star else cst.ExceptHandler
        handlers = [
            _make(
                handler_cls,
                body=self.suite(h.body),
                type=self.opt(h.type),
                name=self._as(h.name),
            )
            for h in node.handlers
        ]
        final = _make(cst.Finally, body=self.suite(node.finalbody)) if node.finalbody else None
        return _make(
            cst.TryStar if star else cst.Try,
            body=self.suite(node.body),
            handlers=handlers,
            orelse=self._else(node.orelse),
            finalbody=final,
        )

    # -- parameters and arguments -------------------------------------------------------
    def _param(self, arg: ast.arg, default: ast.expr | None = None, star: str = "") -> Any:
        return _make(
            cst.Param,
            name=self._name_of(arg.arg),
            annotation=self._annotation(arg.annotation) if arg.annotation else None,
            default=self.opt(default),
            star=star,
        )

    def _parameters(self, args: ast.arguments) -> Any:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        params = [self._param(a, d) for a, d in zip(positional, defaults, strict=True)]
        posonly = params[: len(args.posonlyargs)]
        star_arg: Any = _DEFAULT
        if args.vararg is not None:
            star_arg = self._param(args.vararg, star="*")
        elif args.kwonlyargs:
            star_arg = _make(cst.ParamStar)
        return _make(
            cst.Parameters,
            params=params[len(posonly) :],
            star_arg=star_arg,
            kwonly_params=[
                self._param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            ],
            star_kwarg=self._param(args.kwarg, star="**") if args.kwarg else None,
            posonly_params=posonly,
            posonly_ind=_make(cst.ParamSlash) if posonly else _DEFAULT,
        )

    def _arg(self, node: ast.expr) -> Any:
        if type(node) is ast.Starred:
            return _make(cst.Arg, value=self.expr(node.value), star="*")
        return _make(cst.Arg, value=self.expr(node))

    def _keyword(self, node: ast.keyword) -> Any:
        if node.arg is None:
            return _make(cst.Arg, value=self.expr(node.value), star="**")
        return _make(cst.Arg, value=self.expr(node.value), keyword=self._name_of(node.arg))

    # -- expressions --------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Any:
        build = _EXPRESSIONS.get(type(node))
        if build is None:
            raise Unsupported(type(node).__name__)
        return build(self, node)

    def opt(self, node: ast.expr | None) -> Any:
        return None if node is None else self.expr(node)

    def _name_of(self, value: str) -> Any:
        return cst.Name(value, (), ())

    def _name(self, node: ast.Name) -> Any:
        return cst.Name(node.id, (), ())

    def _attribute(self, node: ast.Attribute) -> Any:
        return _make(cst.Attribute, value=self.expr(node.value), attr=cst.Name(node.attr, (), ()))

    def _call(self, node: ast.Call) -> Any:
        args = [self._arg(a) for a in node.args]
        if node.keywords:
            # libcst keeps source order (``f(a, k=1, *rest)``); CPython lists them apart.
            keyed = [(a.lineno, a.col_offset, i) for i, a in enumerate(node.args)]
            keyed += [(k.lineno, k.col_offset, len(keyed) + i) for i, k in enumerate(node.keywords)]
            args += [self._keyword(k) for k in node.keywords]
            args = [args[item[2]] for item in sorted(keyed)]
        return _make(cst.Call, func=self.expr(node.func), args=args)

    def _constant(self, node: ast.Constant) -> Any:
        value = node.value
        if value is None or value is True or value is False:
            return cst.Name(str(value), (), ())
        if value is Ellipsis:
            return _make(cst.Ellipsis)
        if isinstance(value, str | bytes):
            text = self.segment(node)
            match = _STRING.match(text)
            if match is not None and match.end() == len(text):
                return cst.SimpleString(text, (), ())
            return self._by_libcst(node)
        text = self.segment(node)
        if isinstance(value, bool | int):
            return cst.Integer(text, (), ())
        if isinstance(value, float):
            return cst.Float(text, (), ())
        if isinstance(value, complex):
            return cst.Imaginary(text, (), ())
        raise Unsupported(f"constant {type(value).__name__}")

    def _by_libcst(self, node: ast.expr) -> Any:
        """libcst's own node for ``node`` (strings of several parts, f-strings)."""
        text = self.segment(node)
        try:
            parsed = cst.parse_expression(f"({text})")
        except cst.ParserSyntaxError as exc:
            raise Unsupported(str(exc)) from None
        return parsed.with_changes(lpar=(), rpar=())

    def _binop(self, node: ast.BinOp) -> Any:
        return _make(
            cst.BinaryOperation,
            left=self.expr(node.left),
            operator=_make(_BINARY[type(node.op)]),
            right=self.expr(node.right),
        )

    def _unaryop(self, node: ast.UnaryOp) -> Any:
        return _make(
            cst.UnaryOperation,
            operator=_make(_UNARY[type(node.op)]),
            expression=self.expr(node.operand),
        )

    def _boolop(self, node: ast.BoolOp) -> Any:
        kind = cst.And if type(node.op) is ast.And else cst.Or
        result = self.expr(node.values[0])
        for value in node.values[1:]:
            result = _make(
                cst.BooleanOperation, left=result, operator=_make(kind), right=self.expr(value)
            )
        return result

    def _compare(self, node: ast.Compare) -> Any:
        targets = [
            _make(
                cst.ComparisonTarget,
                operator=_make(_COMPARE[type(op)]),
                comparator=self.expr(right),
            )
            for op, right in zip(node.ops, node.comparators, strict=True)
        ]
        return _make(cst.Comparison, left=self.expr(node.left), comparisons=targets)

    def _subscript(self, node: ast.Subscript) -> Any:
        index = node.slice
        if type(index) is ast.Tuple and index.elts:
            if self._rest_of_line(index).startswith("("):
                return self._by_libcst(node)  # ``a[(1, 2)]`` or ``a[(i), j]``: libcst knows
            elements = [self._subscript_element(e) for e in index.elts]
        else:
            elements = [self._subscript_element(index)]
        return _make(cst.Subscript, value=self.expr(node.value), slice=elements)

    def _subscript_element(self, node: ast.expr) -> Any:
        if type(node) is ast.Slice:
            inner: Any = _make(
                cst.Slice,
                lower=self.opt(node.lower),
                upper=self.opt(node.upper),
                step=self.opt(node.step),
            )
        elif type(node) is ast.Starred:
            raise Unsupported("starred subscript")
        else:
            inner = _make(cst.Index, value=self.expr(node))
        return _make(cst.SubscriptElement, slice=inner)

    def _element(self, node: ast.expr) -> Any:
        if type(node) is ast.Starred:
            return _make(cst.StarredElement, value=self.expr(node.value))
        return _make(cst.Element, value=self.expr(node))

    def _starred_element(self, node: ast.Starred) -> Any:
        return _make(cst.StarredElement, value=self.expr(node.value))

    def _tuple(self, node: ast.Tuple) -> Any:
        return _make(cst.Tuple, elements=[self._element(e) for e in node.elts])

    def _list(self, node: ast.List) -> Any:
        return _make(cst.List, elements=[self._element(e) for e in node.elts])

    def _set(self, node: ast.Set) -> Any:
        return _make(cst.Set, elements=[self._element(e) for e in node.elts])

    def _dict(self, node: ast.Dict) -> Any:
        elements = [
            _make(cst.StarredDictElement, value=self.expr(v))
            if k is None
            else _make(cst.DictElement, key=self.expr(k), value=self.expr(v))
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        return _make(cst.Dict, elements=elements)

    def _for_in(self, generators: list[ast.comprehension]) -> Any:
        inner = None
        for gen in reversed(generators):
            inner = _make(
                cst.CompFor,
                target=self.expr(gen.target),
                iter=self.expr(gen.iter),
                ifs=[_make(cst.CompIf, test=self.expr(t)) for t in gen.ifs],
                inner_for_in=inner,
                asynchronous=_make(cst.Asynchronous) if gen.is_async else None,
            )
        return inner

    def _listcomp(self, node: ast.ListComp) -> Any:
        return _make(cst.ListComp, elt=self.expr(node.elt), for_in=self._for_in(node.generators))

    def _setcomp(self, node: ast.SetComp) -> Any:
        return _make(cst.SetComp, elt=self.expr(node.elt), for_in=self._for_in(node.generators))

    def _genexp(self, node: ast.GeneratorExp) -> Any:
        return _make(
            cst.GeneratorExp, elt=self.expr(node.elt), for_in=self._for_in(node.generators)
        )

    def _dictcomp(self, node: ast.DictComp) -> Any:
        return _make(
            cst.DictComp,
            key=self.expr(node.key),
            value=self.expr(node.value),
            for_in=self._for_in(node.generators),
        )

    def _lambda(self, node: ast.Lambda) -> Any:
        return _make(cst.Lambda, params=self._parameters(node.args), body=self.expr(node.body))

    def _ifexp(self, node: ast.IfExp) -> Any:
        return _make(
            cst.IfExp,
            test=self.expr(node.test),
            body=self.expr(node.body),
            orelse=self.expr(node.orelse),
        )

    def _namedexpr(self, node: ast.NamedExpr) -> Any:
        return _make(cst.NamedExpr, target=self.expr(node.target), value=self.expr(node.value))

    def _await(self, node: ast.Await) -> Any:
        return _make(cst.Await, expression=self.expr(node.value))

    def _yield(self, node: ast.Yield) -> Any:
        return _make(cst.Yield, value=self.opt(node.value))

    def _yieldfrom(self, node: ast.YieldFrom) -> Any:
        return _make(cst.Yield, value=_make(cst.From, item=self.expr(node.value)))


# Which method builds each CPython node (unbound: a table of bound methods would make every
# builder a reference cycle, left to the cyclic collector the engine pauses).
_EXPRESSIONS: dict[type, Callable[[Builder, Any], Any]] = {
    ast.Name: Builder._name,
    ast.Attribute: Builder._attribute,
    ast.Call: Builder._call,
    ast.Constant: Builder._constant,
    ast.BinOp: Builder._binop,
    ast.UnaryOp: Builder._unaryop,
    ast.BoolOp: Builder._boolop,
    ast.Compare: Builder._compare,
    ast.Subscript: Builder._subscript,
    ast.Tuple: Builder._tuple,
    ast.List: Builder._list,
    ast.Set: Builder._set,
    ast.Dict: Builder._dict,
    ast.ListComp: Builder._listcomp,
    ast.SetComp: Builder._setcomp,
    ast.GeneratorExp: Builder._genexp,
    ast.DictComp: Builder._dictcomp,
    ast.Lambda: Builder._lambda,
    ast.IfExp: Builder._ifexp,
    ast.NamedExpr: Builder._namedexpr,
    ast.Await: Builder._await,
    ast.Yield: Builder._yield,
    ast.YieldFrom: Builder._yieldfrom,
    ast.Starred: Builder._starred_element,
    ast.JoinedStr: Builder._by_libcst,
}
_STATEMENTS: dict[type, Callable[[Builder, Any], Any]] = {
    ast.Expr: Builder._expr_stmt,
    ast.Assign: Builder._assign,
    ast.AugAssign: Builder._augassign,
    ast.AnnAssign: Builder._annassign,
    ast.Return: Builder._return,
    ast.Raise: Builder._raise,
    ast.Assert: Builder._assert,
    ast.Delete: Builder._delete,
    ast.Pass: Builder._keyword_stmt,
    ast.Break: Builder._keyword_stmt,
    ast.Continue: Builder._keyword_stmt,
    ast.Import: Builder._import,
    ast.ImportFrom: Builder._importfrom,
    ast.Global: Builder._global,
    ast.Nonlocal: Builder._global,
    ast.FunctionDef: Builder._functiondef,
    ast.AsyncFunctionDef: Builder._functiondef,
    ast.ClassDef: Builder._classdef,
    ast.If: Builder._if,
    ast.For: Builder._for,
    ast.AsyncFor: Builder._for,
    ast.While: Builder._while,
    ast.With: Builder._with,
    ast.AsyncWith: Builder._with,
    ast.Try: Builder._try,
    ast.TryStar: Builder._try,
}
_KEYWORDS: dict[type, type] = {ast.Pass: cst.Pass, ast.Break: cst.Break, ast.Continue: cst.Continue}


def build(source: str, tree: ast.Module) -> cst.Module:
    """The libcst module of ``source`` (whose CPython tree is ``tree``), formatting aside;
    raises ``Unsupported`` for source it does not rebuild."""
    try:
        return Builder(source, tree).module()
    except RecursionError:
        raise Unsupported("too deeply nested") from None
