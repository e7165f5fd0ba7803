"""Traced-code discovery (SPEC §1): which functions TensorFlow traces, why, and through what.

Each test parses a small module and compares the traced functions by display name with the
reason and chain the analyzer gives.  When TensorFlow's behaviour is uncertain the analyzer
prefers *not traced* (precision first); those cases say so in their names.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_graph import lint_source
from tflint_graph.core.config import Config
from tflint_graph.model.context import ModuleContext, TracedFunction, TraceKind
from tflint_graph.traced import find_traced


def infos(source: str) -> dict[str, TracedFunction]:
    """Every traced function of ``source`` by display name (names must be unique)."""
    source = textwrap.dedent(source).lstrip("\n")
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    found = find_traced(ctx)
    by_name: dict[str, TracedFunction] = {}
    for info in found.values():
        assert info.display not in by_name, f"ambiguous display name {info.display}"
        by_name[info.display] = info
    return by_name


def traced(source: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{display name: (reason, chain)} for every traced function of ``source``."""
    return {name: (info.reason, info.chain) for name, info in infos(source).items()}


def names(source: str) -> set[str]:
    return set(traced(source))


# --------------------------------------------------------------------------------------
# 1. Decorators
# --------------------------------------------------------------------------------------

DECORATOR_FORMS = [
    ("import tensorflow as tf", "@tf.function", "@tf.function"),
    ("import tensorflow as tf", "@tf.function()", "@tf.function"),
    (
        "import tensorflow as tf",
        "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])",
        "@tf.function",
    ),
    ("import tensorflow as tf", "@tf.function(jit_compile=True)", "@tf.function"),
    ("import tensorflow as tf", "@tf.function(reduce_retracing=True)", "@tf.function"),
    ("from tensorflow import function", "@function", "@function"),
    ("from tensorflow import function as tf_function", "@tf_function", "@tf_function"),
    ("import tensorflow as tf", "@tf.compat.v2.function", "@tf.compat.v2.function"),
    ("import tensorflow.compat.v2 as tf", "@tf.function", "@tf.function"),
    ("import tensorflow", "@tensorflow.function", "@tensorflow.function"),
    ("import tensorflow as tf2", "@tf2.function", "@tf2.function"),
    (
        "import functools\nimport tensorflow as tf",
        "@functools.partial(tf.function, reduce_retracing=True)",
        "@tf.function",
    ),
    (
        "from functools import partial\nimport tensorflow as tf",
        "@partial(tf.function, jit_compile=True)",
        "@tf.function",
    ),
    (
        "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None",
        "@tf.function",
        "@tf.function",
    ),
]


@pytest.mark.parametrize(("imports", "decorator", "label"), DECORATOR_FORMS)
def test_decorator_forms(imports: str, decorator: str, label: str) -> None:
    source = (
        f"{imports}\n\n{decorator}\ndef step(x):\n    return x\n\ndef eager(x):\n    return x\n"
    )
    assert traced(source) == {"step()": (f"decorated with {label}", ("step()",))}
    info = infos(source)["step()"]
    assert info.kind is TraceKind.DECORATED
    assert info.autograph is True


def test_decorated_method_and_nested_function() -> None:
    assert names(
        """
        import tensorflow as tf

        class Trainer(tf.Module):
            @tf.function
            def step(self, x):
                return x

        def build():
            @tf.function
            def inner(x):
                return x
            return inner
        """
    ) == {"step()", "inner()"}


def test_decorator_input_signature_is_kept() -> None:
    info = infos(
        """
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def serve(x):
            return x
        """
    )["serve()"]
    assert info.input_signature is not None


@pytest.mark.parametrize(
    "decorators",
    [
        "@tf.function\n@tf.autograph.experimental.do_not_convert",
        "@tf.autograph.experimental.do_not_convert\n@tf.function",
        "@tf.function(autograph=False)",
        "@functools.partial(tf.function, autograph=False)",
    ],
)
def test_autograph_off_is_still_traced(decorators: str) -> None:
    source = (
        f"import functools\nimport tensorflow as tf\n\n{decorators}\ndef step(x):\n    return x\n"
    )
    info = infos(source)["step()"]
    assert info.reason == "decorated with @tf.function"
    assert info.autograph is False


def test_do_not_convert_alone_is_not_traced() -> None:
    assert not names(
        """
        import tensorflow as tf

        @tf.autograph.experimental.do_not_convert
        def helper(x):
            return x
        """
    )


def test_decorator_through_module_level_alias() -> None:
    assert traced(
        """
        import tensorflow as tf

        xla = tf.function(jit_compile=True)
        fn = tf.function

        @xla
        def fast(x):
            return x

        @fn
        def plain(x):
            return x
        """
    ) == {
        "fast()": ("decorated with @xla", ("fast()",)),
        "plain()": ("decorated with @fn", ("plain()",)),
    }


# --------------------------------------------------------------------------------------
# Shadowing: names that look like TensorFlow but are not
# --------------------------------------------------------------------------------------


