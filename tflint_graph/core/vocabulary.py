"""The TensorFlow/Keras vocabulary, in one place: one spelling for every name, and the
names that make code traced (plain strings: no parsing needed, so that the prefilter, the
run's facts and the cache never import libcst)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# Prefix rewrites applied in order; the first match wins.  Keras is reachable as `keras`,
# `tf_keras`, `tensorflow.keras` and several private paths, and the compat namespaces of
# TensorFlow expose the same symbols as the top level for everything rules care about.
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("tensorflow.compat.v2.keras.", "keras."),
    ("tensorflow.compat.v1.keras.", "keras."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.", "keras."),
    ("keras.api._v2.keras.", "keras."),
    ("keras.api.", "keras."),
    ("keras.src.", "keras."),
    ("tensorflow.python.util.nest.", "tensorflow.nest."),
    ("tensorflow.python.eager.def_function.", "tensorflow."),
    ("tensorflow.python.eager.polymorphic_function.polymorphic_function.", "tensorflow."),
)
_EXACT: Mapping[str, str] = {
    # Private spellings of public APIs whose return kind rules need (``model.tf_returns``).
    "tensorflow.python.ops.control_flow_ops.while_loop": "tensorflow.while_loop",
    "tensorflow.python.ops.while_loop.while_loop": "tensorflow.while_loop",
    "tensorflow.python.ops.control_flow_ops.cond": "tensorflow.cond",
    "tensorflow.python.ops.cond.cond": "tensorflow.cond",
    "tensorflow.compat.v2": "tensorflow",
    "tensorflow.compat.v1": "tensorflow",
    "tensorflow.keras": "keras",
    "tf_keras": "keras",
    "keras.models.Model": "keras.Model",
    "keras.models.Sequential": "keras.Sequential",
    "keras.engine.training.Model": "keras.Model",
    "keras.engine.sequential.Sequential": "keras.Sequential",
    "keras.engine.functional.Functional": "keras.Model",
    "keras.Layer": "keras.layers.Layer",
    "keras.engine.base_layer.Layer": "keras.layers.Layer",
    "keras.Loss": "keras.losses.Loss",
    "keras.Metric": "keras.metrics.Metric",
}


def canonical(name: str) -> str:
    """Map one fully qualified name onto the spelling rules match against."""
    # Private paths nest (``tf_keras.src.engine.training.Model`` needs two rewrites), so
    # rewrite until nothing changes; a few rounds always suffice.
    for _ in range(4):
        before = name
        for old, new in _PREFIXES:
            if name.startswith(old):
                name = new + name[len(old) :]
                break
        name = _EXACT.get(name, name)
        if name == before:
            break
    return name


def keras_kinds_of(names: Iterable[str]) -> frozenset[str]:
    """Which Keras base classes (``model``, ``layer``, ``loss``, ``metric``) the canonical
    ``names`` of a class's base are."""
    kinds: set[str] = set()
    for name in names:
        if name in ("keras.Model", "keras.Sequential") or name.startswith("keras.models."):
            kinds |= {"model", "layer"}
        elif name.startswith("keras.layers."):
            kinds.add("layer")
        elif name.startswith("keras.losses."):
            kinds.add("loss")
        elif name in _PY_METRICS:
            kinds |= {"metric", PY_METRIC_MARK}
        elif name.startswith("keras.metrics."):
            kinds.add("metric")
    return frozenset(kinds)


# tf_keras's `PyMetric` (`keras.metrics.experimental.PyMetric`; `keras.metrics.PyMetric`
# inside tf_keras itself): its `__new__` rebinds `update_state` and `result` on each
# instance to `tf.py_function` wrappers, so a subclass's methods run eagerly.
_PY_METRICS = frozenset({"keras.metrics.experimental.PyMetric", "keras.metrics.PyMetric"})
PY_METRIC_MARK = "py-metric"


