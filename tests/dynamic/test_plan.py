"""Planning dynamic mode (SPEC §4): static findings of one module mapped to the targets the
child process will call, with their inputs, watched state and flags, and the verdicts known
without running anything.  Pure parsing: no TensorFlow needed."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterable

import pytest

from tflint_graph import lint_source
from tflint_graph.core.codes import RULE_CODES
from tflint_graph.core.config import Config
from tflint_graph.core.examples import PyValue, TensorSpecLite, parse_example
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.dynamic.plan import CHECKED, GUESSED_SHAPES, ModulePlan, plan_module
from tflint_graph.dynamic.verdicts import (
    UNVERIFIED,
    Attempt,
    DictSpec,
    SourceExpr,
    Target,
    TupleSpec,
    VariablesSpec,
    Watch,
)

PATH = "pkg/mod.py"
MODULE = "pkg.mod"


def plan_for(
    source: str, examples: Iterable[tuple[str, str]] = ()
) -> tuple[ModulePlan, frozenset[tuple[int, str]]]:
    """The plan of ``source`` (already dedented) and the (line, code) of its findings.

    Cached: several tests read the plan of the same source, and none changes it."""
    return _plan_cached(source, tuple(examples))


@functools.cache
def _plan_cached(
    source: str, examples: tuple[tuple[str, str], ...]
) -> tuple[ModulePlan, frozenset[tuple[int, str]]]:
    findings = _lint(source)
    parsed = {key: parse_example(key, value) for key, value in examples}
    plan = plan_module(PATH, source, findings, Config(), MODULE, parsed)
    return plan, frozenset((f.line, f.code) for f in findings)


@functools.cache
def _lint(source: str) -> tuple[Finding, ...]:
    return tuple(lint_source(source, path=PATH))


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def line_of(source: str, needle: str, nth: int = 1) -> int:
    """1-based line of the ``nth`` line containing ``needle``."""
    hits = [i for i, line in enumerate(source.splitlines(), start=1) if needle in line]
    assert len(hits) >= nth, f"{needle!r} not in source"
    return hits[nth - 1]


def only_target(plan: ModulePlan, path: str) -> Target:
    matches = [t for t in plan.targets if t.path == path]
    assert len(matches) == 1, [t.path for t in plan.targets]
    return matches[0]


def f32(*shape: int | None) -> TensorSpecLite:
    return TensorSpecLite("float32", tuple(shape))


def guessed(n_tensors: int) -> tuple[Attempt, ...]:
    return tuple(
        Attempt("guessed", tuple(f32(*shape) for _ in range(n_tensors))) for shape in GUESSED_SHAPES
    )


def assert_unverified(plan: ModulePlan, key: tuple[int, str], *words: str) -> str:
    assert key in plan.verdicts, (key, plan.verdicts)
    verdict = plan.verdicts[key]
    assert verdict.status == UNVERIFIED
    for word in words:
        assert word in verdict.evidence, (word, verdict.evidence)
    return verdict.evidence


# -- kinds of targets -------------------------------------------------------------------

DECORATED = src(
    """
    import tensorflow as tf


    @tf.function
    def step(x):
        print("step done")
        return x * 2.0
    """
)


def test_module_level_tf_function_is_a_function_target() -> None:
    plan, found = plan_for(DECORATED)
    line = line_of(DECORATED, "print(")
    assert found == {(line, "TFG101")}
    assert plan.verdicts == {}
    target = only_target(plan, "step")
    assert target.kind == "function"
    assert target.module == MODULE
    assert target.findings == ((line, "TFG101"),)
    assert target.ctor == ()
    assert target.autograph is True


def test_unannotated_parameters_are_guessed_with_every_guessed_shape() -> None:
    plan, _ = plan_for(DECORATED)
    target = only_target(plan, "step")
    assert len(GUESSED_SHAPES) > 1
    assert target.attempts == guessed(1)
    assert [a.args[0].shape for a in target.attempts] == list(GUESSED_SHAPES)
    assert all(a.source == "guessed" and a.kwargs == {} for a in target.attempts)


WRAPPED = src(
    """
    import tensorflow as tf


    def train_one(x, w):
        print("step")
        return x + w


    step = tf.function(train_one)
    """
)


def test_function_wrapped_by_tf_function_call_is_a_wrap_target() -> None:
    plan, found = plan_for(WRAPPED)
    line = line_of(WRAPPED, "print(")
    assert (line, "TFG101") in found
    target = only_target(plan, "train_one")
    assert target.kind == "wrap"
    assert target.findings == ((line, "TFG101"),)
    assert target.attempts == guessed(2)
    assert [t.path for t in plan.targets] == ["train_one"]


def test_wrapped_function_with_literal_input_signature() -> None:
    source = src(
        """
        import tensorflow as tf


        def train_one(x):
            print("step")
            return x


        step = tf.function(train_one, input_signature=[tf.TensorSpec([None, 4], tf.int64)])
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "train_one")
    assert target.kind == "wrap"
    assert target.attempts == (Attempt("input_signature", (TensorSpecLite("int64", (None, 4)),)),)


SIGNED = src(
    """
    import tensorflow as tf


    @tf.function(
        input_signature=[
            tf.TensorSpec(shape=[None, 28], dtype=tf.float32),
            tf.TensorSpec([3], tf.int32),
        ]
    )
    def serve(images, labels):
        print("serving")
        return images
    """
)


def test_literal_input_signature_gives_one_attempt_with_its_specs() -> None:
    plan, found = plan_for(SIGNED)
    assert (line_of(SIGNED, "print("), "TFG101") in found
    target = only_target(plan, "serve")
    assert len(target.attempts) == 1
    attempt = target.attempts[0]
    assert attempt.source == "input_signature"
    assert attempt.kwargs == {}
    assert [(s.dtype, s.shape) for s in attempt.args] == [("float32", (None, 28)), ("int32", (3,))]


def test_input_signature_of_a_method_excludes_self() -> None:
    source = src(
        """
        import tensorflow as tf


        class Exporter(tf.Module):
            @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32)])
            def serve(self, x):
                print("serve")
                return x
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "Exporter.serve")
    assert target.kind == "method"
    assert target.attempts == (Attempt("input_signature", (f32(None, 8),)),)


def test_non_literal_input_signature_falls_back_to_guesses() -> None:
    source = src(
        """
        import tensorflow as tf

        SIGNATURE = [tf.TensorSpec([None], tf.float32)]


        @tf.function(input_signature=SIGNATURE)
        def serve(x):
            print("serve")
            return x
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "serve")
    assert target.attempts == guessed(1)


def test_config_example_wins_over_input_signature() -> None:
    plan, _ = plan_for(SIGNED, [("pkg.mod:serve", "float32[5,28], int32[3]")])
    target = only_target(plan, "serve")
    assert target.attempts == (Attempt("config", (f32(5, 28), TensorSpecLite("int32", (3,))), {}),)