def test_local_function_named_function_is_not_tf_function() -> None:
    assert not names(
        """
        import tensorflow as tf

        def function(f):
            return f

        @function
        def step(x):
            return x
        """
    )


def test_tf_imported_from_another_library_is_not_tensorflow() -> None:
    assert not names(
        """
        from mylib import tf

        @tf.function
        def step(x):
            return x

        wrapped = tf.function(lambda x: x)
        """
    )


def test_parameter_named_tf_is_not_tensorflow() -> None:
    assert not names(
        """
        import tensorflow

        def make(tf):
            @tf.function
            def step(x):
                return x
            return tf.function(lambda x: x)
        """
    )


def test_from_tensorflow_import_function_shadowed_by_local_def() -> None:
    assert not names(
        """
        from tensorflow import function

        def wrap():
            def function(f):
                return f

            @function
            def step(x):
                return x
            return step
        """
    )


def test_plain_module_without_tensorflow_is_not_traced() -> None:
    assert not names(
        """
        class function:
            def __init__(self, f):
                self.f = f

        @function
        def step(x):
            print(x)
        """
    )


# --------------------------------------------------------------------------------------
# 2. tf.function(fn) calls
# --------------------------------------------------------------------------------------


def test_wrapped_named_function() -> None:
    assert traced(
        """
        import tensorflow as tf

        def train_one(x):
            return x

        step = tf.function(train_one)
        """
    ) == {"train_one()": ("wrapped by tf.function()", ("train_one()",))}


def test_wrapped_method_with_input_signature_inside_class() -> None:
    found = infos(
        """
        import tensorflow as tf

        class Exporter(tf.Module):
            def __init__(self):
                self.serve = tf.function(
                    self.call, input_signature=[tf.TensorSpec([None], tf.float32)]
                )

            def call(self, x):
                return x

            def other(self, x):
                return x
        """
    )
    assert set(found) == {"call()"}
    assert found["call()"].kind is TraceKind.WRAPPED
    assert found["call()"].input_signature is not None


def test_wrapped_lambda() -> None:
    assert traced(
        """
        import tensorflow as tf

        inc = tf.function(lambda x: x + 1)
        """
    ) == {"lambda (line 3)": ("wrapped by tf.function()", ("lambda (line 3)",))}


@pytest.mark.parametrize(
    "wrap",
    [
        "tf.function(jit_compile=True)(fn)",
        "tf.function(func=fn)",
        "tf.function(fn, reduce_retracing=True)",
        "tensorflow.function(fn)",
        "tf.function(functools.partial(fn, k=2))",
        "tf.function(fn).get_concrete_function(tf.TensorSpec([None]))",
    ],
)
def test_wrapped_call_forms(wrap: str) -> None:
    source = (
        "import functools\nimport tensorflow\nimport tensorflow as tf\n\n"
        f"def fn(x, k=1):\n    return x\n\ndef other(x):\n    return x\n\nstep = {wrap}\n"
    )
    assert traced(source) == {"fn()": ("wrapped by tf.function()", ("fn()",))}


def test_wrapped_autograph_false() -> None:
    found = infos(
        """
        import tensorflow as tf

        def fn(x):
            return x

        step = tf.function(fn, autograph=False)
        """
    )
    assert found["fn()"].autograph is False


def test_tf_function_without_function_argument_traces_nothing() -> None:
    assert not names(
        """
        import tensorflow as tf

        def fn(x):
            return x

        decorator = tf.function(input_signature=None)
        """
    )


# --------------------------------------------------------------------------------------
# 3. Keras
# --------------------------------------------------------------------------------------

KERAS_MODEL_BASES = [
    ("import tensorflow as tf", "tf.keras.Model"),
    ("import tensorflow as tf", "tf.keras.models.Model"),
    ("import tensorflow as tf", "tf.keras.Sequential"),
    ("import keras", "keras.Model"),
    ("import keras", "keras.Sequential"),
    ("import keras", "keras.models.Model"),
    ("from tensorflow import keras", "keras.Model"),
    ("import tf_keras", "tf_keras.Model"),
    ("import tf_keras as keras", "keras.Model"),
    ("from tensorflow.keras import Model", "Model"),
    ("from tensorflow.keras.models import Model", "Model"),
    ("from keras import Model", "Model"),
    ("import tensorflow as tf\nModel = tf.keras.Model", "Model"),
]


@pytest.mark.parametrize(("imports", "base"), KERAS_MODEL_BASES)
def test_keras_model_steps(imports: str, base: str) -> None:
    source = (
        f"{imports}\n\nclass Net({base}):\n"
        "    def train_step(self, data):\n        return {}\n"
        "    def test_step(self, data):\n        return {}\n"
        "    def predict_step(self, data):\n        return data\n"
        "    def call(self, x):\n        return x\n"
        "    def get_config(self):\n        return {}\n"
        "    def helper(self, x):\n        return x\n"
    )
    assert traced(source) == {
        "train_step()": ("Keras train_step", ("train_step()",)),
        "test_step()": ("Keras test_step", ("test_step()",)),
        "predict_step()": ("Keras predict_step", ("predict_step()",)),
        "call()": ("Keras Model.call", ("call()",)),
    }


