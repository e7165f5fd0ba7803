"""Trace-time diagnostics (SPEC §2, TFG101 and TFG107): prints and log calls meant to run once
per trace are not reported; a tensor value, a per-call value or a literal-only message is.
Also TFG101's fix of formatted prints and its safety, checked against TensorFlow's output."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests.cli_support import invoke, write_tree
from tests.helpers import dedent, expected, found
from tflint_graph import lint_source
from tflint_graph.output.fix import fix_source

LAYER = dedent(
    """
    import logging
    import logging as pylog
    import warnings

    import tensorflow as tf
    from absl import logging as absl_logging

    logger = logging.getLogger(__name__)
    LOG = pylog.getLogger("block")
    CHANNELS = 3


    class Block(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units
            self.calls = 0
            self.logger = logging.getLogger("block")

        def call(self, x, training=False):
            y = tf.nn.relu(x)
            LINE
            self.calls += 1
            return y
    """
)
LINE = LAYER.splitlines().index("        LINE") + 1

STEP = dedent(
    """
    import logging

    import tensorflow as tf


    @tf.function
    def step(x, n, scale=2.0):
        for i in range(3):
            LINE
        return x * scale
    """
)
STEP_LINE = STEP.splitlines().index("        LINE") + 1


def codes_at(template: str, line_no: int, line: str) -> set[str]:
    source = template.replace("LINE", line)
    return {
        f.code
        for f in lint_source(source, "m.py")
        if f.line == line_no and f.code in ("TFG101", "TFG107")
    }


# --- not reported: no tensor value, and static metadata or a message about tracing -------

DIAGNOSTICS = [
    'print("tracing", x.shape)',
    'print("retracing for", x.dtype, x.shape.rank)',
    "print(x.shape, x.dtype, x.name)",
    'print("rank", x.shape.rank, "last", x.shape[-1], "dims", len(x.shape))',
    'print("dims", x.shape.as_list(), x.get_shape())',
    'print(f"building for {x.shape}")',
    'print(f"{self.units} units for {x.shape[1:]}")',
    'print("building for {}".format(x.shape))',
    'print("building for %s" % (x.shape,))',
    'print("shape of y", y.shape)',
    'print("training", training, "shape", x.shape)',
    'print("tracing")',
    'print("Traced Block.call")',
    # The keys of a Python dict of tensors are Python strings.
    'print("tracing with keys", sorted({"a": y, "b": x}))',
    # TensorFlow 1's words for tracing.
    'print("TRUE_FN: I\'m evaluated at graph building time")',
    'print("****** Building graph")',
    'logging.info("constructing the graph for %s", x.shape)',
    # The type of an argument is fixed for each trace (a new object retraces).
    'print("traced for", x.shape, "with", type(self).__name__)',
    'print("building", x.__class__.__name__, x.shape)',
    'logging.info("built with %d units for %s", self.units, x.shape)',
    'logging.warning("input shape %s", x.shape)',
    'absl_logging.info("tracing call for %s", x.dtype)',
    'logger.debug("shape %s", x.shape)',
    'LOG.info("retraced with %s channels", CHANNELS)',
    'self.logger.info("shape %s", x.shape)',
    'tf.get_logger().warning("input shape %s", x.shape)',
    'tf.get_logger().info(f"input shape {x.shape}")',
    'pylog.log(pylog.INFO, "shape %s", x.shape)',
    'warnings.warn(f"casting {x.dtype} inputs", UserWarning, stacklevel=2)',
    'warnings.warn("traced with a ragged input")',
    # Python shows a fixed warning once per place and text, traced or not.
    'warnings.warn("slow path")',
    'warnings.warn("deprecated", DeprecationWarning)',
]


@pytest.mark.parametrize("line", DIAGNOSTICS)
def test_trace_time_diagnostic_is_not_reported(line: str) -> None:
    assert codes_at(LAYER, LINE, line) == set()


# --- reported: a tensor value, a per-call value, a literal-only message -------------------

REPORTED = [
    ('print("step done")', "TFG101"),
    ('print("tracing", x)', "TFG101"),
    ('print("graph building done", y)', "TFG101"),  # a tensor value all the same
    ('print("built the model")', "TFG101"),  # no graph named: a per-call claim
    ('print("shape", tf.shape(x))', "TFG101"),
    ('print(f"loss {y}")', "TFG101"),
    ('print(f"shape {x.shape}, sum {tf.reduce_sum(y)}")', "TFG101"),
    ('print("tracing {}".format(y))', "TFG101"),
    ('print("tracing %s" % y)', "TFG101"),
    ('print("tracing %s %s" % (x.shape, y))', "TFG101"),
    ('print("call", self.calls, x.shape)', "TFG101"),  # a counter: per call
    ('print("with", type(self).__name__, y)', "TFG101"),  # a tensor beside the type
    ('print("first row", x[0].shape, x[0])', "TFG101"),
    ('logging.info("epoch done")', "TFG107"),
    ('logging.info("loss %s", y)', "TFG107"),
    ('absl_logging.info("absl %s", y)', "TFG107"),
    ('logger.info("done")', "TFG107"),
    ('LOG.info(f"mean {tf.reduce_mean(y)}")', "TFG107"),
    ('self.logger.info("x=%s", x)', "TFG107"),
    ('tf.get_logger().info("dynamic shape %s", tf.shape(x))', "TFG107"),
    ('warnings.warn(f"value {y}")', "TFG107"),
]


@pytest.mark.parametrize(("line", "code"), REPORTED)
def test_per_call_message_is_reported(line: str, code: str) -> None:
    assert codes_at(LAYER, LINE, line) == {code}


@pytest.mark.parametrize(
    "line",
    [
        'print("iteration", i, x.shape)',  # a loop counter
        'print("tracing with", n)',  # a parameter without a default: per call
        'logging.info("iteration %d of %s", i, x.shape)',
        'print(f"step {i}: {x.shape}")',
    ],
)
def test_per_call_python_value_is_reported(line: str) -> None:
    assert codes_at(STEP, STEP_LINE, line)


def test_python_setting_beside_static_metadata_is_not_reported() -> None:
    assert codes_at(STEP, STEP_LINE, 'print("scale", scale, "for", x.shape)') == set()


@pytest.mark.parametrize(
    "line",
    [
        'logging.info("using %d units", self.units)',
        'logger.info("units: %d, channels: %d", self.units, CHANNELS)',
        'logging.info("rate %.2f", 1.0 - len(str(self.units)) / 10)',
    ],
)
def test_log_message_showing_only_python_settings_is_not_reported(line: str) -> None:
    # The graph was built for these settings: the message is the same on every call.
    assert codes_at(LAYER, LINE, line) == set()


def test_settings_of_each_sublayer_in_a_loop_over_them_are_not_reported() -> None:
    source = dedent(
        """
        import logging
        import tensorflow as tf

        class Net(tf.keras.Model):
            def __init__(self, rates):
                super().__init__()
                self.blocks = [tf.keras.layers.Dense(4) for _ in rates]
                self.rate = rates[0]

            def call(self, x):
                for idx, block in enumerate(self.blocks):
                    rate = self.rate
                    rate = 1.0 - rate * float(idx) / len(self.blocks)
                    logging.info("block %d keeps %s", idx, rate)
                    x = block(x)
                for i in range(2):
                    logging.info("pass %d", i)  # TFG107: a counter of iterations
                return x
        """
    )
    assert [(f.line, f.code) for f in lint_source(source, "m.py")] == [(17, "TFG107")]


HELPER = dedent(
    """
    import logging
    import tensorflow as tf

    class Net(tf.keras.layers.Layer):
        def __init__(self, anchor):
            super().__init__()
            self.anchor = anchor
            self.calls = 0

        def call(self, x):
            y = self._near(x, ARG)
            return y

        def _near(self, x, anchor):
            logging.info("anchor %s", anchor)
            return x - anchor
    """
)


@pytest.mark.parametrize(
    ("arg", "reported"),
    [
        ("self.anchor", False),  # a setting of the layer
        ("anchor=3", False),
        ("x", True),  # a tensor
        ("self.calls", True),  # counted up below: per call
    ],
)
def test_a_helper_parameter_holds_what_the_traced_call_passes(arg: str, reported: bool) -> None:
    # (A print of settings alone stays reported: TFG101 wants static metadata or "tracing".)
    source = HELPER.replace("ARG", arg)
    if arg == "self.calls":
        source = source.replace("return y\n", "self.calls += 1\n        return y\n")
    codes = {f.code for f in lint_source(source, "m.py") if f.code == "TFG107"}
    assert bool(codes) is reported


def test_name_bound_to_static_metadata_is_static() -> None:
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def step(x):
            shape = x.shape
            batch = tf.shape(x)[0]
            print("tracing for", shape)
            print("batch", batch)  # TFG101
            return x
        """
    )
    assert {(f.line, f.code) for f in lint_source(source, "m.py")} == {(8, "TFG101")}