def test_config_example_keeps_keyword_arguments() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x, *, scale, training=False):
            print("step")
            return x * scale
        """
    )
    plan, _ = plan_for(source, [("pkg.mod:step", "float32[2,3], scale=py:2.0, training=py:True")])
    target = only_target(plan, "step")
    assert len(target.attempts) == 1
    attempt = target.attempts[0]
    assert attempt.source == "config"
    assert attempt.args == (f32(2, 3),)
    assert dict(attempt.kwargs) == {"scale": PyValue(2.0), "training": PyValue(True)}


def test_example_for_another_module_or_function_is_ignored() -> None:
    plan, _ = plan_for(
        DECORATED, [("other.mod:step", "float32[9]"), ("pkg.mod:other", "float32[9]")]
    )
    assert only_target(plan, "step").attempts == guessed(1)


# -- parameters ---------------------------------------------------------------------------


def test_tensor_and_int_annotations() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x: tf.Tensor, n: int):
            print(n)
            return x
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "step")
    assert {a.source for a in target.attempts} == {"annotations"}
    assert [a.args for a in target.attempts] == [(f32(*s), PyValue(2)) for s in GUESSED_SHAPES]


@pytest.mark.parametrize("annotation", ["tf.Tensor", '"tf.Tensor"', "tf.Variable"])
def test_tensor_annotation_alone_is_an_annotations_attempt(annotation: str) -> None:
    source = src(
        f"""
        import tensorflow as tf


        @tf.function
        def step(x: {annotation}, w):
            print("step")
            return x + w
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "step")
    assert [a.source for a in target.attempts] == ["annotations"] * len(GUESSED_SHAPES)
    assert [a.args for a in target.attempts] == [(f32(*s), f32(*s)) for s in GUESSED_SHAPES]


def test_unknown_annotation_is_a_guess() -> None:
    source = src(
        """
        import tensorflow as tf
        from mylib import Batch


        @tf.function
        def step(x: Batch):
            print("step")
            return x
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "step").attempts == guessed(1)


def test_string_tensor_annotation_and_keyword_only_python_values() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x: "tf.Tensor", rate: float, *, training: bool, name: str):
            print(x)
            return x
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "step")
    assert len(target.attempts) == len(GUESSED_SHAPES)
    for attempt, shape in zip(target.attempts, GUESSED_SHAPES, strict=True):
        assert attempt.source == "annotations"
        assert attempt.args == (f32(*shape), PyValue(0.5))
        assert dict(attempt.kwargs) == {"training": PyValue(True), "name": PyValue("a")}


def test_only_python_annotations_give_a_single_attempt() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(n: int, flag: bool):
            print(n)
            return tf.constant(n)
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "step").attempts == (
        Attempt("annotations", (PyValue(2), PyValue(True))),
    )


def test_parameters_with_defaults_are_left_out_and_keyword_only_go_as_kwargs() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x, y=2, *args, scale, offset=1.0, **kwargs):
            print("step")
            return x * scale + y + offset
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "step")
    assert len(target.attempts) == len(GUESSED_SHAPES)
    for attempt, shape in zip(target.attempts, GUESSED_SHAPES, strict=True):
        assert attempt.source == "guessed"
        assert attempt.args == (f32(*shape),)
        assert dict(attempt.kwargs) == {"scale": f32(*shape)}


def test_function_without_parameters_gets_one_empty_attempt() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def tick():
            print("tick")
            return tf.constant(1)
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "tick").attempts == (Attempt("guessed", ()),)


# -- methods and Keras ----------------------------------------------------------------------

MODULE_METHOD = src(
    """
    import tensorflow as tf


    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.cache = {}

        @tf.function
        def bump(self, key, value):
            self.cache[key] = value
            return value
    """
)


def test_decorated_method_of_tf_module_drops_self() -> None:
    plan, found = plan_for(MODULE_METHOD)
    line = line_of(MODULE_METHOD, "self.cache[key]")
    assert (line, "TFG102") in found
    target = only_target(plan, "Counter.bump")
    assert target.kind == "method"
    assert target.findings == ((line, "TFG102"),)
    assert target.attempts == guessed(2)
    assert target.ctor == ()


def test_classmethod_drops_cls() -> None:
    source = src(
        """
        import tensorflow as tf


        class Tools(tf.Module):
            @classmethod
            @tf.function
            def scale(cls, x):
                print("scale")
                return x * 2.0
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "Tools.scale").attempts == guessed(1)


