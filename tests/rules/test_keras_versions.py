"""Which Keras the project runs decides what AutoGraph converts (SPEC §1).

Verified with TF 2.21, Keras 3.15 and tf_keras 2.21: Keras 3 converts no ``Layer.call``, step,
``Loss.call``, ``Metric.update_state`` or compiled loss, nor the plain functions they call;
Keras 2 converts all of them but the steps.  A ``Lambda`` layer's function neither does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import dedent, found
from tflint_graph import Config, lint_paths, lint_source
from tflint_graph.cli import main

KERAS3 = Config(keras_version="3")
KERAS2 = Config(keras_version="2")

LAYER = dedent(
    """
    import tensorflow as tf
    {imports}

    class Gate({base}):
        def call(self, x, training=None, mask=None):
            if tf.reduce_sum(x) > 0:  # K
                x = x * 2
            for i in tf.range(3):  # K
                x = x + 1.0
            n = int(tf.shape(x)[0])  # K
            if training:  # a Python bool: fine
                x = x * 1.0
            if mask is not None and x.shape[0] > 1:  # static: fine
                x = x + 0.0
            return x
    """
)
SPELLINGS = [
    ("import keras", "keras.layers.Layer"),
    ("from tensorflow import keras", "keras.layers.Layer"),
    ("", "tf.keras.layers.Layer"),
    ("from keras import layers", "layers.Layer"),
    ("import keras", "keras.Layer"),
    ("import keras", "keras.Model"),
]


def marked(source: str, code: str) -> set[tuple[int, str]]:
    return {(n, code) for n, line in enumerate(source.splitlines(), 1) if line.endswith("# K")}


@pytest.mark.parametrize(("imports", "base"), SPELLINGS)
def test_keras3_call_is_not_converted(imports: str, base: str) -> None:
    source = LAYER.format(imports=imports, base=base)
    got = found(source, config=KERAS3)
    lines = sorted(n for n, _ in marked(source, ""))
    assert got == {(lines[0], "TFG201"), (lines[1], "TFG203"), (lines[2], "TFG203")}


@pytest.mark.parametrize(("imports", "base"), SPELLINGS)
def test_keras2_call_is_converted(imports: str, base: str) -> None:
    assert found(LAYER.format(imports=imports, base=base), config=KERAS2) == set()


def test_tf_keras_bases_are_keras2_whatever_the_setting() -> None:
    for spelling in ("import tf_keras", "import tf_keras as keras"):
        base = "tf_keras.layers.Layer" if spelling == "import tf_keras" else "keras.layers.Layer"
        assert found(LAYER.format(imports=spelling, base=base), config=KERAS3) == set()


def test_a_module_that_switches_to_legacy_keras_is_keras2() -> None:
    source = LAYER.format(
        imports='import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nfrom tensorflow import keras',
        base="keras.layers.Layer",
    )
    assert found(source, config=KERAS3) == set()


def test_the_message_says_why_and_what_to_do() -> None:
    source = LAYER.format(imports="import keras", base="keras.layers.Layer")
    message = next(f.message for f in lint_source(source, config=KERAS3) if f.code == "TFG201")
    assert "Keras 3 does not AutoGraph-convert Layer.call()" in message
    assert "@tf.function helper" in message


STEPS = dedent(
    """
    import tensorflow as tf
    {imports}

    class Net({base}):
        def train_step(self, data):
            x, y = data
            if tf.reduce_sum(x) > 0:  # TFG201
                x = x * 2
            return {{"loss": tf.reduce_sum(x)}}

        def test_step(self, data):
            for v in tf.range(2):  # TFG203
                data = data
            return {{}}
    """
)


@pytest.mark.parametrize(
    ("imports", "base", "config"),
    [
        ("import keras", "keras.Model", KERAS3),
        ("import keras", "keras.Model", KERAS2),
        ("import tf_keras", "tf_keras.Model", KERAS3),
    ],
)
def test_steps_are_converted_by_neither_keras(imports: str, base: str, config: Config) -> None:
    source = STEPS.format(imports=imports, base=base)
    assert found(source, config=config) == {(7, "TFG201"), (12, "TFG203")}


LOSSES = dedent(
    """
    import tensorflow as tf
    import keras

    def helper(t):
        if tf.reduce_any(t < 0):  # TFG201
            return -t
        return t

    @tf.function
    def converted_helper(t):
        if tf.reduce_any(t < 0):  # its own body is converted: fine
            return -t
        return t

    class Hinge(keras.losses.Loss):
        def call(self, y_true, y_pred):
            if tf.reduce_sum(y_pred) > 0:  # TFG201
                return tf.reduce_mean(y_pred)
            return converted_helper(y_true)

    class Count(keras.metrics.Metric):
        def update_state(self, y_true, y_pred, sample_weight=None):
            if tf.reduce_sum(y_pred) > 0:  # TFG201
                pass
            helper(y_pred)

    def loss_fn(y_true, y_pred):
        return tf.reduce_mean(y_pred) if tf.reduce_sum(y_pred) > 0 else 0.0  # TFG201

    def build(model):
        model.compile("sgd", loss=loss_fn, metrics=[Count()])
    """
)


def test_losses_metrics_and_their_helpers_under_keras3() -> None:
    assert found(LOSSES, config=KERAS3) == {
        (5, "TFG201"),
        (17, "TFG201"),
        (23, "TFG201"),
        (28, "TFG201"),
    }


def test_losses_metrics_and_their_helpers_under_keras2() -> None:
    assert found(LOSSES, config=KERAS2) == set()


def test_a_helper_traced_converted_elsewhere_is_still_reported_from_a_keras3_call() -> None:
    source = dedent(
        """
        import tensorflow as tf
        import keras

        def shared(x):
            if tf.reduce_sum(x) > 0:
                return x * 2
            return x

        @tf.function
        def step(x):
            return shared(x)

        class Block(keras.layers.Layer):
            def call(self, x):
                return shared(x)
        """
    )
    (finding,) = lint_source(source, config=KERAS3)
    assert (finding.line, finding.code) == (5, "TFG201")
    assert "traced via call() -> shared()" in finding.message


def test_a_lambda_layer_function_is_converted_by_neither() -> None:
    source = dedent(
        """
        import tensorflow as tf
        import keras

        flip = keras.layers.Lambda(lambda t: -t if tf.reduce_sum(t) > 0 else t)
        """
    )
    for config in (KERAS3, KERAS2):
        assert found(source, config=config) == {(4, "TFG201")}


def test_keras3_loops_are_no_graph_loops() -> None:
    source = dedent(
        """
        import tensorflow as tf
        import keras

        class Stack(keras.layers.Layer):
            def call(self, x):
                parts = []
                for i in tf.range(3):
                    parts.append(x)
                return tf.stack(parts)
        """
    )
    assert found(source, config=KERAS3) == {(7, "TFG203")}  # no TFG207: it never becomes one
    assert found(source, config=KERAS2) == {(8, "TFG207")}


def test_a_base_class_in_another_module_carries_its_keras(tmp_path: Path) -> None:
    (tmp_path / "base.py").write_text(
        "import tf_keras\n\nclass Base(tf_keras.layers.Layer):\n    pass\n", encoding="utf-8"
    )
    (tmp_path / "block.py").write_text(
        dedent(
            """
            import tensorflow as tf
            from base import Base

            class Block(Base):
                def call(self, x):
                    if tf.reduce_sum(x) > 0:
                        x = x * 2
                    return x
            """
        ),
        encoding="utf-8",
    )
    assert list(lint_paths([tmp_path], KERAS3)) == []
    (tmp_path / "base.py").write_text(
        "import keras\n\nclass Base(keras.layers.Layer):\n    pass\n", encoding="utf-8"
    )
    assert [
        (f.path.endswith("block.py"), f.line, f.code) for f in lint_paths([tmp_path], KERAS3)
    ] == [(True, 6, "TFG201")]


def test_auto_reads_the_projects_pins_and_the_outputs_say_so(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    source = LAYER.format(imports="import keras", base="keras.layers.Layer")
    (tmp_path / "layer.py").write_text(source, encoding="utf-8")
    runner = CliRunner()
    args = ["check", str(tmp_path), "--no-cache", "--output-format", "json"]
    doc = json.loads(runner.invoke(main, args).stdout)
    assert doc["keras"]["version"] == "3"
    assert {f["code"] for f in doc["findings"]} == {"TFG201", "TFG203"}
    (tmp_path / "requirements.txt").write_text("tensorflow==2.15.1\n", encoding="utf-8")
    doc = json.loads(runner.invoke(main, args).stdout)
    assert doc["keras"] == {
        "version": "2",
        "reason": "auto: requirements.txt: tensorflow==2.15.1 excludes Keras 3",
    }
    assert doc["findings"] == []
    # The command line overrides the declaration; --verbose says which was used.
    result = runner.invoke(
        main, ["check", str(tmp_path), "--no-cache", "-q", "-v", "--keras-version", "3"]
    )
    assert "tflint-graph: Keras 3 (set in the configuration)" in result.stderr
    assert "TFG201" in result.stdout


def test_a_helper_of_another_module_reached_from_both_kinds_of_roots(tmp_path: Path) -> None:
    """Converted from one module's tf.function, plain from another's Keras 3 call: the
    tensor `if` raises on the Keras path, and that is the chain shown."""
    files = {
        "helpers.py": """
            import tensorflow as tf

            def shared(x):
                if tf.reduce_sum(x) > 0:
                    return x * 2
                return x
            """,
        "a_step.py": """
            import tensorflow as tf
            from helpers import shared

            @tf.function
            def step(x):
                return shared(x)
            """,
        "z_layer.py": """
            import keras
            from helpers import shared

            class Block(keras.layers.Layer):
                def call(self, x):
                    return shared(x)
            """,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(dedent(text), encoding="utf-8")
    (finding,) = lint_paths([tmp_path], KERAS3)
    assert (Path(finding.path).name, finding.line, finding.code) == ("helpers.py", 4, "TFG201")
    assert "traced via call() -> shared()" in finding.message
    assert list(lint_paths([tmp_path], KERAS2)) == []


def test_a_method_the_module_replaces_on_the_class_is_not_the_root() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, x):
                if tf.reduce_sum(x) > 0:
                    x = x * 2
                return x

        Block.call = tf.autograph.to_graph(Block.call)
        """
    )
    assert found(source, config=KERAS3) == set()


