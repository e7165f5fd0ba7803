"""``--fix`` and ``--diff``: automatic fixes, which the rules declare (safe ones for TFG101
and TFG209, unsafe ones for TFG103, TFG301 and TFG402) and ``tflint_graph.output.fix``
applies (the safe ones unless asked for unsafe ones too)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_support import codes_in, invoke, write_tree
from tests.helpers import dedent
from tflint_graph import lint_source
from tflint_graph.checks import ALL_RULES, Rule
from tflint_graph.checks.tensorarray_write_discarded import TensorArrayWriteDiscarded
from tflint_graph.output import fix as fix_module
from tflint_graph.output.fix import FIXERS, fix_source


def fixed(source: str) -> str:
    """``source`` after fixing every finding a plain lint reports."""
    text, _ = fix_source(source, lint_source(source, "m.py"))
    return text


def codes(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "m.py"))


PRINTS = dedent(
    """
    import sys
    import tensorflow as tf

    @tf.function
    def step(x):
        print("loss:", x)  # show progress
        print(x, sep=", ", end="!\\n", file=sys.stderr)
        print(
            "multi",
            x,
        )
        return x
    """
)


def test_print_becomes_tf_print_with_keywords_mapped() -> None:
    assert fixed(PRINTS) == PRINTS.replace("    print(", "    tf.print(").replace(
        "file=sys.stderr", "output_stream=sys.stderr"
    )


@pytest.mark.parametrize(
    ("imports", "alias"),
    [
        ("import tensorflow as tf2", "tf2"),
        ("import tensorflow", "tensorflow"),
        ("import numpy as np\nimport tensorflow as tf", "tf"),
    ],
)
def test_print_uses_the_modules_own_tensorflow_alias(imports: str, alias: str) -> None:
    source = f"{imports}\n\n@{alias}.function\ndef step(x):\n    print(x)\n    return x\n"
    assert f"    {alias}.print(x)\n" in fixed(source)


@pytest.mark.parametrize(
    "source",
    [
        # No `import tensorflow as X` binding: the fix would need a new import.
        "from tensorflow import function\n\n@function\ndef step(x):\n    print(x)\n",
        # `tf` is shadowed inside the function.
        "import tensorflow as tf\n\n@tf.function\ndef step(x, tf=None):\n    print(x)\n",
        # Arguments tf.print has no equivalent for.
        "import tensorflow as tf\n\n@tf.function\ndef step(x):\n    print(x, flush=True)\n",
        "import tensorflow as tf\n\n@tf.function\ndef step(x, f):\n    print(x, file=f)\n",
        "import tensorflow as tf\n\n@tf.function\ndef step(x, kw):\n    print(x, **kw)\n",
        "import tensorflow as tf\n\n@tf.function\ndef step(x):\n    print(x, sep=None)\n",
    ],
)
def test_unsafe_print_fixes_are_skipped(source: str) -> None:
    assert codes(source) != []
    assert fixed(source) == source


def test_file_sys_stdout_via_from_import_is_mapped() -> None:
    source = dedent(
        """
        from sys import stdout
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x, file=stdout)
        """
    )
    assert "    tf.print(x, output_stream=stdout)\n" in fixed(source)


def test_tensorarray_write_is_rebound() -> None:
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def fill(n, x):
            ta = tf.TensorArray(tf.float32, size=n)
            for i in tf.range(n):
                ta.write(i, x)  # keep me
            ta.scatter([0], [x]); ta.unstack(x)
            return ta.stack()
        """
    )
    assert fixed(source) == source.replace("ta.write(", "ta = ta.write(").replace(
        "ta.scatter([0], [x]); ta.unstack(x)", "ta = ta.scatter([0], [x]); ta = ta.unstack(x)"
    )