@pytest.mark.parametrize(
    ("imports", "base"),
    [
        ("import tensorflow as tf", "tf.keras.layers.Layer"),
        ("import tensorflow as tf", "tf.keras.layers.Dense"),
        ("import keras", "keras.layers.Layer"),
        ("import keras", "keras.Layer"),
        ("import keras", "keras.layers.Dense"),
        ("from tensorflow.keras import layers", "layers.Layer"),
        ("from keras import layers", "layers.Conv2D"),
        ("from tensorflow.keras.layers import Layer", "Layer"),
        ("import tf_keras", "tf_keras.layers.Layer"),
    ],
)
def test_keras_layer_call(imports: str, base: str) -> None:
    source = (
        f"{imports}\n\nclass Block({base}):\n"
        "    def build(self, shape):\n        pass\n"
        "    def call(self, x):\n        return x\n"
        "    def train_step(self, data):\n        return data\n"
    )
    # A layer's call is traced; train_step means nothing on a layer.
    assert traced(source) == {"call()": ("Keras Layer.call", ("call()",))}


def test_keras_through_intermediate_base_classes() -> None:
    assert traced(
        """
        import tensorflow as tf

        class Base(tf.keras.Model):
            def summary_line(self):
                return ""

        class Middle(Base):
            pass

        class Net(Middle):
            def train_step(self, data):
                return {}

        class MyLayerBase(tf.keras.layers.Layer):
            pass

        class Block(MyLayerBase):
            def call(self, x):
                return x
        """
    ) == {
        "train_step()": ("Keras train_step", ("train_step()",)),
        "call()": ("Keras Layer.call", ("call()",)),
    }


def test_keras_loss_and_metric_subclasses() -> None:
    assert traced(
        """
        import tensorflow as tf

        class Huberish(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                return y_pred

        class Hits(tf.keras.metrics.Metric):
            def update_state(self, y_true, y_pred, sample_weight=None):
                pass

            def result(self):
                return 0.0

            def reset_state(self):
                pass
        """
    ) == {
        "call()": ("Keras Loss.call", ("call()",)),
        "update_state()": ("Keras Metric.update_state", ("update_state()",)),
    }


def test_keras_subclass_of_concrete_metric() -> None:
    assert names(
        """
        import keras

        class MeanOfSquares(keras.metrics.Mean):
            def update_state(self, values, sample_weight=None):
                pass

            def result(self):
                return 0.0
        """
    ) == {"update_state()"}


def test_compile_loss_and_metric_functions() -> None:
    assert traced(
        """
        import functools
        import tensorflow as tf

        def my_loss(y_true, y_pred):
            return y_pred

        def my_metric(y_true, y_pred):
            return y_pred

        def head_loss(y_true, y_pred, scale):
            return y_pred

        def unused(y_true, y_pred):
            return y_pred

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(
            optimizer="adam",
            loss={"out": my_loss, "head": functools.partial(head_loss, scale=2)},
            metrics=["accuracy", my_metric],
        )
        """
    ) == {
        "my_loss()": ("Keras loss passed to compile()", ("my_loss()",)),
        "head_loss()": ("Keras loss passed to compile()", ("head_loss()",)),
        "my_metric()": ("Keras metrics passed to compile()", ("my_metric()",)),
    }


def test_plain_class_named_model_is_not_keras() -> None:
    assert not names(
        """
        import tensorflow as tf

        class Model:
            pass

        class Net(Model):
            def train_step(self, data):
                return data

            def call(self, x):
                return x

        class Layer:
            def call(self, x):
                return x
        """
    )


def test_keras_model_from_unrelated_library_is_not_keras() -> None:
    assert not names(
        """
        import tensorflow as tf
        from torch import nn
        from mylib import Model

        class Net(nn.Module):
            def forward(self, x):
                return x

        class Other(Model):
            def train_step(self, data):
                return data
        """
    )


def test_run_eagerly_true_means_keras_steps_are_not_traced() -> None:
    # Precision first: with run_eagerly=True in the module, Keras runs steps, layers and
    # compile() losses eagerly, so none of them is reported as traced.
    assert not names(
        """
        import tensorflow as tf

        def my_loss(y_true, y_pred):
            return y_pred

        class Net(tf.keras.Model):
            def train_step(self, data):
                return {}

        model = Net()
        model.compile(optimizer="adam", loss=my_loss, run_eagerly=True)
        """
    )


def test_run_eagerly_false_keeps_keras_steps_traced() -> None:
    assert names(
        """
        import tensorflow as tf

        class Net(tf.keras.Model):
            def train_step(self, data):
                return {}

        model = Net()
        model.compile(optimizer="adam", run_eagerly=False)
        """
    ) == {"train_step()"}


def test_dynamic_layer_is_not_traced() -> None:
    assert not names(
        """
        import tensorflow as tf

        class Eager(tf.keras.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(dynamic=True, **kwargs)

            def call(self, x):
                return x
        """
    )


