"""The traced-code model's public face: ``find_traced(ctx)`` returns one ``TracedCode`` that
rules and the run ask, and root discovery is a table with one function per traced-code kind."""

from __future__ import annotations

import libcst as cst
import pytest

from tests.helpers import dedent
from tflint_graph.core.config import Config
from tflint_graph.core.facts import TraceKind
from tflint_graph.model.calls import argument
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.traced import TracedCode, find_traced, roots, traced_of

SOURCE = dedent(
    """
    import tensorflow as tf


    class Trainer:
        def __init__(self):
            self.loss_fn = compute_loss

        @tf.function
        def step(self, x):
            return self.helper(x) + self.loss_fn(x)

        def helper(self, x):
            return x * 2


    def compute_loss(x):
        return tf.reduce_sum(x)


    def untouched(x):
        return x


    dataset = tf.data.Dataset.range(3)
    """
)


def _context(source: str = SOURCE) -> ModuleContext:
    return ModuleContext("m.py", source, cst.parse_module(source), Config())


def _named(traced: TracedCode, name: str) -> FunctionNode:
    return next(fn for fn in traced.facts.functions if fn.name.value == name)


def test_find_traced_returns_a_mapping_of_the_traced_functions() -> None:
    traced = find_traced(_context())
    assert isinstance(traced, TracedCode)
    assert sorted(info.display for info in traced.values()) == [
        "compute_loss()",
        "helper()",
        "step()",
    ]
    step = _named(traced, "step")
    assert step in traced and traced[step].kind is TraceKind.DECORATED
    assert _named(traced, "untouched") not in traced
    assert traced.get(_named(traced, "untouched")) is None
    assert len(traced) == len(list(traced)) == 3


def test_traced_of_gives_the_model_discovery_stored_and_refuses_before_it() -> None:
    ctx = _context()
    with pytest.raises(TypeError, match="find_traced"):
        traced_of(ctx)
    ctx.traced = find_traced(ctx)
    assert traced_of(ctx) is ctx.traced


def test_the_queries_rules_ask_answer_from_the_modules_definitions() -> None:
    traced = find_traced(_context())
    step = _named(traced, "step")
    [method] = traced.defined("Trainer.step")
    assert method == (step, True)
    [helper_call, loss_call] = [c for at, c in traced.facts.calls if at is step][:2]
    assert isinstance(helper_call.func, cst.Attribute)
    assert [m.name.value for m in traced.methods_of(helper_call.func, step)] == ["helper"]
    assert isinstance(loss_call.func, cst.Attribute)
    [(value, owner)] = traced.attribute_values(loss_call.func, step)
    assert isinstance(value, cst.Name) and value.value == "compute_loss"
    assert owner is not None and owner.name.value == "__init__"
    [(loss, _)] = traced.callables(loss_call.func, step)
    assert loss is _named(traced, "compute_loss")
    last = traced.definitions.ctx.module.body[-1]
    assert isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Assign)
    assert traced.is_dataset(last.body[0].value)  # tf.data.Dataset.range(3)
    assert not traced.is_dataset(cst.parse_expression("[1, 2]"))


def test_every_traced_code_kind_of_the_spec_has_one_row() -> None:
    assert [kind.__name__ for kind in roots.MODULE_KINDS] == ["decorated", "keras_methods"]
    assert [kind.__name__ for kind in roots.CALL_KINDS] == [
        "wrapped",
        "always_tracing",
        "dataset_callbacks",
        "dataset_experimental",
        "compile_arguments",
    ]
    assert all(kind.__doc__ for kind in (*roots.MODULE_KINDS, *roots.CALL_KINDS))


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("@tf.function\ndef f(x):\n    return x\n", "decorated with @tf.function"),
        ("def f(x):\n    return x\ng = tf.function(f)\n", "wrapped by tf.function()"),
        ("def f(x):\n    return x\ny = tf.vectorized_map(f, xs)\n", "tf.vectorized_map callable"),
        ("def f(x):\n    return x\nds = tf.data.Dataset.range(3).map(f)\n", "Dataset.map callback"),
        (
            "def f(x):\n    return x\nds.apply(tf.data.experimental.map_and_batch(f, 2))\n",
            "tf.data.experimental.map_and_batch callback",
        ),
        ("def f(y, p):\n    return y\nmodel.compile(loss=f)\n", "Keras loss passed to compile()"),
        (
            "class M(tf.keras.Model):\n    def train_step(self, data):\n        return data\n",
            "Keras train_step",
        ),
    ],
)
def test_each_kind_finds_its_roots(code: str, reason: str) -> None:
    source = "import tensorflow as tf\n\n" + code
    [info] = find_traced(_context(source)).values()
    assert info.reason == reason


def test_a_call_is_claimed_by_the_first_kind_that_recognises_it() -> None:
    # tf.function(ds.map) is a tf.function wrapper, not a Dataset callback.
    source = "import tensorflow as tf\n\ndef f(x):\n    return x\ng = tf.function(f)\n"
    [info] = find_traced(_context(source)).values()
    assert info.kind is TraceKind.WRAPPED


def test_a_new_kind_is_one_more_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension point CONTRIBUTING.md describes: a function and a row."""

    def my_tracer(search: roots.Search, at: FunctionNode | None, call: cst.Call) -> bool:
        """``my_tracer(fn)`` traces ``fn`` (a made-up API)."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "my_tracer"):
            return False
        for fn, autograph in search.definitions.callables(argument(call, 0, "fn"), at):
            search.root(fn, TraceKind.CONTROL_FLOW, "my_tracer callable", autograph)
        return True

    monkeypatch.setattr(roots, "CALL_KINDS", (*roots.CALL_KINDS, my_tracer))
    source = "def f(x):\n    return x\n\nmy_tracer(f)\n"
    [info] = find_traced(_context(source)).values()
    assert (info.display, info.reason) == ("f()", "my_tracer callable")


def test_every_query_is_the_definitions_answer() -> None:
    from tflint_graph.traced import code

    traced = find_traced(_context())
    declared = {
        name for name, kind in TracedCode.__annotations__.items() if "Callable" in str(kind)
    }
    assert declared == set(code.QUERIES)
    for name in code.QUERIES:
        assert getattr(traced, name) == getattr(traced.definitions, name), name
