"""Fix safety, as ruff has it: every finding says whether it has an automatic fix and how safe
that is (``Finding.fix_safety``); safe fixes are applied by default, unsafe ones only when
asked (``unsafe=True``).  The unsafe fixes of TFG103, TFG301 and TFG402: the exact text they
write, and that what they write is not reported again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import invoke, write_tree
from tests.helpers import REPO, dedent
from tflint_graph import lint_source
from tflint_graph.output.fix import fix_source, plan_fixes


def fix(source: str, unsafe: bool = True) -> str:
    text, _ = fix_source(source, lint_source(source, "m.py"), unsafe=unsafe)
    return text


def safeties(source: str, code: str) -> list[str | None]:
    return [f.fix_safety for f in lint_source(source, "m.py") if f.code == code]


# --- TFG103: Python and NumPy draws -> tf.random --------------------------------------------

DRAW = dedent(
    """
    import random
    import numpy as np
    import tensorflow as tf

    @tf.function
    def step(x, n):
        return DRAW
    """
)
DRAW_LINE = DRAW.splitlines().index("    return DRAW")

DRAWS = [
    ("random.random()", "tf.random.uniform([])"),
    ("random.uniform(-1, 1)", "tf.random.uniform([], -1, 1)"),
    ("random.uniform(a=0.5, b=2.0)", "tf.random.uniform([], 0.5, 2.0)"),
    ("random.randint(1, 6)", "tf.random.uniform([], 1, 7, dtype=tf.int32)"),
    ("random.randint(0, n - 1)", "tf.random.uniform([], 0, n - 1 + 1, dtype=tf.int32)"),
    (
        "random.randint(0, n if n else 2)",
        "tf.random.uniform([], 0, (n if n else 2) + 1, dtype=tf.int32)",
    ),
    ("random.randrange(10)", "tf.random.uniform([], 0, 10, dtype=tf.int32)"),
    ("random.randrange(2, n)", "tf.random.uniform([], 2, n, dtype=tf.int32)"),
    ("random.gauss(0.0, 2.0)", "tf.random.normal([], 0.0, 2.0)"),
    ("random.normalvariate(1.0, 0.5)", "tf.random.normal([], 1.0, 0.5)"),
    ("np.random.normal()", "tf.random.normal([])"),
    ("np.random.normal(size=3)", "tf.random.normal([3])"),
    ("np.random.normal(1.0, 2.0, (2, 3))", "tf.random.normal([2, 3], 1.0, 2.0)"),
    ("np.random.normal(scale=0.1, size=None)", "tf.random.normal([], stddev=0.1)"),
    ("np.random.uniform(0, 1, size=[4])", "tf.random.uniform([4], 0, 1)"),
    ("np.random.uniform(high=5.0)", "tf.random.uniform([], maxval=5.0)"),
    ("np.random.rand(2, 3)", "tf.random.uniform([2, 3])"),
    ("np.random.randn()", "tf.random.normal([])"),
    ("np.random.random(5)", "tf.random.uniform([5])"),
    ("np.random.standard_normal((2,))", "tf.random.normal([2])"),
    ("np.random.randint(5, size=2)", "tf.random.uniform([2], 0, 5, dtype=tf.int32)"),
    ("np.random.randint(1, 7)", "tf.random.uniform([], 1, 7, dtype=tf.int32)"),
]


@pytest.mark.parametrize(("draw", "want"), DRAWS)
def test_draw_becomes_the_tf_random_draw_of_the_same_distribution(draw: str, want: str) -> None:
    source = DRAW.replace("DRAW", draw)
    assert safeties(source, "TFG103") == ["unsafe"]
    fixed = fix(source)
    assert fixed.splitlines()[DRAW_LINE] == f"    return {want}"
    assert fixed == source.replace(draw, want)
    assert safeties(fixed, "TFG103") == []


def test_draws_are_unsafe_so_the_default_leaves_them() -> None:
    source = DRAW.replace("DRAW", "random.random()")
    assert fix(source, unsafe=False) == source


@pytest.mark.parametrize(
    "draw",
    [
        "random.choice([1, 2])",  # no tf.random counterpart of the same distribution
        "random.shuffle(x)",
        "random.randrange(0, 10, 2)",  # a step
        "np.random.normal(size=n)",  # n an int (shape [n]) or a tuple: not written out
        "np.random.randint(5, dtype=np.int8)",
        "np.random.permutation(10)",
        "np.random.default_rng().normal()",  # unseeded: drawn from the OS once
        "random.uniform(*x)",
    ],
)
def test_draw_without_an_exact_counterpart_has_no_fix(draw: str) -> None:
    source = DRAW.replace("DRAW", draw)
    assert safeties(source, "TFG103") == [None]
    assert fix(source) == source


def test_draw_without_a_tensorflow_binding_has_no_fix() -> None:
    source = dedent(
        """
        import random
        from tensorflow import function

        @function
        def step(x):
            return x + random.random()
        """
    )
    assert safeties(source, "TFG103") == [None]
    assert fix(source) == source


def test_draw_uses_the_modules_alias_and_a_from_import() -> None:
    source = dedent(
        """
        from random import randint
        import tensorflow as tf2

        @tf2.function
        def step(x):
            return x + randint(0, 3)
        """
    )
    assert fix(source) == source.replace(
        "randint(0, 3)", "tf2.random.uniform([], 0, 4, dtype=tf2.int32)"
    )


# --- TFG402: the switch is deleted ----------------------------------------------------------

SWITCH = "tf.config.run_functions_eagerly(True)"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # At module level: the line goes, the blank lines around it stay as they were.
        (
            f"import tensorflow as tf\n\n{SWITCH}\n\n\ndef f():\n    pass\n",
            "import tensorflow as tf\n\n\ndef f():\n    pass\n",
        ),
        # The only statement of a block: `pass`, and the comment above it stays.
        (
            f"import tensorflow as tf\n\ndef main():\n    # debug\n    {SWITCH}  # why\n",
            "import tensorflow as tf\n\ndef main():\n    # debug\n    pass\n",
        ),
        # Statements around it: they stay, and so does the comment above it.
        (
            f"import tensorflow as tf\n\ndef main():\n    a = 1\n    # eager\n    {SWITCH}\n    return a\n",  # noqa: E501
            "import tensorflow as tf\n\ndef main():\n    a = 1\n    # eager\n    return a\n",
        ),
        (
            f"import tensorflow as tf\n\ndef main():\n    a = 1\n    # eager\n    {SWITCH}\n",
            "import tensorflow as tf\n\ndef main():\n    a = 1\n    # eager\n",
        ),
        # On one line with others, and a one-line body.
        (f"import tensorflow as tf\na = 1; {SWITCH}\n", "import tensorflow as tf\na = 1\n"),
        (
            f"import tensorflow as tf\nif True: {SWITCH}\n",
            "import tensorflow as tf\nif True: pass\n",
        ),
    ],
)
def test_switch_statement_is_deleted(before: str, after: str) -> None:
    assert safeties(before, "TFG402") == ["unsafe"]
    assert fix(before, unsafe=False) == before
    assert fix(before) == after
    assert safeties(after, "TFG402") == []


def test_switch_inside_an_expression_has_no_fix() -> None:
    source = f"import tensorflow as tf\n\nok = {SWITCH}\n"
    assert safeties(source, "TFG402") == [None]
    assert fix(source) == source


# --- TFG301: the guessed input_signature ----------------------------------------------------

EXPORT = dedent(
    """
    import tensorflow as tf

    class Scaler(tf.Module):
        DECORATOR
        def serve(self, x):
            return x[:, 0] * 2.0

    m = Scaler()
    tf.saved_model.save(m, "/tmp/scaler", signatures=m.serve)
    """
)
SPEC = 'input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32, name="x")]'


@pytest.mark.parametrize(
    ("decorator", "want"),
    [
        ("@tf.function", f"@tf.function({SPEC})"),
        ("@tf.function()", f"@tf.function({SPEC})"),
        ("@tf.function(jit_compile=True)", f"@tf.function(jit_compile=True, {SPEC})"),
        ("@tf.compat.v2.function", f"@tf.compat.v2.function({SPEC})"),
    ],
)
def test_guessed_signature_is_added_to_the_decorator(decorator: str, want: str) -> None:
    source = EXPORT.replace("DECORATOR", decorator)
    findings = [f for f in lint_source(source, "m.py") if f.code == "TFG301"]
    assert [(f.fix_safety, f.fix) for f in findings] == [("unsafe", SPEC)]
    assert fix(source, unsafe=False) == source
    fixed = fix(source)
    assert fixed == source.replace(decorator, want)
    assert safeties(fixed, "TFG301") == []


def test_guessed_signature_after_a_trailing_comma() -> None:
    source = EXPORT.replace("DECORATOR", "@tf.function(\n        reduce_retracing=True,\n    )")
    assert fix(source) == source.replace(
        "reduce_retracing=True,\n", f"reduce_retracing=True, {SPEC},\n"
    )


@pytest.mark.parametrize(
    "source",
    [
        # Made a tf.function by a call, not a decorator: left for you.
        dedent(
            """
            import tensorflow as tf

            def predict(x):
                return x * 2.0

            wrapped = tf.function(predict)
            tf.saved_model.save(tf.Module(), "/tmp/m", signatures={"p": wrapped})
            """
        ),
        # Keyword-only parameters an input_signature cannot describe.
        EXPORT.replace("def serve(self, x):", "def serve(self, x, *, scale):").replace(
            "DECORATOR", "@tf.function"
        ),
    ],
)
def test_signature_that_cannot_be_added_has_no_fix(source: str) -> None:
    found = [f for f in lint_source(source, "m.py") if f.code == "TFG301"]
    assert found and all(f.fix_safety is None for f in found)
    assert fix(source) == source


# --- the safe/unsafe split -------------------------------------------------------------------

MIXED = dedent(
    """
    import random
    import tensorflow as tf

    tf.config.run_functions_eagerly(True)

    @tf.function
    def step(x):
        print("x", x)
        print("x", x, x.shape)
        ta = tf.TensorArray(tf.float32, size=1)
        ta.write(0, x)
        return x + random.random() + ta.stack()
    """
)


def test_default_applies_the_safe_fixes_and_leaves_the_unsafe_ones() -> None:
    assert sorted((f.line, f.code, f.fix_safety) for f in lint_source(MIXED, "m.py")) == [
        (4, "TFG402", "unsafe"),
        (8, "TFG101", "safe"),
        (9, "TFG101", "unsafe"),
        (11, "TFG209", "safe"),
        (12, "TFG103", "unsafe"),
    ]
    safe, count = fix_source(MIXED, lint_source(MIXED, "m.py"))
    assert count == 2
    assert safe == MIXED.replace('    print("x", x)\n', '    tf.print("x", x)\n').replace(
        "ta.write(0, x)", "ta = ta.write(0, x)"
    )
    every, count = fix_source(MIXED, lint_source(MIXED, "m.py"), unsafe=True)
    assert count == 5
    assert every == (
        safe.replace("tf.config.run_functions_eagerly(True)\n\n", "")
        .replace('print("x", x, x.shape)', 'tf.print("x", x, x.shape)')
        .replace("random.random()", "tf.random.uniform([])")
    )
    assert [f for f in lint_source(every, "m.py") if f.fix_safety is not None] == []


def test_plan_fixes_writes_unsafe_fixes_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(MIXED)
    findings = lint_source(MIXED, str(path))
    (safe,) = plan_fixes(findings)
    (every,) = plan_fixes(findings, unsafe=True)
    assert (safe.count, every.count) == (2, 5)
    assert "random.random()" in safe.fixed and "random.random()" not in every.fixed


def test_json_output_carries_each_findings_fix_and_its_safety(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": MIXED})
    result = invoke(["--output-format", "json", "m.py"], tmp_path)
    found = [(f["line"], f["code"], f["fix_safety"]) for f in json.loads(result.output)["findings"]]
    assert found == [
        (4, "TFG402", "unsafe"),
        (8, "TFG101", "safe"),
        (9, "TFG101", "unsafe"),
        (11, "TFG209", "safe"),
        (12, "TFG103", "unsafe"),
    ]


def test_a_fix_found_while_linting_is_applied_on_every_fixture() -> None:
    # The fixability each finding carries is decided on the analysis's model; the rewrite on
    # a fresh parse: both must agree, so every finding said to be fixable gets fixed.
    checked = 0
    for path in sorted((REPO / "tests" / "fixtures" / "cases").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        findings = lint_source(source, path.name)
        fixable = [f for f in findings if f.fix_safety is not None]
        if not fixable:
            continue
        fixed, count = fix_source(source, findings, unsafe=True)
        assert count == len(fixable), path.name
        assert [f for f in lint_source(fixed, path.name) if f.fix_safety] == [], path.name
        checked += 1
    assert checked >= 5


# --- under TensorFlow: what the unsafe fixes write runs, and does what they say ------------


@pytest.fixture(scope="module")
def tf():  # type: ignore[no-untyped-def]
    module = pytest.importorskip("tensorflow")
    module.get_logger().setLevel("ERROR")
    return module


def test_fixed_draws_change_from_call_to_call(tf, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = dedent(
        """
        import random
        import numpy as np
        import tensorflow as tf

        @tf.function
        def noisy(x):
            return x + np.random.normal(0.0, 1.0, size=(3,)) + random.uniform(0, 9)
        """
    )
    results = {}
    for label, text in (("before", source), ("after", fix(source))):
        path = tmp_path / f"{label}.py"
        path.write_text(text)
        namespace: dict = {"__file__": str(path)}
        exec(compile(text, str(path), "exec"), namespace)
        x = tf.zeros([3])
        first, second = namespace["noisy"](x).numpy(), namespace["noisy"](x).numpy()
        results[label] = bool((first == second).all())
    assert results == {"before": True, "after": False}  # frozen draw, then a new one per call


def test_fixed_draw_is_a_tensor_which_is_why_it_is_unsafe(tf) -> None:  # type: ignore[no-untyped-def]
    # `x + random.randint(0, 9)` adds a Python int to a float32 tensor; the int32 draw can't.
    source = DRAW.replace("DRAW", "x + random.randint(0, 9)")
    namespace: dict = {}
    exec(fix(source), namespace)
    with pytest.raises(TypeError, match="int32"):
        namespace["step"](tf.zeros([3]), 1)


def test_fixed_export_saves_and_serves(tf, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = EXPORT.replace("DECORATOR", "@tf.function").replace("/tmp/scaler", str(tmp_path))
    fixed = fix(source)
    path = tmp_path / "export.py"
    path.write_text(fixed)
    exec(compile(fixed, str(path), "exec"), {"__file__": str(path)})
    loaded = tf.saved_model.load(str(tmp_path))
    served = loaded.signatures["serving_default"](x=tf.ones([2, 3]))
    assert [float(v) for v in next(iter(served.values())).numpy()] == [2.0, 2.0]


@pytest.mark.parametrize(
    ("draw", "advice"),
    [
        ("random.random()", "tf.random.uniform([])"),
        ("np.random.random(1)", "tf.random.uniform([1])"),  # a draw of that shape
        ("np.random.random(shape)", "tf.random.uniform(shape)"),
    ],
)
def test_the_advice_keeps_the_shape_of_the_draw(draw: str, advice: str) -> None:
    source = dedent(
        f"""
        import random
        import numpy as np
        import tensorflow as tf

        @tf.function
        def noisy(x, shape=(2,)):
            return x + {draw}
        """
    )
    (finding,) = [f for f in lint_source(source) if f.code == "TFG103"]
    assert finding.message.endswith(f"use {advice}")