@pytest.mark.parametrize(
    ("init", "traced"),
    [
        ("super().__init__(trainable, name, dtype, True)", False),  # Keras 2's order
        ("super().__init__(trainable, name, dtype, dynamic)", False),
        ("super(Embed, self).__init__(trainable, name, dtype, dynamic)", False),
        ("super().__init__(trainable, name, dtype, False)", True),
        ("super().__init__(trainable, name, dtype)", True),
        ("helper(trainable, name, dtype, True)", True),  # not the base's constructor
    ],
)
def test_dynamic_passed_by_position(init: str, traced: bool) -> None:
    source = """
        import tensorflow as tf

        def helper(*args):
            return args

        class Embed(tf.keras.layers.Layer):
            def __init__(self, trainable=True, name=None, dtype=None, dynamic=True):
                INIT

            def call(self, x):
                return x
        """.replace("INIT", init)
    assert bool(names(source)) is traced


@pytest.mark.parametrize(
    "base",
    ["tf.keras.layers.LayerNormalization", "tf.keras.Model", "Block"],
)
def test_a_fourth_argument_to_another_constructor_is_not_dynamic(base: str) -> None:
    # Only Keras's own Layer takes (trainable, name, dtype, dynamic) in that order.
    source = """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def __init__(self, units, activation=None, name=None, use_bias=True):
                super().__init__(name=name)

        class Head(BASE):
            def __init__(self, a=-1, b=1e-3, c=True, d=True):
                super().__init__(a, b, c, d)

            def call(self, x):
                return x
        """.replace("BASE", base)
    assert names(source) == {"call()"}


@pytest.mark.parametrize(
    ("signature", "traced"),
    [
        ("self, size, dynamic=True, **kwargs", False),  # the default decides
        ("self, size, *, dynamic=True, **kwargs", False),
        ("self, size, dynamic=False, **kwargs", True),
        ("self, size, dynamic, **kwargs", True),  # no default: callers decide, unknown here
    ],
)
def test_dynamic_layer_through_its_own_parameter(signature: str, traced: bool) -> None:
    source = """
        import tensorflow as tf

        class Interpolate(tf.keras.layers.Layer):
            def __init__(SIGNATURE):
                self.size = size
                super().__init__(dynamic=dynamic, **kwargs)

            def call(self, x):
                return x
        """.replace("SIGNATURE", signature)
    assert bool(names(source)) is traced


def test_keras_method_with_do_not_convert_has_autograph_off() -> None:
    found = infos(
        """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            @tf.autograph.experimental.do_not_convert
            def call(self, x):
                return x
        """
    )
    assert found["call()"].autograph is False


def test_keras_lambda_layer_function_is_traced() -> None:
    assert names(
        """
        import tensorflow as tf

        def scale(x):
            return x * 2

        layer = tf.keras.layers.Lambda(scale)
        """
    ) == {"scale()"}


# --------------------------------------------------------------------------------------
# 4. tf.data
# --------------------------------------------------------------------------------------


def test_dataset_callbacks_of_every_method() -> None:
    found = traced(
        """
        import functools
        import tensorflow as tf

        def parse(x): return x
        def keep(x): return True
        def expand(x): return x
        def load(x): return x
        def add(state, x): return state
        def running(state, x): return state, x
        def key(x): return 0
        def window(k, w): return w
        def scaled(x, k): return x
        def chained(x): return x

        ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0])
        ds = ds.map(parse).filter(keep)
        nested = ds.flat_map(expand).interleave(load, cycle_length=2)
        total = ds.reduce(0, add)
        sums = ds.scan(0, running)
        grouped = ds.group_by_window(key_func=key, reduce_func=window, window_size=4)
        partial = ds.map(functools.partial(scaled, k=1))
        chain = tf.data.Dataset.from_tensor_slices([1]).shuffle(8).batch(2).map(chained)
        doubled = ds.map(lambda x: x * 2)
        """
    )
    assert found == {
        "parse()": ("Dataset.map callback", ("parse()",)),
        "keep()": ("Dataset.filter callback", ("keep()",)),
        "expand()": ("Dataset.flat_map callback", ("expand()",)),
        "load()": ("Dataset.interleave callback", ("load()",)),
        "add()": ("Dataset.reduce callback", ("add()",)),
        "running()": ("Dataset.scan callback", ("running()",)),
        "key()": ("Dataset.group_by_window callback", ("key()",)),
        "window()": ("Dataset.group_by_window callback", ("window()",)),
        "scaled()": ("Dataset.map callback", ("scaled()",)),
        "chained()": ("Dataset.map callback", ("chained()",)),
        "lambda (line 23)": ("Dataset.map callback", ("lambda (line 23)",)),
    }


def test_dataset_map_of_method() -> None:
    assert traced(
        """
        import tensorflow as tf

        class Pipeline:
            def parse(self, record):
                return record

            def build(self, files):
                records = tf.data.TFRecordDataset(files)
                return records.map(self.parse)
        """
    ) == {"parse()": ("Dataset.map callback", ("parse()",))}


