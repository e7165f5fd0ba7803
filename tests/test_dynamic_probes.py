"""Probes and verdicts of dynamic mode (issue 6 deliverable 5) with real TensorFlow.

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

from tflint_graph.dynamic.inputs import TensorSpecLite
from tflint_graph.dynamic.probes import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Target,
    confirm_module,
    payload_source,
)

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
        Target(
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
        Target("as_bool", [TensorSpecLite("float32", ())], [(L["bool"], "TFG201")]),
        Target("eager_branch", [TensorSpecLite("int32", (2,))], [(L["eager"], "TFG101")]),
        Target("plain", [TensorSpecLite("float32", (1,))], [(1, "TFG101")]),
        Target("missing", [], [(2, "TFG101")]),
    ]
    run = confirm_module(path, root, targets, timeout=120)
    print(f"child run: {run.duration:.1f}s, device {run.device}")
    assert not run.reason, run.reason
    return run


def test_trace_time_effects_confirmed(probe_run) -> None:
    for key, what in (
        ((L["print"], "TFG101"), "print ran 1 time on the first call"),
        ((L["random"], "TFG103"), "random.random ran 1 time"),
        ((L["time"], "TFG104"), "time.time ran 1 time"),
        ((L["log"], "TFG107"), "logging ran 1 time"),
    ):
        verdict = probe_run.verdicts[key]
        assert verdict.status == CONFIRMED, (key, verdict)
        assert what in verdict.evidence
        assert "0 times over 2 later calls: trace-time only" in verdict.evidence
        assert "tracing count 1" in verdict.evidence
        assert "CPU" in verdict.evidence or "GPU" in verdict.evidence


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
    run = confirm_module(path, tmp_path, [Target("f", [], [(1, "TFG101")])], timeout=60)
    verdict = run.verdicts[(1, "TFG101")]
    assert verdict.status == UNVERIFIED
    assert "boom at import" in verdict.evidence


def test_payload_embeds_parameters_as_a_literal() -> None:
    hostile = {"targets": [{"function": "x'); import os; ('", "specs": []}], "calls": 3}
    source = payload_source(hostile)
    tree = ast.parse(source)
    assign = next(
        n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "_P"
    )
    assert isinstance(assign.value, ast.Call)
    assert json.loads(ast.literal_eval(assign.value.args[0])) == hostile
