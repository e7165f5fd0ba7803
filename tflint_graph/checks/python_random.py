from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.fixing import Site
from tflint_graph.model import walk
from tflint_graph.model.context import TracedFunction
from tflint_graph.model.names import dotted
from tflint_graph.model.values import loads_of, sole_name_target, values_of
from tflint_graph.traced import traced_of

_MODULES = ("random.", "numpy.random.", "secrets.")
_EXACT = ("uuid.uuid1", "uuid.uuid4")
_GENERATORS = (
    "numpy.random.default_rng",
    "numpy.random.RandomState",
    "numpy.random.Generator",
    "random.Random",
    "random.SystemRandom",
)


def _string_method(func: cst.BaseExpression) -> bool:
    """``<str>.join`` / ``.format`` / ``.upper`` ...: a method of ``str`` by its name."""
    return isinstance(func, cst.Attribute) and func.attr.value in _STR_METHODS


_STR_METHODS = frozenset(
    {"join", "format", "upper", "lower", "replace", "strip", "encode", "split", "hex"}
)


def _stateful_random_op(names: frozenset[str]) -> bool:
    """A TensorFlow op that draws from its own state (``tf.random.uniform``,
    ``tf.image.random_flip_left_right``, ``tf.nn.dropout``), not a stateless one."""
    return bool(names) and all(
        name.startswith(_STATEFUL_RANDOM)
        and "stateless" not in name
        and name.rsplit(".", 1)[-1] not in _NOT_DRAWS
        for name in names
    )


_STATEFUL_RANDOM = ("tensorflow.random.", "tensorflow.image.random_", "tensorflow.nn.dropout")
_NOT_DRAWS = frozenset({"set_seed", "Generator", "create_rng_state", "get_global_generator"})


_SEEDABLE = frozenset(g for g in _GENERATORS if g != "random.SystemRandom")


def _given_seed(call: cst.Call) -> bool:
    """``RandomState(self.seed)``, ``default_rng(seed=s)``: a seed, not None, is given."""
    seed = next(
        (a.value for a in call.args if a.keyword is None or a.keyword.value == "seed"), None
    )
    return seed is not None and not (isinstance(seed, cst.Name) and seed.value == "None")


def _literal_seed(call: cst.Call) -> bool:
    """Seeded with literal numbers only (``seed(1234)``, ``default_rng(0)``)."""
    return bool(call.args) and all(
        isinstance(a.value, cst.Integer) and not a.star for a in call.args
    )


# What to reach for instead, by the Python function's name.
_INSTEAD = {
    "random": "tf.random.uniform([])",
    "uniform": "tf.random.uniform()",
    "rand": "tf.random.uniform()",
    "randint": "tf.random.uniform(..., dtype=tf.int32)",
    "integers": "tf.random.uniform(..., dtype=tf.int32)",
    "gauss": "tf.random.normal()",
    "normal": "tf.random.normal()",
    "randn": "tf.random.normal()",
    "standard_normal": "tf.random.normal()",
    "shuffle": "tf.random.shuffle()",
    "permutation": "tf.random.shuffle()",
    "choice": "tf.random.categorical() or tf.random.shuffle()",
    "uuid1": "an id made outside the traced function and passed in as a tensor",
    "uuid4": "an id made outside the traced function and passed in as a tensor",
}


