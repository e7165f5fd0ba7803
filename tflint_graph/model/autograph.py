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

from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.tensors import TensorInference

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


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