@pytest.mark.parametrize(
    "receiver",
    [
        "tf.data.Dataset.range(10)",
        "tf.data.TextLineDataset(paths).skip(1)",
        "tf.data.experimental.make_csv_dataset(paths, 4)",
        "tfds.load('mnist', split='train')",
        "tf.keras.utils.image_dataset_from_directory(paths)",
        "source",  # a name assigned from a tf.data factory
        "train_ds",  # a conventional dataset name
        "typed",  # a parameter annotated tf.data.Dataset
    ],
)
def test_dataset_receivers(receiver: str) -> None:
    source = (
        "import tensorflow as tf\nimport tensorflow_datasets as tfds\n\n"
        "def fn(x):\n    return x\n\n"
        "def build(paths, train_ds, typed: tf.data.Dataset):\n"
        "    source = tf.data.Dataset.list_files(paths)\n"
        f"    return {receiver}.map(fn)\n"
    )
    assert traced(source) == {"fn()": ("Dataset.map callback", ("fn()",))}


def test_num_parallel_calls_is_dataset_evidence() -> None:
    assert names(
        """
        import tensorflow as tf

        def fn(x):
            return x

        def build(files):
            records = read(files)
            return records.map(fn, num_parallel_calls=tf.data.AUTOTUNE)
        """
    ) == {"fn()"}


def test_experimental_dataset_transformations() -> None:
    assert names(
        """
        import tensorflow as tf

        def parse(x):
            return x

        def pick(state, x):
            return state, x

        ds = tf.data.Dataset.range(4)
        ds = ds.apply(tf.data.experimental.map_and_batch(parse, batch_size=2))
        ds = ds.apply(tf.data.experimental.scan(0, pick))
        """
    ) == {"parse()", "pick()"}


def test_from_generator_generator_is_not_traced() -> None:
    # The generator runs as ordinary Python (through a py_function), never symbolically.
    assert traced(
        """
        import tensorflow as tf

        def gen():
            yield 1

        def parse(x):
            return x

        ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int32))
        ds = ds.map(parse)
        """
    ) == {"parse()": ("Dataset.map callback", ("parse()",))}


def test_non_dataset_map_calls_are_not_traced() -> None:
    assert not names(
        """
        import multiprocessing
        from concurrent.futures import ThreadPoolExecutor

        import pandas as pd
        import tensorflow as tf

        def a(x): return x
        def b(x): return x
        def c(x): return x
        def d(x): return x
        def e(x): return x

        pool = multiprocessing.Pool()
        pool.map(a, [1, 2])
        series = pd.Series([1, 2])
        series.map(b)
        list(map(c, [1, 2]))
        with ThreadPoolExecutor() as executor:
            list(executor.map(d, [1, 2]))
        values = [1, 2]
        filtered = filter(e, values)
        """
    )


def test_huggingface_dataset_named_dataset_is_not_tf_data() -> None:
    # `datasets.Dataset.map` runs eagerly in Python: a dataset-like name alone must not win
    # over a binding that comes from another library, nor over keyword arguments that
    # tf.data's map does not take.
    assert not names(
        """
        import tensorflow as tf
        from datasets import load_dataset

        def tokenize(batch):
            return batch

        def clean(batch):
            return batch

        dataset = load_dataset("imdb")
        dataset = dataset.map(tokenize, batched=True)

        def prepare(ds):
            return ds.map(clean, batched=True, remove_columns=["text"])
        """
    )


# --------------------------------------------------------------------------------------
# 5. Control-flow callables
# --------------------------------------------------------------------------------------

CONTROL_FLOW_MODULE = """
import tensorflow as tf

def pos(): return 1
def neg(): return 0
def cond(i): return i < 3
def body(i): return (i + 1,)
def zero(): return 0
def one(): return 1
def square(x): return x * x
def per_example(x): return x
def accumulate(a, x): return a + x
def replica_step(x): return x

{decorator}
def step(x, strategy):
    y = tf.cond(x > 0, pos, neg)
    tf.while_loop(cond, body, [0])
    tf.switch_case(x, [zero, one])
    tf.map_fn(square, x)
    tf.vectorized_map(per_example, x)
    tf.scan(accumulate, x)
    strategy.run(replica_step, args=(x,))
    return y
"""


def test_control_flow_callables_from_traced_code() -> None:
    found = traced(CONTROL_FLOW_MODULE.format(decorator="@tf.function"))
    expected = {
        "pos()": "tf.cond",
        "neg()": "tf.cond",
        "cond()": "tf.while_loop",
        "body()": "tf.while_loop",
        "zero()": "tf.switch_case",
        "one()": "tf.switch_case",
        "square()": "tf.map_fn",
        "accumulate()": "tf.scan",
        "replica_step()": "strategy.run",
    }
    for name, label in expected.items():
        assert found[name] == (f"{label} callable in step()", ("step()", name))
    # vectorized_map always traces its function, so it is a root of its own.
    assert found["per_example()"] == ("tf.vectorized_map callable", ("per_example()",))
    assert set(found) == {*expected, "per_example()", "step()"}