def test_staticmethod_keeps_its_first_parameter() -> None:
    source = src(
        """
        import tensorflow as tf


        class Tools:
            @staticmethod
            @tf.function
            def norm(x):
                print("norm")
                return x / tf.norm(x)
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "Tools.norm").attempts == guessed(1)


KERAS = src(
    """
    import tensorflow as tf
    from tensorflow import keras


    class Net(keras.Model):
        def __init__(self, units):
            super().__init__()
            self.dense = keras.layers.Dense(units)
            self.steps = 0

        def call(self, inputs):
            print("call")
            return self.dense(inputs)

        def train_step(self, data):
            x, y = data
            print("train")
            self.steps += 1
            return {"loss": tf.reduce_mean(self(x) - y)}

        def test_step(self, data):
            print("test")
            return {}

        def predict_step(self, data):
            print("predict")
            return data
    """
)


def test_keras_train_step_attempts_are_one_xy_tuple_each() -> None:
    plan, found = plan_for(KERAS)
    line = line_of(KERAS, 'print("train")')
    assert (line, "TFG101") in found
    target = only_target(plan, "Net.train_step")
    assert target.kind == "keras_step"
    assert (line, "TFG101") in target.findings
    assert target.attempts
    for attempt in target.attempts:
        assert attempt.source == "guessed"
        assert len(attempt.args) == 1
        data = attempt.args[0]
        assert isinstance(data, TupleSpec)
        assert len(data.items) == 2
        x, y = data.items
        assert x.dtype == y.dtype == "float32"
        assert x.shape in GUESSED_SHAPES
        assert y.shape == (x.shape[0], 1)
    xs = [a.args[0].items[0].shape for a in target.attempts]
    assert len(xs) >= 2
    assert xs == list(GUESSED_SHAPES[: len(xs)])


@pytest.mark.parametrize("step", ["test_step", "predict_step"])
def test_other_keras_steps_are_keras_step_targets(step: str) -> None:
    plan, _ = plan_for(KERAS)
    target = only_target(plan, f"Net.{step}")
    assert target.kind == "keras_step"
    assert any(isinstance(a.args[0], TupleSpec) for a in target.attempts)


def step_data(body: str) -> list[object]:
    """The ``data`` argument of each attempt for a ``train_step`` with ``body``."""
    lines = [
        "import keras",
        "import tensorflow as tf",
        "",
        "",
        "class Net(keras.Model):",
        "    def train_step(self, data):",
        *("        " + line for line in body.splitlines()),
        "        self.steps += 1",
        "        return {}",
        "",
    ]
    plan, _ = plan_for("\n".join(lines))
    return [a.args[0] for a in only_target(plan, "Net.train_step").attempts]


def test_a_step_that_uses_its_data_whole_gets_one_tensor_first() -> None:
    # A GAN's train_step takes a batch of real images, not (x, y).
    first, second, *_ = step_data(
        "fake = self.generator(tf.random.normal((2, 8)))\nboth = tf.concat([fake, data], axis=0)"
    )
    assert isinstance(first, TensorSpecLite)
    assert isinstance(second, TupleSpec)


@pytest.mark.parametrize(
    "body",
    [
        "x, y = keras.utils.unpack_x_y_sample_weight(data)",
        "x = data[0]\ny = data[1]",
        "if isinstance(data, tuple):\n    x, y = data",
        "out = super().train_step(data)",
    ],
)
def test_a_step_that_splits_its_data_gets_x_and_y(body: str) -> None:
    attempts = step_data(body)
    assert attempts and all(isinstance(d, TupleSpec) and len(d.items) == 2 for d in attempts)


def test_a_step_unpacking_three_parts_gets_sample_weights_too() -> None:
    attempts = step_data("x, y, sample_weight = data")
    assert all(isinstance(d, TupleSpec) and len(d.items) == 3 for d in attempts)


def test_a_step_reading_named_features_gets_a_dict() -> None:
    (first, *_) = step_data('images = data["image"]\nlabels = data["label"]')
    assert isinstance(first, DictSpec)
    items = dict(first.items)
    assert set(items) == {"image", "label"}
    assert items["label"].dtype == "int32"
    assert items["image"].dtype == "float32"


def test_a_parameter_read_by_key_is_a_dict_of_columns() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def featurize(features):
            print("featurize")
            age = features["age"] / 100.0
            return tf.concat([age, features.get("income", age)], axis=0)
        """
    )
    plan, _ = plan_for(source)
    (target,) = plan.targets
    spec = target.attempts[0].args[0]
    assert isinstance(spec, DictSpec)
    assert [k for k, _ in spec.items] == ["age", "income"]
    assert all(v.shape == GUESSED_SHAPES[0][:1] for _, v in spec.items)


def test_replay_batch_names_are_one_value_per_example() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def update(obs, actions, rewards, next_obs, dones):
            print("update")
            best = tf.reduce_max(next_obs, axis=1) + obs[:, 0]
            return rewards + (1.0 - dones) * best - tf.cast(actions, tf.float32)
        """
    )
    plan, _ = plan_for(source)
    (target,) = plan.targets
    obs, actions, rewards, next_obs, dones = target.attempts[0].args
    batch = GUESSED_SHAPES[0][0]
    assert obs == next_obs == f32(*GUESSED_SHAPES[0])
    assert rewards == dones == f32(batch)
    assert actions.dtype == "int32" and actions.shape == (batch,)


def test_keras_step_config_example_becomes_one_tuple() -> None:
    plan, _ = plan_for(KERAS, [("pkg.mod:Net.train_step", "float32[4,3], float32[4,1]")])
    target = only_target(plan, "Net.train_step")
    assert target.attempts == (Attempt("config", (TupleSpec((f32(4, 3), f32(4, 1))),)),)


def test_keras_model_call_is_a_keras_call_target() -> None:
    plan, _ = plan_for(KERAS)
    target = only_target(plan, "Net.call")
    assert target.kind == "keras_call"
    assert target.findings == ((line_of(KERAS, 'print("call")'), "TFG101"),)
    assert target.attempts == guessed(1)


def test_keras_layer_call_is_a_keras_call_target() -> None:
    source = src(
        """
        import tensorflow as tf


        class Scale(tf.keras.layers.Layer):
            def call(self, inputs):
                print("layer")
                return inputs * 2.0
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "Scale.call").kind == "keras_call"


def test_class_example_fills_the_constructor_arguments() -> None:
    plan, _ = plan_for(KERAS, [("pkg.mod:Net", "py:4")])
    assert only_target(plan, "Net.call").ctor == (PyValue(4),)
    assert only_target(plan, "Net.train_step").ctor == (PyValue(4),)
    # The class example is not an example for the method itself.
    assert {a.source for a in only_target(plan, "Net.call").attempts} == {"guessed"}


def test_without_class_example_ctor_is_empty() -> None:
    plan, _ = plan_for(KERAS)
    assert all(t.ctor == () for t in plan.targets)


def test_method_example_and_class_example_together() -> None:
    plan, _ = plan_for(KERAS, [("pkg.mod:Net", "py:8"), ("pkg.mod:Net.call", "float32[1,5]")])
    target = only_target(plan, "Net.call")
    assert target.ctor == (PyValue(8),)
    assert target.attempts == (Attempt("config", (f32(1, 5),)),)


def test_function_example_is_not_used_as_ctor() -> None:
    plan, _ = plan_for(DECORATED, [("pkg.mod:step", "float32[2]")])
    target = only_target(plan, "step")
    assert target.ctor == ()
    assert target.attempts == (Attempt("config", (f32(2),)),)


def test_class_example_keyword_arguments_are_not_lost() -> None:
    plan, _ = plan_for(KERAS, [("pkg.mod:Net", "units=py:4")])
    target = only_target(plan, "Net.call")
    assert "units" in repr(target)


# -- tf.data ----------------------------------------------------------------------------


def test_module_level_dataset_map_callback_is_a_map_target() -> None:
    source = src(
        """
        import tensorflow as tf


        def parse(record):
            print("parsing")
            return tf.strings.to_number(record)


        def make_dataset(files):
            return tf.data.TextLineDataset(files).map(parse)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "print(")
    assert (line, "TFG101") in found
    target = only_target(plan, "parse")
    assert target.kind == "map"
    assert target.findings == ((line, "TFG101"),)
    # A record of a text dataset: by its name, a scalar string per element.
    assert {a.args for a in target.attempts} == {(TensorSpecLite("string", ()),)}
    assert target.roles == ("string",)


def test_guesses_follow_parameter_names() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def train_step(images, labels, serialized, weights):
            print("step")
            return images


        def preprocess(image, label):
            print("mapping")
            return image, label


        def make(ds):
            return ds.map(preprocess)
        """
    )
    plan, _ = plan_for(source)
    step = only_target(plan, "train_step")
    assert step.roles == ("image", "label", "string", "tensor")
    for attempt, shape in zip(step.attempts, GUESSED_SHAPES, strict=True):
        row = shape[:1]
        assert attempt.args == (
            f32(*row, 4, 4, 3),  # images: height, width, channels
            TensorSpecLite("int32", row, values=(0, 2)),
            TensorSpecLite("string", row),
            f32(*shape),
        )
    mapped = only_target(plan, "preprocess")
    # One element of a dataset: one image, and a scalar label.
    assert mapped.attempts[0].args == (
        f32(4, 4, 3),
        TensorSpecLite("int32", (), values=(0, 2)),
    )


