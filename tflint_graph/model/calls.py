"""What a call passes: one helper per question, so that every rule reads arguments alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tflint_graph.core.vocabulary import PARTIAL

if TYPE_CHECKING:
    from tflint_graph.model.context import ModuleContext


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value passed as ``name=``, if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def argument(
    call: cst.Call, index: int, *keywords: str, strict: bool = False
) -> cst.BaseExpression | None:
    """The argument given as one of ``keywords=`` (the first such in the call), else at
    positional ``index`` (-1: keyword only).  ``*args``/``**kwargs`` are skipped when
    counting positions; with ``strict`` a starred argument at or before ``index`` makes the
    position unknown (None)."""
    value = None
    position = 0
    unknown = False
    for arg in call.args:
        keyword = arg.keyword
        if keyword is not None:
            if keyword.value in keywords:
                return arg.value
        elif arg.star:
            unknown = unknown or (strict and position <= index)
        else:
            if position == index:
                value = arg.value
            position += 1
    return None if unknown else value


def super_method(call: cst.Call) -> str | None:
    """The method name of ``super().name(...)`` (or ``super(Cls, self).name(...)``); None for
    any other call."""
    func = call.func
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    ):
        return func.attr.value
    return None


def is_true(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``True``."""
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    """``expr`` is the literal ``False``."""
    return isinstance(expr, cst.Name) and expr.value == "False"


def binds_self(ctx: ModuleContext, fn: cst.CSTNode, func: cst.BaseExpression) -> bool:
    """A call through ``func`` of the function ``fn`` passes the instance as its first
    parameter: ``fn`` is a method reached through an instance (``obj.run(x)``), a
    construction or an instance call (``Augmenter(x)``, ``aug(x)``), or a name that holds a
    bound method (``step = opt.step``, ``tf.function(opt.step)``); not the def's own name
    (called in its class body)."""
    if not isinstance(fn, cst.FunctionDef) or ctx.enclosing_class(fn) is None:
        return False
    if is_staticmethod(fn):
        return False  # `Ops.scale(x, 2.0)`, `self.scale(...)`: no instance is passed
    if isinstance(func, cst.Attribute) or fn.name.value in ("__init__", "__call__"):
        return True
    return isinstance(func, cst.Name) and all(a.node is not fn for a in ctx.bindings(func))


def passed_for(
    call: cst.Call, params: cst.Parameters, param: cst.Param, *, bound: bool
) -> cst.BaseExpression | None:
    """What ``call`` gives parameter ``param`` of a function with ``params``: the argument,
    else the parameter's default; None when unknown (a ``*args``/``**kwargs`` in the call, a
    starred parameter).  ``bound``: the first positional parameter is ``self`` (a method
    called through an instance)."""
    if param.star:
        return None
    positional = [*params.posonly_params, *params.params]
    if bound and positional:
        if positional[0] is param:
            return None
        positional = positional[1:]
    position = positional.index(param) if param in positional else -1
    keyword_ok = param not in params.posonly_params
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if keyword_ok and arg.keyword.value == param.name.value:
                return arg.value
        else:
            if index == position:
                return arg.value
            index += 1
    return param.default


def argument_passed(
    ctx: ModuleContext, call: cst.Call, fn: cst.FunctionDef | cst.Lambda, param: cst.Param
) -> cst.BaseExpression | None:
    """What ``call`` of ``fn`` passes ``param``: by position or keyword, or by keyword alone
    where a star argument hides the positions (``parse(*element, size=size)``)."""
    arg = passed_for(call, fn.params, param, bound=binds_self(ctx, fn, call.func))
    return arg if arg is not None else keyword(call, param.name.value)


def partial_of(ctx: ModuleContext, use: cst.Name) -> cst.Call | None:
    """The ``functools.partial(fn, ...)`` call that ``use`` (a mention of ``fn``) is the first
    argument of, if it is one."""
    call = ctx.parent(ctx.parent(use))  # Name -> Arg -> Call
    if (
        isinstance(call, cst.Call)
        and call.args
        and call.args[0].value is use
        and ctx.resolve(call.func).is_(*PARTIAL)
    ):
        return call
    return None


def argument_keys(fn: cst.FunctionDef | cst.Lambda, param: cst.Param, bound: bool) -> set[str]:
    """How a call's entry of ``ExternalRoot.passed`` names ``param``: ``kw:<name>``, and
    ``pos:<index>`` for a positional parameter (``self`` left out when ``bound``)."""
    positional = [*fn.params.posonly_params, *fn.params.params]
    if bound and positional:
        positional = positional[1:]
    keys = {f"kw:{param.name.value}"}
    if param in positional:
        keys.add(f"pos:{positional.index(param)}")
    return keys


def is_staticmethod(fn: cst.FunctionDef) -> bool:
    """``fn`` is decorated ``@staticmethod``: called through its class or an instance, it
    gets no ``self``."""
    return any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in fn.decorators
    )


def gets_instance(ctx: ModuleContext, fn: cst.CSTNode) -> bool:
    """``fn`` is a method whose first parameter is the instance (or class) when called
    through one: defined in a class, not a ``@staticmethod``."""
    return (
        isinstance(fn, cst.FunctionDef)
        and ctx.enclosing_class(fn) is not None
        and not is_staticmethod(fn)
    )