# -- What makes code traced, and what TensorFlow calls it with (SPEC §1) ---------------
# Identifiers without which a module has no traced code of its own (with tf.data's callbacks
# below and Keras base classes): tf.function in any spelling (``tf.function``,
# ``def_function.function``, ``from tensorflow import function``), Keras compile(loss=...)
# and Lambda, vectorized_map.
TRACE_WORDS = frozenset({"function", "compile", "Lambda", "vectorized_map"})
# Tests of whether code is being traced: a module naming them may define a helper whose value
# other modules' guards need (``model.eager``), so it is analysed, not only summarised.
GUARD_WORDS = frozenset({"executing_eagerly", "inside_function"})
# tf.data callbacks (SPEC §1): methods of a Dataset (counted as attributes only: ``ds.map(f)``;
# the builtin ``map(f, xs)`` is no Dataset), and functions of tf.data.experimental (counted
# as attributes or imported names).  The prefilter counts them too.
DATASET_CALLBACK_METHODS = frozenset(
    {
        "map",
        "filter",
        "flat_map",
        "interleave",
        "parallel_interleave",
        "reduce",
        "scan",
        "group_by_window",
        "group_by_reducer",
        "bucket_by_sequence_length",
        "rejection_resample",
        "take_while",
        "map_with_legacy_function",
        "filter_with_legacy_function",
    }
)
DATASET_EXPERIMENTAL = frozenset(
    {
        "map_and_batch",
        "scan",
        "group_by_window",
        "group_by_reducer",
        "Reducer",
        "take_while",
        "parallel_interleave",
        "bucket_by_sequence_length",
        "rejection_resample",
    }
)
TF_FUNCTION = ("tensorflow.function",)
ESCAPE_HATCHES = (
    "tensorflow.py_function",
    "tensorflow.numpy_function",
    "tensorflow.py_func",
    "tensorflow.compat.v1.py_func",
    "tensorflow.experimental.numpy_function",
)
DO_NOT_CONVERT = ("tensorflow.autograph.experimental.do_not_convert",)
PARTIAL = ("functools.partial",)
# Calls that hand a callable to another process or thread, or to run later: it does not run
# in the trace that makes the call (`ctx.Process(target=check)`, `pool.submit(fn, x)`).
ELSEWHERE_MODULES = ("multiprocessing.", "threading.", "concurrent.futures.", "atexit.", "signal.")
ELSEWHERE_CALLS = frozenset(
    {"Process", "Thread", "Timer", "submit", "apply_async", "map_async", "run_in_executor"}
)
# Iterables whose items are Python ints, and wrappers (progress bars, `reversed`) that yield
# the items of their first argument unchanged: `for i in trange(n)`, `tqdm(range(n))`.
COUNTING_ITERABLES = ("itertools.count", "tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange")
PASS_THROUGH_ITERABLES = (
    "builtins.reversed",
    "tqdm.tqdm",
    "tqdm.auto.tqdm",
    "tqdm.notebook.tqdm",
)

# Graph control flow whose callables run symbolically when called from traced code.
CONTROL_FLOW = {
    "tensorflow.cond": "tf.cond",
    "tensorflow.while_loop": "tf.while_loop",
    "tensorflow.switch_case": "tf.switch_case",
    "tensorflow.case": "tf.case",
    "tensorflow.map_fn": "tf.map_fn",
    "tensorflow.scan": "tf.scan",
    "tensorflow.foldl": "tf.foldl",
    "tensorflow.foldr": "tf.foldr",
    "tensorflow.vectorized_map": "tf.vectorized_map",
    "tensorflow.recompute_grad": "tf.recompute_grad",
    "keras.ops.cond": "keras.ops.cond",
    "keras.ops.while_loop": "keras.ops.while_loop",
    "keras.ops.fori_loop": "keras.ops.fori_loop",
    "keras.ops.scan": "keras.ops.scan",
    "keras.ops.map": "keras.ops.map",
    "keras.ops.switch": "keras.ops.switch",
    "keras.ops.vectorized_map": "keras.ops.vectorized_map",
}
# These trace their callable even when called eagerly.
ALWAYS_TRACING = {
    "tensorflow.vectorized_map": "tf.vectorized_map callable",
    "keras.layers.Lambda": "Keras Lambda layer",
}
STRATEGY_RUN = ("run", "experimental_run_v2")

