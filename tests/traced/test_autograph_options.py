"""``experimental_autograph_options`` turns on AutoGraph features that change what a traced
body does: ``BUILTIN_FUNCTIONS`` converts ``print`` to ``tf.print`` (TFG101 has nothing to
report), ``ASSERT_STATEMENTS`` converts ``assert`` to ``tf.debugging.Assert`` (TFG201 has
nothing to report), ``ALL`` both.  AutoGraph converts the callees with the same options."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected, found

_CODES = ("TFG101", "TFG201")

CASES = {
    "ALL on the decorator, through an alias of Feature": """
        import tensorflow as tf

        F = tf.autograph.experimental.Feature


        def check(x):
            assert x > 0, "negative"
            print("value", x)
            return x


        @tf.function(experimental_autograph_options=F.ALL)
        def step(x):
            print("value", x)
            assert x > 0, "negative"
            return check(x) + 1
    """,
    "one feature converts only its own statement": """
        import tensorflow as tf
        from tensorflow.autograph.experimental import Feature


        def step(x):
            print("value", x)
            assert x > 0, "negative"  # TFG201
            return x + 1


        step_fn = tf.function(step, experimental_autograph_options=(Feature.BUILTIN_FUNCTIONS,))
    """,
    "asserts converted, prints not": """
        import tensorflow as tf


        @tf.function(
            experimental_autograph_options=tf.autograph.experimental.Feature.ASSERT_STATEMENTS
        )
        def step(x):
            print("value", x)  # TFG101
            assert x > 0, "negative"
            return x + 1
    """,
    "no options, or AutoGraph off, convert nothing": """
        import tensorflow as tf

        F = tf.autograph.experimental.Feature


        @tf.function
        def step(x):
            print("value", x)  # TFG101
            assert x > 0, "negative"  # TFG201
            return x + 1


        @tf.function(autograph=False, experimental_autograph_options=F.ALL)
        def raw(x):
            print("value", x)  # TFG101
            return x + 1
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_autograph_features_convert_print_and_assert(name: str) -> None:
    source = dedent(CASES[name])
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)