def test_names_unpacked_from_a_static_shape_are_static() -> None:
    source = dedent(
        """
        import logging

        import numpy as np
        import tensorflow as tf

        @tf.function
        def to_2d(x, height=None):
            _, length, channels = x.shape.as_list()
            side = int(np.sqrt(length))
            logging.info("reshape %s -> %s", [length, channels], [side, side, channels])
            first, second = tf.unstack(x)
            noise = np.random.uniform(size=[2])
            logging.info("first %s", first)  # TFG107
            logging.info("noise %s", noise)  # TFG107
            return tf.reshape(x, [-1, side, side, channels])
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code == "TFG107"}
    assert got == expected(source)


def test_names_of_variables_and_narrowed_python_numbers_are_static() -> None:
    source = dedent(
        """
        import numbers

        from absl import logging
        import tensorflow as tf

        @tf.function
        def step(grads_and_vars, x, rate):
            empty = [v for g, v in grads_and_vars if g is None]
            if empty:
                logging.warning("no gradient for %s", [v.name for v in empty])
            logging.warning("sums %s", [tf.reduce_sum(g) for g, _ in grads_and_vars])  # TFG107
            if isinstance(rate, numbers.Real) and rate > 0.5:
                logging.warning("large dropout rate: %g", rate)
            logging.warning("rate %s", rate)  # TFG107
            return x
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code == "TFG107"}
    assert got == expected(source)


