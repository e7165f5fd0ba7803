"""Fast traversal of libcst trees.

libcst's own visitor re-dispatches through ``_visit_and_replace_children`` on every node,
whitespace and punctuation included, and ``CSTNode.children`` runs that machinery too: on
a TensorFlow module most of the analysis time went there.  This module walks the same
trees by reading each node's dataclass fields directly and never enters formatting nodes
(whitespace, comments, brackets, commas), which no rule looks at.

Children come in source order, as with libcst (``tests/model/test_walk.py`` checks this against
``CSTNode.children`` over real code), so visitors see nodes in the same order as before.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst

# Formatting nodes: never semantic, never visited.
_FORMATTING: tuple[type[cst.CSTNode], ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Comment,
    cst.Newline,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.ImportStar,
    cst.ParamStar,
    cst.ParamSlash,
    cst.Asynchronous,
)

# Fields whose dataclass order differs from the order in the source text.
_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {
    cst.FunctionDef: (
        "decorators",
        "asynchronous",
        "name",
        "type_parameters",
        "params",
        "returns",
        "body",
    ),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
    cst.For: ("asynchronous", "target", "iter", "body", "orelse"),
    cst.With: ("asynchronous", "items", "body"),
    cst.CompFor: ("asynchronous", "target", "iter", "ifs", "inner_for_in"),
    cst.Param: ("star", "name", "annotation", "default"),
    cst.Parameters: (
        "posonly_params",
        "posonly_ind",
        "params",
        "star_arg",
        "kwonly_params",
        "star_kwarg",
    ),
    cst.Lambda: ("params", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ImportFrom: ("relative", "module", "names"),
    cst.AnnAssign: ("target", "annotation", "value"),
    cst.Arg: ("keyword", "value"),
    cst.MatchAs: ("pattern", "name"),
    cst.MatchKeywordElement: ("key", "pattern"),
    cst.MatchMappingElement: ("key", "pattern"),
    cst.MatchClass: ("cls", "patterns", "kwds"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
}

_NOT_CHILDREN = frozenset(
    {
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "trailing_whitespace",
        "whitespace_before",
        "whitespace_after",
        "whitespace_before_colon",
        "whitespace_after_colon",
        "whitespace_after_def",
        "whitespace_after_name",
        "whitespace_before_params",
        "whitespace_after_class",
        "whitespace_after_with",
        "whitespace_after_for",
        "whitespace_before_in",
        "whitespace_after_in",
        "whitespace_after_if",
        "whitespace_after_await",
        "whitespace_after_at",
        "whitespace_after_indicator",
        "whitespace_after_arg",
        "whitespace_after_star",
        "whitespace_after_param",
        "whitespace_after_lambda",
        "whitespace_after_import",
        "whitespace_after_from",
        "whitespace_before_import",
        "whitespace_after_assert",
        "whitespace_after_del",
        "whitespace_after_return",
        "whitespace_after_raise",
        "whitespace_after_global",
        "whitespace_after_nonlocal",
        "whitespace_after_while",
        "whitespace_after_elif",
        "whitespace_after_except",
        "whitespace_after_match",
        "whitespace_after_case",
        "whitespace_after_type",
        "whitespace_after_walrus",
        "whitespace_before_walrus",
        "whitespace_before_from",
        "whitespace_before_as",
        "whitespace_after_as",
        "whitespace_before_args",
        "whitespace_before_expression",
        "whitespace_after_expression",
        "whitespace_before_value",
        "whitespace_before_equal",
        "whitespace_after_equal",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "colon",
        "equal",
        "dot",
        "star_tok",
        "first_line",
        "indent",
        "newline",
        "encoding",
        "default_indent",
        "default_newline",
        "has_trailing_newline",
    }
)

_FIELDS: dict[type, tuple[str, ...]] = {}
_SKIP: dict[type, bool] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    order = _ORDER.get(cls)
    names = order or tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    found = tuple(n for n in names if n not in _NOT_CHILDREN)
    _FIELDS[cls] = found
    return found


def _skipped(cls: type) -> bool:
    skip = issubclass(cls, _FORMATTING) or not issubclass(cls, cst.CSTNode)
    _SKIP[cls] = skip
    return skip


def children(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """The semantic child nodes of ``node``, in source order."""
    known = _KNOWN.get(id(node))
    if known is not None:
        return known
    return _children(node)


def _children(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    out: list[cst.CSTNode] = []
    cls = type(node)
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _fields_of(cls)
    skip = _SKIP
    for name in fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                s = skip.get(type(item))
                if s is None:
                    s = _skipped(type(item))
                if not s:
                    out.append(item)
        elif value is not None:
            s = skip.get(kind)
            if s is None:
                s = _skipped(kind)
            if not s:
                out.append(value)
    return tuple(out)


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every semantic node under ``node`` (not ``node`` itself), in source order."""
    stack = list(reversed(children(node)))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


