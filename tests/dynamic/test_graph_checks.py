"""TFG404 (a graph without computation), TFG304 (XLA compiling again per shape) and the
graph-only checks of an XLA-compiled function, with real TensorFlow children: what a user
sees, and the near misses that must not be confirmed."""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import pytest

from tflint_graph.core.examples import TensorSpecLite
from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Attempt,
    Target,
    Verdict,
    Watch,
    confirm_module,
    verdicts_from_report,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

MODULE = textwrap.dedent(
    """\
    import tensorflow as tf

    WIDTH = 8


    @tf.function
    def names(prefix="serving"):  # L:names
        out = []
        for suffix in ("default", "logits"):
            out.append(f"{prefix}_{suffix}")
        return out


    @tf.function
    def nothing(config=None):  # L:nothing
        flat = {}
        for key, value in (config or {}).items():
            flat[key] = value
        return flat


    @tf.function
    def described(x, name="x"):  # L:described
        return "{}: {}".format(name, x)


    @tf.function
    def computes(x):  # L:computes
        return x * 2.0 + 1.0


    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, WIDTH], tf.float32)])
    def xla_unknown(x):  # L:xla_unknown
        return tf.nn.gelu(x) * tf.reduce_mean(x, axis=0)


    @tf.function(jit_compile=True)
    def xla_unsigned(q, k):  # L:xla_unsigned
        return tf.nn.softmax(tf.matmul(q, k, transpose_b=True))


    @tf.function(jit_compile=False, input_signature=[tf.TensorSpec([None, WIDTH], tf.float32)])
    def no_xla(x):  # L:no_xla
        return tf.nn.gelu(x) * tf.reduce_mean(x, axis=0)


    def _rms(x):  # L:rms
        return x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) + 1e-6)


    rms = tf.function(
        _rms, jit_compile=True, input_signature=[tf.TensorSpec([None, None, WIDTH], tf.float32)]
    )


    scale = 2.0


    @tf.function
    def noisy(x):
        return x * scale + tf.random.normal(tf.shape(x))  # L:noisy


    @tf.function
    def noisy_ignores(x):
        return x * 2.0 + tf.random.normal(tf.shape(x))  # L:ignores


    @tf.function
    def top(probs, k):
        return tf.math.top_k(probs, k=k).values  # L:top


    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([4, 4], tf.float32)])
    def unrolled(x):
        for _ in range(120):  # L:unrolled
            x = x - tf.reduce_logsumexp(x, axis=1, keepdims=True)
        return x
    """
)

L = {
    line.split("# L:")[1].strip(): number
    for number, line in enumerate(MODULE.splitlines(), start=1)
    if "# L:" in line
}


def _t(path: str, findings: list[tuple[int, str]], specs: list[Any], **kw: Any) -> Target:
    return Target(path, tuple(findings), (Attempt("guessed", tuple(specs)),), **kw)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, str], Verdict]:
    pytest.importorskip("tensorflow")
    root = tmp_path_factory.mktemp("graphs")
    path = root / "graphs.py"
    path.write_text(MODULE, encoding="utf-8")
    unknown = TensorSpecLite("float32", (None, 8))
    targets = [
        _t("names", [(L["names"], "TFG404")], [], ops=True),
        _t("nothing", [(L["nothing"], "TFG404")], [], ops=True),
        _t("described", [(L["described"], "TFG404")], [TensorSpecLite("float32", (2,))], ops=True),
        # A near miss: the static rule would not report it, the child must not confirm it.
        _t("computes", [(L["computes"], "TFG404")], [TensorSpecLite("float32", (2,))], ops=True),
        _t("xla_unknown", [(L["xla_unknown"], "TFG304")], [unknown], xla=True),
        _t(
            "xla_unsigned",
            [(L["xla_unsigned"], "TFG304")],
            [TensorSpecLite("float32", (2, 3)), TensorSpecLite("float32", (2, 3))],
            xla=True,
        ),
        _t("no_xla", [(L["no_xla"], "TFG304")], [unknown], xla=True),
        _t(
            "_rms",
            [(L["rms"], "TFG304")],
            [TensorSpecLite("float32", (None, None, 8))],
            kind="wrap",
            xla=True,
        ),
        _t(
            "unrolled",
            [(L["unrolled"], "TFG305")],
            [TensorSpecLite("float32", (4, 4))],
            loops=((L["unrolled"], L["unrolled"] + 1, 120, ""),),
        ),
    ]
    # TFG303 on a parameter the guess makes a tensor that cannot work (top_k's k): the staged
    # Python values are still called, on a fresh copy.
    targets.append(
        _t(
            "top",
            [(L["top"], "TFG303")],
            [TensorSpecLite("float32", (2, 6)), TensorSpecLite("int32", (2, 3))],
            retrace=((L["top"], "k", 1, "int"),),
        )
    )
    # TFG109 in functions that draw random numbers: compared with the seeds reset.
    for name, label in (("noisy", "noisy"), ("noisy_ignores", "ignores")):
        targets.append(
            _t(
                name,
                [(L[label], "TFG109")],
                [TensorSpecLite("float32", (3,))],
                watches=(Watch(L[label], "TFG109", "global", "scale"),),
                stale=("scale",),
            )
        )
    probe = confirm_module(path, root, targets, timeout=300)
    assert not probe.reason, probe.reason
    return probe.verdicts