# Methods that return another Dataset: `ds.shuffle(10).batch(4).map(f)` is still a dataset.
DATASET_METHODS = DATASET_CALLBACK_METHODS | {
    "batch",
    "padded_batch",
    "ragged_batch",
    "sparse_batch",
    "unbatch",
    "shuffle",
    "repeat",
    "prefetch",
    "cache",
    "take",
    "skip",
    "shard",
    "window",
    "concatenate",
    "zip",
    "enumerate",
    "apply",
    "with_options",
    "ignore_errors",
    "assert_cardinality",
    "unique",
    "rebatch",
    "snapshot",
    "from_tensor_slices",
    "from_tensors",
    "from_generator",
    "range",
    "list_files",
    "load",
    "sample_from_datasets",
    "choose_from_datasets",
    "random",
    "counter",
}
DATASET_FACTORIES = (
    "tensorflow.data.",
    "tensorflow_datasets.load",
    "keras.utils.image_dataset_from_directory",
    "keras.utils.text_dataset_from_directory",
    "keras.utils.audio_dataset_from_directory",
    "keras.utils.timeseries_dataset_from_array",
    "keras.preprocessing.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory",
    "keras.preprocessing.timeseries_dataset_from_array",
)
# The keyword arguments tf.data's callback methods accept.  A call with any other keyword
# (`dataset.map(fn, batched=True)` of Hugging Face `datasets`) is not tf.data.
DATASET_KWARGS: dict[str, frozenset[str]] = {
    "map": frozenset(
        {
            "map_func",
            "num_parallel_calls",
            "deterministic",
            "synchronous",
            "use_unbounded_threadpool",
            "name",
        }
    ),
    "filter": frozenset({"predicate", "name"}),
    "flat_map": frozenset({"map_func", "name"}),
    "interleave": frozenset(
        {"map_func", "cycle_length", "block_length", "num_parallel_calls", "deterministic", "name"}
    ),
    "parallel_interleave": frozenset(
        {
            "map_func",
            "cycle_length",
            "block_length",
            "sloppy",
            "buffer_output_elements",
            "prefetch_input_elements",
        }
    ),
    "reduce": frozenset({"initial_state", "reduce_func", "name"}),
    "scan": frozenset({"initial_state", "scan_func", "name"}),
    "group_by_window": frozenset(
        {"key_func", "reduce_func", "window_size", "window_size_func", "name"}
    ),
    "group_by_reducer": frozenset({"key_func", "reducer"}),
    "bucket_by_sequence_length": frozenset(
        {
            "element_length_func",
            "bucket_boundaries",
            "bucket_batch_sizes",
            "padded_shapes",
            "padding_values",
            "pad_to_bucket_boundary",
            "no_padding",
            "drop_remainder",
            "name",
        }
    ),
    "rejection_resample": frozenset({"class_func", "target_dist", "initial_dist", "seed", "name"}),
    "take_while": frozenset({"predicate", "name"}),
    "map_with_legacy_function": frozenset({"map_func", "num_parallel_calls", "deterministic"}),
    "filter_with_legacy_function": frozenset({"predicate"}),
}
# Well-known libraries whose objects have an eager `.map`/`.filter` of their own: a value
# built by one of these is not a tf.data dataset, whatever its name.  (A call into the
# project's own modules stays unknown: `ds = build_dataset()` may well be tf.data.)
NON_DATASET_LIBRARIES = (
    "builtins.",
    "collections.",
    "concurrent.",
    "dask.",
    "datasets.",
    "itertools.",
    "jax.",
    "multiprocessing.",
    "numpy.",
    "pandas.",
    "polars.",
    "pyspark.",
    "ray.",
    "sklearn.",
    "torch.",
    "torchdata.",
    "torchvision.",
)
# Names that hold an optimizer (a parameter, an attribute): `optimizer`, `opt`, `gen_opt`.
OPTIMIZER_NAME = re.compile(r"^(optimizer|opt|optim|\w+_optimizer|\w+_opt)$")