def test_a_keras_method_decorated_with_tf_function_converts_its_own_body() -> None:
    source = dedent(
        """
        import tensorflow as tf
        import keras

        class Block(keras.layers.Layer):
            @tf.function
            def call(self, x):
                if tf.reduce_sum(x) > 0:
                    x = x * 2
                return x

        class Net(keras.Model):
            @tf.function(autograph=False)
            def train_step(self, data):
                if tf.reduce_sum(data) > 0:  # TFG201
                    data = data * 2
                return {}
        """
    )
    assert found(source, config=KERAS3) == {(14, "TFG201")}


def test_keras2_spellings_through_compat_namespaces() -> None:
    source = dedent(
        """
        import tensorflow.compat.v1 as tf
        from tensorflow.compat.v1.python.keras import losses

        class Huber(losses.Loss):
            def call(self, y_true, y_pred):
                if tf.reduce_sum(y_pred) > 0:
                    return y_pred
                return y_true
        """
    )
    assert found(source, config=KERAS3) == set()


def test_a_method_reached_through_an_instance_is_unconverted_too() -> None:
    source = dedent(
        """
        import tensorflow as tf
        import keras

        class Gate:
            def apply(self, x):
                if tf.reduce_sum(x) > 0:
                    return x * 2
                return x

        class Block(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.gate = Gate()

            def call(self, x):
                return self.gate.apply(x)
        """
    )
    (finding,) = lint_source(source, config=KERAS3)
    assert (finding.line, finding.code) == (6, "TFG201")
    assert "traced via call() -> apply()" in finding.message
    assert found(source, config=KERAS2) == set()