def test_tensorarray_attribute_receiver_is_not_fixed() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class Acc(tf.Module):
            @tf.function
            def fill(self, x):
                self.ta = tf.TensorArray(tf.float32, size=1)
                self.ta.write(0, x)
                return self.ta.stack()
        """
    )
    assert "TFG209" in [c for _, c in codes(source)]
    assert fixed(source) == source


def test_fixing_removes_exactly_the_fixed_findings_and_is_idempotent() -> None:
    source = dedent(
        """
        import random
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x, flush=True)
            print(x)
            ta = tf.TensorArray(tf.float32, size=1)
            ta.write(0, x)
            return x + random.random() + ta.stack()
        """
    )
    before = codes(source)
    once, count = fix_source(source, lint_source(source, "m.py"))
    assert count == 2
    after = codes(once)
    assert [c for c in before if c not in after] == [(7, "TFG101"), (9, "TFG209")]
    assert sorted(after) == [(6, "TFG101"), (10, "TFG103")]
    assert fix_source(once, lint_source(once, "m.py")) == (once, 0)


def test_noqa_suppressed_findings_are_not_fixed() -> None:
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x)  # noqa: TFG101
            print(x)
        """
    )
    assert fixed(source) == source.replace("    print(x)\n", "    tf.print(x)\n")


