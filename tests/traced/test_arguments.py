"""Branches that what the traced callers pass rules out (``traced.arguments``): a finding in
``if p is None:`` is only made when some trace can leave ``p`` out or pass None."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import dedent, expected, found
from tflint_graph import lint_paths, lint_source

LIKELIHOOD = """
    import functools

    import tensorflow as tf

    def log_likelihood(inputs, tags, transitions=None):
        if transitions is None:
            transitions = tf.Variable(tf.zeros([3, 3]))  # TFG205 when a trace leaves it out
        transitions = tf.cast(transitions, inputs.dtype)
        return tf.reduce_sum(inputs) + tf.reduce_sum(transitions)

    class Tagger(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(tf.zeros([3, 3]))

        def train_step(self, data):
            x, y = data
            loss = log_likelihood(x, y, CALL)
            return {"loss": loss}
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("self.kernel", False),  # an attribute: the object the parameter is for
        ("transitions=self.kernel", False),
        ("tf.ones([3, 3])", False),
        ("None", True),
        ("transitions=None", True),
    ],
)
def test_every_traced_call_passes_the_optional_argument(call: str, reported: bool) -> None:
    source = dedent(LIKELIHOOD).replace("CALL", call)
    assert bool([c for _, c in found(source) if c == "TFG205"]) is reported


def test_a_call_that_leaves_it_out_keeps_the_branch() -> None:
    source = dedent(LIKELIHOOD).replace(", CALL)", ")")
    assert [c for _, c in found(source) if c == "TFG205"] == ["TFG205"]


def test_a_root_may_be_called_without_it() -> None:
    source = dedent(LIKELIHOOD).replace("def log_likelihood", "@tf.function\ndef log_likelihood")
    source = source.replace("CALL", "self.kernel")
    assert [c for _, c in found(source) if c == "TFG205"] == ["TFG205"]


PARSER = """
    import functools

    import tensorflow as tf

    def make_decoder():
        return tf.io.parse_tensor

    def parse(record, decoder=None):
        if not decoder:
            specs = []
            for i in tf.range(tf.size(record)):
                specs.append(record[i])  # TFG207 when a trace has no decoder
            decoder = specs[0]
        return decoder(record)

    def load(files):
        decoder = make_decoder()
        ds = tf.data.Dataset.from_tensor_slices(files)
        return ds.interleave(CALLBACK)
"""


@pytest.mark.parametrize(
    ("callback", "reported"),
    [
        ("functools.partial(parse, decoder=decoder)", False),
        ("functools.partial(parse, decoder=None)", True),
        ("functools.partial(parse)", True),
        ("parse", True),
    ],
)
def test_a_root_bound_by_partial_gets_what_the_partial_binds(callback: str, reported: bool) -> None:
    source = dedent(PARSER).replace("CALLBACK", callback)
    assert bool([c for _, c in found(source) if c == "TFG207"]) is reported


HELPERS = """
    import tensorflow as tf

    def log_likelihood(inputs, transitions=None):
        if transitions is None:
            transitions = tf.Variable(tf.zeros([3, 3]))  # TFG205
        return tf.reduce_sum(inputs) + tf.reduce_sum(transitions)
"""

CALLER = """
    import tensorflow as tf

    from helpers import log_likelihood

    class Tagger(tf.keras.Model):
        def train_step(self, data):
            kernel = self.crf.chain_kernel
            return {"loss": log_likelihood(data, ARGS)}
"""


@pytest.mark.parametrize(
    ("first", "second", "reported"),
    [
        ("kernel", None, False),
        ("transitions=kernel", "kernel", False),
        ("kernel", "None", True),  # one caller elsewhere passes None
        ("kernel", "", True),  # one leaves it out
    ],
)
def test_callers_in_other_modules_tell_what_they_pass(
    tmp_path: Path, first: str, second: str | None, reported: bool
) -> None:
    (tmp_path / "helpers.py").write_text(dedent(HELPERS))
    (tmp_path / "train.py").write_text(dedent(CALLER).replace("ARGS", first))
    if second is not None:
        other = dedent(CALLER).replace(", ARGS)", f", {second})" if second else ")")
        (tmp_path / "evaluate.py").write_text(other)
    got = [f for f in lint_paths([tmp_path]) if f.code == "TFG205"]
    assert bool(got) is reported


