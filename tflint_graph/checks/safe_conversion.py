"""Shared by TFG202/TFG204: where converting a tensor to NumPy cannot fail while tracing."""

from __future__ import annotations

import libcst as cst

from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.traced import traced_of

# Words in an `if` test that mean "only when this really is an eager value / NumPy array".
_CHECK_WORDS = ("numpy", "eager", "Eager", "hasattr", "isinstance", "is_tensor", "ndarray")


def conversion_is_safe(
    ctx: ModuleContext, node: cst.CSTNode, fn: TracedFunction, errors: tuple[str, ...]
) -> bool:
    """``node`` never runs while tracing (``model.eager``: ``tf.executing_eagerly()`` guards,
    ``tf.init_scope()``, ...), under
    an ``if`` that checks the value's type (``hasattr(x, "numpy")``, ``isinstance(x,
    np.ndarray)``), or inside a ``try`` whose handler catches one of ``errors`` (the
    trace-time failure is then the fallback path, which works)."""
    if traced_of(ctx).guards.untraced(node, fn.node):
        return True
    child = node
    for anc in ctx.ancestors(node):
        if anc is fn.node:
            return False
        if (
            isinstance(anc, cst.If | cst.IfExp)
            and child is not anc.test
            and any(word in ctx.code(anc.test) for word in _CHECK_WORDS)
        ):
            return True
        if (
            isinstance(anc, cst.Try)
            and child is anc.body
            and any(catches(ctx, h, errors) for h in anc.handlers)
        ):
            return True
        child = anc
    return False


def catches(ctx: ModuleContext, handler: cst.ExceptHandler, errors: tuple[str, ...]) -> bool:
    """The handler catches one of the builtin exceptions ``errors`` (or everything)."""
    if handler.type is None:
        return True
    types = (
        [el.value for el in handler.type.elements]
        if isinstance(handler.type, cst.Tuple)
        else [handler.type]
    )
    wanted = (*errors, "Exception", "BaseException")
    return any(
        isinstance(t, cst.Name) and ctx.resolve(t).is_(*(f"builtins.{e}" for e in wanted))
        for t in types
    )
