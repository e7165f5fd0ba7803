"""Probes and verdicts of dynamic mode with real TensorFlow.

Each child run imports TensorFlow (several seconds), so every check shares two child runs:
one module holding several functions, and one run whose module cannot be imported.
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

import pytest

from tflint_graph.core.examples import TensorSpecLite
from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Attempt,
    Target,
    confirm_module,
    payload_source,
)


def _target(path: str, specs, findings, **kw) -> Target:
    return Target(path, tuple(findings), (Attempt("config", tuple(specs)),), **kw)


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

MODULE = textwrap.dedent(
    """\
    import logging
    import random
    import time

    import tensorflow as tf

    log = logging.getLogger("probe-fixture")


    @tf.function(input_signature=[tf.TensorSpec(shape=[None, 3], dtype=tf.float32)])
    def effects(x):
        print("tracing", x.shape)  # L:print
        noise = random.random()  # L:random
        started = time.time()  # L:time
        log.warning("traced")  # L:log
        tf.print("every call", tf.reduce_sum(x))  # L:tfprint
        return x * noise + started * 0.0


    @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
    def as_bool(t):
        y = t + 1.0
        if bool(t > 0):  # L:bool
            y = y * 2.0
        return y


    @tf.function
    def eager_branch(x):
        if tf.executing_eagerly():
            print("eager only")  # L:eager
        return x + 1


    def plain(x):
        return x
    """
)


def _lines(source: str) -> dict[str, int]:
    out = {}
    for number, text in enumerate(source.splitlines(), start=1):
        if "# L:" in text:
            out[text.rsplit("# L:", 1)[1].strip()] = number
    return out


L = _lines(MODULE)


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("tensorflow")
    root = tmp_path_factory.mktemp("proj")
    path = root / "fixture_mod.py"
    path.write_text(MODULE, encoding="utf-8")
    targets = [
        _target(
            "effects",
            [TensorSpecLite("float32", (None, 3))],
            [
                (L["print"], "TFG101"),
                (L["random"], "TFG103"),
                (L["time"], "TFG104"),
                (L["log"], "TFG107"),
                (L["tfprint"], "TFG101"),  # a false finding: tf.print runs every call
                (L["print"], "TFG201"),  # a false finding: nothing raises there
            ],
        ),
        _target("as_bool", [TensorSpecLite("float32", ())], [(L["bool"], "TFG201")]),
        _target("eager_branch", [TensorSpecLite("int32", (2,))], [(L["eager"], "TFG101")]),
        _target("plain", [TensorSpecLite("float32", (1,))], [(1, "TFG101")]),
        _target("missing", [], [(2, "TFG101")]),
    ]
    run = confirm_module(path, root, targets, timeout=120)
    print(f"child run: {run.duration:.1f}s, device {run.device}")
    assert not run.reason, run.reason
    return run


def test_trace_time_effects_confirmed(probe_run) -> None:
    for key, what in (
        ((L["print"], "TFG101"), "print ran 1 time while tracing with symbolic inputs"),
        ((L["random"], "TFG103"), "random.random ran 1 time"),
        ((L["time"], "TFG104"), "time.time ran 1 time"),
        ((L["log"], "TFG107"), "logging ran 1 time"),
    ):
        verdict = probe_run.verdicts[key]
        assert verdict.status == CONFIRMED, (key, verdict)
        assert what in verdict.evidence
        assert "0 times over 3 calls with values that reused the trace: trace-time only" in (
            verdict.evidence
        )
        # The sizes actually run, and the relaxed signature traced.
        assert "inputs float32[2,3] (traced as float32[None,3]) from config" in verdict.evidence
        assert verdict.inputs == "float32[2,3]"
        assert "CPU" in verdict.device or "GPU" in verdict.device


def test_near_miss_tf_print_never_confirmed(probe_run) -> None:
    verdict = probe_run.verdicts[(L["tfprint"], "TFG101")]
    assert verdict.status in (NOT_REPRODUCED, UNVERIFIED), verdict


def test_error_code_on_a_line_that_does_not_raise(probe_run) -> None:
    verdict = probe_run.verdicts[(L["print"], "TFG201")]
    assert verdict.status == NOT_REPRODUCED, verdict


def test_bool_of_tensor_raises_at_the_flagged_line(probe_run) -> None:
    verdict = probe_run.verdicts[(L["bool"], "TFG201")]
    assert verdict.status == CONFIRMED, verdict
    assert verdict.evidence.startswith(f"OperatorNotAllowedInGraphError at line {L['bool']}")


def test_eager_only_branch_is_unverified(probe_run) -> None:
    verdict = probe_run.verdicts[(L["eager"], "TFG101")]
    assert verdict.status == UNVERIFIED, verdict
    assert "never ran" in verdict.evidence


def test_unreachable_functions_unverified(probe_run) -> None:
    assert probe_run.verdicts[(1, "TFG101")].status == UNVERIFIED
    assert "not a tf.function" in probe_run.verdicts[(1, "TFG101")].evidence
    assert "not found" in probe_run.verdicts[(2, "TFG101")].evidence


def test_child_failure_marks_findings_unverified(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('boom at import')\n", encoding="utf-8")
    run = confirm_module(path, tmp_path, [_target("f", [], [(1, "TFG101")])], timeout=60)
    verdict = run.verdicts[(1, "TFG101")]
    assert verdict.status == UNVERIFIED
    assert "boom at import" in verdict.evidence


def test_payload_embeds_parameters_as_a_literal() -> None:
    hostile = {"targets": [{"path": "x'); import os; ('", "attempts": []}], "calls": 3}
    source = payload_source(hostile)
    tree = ast.parse(source)
    assign = next(
        n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "_P"
    )
    assert isinstance(assign.value, ast.Constant)
    assert json.loads(assign.value.value) == hostile


# -- guesses corrected from TensorFlow's own errors -------------------------------------------


def _tensor(dtype: str, *shape: int) -> dict:
    return {"kind": "tensor", "dtype": dtype, "shape": list(shape)}


@pytest.mark.parametrize(
    ("message", "before", "after"),
    [
        (
            "Input 'input' of 'StringLower' Op has type float32 that does not match expected "
            "type of string.",
            [_tensor("float32", 2, 3)],
            [_tensor("string", 2)],
        ),
        (
            "Input 'y' of 'Sub' Op has type float32 that does not match type int32 of argument "
            "'x'.",
            [_tensor("int32", 2), _tensor("float32", 2, 3)],
            [_tensor("float32", 2), _tensor("float32", 2, 3)],
        ),
        (
            "Input 'y' of 'Equal' Op has type int32 that does not match type int64 of argument "
            "'x'.",
            [_tensor("float32", 2, 3), _tensor("int32", 2)],
            [_tensor("float32", 2, 3), _tensor("int64", 2)],
        ),
        (
            "Dimensions must be equal, but are 3 and 3072 for '{{node MatMul}} = MatMul",
            [_tensor("float32", 2, 3)],
            [_tensor("float32", 2, 3072)],
        ),
        (
            "Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(1, 2, "
            "3), dtype=tf.float32, name=None) to TensorSpec(shape=(None, 8), dtype=tf.float32, "
            "name=None)`.",
            [_tensor("float32", 2, 3)],
            [_tensor("float32", 8)],
        ),
        (
            "Arguments `target` and `output` must have the same rank (ndim). Received: "
            "target.shape=(2,), output.shape=(2, 10)",
            [_tensor("float32", 2, 3), _tensor("int32", 2)],
            [_tensor("float32", 2, 3), _tensor("float32", 2, 10)],
        ),
        (
            "Input 0 with name 'input_layer' of layer 'functional' is incompatible with the "
            "layer: expected shape=(None, 32, 32, 3), found shape=(2, 4, 4, 3)",
            [_tensor("float32", 2, 4, 4, 3)],
            [_tensor("float32", 2, 32, 32, 3)],
        ),
        (
            "slice index 499 of dimension 0 out of bounds. for '{{node strided_slice_499}} = "
            "StridedSlice[Index=DT_INT32, T=DT_FLOAT]'",
            [_tensor("float32", 2)],
            [_tensor("float32", 500)],
        ),
        (
            "Shape must be rank 0 but is rank 1 for '{{node DecodePng}} = DecodePng[channels=3, "
            "dtype=DT_UINT8](args_0)' with input shapes: [2].",
            [_tensor("string", 2), _tensor("float32", 2, 3)],
            [{**_tensor("string"), "relaxed": []}, _tensor("float32", 2, 3)],
        ),
        (
            "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
            "tf.int32/tf.int64 tensors are valid indices, got 'image'",
            [_tensor("float32", 2, 3), _tensor("int32", 2)],
            [{"kind": "dict", "items": {"image": _tensor("float32", 2, 3)}}, _tensor("int32", 2)],
        ),
        (
            "Invalid reduction dimension 1 for input with 1 dimensions. for '{{node Sum}} = "
            "Sum[T=DT_INT32, Tidx=DT_INT32, keep_dims=false]'",
            [_tensor("int32", 2), _tensor("float32", 2, 3)],
            [_tensor("int32", 2, 4), _tensor("float32", 2, 3)],
        ),
    ],
)
def test_a_failed_guess_is_corrected_as_the_error_asks(message, before, after) -> None:
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    attempt = {"source": "guessed", "shown": "", "args": before, "kwargs": {}}
    result = {"calls": [{"exception": {"message": message}}]}
    fixed = child._adapted(attempt, result)
    assert fixed is not None
    assert fixed["args"] == after
    # Specs from the user (config, input_signature) are never second-guessed.
    assert child._adapted({**attempt, "source": "config"}, result) is None
    # An error that names nothing to correct gives no new attempt.
    other = {"calls": [{"exception": {"message": "list index out of range"}}]}
    assert child._adapted(attempt, other) is None


@pytest.mark.parametrize(
    "detail",
    [
        "'season'",
        # Keras wraps it; str() of a KeyError is the repr of that text.
        '"Exception encountered when calling Net.call().\\n\\n\\x1b[1mseason\\x1b[0m\\n\\n'
        'Arguments received by Net.call():"',
    ],
)
def test_a_key_the_body_reads_is_added_to_the_dict_guess(detail: str) -> None:
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    image = _tensor("float32", 2, 4, 4, 3)
    attempt = {
        "source": "guessed",
        "shown": "",
        "args": [{"kind": "dict", "items": {"image": image}}],
    }
    result = {"calls": [{"exception": {"type": "KeyError", "message": detail, "detail": detail}}]}
    fixed = child._adapted(attempt, result)
    assert fixed is not None
    (given,) = fixed["args"]
    assert given["items"]["image"] == image
    assert given["items"]["season"]["shape"] == [2, 3]


def test_a_dtype_error_retypes_the_parameter_its_line_names(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    import sys
    import types

    from tflint_graph.dynamic import child

    source = tmp_path / "parsing.py"
    source.write_text(
        "def parse(raw, prob):\n    image = tf.io.decode_png(raw)\n    return image, prob\n"
    )
    module = types.ModuleType("tflint_graph_test_parsing")
    module.__file__ = str(source)
    sys.modules[module.__name__] = module
    try:
        attempt = {
            "source": "guessed",
            "shown": "",
            "args": [_tensor("float32", 2), _tensor("float32", 2)],
        }
        message = (
            "Input 'contents' of 'DecodePng' Op has type float32 that does not match expected "
            "type of string."
        )
        result = {"calls": [{"exception": {"message": message, "line": 2}}]}
        target = {"module": module.__name__, "names": ["raw", "prob"]}
        fixed = child._adapted(attempt, result, target)
    finally:
        del sys.modules[module.__name__]
    assert fixed is not None
    assert fixed["args"] == [_tensor("string", 2), _tensor("float32", 2)]
    # Should the line reach the culprit through a local, every float32 is retyped next.
    assert fixed["alternative"]["args"] == [_tensor("string", 2), _tensor("string", 2)]


def test_a_dict_fingerprint_changes_with_its_contents_only() -> None:
    """``dict.items()`` makes new pairs on every read: the fingerprint must not see them."""
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    stats = {"steps": 0, "name": "run"}
    first, shown = child._fingerprint(stats)
    assert child._fingerprint(stats)[0] == first  # read again, unchanged
    assert shown == "{'steps': 0, 'name': 'run'}"
    stats["steps"] += 1
    assert child._fingerprint(stats)[0] != first
    big = {i: [i] for i in range(20)}
    assert child._fingerprint(big)[0] == child._fingerprint(big)[0]
    assert child._fingerprint(big)[1] == "len 20"
    # A list the dict holds grows without a new id: the fingerprint sees its items.
    history: dict[str, list[int]] = {"loss": []}
    before, shown = child._fingerprint(history)
    assert shown == "{'loss': len 0}"
    history["loss"].append(1)
    after, shown = child._fingerprint(history)
    assert after != before and shown == "{'loss': len 1}"
