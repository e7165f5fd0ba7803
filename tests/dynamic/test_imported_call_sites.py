"""TFG303/TFG403 at a call of a tf.function another module of the project defines: the plan
follows the import to the defining module (inputs from its source), the child calls the
imported object through the calling module's own name for it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tflint_graph import lint_paths
from tflint_graph.core.config import Config
from tflint_graph.dynamic.plan import plan_module
from tflint_graph.dynamic.verdicts import UNVERIFIED

MODEL = """
import tensorflow as tf


@tf.function
def step(x, epoch):
    return tf.reduce_sum(x) * 2.0


@tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
def bench(x):
    return tf.reduce_sum(tf.matmul(x, x, transpose_b=True))


class Trainer:
    @tf.function
    def fit_step(self, x, epoch):
        return x * 2.0
"""

CALLER = """
import time

import tensorflow as tf

from pkg import model as m
from pkg.model import Trainer, step


def train(x):
    for epoch in range(5):
        step(x, epoch)  # TFG303
    trainer = Trainer()
    for epoch in range(5):
        trainer.fit_step(x, epoch)  # TFG303


def timed(x):
    start = time.perf_counter()
    m.bench(x)  # TFG403
    return time.perf_counter() - start


def warmed(x):
    m.bench(x)
    start = time.perf_counter()
    m.bench(x)
    return time.perf_counter() - start
"""


def _project(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "model.py").write_text(textwrap.dedent(MODEL), encoding="utf-8")
    caller = root / "caller.py"
    caller.write_text(textwrap.dedent(CALLER), encoding="utf-8")
    (root / "pyproject.toml").write_text("[tool.tflint-graph]\n", encoding="utf-8")
    return caller


def _line(text: str) -> int:
    lines = textwrap.dedent(CALLER).splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def test_plan_follows_the_import_to_the_defining_module(tmp_path: Path) -> None:
    caller = _project(tmp_path)
    config = Config()
    findings = [f for f in lint_paths([tmp_path], config) if Path(f.path).name == "caller.py"]
    keys = {(f.line, f.code) for f in findings}
    stepped, timed = (_line("step(x, epoch)  #"), "TFG303"), (_line("m.bench(x)  #"), "TFG403")
    method = (_line("trainer.fit_step"), "TFG303")
    assert {stepped, timed} <= keys
    source = caller.read_text(encoding="utf-8")
    plan = plan_module(str(caller), source, findings, config, "caller", {})
    by_key = {key: t for t in plan.targets for key in t.findings}
    target = by_key[stepped]
    # Reached by the caller's own name; the parameters are those of the defining module.
    assert (target.kind, target.path, target.names) == ("function", "step", ("x", "epoch"))
    assert target.retrace == ((stepped[0], "epoch", 1, "int"),)
    assert "step() is defined in pkg.model, called here as step()" in target.note
    bench = by_key[timed]
    assert (bench.path, bench.first_call) == ("m.bench", (timed[0],))
    assert [a.source for a in bench.attempts] == ["input_signature"]
    # The warmed-up call is no finding; a method of an imported class is not reached.
    assert {key for key in keys if key[1] == "TFG403"} == {timed}
    assert method in keys
    assert plan.verdicts[method].status == UNVERIFIED
    assert "a method of a class of pkg.model" in plan.verdicts[method].evidence


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")


def test_imported_tf_functions_are_staged_through_the_callers_names(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    _project(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tflint_graph",
            ".",
            "--dynamic",
            "--no-cache",
            "--select",
            "TFG303,TFG403",
            "--output-format",
            "json",
            "--dynamic-timeout",
            "300",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    found = {
        (Path(f["path"]).name, f["line"]): f["dynamic"] for f in json.loads(proc.stdout)["findings"]
    }
    retraced = found[("caller.py", _line("step(x, epoch)  #"))]
    assert retraced["status"] == "confirmed", retraced
    assert (
        "staged: called a fresh copy of step() with epoch=1, then epoch=2, then epoch=1 again"
        in retraced["evidence"]
    )
    assert "tracing count 1 -> 2, one new graph per new value" in retraced["evidence"]
    assert "defined in pkg.model" in retraced["evidence"]
    first = found[("caller.py", _line("m.bench(x)  #"))]
    assert first["status"] == "confirmed", first
    assert "staged: a fresh copy of m.bench() took" in first["evidence"]
    assert "tracing count 0 -> 1" in first["evidence"]