CHECKS = """
    import logging

    import tensorflow as tf

    def verify(x, trusts=None):
        if trusts and len(trusts) > 1:
            logging.info("values %s", x * 2.0)  # TFG107 if passed

    class Lattice(tf.keras.layers.Layer):
        def call(self, x):
            verify(x, CALL)
            return x
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("", False),  # every trace leaves `trusts` out: `if trusts and ...` never runs
        ("trusts=None", False),
        ("trusts=self.trusts", True),
    ],
)
def test_a_branch_for_an_argument_no_trace_passes(call: str, reported: bool) -> None:
    source = dedent(CHECKS).replace(", CALL)", f", {call})" if call else ")")
    assert bool([c for _, c in found(source) if c == "TFG107"]) is reported


SWITCH = """
    import numpy as np
    import tensorflow as tf

    def stft_tf(audio):
        return tf.signal.stft(audio, 256, 64)

    def stft_np(audio, pad_end=True):
        if pad_end:
            audio = audio.numpy()  # TFG202 when a trace takes this branch
        return np.abs(audio)

    def loudness(audio, use_tf=True):
        stft = stft_tf if use_tf else stft_np
        return stft(audio)

    class Loss(tf.keras.layers.Layer):
        def call(self, audio):
            return loudness(audio, CALL)
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("use_tf=True", False),  # the NumPy twin is only picked for use_tf=False
        ("True", False),
        ("use_tf=False", True),
        ("use_tf=self.use_tf", True),  # not a literal: either may run
    ],
)
def test_a_helper_picked_only_by_a_setting_no_trace_passes(call: str, reported: bool) -> None:
    source = dedent(SWITCH).replace("CALL", call)
    assert bool([c for _, c in found(source) if c == "TFG202"]) is reported


DEBUGGED = """
    import tensorflow as tf

    def decode(x, verbose=False):
        y = tf.nn.relu(x)
        if verbose:
            print("decoded", y.numpy())  # TFG202 when a trace passes True (it raises first)
        return y
"""

STEPS = """
    import tensorflow as tf

    from helpers import decode

    @tf.function
    def step(x):
        return ARGS
"""


@pytest.mark.parametrize(
    ("args", "reported"),
    [
        ("decode(x)", False),  # every trace leaves the debug switch at its default
        ("decode(x, verbose=False) + decode(x, False)", False),
        ("decode(x) + decode(x, verbose=True)", True),  # one trace turns it on
        ("decode(x, verbose=bool(x.shape[0]))", True),  # a truth no analysis knows
    ],
)
def test_a_switch_callers_in_other_modules_leave_off(
    tmp_path: Path, args: str, reported: bool
) -> None:
    (tmp_path / "helpers.py").write_text(dedent(DEBUGGED))
    (tmp_path / "train.py").write_text(dedent(STEPS).replace("ARGS", args))
    got = {f.code for f in lint_paths([tmp_path]) if f.path.endswith("helpers.py")}
    assert got == ({"TFG202"} if reported else set())


ROOT_SWITCH = """
    import tensorflow as tf

    def decode(x, verbose=False):
        if verbose:
            print("decoded", x.numpy())  # TFG202
        return x

    @tf.function
    def step(x, verbose=False):
        return decode(x, verbose=verbose)

    CALLS
"""


@pytest.mark.parametrize(
    ("calls", "reported"),
    [
        ("", False),  # nothing turns the tf.function's switch on
        ("step(tf.ones([2]))\nstep(tf.ones([2]), verbose=False)", False),
        ("STEPS = {'graph': step}", False),  # handed on: calls usually leave it out
        ("step(tf.ones([2]), verbose=True)", True),
        ("step(tf.ones([2]), True)", True),
    ],
)
def test_a_tf_function_switch_left_at_its_default(calls: str, reported: bool) -> None:
    source = dedent(ROOT_SWITCH).replace("CALLS", calls)
    got = {(line, code) for line, code in found(source)}
    assert got == (expected(source) if reported else set())