def test_a_message_in_a_handler_of_python_errors_runs_while_tracing() -> None:
    source = dedent(
        """
        import logging

        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def call(self, x, training=None):
                try:
                    y = self.activation(x, training=training)
                except TypeError as e:
                    print("the activation takes no training flag", e)
                    logging.warning("falling back: %s", e)
                    y = self.activation(x)
                    print("fallback output", y)  # TFG101
                try:
                    z = tf.debugging.check_numerics(y, "nan")
                except tf.errors.InvalidArgumentError:
                    print("nan found")  # TFG101
                    z = y
                return z
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code in ("TFG101", "TFG107")}
    assert got == expected(source)


def test_a_message_under_a_guard_that_holds_only_while_tracing_is_meant_per_trace() -> None:
    # The author asked for it to run at trace time: the symbolic tensor shown is its spec.
    source = dedent(
        """
        import logging

        import tensorflow as tf

        def in_graph():
            return not tf.executing_eagerly()

        @tf.function
        def step(x, conf):
            if tf.inside_function():
                logging.info(f"tracing step: x={x}")
            if not tf.executing_eagerly():
                print("traced with", x)
            if in_graph():
                print("graph input", x)
            if not conf.train_eagerly:
                logging.info("tf.function tracing step: x=%s", x)
            if conf.train_eagerly:
                print("eager input", x)  # TFG101
            if not conf.training:
                print("input", x)  # TFG101
            return x * 2

        class Model(tf.keras.Model):
            def train_step(self, data):
                if not self.run_eagerly:
                    logging.info(f"tracing train_step: data={data}")
                else:
                    logging.info(f"eager train_step: data={data}")  # eager only
                return {}
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code in ("TFG101", "TFG107")}
    assert got == expected(source)


def test_a_message_right_before_a_raise_goes_out_once_whatever_runs_it() -> None:
    source = dedent(
        """
        import logging

        import tensorflow as tf

        logger = logging.getLogger(__name__)

        @tf.function
        def merge(a, b, names):
            if len(names) != 2:
                logger.error("expected two inputs, got %s", a)
                print("inputs:", a, b)
                raise ValueError("bad inputs")
            if len(names) > 3:
                if names[0] == "x":
                    message = f"too many inputs for x: {a}"
                    logger.error(message)
                else:
                    logger.error("too many inputs: %s", b)
                raise AssertionError("too many")
            if len(names) > 4:
                logger.error("many inputs: %s", a)  # TFG107
                names = names[:4]
            logger.info("merging %s", a)  # TFG107
            return a + b
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code in ("TFG101", "TFG107")}
    assert got == expected(source)


def test_a_body_that_always_raises_prints_on_every_call_and_runs_nothing_after() -> None:
    # Tracing fails at the raise, so nothing is cached: every call traces, prints and fails,
    # as eager calls would; what follows the raise never runs at all.
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf

        def load(path):
            print("reading", path)
            name = path
            raise RuntimeError("cannot be traced")
            data = np.load(name)
            print("missing", path)
            return data

        def parse(path):
            print("parsing", path)  # TFG101
            if path is None:
                return path
            raise ValueError("bad path")

        def skip(paths):
            for p in paths:
                continue
                print("never", p)
            return paths

        ds = tf.data.Dataset.from_tensor_slices(["a"]).map(load).map(parse).map(skip)
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "data.py") if f.code.startswith("TFG")}
    assert got == expected(source)


def test_a_warning_asked_for_once_about_python_structure_is_not_reported() -> None:
    source = dedent(
        """
        from absl import logging
        import tensorflow as tf

        @tf.function
        def perturb(features, loss):
            grads = {k: None for k in features}
            invalid = {k: g for k, g in grads.items() if g is None}
            if invalid:
                logging.log_first_n(logging.WARNING, "cannot perturb %s", 1, invalid.keys())
            logging.log_first_n(logging.WARNING, "loss %s", 1, loss * 2.0)  # TFG107
            return loss
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code == "TFG107"}
    assert got == expected(source)