def test_nested_fixes_build_on_each_other() -> None:
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def step(x):
            ta = tf.TensorArray(tf.float32, size=1)
            ta.write(0, print(print(x)))
            return ta.stack()
        """
    )
    # The outer print shows print()'s None; tf.print of tf.print shows the print op
    # (`<tf.Operation 'PrintV2' type=PrintV2>` under TensorFlow 2.21): unsafe.
    assert fixed(source) == source.replace(
        "ta.write(0, print(print(x)))", "ta = ta.write(0, print(tf.print(x)))"
    )
    text, count = fix_source(source, lint_source(source, "m.py"), unsafe=True)
    assert (text, count) == (
        source.replace("ta.write(0, print(print(x)))", "ta = ta.write(0, tf.print(tf.print(x)))"),
        3,
    )


# --- where fixes come from --------------------------------------------------------------


def test_every_rule_with_a_fix_declares_its_safety() -> None:
    for rule in ALL_RULES:
        has_fix = rule.fix.__func__ is not Rule.fix.__func__  # type: ignore[attr-defined]
        assert rule.FIX_SAFETY in (None, "safe", "unsafe"), rule.code
        assert (rule.FIX_SAFETY is not None) == has_fix, rule.code


def test_fixers_are_the_rules_that_declare_a_fix() -> None:
    assert {r.code: r for r in ALL_RULES if r.FIX_SAFETY is not None} == FIXERS
    declared = {code: rule.FIX_SAFETY for code, rule in FIXERS.items()}
    assert declared == {
        "TFG101": "safe",
        "TFG209": "safe",
        "TFG103": "unsafe",
        "TFG301": "unsafe",
        "TFG402": "unsafe",
    }


# --- the command line ------------------------------------------------------------------

STEP = dedent(
    """
    import tensorflow as tf

    @tf.function
    def step(x):
        print(x)
        return x
    """
)


def test_fix_writes_the_file_and_reports_what_remains(tmp_path: Path) -> None:
    source = STEP.replace("    return x\n", "    print(x, flush=True)\n    return x\n")
    write_tree(tmp_path, {"m.py": source})
    result = invoke(["--fix", "m.py"], tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "m.py").read_text() == source.replace("    print(x)\n", "    tf.print(x)\n")
    assert "m.py:6:5: TFG101" in result.output
    assert "m.py:5:" not in result.output
    assert "Found 1 finding." in result.output
    assert "Fixed 1 finding." in result.output


def test_fix_when_everything_is_fixed_exits_0_and_second_run_changes_nothing(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"m.py": STEP})
    first = invoke(["--fix", "m.py"], tmp_path)
    assert first.exit_code == 0
    assert "Fixed 1 finding." in first.output
    path = tmp_path / "m.py"
    text = path.read_bytes()
    os.utime(path, (1_000_000, 1_000_000))
    second = invoke(["--fix", "m.py"], tmp_path)
    assert second.exit_code == 0
    assert "Fixed 0 findings." in second.output
    assert path.read_bytes() == text
    assert path.stat().st_mtime == 1_000_000


def test_file_with_nothing_to_fix_is_never_rewritten(tmp_path: Path) -> None:
    source = STEP.replace("print(x)", "print(x, flush=True)")
    write_tree(tmp_path, {"m.py": source, "broken.py": "def f(:\n"})
    for name in ("m.py", "broken.py"):
        os.utime(tmp_path / name, (1_000_000, 1_000_000))
    result = invoke(["--fix", "."], tmp_path)
    assert result.exit_code == 1
    assert "TFG001" in result.output
    for name in ("m.py", "broken.py"):
        assert (tmp_path / name).stat().st_mtime == 1_000_000
    assert (tmp_path / "broken.py").read_text() == "def f(:\n"


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/m.py": STEP})
    result = invoke(["--diff", "pkg"], tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:3] == [
        "--- a/pkg/m.py",
        "+++ b/pkg/m.py",
        "@@ -2,5 +2,5 @@",
    ]
    assert "-    print(x)\n+    tf.print(x)\n" in result.stdout
    assert "Would fix 1 finding." in result.stderr
    assert (tmp_path / "pkg/m.py").read_text() == STEP


def test_diff_without_changes_exits_0(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": STEP.replace("print(x)", "tf.print(x)")})
    result = invoke(["--diff", "m.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout == ""


def test_select_and_ignore_restrict_fixing(tmp_path: Path) -> None:
    source = STEP.replace(
        "    return x\n",
        "    ta = tf.TensorArray(tf.float32, size=1)\n    ta.write(0, x)\n    return x\n",
    )
    write_tree(tmp_path, {"m.py": source})
    invoke(["--fix", "--ignore", "TFG101", "m.py"], tmp_path)
    text = (tmp_path / "m.py").read_text()
    assert "    print(x)\n" in text and "    ta = ta.write(0, x)\n" in text
    invoke(["--fix", "--select", "TFG209", "m.py"], tmp_path)
    assert "    print(x)\n" in (tmp_path / "m.py").read_text()
    invoke(["--fix", "m.py"], tmp_path)
    assert "    tf.print(x)\n" in (tmp_path / "m.py").read_text()


def test_crlf_bom_and_encoding_are_kept(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + STEP.replace("print(x)", 'print("é", x)')
    data = source.replace("\n", "\r\n").encode("latin-1")
    write_tree(tmp_path, {"latin.py": data, "bom.py": b"\xef\xbb\xbf" + STEP.encode()})
    assert invoke(["--fix", "."], tmp_path).exit_code == 0
    assert (tmp_path / "latin.py").read_bytes() == data.replace(b"print(", b"tf.print(")
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + STEP.replace(
        "print(", "tf.print("
    ).encode()


def test_fix_that_would_not_parse_leaves_the_file_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"m.py": STEP})
    monkeypatch.setattr(fix_module, "_reparses", lambda source: False)
    result = invoke(["--fix", "m.py"], tmp_path)
    assert result.exit_code == 1
    assert (tmp_path / "m.py").read_text() == STEP
    assert "Fixed 0 findings." in result.output


def test_a_source_libcst_cannot_write_back_as_read_is_not_fixed() -> None:
    # libcst drops a form feed before the first statement: fixing would change that line too.
    source = '\f"""Doc."""\nimport tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n'
    findings = [f for f in lint_source(source, "m.py") if f.code == "TFG101"]
    assert findings
    assert fix_source(source, findings) == (source, 0)


# --- fix safety: --fix applies safe fixes, --unsafe-fixes unsafe ones too ------------------

# TFG101 at 5:5 (print: a safe fix) and TFG209 at 7:5 (a safe fix, made unsafe below).
BOTH = dedent(
    """
    import tensorflow as tf

    @tf.function
    def fill(x):
        print(x)
        ta = tf.TensorArray(tf.float32, size=1)
        ta.write(0, x)
        return ta.stack()
    """
)


@pytest.fixture
def unsafe_tfg209(monkeypatch: pytest.MonkeyPatch) -> None:
    """TFG209's fix declared unsafe: what the policy does with any rule's unsafe fix."""
    monkeypatch.setattr(TensorArrayWriteDiscarded, "FIX_SAFETY", "unsafe")


def test_findings_say_which_have_a_fix_and_how_safe(unsafe_tfg209: None) -> None:
    findings = lint_source(BOTH, "m.py")
    assert {(f.line, f.code): f.fix_safety for f in findings} == {
        (5, "TFG101"): "safe",
        (7, "TFG209"): "unsafe",
    }
    assert fix_source(BOTH, findings) == (BOTH.replace("print(", "tf.print("), 1)
    both = BOTH.replace("print(", "tf.print(").replace("ta.write(", "ta = ta.write(")
    assert fix_source(BOTH, findings, unsafe=True) == (both, 2)


def test_marker_and_summary_count_safe_and_unsafe_fixes(
    tmp_path: Path, unsafe_tfg209: None
) -> None:
    write_tree(tmp_path, {"m.py": BOTH})
    lines = invoke(["m.py"], tmp_path).stdout.splitlines()
    assert lines[0].startswith("m.py:5:5: TFG101 [*] warning:")
    assert lines[1].startswith("m.py:7:5: TFG209 error:")  # not applied by --fix: no marker
    assert lines[-1] == "[*] 1 fixable with --fix (1 more with --unsafe-fixes)."
    lines = invoke(["--unsafe-fixes", "m.py"], tmp_path).stdout.splitlines()
    assert lines[1].startswith("m.py:7:5: TFG209 [*] error:")
    assert lines[-1] == "[*] 2 fixable with --fix --unsafe-fixes."


def test_fix_applies_unsafe_fixes_only_with_unsafe_fixes(
    tmp_path: Path, unsafe_tfg209: None
) -> None:
    write_tree(tmp_path, {"m.py": BOTH})
    diff = invoke(["--diff", "m.py"], tmp_path)
    assert "+    ta = ta.write(0, x)" not in diff.stdout and "+    tf.print(x)" in diff.stdout
    assert (
        "+    ta = ta.write(0, x)" in invoke(["--diff", "--unsafe-fixes", "m.py"], tmp_path).stdout
    )
    safe = invoke(["--fix", "m.py"], tmp_path)
    assert (tmp_path / "m.py").read_text() == BOTH.replace("print(", "tf.print(")
    assert codes_in(safe.stdout) == [("m.py", 7, 5, "TFG209")]
    assert safe.stdout.splitlines()[-2:] == [
        "Fixed 1 finding.",
        "No safe fixes available (1 unsafe fix with --fix --unsafe-fixes).",
    ]
    unsafe = invoke(["--fix", "--unsafe-fixes", "m.py"], tmp_path)
    assert unsafe.exit_code == 0
    assert "    ta = ta.write(0, x)\n" in (tmp_path / "m.py").read_text()


def test_show_fixes_lists_the_fixes_applied_and_available(
    tmp_path: Path, unsafe_tfg209: None
) -> None:
    write_tree(tmp_path, {"pkg/m.py": BOTH, "pkg/n.py": BOTH})
    shown = invoke(["--show-fixes", "pkg"], tmp_path).stdout.splitlines()
    start = shown.index("Fixable with --fix, 2 findings:")
    assert shown[start:] == [
        "Fixable with --fix, 2 findings:",
        "- pkg/m.py:",
        "    1 x TFG101 (print-in-traced)",
        "- pkg/n.py:",
        "    1 x TFG101 (print-in-traced)",
        "Fixable only with --fix --unsafe-fixes, 2 findings:",
        "- pkg/m.py:",
        "    1 x TFG209 (tensorarray-write-discarded)",
        "- pkg/n.py:",
        "    1 x TFG209 (tensorarray-write-discarded)",
    ]
    fixed = invoke(["--fix", "--unsafe-fixes", "--show-fixes", "pkg/m.py"], tmp_path)
    assert fixed.stdout.splitlines() == [
        "All checks passed!",
        "Fixed 2 findings:",
        "- pkg/m.py:",
        "    1 x TFG101 (print-in-traced)",
        "    1 x TFG209 (tensorarray-write-discarded)",
    ]


def test_the_fix_marker_comes_from_the_findings_not_a_second_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[*]`` and the summary's counts read ``Finding.fix_safety``, decided while linting
    (and cached with the findings): printing them never parses a file again, cold or warm,
    and the cache holds nothing of its own for them."""
    write_tree(tmp_path, {"m.py": BOTH})

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(fix_module, "_fix_text", no_parse)
    cold = invoke(["m.py"], tmp_path)
    assert cold.exit_code == 1, cold.stderr
    assert cold.stdout.splitlines()[-1] == "[*] 2 fixable with --fix."
    assert invoke(["m.py"], tmp_path).stdout == cold.stdout  # warm: from the cache
    assert invoke(["--no-cache", "m.py"], tmp_path).stdout == cold.stdout
    entries = [json.loads(p.read_text()) for p in (tmp_path / ".tflint-graph-cache").glob("??/*")]
    assert entries and not any("fixes" in entry for entry in entries)
    assert not (tmp_path / ".tflint-graph-cache" / "fixes").exists()
