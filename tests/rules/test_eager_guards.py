"""Branches that never run while tracing (SPEC §1, ``model.eager``) are no traced code for
any rule, and the calls they make are not followed.  Each source marks exactly the findings
it must give (``# TFGnnn``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tests.helpers import dedent, expected, found
from tflint_graph import Config, lint_paths

CASES = {
    "functions defined after run_functions_eagerly(True) run as Python": """
        import tensorflow as tf

        def point_losses():
            tf.config.experimental_run_functions_eagerly(True)  # TFG402

            @tf.function
            def matched(y, p):
                print("loss", p.numpy())
                return tf.reduce_mean(p)

            def parse(x):
                return x.numpy()  # TFG202

            return matched, tf.data.Dataset.range(3).map(parse)

        def other_losses():
            @tf.function
            def before(y, p):
                print("loss", p)  # TFG101
                return p

            tf.config.run_functions_eagerly(True)  # TFG402
            return before

        def maybe(debug):
            if debug:
                tf.config.run_functions_eagerly(True)

            @tf.function
            def step(x):
                return x.numpy()  # TFG202

            return step
    """,
    "the switch is read at each call: switched back, the function traces": """
        import tensorflow as tf

        def make_normalize():
            tf.config.run_functions_eagerly(True)  # TFG402

            @tf.function
            def normalize(x):
                return x.numpy()  # TFG202

            tf.config.run_functions_eagerly(False)
            return normalize
    """,
    "a tf.function parameter tested for a tensor": """
        import tensorflow as tf
        from tensorflow import is_tensor

        @tf.function
        def saliency(x, model, y):
            # tf.function hands tensors and NumPy arrays in as symbolic tensors
            if not tf.is_tensor(x):
                x = tf.Variable(x)
            if isinstance(y, tf.Tensor):
                pass
            else:
                # a tf.Variable or a tuple is no tf.Tensor: this runs while tracing
                y = tf.Variable(y)  # TFG205
            if not is_tensor(x):
                print("never while tracing a tensor")
            return model(x)

        @tf.function
        def scaled(x, scale=None, *rest):
            # a defaulted or starred parameter may hold anything
            if not tf.is_tensor(scale):
                scale = tf.Variable(1.0)  # TFG205
            return x * scale

        @tf.function
        def rebound(x):
            x = x.numpy() if False else [1.0]
            if not tf.is_tensor(x):
                x = tf.Variable(x)  # TFG205
            return x

        def eager(x):
            if not tf.is_tensor(x):
                x = tf.Variable(x)
            return x

        saliency(tf.ones([2]), None, tf.ones([2]))
        scaled(tf.ones([2]), tf.ones([2]))
        rebound(tf.ones([2]))

        @tf.function
        def unknown(x):
            # nothing in the module shows what goes in: the fallback may well run
            if not tf.is_tensor(x):
                x = tf.Variable(x)  # TFG205
            return x

        @tf.function
        def scale(x, factor):
            if not tf.is_tensor(factor):
                factor = tf.Variable(factor)  # TFG205
            return x * factor

        scale(tf.ones([2]), 2.0)  # a Python number reaches the trace as it is
    """,
    "executing_eagerly": """
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                print("value", x.numpy())
            else:
                print("graph")  # TFG101
            return x
    """,
    "not inside_function": """
        import tensorflow as tf

        @tf.function
        def step(x):
            if not tf.inside_function():
                print(x.numpy())
            return x
    """,
    "early exit while tracing": """
        import tensorflow as tf
        import numpy as np

        @tf.function
        def step(x):
            if tf.inside_function():
                return x * 2
            return np.asarray(x) * 2
    """,
    "hasattr numpy": """
        import tensorflow as tf

        @tf.function
        def step(x):
            if hasattr(x, "numpy"):
                x = x.numpy()
            return x
    """,
    "hasattr graph": """
        import keras
        import tensorflow as tf

        @tf.function
        def step(x):
            symbolic = hasattr(x, "graph") and hasattr(x.graph, "as_graph_def")
            if symbolic and keras.config.backend() != "torch":
                y = tf.abs(x)
            else:
                y = keras.ops.convert_to_numpy(x)
            if hasattr(x, "graph"):
                print("graph path")  # TFG101
            return y
    """,
    "a project helper that returns the test": """
        import tensorflow as tf

        def in_tf_function():
            return not tf.executing_eagerly()

        @tf.function
        def step(x):
            if not in_tf_function():
                print(x.numpy())
            return x
    """,
    "Keras backend checks": """
        import keras
        import tensorflow as tf

        class Gate(keras.layers.Layer):
            def call(self, x):
                if keras.config.backend() == "jax":
                    print("jax path")
                if keras.config.backend() != "tensorflow":
                    x = x.numpy()
                if keras.config.backend() == "tensorflow":
                    print("tf path")  # TFG101
                return x
    """,
    "type tests for other frameworks' arrays": """
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            if isinstance(x, np.ndarray):
                print("numpy input", np.mean(x))
            return x
    """,
    "the name of another framework in the type": """
        import tensorflow as tf

        @tf.function
        def step(x):
            if "torch.Tensor" in str(type(x)):
                x = tf.constant(x.detach().numpy())
            elif "jax" in str(type(x)):
                x = tf.constant(x.__array__())
            return x
    """,
    "a local set from a guard": """
        import tensorflow as tf

        def in_graph():
            return tf.inside_function()

        @tf.function
        def step(x, extra=None):
            graph = in_graph() or extra is not None
            if graph:
                return x * 2
            print(x.numpy())
            return x
    """,
    "TensorFlow obtained at run time": """
        import keras

        def _load():
            import tensorflow
            return tensorflow

        tf = _load()

        def in_tf_function():
            if tf is None:
                return False
            return not tf.executing_eagerly()

        class Layer(keras.layers.Layer):
            def call(self, x):
                if not in_tf_function():
                    print(x.numpy())
                return tf.py_function(self._python, [x], "float32")

            def _python(self, x):
                return x.numpy() * 2
    """,
    "and / or": """
        import tensorflow as tf

        DEBUG = True

        @tf.function
        def step(x):
            if DEBUG and tf.executing_eagerly():
                print(x.numpy())
            if DEBUG or tf.executing_eagerly():
                print("maybe")  # TFG101
            return x
    """,
    "a helper called only eagerly is not traced": """
        import tensorflow as tf

        def dump(x):
            print(x.numpy())

        def log(x):
            print("graph")  # TFG101

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                dump(x)
            log(x)
            return x
    """,
    "init_scope body runs eagerly": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def train_step(self, data):
                with tf.init_scope():
                    print("building once")
                    self.started = True
                return {}

            def started_yet(self):
                return self.started
    """,
    "an unrelated test guards nothing": """
        import tensorflow as tf

        @tf.function
        def step(x, verbose=True):
            if verbose:
                print("step")  # TFG101
            return x
    """,
    "helper taking the value it tests": """
        import numpy as np
        import tensorflow as tf

        def is_eager(x):
            return hasattr(x, "numpy")

        def is_numpy(x):
            return isinstance(x, np.ndarray)

        def is_positive(x):
            return x > 0

        @tf.function
        def debug_step(x):
            y = x * 2
            if is_eager(y):
                print("eager values", y.numpy()[:2])
            if not is_numpy(y):
                y = y + 1
            else:
                np.save("/tmp/y.npy", y)
            if is_positive(y):
                print("positive")  # TFG101
            return y
    """,
    "a Keras model's own run_eagerly flag": """
        import logging

        import keras
        import tensorflow as tf

        class Nerf(keras.Model):
            def train_step(self, data):
                x, y = data
                loss = tf.reduce_mean((self(x) - y) ** 2)
                if self.run_eagerly:
                    logging.warning("loss %s", loss.numpy())
                if not self.run_eagerly:
                    logging.info("tracing train_step for %s", x.shape)
                return {"loss": loss}

            def call(self, x):
                if self.run_eagerly:
                    print("batch", x.numpy().mean())
                return x

        class Decorated(keras.Model):
            @tf.function
            def call(self, x):
                if self.run_eagerly:
                    print("eager batch", x)  # TFG101
                return x

        class Trainer(tf.Module):
            def __init__(self, run_eagerly):
                self.run_eagerly = run_eagerly

            @tf.function
            def step(self, x):
                if self.run_eagerly:
                    print("step", x)  # TFG101
                return x * 2
    """,
    "a try whose ops all sit under an eager guard holds no op in the graph": """
        import keras
        import tensorflow as tf

        class Ranker(keras.Model):
            def call(self, inputs):
                for name, column in inputs.items():
                    try:
                        if hasattr(column, "numpy"):
                            print(name, tf.reduce_max(column).numpy())
                    except Exception:
                        pass
                try:
                    if tf.executing_eagerly():
                        tf.debugging.check_numerics(inputs["score"], "score")
                    scores = tf.math.log(inputs["score"])
                except Exception:  # TFG206
                    scores = inputs["score"]
                return scores
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_guard(name: str) -> None:
    source = dedent(CASES[name])
    assert found(source) == expected(source)


def test_eager_guard_helper_of_another_module(tmp_path: Path) -> None:
    # `is_eager(x)` defined in tf_utils.py: its value while tracing travels to the caller.
    write_tree(
        tmp_path,
        {
            "tf_utils.py": dedent(
                """
                import tensorflow as tf

                def is_eager(x):
                    return hasattr(x, "numpy")

                def to_float(x):
                    return tf.cast(x, tf.float32)
                """
            ),
            "train.py": dedent(
                """
                import tensorflow as tf

                from tf_utils import is_eager

                @tf.function
                def debug_step(x):
                    if is_eager(x):
                        print("eager", x.numpy())
                    return x * 2
                """
            ),
        },
    )
    assert [f.code for f in lint_paths([tmp_path], Config())] == []