# Children of the nodes of the trees being analysed (``Index``), by ``id``: the analysis
# walks each tree several times (scopes, traced-code discovery, the rules), and reading the
# fields again each time was its largest cost.  An entry lives only while its tree is
# indexed, and the index holds the tree, so an ``id`` here always denotes a live node.
_KNOWN: dict[int, tuple[cst.CSTNode, ...]] = {}
_known_lock = threading.Lock()
# ``release`` runs from a context's finalizer, which the garbage collector may call on a
# thread that is taking or holding ``_known_lock`` (in ``Index.__init__``): there it leaves
# its ids for that thread to drop, instead of waiting for itself.
_inside = threading.local()
_released: list[list[int]] = []


def _drop(ids: list[int]) -> None:
    for key in ids:
        _KNOWN.pop(key, None)


def _drain() -> None:
    """Drop what finalizers left; the caller holds ``_known_lock``."""
    while _released:
        _drop(_released.pop())


class Index:
    """One walk of a tree: every node's children (``children`` answers from it until
    ``release``), its parent and its rank in source order.

    The rank sorts nodes as their start positions would: a def or class starts at
    ``def``/``class``, after its decorators."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}
        known: dict[int, tuple[cst.CSTNode, ...]] = {}
        parents, order = self.parents, self.order
        decorated = (cst.FunctionDef, cst.ClassDef)
        # Items are nodes to visit, or (def, its children after the decorators) to number
        # the def once its decorators are done.
        stack: list[Any] = [root]
        while stack:
            item = stack.pop()
            if type(item) is tuple:
                node, rest = item
                order[node] = len(order)
                stack.extend(reversed(rest))
                continue
            node = item
            below = known[id(node)] = _children(node)
            for child in below:
                parents[child] = node
            if type(node) in decorated and node.decorators:
                stack.append((node, [c for c in below if type(c) is not cst.Decorator]))
                stack.extend(reversed([c for c in below if type(c) is cst.Decorator]))
            else:
                order[node] = len(order)
                stack.extend(reversed(below))
        self._ids = list(known)
        _inside.flag = True  # before the lock: a collection may run as soon as it is taken
        try:
            with _known_lock:
                _KNOWN.update(known)
                _drain()
        finally:
            _inside.flag = False

    def release(self) -> None:
        """``children`` no longer answers from this index."""
        ids, self._ids = self._ids, []
        if getattr(_inside, "flag", False):
            _released.append(ids)  # a finalizer inside this thread's `__init__` above
            return
        with _known_lock:
            _drop(ids)
            _drain()


class Visitor:
    """A drop-in for ``libcst.CSTVisitor`` on the fast walk: ``visit_<Node>`` (return False
    to skip the children) and ``leave_<Node>`` methods, or ``on_visit``/``on_leave`` for
    every node; start with ``walk(node)``.  Formatting nodes are never visited."""

    _handlers: dict[type, tuple[Callable[..., Any] | None, Callable[..., Any] | None]] = {}

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._handlers = {}

    def _lookup(self, kind: type) -> tuple[Callable[..., Any] | None, Callable[..., Any] | None]:
        name = kind.__name__
        found = (
            getattr(type(self), f"visit_{name}", None),
            getattr(type(self), f"leave_{name}", None),
        )
        type(self)._handlers[kind] = found
        return found

    def on_visit(self, node: cst.CSTNode) -> bool:
        handlers = type(self)._handlers.get(type(node)) or self._lookup(type(node))
        return handlers[0] is None or handlers[0](self, node) is not False

    def on_leave(self, node: cst.CSTNode) -> None:
        handlers = type(self)._handlers.get(type(node)) or self._lookup(type(node))
        if handlers[1] is not None:
            handlers[1](self, node)

    def walk(self, node: cst.CSTNode) -> None:
        cls = type(self)
        if cls.on_visit is not Visitor.on_visit or cls.on_leave is not Visitor.on_leave:
            if self.on_visit(node):
                for child in children(node):
                    self.walk(child)
            self.on_leave(node)
            return
        # The usual case, with on_visit/on_leave inlined (the walks' largest cost).
        visit, leave = cls._handlers.get(type(node)) or self._lookup(type(node))
        if visit is None or visit(self, node) is not False:
            for child in children(node):
                self.walk(child)
        if leave is not None:
            leave(self, node)
