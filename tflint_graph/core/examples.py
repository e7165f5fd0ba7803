"""The input-spec language of dynamic mode: what to call a traced function with.

This module never imports TensorFlow and never ``eval``s user text: specs are parsed by hand,
Python literals with :func:`ast.literal_eval` only, and ``input_signature`` source with
:mod:`ast`.

Config
------

::

    [tool.tflint-graph.dynamic]
    unknown-dim = 2          # size given to every unknown (None) dimension; 1..1024
    examples = { "pkg.mod:fn" = "float32[2,3], int32[]" }

or, one line per function::

    [tool.tflint-graph.dynamic.examples]
    "pkg.mod:fn" = "float32[2,3], int32[]"
    "pkg.mod:Model.call" = "float32[None,28], training=py:True"

Keys
----

``"<module>:<function>"`` or ``"<module>:<Class>.<method>"``, where ``<module>`` is a dotted
module name as it is imported (``pkg.sub.mod``) and the rest are Python identifiers.

Values
------

A comma-separated list of argument specs (an empty string means "call with no arguments");
a trailing comma is allowed, whitespace is ignored::

    value    := [ arg { "," arg } [ "," ] ]
    arg      := [ NAME "=" ] spec          keyword arguments come after positional ones
    spec     := tensor | python
    tensor   := DTYPE "[" [ dim { "," dim } ] "]"
    dim      := INT (>= 0) | "None"        None: unknown, given `unknown-dim` elements
    python   := "py:" LITERAL              any Python literal ast.literal_eval accepts

``DTYPE`` is a TensorFlow dtype name: ``float16 float32 float64 bfloat16 int8 int16 int32
int64 uint8 uint16 uint32 uint64 bool string complex64 complex128``.

Examples: ``float32[2,3]`` (a 2x3 matrix), ``int32[]`` (a scalar), ``string[4]``,
``bool[2]``, ``float32[None,28]`` (a batch of unknown size), ``py:3``, ``py:0.5``,
``py:"train"``, ``py:True``, ``py:(1, 2)``, ``py:None``, ``training=py:False``,
``mask=bool[2,5]``.

The ``py:`` prefix marks a non-tensor Python argument, so that a bare word can never be
mistaken for one (``float32`` alone is an error, not the string ``"float32"``).  A literal may
contain commas and brackets (``py:[1, 2]``, ``py:"a,b"``): the value is split only at commas
outside brackets and quotes.

Limits: a tensor spec holds at most ``MAX_ELEMENTS`` elements counting its known
dimensions (dynamic mode runs on small inputs), and at most ``MAX_RANK`` dimensions.

Errors are :class:`ValueError` naming the key and the 1-based argument position and column.
"""

from __future__ import annotations

import ast
import keyword
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DTYPES: frozenset[str] = frozenset(
    {
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "string",
        "complex64",
        "complex128",
    }
)

# Other names TensorFlow exports for the same dtypes (``tf.double``, ``tf.half``); accepted in
# ``input_signature`` source, where they are real attributes of ``tf``.
_DTYPE_ALIASES: Mapping[str, str] = {"double": "float64", "half": "float16"}

DEFAULT_UNKNOWN_DIM = 2
MAX_UNKNOWN_DIM = 1024
MAX_ELEMENTS = 1 << 24
MAX_RANK = 32
PY_PREFIX = "py:"


@dataclass(frozen=True)
class TensorSpecLite:
    """A tensor argument: dtype name and shape (``None`` dims unknown; shape ``None`` is an
    unknown rank, which only ``input_signature`` source can give)."""

    dtype: str
    shape: tuple[int | None, ...] | None
    name: str | None = None
    # Integer values are drawn from [low, high) (class ids of a guessed label: in range).
    values: tuple[int, int] | None = None

    def __str__(self) -> str:
        if self.shape is None:
            return f"{self.dtype}[?]"
        dims = ",".join("None" if d is None else str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]"


@dataclass(frozen=True)
class PyValue:
    """A non-tensor Python argument (``py:3``)."""

    value: Any

    def __str__(self) -> str:
        return PY_PREFIX + repr(self.value)


ArgSpec = TensorSpecLite | PyValue


@dataclass(frozen=True)
class Example:
    """How to call ``target`` (``"pkg.mod:fn"`` or ``"pkg.mod:Class.method"``)."""

    target: str
    args: tuple[ArgSpec, ...] = ()
    kwargs: Mapping[str, ArgSpec] = field(default_factory=dict)

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.target.partition(":")[2]

    def __str__(self) -> str:
        parts = [str(a) for a in self.args]
        parts += [f"{k}={v}" for k, v in self.kwargs.items()]
        return ", ".join(parts)