METHOD_SWITCH = """
    import numpy as np
    import tensorflow as tf

    class Loader:
        def batch(self, images, is_train):
            CALL

        @tf.function
        def process(self, images, do_aug=False):
            return self.augment(images, do_aug)

        def augment(self, images, do_aug=False):
            if do_aug:
                return images + np.random.uniform(-0.2, 0.2)  # TFG103
            return images
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("return self.process(images)", False),
        ("return self.process(images, do_aug=False)", False),
        ("return self.process(images, is_train and np.random.random() > 0.5)", True),
        ("return self.process(images, do_aug=is_train)", True),
        ("return self.process(images, True)", True),
    ],
)
def test_a_tf_function_methods_switch_turned_on_by_a_call(call: str, reported: bool) -> None:
    # A method is called through `self.`, which names no binding of it: its calls count too.
    source = dedent(METHOD_SWITCH).replace("CALL", call)
    got = {(line, code) for line, code in found(source)}
    assert got == (expected(source) if reported else set())


def test_a_method_of_another_class_does_not_turn_the_switch_on() -> None:
    source = dedent(METHOD_SWITCH).replace("CALL", "return self.process(images)")
    source += dedent(
        """
        class Writer:
            def process(self, record, flush):
                if flush:
                    print(record)

        Writer().process("done", True)
        """
    )
    assert found(source) == set()


@pytest.mark.parametrize(
    ("init", "reported"),
    [
        ("self.knn = False", False),  # every write stores False: the branch never runs
        ("self.knn = knn", True),
        ("self.knn = False\n        if knn:\n            self.knn = True", True),
    ],
)
def test_a_switch_attribute_every_write_sets_to_one_literal(init: str, reported: bool) -> None:
    source = dedent(
        """
        import tensorflow as tf


        def knn_point(k, xyz):
            print("knn", k)
            return tf.nn.top_k(xyz, k)


        def group(xyz, k, knn=False):
            if knn:
                return knn_point(k, xyz)
            return xyz


        class SetAbstraction(tf.keras.layers.Layer):
            def __init__(self, k, knn=False):
                super().__init__()
                self.k = k
                INIT

            def call(self, xyz):
                return group(xyz, self.k, self.knn)
        """
    ).replace("INIT", init)
    got = [f for f in lint_source(source, "layers.py") if f.code == "TFG101"]
    assert bool(got) is reported


@pytest.mark.parametrize(("knn", "reported"), [("False", False), ("True", True)])
def test_a_call_in_a_dead_branch_traces_nothing_in_a_third_module(
    tmp_path: Path, knn: str, reported: bool
) -> None:
    # layers.py passes knn=False to utils.group, whose `if knn:` calls cpp.knn_point.
    (tmp_path / "cpp.py").write_text("def knn_point(k, xyz):\n    print(xyz, k)\n    return xyz\n")
    (tmp_path / "utils.py").write_text(
        dedent(
            """
            from cpp import knn_point

            def group(xyz, k, knn=False):
                if knn:
                    return knn_point(k, xyz)
                return xyz
            """
        )
    )
    (tmp_path / "layers.py").write_text(
        dedent(
            """
            import tensorflow as tf

            import utils

            class SetAbstraction(tf.keras.layers.Layer):
                def call(self, xyz):
                    return utils.group(xyz, 8, KNN)
            """
        ).replace("KNN", knn)
    )
    got = {f.code for f in lint_paths([tmp_path]) if f.path.endswith("cpp.py")}
    assert got == ({"TFG101"} if reported else set())


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ('conv_block(x, {"filters": 4})', False),  # no trace passes bn_params
        ('conv_block(x, {"filters": 4}, bn_params={"axis": -1})', True),
        ('conv_block(x, {"filters": 4}, {"axis": -1})', True),
    ],
)
def test_a_flag_named_for_an_optional_argument_is_that_test(call: str, reported: bool) -> None:
    # `use_bn = bn_params is not None; if use_bn:` tests the argument, as `if bn_params:` does.
    source = dedent(
        """
        import keras

        def conv_block(x, conv_params, bn_params=None):
            use_bn = bn_params is not None
            no_bn = bn_params is None
            if use_bn:
                x = keras.layers.BatchNormalization(**bn_params)(x)  # TFG208
            if not no_bn:
                x = keras.layers.LayerNormalization()(x)  # TFG208
            return x

        class Neck(keras.layers.Layer):
            def call(self, x):
                return CALL
        """
    ).replace("CALL", call)
    got = {(line, code) for line, code in found(source)}
    assert got == (expected(source) if reported else set())