def test_control_flow_in_eager_code_runs_eagerly() -> None:
    # Outside a graph tf.cond/while_loop/map_fn/strategy.run call their functions eagerly;
    # only tf.vectorized_map always traces.
    assert names(CONTROL_FLOW_MODULE.format(decorator="")) == {"per_example()"}


def test_control_flow_keyword_arguments_and_lambdas() -> None:
    found = traced(
        """
        import tensorflow as tf

        def yes(): return 1
        def no(): return 0

        @tf.function
        def step(x):
            a = tf.cond(x > 0, true_fn=yes, false_fn=no)
            b = tf.cond(x > 0, lambda: x,
                        lambda: -x)
            return tf.switch_case(x, branch_fns={0: yes, 1: no})
        """
    )
    assert found["yes()"] == ("tf.cond callable in step()", ("step()", "yes()"))
    assert found["no()"] == ("tf.cond callable in step()", ("step()", "no()"))
    assert found["lambda (line 9)"][1] == ("step()", "lambda (line 9)")
    assert found["lambda (line 10)"][1] == ("step()", "lambda (line 10)")


def test_strategy_from_tf_distribute_factory() -> None:
    found = traced(
        """
        import tensorflow as tf

        def replica_step(x):
            return x

        def other_step(x):
            return x

        mirrored = tf.distribute.MirroredStrategy()

        @tf.function
        def step(x):
            tf.distribute.get_strategy().run(other_step, args=(x,))
            return mirrored.run(replica_step, args=(x,))
        """
    )
    for name in ("replica_step()", "other_step()"):
        assert found[name] == ("strategy.run callable in step()", ("step()", name))


def test_unrelated_run_method_is_not_control_flow() -> None:
    assert names(
        """
        import tensorflow as tf

        def job(x):
            return x

        @tf.function
        def step(x, runner):
            runner.apply(job)
            return x
        """
    ) == {"step()", "job()"}  # passed as an argument from traced code: a callee
    # (`runner.submit(job)` hands it to an executor's thread: see the test on processes)


# --------------------------------------------------------------------------------------
# 6. Callees
# --------------------------------------------------------------------------------------


def test_callees_direct_methods_and_transitive() -> None:
    assert traced(
        """
        import tensorflow as tf

        def jitter(x): return x
        def augment(x): return jitter(x)
        def normalize(x): return x
        def untouched(x): return x

        class Base(tf.keras.Model):
            def shared(self, x):
                return x

        class Net(Base):
            def train_step(self, data):
                data = augment(data)
                data = self.shared(data)
                return self.own(data)

            def own(self, x):
                return normalize(x)

            def eager_only(self, x):
                return x
        """
    ) == {
        "train_step()": ("Keras train_step", ("train_step()",)),
        "augment()": ("called from train_step()", ("train_step()", "augment()")),
        "shared()": ("called from train_step()", ("train_step()", "shared()")),
        "own()": ("called from train_step()", ("train_step()", "own()")),
        "jitter()": ("called from augment()", ("train_step()", "augment()", "jitter()")),
        "normalize()": ("called from own()", ("train_step()", "own()", "normalize()")),
    }


def test_shortest_chain_wins() -> None:
    found = traced(
        """
        import tensorflow as tf

        def a(x): return b(x)
        def b(x): return c(x)
        def c(x): return x

        @tf.function
        def step(x):
            a(x)
            return c(x)
        """
    )
    assert found["c()"] == ("called from step()", ("step()", "c()"))
    assert found["b()"] == ("called from a()", ("step()", "a()", "b()"))


def test_recursion_is_safe() -> None:
    assert traced(
        """
        import tensorflow as tf

        def ping(x): return pong(x)
        def pong(x): return ping(x)
        def self_rec(x): return self_rec(x)

        @tf.function
        def step(x):
            return ping(x) + self_rec(x)
        """
    ) == {
        "step()": ("decorated with @tf.function", ("step()",)),
        "ping()": ("called from step()", ("step()", "ping()")),
        "self_rec()": ("called from step()", ("step()", "self_rec()")),
        "pong()": ("called from ping()", ("step()", "ping()", "pong()")),
    }


def test_nested_def_and_function_passed_as_argument() -> None:
    assert traced(
        """
        import tensorflow as tf

        def scale(t): return t * 2
        def never(t): return t

        @tf.function
        def step(x):
            def inner(y):
                return y
            x = inner(x)
            return tf.nest.map_structure(scale, x)
        """
    ) == {
        "step()": ("decorated with @tf.function", ("step()",)),
        "inner()": ("called from step()", ("step()", "inner()")),
        "scale()": ("passed to tf.nest.map_structure() in step()", ("step()", "scale()")),
    }