# -- callees are grouped into their root --------------------------------------------------

CHAIN = src(
    """
    import tensorflow as tf


    def normalize(x):
        print("normalizing")
        return x / tf.reduce_max(x)


    @tf.function
    def early(x):
        print("early")
        return x


    @tf.function
    def late(x):
        print("late")
        return normalize(x)
    """
)


def test_helper_findings_go_to_the_root_target() -> None:
    plan, found = plan_for(CHAIN)
    helper_line = line_of(CHAIN, 'print("normalizing")')
    late_line = line_of(CHAIN, 'print("late")')
    assert (helper_line, "TFG101") in found
    assert [t.path for t in plan.targets] == ["early", "late"]
    late = only_target(plan, "late")
    assert late.findings == ((helper_line, "TFG101"), (late_line, "TFG101"))
    assert all(t.path != "normalize" for t in plan.targets)
    assert (helper_line, "TFG101") not in plan.verdicts


def test_targets_are_ordered_by_the_roots_source_line() -> None:
    plan, _ = plan_for(CHAIN)
    # The helper's finding comes first, but its root ``late`` is defined after ``early``.
    lines = [line_of(CHAIN, f"def {t.path}(") for t in plan.targets]
    assert lines == sorted(lines)
    assert [t.path for t in plan.targets] == ["early", "late"]


def test_lambda_inside_a_tf_function_belongs_to_the_enclosing_root() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x):
            return tf.map_fn(lambda v: print(v) or v, x)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "lambda v")
    assert {code for _, code in found} == {"TFG101"}
    target = only_target(plan, "step")
    assert [f for f in target.findings if f[0] == line] == [(line, "TFG101")]
    assert plan.verdicts == {}


# -- unreachable roots ---------------------------------------------------------------------


def test_lambda_dataset_callback_is_unverified() -> None:
    source = src(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(3).map(lambda x: print(x) or x)
        """
    )
    plan, found = plan_for(source)
    key = (line_of(source, "lambda"), "TFG101")
    assert key in found
    assert plan.targets == []
    assert_unverified(plan, key, "lambda")


def test_class_defined_inside_a_function_is_unverified() -> None:
    source = src(
        """
        import tensorflow as tf


        def build():
            class Local(tf.Module):
                @tf.function
                def run(self, x):
                    print("run")
                    return x

            return Local()
        """
    )
    plan, found = plan_for(source)
    key = (line_of(source, "print("), "TFG101")
    assert key in found
    assert plan.targets == []
    evidence = assert_unverified(plan, key)
    assert "nested" in evidence or "class" in evidence


def test_class_nested_in_a_class_is_unverified() -> None:
    source = src(
        """
        import tensorflow as tf


        class Outer:
            class Inner(tf.Module):
                @tf.function
                def run(self, x):
                    print("run")
                    return x
        """
    )
    plan, found = plan_for(source)
    key = (line_of(source, "print("), "TFG101")
    assert key in found
    assert plan.targets == []
    assert_unverified(plan, key, "class", "module level")


def test_a_second_optimizer_at_an_eager_call_stages_the_tf_function() -> None:
    source = src(
        """
        import tensorflow as tf
        from tensorflow import keras

        model = keras.Sequential([keras.layers.Dense(1)])
        opt_a = keras.optimizers.Adam()
        opt_b = keras.optimizers.Adam()


        @tf.function
        def train_step(model, opt, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss


        x = tf.ones([2, 3])
        train_step(model, opt_a, x)
        train_step(model, opt_b, x)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "train_step(model, opt_b, x)")
    assert (line, "TFG208") in found
    # The eager code is never run as if it were traced: the tf.function it calls is the
    # target, called on a fresh copy with one optimizer, then with a new Adam().
    (target,) = plan.targets
    assert target.path == "train_step"
    assert target.swaps == ((line, "opt", 1, "keras.optimizers.Adam"),)


# -- every code has a dynamic check -----------------------------------------------------------


def test_every_rule_code_has_a_dynamic_check() -> None:
    assert set(RULE_CODES) <= CHECKED


def test_a_handler_around_ops_asks_the_child_for_the_try_body_and_handler_lines() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def safe_log(x):
            try:
                y = tf.math.log(x)
            except tf.errors.InvalidArgumentError:
                y = tf.zeros_like(x)
            return y
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "except tf.errors")
    assert (line, "TFG206") in found
    (target,) = [t for t in plan.targets if (line, "TFG206") in t.findings]
    assert target.handlers == ((line, line - 1, line + 1),)
    assert (line, "TFG206") not in plan.verdicts


def test_a_body_without_ops_asks_the_child_for_the_graphs_op_types() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def constant_one(x):
            return 1
        """
    )
    plan, found = plan_for(source)
    key = (line_of(source, "def constant_one"), "TFG404")
    assert key in found and key not in plan.verdicts
    target = only_target(plan, "constant_one")
    assert (target.kind, target.findings, target.ops, target.xla) == (
        "function",
        (key,),
        True,
        False,
    )


def test_xla_with_unknown_dims_asks_the_child_to_time_new_shapes() -> None:
    source = src(
        """
        import tensorflow as tf


        def _norm(x):
            return x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True))


        norm = tf.function(
            _norm, jit_compile=True, input_signature=[tf.TensorSpec([None, 8], tf.float32)]
        )
        """
    )
    plan, found = plan_for(source)
    key = (line_of(source, "def _norm"), "TFG304")
    assert key in found and key not in plan.verdicts
    (target,) = [t for t in plan.targets if key in t.findings]
    assert target.xla and not target.ops
    # The def is wrapped by the module: the child looks for the module's own tf.function.
    assert (target.kind, target.path) == ("wrap", "_norm")


def test_a_handler_and_a_print_in_one_function_share_its_target() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def accumulate(x):
            print("accumulating")
            try:
                x = tf.math.log(x)
            except tf.errors.InvalidArgumentError:
                x = x + 1.0
            return x
        """
    )
    plan, found = plan_for(source)
    caught = line_of(source, "except tf.errors")
    printed = line_of(source, "print(")
    assert {(caught, "TFG206"), (printed, "TFG101")} <= found
    target = only_target(plan, "accumulate")
    assert target.findings == ((printed, "TFG101"), (caught, "TFG206"))
    assert target.handlers == ((caught, caught - 1, caught + 1),)
    assert (printed, "TFG101") not in plan.verdicts


