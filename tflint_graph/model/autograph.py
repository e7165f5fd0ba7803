"""What AutoGraph converts, and which loops become ``tf.while_loop`` (SPEC §2, TFG2xx).

AutoGraph rewrites ``if``/``while``/``for`` statements on tensors, ``and``/``or``/``not``,
ternaries, ``int()``/``float()``/``len()``/``range()`` and calls to user functions, in the
traced function and everything it calls, lambdas included.  It does *not* touch the ``if``
clause or the iteration of a comprehension, tuple unpacking, ``bool()``, ``.numpy()`` or
NumPy calls; and it converts nothing at all under ``autograph=False`` or
``tf.autograph.experimental.do_not_convert``, nor in the Keras roots it does not reach (Keras 3:
``call``, the steps, losses and metrics; Keras 2: the steps) and what they call
(``TracedFunction.autograph`` is False there; ``not_converted`` says why).
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.model import walk
from tflint_graph.model.calls import argument
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.tensors import TensorInference, tensors

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_WHILE_LOOPS = ("tensorflow.while_loop", "keras.ops.while_loop")
# What draws the next element of a tf.data iterator: `next(it)`, `it.get_next()`.
_DRAWS = frozenset({"get_next", "get_next_as_optional"})
_MAX_HELPERS = 3


def converts(fn: TracedFunction) -> bool:
    """AutoGraph rewrites this function's Python control flow."""
    return fn.autograph


def not_converted(fn: TracedFunction) -> str:
    """Why AutoGraph leaves ``fn`` alone, for messages (SPEC §1: Keras 3 converts no
    ``Layer.call`` or step, Keras 2 no step)."""
    return fn.unconverted or "AutoGraph is off there (autograph=False or do_not_convert)"


def convert_advice(fn: TracedFunction) -> str:
    """How to get AutoGraph back: a Keras root cannot be told to convert itself, but a
    ``@tf.function`` helper it calls converts its own body."""
    if fn.unconverted:
        return "move it into a @tf.function helper, whose body AutoGraph converts"
    return "let AutoGraph convert the function"


def comprehension_part(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    """``"condition"`` or ``"iteration"`` when ``node`` is (inside) the ``if`` clause or the
    ``in`` iterable of a comprehension (AutoGraph leaves both alone); else None."""
    child = node
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.CompIf) and child is anc.test:
            return "condition"
        if isinstance(anc, cst.CompFor) and child is anc.iter:
            return "iteration"
        if isinstance(anc, cst.FunctionDef | cst.Lambda | cst.SimpleStatementLine):
            return None
        child = anc
    return None


def is_graph_loop(
    ctx: ModuleContext,
    loop: cst.For | cst.While,
    fn: TracedFunction,
    tensors: TensorInference,
    definitions: Definitions,
) -> bool:
    """The loop becomes a ``tf.while_loop`` (or a dataset reduction) when AutoGraph runs:
    ``for`` over ``tf.range``/a tensor/``range(tensor)``/a ``tf.data.Dataset``, or ``while``
    on a tensor condition.  ``for i in range(n)`` with a Python ``n`` unrolls instead."""
    if not converts(fn):
        return False
    if isinstance(loop, cst.While):
        return tensors.is_tensor(loop.test)
    it = loop.iter
    if tensors.is_tensor(it):
        return True
    if isinstance(it, cst.Call):
        res = ctx.resolve(it.func)
        if res.is_builtin("range"):
            return any(tensors.is_tensor(a.value) for a in it.args)
        if res.is_builtin("enumerate") or res.is_builtin("zip"):
            # Converted over datasets only; over a tensor they raise instead (TFG203).
            return any(definitions.is_dataset(a.value) for a in it.args)
    return definitions.is_dataset(it)