class PythonRandom(Rule):
    """Python or NumPy randomness in traced code is drawn once and frozen into the graph."""

    code = "TFG103"
    name = "python-random"
    # The draw becomes a tensor (float32 or int32) where it was a Python or NumPy number:
    # arithmetic with float64 tensors, Python control flow on it, ints past 2**31 change.
    FIX_SAFETY = "unsafe"

    VALID = [
        """
import numpy as np
import tensorflow as tf

@tf.function
def noise(x, seed=None):
    rng = np.random.default_rng(seed)
    draw = lambda: rng.integers(2**31)  # op-level seeds: each op still draws per call
    std = tf.random.uniform([], 0.1, 1.0, seed=draw())
    return x + tf.random.normal(tf.shape(x), stddev=std, seed=draw())
""",
        """
import tensorflow as tf

@tf.function
def augment(image):
    if tf.random.uniform([]) > 0.5:
        image = tf.image.flip_left_right(image)
    return image
""",
        """
import random
import tensorflow as tf

def pick_files(files):
    random.shuffle(files)  # eager: fine
    return files

@tf.function
def step(x, random=None):
    return x
""",
        """
from mylib import random
import tensorflow as tf

@tf.function
def step(x):
    return random.jitter(x)  # a project module that happens to be called random
""",
    ]
    INVALID = [
        """
import random
import tensorflow as tf

def augment(image):
    if random.random() > 0.5:  # TFG103
        image = tf.image.flip_left_right(image)
    return image

ds = tf.data.Dataset.list_files("*.png").map(augment)
""",
        """
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)

@tf.function
def noisy(x):
    noise = np.random.normal(size=3)  # TFG103
    return x + noise * rng.uniform()  # TFG103
""",
        """
import random

import tensorflow as tf

@tf.function
def jitter(x):
    seed = random.randint(0, 2**31)  # TFG103
    return x + tf.random.stateless_uniform([], seed=[seed, 0])
""",
    ]

    def _random_call(self, call: cst.Call, fn: TracedFunction) -> str | None:
        res = self.ctx.resolve(call.func)
        if res.startswith(*_MODULES) or res.is_(*_EXACT):
            return next(iter(sorted(res.imported)))
        func = call.func
        if isinstance(func, cst.Attribute):
            for value in values_of(self.ctx, func.value, fn):
                if isinstance(value, cst.Call) and self.ctx.resolve(value.func).is_(*_GENERATORS):
                    return dotted(func) or func.attr.value
        return None

    def _python_items(self, node: cst.Call, fn: TracedFunction) -> bool:
        """The first argument is a list of Python objects (functions, ``functools.partial``s,
        lambdas): its display's items and what the body appends to it."""
        if not node.args:
            return False
        arg = node.args[0].value
        values = (
            [arg] if isinstance(arg, cst.List | cst.Tuple) else list(values_of(self.ctx, arg, fn))
        )
        if not values or not all(isinstance(v, cst.List | cst.Tuple) for v in values):
            return False
        items = [e.value for v in values for e in v.elements]
        if isinstance(arg, cst.Name):
            for call in walk.descendants(fn.node):
                if (
                    type(call) is cst.Call
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "append"
                    and isinstance(call.func.value, cst.Name)
                    and call.func.value.value == arg.value
                    and len(call.args) == 1
                ):
                    items.append(call.args[0].value)
        return bool(items) and all(self._python_object(item) for item in items)

    def _python_object(self, item: cst.BaseExpression) -> bool:
        if isinstance(item, cst.Name | cst.Attribute | cst.Lambda):
            return True
        return isinstance(item, cst.Call) and self.ctx.resolve(item.func).is_("functools.partial")

    def _seeded_here(self, node: cst.Call, fn: TracedFunction) -> bool:
        """Every call of ``fn`` draws the same values anyway: the body seeds the generator
        with a literal before this draw (``np.random.seed(1234)``), or the draw is from a
        generator it makes with a literal seed (``rng = np.random.default_rng(0)``), so the
        value frozen into the graph is the one each eager call would draw."""
        ctx = self.ctx
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            values = list(values_of(ctx, func.value, fn))
            if values and all(
                isinstance(v, cst.Call)
                and ctx.resolve(v.func).is_(*_GENERATORS)
                and ctx.enclosing_function(v) is fn.node
                and _literal_seed(v)
                for v in values
            ):
                return True
        order = ctx.source_order(node)
        for seed in ctx.memo("seed-calls", fn.node, lambda: self._seed_calls(fn)):
            if ctx.source_order(seed) < order and _literal_seed(seed):
                return True
        return False

    def _seed_calls(self, fn: TracedFunction) -> list[cst.Call]:
        """``seed(...)`` statements of the body itself (not under an ``if`` or a loop)."""
        body = fn.node.body if isinstance(fn.node, cst.FunctionDef) else None
        found = []
        for n in walk.descendants(fn.node) if body is not None else ():
            if type(n) is not cst.Call:
                continue
            stmt = self.ctx.parent(self.ctx.parent(n))  # Call -> Expr -> statement line
            if (
                isinstance(stmt, cst.SimpleStatementLine)
                and self.ctx.parent(stmt) is body
                and self.ctx.resolve(n.func).is_("random.seed", "numpy.random.seed")
            ):
                found.append(n)
        return found

    def _reaches_graph(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        """The value of ``expr`` (a uuid, or a string made from one) becomes part of what
        the graph computes: an argument of a TensorFlow op other than its ``name``, or what
        the function returns.  A uuid that only names things (``api_name = "gru_" +
        str(uuid.uuid4())`` handed to a helper, a ``name=``, a cache key) is meant to be
        new per trace, and is."""
        ctx = self.ctx
        node = expr
        while (parent := ctx.parent(node)) is not None:
            if isinstance(parent, cst.Arg):
                call = ctx.parent(parent)
                if not isinstance(call, cst.Call) or (
                    parent.keyword is not None and "name" in parent.keyword.value
                ):
                    return False
                res = ctx.resolve(call.func)
                if res.startswith("tensorflow.", "keras."):
                    return True
                if not (res.startswith("builtins.") or _string_method(call.func)):
                    return False  # another function: what it makes of the value is unknown
                node = call
                continue
            if isinstance(parent, cst.Call):
                if parent.func is node and _string_method(node):
                    node = parent  # `"_".join(...)`, `uuid.uuid4().hex.upper()`
                    continue
                return False
            if isinstance(
                parent,
                cst.Attribute
                | cst.Subscript
                | cst.BinaryOperation
                | cst.FormattedStringExpression
                | cst.FormattedString
                | cst.ConcatenatedString
                | cst.SubscriptElement
                | cst.Index
                | cst.Slice
                | cst.Element
                | cst.Tuple
                | cst.List
                | cst.DictElement
                | cst.Dict,
            ):
                node = parent
                continue
            if isinstance(parent, cst.Return):
                return True
            if isinstance(parent, cst.Assign) and depth < 3:
                return any(
                    self._reaches_graph(use, depth + 1)
                    for target in parent.targets
                    if isinstance(target.target, cst.Name)
                    for use in self._uses(target.target)
                )
            return False
        return False

    def _seeds_only(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        """Every use of the value of ``expr`` is the ``seed=`` of a stateful TensorFlow random
        op (``tf.random.uniform(..., seed=rng.integers(n))``), directly, through a name, a
        ``lambda: ...`` or one-line ``def`` that returns it, or through the generator it makes
        (``rng = np.random.default_rng(seed)``).  Fixing an op-level seed at trace time is
        how TensorFlow makes a graph reproducible; the op still draws new values on every
        call (verified with TF 2.21).  A stateless op's ``seed`` is a different matter: fixed
        there, every call draws the same numbers, so it is still reported."""
        ctx = self.ctx
        if depth > 3:
            return False
        node = expr
        parent = ctx.parent(node)
        if (
            isinstance(parent, cst.Arg)
            and isinstance(call := ctx.parent(parent), cst.Call)
            and ctx.resolve(call.func).is_builtin("int")
        ):
            node, parent = call, ctx.parent(call)  # `seed=int(rng.integers(n))`
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            return (
                isinstance(call, cst.Call)
                and parent.keyword is not None
                and parent.keyword.value == "seed"
                and _stateful_random_op(ctx.resolve(call.func).imported)
            )
        if isinstance(parent, cst.Attribute) and parent.value is node:
            # `rng.integers(n)` on a generator this value is: each draw must seed only.
            call = ctx.parent(parent)
            return (
                isinstance(call, cst.Call)
                and call.func is parent
                and self._seeds_only(call, depth + 1)
            )
        holder: cst.CSTNode | None = None
        if isinstance(parent, cst.Lambda) and parent.body is node:
            holder = ctx.parent(parent)
            target = sole_name_target(holder) if isinstance(holder, cst.Assign) else None
        elif isinstance(parent, cst.Return):
            fn = ctx.enclosing_function(parent)
            body = fn.body.body if isinstance(fn, cst.FunctionDef) else ()
            single = len(body) == 1 and ctx.parent(parent) is body[0]
            if single and isinstance(fn, cst.FunctionDef):
                # `def seed(): return rng.integers(n)`: every call of it must seed only.
                calls = [ctx.parent(u) for u in self._uses(fn.name, fn)]
                return bool(calls) and all(
                    isinstance(c, cst.Call) and self._seeds_only(c, depth + 1) for c in calls
                )
            return False
        else:
            target = sole_name_target(parent) if isinstance(parent, cst.Assign) else None
            if target is not None:
                uses = self._uses(target)
                return bool(uses) and all(self._seeds_only(u, depth + 1) for u in uses)
            return False
        if target is None:
            return False
        # `seed = lambda: rng.integers(n)`: every call of it must seed only.
        calls = [ctx.parent(u) for u in self._uses(target)]
        return bool(calls) and all(
            isinstance(c, cst.Call) and self._seeds_only(c, depth + 1) for c in calls
        )

    def _uses(self, target: cst.Name, node: cst.CSTNode | None = None) -> list[cst.CSTNode]:
        return loads_of(self.ctx, target, node)

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        name = self._random_call(node, fn)
        if name is None:
            return
        short = name.rsplit(".", 1)[-1]
        if short == "seed":
            return  # seeding draws nothing; the draws after it are what is frozen
        if name in _SEEDABLE and _given_seed(node):
            # A generator made from a seed draws nothing, and one made anew on each call from
            # the same seed gives each call the draws a trace froze.
            return
        if short.startswith("uuid") and not self._reaches_graph(node):
            return
        if self._seeds_only(node):
            return  # an op-level seed: the stateful op it seeds still draws anew per call
        if self._seeded_here(node, fn):
            return
        if traced_of(self.ctx).setup.covers(node, fn, construction=False):
            return  # drawn once by design: a lazily made projection, a sample kept on disk
        instead = _INSTEAD.get(short, "tf.random.* ops or a tf.random.Generator")
        if short == "random" and node.args:
            # `np.random.random(size)`: a draw of that shape, not a scalar.
            size = node.args[0].value
            shape = f"[{size.value}]" if isinstance(size, cst.Integer) else self.quote(size)
            instead = f"tf.random.uniform({shape})"
        if short in ("shuffle", "choice", "sample") and self._python_items(node, fn):
            # Shuffling a list of Python objects (functions, layers): tf.random.shuffle cannot
            # hold them; draw the positions in the graph and pick with them.
            instead = (
                "a tensor of positions drawn in the graph (tf.random.shuffle(tf.range(n)))"
                " and tf.switch_case to pick each item"
            )
        shown = dotted(node.func) or name
        self.report(
            node,
            f"{shown}() is drawn once while tracing {fn.where} and frozen into the graph, "
            f"so every call reuses the same value; use {instead}",
            fn,
        )

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.CSTNode | None:
        """The ``tf.random`` draw with the same distribution, written with the module's own
        ``import tensorflow as X`` binding: ``random.random()`` -> ``tf.random.uniform([])``,
        ``random.randint(a, b)`` -> ``tf.random.uniform([], a, b + 1, dtype=tf.int32)``,
        ``np.random.normal(size=3)`` -> ``tf.random.normal([3])`` (see ``_DRAWS``).  None for
        a draw without such a counterpart (``choice``, ``shuffle``, a generator's method), a
        ``size=`` that is not written out (an int or a tuple?), ``*args``, ``dtype=``."""
        if not isinstance(node, cst.Call) or not isinstance(updated, cst.Call):
            return None
        names = set(site.qualified_names(node.func))
        if len(names) != 1:
            return None
        draw = _DRAWS.get(names.pop())
        alias = site.tensorflow_alias(node)
        if draw is None or alias is None:
            return None
        params, build = draw
        if params is None:  # rand(d0, d1, ...): the dimensions, positionally
            if any(a.keyword is not None or a.star for a in updated.args):
                return None
            dims = [a.value for a in updated.args]
            return _tf_call(alias, "uniform" if build is _uniform else "normal", _list(dims), {})
        bound = _bind(updated.args, params)
        if bound is None:
            return None
        made = build(bound)
        if made is None:
            return None
        func, shape, keywords = made
        if shape is None:
            return None
        return _tf_call(alias, func, shape, keywords, int_dtype=func == "randint")


# What a tf.random call is built from: its function ("uniform", "normal"; "randint" for
# tf.random.uniform with dtype=tf.int32), its shape, and its minval/maxval or mean/stddev.
_Made = tuple[str, cst.BaseExpression | None, dict[str, cst.BaseExpression]]
_Bound = dict[str, cst.BaseExpression]


def _scalar(bound: _Bound, size: str | None = None) -> cst.BaseExpression | None:
    """The shape of the draw: ``[]`` for one number, else NumPy's ``size=`` written out."""
    value = bound.get(size) if size is not None else None
    if value is None or (isinstance(value, cst.Name) and value.value == "None"):
        return _list([])
    if isinstance(value, cst.Integer):
        return _list([value])
    if isinstance(value, cst.Tuple | cst.List) and all(
        isinstance(e, cst.Element) for e in value.elements
    ):
        return _list([e.value for e in value.elements])
    return None  # a name: an int (shape [n]) or a tuple, which tf.random.* takes as it is


def _uniform(bound: _Bound) -> _Made | None:
    """``np.random.uniform(low, high, size)``, ``random.uniform(a, b)``, ``np.random.random``."""
    keywords = {}
    for source, target in (("low", "minval"), ("a", "minval"), ("high", "maxval"), ("b", "maxval")):
        if source in bound:
            keywords[target] = bound[source]
    return "uniform", _scalar(bound, "size"), keywords


def _normal(bound: _Bound) -> _Made | None:
    """``np.random.normal(loc, scale, size)``, ``random.gauss(mu, sigma)``."""
    keywords = {}
    for source, target in (
        ("loc", "mean"),
        ("mu", "mean"),
        ("scale", "stddev"),
        ("sigma", "stddev"),
    ):
        if source in bound:
            keywords[target] = bound[source]
    return "normal", _scalar(bound, "size"), keywords


def _randint_inclusive(bound: _Bound) -> _Made | None:
    """``random.randint(a, b)`` draws from ``a`` to ``b`` inclusive: maxval is ``b + 1``."""
    if "a" not in bound or "b" not in bound:
        return None
    return "randint", _list([]), {"minval": bound["a"], "maxval": _plus_one(bound["b"])}


def _randrange(bound: _Bound) -> _Made | None:
    """``random.randrange(stop)`` / ``randrange(start, stop)``; a step has no counterpart."""
    if "step" in bound or "start" not in bound:
        return None
    if "stop" not in bound:
        return "randint", _list([]), {"minval": cst.Integer("0"), "maxval": bound["start"]}
    return "randint", _list([]), {"minval": bound["start"], "maxval": bound["stop"]}


def _numpy_randint(bound: _Bound) -> _Made | None:
    """``np.random.randint(low, high=None, size=None)``: high exclusive, ``[0, low)`` alone."""
    if "dtype" in bound or "low" not in bound:
        return None
    low, high = bound["low"], bound.get("high")
    if high is None or (isinstance(high, cst.Name) and high.value == "None"):
        low, high = cst.Integer("0"), low
    return "randint", _scalar(bound, "size"), {"minval": low, "maxval": high}


_Build = Callable[[_Bound], _Made | None]
# The draws with an exact tf.random counterpart in distribution: the Python function's
# parameters in order (None: any number of dimensions, positionally), and the builder.
_DRAWS: dict[str, tuple[Sequence[str] | None, _Build]] = {
    "random.random": ((), _uniform),
    "random.uniform": (("a", "b"), _uniform),
    "random.randint": (("a", "b"), _randint_inclusive),
    "random.randrange": (("start", "stop", "step"), _randrange),
    "random.gauss": (("mu", "sigma"), _normal),
    "random.normalvariate": (("mu", "sigma"), _normal),
    "numpy.random.random": (("size",), _uniform),
    "numpy.random.random_sample": (("size",), _uniform),
    "numpy.random.ranf": (("size",), _uniform),
    "numpy.random.sample": (("size",), _uniform),
    "numpy.random.uniform": (("low", "high", "size"), _uniform),
    "numpy.random.rand": (None, _uniform),
    "numpy.random.randn": (None, _normal),
    "numpy.random.standard_normal": (("size",), _normal),
    "numpy.random.normal": (("loc", "scale", "size"), _normal),
    "numpy.random.randint": (("low", "high", "size", "dtype"), _numpy_randint),
}


def _bind(args: Sequence[cst.Arg], params: Sequence[str]) -> _Bound | None:
    """The call's arguments by parameter name; None for ``*args``/``**kwargs`` or an
    argument the function does not take."""
    bound: _Bound = {}
    for i, arg in enumerate(args):
        if arg.star:
            return None
        name = params[i] if arg.keyword is None and i < len(params) else None
        if arg.keyword is not None:
            name = arg.keyword.value
        if name is None or name not in params or name in bound:
            return None
        bound[name] = arg.value
    return bound


def _list(items: Sequence[cst.BaseExpression]) -> cst.List:
    return cst.List([cst.Element(i) for i in items])


# Operators that bind at least as tightly as `+` on their left: `b + 1` needs no brackets.
_TIGHT = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo)


def _plus_one(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, cst.Integer):
        value = expr.evaluated_value
        if isinstance(value, int):
            return cst.Integer(str(value + 1))
    tight = isinstance(
        expr, cst.Name | cst.Attribute | cst.Call | cst.Subscript | cst.UnaryOperation
    ) or (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _TIGHT))
    if not tight and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(expr, cst.Add(), cst.Integer("1"))


def _tf_call(
    alias: str,
    func: str,
    shape: cst.BaseExpression,
    keywords: dict[str, cst.BaseExpression],
    *,
    int_dtype: bool = False,
) -> cst.Call:
    """``tf.random.<func>(shape, a, b)``: the two bounds positionally when both are given,
    a single one by keyword (``stddev=2.0``)."""
    tf = cst.Name(alias)
    name = "uniform" if func == "randint" else func
    first, second = ("minval", "maxval") if name == "uniform" else ("mean", "stddev")
    args = [cst.Arg(shape)]
    if first in keywords and second in keywords:
        args += [cst.Arg(keywords[first]), cst.Arg(keywords[second])]
    else:
        args += [_keyword(k, v) for k, v in keywords.items()]
    if int_dtype:
        args.append(_keyword("dtype", cst.Attribute(tf, cst.Name("int32"))))
    target = cst.Attribute(cst.Attribute(tf, cst.Name("random")), cst.Name(name))
    return cst.Call(target, args)


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