def test_syntax_error_file_does_not_crash() -> None:
    source = "import tensorflow as tf\n\n@tf.function\ndef step(x:\n    print(x)\n"
    plan, found = plan_for(source)
    assert {code for _, code in found} == {"TFG001"}
    assert plan.targets == []
    (key,) = [k for k in found if k[1] == "TFG001"]
    assert_unverified(plan, key, "TFG001")


def test_checked_finding_on_unparsable_source_is_unverified() -> None:
    source = "import tensorflow as tf\n\n@tf.function\ndef step(x:\n    print(x)\n"
    finding = Finding(
        path=PATH,
        line=5,
        column=5,
        code="TFG101",
        name="print-in-traced",
        message="print() runs only while tracing step()",
        severity=Severity.ERROR,
    )
    plan = plan_module(PATH, source, [finding], Config(), MODULE, {})
    assert plan.targets == []
    assert_unverified(plan, (5, "TFG101"))


def test_no_findings_no_plan() -> None:
    plan = plan_module(PATH, "import tensorflow as tf\n", [], Config(), MODULE, {})
    assert plan.targets == []
    assert plan.verdicts == {}


# -- watched state ----------------------------------------------------------------------

STATE = src(
    """
    import tensorflow as tf

    history = []
    counter = 0
    learning_rate = 0.1


    class Stats:
        count = 0


    stats = Stats()


    @tf.function
    def step(x):
        global counter
        history.append(x)
        counter += 1
        stats.count = counter
        return x * learning_rate


    def set_learning_rate(value):
        global learning_rate
        learning_rate = value


    class Trainer(tf.Module):
        def __init__(self):
            super().__init__()
            self.cache = {}
            self.steps = 0

        @tf.function
        def run(self, key, x):
            self.cache[key] = x
            self.steps += 1
            return x
    """
)


def watches_of(path: str) -> dict[tuple[int, str], Watch]:
    plan, _ = plan_for(STATE)
    return {(w.line, w.code): w for w in only_target(plan, path).watches}


def test_state_findings_are_reported() -> None:
    _, found = plan_for(STATE)
    assert {
        (line_of(STATE, "history.append"), "TFG102"),
        (line_of(STATE, "counter += 1"), "TFG105"),
        (line_of(STATE, "stats.count = counter"), "TFG106"),
        (line_of(STATE, "x * learning_rate"), "TFG109"),
        (line_of(STATE, "self.cache[key]"), "TFG102"),
        (line_of(STATE, "self.steps += 1"), "TFG106"),
    } <= found


def test_container_append_on_a_global_watches_the_global() -> None:
    line = line_of(STATE, "history.append")
    assert watches_of("step")[(line, "TFG102")] == Watch(line, "TFG102", "global", "history", "")


def test_item_assignment_on_self_watches_the_attribute() -> None:
    line = line_of(STATE, "self.cache[key]")
    assert watches_of("Trainer.run")[(line, "TFG102")] == Watch(line, "TFG102", "self", "", "cache")


def test_global_write_watches_the_global() -> None:
    line = line_of(STATE, "counter += 1")
    assert watches_of("step")[(line, "TFG105")] == Watch(line, "TFG105", "global", "counter", "")


def test_augmented_self_attribute_watches_the_attribute() -> None:
    line = line_of(STATE, "self.steps += 1")
    assert watches_of("Trainer.run")[(line, "TFG106")] == Watch(line, "TFG106", "self", "", "steps")


def test_attribute_of_a_module_global_is_a_global_attr_watch() -> None:
    line = line_of(STATE, "stats.count = counter")
    watch = watches_of("step")[(line, "TFG106")]
    assert watch == Watch(line, "TFG106", "global_attr", "stats", "count")
    assert watch.label == "stats.count"


def test_stale_global_read_is_watched_and_listed_as_stale() -> None:
    plan, _ = plan_for(STATE)
    target = only_target(plan, "step")
    line = line_of(STATE, "x * learning_rate")
    assert Watch(line, "TFG109", "global", "learning_rate", "") in target.watches
    assert target.stale == ("learning_rate",)


def test_watches_only_for_state_codes() -> None:
    plan, _ = plan_for(STATE)
    step = only_target(plan, "step")
    assert {w.code for w in step.watches} == {"TFG102", "TFG105", "TFG106", "TFG109"}
    assert {(w.line, w.code) for w in step.watches} <= set(step.findings)
    assert only_target(plan, "Trainer.run").stale == ()
    printing, _ = plan_for(DECORATED)
    assert only_target(printing, "step").watches == ()


def test_stale_global_rebound_in_a_training_loop() -> None:
    source = src(
        """
        import tensorflow as tf

        lr = 0.1


        @tf.function
        def step(x):
            return x * lr


        for epoch in range(3):
            lr = lr / 2
            step(tf.ones([2]))
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "return x * lr")
    assert (line, "TFG109") in found
    target = only_target(plan, "step")
    assert target.stale == ("lr",)
    assert target.watches == (Watch(line, "TFG109", "global", "lr", ""),)


def test_stale_global_after_non_ascii_text_on_the_line() -> None:
    source = src(
        """
        import tensorflow as tf

        lr = 0.1


        @tf.function
        def step(x):
            tf.print("η =", lr)
            return x


        def set_lr(value):
            global lr
            lr = value
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "tf.print")
    assert (line, "TFG109") in found
    target = only_target(plan, "step")
    assert target.stale == ("lr",)


def test_mutated_parameter_is_not_watched_as_the_global_it_shadows() -> None:
    source = src(
        """
        import tensorflow as tf

        buffer = []


        @tf.function
        def step(x, buffer):
            buffer.append(x)
            return x
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "buffer.append")
    assert (line, "TFG102") in found
    target = only_target(plan, "step")
    assert not any(w.kind == "global" and w.name == "buffer" for w in target.watches)


# -- flags ----------------------------------------------------------------------------------

FLAGS = src(
    """
    import tensorflow as tf


    @tf.function
    def add(a, b):
        return a + b


    @tf.function
    def double(x):
        return add(x, x)


    @tf.function
    def collect(x):
        ta = tf.TensorArray(tf.float32, size=2)
        ta.write(0, x)
        return ta.stack()


    @tf.function
    def serve(x):
        return x * 2.0


    tf.saved_model.save(tf.Module(), "/tmp/export", signatures=serve)


    @tf.function
    def noisy(x):
        print("noisy")
        return x
    """
)


@pytest.mark.parametrize(
    ("path", "code", "flag"),
    [
        ("add", "TFG401", "timing"),
        ("collect", "TFG209", "eager_diff"),
        ("serve", "TFG301", "shapes"),
    ],
)
def test_flag_set_only_with_its_code(path: str, code: str, flag: str) -> None:
    plan, found = plan_for(FLAGS)
    target = only_target(plan, path)
    assert code in {c for _, c in target.findings}
    assert any(c == code for _, c in found)
    assert getattr(target, flag) is True
    for other in ("timing", "eager_diff", "shapes"):
        if other != flag:
            assert getattr(target, other) is False
    noisy = only_target(plan, "noisy")
    assert (noisy.timing, noisy.eager_diff, noisy.shapes) == (False, False, False)


def test_autograph_off_is_carried_to_the_target() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function(autograph=False)
        def step(x):
            print("step")
            return x
        """
    )
    plan, _ = plan_for(source)
    assert only_target(plan, "step").autograph is False