# Classes that hold a project's settings (`DetectorConfig`, `TrainSettings`, `HParams`): an
# instance made once at import (`CONF = Config()`) is read as configuration, not state.
SETTINGS_CLASS = re.compile(r"(Config|Configuration|Settings|HParams|Hparams)$")
DATASET_NAME = re.compile(r"(?:^|_)(?:ds|dataset|dset|datasets|pipeline)(?:$|_)", re.IGNORECASE)
DATASET_ONLY_KWARGS = frozenset({"num_parallel_calls", "deterministic", "cycle_length"})

# Spellings only Keras 2 has: its bases are Keras 2 whatever `keras-version` says (SPEC §1).
KERAS2_ONLY = (
    "tf_keras",
    "tensorflow.python.keras.",
    "keras.engine.",
    "keras.src.engine.",
    "keras.api._v2.",
)


def keras2_only(name: str) -> bool:
    """``name`` (fully qualified, as imported) is a spelling only Keras 2 has, also through
    TensorFlow's compat namespaces (``tensorflow.compat.v1.python.keras.losses.Loss``)."""
    for compat in ("tensorflow.compat.v1.", "tensorflow.compat.v2."):
        if name.startswith(compat):
            name = "tensorflow." + name[len(compat) :]
            break
    return name.startswith(KERAS2_ONLY)


# Shipped with a class's Keras kinds to other modules: its bases are Keras 2 only.
KERAS2_MARK = "keras2"
# `os.environ["TF_USE_LEGACY_KERAS"] = "1"` makes `tf.keras` Keras 2 (tf_keras).
LEGACY_SWITCH = "TF_USE_LEGACY_KERAS"
# Which Keras roots AutoGraph converts (SPEC §1, verified with TF 2.21, Keras 3.15 and
# tf_keras 2.21): Keras 3 converts none; tf_keras converts `call`, `Loss.call`,
# `Metric.update_state` and compiled losses and metrics, but calls the steps from its own
# library code, which AutoGraph skips.  A `Lambda` layer's function is converted by neither.
KERAS_STEPS = frozenset({"train_step", "test_step", "predict_step"})
# Symbolic inputs of a functional Keras model (never a concrete value).
KERAS_INPUTS = ("keras.Input", "keras.layers.Input", "keras.layers.InputLayer")
KERAS_METHODS = {
    "model": ("train_step", "test_step", "predict_step", "call"),
    "layer": ("call",),
    "loss": ("call",),
    "metric": ("update_state",),
}
KERAS_LABELS = {
    "train_step": "Keras train_step",
    "test_step": "Keras test_step",
    "predict_step": "Keras predict_step",
}


# `tf.config.run_functions_eagerly(...)`: every tf.function of the process runs as Python.
EAGER_SWITCHES = (
    "tensorflow.config.run_functions_eagerly",
    "tensorflow.config.experimental_run_functions_eagerly",
)
# Compiling a model and what runs its steps: Python when compiled with `run_eagerly=True`.
KERAS_DRIVERS = frozenset(
    {
        "compile",
        "fit",
        "fit_generator",
        "evaluate",
        "evaluate_generator",
        "predict",
        "predict_generator",
        "predict_on_batch",
        "train_on_batch",
        "test_on_batch",
    }
)
# What would make Keras itself trace an object's methods: fitting, evaluating, predicting,
# compiling, building (tf_keras traces `call` for it), saving or exporting, the functional API,
# a tf.function made of it.  (Traced code that calls a layer, a tf.data callback, reaches its
# `call` as a callee all the same.)
TRACING_ENTRIES = KERAS_DRIVERS | frozenset(
    {
        "make_train_function",
        "make_test_function",
        "make_predict_function",
        "build",
        "save",
        "export",
        "add_endpoint",
        "Input",
        "function",
        "get_concrete_function",
        "to_graph",
    }
)
# Calls that trace the callables they are given: they trace a Keras object only when one of
# those callables uses it.
CALLBACK_ENTRIES = frozenset(
    {
        "map",
        "filter",
        "flat_map",
        "interleave",
        "reduce",
        "scan",
        "while_loop",
        "cond",
        "switch_case",
        "map_fn",
        "vectorized_map",
        "foldl",
        "foldr",
        "run",
    }
)