# --- one-time setup ----------------------------------------------------------------------


def test_message_in_one_time_setup_is_not_reported() -> None:
    source = dedent(
        """
        import logging
        import tensorflow as tf

        class Model(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.table = None

            def call(self, x):
                if self.table is None:
                    logging.info("creating the lookup table")
                    print("first call")
                    self.table = tf.lookup.StaticHashTable(
                        tf.lookup.KeyValueTensorInitializer([1], [2]), -1
                    )
                    print("table for", x)  # TFG101
                logging.info("lookup done")  # TFG107
                return self.table.lookup(x)
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code < "TFG2"}
    assert got == {(16, "TFG101"), (17, "TFG107")}


# --- TFG107: warnings under an `if` decided by static values ------------------------------

WARN = dedent(
    """
    import logging
    import warnings
    import tensorflow as tf

    logger = logging.getLogger(__name__)

    class Add(tf.keras.layers.Layer):
        def __init__(self, strict=False):
            super().__init__()
            self.strict = strict

        def call(self, a, b):
            if TEST:
                LINE
            return a + b
    """
)
WARN_LINE = WARN.splitlines().index("            LINE") + 1


@pytest.mark.parametrize(
    "test",
    [
        "a.shape[-1] != b.shape[-1]",
        "a.shape.rank != 4",
        "len(a.shape) == 3 and self.strict",
        "a.shape[0] is None",
        "not a.shape.is_fully_defined()",
        "isinstance(a, tf.RaggedTensor)",
        "a.dtype != b.dtype",
        "a.device != b.device",  # where the graph places them: fixed for each trace
        "b is not None",  # whether an argument was given: fixed for each trace
    ],
)
@pytest.mark.parametrize(
    "line",
    [
        'warnings.warn("inputs differ; broadcasting")',
        'logging.warning("copy from %s to %s", a.device, b.device)',
        'logger.warning("inputs differ")',
        'logging.warning("inputs differ")',
        'tf.get_logger().warn("inputs differ")',
    ],
)
def test_warning_under_static_condition_is_not_reported(test: str, line: str) -> None:
    source = WARN.replace("TEST", test)
    assert codes_at(source, WARN_LINE, line) == set()


@pytest.mark.parametrize(
    "test",
    [
        "tf.reduce_any(a > b)",  # decided per call
        "a.shape[-1] != tf.shape(b)[-1]",  # one side is a tensor
    ],
)
def test_warning_under_other_condition_is_reported(test: str) -> None:
    source = WARN.replace("TEST", test)
    assert codes_at(source, WARN_LINE, 'warnings.warn("inputs differ")') == {"TFG107"}


def test_fixed_message_under_a_setting_is_not_reported() -> None:
    # Shown once when the setting holds, traced or eager: it says how the trace was built.
    source = WARN.replace("TEST", "self.strict")
    assert codes_at(source, WARN_LINE, 'warnings.warn("inputs differ")') == set()
    assert codes_at(source, WARN_LINE, 'logging.warning("inputs differ")') == set()


def test_static_condition_covers_every_branch_and_level() -> None:
    source = dedent(
        """
        import logging
        import warnings
        import tensorflow as tf

        @tf.function
        def f(a, method=None):
            if a.shape.rank == 2:
                pass
            elif a.shape.rank == 3:
                warnings.warn("3-D input")
            else:
                logging.warning("input of another rank")
                logging.info("input of another rank")
            if tf.reduce_any(a < 0):
                logging.info("negative input")  # TFG107
            logging.info("step done")  # TFG107
            if method is not None:
                logging.info("custom method")
                return a
            logging.info("default method")
            return a
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


def test_a_graph_branch_is_traced_whatever_the_values() -> None:
    # tf.cond traces both branches: a fixed warning there fires at trace time for any input.
    source = dedent(
        """
        import warnings
        import tensorflow as tf

        @tf.function
        def check(audio):
            def warn():
                warnings.warn("audio too long")  # TFG107
                return audio

            return tf.cond(tf.shape(audio)[0] > 100, warn, lambda: audio)
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


def test_a_strategy_step_function_is_no_graph_branch() -> None:
    # strategy.run traces its step function like a call: a setting decides the path once.
    source = dedent(
        """
        import logging
        import tensorflow as tf

        LOSS = "focal"

        @tf.function
        def train_step(x):
            def step_fn(inputs):
                if LOSS == "focal":
                    logging.info("Using focal loss")
                    loss = tf.reduce_sum(inputs)
                else:
                    logging.info("Using mean loss")
                    loss = tf.reduce_mean(inputs)
                logging.info("step done")  # TFG107
                return loss

            def branch():
                logging.info("large input")  # TFG107
                return x

            y = tf.cond(tf.reduce_sum(x) > 1.0, branch, lambda: x)
            return tf.distribute.get_strategy().run(step_fn, args=(y,))
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


def test_a_helper_called_only_on_a_decided_path_is_decided_too() -> None:
    source = dedent(
        """
        import logging
        import tensorflow as tf

        def finetune_preprocessing(image):
            logging.info("using preprocessing for finetuning")
            return image / 255.0

        def plain_preprocessing(image):
            logging.info("preprocessing an image")  # TFG107
            return image

        def preprocess(image, augname=None):
            image = plain_preprocessing(image)
            if augname and augname.startswith("ft"):
                return finetune_preprocessing(image)
            return image

        ds = tf.data.Dataset.range(4).map(lambda i: preprocess(tf.cast(i, tf.float32), "ft1"))
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py")}
    assert got == expected(source)


def test_an_import_error_path_is_decided_when_tracing() -> None:
    source = dedent(
        """
        import logging
        import tensorflow as tf

        def augment(image):
            try:
                import augmentations
            except ImportError:
                logging.exception("augmentations are not installed")
                raise
            return augmentations.apply(image)

        ds = tf.data.Dataset.range(3).map(augment)
        """
    )
    assert {f.code for f in lint_source(source, "m.py")} == set()


# --- TFG101's fix ------------------------------------------------------------------------

FIX = dedent(
    """
    import tensorflow as tf

    @tf.function
    def step(x, n):
        LINE
        return x
    """
)
FIX_LINE = FIX.splitlines().index("    LINE")

SPLITS = [
    ('print(f"loss {x}")', 'tf.print("loss", x)'),
    ('print(f"loss={x}")', 'tf.print("loss=", x, sep="")'),
    ('print(f"loss: {x} at step {n}!")', 'tf.print("loss: ", x, " at step ", n, "!", sep="")'),
    ('print(f"{x}{n}")', 'tf.print(x, n, sep="")'),
    ('print("a", f"b {x}", sep=", ")', 'tf.print("a", ", b ", x, sep="")'),
    ('print(f"[{x}]", end="!\\n")', 'tf.print("[", x, "]", end="!\\n", sep="")'),
    ('print("loss %s" % x)', 'tf.print("loss", x)'),
    ('print("%s and %s, 100%%" % (x, n))', 'tf.print(x, " and ", n, ", 100%", sep="")'),
    ('print("loss {} step {}".format(x, n))', 'tf.print("loss", x, "step", n)'),
    ('print("loss {a} step {b}".format(a=x, b=n))', 'tf.print("loss", x, "step", n)'),
    ('print(f"  {x}  ")', 'tf.print(" ", x, " ")'),
    ('print("a" f" {x} " "b")', 'tf.print("a", x, "b")'),
    ("print(f'it\\'s {x}')", 'tf.print("it\'s", x)'),
    ('print(f"{{x}} {x}")', 'tf.print("{x}", x)'),
    ('print(f"tab\\t{x}\\n")', 'tf.print("tab\\t", x, "\\n", sep="")'),
    ('print(f"loss {x!s}", n, sep="|")', 'tf.print("loss ", x, "|", n, sep="")'),
    ("print('loss', f'{x}')", "tf.print('loss', x)"),
]


def fixed_line(line: str) -> str:
    source = FIX.replace("LINE", line)
    text, _ = fix_source(source, lint_source(source, "m.py"))
    return text.splitlines()[FIX_LINE].strip()


@pytest.mark.parametrize(("line", "want"), SPLITS)
def test_formatted_print_becomes_separate_tf_print_arguments(line: str, want: str) -> None:
    assert fixed_line(line) == want


@pytest.mark.parametrize(
    "line",
    [
        'print(f"{x:.3f}")',  # a format spec: tf.print cannot format
        'print(f"{x!r}")',
        'print(f"{x=}")',
        'print("%d steps" % n)',
        'print("%5s" % x)',
        'print("{0.dtype} {0}".format(x))',
        'print("{1} {0}".format(x, n))',  # evaluated in another order
        'print("{}".format(x, n))',  # n would no longer be evaluated
        'print(f"loss {x}", sep=s)',
        'print(f"loss {x}", *rest)',
        'print(rf"\\{x}")',
    ],
)
def test_format_without_a_faithful_tf_print_spelling_is_not_fixed(line: str) -> None:
    source = FIX.replace("LINE", line).replace("def step(x, n):", "def step(x, n, s, rest):")
    assert "TFG101" in {f.code for f in lint_source(source, "m.py")}
    text, count = fix_source(source, lint_source(source, "m.py"))
    assert (text, count) == (source, 0)


@pytest.mark.parametrize(
    "line",
    [
        'print("x", x, x.shape)',
        'print(f"{x.shape}: {x}")',
        'print("x %s of %s" % (x, x.dtype))',
        'print(x, "rank", len(x.shape))',
    ],
)
def test_static_metadata_next_to_a_tensor_makes_the_fix_unsafe(line: str) -> None:
    source = FIX.replace("LINE", line)
    findings = [f for f in lint_source(source, "m.py") if f.code == "TFG101"]
    assert len(findings) == 1
    assert findings[0].fix is not None and "is fixed while tracing" in findings[0].fix
    assert findings[0].fix_safety == "unsafe"
    assert fix_source(source, findings) == (source, 0)  # proposed, applied only when asked
    text, count = fix_source(source, findings, unsafe=True)
    assert count == 1 and "tf.print(" in text.splitlines()[FIX_LINE]


def test_plain_print_stays_safe() -> None:
    source = FIX.replace("LINE", 'print("x", x, x.name)')
    assert [f.fix_safety for f in lint_source(source, "m.py")] == ["safe"]
    assert fixed_line('print("x", x, x.name)') == 'tf.print("x", x, x.name)'


def test_cli_fix_leaves_the_unsafe_print_and_fixes_the_safe_one(tmp_path: Path) -> None:
    source = FIX.replace("LINE", 'print(f"loss {x}")\n    print("x", x, x.shape)')
    write_tree(tmp_path, {"m.py": source})
    result = invoke(["--fix", "m.py"], tmp_path)
    assert "Fixed 1 finding." in result.output
    text = (tmp_path / "m.py").read_text()
    assert '    tf.print("loss", x)\n    print("x", x, x.shape)\n' in text
    assert "m.py:6:5: TFG101" in result.output


# --- the fixed calls print what print() printed, under TensorFlow --------------------------


def test_split_prints_the_same_text_under_tensorflow(tmp_path: Path) -> None:
    tf = pytest.importorskip("tensorflow")
    target = tmp_path / "out.txt"
    for line, want in SPLITS:
        # print() of Python values whose str() is what tf.print shows for these tensors.
        expected = io.StringIO()
        with contextlib.redirect_stdout(expected):
            exec(line, {"x": 0.5, "n": 3})
        target.unlink(missing_ok=True)
        call = want[:-1] + f", output_stream='file://{target}')"
        namespace: dict = {"tf": tf}
        exec(f"def g(x, n):\n    {call}\n", namespace)
        tf.function(namespace["g"])(tf.constant(0.5), tf.constant(3))
        assert target.read_text() == expected.getvalue(), line


def test_a_fixed_warning_is_shown_once_anyway() -> None:
    # Python's filters show a warning once per place and text: the trace changes nothing.
    source = dedent(
        """
        import warnings
        import tensorflow as tf

        @tf.function
        def gelu(x, approximate=False):
            warnings.warn("gelu moved to tf.nn", DeprecationWarning)
            warnings.warn(f"gelu called on {tf.reduce_max(x)}")  # TFG107
            return tf.nn.gelu(x, approximate)
        """
    )
    assert {f for f in found(source) if f[1] == "TFG107"} == expected(source)


def test_a_condition_on_python_values_is_decided_per_trace() -> None:
    # A Python value in the test has one value per trace (a new argument value retraces);
    # a count the class keeps does not, and neither does a tensor.
    source = dedent(
        """
        import logging
        import tensorflow as tf

        class Detector(tf.keras.layers.Layer):
            def __init__(self, params):
                super().__init__()
                self.params = params
                self.calls = 0

            def call(self, x):
                limit = self.params["nms"].get("max_inputs", 0)
                if limit > 0:
                    logging.info("pruning before nms")
                else:
                    logging.info("keeping every anchor")
                self.calls += 1
                if self.calls % 100 == 0:
                    logging.info("checkpoint")  # TFG107
                return x
        """
    )
    got = {(f.line, f.code) for f in lint_source(source, "m.py") if f.code == "TFG107"}
    assert got == expected(source)


STRING_ARGUMENT = """
import logging
import tensorflow as tf


@tf.function
def evaluate(iterator, dataset_name, steps):
    logging.info("evaluating %s", dataset_name)
    if USE:
        pass
    return next(iterator)
"""


@pytest.mark.parametrize(
    ("use", "reported"),
    [
        ('dataset_name == "clean"', False),
        ('dataset_name in ("val", "test")', False),
        ('dataset_name.startswith("ood/")', False),
        # Nothing says it is a Python string: it may be a string tensor, read per call.
        ("dataset_name", True),
        ("steps > 3", True),
    ],
)
def test_a_python_string_argument_is_part_of_the_trace_signature(use: str, reported: bool) -> None:
    # Each distinct Python string traces anew, so a log showing it shows what this trace
    # is for, like a static shape.
    source = STRING_ARGUMENT.replace("USE", use)
    got = {f.code for f in lint_source(source, "m.py") if f.line == 8}
    assert got == ({"TFG107"} if reported else set())


def test_a_python_string_argument_read_by_a_nested_step_function() -> None:
    source = """
import logging
import tensorflow as tf


@tf.function
def evaluate(iterator, dataset_name):
    def step_fn(inputs):
        logging.info("dataset %s", dataset_name)
        if dataset_name == "clean":
            return inputs
        return inputs * 2

    return step_fn(next(iterator))
"""
    assert [f.code for f in lint_source(source, "m.py") if f.line == 9] == []


def test_the_columns_of_a_dataset_element_read_by_name_are_static() -> None:
    # A tf.data element read by string keys is a Python dict of columns: its keys are the
    # same for the whole trace, so printing them while tracing is a diagnostic.
    source = dedent(
        """
        import tensorflow as tf

        NUMERIC = ["age", "income"]

        def to_inputs(features, label):
            print("tracing to_inputs for", sorted(features))
            return tf.stack([features[c] for c in NUMERIC], axis=-1), label

        def to_text(row, label):
            print("tracing to_text for", sorted(row))
            return row.get("text"), label

        def to_value(x, label):
            print("tracing to_value for", sorted(x))  # TFG101
            return x, label

        ds = tf.data.Dataset.from_tensor_slices(({"age": [1.0]}, [0]))
        ds = ds.map(to_inputs).map(to_text).map(to_value)
        """
    )
    assert {(f.line, f.code) for f in lint_source(source) if f.code == "TFG101"} == expected(source)


def test_a_log_in_a_function_traced_only_to_be_saved_is_a_diagnostic() -> None:
    # A serving signature with an input_signature, returned by a factory whose every call is
    # handed to signatures=: its body runs once, when the model is saved, and never from
    # Python; logging the symbolic features there shows their structure at export.  The same
    # function also called from Python is a per-call function: its log is reported.
    source = dedent(
        """
        import logging

        import tensorflow as tf

        SPEC = {"x": tf.io.FixedLenFeature([], tf.float32)}

        def _serving_fn(model):
            @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
            def serve(examples):
                features = tf.io.parse_example(examples, SPEC)
                logging.info("serve features = %s", features)
                print("serving", features)
                return model(features)

            return serve

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def score(x):
            logging.info("score input = %s", x)
            return x * 2

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def predict(x):
            logging.info("predict input = %s", x)  # TFG107
            return x * 3

        def export(model, path):
            signatures = {
                "serving_default": _serving_fn(model),
                "score": score.get_concrete_function(),
                "predict": predict,
            }
            tf.saved_model.save(model, path, signatures=signatures)
            return predict(tf.ones([2]))
        """
    )
    got = {(f.line, f.code) for f in lint_source(source) if f.code in ("TFG101", "TFG107")}
    assert got == expected(source)


def test_entries_of_a_python_config_and_shapes_per_item_are_not_reported() -> None:
    """A graph of modules run from a Python config (`self.dag`), logged under a debug flag:
    the entry's key, its input keys and the static shape of every input (through a local
    lambda over `tf.nest.map_structure`) are the same on every call of the trace."""
    source = dedent(
        """
        import logging
        import tensorflow as tf

        class Dag(tf.keras.layers.Layer):
            def __init__(self, dag):
                super().__init__()
                self.dag = dag

            def call(self, inputs, verbose=False):
                outputs = dict(inputs)
                for node in self.dag:
                    key, input_keys = node[0], node[1]
                    ins = [outputs[k] for k in input_keys]
                    shape = lambda d: tf.nest.map_structure(lambda x: list(x.shape), d)
                    if verbose:
                        logging.info("%s <- %s %s", key, input_keys, shape(ins))
                        logging.info("%s", tf.nest.map_structure(lambda x: x.dtype, ins))
                    # a tensor of the structure, a value paired with one:
                    logging.info("%s", ins[0])  # TFG107
                    logging.info("%s", tf.nest.map_structure(lambda x: x + 1, ins))  # TFG107
                    first, rest = ins[0], ins[1:]
                    logging.info("%s", first)  # TFG107
                    outputs[key] = ins[0]
                return outputs
        """
    )
    assert {(f.line, f.code) for f in lint_source(source, "m.py")} == expected(source)


def test_debug_lines_without_a_tensor_document_the_build() -> None:
    source = dedent(
        """
        import logging

        import tensorflow as tf

        logger = logging.getLogger(__name__)


        class Builder(tf.keras.layers.Layer):
            def call(self, x):
                for op in self.plan:
                    logger.debug("=====")
                    logger.debug("reads %s", [o.reads for o in op.group])
                    x = op.build(x)
                logger.debug("output %s", tf.reduce_sum(x))  # TFG107
                logger.info("built %s", [o.reads for o in self.plan])  # TFG107
                return x
        """
    )
    got = {(line, code) for line, code in found(source) if code == "TFG107"}
    assert got == expected(source)


def test_the_size_of_a_list_the_trace_builds_is_static() -> None:
    source = dedent(
        """
        import logging

        import tensorflow as tf

        logger = logging.getLogger(__name__)


        class Simulator(tf.keras.layers.Layer):
            def call(self, x):
                updates = []
                for op in self.plan:
                    updates.append(op(x))
                logger.info("state updates: %d", len(updates))
                logger.info("batch: %d", len(x))  # TFG107
                return tf.add_n(updates)
        """
    )
    got = {(line, code) for line, code in found(source) if code == "TFG107"}
    assert got == expected(source)


DEBUG_DUMP = dedent(
    """
    import tensorflow as tf

    from ranking.config import SPECS


    class Ranker(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, features):
            print("=== INPUT DEBUG ===")
            print("features:")
            for name, column in features.items():
                print(f"  {name}:")
                print(f"    shape: {column.shape}")
                print(f"    spec: {SPECS.get(name)}")
            print("Running the ranker")  # TFG101
            print("batch of", features["age"].shape)
            scores = self.dense(features["age"])
            print("=== OUTPUT DEBUG ===")
            print("scores shape:", scores.shape)
            print("scores done")  # TFG101
            scores = tf.nn.sigmoid(scores)
            print("=== VALUES ===")  # TFG101
            print("scores:", scores)  # TFG101
            return scores
    """
)


def test_a_debug_dump_of_static_metadata_is_one_trace_time_diagnostic() -> None:
    # Banners, headings and dict keys ahead of the shapes they introduce, and settings beside
    # them, are part of the dump; a sentence before them, a literal after them, and a dump
    # that shows a tensor still claim to run per call.
    assert found(DEBUG_DUMP) == expected(DEBUG_DUMP)


SETTINGS_DUMP = dedent(
    """
    import tensorflow as tf

    from ranking.config import RankerConfig

    CONF = RankerConfig()
    SEEN = {}


    class Ranker(tf.keras.Model):
        def call(self, features):
            picked = {k: v for k, v in features.items() if k in CONF.data.user_specs}
            print("=== USER FEATURES ===")
            for name, column in picked.items():
                print(f"  {name}:")
                print(f"    shape: {column.shape}")
                print(f"    spec: {CONF.data.user_specs.get(name)}")
            print(f"batch size {CONF.train.batch_size}, shape {features['age'].shape}")
            print(f"seen {SEEN.get('age')}, shape {features['age'].shape}")  # TFG101
            return features["age"]
    """
)


def test_the_settings_object_made_at_import_is_configuration() -> None:
    # `CONF = RankerConfig()` once at module level: its entries are settings beside the
    # shapes, as an imported constant's are; a plain module-level dict may be state.
    assert found(SETTINGS_DUMP) == expected(SETTINGS_DUMP)


CHANGED_SETTINGS = dedent(
    """
    import logging

    import tensorflow as tf

    from ranking.config import RunConfig


    class LocalConfig:
        def __init__(self):
            self.lr = tf.Variable(1e-3)


    CONF = RunConfig()
    LOCAL = LocalConfig()


    @tf.function
    def train_step(x):
        print(f"epoch {CONF.epoch}, batch shape {x.shape}")  # TFG101
        logging.info("lr %s for batch %s", LOCAL.lr, x.shape)  # TFG107
        return x * 2.0


    def fit(data, epochs):
        for epoch in range(epochs):
            CONF.epoch = epoch
            train_step(data)
    """
)


def test_a_settings_object_the_module_changes_is_state() -> None:
    # A field the training loop sets each epoch, and a variable the settings class makes,
    # change between calls of the trace: printing them claims per-call values.
    assert found(CHANGED_SETTINGS) == expected(CHANGED_SETTINGS)