# -- determinism ------------------------------------------------------------------------------

EVERYTHING = "\n\n".join([CHAIN, STATE, KERAS])


def test_same_input_gives_the_same_plan() -> None:
    findings = _lint(EVERYTHING)
    examples = {
        key: parse_example(key, value)
        for key, value in [("pkg.mod:Net", "py:4"), ("pkg.mod:serve", "float32[3]")]
    }
    first = plan_module(PATH, EVERYTHING, findings, Config(), MODULE, examples)
    second = plan_module(PATH, EVERYTHING, findings, Config(), MODULE, examples)
    assert first.targets
    assert first is not second
    assert first == second
    assert repr(first) == repr(second)


def test_many_targets_are_ordered_by_source_line() -> None:
    plan, _ = plan_for(EVERYTHING)
    assert len(plan.targets) == 8
    starts = []
    for target in plan.targets:
        name = target.path.rpartition(".")[2]
        owner = target.path.partition(".")[0] if "." in target.path else None
        after = line_of(EVERYTHING, f"class {owner}") if owner else 0
        defs = [
            i
            for i, text in enumerate(EVERYTHING.splitlines(), start=1)
            if f"def {name}(" in text and i > after
        ]
        starts.append(defs[0])
    assert starts == sorted(starts)
    assert len(set(starts)) == len(starts)


# -- reaching code whose traced root cannot be called -----------------------------------------


def test_helper_of_a_lambda_callback_is_called_through_its_own_tf_function() -> None:
    source = src(
        """
        import random

        import tensorflow as tf


        def jitter(image):
            return image * random.uniform(0.9, 1.1)


        def make(ds):
            return ds.map(lambda image, label: (jitter(image), label))
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "random.uniform")
    assert (line, "TFG103") in found
    target = only_target(plan, "jitter")
    assert target.kind == "wrap"
    assert target.findings == ((line, "TFG103"),)
    assert "via tf.function(jitter())" in target.note
    assert "lambda" in target.note


def test_code_traced_from_another_module_is_called_through_a_tf_function(tmp_path) -> None:
    from tflint_graph import lint_paths

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helpers = src(
        """
        def clip(grads):
            print("clipping")
            return grads
        """
    )
    (pkg / "helpers.py").write_text(helpers)
    (pkg / "train.py").write_text(
        src(
            """
            import tensorflow as tf

            from pkg.helpers import clip


            @tf.function
            def step(g):
                return clip(g)
            """
        )
    )
    findings = [f for f in lint_paths([pkg]) if f.path.endswith("helpers.py")]
    assert [(f.line, f.code) for f in findings] == [(2, "TFG101")]
    plan = plan_module(str(pkg / "helpers.py"), helpers, findings, Config(), "pkg.helpers", {})
    target = only_target(plan, "clip")
    assert target.kind == "wrap"
    assert "traced from another module" in target.note
    # The same code, found in eager code only (no chain), is never run as traced.
    eager = [f.__class__(**{**f.to_dict(), "chain": (), "severity": f.severity}) for f in findings]
    plan = plan_module(str(pkg / "helpers.py"), helpers, eager, Config(), "pkg.helpers", {})
    assert plan.targets == []
    assert plan.verdicts[(2, "TFG101")].status == UNVERIFIED


def test_constructor_arguments_are_guessed_from_their_names() -> None:
    source = src(
        """
        import keras
        import random


        class Block(keras.layers.Layer):
            def __init__(self, units, dropout, name=None):
                super().__init__(name=name)
                self.units = units

            def call(self, x):
                return x * random.random()


        class Opaque(keras.layers.Layer):
            def __init__(self, members):
                super().__init__()
                self.members = members

            def call(self, x):
                return x * random.random()
        """
    )
    plan, _ = plan_for(source)
    block = only_target(plan, "Block.call")
    assert block.ctor_kwargs == {"units": PyValue(4), "dropout": PyValue(0.1)}
    assert "constructed as Block(units=4, dropout=0.1), guessed" in block.note
    opaque = only_target(plan, "Opaque.call")
    assert opaque.ctor_kwargs == {}
    assert opaque.note == ""


# -- guesses from names and from the module's own calls ------------------------------------

GUESS_SOURCE = src(
    """
    import random
    import tensorflow as tf

    def build(units):
        return tf.keras.layers.Dense(units)

    class Scorer(tf.Module):
        def __init__(self, layer, scale):
            self.layer = layer
            self.scale = scale

        @tf.function
        def score(self, features, labels, mask, grads):
            print(features)
            return features

    @tf.function
    def augment(image, strength):
        print("augmenting")
        return image * strength

    if __name__ == "__main__":
        augment(tf.zeros([2, 2]), 0.5)
        scorer = Scorer(build(4), scale=2.0)
    """
)


def test_names_shape_the_guesses() -> None:
    plan, _ = plan_for(GUESS_SOURCE)
    target = only_target(plan, "Scorer.score")
    features, labels, mask, grads = target.attempts[0].args
    assert features == TensorSpecLite("float32", GUESSED_SHAPES[0])
    # Class ids drawn in range for any classifier, a boolean mask, a list of gradients.
    assert labels == TensorSpecLite("int32", (2,), values=(0, 2))
    assert mask == TensorSpecLite("bool", GUESSED_SHAPES[0][:2])
    assert isinstance(grads, TupleSpec) and len(grads.items) == 2


def test_a_constructor_is_built_as_the_module_builds_it() -> None:
    plan, _ = plan_for(GUESS_SOURCE)
    target = only_target(plan, "Scorer.score")
    assert [str(a) for a in target.ctor] == ["build(4)"]
    assert {k: str(v) for k, v in target.ctor_kwargs.items()} == {"scale": "2.0"}
    assert "constructed as Scorer(build(4), scale=2.0), as the module does on line" in target.note


def test_a_python_literal_the_module_passes_stays_a_python_value() -> None:
    plan, _ = plan_for(GUESS_SOURCE)
    target = only_target(plan, "augment")
    # First the values the module's own call passes, then guesses beside the literal.
    first, second = target.attempts[:2]
    assert first.source == "the module's own calls"
    assert first.args == (SourceExpr("tf.zeros([2, 2])"), PyValue(0.5))
    assert second.source == "guessed"
    assert isinstance(second.args[0], TensorSpecLite) and second.args[1] == PyValue(0.5)


# The cheap checks (TFG303, TFG305, TFG402, TFG403): what the plan asks the child to stage.
CHEAP_SOURCES: dict[str, tuple[str, str]] = {
    "TFG303": (
        """
        import tensorflow as tf


        @tf.function
        def step(x, i):
            return x * tf.cast(i, tf.float32)


        x = tf.ones([4])
        for i in range(10):
            step(x, i)
        """,
        "    step(x, i)",
    ),
    "TFG305": (
        """
        import tensorflow as tf


        @tf.function
        def accumulate(x):
            for _ in range(1000):
                x = x + tf.ones_like(x)
            return x
        """,
        "range(1000)",
    ),
    "TFG402": (
        """
        import tensorflow as tf

        tf.config.run_functions_eagerly(True)
        """,
        "run_functions_eagerly",
    ),
    "TFG403": (
        """
        import time

        import tensorflow as tf


        @tf.function
        def step(x):
            return tf.reduce_sum(tf.matmul(x, x))


        batch = tf.ones([64, 64])
        start = time.perf_counter()
        step(batch)
        elapsed = time.perf_counter() - start
        """,
        "step(batch)",
    ),
}


def _cheap_target(code: str) -> tuple[Target, int]:
    text, needle = CHEAP_SOURCES[code]
    source = src(text)
    plan, found = plan_for(source)
    line = line_of(source, needle)
    assert (line, code) in found
    assert (line, code) not in plan.verdicts
    (target,) = [t for t in plan.targets if (line, code) in t.findings]
    return target, line


def test_retracing_call_stages_the_varying_parameter_of_the_named_tf_function() -> None:
    target, line = _cheap_target("TFG303")
    assert (target.kind, target.path) == ("function", "step")
    assert target.retrace == ((line, "i", 1, "int"),)


def test_unrolled_loop_is_measured_in_the_function_holding_it() -> None:
    target, line = _cheap_target("TFG305")
    assert (target.kind, target.path) == ("function", "accumulate")
    assert target.loops == ((line, line + 1, 1000, ""),)


def test_eager_switch_at_module_level_is_a_module_target() -> None:
    target, _ = _cheap_target("TFG402")
    assert (target.kind, target.path, target.attempts) == ("module", "", ())


def test_timed_first_call_targets_the_tf_function_it_calls() -> None:
    target, line = _cheap_target("TFG403")
    assert (target.kind, target.path, target.first_call) == ("function", "step", (line,))


def test_eager_switch_inside_a_function_calls_that_function() -> None:
    source = src(
        """
        import tensorflow as tf


        def main():
            tf.config.run_functions_eagerly(True)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "run_functions_eagerly")
    assert (line, "TFG402") in found
    target = only_target(plan, "main")
    assert target.kind == "caller"
    assert (line, "TFG402") in target.findings