def test_a_method_the_constructor_rebinds_on_the_instance_is_not_the_root() -> None:
    source = dedent(
        """
        import types
        import tensorflow as tf
        import keras

        class Count(keras.metrics.Metric):
            def __init__(self):
                super().__init__()
                self.update_state = types.MethodType(eager_update, self)

            def update_state(self, y_true, y_pred, sample_weight=None):
                if tf.reduce_sum(y_pred) > 0:
                    pass

        def eager_update(self, y_true, y_pred, sample_weight=None):
            return None
        """
    )
    assert found(source, config=KERAS3) == set()
    unbound = source.replace("self.update_state = types.MethodType(eager_update, self)", "pass")
    assert found(unbound, config=KERAS3) == {(11, "TFG201")}


@pytest.mark.parametrize(
    "base",
    [
        "tf_keras.metrics.experimental.PyMetric",
        "tf.keras.metrics.experimental.PyMetric",
        "tf_keras.metrics.PyMetric",  # tf_keras's own spelling, in its tests
    ],
)
def test_a_py_metric_runs_its_methods_eagerly(base: str) -> None:
    # PyMetric's `__new__` wraps update_state and result in tf.py_function (verified with
    # tf_keras 2.21: `.numpy()` in update_state works under fit()).
    source = dedent(
        """
        import tensorflow as tf
        import tf_keras

        class TrimmedMean(BASE):
            def update_state(self, y_true, y_pred, sample_weight=None):
                self.values.append(y_pred.numpy())

            def result(self):
                return sum(v.mean() for v in self.values)
        """
    ).replace("BASE", base)
    assert found(source) == set()
    plain = source.replace(base, "tf_keras.metrics.Metric")
    assert found(plain) == {(6, "TFG102"), (6, "TFG202")}


DROPOUT_IN_CALL = dedent(
    """
    import tensorflow as tf

    class Attention(tf.keras.layers.Layer):
        def call(self, x):
            x = tf.keras.layers.Dropout(0.1)(x)  # K
            return tf.keras.layers.Dense(4)(x)  # K
    """
)


def test_seeded_layers_hold_a_variable_only_under_keras3() -> None:
    # Keras 3's Dropout owns a SeedGenerator variable; Keras 2's holds none (verified with
    # tf_keras 2.21: predict and fit run), so the project's declared Keras decides.
    assert found(DROPOUT_IN_CALL, config=KERAS3) == marked(DROPOUT_IN_CALL, "TFG208")
    assert found(DROPOUT_IN_CALL, config=KERAS2) == {(6, "TFG208")}