def test_a_graph_of_frozen_python_results_is_confirmed_with_its_op_count(run) -> None:
    verdict = run[(L["names"], "TFG404")]
    assert verdict.status == CONFIRMED, verdict
    assert verdict.evidence.startswith("the graph traced for names() holds 4 ops and none")
    assert "0 placeholders (inputs), 2 identities (outputs), 2 constants" in verdict.evidence
    assert "called with no arguments" in verdict.evidence
    empty = run[(L["nothing"], "TFG404")]
    assert empty.status == CONFIRMED, empty
    assert "holds 0 ops" in empty.evidence


def test_a_tensor_formatted_into_a_string_builds_no_op(run) -> None:
    verdict = run[(L["described"], "TFG404")]
    assert verdict.status == CONFIRMED, verdict
    assert "1 placeholders (inputs)" in verdict.evidence


def test_a_body_that_computes_is_not_reproduced_naming_its_ops(run) -> None:
    verdict = run[(L["computes"], "TFG404")]
    assert verdict.status == NOT_REPRODUCED, verdict
    assert "2 of them computation besides its inputs and outputs (AddV2, Mul)" in (verdict.evidence)


def test_xla_with_unknown_dims_compiles_again_for_each_shape(run) -> None:
    verdict = run[(L["xla_unknown"], "TFG304")]
    assert verdict.status == CONFIRMED, verdict
    assert verdict.evidence.startswith("staged: called xla_unknown() at new shapes")
    assert "float32[3,8]: first call" in verdict.evidence
    assert "(no new trace)" in verdict.evidence
    assert "XLA compiles the function again for each new shape" in verdict.evidence


def test_xla_without_signature_costs_more_than_retracing_alone(run) -> None:
    verdict = run[(L["xla_unsigned"], "TFG304")]
    assert verdict.status == CONFIRMED, verdict
    assert "float32[3,3], float32[3,3]: first call" in verdict.evidence
    assert "(traced again)" in verdict.evidence
    assert "tracing again costs the copy without jit_compile" in verdict.evidence


def test_a_function_without_xla_is_not_reproduced(run) -> None:
    verdict = run[(L["no_xla"], "TFG304")]
    assert verdict.status == NOT_REPRODUCED, verdict
    assert "the module's own tf.function does not compile with XLA" in verdict.evidence


def test_a_wrapped_def_runs_as_the_modules_own_jit_compiled_function(run) -> None:
    verdict = run[(L["rms"], "TFG304")]
    assert verdict.status == CONFIRMED, verdict
    assert "called through the module's own tf.function rms" in verdict.evidence
    assert "float32[3,3,8]" in verdict.evidence  # both unknown dims vary


def test_an_xla_function_checked_on_its_graph_is_traced_not_compiled(run) -> None:
    verdict = run[(L["unrolled"], "TFG305")]
    assert verdict.status == CONFIRMED, verdict
    assert "(120 iterations)" in verdict.evidence
    assert "compiled with XLA (jit_compile=True) and the graph shows the effect" in (
        verdict.evidence
    )