def test_a_tf_function_made_in_a_loop_calls_the_function_holding_the_loop() -> None:
    source = src(
        """
        import tensorflow as tf


        def per_size(sizes=(2, 3)):
            for size in sizes:
                @tf.function
                def step(x):
                    return x * 2.0
                step(tf.ones([size]))
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "@tf.function")
    assert (line, "TFG302") in found
    target = only_target(plan, "per_size")
    assert (target.kind, target.findings) == ("caller", ((line, "TFG302"),))


def test_a_tf_function_made_in_a_module_level_loop_is_unverified_with_why() -> None:
    source = src(
        """
        import tensorflow as tf


        def train_step(x):
            return tf.reduce_sum(tf.square(x)) * 2.0


        x = tf.ones([4])
        for epoch in range(10):
            step = tf.function(train_step)
            step(x)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "tf.function(train_step)")
    assert (line, "TFG302") in found
    assert_unverified(plan, (line, "TFG302"), "importing the module ran it")


def _fake(source: str, needle: str, code: str) -> tuple[ModulePlan, int]:
    line = line_of(source, needle)
    column = source.splitlines()[line - 1].index(needle.strip()) + 1
    finding = Finding(
        path=PATH,
        line=line,
        column=column,
        code=code,
        name="x",
        message="m",
        severity=Severity.INFO,
    )
    return plan_module(PATH, source, [finding], Config(), "pkg.mod", {}), line


def test_call_site_codes_are_checked_against_the_call_they_name() -> None:
    # A TFG303 claim at a call with no varying Python value, and a TFG403 claim at a call
    # outside any timed block, must not become experiments that confirm them.
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x):
            return x * 2.0


        x = tf.ones([2])
        for _ in range(3):
            step(x)
        """
    )
    plan, line = _fake(source, "    step(x)", "TFG303")
    assert_unverified(plan, (line, "TFG303"), "no argument", "varies")
    plan, line = _fake(source, "    step(x)", "TFG403")
    assert_unverified(plan, (line, "TFG403"), "not the first call", "timed block")


def test_lambdas_bound_to_module_names_are_reached_by_name() -> None:
    source = src(
        """
        import random

        import tensorflow as tf

        scale = lambda x: x * random.random()
        step = tf.function(lambda x: x - random.random())
        scaled = tf.function(scale)
        ds = tf.data.Dataset.range(3).map(lambda i: i + random.randint(0, 3))
        """
    )
    plan, _ = plan_for(source)
    by_path = {(t.kind, t.path) for t in plan.targets}
    assert {("wrap", "scale"), ("function", "step")} <= by_path
    inline = line_of(source, "ds = ")
    assert_unverified(plan, (inline, "TFG103"), "lambda")


def test_retracing_keyword_of_a_positional_parameter_is_staged_at_its_place() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def step(x, rate):
            return x * rate


        def sweep(x):
            for lr in [0.1, 0.01]:
                step(x, rate=lr)
        """
    )
    plan, found = plan_for(source)
    line = line_of(source, "step(x, rate=lr)")
    assert (line, "TFG303") in found
    (target,) = plan.targets
    assert target.retrace == ((line, "rate", 1, "float"),)


FALLBACK_SOURCE = src(
    """
    import argparse
    import tensorflow as tf

    class Trainer(tf.Module):
        def __init__(self, strategy, num_classes):
            self.strategy = strategy
            self.num_classes = num_classes

        @tf.function
        def step(self, batch):
            features, labels = batch
            print(features)
            return labels

    if __name__ == "__main__":
        args = argparse.ArgumentParser().parse_args()
        trainer = Trainer(tf.distribute.get_strategy(), args.num_classes)
    """
)