def test_callables_handed_to_another_process_or_thread_are_not_traced() -> None:
    # `Process(target=fn)` runs fn in a child process, `submit(fn)` in a worker thread:
    # neither runs while this function traces.
    assert names(
        """
        import multiprocessing
        import threading
        from concurrent.futures import ThreadPoolExecutor

        import tensorflow as tf

        def probe(queue): queue.put(open("/dev/null").read())
        def watch(): print("watching")
        def fetch(x): return x
        def scale(t): return t * 2

        @tf.function
        def step(x):
            ctx = multiprocessing.get_context("fork")
            ctx.Process(target=probe, args=(ctx.Queue(),)).start()
            threading.Thread(target=watch).start()
            ThreadPoolExecutor(2).submit(fetch, 1)
            return tf.nest.map_structure(scale, x)
        """
    ) == {"step()", "scale()"}


def test_super_call_reaches_base_class_method() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf

        class Base(tf.keras.Model):
            def compute(self, data):
                return data

        class Net(Base):
            def compute(self, data):
                return data

            def train_step(self, data):
                return super().compute(data)
        """
    ).lstrip("\n")
    found = infos(source)
    assert set(found) == {"train_step()", "compute()"}
    # super().compute is Base.compute (line 4), not the override on line 8.
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    [compute] = [i for i in find_traced(ctx).values() if i.display == "compute()"]
    assert ctx.position(compute.node).start.line == 4
    assert compute.chain == ("train_step()", "compute()")


def test_method_called_on_instance_and_attribute_function() -> None:
    assert names(
        """
        import tensorflow as tf

        def squared_error(y, p):
            return (y - p) ** 2

        class Scaler:
            def apply(self, x):
                return x

        scaler = Scaler()

        class Trainer(tf.Module):
            def __init__(self):
                self.loss_fn = squared_error

            @tf.function
            def step(self, x):
                return self.loss_fn(scaler.apply(x), x)
        """
    ) == {"step()", "apply()", "squared_error()"}


def test_callee_with_do_not_convert_has_autograph_off() -> None:
    found = infos(
        """
        import tensorflow as tf

        @tf.autograph.experimental.do_not_convert
        def raw(x):
            return x

        def converted(x):
            return x

        @tf.function
        def step(x):
            return raw(x) + converted(x)
        """
    )
    assert found["raw()"].autograph is False
    assert found["raw()"].chain == ("step()", "raw()")
    assert found["converted()"].autograph is True


def test_callee_of_autograph_off_root_inherits_autograph_off() -> None:
    found = infos(
        """
        import tensorflow as tf

        def helper(x):
            return x

        @tf.function(autograph=False)
        def step(x):
            return helper(x)
        """
    )
    assert found["helper()"].autograph is False


def test_callee_of_dataset_callback_and_wrapped_function() -> None:
    found = traced(
        """
        import tensorflow as tf

        def decode(x): return x
        def parse(x): return decode(x)
        def loss(x): return x
        def train_one(x): return loss(x)

        ds = tf.data.Dataset.range(3).map(parse)
        step = tf.function(train_one)
        """
    )
    assert found["decode()"] == ("called from parse()", ("parse()", "decode()"))
    assert found["loss()"] == ("called from train_one()", ("train_one()", "loss()"))


def test_eager_only_callers_do_not_trace() -> None:
    assert not names(
        """
        import tensorflow as tf

        def helper(x):
            print(x)

        def main():
            helper(1)
        """
    )


# --------------------------------------------------------------------------------------
# Escape hatches
# --------------------------------------------------------------------------------------


def test_py_function_bodies_are_not_traced() -> None:
    assert names(
        """
        import functools
        import tensorflow as tf

        def only_py(x): return x
        def both(x): return x
        def body(x):
            only_py(x)
            both(x)
            return x
        def np_body(x): return x
        def v1_body(x): return x
        def partial_body(x, k): return x
        def in_lambda(x): return x

        @tf.function
        def step(x):
            tf.py_function(body, [x], tf.float32)
            tf.numpy_function(np_body, [x], tf.float32)
            tf.compat.v1.py_func(v1_body, [x], tf.float32)
            tf.py_function(functools.partial(partial_body, k=1), [x], tf.float32)
            tf.py_function(lambda v: in_lambda(v), [x], tf.float32)
            tf.py_function(func=lambda v: v, inp=[x], Tout=tf.float32)
            tf.numpy_function(functools.partial(lambda v, k: v, k=1), [x], tf.float32)
            both(x)
            return x
        """
    ) == {"step()", "both()"}


def test_a_lambda_named_only_for_an_escape_hatch_is_not_traced() -> None:
    # `seg = lambda y: ...; tf.py_function(func=seg, ...)`: the lambda is the eager body, as
    # one written in the call would be; a named lambda the function also calls is traced.
    assert names(
        """
        import tensorflow as tf

        def segments(y, scale): return y
        def kept(y): return y
        def called(y): return y

        def load(x):
            seg = lambda y: segments(y, scale=1.0)
            s = tf.py_function(func=seg, inp=(x,), Tout=tf.float32)
            both = lambda y: called(y)
            t = tf.numpy_function(both, [x], tf.float32)
            kept_fn = lambda y: kept(y)
            return x, s, t, both(x), kept_fn(x)

        ds = tf.data.Dataset.range(3).map(load)
        """
    ) == {"load()", "lambda (line 10)", "called()", "lambda (line 12)", "kept()"}


def test_py_function_inside_dataset_callback() -> None:
    assert traced(
        """
        import tensorflow as tf

        def decode_with_pil(x):
            return x

        def load(x):
            return tf.py_function(decode_with_pil, [x], tf.uint8)

        ds = tf.data.Dataset.range(3).map(load)
        """
    ) == {"load()": ("Dataset.map callback", ("load()",))}


def test_a_function_handed_on_to_an_escape_hatch_is_not_traced() -> None:
    # A helper whose parameter only reaches tf.numpy_function/tf.py_function (directly or
    # through a nested function given to one) runs what it is passed eagerly.
    assert names(
        """
        import tensorflow as tf

        def decode(x): return x
        def parse(x): return x
        def applied(x): return x

        def run_eagerly(func, inp):
            return tf.numpy_function(func, inp, tf.float32)

        def wrap(fn, x):
            def eager(v):
                return fn(v)
            return tf.py_function(eager, [x], tf.float32)

        def apply(fn, x):
            return fn(x)

        @tf.function
        def step(x):
            a = run_eagerly(decode, [x])
            b = wrap(fn=parse, x=x)
            return apply(applied, x) + a + b
        """
    ) == {"step()", "run_eagerly()", "wrap()", "apply()", "applied()"}


def test_py_function_used_as_decorator() -> None:
    assert names(
        """
        import tensorflow as tf

        @tf.numpy_function(Tout=tf.float32)
        def eager_body(x):
            return x

        @tf.function
        def step(x):
            return eager_body(x)
        """
    ) == {"step()"}


# --------------------------------------------------------------------------------------
# Messages name the chain
# --------------------------------------------------------------------------------------


def test_where_names_the_chain() -> None:
    found = infos(
        """
        import tensorflow as tf

        def augment(x):
            return x

        class Net(tf.keras.Model):
            def train_step(self, data):
                return augment(data)
        """
    )
    assert found["train_step()"].where == "train_step()"
    assert found["augment()"].where == "augment() (traced via train_step() -> augment())"


def test_finding_message_contains_chain() -> None:
    source = textwrap.dedent(
        """
        import tensorflow as tf

        def augment(x):
            print("augmenting")
            return x

        class Net(tf.keras.Model):
            def train_step(self, data):
                return augment(data)
        """
    ).lstrip("\n")
    findings = [f for f in lint_source(source, "m.py") if f.code == "TFG101"]
    assert [f.line for f in findings] == [4]
    assert "traced via train_step() -> augment()" in findings[0].message


def test_finding_message_for_dataset_callee_chain() -> None:
    source = textwrap.dedent(
        """
        import random
        import tensorflow as tf

        def jitter(x):
            return x + random.random()

        def augment(x):
            return jitter(x)

        ds = tf.data.Dataset.range(3).map(augment)
        """
    ).lstrip("\n")
    findings = [f for f in lint_source(source, "m.py") if f.code == "TFG103"]
    assert [f.line for f in findings] == [5]
    assert "traced via augment() -> jitter()" in findings[0].message


def test_dataset_built_by_project_helper_keeps_dataset_name_evidence() -> None:
    # A call into the project's own code says nothing against tf.data: the name decides.
    assert names(
        """
        import tensorflow as tf
        from .data import build_dataset

        def augment(x):
            return x

        train_ds = build_dataset("train")
        train_ds = train_ds.map(augment)
        """
    ) == {"augment()"}


def test_pandas_value_with_dataset_name_is_not_tf_data() -> None:
    assert not names(
        """
        import pandas as pd
        import tensorflow as tf

        def label(x):
            return x

        def clean(df: pd.DataFrame, dataset: pd.Series):
            return dataset.map(label)

        dataset = pd.read_csv("train.csv")
        dataset = dataset.map(label)
        """
    )


def test_long_dataset_method_chain() -> None:
    assert names(
        """
        import tensorflow as tf

        def last(x):
            return x

        ds = (
            tf.data.Dataset.range(100)
            .shuffle(10)
            .repeat()
            .batch(4)
            .unbatch()
            .skip(1)
            .take(50)
            .prefetch(2)
            .cache()
            .map(last)
        )
        """
    ) == {"last()"}


def test_callables_in_conditional_expressions() -> None:
    assert traced(
        """
        import tensorflow as tf

        def weighted_bce(y_true, y_pred):
            return y_pred

        def fallback(x):
            return x

        def identity(x):
            return x

        def build(model, focal, custom):
            model.compile(
                loss=tf.keras.losses.Huber() if focal else weighted_bce,
                metrics=[custom or fallback],
            )
            return tf.data.Dataset.range(3).map(identity if custom else fallback)
        """
    ) == {
        "weighted_bce()": ("Keras loss passed to compile()", ("weighted_bce()",)),
        "fallback()": ("Keras metrics passed to compile()", ("fallback()",)),
        "identity()": ("Dataset.map callback", ("identity()",)),
    }