def loops_over_data(
    ctx: ModuleContext, fn: TracedFunction, definitions: Definitions, depth: int = 0
) -> bool:
    """One call of ``fn`` runs a graph loop over input data: an epoch or an evaluation pass
    (``for _ in tf.range(steps): strategy.run(step_fn, args=(next(iterator),))``).

    Such a loop is a ``for`` over a dataset, an iterator or a batch the caller passes
    (AutoGraph converts it), or a graph loop (``tf.range``, a tensor ``while``,
    ``tf.while_loop``) whose body draws ``next(iterator)``; in ``fn``'s own body or in a
    traced helper of this module it calls.  The function is traced once, and the call runs
    every step of the loop.  A Python ``range`` loop unrolls, and a graph loop that draws no
    data computes one step (a decoder, a simulation): neither counts."""
    if not fn.autograph:
        return False  # without AutoGraph a `for` over a tensor or dataset does not trace
    inference = tensors(ctx, fn)
    params = _parameters(fn.node)
    for node in _body_nodes(fn.node):
        if isinstance(node, cst.For | cst.While):
            if isinstance(node, cst.For) and _data_iterable(ctx, node.iter, params, definitions):
                return True
            if is_graph_loop(ctx, node, fn, inference, definitions) and _draws(
                ctx, node.body, definitions
            ):
                return True
        elif isinstance(node, cst.Call):
            if definitions.resolve(node.func).is_(*_WHILE_LOOPS):
                body = argument(node, 1, "body")
                if body is not None and _draws_in_callable(ctx, body, fn.node, definitions):
                    return True
            elif depth < _MAX_HELPERS:
                for callee, _ in definitions.callables(node.func, fn.node):
                    helper = ctx.traced.get(callee)
                    if (
                        helper is not None
                        and callee is not fn.node
                        and loops_over_data(ctx, helper, definitions, depth + 1)
                    ):
                        return True
    return False


def _parameters(node: FunctionNode) -> set[str]:
    """Parameters without a default: what the caller hands in (a dataset, an iterator)."""
    ps = node.params
    return {
        p.name.value
        for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)
        if p.default is None and p.name.value not in ("self", "cls")
    }


def _body_nodes(root: FunctionNode) -> list[cst.CSTNode]:
    """Nodes of ``root``'s body, outside nested defs, classes and lambdas (their code runs
    when something calls them: ``strategy.run(step_fn)`` runs one step)."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = list(walk.children(root.body))
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue
        found.append(node)
        stack.extend(walk.children(node))
    return found


def _data_iterable(
    ctx: ModuleContext, it: cst.BaseExpression, params: set[str], definitions: Definitions
) -> bool:
    """A ``for`` over this runs once per element of input data: a dataset, ``iter(dataset)``
    or a parameter the caller passes (a dataset, an iterator, a distributed dataset)."""
    if isinstance(it, cst.Call) and ctx.resolve(it.func).is_builtin("iter") and it.args:
        it = it.args[0].value
    if isinstance(it, cst.Name) and it.value in params:
        return True
    return definitions.is_dataset(it)


def _draws(ctx: ModuleContext, root: cst.CSTNode, definitions: Definitions, depth: int = 0) -> bool:
    """``root`` draws an element of an iterator, itself or in a function of this module it
    calls (one level)."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            continue
        if isinstance(node, cst.Call):
            func = node.func
            if ctx.resolve(func).is_builtin("next") or (
                isinstance(func, cst.Attribute) and func.attr.value in _DRAWS
            ):
                return True
            if depth == 0:
                for callee, _ in definitions.callables(func, None):
                    if _draws(ctx, callee.body, definitions, 1):
                        return True
        stack.extend(walk.children(node))
    return False


def _draws_in_callable(
    ctx: ModuleContext, body: cst.BaseExpression, at: FunctionNode, definitions: Definitions
) -> bool:
    """The ``body`` callable of a ``tf.while_loop`` draws from an iterator."""
    for callee, _ in definitions.callables(body, at):
        if _draws(ctx, callee.body, definitions):
            return True
    return False
