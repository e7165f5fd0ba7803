"""Shared call-site analyses (``traced.callsites``): the loops that repeat a call, the calls
of a module function, and Keras callback hooks."""

from __future__ import annotations

import libcst as cst

from tests.helpers import dedent
from tflint_graph.core.config import Config
from tflint_graph.model.context import ModuleContext
from tflint_graph.traced import find_traced
from tflint_graph.traced.callsites import call_sites, callback_hook, loops_around


def _context(source: str) -> ModuleContext:
    source = dedent(source)
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    ctx.traced = find_traced(ctx)
    return ctx


def _call(ctx: ModuleContext, name: str) -> cst.Call:
    return next(
        n
        for n in ctx.nodes_in_order()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name
    )


def _kinds(loops: list[cst.CSTNode]) -> list[str]:
    return [type(loop).__name__ for loop in loops]


def test_loops_around_a_call_innermost_first_up_to_the_function() -> None:
    ctx = _context(
        """
        for epoch in range(3):
            def inner():
                for i in range(2):
                    probe(i)
            while ready():
                values = [probe(x) for x in xs for y in ys]
        """
    )
    probes = [
        n
        for n in ctx.nodes_in_order()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "probe"
    ]
    assert _kinds(loops_around(ctx, probes[0])) == ["For"]  # stops at inner()'s def
    assert _kinds(loops_around(ctx, probes[1])) == ["CompFor", "CompFor", "While", "For"]


def test_the_iterable_of_a_loop_is_not_repeated_by_it() -> None:
    ctx = _context("for x in make():\n    pass\n")
    assert loops_around(ctx, _call(ctx, "make")) == []


def test_call_sites_of_a_module_function_with_their_callers() -> None:
    ctx = _context(
        """
        def helper(x):
            return x

        def train(x):
            return helper(x)

        helper(1)
        alias = helper
        alias(2)
        """
    )
    helper = next(n for n in ctx.module.body if isinstance(n, cst.FunctionDef))
    sites = call_sites(ctx, helper)
    callers = [at.name.value if isinstance(at, cst.FunctionDef) else None for at, _ in sites]
    assert callers == ["train", None, None]


def test_callback_hooks_of_keras_callbacks_only() -> None:
    ctx = _context(
        """
        import tensorflow as tf

        class Base(tf.keras.callbacks.Callback):
            pass

        class Logger(Base):
            def on_epoch_end(self, epoch, logs=None):
                pass

            def helper(self):
                pass

        class Plain:
            def on_epoch_end(self, epoch, logs=None):
                pass
        """
    )
    methods = {
        (cls.name.value, fn.name.value): fn
        for cls in ctx.module.body
        if isinstance(cls, cst.ClassDef)
        for fn in cls.body.body
        if isinstance(fn, cst.FunctionDef)
    }
    assert callback_hook(ctx, methods[("Logger", "on_epoch_end")]) == "on_epoch_end"
    assert callback_hook(ctx, methods[("Logger", "helper")]) is None
    assert callback_hook(ctx, methods[("Plain", "on_epoch_end")]) is None
