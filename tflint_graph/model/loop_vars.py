"""What ``tf.while_loop`` hands its ``cond`` and ``body`` callables.

``tf.while_loop(cond, body, loop_vars)`` calls ``body(*loop_vars)`` (and ``cond`` the same
way): the parameter at position ``i`` receives item ``i`` of ``loop_vars`` on the first
iteration and, after that, what ``body`` returned there.  Rules that need to know what such a
parameter holds (a ``tf.TensorArray``, TFG209) read the items given at the call.
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.model.calls import argument
from tflint_graph.model.definitions import Definitions

_WHILE_LOOPS = ("tensorflow.while_loop", "keras.ops.while_loop")


def loop_var_values(definitions: Definitions, param: cst.Param) -> list[cst.BaseExpression]:
    """The ``loop_vars`` items that the module's ``tf.while_loop`` calls pass ``param`` when
    its function is their ``cond`` or ``body`` (empty when none is known: ``loop_vars`` not a
    list or tuple display, a starred item, a keyword-only or starred parameter)."""
    fn = next(
        (
            a
            for a in definitions.ctx.ancestors(param)
            if isinstance(a, cst.FunctionDef | cst.Lambda)
        ),
        None,
    )
    if fn is None:
        return []
    params = fn.params
    positional = [*params.posonly_params, *params.params]
    if param.star or param not in positional:
        return []
    index = positional.index(param)
    found: list[cst.BaseExpression] = []
    for at, call in definitions.facts.calls:
        if not definitions.resolve(call.func).is_(*_WHILE_LOOPS):
            continue
        given = (argument(call, 0, "cond"), argument(call, 1, "body"))
        if not any(f is fn for expr in given for f, _ in definitions.callables(expr, at)):
            continue
        items = _display(definitions, argument(call, 2, "loop_vars"))
        if items is not None and index < len(items):
            found.append(items[index])
    return found


def _display(
    definitions: Definitions, expr: cst.BaseExpression | None
) -> list[cst.BaseExpression] | None:
    """The items of a list or tuple display (or of a name assigned one), without stars."""
    if isinstance(expr, cst.Name):
        found = definitions.ctx.bindings(expr)
        if len(found) != 1 or not isinstance(found[0].node, cst.Name):
            return None
        expr = definitions.assigned_value(found[0].node)
    if not isinstance(expr, cst.List | cst.Tuple):
        return None
    if any(isinstance(el, cst.StarredElement) for el in expr.elements):
        return None
    return [el.value for el in expr.elements]