def test_a_module_call_that_needs_the_script_has_a_guessed_fallback() -> None:
    plan, _ = plan_for(FALLBACK_SOURCE)
    target = only_target(plan, "Trainer.step")
    # The script's own call needs its parsed options: the guess is kept for when it fails.
    assert [str(a) for a in target.ctor] == [
        "tf.distribute.get_strategy()",
        "argparse.ArgumentParser().parse_args().num_classes",
    ]
    assert set(target.fallback_ctor_kwargs) == {"strategy", "num_classes"}
    assert str(target.fallback_ctor_kwargs["strategy"]).endswith("distribute.get_strategy()")
    assert target.fallback_ctor_kwargs["num_classes"] == PyValue(4)
    assert "guessed, as the module's own call failed" in target.fallback_note


def test_a_parameter_the_body_unpacks_is_a_tuple() -> None:
    plan, _ = plan_for(FALLBACK_SOURCE)
    (batch,) = only_target(plan, "Trainer.step").attempts[-1].args
    assert isinstance(batch, TupleSpec)
    features, labels = batch.items
    assert isinstance(features, TensorSpecLite) and features.dtype == "float32"
    assert labels == TensorSpecLite("int32", features.shape[:1], values=(0, 2))


def test_a_batch_handed_to_a_strategy_step_takes_the_shape_the_step_reads() -> None:
    source = src(
        """
        import tensorflow as tf


        class Trainer:
            def _step_fn(self, batch):
                print("step")
                return batch["image"] * tf.cast(batch["label"], tf.float32)

            @tf.function
            def train_step(self, batch):
                return self.strategy.run(self._step_fn, args=(batch,))
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "Trainer.train_step")
    spec = target.attempts[0].args[0]
    assert isinstance(spec, DictSpec)
    assert [k for k, _ in spec.items] == ["image", "label"]


def test_image_names_are_images_whatever_the_guessed_shape() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def normalize(images):
            print("normalize")
            return tf.image.per_image_standardization(images)
        """
    )
    plan, _ = plan_for(source)
    (target,) = plan.targets
    shapes = {a.args[0].shape for a in target.attempts}
    assert all(len(shape) >= 3 and shape[-1] == 3 for shape in shapes), shapes


def test_counters_are_small_integer_scalars() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def train_step(images, epoch, token_ids):
            print("step")
            return tf.cast(epoch, tf.float32) * images
        """
    )
    plan, _ = plan_for(source)
    (target,) = plan.targets
    _, epoch, ids = target.attempts[0].args
    assert epoch == TensorSpecLite("int32", (), values=(1, 4))
    assert ids.dtype == "int32" and ids.values == (0, 2)


def test_a_tf_function_a_factory_returns_is_reached_through_the_factory() -> None:
    source = src(
        """
        import tensorflow as tf


        def make_step(scale):
            @tf.function
            def step(x):
                print("step")
                return x * scale

            return step


        def make_hidden(scale):
            @tf.function
            def hidden(x):
                print("hidden")
                return x * scale

            hidden(tf.ones([2]))


        step = make_step(2.0)
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "make_step")
    assert (target.kind, target.inner) == ("factory", "step")
    assert target.ctor == (SourceExpr("2.0"),)
    assert target.attempts[0].args == (f32(*GUESSED_SHAPES[0]),)
    line = line_of(source, 'print("hidden")')
    assert_unverified(plan, (line, "TFG101"), "nested function")


def test_an_optional_argument_the_body_returns_early_without_is_passed() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def pool(x, mask=None, lr=0.1):
            if mask is None:
                return tf.reduce_mean(x)
            print("masked")
            return tf.reduce_mean(tf.boolean_mask(x, mask))


        @tf.function
        def update(w, lr):
            print("update")
            return w * lr
        """
    )
    plan, _ = plan_for(source)
    first = only_target(plan, "pool").attempts[0]
    assert set(first.kwargs) == {"mask"}
    assert first.kwargs["mask"].dtype == "bool"
    assert only_target(plan, "update").attempts[0].args[1] == PyValue(0.01)


def test_a_parameter_the_body_zips_is_a_list_of_tensors_or_of_variables_it_assigns() -> None:
    source = src(
        """
        import tensorflow as tf


        @tf.function
        def update_ema(ema_weights, weights, decay=0.999):
            step = tf.Variable(0.0)
            for ema, w in zip(ema_weights, weights):
                ema.assign(decay * ema + (1.0 - decay) * w)
            return step
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "update_ema")
    for attempt in target.attempts:
        # `ema.assign(...)`: the items of `ema_weights` must be variables; `weights` is read.
        assert isinstance(attempt.args[0], VariablesSpec), attempt
        assert isinstance(attempt.args[1], TupleSpec), attempt


def test_a_finding_under_if_training_or_after_its_early_return_runs_with_training_true() -> None:
    source = src(
        """
        import random

        import keras


        class StochasticDepth(keras.layers.Layer):
            def call(self, shortcut, residual, training=None):
                if training and random.random() < 0.1:
                    return shortcut
                return shortcut + residual


        class Plain(keras.layers.Layer):
            def call(self, x, training=None):
                if not training:
                    print("inference")
                return x


        class Masking(keras.layers.Layer):
            def call(self, x, training=None):
                if not training:
                    return x
                if random.random() > 0.5:
                    print("masked")
                return x * 0.0
        """
    )
    plan, _ = plan_for(source)
    drop = only_target(plan, "StochasticDepth.call")
    assert all(a.kwargs.get("training") == PyValue(True) for a in drop.attempts)
    plain = only_target(plan, "Plain.call")
    assert all("training" not in a.kwargs for a in plain.attempts)
    # After an early `if not training: return x`, the body runs only in training.
    masking = only_target(plan, "Masking.call")
    assert all(a.kwargs.get("training") == PyValue(True) for a in masking.attempts)


def test_a_finding_in_the_early_return_itself_runs_without_training() -> None:
    source = src(
        """
        import random

        import keras


        class Masking(keras.layers.Layer):
            def call(self, x, training=None):
                if not training:
                    print("inference")
                    return x
                if random.random() > 0.5:
                    print("masked")
                return x * 0.0
        """
    )
    plan, _ = plan_for(source)
    masking = only_target(plan, "Masking.call")
    assert all("training" not in a.kwargs for a in masking.attempts)


def test_a_module_factory_comes_before_guessed_constructor_arguments() -> None:
    source = src(
        """
        import tensorflow as tf


        class Agent:
            def __init__(self, units, gamma):
                self.units = units
                self.gamma = gamma
                self.updates = 0

            @tf.function
            def update(self, states):
                self.updates += 1
                return states * self.gamma


        def build_agent(config="agent.yaml"):
            return Agent(4, 0.9)
        """
    )
    plan, _ = plan_for(source)
    target = only_target(plan, "Agent.update")
    assert target.owner_factory == "build_agent"
    assert not target.ctor_kwargs  # the factory builds it as the project does...
    assert set(target.fallback_ctor_kwargs) == {"units", "gamma"}  # ...the guess if it fails
