"""The demo project in fixtures/demo: the README's first command must show exactly these bugs.

Every expected finding below is a genuine trace-time bug, written next to its source line; the
correct code around it (tf.print, tf.random.uniform, Variable.assign_add, tf.TensorArray, lazy
variable creation under `if ... is None`, eager logging and printing, functools.partial and
lambda Dataset.map callbacks) must produce nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import DEMO, REPO
from tflint_graph import Config, lint_paths

# (path relative to the repo root, line, code, text the offending line contains)
EXPECTED = [
    # A benchmark that times the first call of a tf.function imported from train.py: the
    # figure is mostly tracing.
    ("fixtures/demo/bench.py", 23, "TFG403", "evaluate_batch(model, images, labels)"),
    # logger.debug in a helper of a Dataset.map callback: traced via parse_example().
    ("fixtures/demo/imageclf/data.py", 45, "TFG107", 'logger.debug("decoding %s", path)'),
    # Python randomness in an augmentation function: one rotation frozen into the graph.
    ("fixtures/demo/imageclf/data.py", 71, "TFG103", "random.randint(0, 3)"),
    # Python counter on the model in train_step: stays at 1 (or 2) however long fit() runs.
    ("fixtures/demo/imageclf/model.py", 66, "TFG106", "self.batches_seen += 1"),
    # print in train_step: prints a symbolic tensor once per trace.
    ("fixtures/demo/imageclf/model.py", 67, "TFG101", 'print("train_step loss:", loss)'),
    # Python list on the model appended in test_step: one symbolic tensor, never real losses.
    ("fixtures/demo/imageclf/model.py", 78, "TFG102", "self.eval_losses.append(loss)"),
    # Audit log written from the serving function: only while tracing / exporting.
    ("fixtures/demo/imageclf/serving.py", 37, "TFG108", 'open(self.audit_log_path, "a")'),
    ("fixtures/demo/imageclf/serving.py", 38, "TFG108", "audit_log.write("),
    ("fixtures/demo/imageclf/serving.py", 60, "TFG204", "np.percentile(top, [5, 95])"),
    ("fixtures/demo/imageclf/serving.py", 61, "TFG201", "bool(tf.reduce_any(top < 0.5))"),
    # A signature without input_signature: tf.saved_model.save raises ValueError at export.
    ("fixtures/demo/imageclf/serving.py", 66, "TFG301", "def embed(self, images):"),
    # learning_rate is rebound per epoch by finetune_head(); the graph keeps the first value.
    ("fixtures/demo/train.py", 53, "TFG109", "variable.assign_sub(learning_rate * gradient)"),
    # `global global_step` counter incremented in a tf.function.
    ("fixtures/demo/train.py", 54, "TFG105", "global_step += 1"),
    # Wall-clock reads in a tf.function: both constants, so the duration is always ~0.
    ("fixtures/demo/train.py", 61, "TFG104", "started = time.time()"),
    ("fixtures/demo/train.py", 68, "TFG104", "time.time() - started"),
    # Cross-module callee (SPEC §1.6): clip_gradients() is imported by imageclf/model.py and
    # called from ImageClassifier.train_step, so its print runs only at trace time.
    ("fixtures/demo/imageclf/utils/helpers.py", 20, "TFG101", 'print("global gradient norm:"'),
]

TEXT_LINE = re.compile(
    r"^(?P<path>[^:\s]+\.py):(?P<line>\d+):(?P<col>\d+): (?P<code>TFG\d{3}) \S.*$"
)


def _demo_findings() -> set[tuple[str, int, str]]:
    findings = lint_paths([DEMO], Config())
    return {(Path(f.path).relative_to(REPO).as_posix(), f.line, f.code) for f in findings}


@pytest.mark.parametrize("path, line, code, text", EXPECTED)
def test_expected_lines_hold_the_bug(path: str, line: int, code: str, text: str) -> None:
    # Guards the line numbers against edits of the fixture: each points at its bug.
    source_line = (REPO / path).read_text(encoding="utf-8").splitlines()[line - 1]
    assert text in source_line, f"{path}:{line} is now {source_line.strip()!r}"


def test_demo_findings_are_exactly_the_known_bugs() -> None:
    expected = {(path, line, code) for path, line, code, _ in EXPECTED}
    assert _demo_findings() == expected


def test_demo_shows_at_least_five_codes() -> None:
    codes = {code for _, _, code in _demo_findings()}
    assert len(codes) >= 5
    assert {f"TFG10{i}" for i in range(1, 10)} | {"TFG201", "TFG204"} <= codes


def test_cross_module_finding_names_the_chain_across_files() -> None:
    [finding] = [f for f in lint_paths([DEMO], Config()) if "helpers" in f.path]
    assert finding.chain == ("train_step()", "clip_gradients()")
    assert "traced via train_step() -> clip_gradients()" in finding.message
    assert finding.context is not None and "imageclf/model.py" in finding.context


def test_console_script_on_demo() -> None:
    proc = subprocess.run(
        # As the README runs it: from the repository root, the folder named relatively.
        [sys.executable, "-m", "tflint_graph", DEMO.relative_to(REPO).as_posix()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    reported = set()
    for out_line in proc.stdout.splitlines():
        match = TEXT_LINE.match(out_line)
        if match:
            reported.add((match["path"], int(match["line"]), match["code"]))
    assert reported == {(path, line, code) for path, line, code, _ in EXPECTED}
    assert f"Found {len(EXPECTED)} findings." in proc.stdout
