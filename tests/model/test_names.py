"""Name resolution: canonical spellings and what a name in real source refers to."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_graph.core.config import Config
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.names import Resolution, canonical, dotted, root_name

# --------------------------------------------------------------------------------------
# canonical()
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tensorflow.function", "tensorflow.function"),
        ("tensorflow.compat.v2.function", "tensorflow.function"),
        ("tensorflow.compat.v1.py_func", "tensorflow.py_func"),
        ("tensorflow.compat.v2", "tensorflow"),
        ("tensorflow.keras", "keras"),
        ("tensorflow.keras.layers.Dense", "keras.layers.Dense"),
        ("tensorflow.compat.v2.keras.layers.Dense", "keras.layers.Dense"),
        ("tensorflow.keras.Model", "keras.Model"),
        ("tensorflow.keras.models.Model", "keras.Model"),
        ("tensorflow.keras.models.Sequential", "keras.Sequential"),
        ("tf_keras", "keras"),
        ("tf_keras.Model", "keras.Model"),
        ("tf_keras.models.Model", "keras.Model"),
        ("keras.models.Model", "keras.Model"),
        ("keras.Layer", "keras.layers.Layer"),
        ("keras.Loss", "keras.losses.Loss"),
        ("keras.Metric", "keras.metrics.Metric"),
        ("keras.src.layers.Dense", "keras.layers.Dense"),
        ("keras.api._v2.keras.Model", "keras.Model"),
        ("tensorflow.python.keras.engine.training.Model", "keras.Model"),
        # Nested private paths need more than one rewrite.
        ("tf_keras.src.engine.training.Model", "keras.Model"),
        ("tensorflow.keras.src.engine.base_layer.Layer", "keras.layers.Layer"),
        ("tensorflow.python.eager.def_function.function", "tensorflow.function"),
        # Unrelated names are left alone.
        ("numpy.random.rand", "numpy.random.rand"),
        ("builtins.print", "builtins.print"),
        ("mylib.tf.function", "mylib.tf.function"),
        ("kerasx.Model", "kerasx.Model"),
    ],
)
def test_canonical(name: str, expected: str) -> None:
    assert canonical(name) == expected


def test_canonical_is_idempotent() -> None:
    for name in ("tensorflow.compat.v2.keras.Model", "tf_keras.src.models.Model", "keras.Layer"):
        once = canonical(name)
        assert canonical(once) == once


def test_dotted_and_root_name() -> None:
    expr = cst.parse_expression("tf.keras.layers.Dense")
    assert dotted(expr) == "tf.keras.layers.Dense"
    assert dotted(cst.parse_expression("f().x")) is None
    root = root_name(cst.parse_expression("a.b[0].c()"))
    assert root is not None and root.value == "a"
    assert root_name(cst.parse_expression("(1).real")) is None


# --------------------------------------------------------------------------------------
# Resolver on real sources
# --------------------------------------------------------------------------------------


class _Marked(cst.CSTVisitor):
    """Finds the expressions of ``probe(<expr>)`` calls, in source order."""

    def __init__(self) -> None:
        self.exprs: list[cst.BaseExpression] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.exprs.append(node.args[0].value)


def resolve_probes(source: str) -> list[Resolution]:
    """Resolve the argument of every ``probe(...)`` call in ``source``."""
    source = textwrap.dedent(source).lstrip("\n")
    module = cst.parse_module(source)
    ctx = ModuleContext("m.py", source, module, Config())
    marked = _Marked()
    module.visit(marked)
    assert marked.exprs, "the source must contain probe(...) calls"
    return [ctx.resolve(e) for e in marked.exprs]


def test_print_builtin() -> None:
    [res] = resolve_probes("probe(print)")
    assert res.is_builtin("print")
    assert res.imported == {"builtins.print"}
    assert not res.local


def test_print_parameter_local_and_import_are_not_the_builtin() -> None:
    param, local, default_param, builtin = resolve_probes(
        """
        def f(print):
            probe(print)

        def g():
            print = lambda *a: None
            probe(print)

        def h(x, print=None):
            probe(print)

        def i():
            probe(print)
        """
    )
    assert param.local and not param.is_builtin("print")
    assert local.local and not local.is_builtin("print")
    assert default_param.local and not default_param.is_builtin("print")
    assert builtin.is_builtin("print")


def test_print_imported_from_another_module() -> None:
    [res] = resolve_probes(
        """
        from rich import print

        def f():
            probe(print)
        """
    )
    assert not res.is_builtin("print")
    assert res.imported == {"rich.print"}


def test_print_rebound_at_module_level_is_not_the_builtin() -> None:
    [res] = resolve_probes(
        """
        import logging
        print = logging.info

        def f():
            probe(print)
        """
    )
    assert not res.is_builtin("print")


def test_an_alias_rebound_by_a_later_import_is_the_later_module() -> None:
    # Both imports are plain statements of the module: functions see the second.
    later, fallback = resolve_probes(
        """
        import numpy as tf
        import tensorflow as tf

        try:
            import tensorflow as tnp
        except ImportError:
            import numpy as tnp

        def f(x):
            probe(tf.reduce_sum)
            probe(tnp.ones)
        """
    )
    assert later.imported == {"tensorflow.reduce_sum"}
    # A fallback under `try` may be either, as before.
    assert fallback.imported == {"tensorflow.ones", "numpy.ones"}


def test_class_attribute_does_not_shadow_builtin_in_methods() -> None:
    [res] = resolve_probes(
        """
        class A:
            print = None

            def f(self):
                probe(print)
        """
    )
    assert res.is_builtin("print")


def test_random_stdlib_versus_user_module() -> None:
    stdlib, user, numpy_random = resolve_probes(
        """
        import random
        import numpy as np

        def f():
            probe(random.random)

        def g():
            from mypkg import random
            probe(random.random)

        def h():
            probe(np.random.rand)
        """
    )
    assert stdlib.is_("random.random")
    assert user.is_("mypkg.random.random")
    assert not user.is_("random.random")
    assert numpy_random.is_("numpy.random.rand")


def test_random_parameter_is_not_the_stdlib() -> None:
    [res] = resolve_probes(
        """
        import random

        def f(random):
            probe(random.random)
        """
    )
    assert res.local
    assert not res.is_("random.random")


@pytest.mark.parametrize(
    ("imports", "expr"),
    [
        ("import tensorflow as tf", "tf.function"),
        ("import tensorflow as tf2", "tf2.function"),
        ("import tensorflow", "tensorflow.function"),
        ("import tensorflow.compat.v2 as tf", "tf.function"),
        ("import tensorflow as tf", "tf.compat.v2.function"),
        ("from tensorflow import function", "function"),
        ("from tensorflow import function as tff", "tff"),
        ("from tensorflow.compat import v2 as tf", "tf.function"),
    ],
)
def test_tf_function_alias_forms(imports: str, expr: str) -> None:
    [res] = resolve_probes(f"{imports}\nprobe({expr})\n")
    assert res.is_("tensorflow.function")
    assert not res.local


@pytest.mark.parametrize(
    ("imports", "expr", "expected"),
    [
        ("from tensorflow import keras", "keras.Model", "keras.Model"),
        ("from tensorflow import keras", "keras.layers.Dense", "keras.layers.Dense"),
        ("import keras", "keras.Model", "keras.Model"),
        ("import keras", "keras.layers.Layer", "keras.layers.Layer"),
        ("import keras", "keras.Layer", "keras.layers.Layer"),
        ("import tf_keras", "tf_keras.Model", "keras.Model"),
        ("import tensorflow as tf", "tf.keras.Model", "keras.Model"),
        ("import tensorflow as tf", "tf.keras.models.Model", "keras.Model"),
        ("import tensorflow.keras as K", "K.Model", "keras.Model"),
        ("from tensorflow.keras import layers", "layers.Dense", "keras.layers.Dense"),
        ("from tensorflow.keras.models import Model", "Model", "keras.Model"),
        ("from keras.models import Sequential", "Sequential", "keras.Sequential"),
    ],
)
def test_keras_spellings(imports: str, expr: str, expected: str) -> None:
    [res] = resolve_probes(f"{imports}\nprobe({expr})\n")
    assert res.imported == {expected}


def test_tf_from_another_library_is_not_tensorflow() -> None:
    mylib, param = resolve_probes(
        """
        from mylib import tf
        probe(tf.function)

        def f(tf):
            probe(tf.function)
        """
    )
    assert not mylib.is_("tensorflow.function")
    assert mylib.imported == {"mylib.tf.function"}
    assert not param.is_("tensorflow.function")
    assert param.local


def test_try_except_import_error_keeps_both_bindings() -> None:
    [res] = resolve_probes(
        """
        try:
            import tensorflow as tf
        except ImportError:
            tf = None

        probe(tf.function)
        """
    )
    assert res.is_("tensorflow.function")
    assert res.local  # the `tf = None` fallback is a binding too


def test_try_except_between_two_keras_imports() -> None:
    [res] = resolve_probes(
        """
        try:
            import tf_keras as keras
        except ImportError:
            from tensorflow import keras

        probe(keras.Model)
        """
    )
    assert res.imported == {"keras.Model"}
    assert not res.local


def test_unresolvable_expressions_resolve_to_nothing() -> None:
    undefined, call, subscript = resolve_probes(
        """
        probe(undefined_name.attr)
        probe(make().attr)
        probe(items[0])
        """
    )
    assert undefined.imported == frozenset() and not undefined.local
    assert call.imported == frozenset()
    assert subscript.imported == frozenset()


def test_resolution_helpers() -> None:
    res = Resolution(frozenset({"tensorflow.function", "builtins.print"}), local=False)
    assert res.is_("tensorflow.function")
    assert res.startswith("tensorflow.")
    assert not res.startswith("keras.")
    assert not res.is_builtin("print")  # two bindings: not only the builtin