def concrete_shape(spec: TensorSpecLite, unknown: int = DEFAULT_UNKNOWN_DIM) -> tuple[int, ...]:
    """The shape to build a real tensor with: unknown dims become ``unknown``; an unknown rank
    becomes a vector of ``unknown`` elements."""
    if spec.shape is None:
        return (unknown,)
    return tuple(unknown if d is None else d for d in spec.shape)


# -- keys -------------------------------------------------------------------------------


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)


def validate_target(key: str) -> str:
    """Check an ``examples`` key; returns it stripped, raises ValueError otherwise."""
    target = key.strip()
    module, colon, qualname = target.partition(":")
    problem = None
    if not colon:
        problem = "expected 'pkg.module:function' or 'pkg.module:Class.method' (no ':')"
    elif not module or not all(_is_name(p) for p in module.split(".")):
        problem = f"{module!r} is not a dotted module name"
    else:
        parts = qualname.split(".")
        if not qualname or len(parts) > 2 or not all(_is_name(p) for p in parts):
            problem = f"{qualname!r} is not a function name or Class.method"
    if problem is not None:
        raise ValueError(f"example key {key!r}: {problem}")
    return target


# -- values -----------------------------------------------------------------------------

_OPEN = {"[": "]", "(": ")", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _split_top_level(text: str, key: str) -> list[tuple[int, str]]:
    """Split at commas outside brackets and quotes; returns (column, piece) pairs with the
    0-based column of each piece's first character."""
    pieces: list[tuple[int, str]] = []
    stack: list[str] = []
    quote: str | None = None
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = None
        elif ch in "\"'":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            i += len(quote) - 1
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE:
            if not stack or stack[-1] != ch:
                raise ValueError(f"example {key!r}: unbalanced {ch!r} at column {i + 1}")
            stack.pop()
        elif ch == "," and not stack:
            pieces.append((start, text[start:i]))
            start = i + 1
        i += 1
    if quote is not None:
        raise ValueError(f"example {key!r}: unterminated string starting in the value")
    if stack:
        raise ValueError(f"example {key!r}: unclosed bracket (expected {stack[-1]!r})")
    pieces.append((start, text[start:]))
    return pieces


def _parse_dims(body: str, where: str) -> tuple[int | None, ...]:
    if not body.strip():
        return ()
    dims: list[int | None] = []
    for raw in body.split(","):
        dim = raw.strip()
        if dim == "None":
            dims.append(None)
        elif dim.isdigit() and dim.isascii():
            dims.append(int(dim))
        elif not dim:
            raise ValueError(f"{where}: empty dimension in [{body}]")
        else:
            raise ValueError(f"{where}: dimension {dim!r} must be a non-negative integer or None")
    if len(dims) > MAX_RANK:
        raise ValueError(f"{where}: rank {len(dims)} is above the limit of {MAX_RANK}")
    known = math.prod(d for d in dims if d is not None)
    if known > MAX_ELEMENTS:
        raise ValueError(
            f"{where}: {known} elements is above the limit of {MAX_ELEMENTS} for dynamic mode"
        )
    return tuple(dims)


def parse_arg(text: str, where: str = "argument") -> ArgSpec:
    """One spec (``float32[2,3]`` or ``py:3``), without a keyword."""
    spec = text.strip()
    if not spec:
        raise ValueError(f"{where}: empty argument")
    if spec.startswith(PY_PREFIX):
        literal = spec[len(PY_PREFIX) :].strip()
        if not literal:
            raise ValueError(f"{where}: 'py:' needs a Python literal after it, e.g. py:3")
        try:
            value = ast.literal_eval(literal)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            hint = f' (a string needs quotes: py:"{literal}")' if literal.isidentifier() else ""
            raise ValueError(
                f"{where}: {literal!r} is not a Python literal "
                f"(numbers, strings, True/False/None, tuples, lists, dicts, sets){hint}"
            ) from None
        return PyValue(value)
    dtype, bracket, rest = spec.partition("[")
    dtype = dtype.strip()
    if not bracket:
        hint = " (a Python value needs the py: prefix, e.g. py:3)" if dtype not in DTYPES else ""
        raise ValueError(
            f"{where}: {spec!r} is not a spec; expected DTYPE[dims] such as float32[2,3]{hint}"
        )
    if dtype not in DTYPES:
        known = " ".join(sorted(DTYPES))
        raise ValueError(f"{where}: unknown dtype {dtype!r}; known: {known}")
    if not rest.endswith("]") or "[" in rest or "]" in rest[:-1]:
        raise ValueError(f"{where}: {spec!r} must end with one closing ']'")
    return TensorSpecLite(dtype, _parse_dims(rest[:-1], where))


def parse_example(key: str, value: str) -> Example:
    """Parse one ``examples`` entry; raises ValueError naming the key and the position."""
    target = validate_target(key)
    if not isinstance(value, str):
        raise ValueError(f'example {key!r}: the value must be a string such as "float32[2,3]"')
    pieces = _split_top_level(value, key)
    if len(pieces) > 1 and not pieces[-1][1].strip():
        pieces.pop()  # a trailing comma
    if len(pieces) == 1 and not pieces[0][1].strip():
        return Example(target)
    args: list[ArgSpec] = []
    kwargs: dict[str, ArgSpec] = {}
    for position, (column, piece) in enumerate(pieces, start=1):
        column += len(piece) - len(piece.lstrip())
        where = f"example {key!r}, argument {position} (column {column + 1})"
        name, spec = _keyword(piece, where)
        arg = parse_arg(spec, where)
        if name is None:
            if kwargs:
                raise ValueError(f"{where}: positional argument after keyword arguments")
            args.append(arg)
        elif name in kwargs:
            raise ValueError(f"{where}: keyword {name!r} given twice")
        else:
            kwargs[name] = arg
    return Example(target, tuple(args), kwargs)


def _keyword(piece: str, where: str) -> tuple[str | None, str]:
    """Split ``name=spec``; an ``=`` inside a py: literal or brackets is not a keyword."""
    head, eq, tail = piece.partition("=")
    name = head.strip()
    if not eq or name.startswith(PY_PREFIX) or any(c in head for c in "[(\"'{"):
        return None, piece
    if not _is_name(name):
        raise ValueError(f"{where}: {name!r} is not a valid keyword argument name")
    return name, tail


def parse_examples(table: Mapping[str, Any]) -> dict[str, Example]:
    """Parse a whole ``examples`` table (target -> spec string)."""
    return {validate_target(k): parse_example(k, v) for k, v in table.items()}


# -- input_signature source ------------------------------------------------------------


class _NotLiteral(Exception):
    pass


def _dotted(node: ast.expr) -> list[str]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise _NotLiteral
    parts.append(node.id)
    return parts[::-1]


def _sig_dim(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
        and node.value >= 0
    ):
        return node.value
    raise _NotLiteral


def _sig_shape(node: ast.expr) -> tuple[int | None, ...] | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(_sig_dim(e) for e in node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return (_sig_dim(node),)  # TensorShape(3) is a vector of 3
    if isinstance(node, ast.Call) and _dotted(node.func)[-1] == "TensorShape":
        if len(node.args) != 1 or node.keywords:
            raise _NotLiteral
        return _sig_shape(node.args[0])
    raise _NotLiteral


def _sig_dtype(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
    else:
        name = _dotted(node)[-1]
    name = _DTYPE_ALIASES.get(name, name)
    if name not in DTYPES:
        raise _NotLiteral
    return name


def _sig_spec(node: ast.expr) -> TensorSpecLite:
    if not isinstance(node, ast.Call) or _dotted(node.func)[-1] != "TensorSpec":
        raise _NotLiteral
    if len(node.args) > 3 or any(isinstance(a, ast.Starred) for a in node.args):
        raise _NotLiteral
    given: dict[str, ast.expr] = dict(zip(("shape", "dtype", "name"), node.args, strict=False))
    for kw in node.keywords:
        if kw.arg not in ("shape", "dtype", "name") or kw.arg in given:
            raise _NotLiteral
        given[kw.arg] = kw.value
    if "shape" not in given:
        raise _NotLiteral
    name_node = given.get("name")
    name: str | None = None
    if name_node is not None:
        if not isinstance(name_node, ast.Constant) or not isinstance(
            name_node.value, (str, type(None))
        ):
            raise _NotLiteral
        name = name_node.value
    dtype = _sig_dtype(given["dtype"]) if "dtype" in given else "float32"
    return TensorSpecLite(dtype, _sig_shape(given["shape"]), name)


def _signature_node(text: str) -> ast.expr:
    source = text.strip()
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError:
        pass
    # ``input_signature=[...]`` as written in the decorator.
    call = ast.parse(f"f({source})", mode="eval").body
    assert isinstance(call, ast.Call)
    for kw in call.keywords:
        if kw.arg == "input_signature" and not call.args and len(call.keywords) == 1:
            return kw.value
    raise _NotLiteral


def from_signature_source(text: str) -> list[TensorSpecLite] | None:
    """The specs of an ``input_signature`` given as source text (the list, or
    ``input_signature=[...]``), e.g. ``[tf.TensorSpec(shape=[None, 28], dtype=tf.float32)]``.

    Any prefix names TensorFlow (``tf.``, ``tensorflow.``, ``tf.dtypes.``, none); the shape
    may be a list or tuple, ``tf.TensorShape([...])``, or ``None`` (unknown rank: shape
    ``None``); the dtype defaults to float32 as in TensorFlow.  Returns None when anything is
    not a literal (a variable, a nested structure, a RaggedTensorSpec, a negative dim).
    """
    try:
        node = _signature_node(text)
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None
        return [_sig_spec(e) for e in node.elts]
    except (_NotLiteral, SyntaxError, ValueError, MemoryError, RecursionError):
        return None