def test_retracing_is_staged_when_the_guessed_value_of_the_parameter_fails(run) -> None:
    verdict = run[(L["top"], "TFG303")]
    assert verdict.status == CONFIRMED, verdict
    assert "called a fresh copy of top() with k=1, then k=2, then k=1 again" in verdict.evidence
    assert "tracing count 1 -> 2, one new graph per new value" in verdict.evidence


def test_a_stale_global_is_shown_in_a_function_that_draws_random_numbers(run) -> None:
    verdict = run[(L["noisy"], "TFG109")]
    assert verdict.status == CONFIRMED, verdict
    assert "seeds were reset before each compared call" in verdict.evidence
    assert "the graph kept the trace-time value" in verdict.evidence
    # Not reading the global: nothing changes, nothing is confirmed.
    ignored = run[(L["ignores"], "TFG109")]
    assert ignored.status == UNVERIFIED, ignored
    assert "neither the traced nor an eager result changed" in ignored.evidence


# -- the criteria, from made-up reports --------------------------------------------------


def _xla(rows: list[tuple[float, float, float, float, bool]], **exp: Any) -> Verdict:
    target = Target("f", ((3, "TFG304"),), kind="function", xla=True)
    shown = [
        {
            "inputs": f"float32[{i + 3},8]",
            "xla": {"first_ms": a, "warm_ms": b, "traces": [1, 2 if traced else 1]},
            "plain": {"first_ms": c, "warm_ms": d, "traces": [1, 2 if traced else 1]},
        }
        for i, (a, b, c, d, traced) in enumerate(rows)
    ]
    body = {"jit_compile": True, "own": True, "rows": shown, "nested_xla": [], **exp}
    calls = [{"exception": None, "hits": {}, "lines": []}] * 3
    attempt = {"source": "guessed", "inputs": "float32[2,8]", "calls": calls}
    attempt["experiments"] = {"xla": body}
    report = {"targets": [{"id": 0, "error": None, "chosen": 0, "attempts": [attempt]}]}
    return verdicts_from_report(report, [target])[(3, "TFG304")]


def test_xla_criterion_needs_every_new_shape_to_pay_clearly() -> None:
    assert _xla([(60.0, 0.5, 0.8, 0.5, False), (55.0, 0.5, 0.7, 0.5, False)]).status == CONFIRMED
    # One new shape cheap: timing noise or a cache, not shown either way.
    assert _xla([(60.0, 0.5, 0.8, 0.5, False), (3.0, 0.5, 0.7, 0.5, False)]).status == UNVERIFIED
    # Retracing explains the cost: the copy without XLA paid as much.
    assert _xla([(12.0, 0.5, 10.0, 0.5, True), (11.0, 0.5, 10.5, 0.5, True)]).status == (
        NOT_REPRODUCED
    )
    assert _xla([(0.6, 0.5, 0.6, 0.5, False)] * 2).status == NOT_REPRODUCED
    # Not the module's own function (dynamic mode wrapped it): the setting is not known.
    plain = _xla([(0.6, 0.5, 0.6, 0.5, False)] * 2, jit_compile=False, own=False)
    assert plain.status == UNVERIFIED


def test_no_op_criterion_counts_any_computing_op() -> None:
    target = Target("f", ((3, "TFG404"),), kind="function", ops=True)
    calls = [{"exception": None, "hits": {}, "lines": []}] * 3

    def judge(types: dict[str, int]) -> Verdict:
        exp = {"types": types, "no_work": ["Const", "Identity", "IdentityN", "NoOp", "Placeholder"]}
        attempt = {
            "source": "config",
            "inputs": "py:1",
            "calls": calls,
            "experiments": {"ops": exp},
        }
        report = {"targets": [{"id": 0, "error": None, "chosen": 0, "attempts": [attempt]}]}
        return verdicts_from_report(report, [target])[(3, "TFG404")]

    assert judge({"Placeholder": 1, "Identity": 1}).status == CONFIRMED
    assert judge({"Placeholder": 1, "ReadVariableOp": 1, "Identity": 1}).status == NOT_REPRODUCED
    assert judge({"StatefulPartitionedCall": 1, "Identity": 1}).status == NOT_REPRODUCED
