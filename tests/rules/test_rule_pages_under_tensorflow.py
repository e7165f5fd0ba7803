"""Every TFG2xx rule page's examples, executed under real TensorFlow.

Each TFG2xx page names, on its ``Raises:`` line, the exception TensorFlow raises for the
pattern.  Its ``## Example`` module must raise exactly that (the class or one of its bases
has that name); its ``## Use instead`` module must run cleanly.  TFG209 raises nothing
(``Raises: none (the write is lost)``): there the Example's module-level ``result`` differs
between a traced run and an eager run (``tf.config.run_functions_eagerly(True)``), and the
Use instead's agrees.

The modules are written to files before they run, because AutoGraph reads a function's
source from its file.  TensorFlow is imported once per session and only here: static
analysis never needs it, and without TensorFlow these tests are skipped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tflint_graph.output.pages import pages_dir, section_code

CODES = sorted({f"TFG20{n}" for n in range(1, 10)} | {p.stem for p in pages_dir().glob("TFG2*.md")})
_RAISES = re.compile(r"^Raises: (\S.*?)\s*$", re.M)
NO_EXCEPTION = "none"


def page_text(code: str) -> str:
    path = pages_dir() / f"{code}.md"
    if not path.is_file():
        pytest.skip(f"rules/{code}.md is not written yet")
    return path.read_text(encoding="utf-8")


def raises(text: str) -> str:
    """The exception class name on the page's ``Raises:`` line (``none`` for no exception)."""
    match = _RAISES.search(text)
    assert match, "the page has no 'Raises: <ExceptionClassName>' line"
    return re.split(r"[\s(]", match.group(1), maxsplit=1)[0]


def only_block(text: str, heading: str) -> str:
    blocks = section_code(text, heading)
    assert len(blocks) == 1, f"'## {heading}' must hold exactly one ```python block"
    return blocks[0]


@pytest.fixture(scope="module")
def tf() -> ModuleType:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    module = pytest.importorskip("tensorflow")
    module.get_logger().setLevel("ERROR")
    module.autograph.set_verbosity(0)
    return module


@pytest.fixture
def run_module(tmp_path: Path):
    """Execute a page's module from a file, in a fresh namespace; return the namespace."""
    counter = iter(range(1000))

    def run(source: str, label: str) -> dict[str, Any]:
        path = tmp_path / f"{label}_{next(counter)}.py"
        path.write_text(source, encoding="utf-8")
        namespace: dict[str, Any] = {"__name__": "tflint_example", "__file__": str(path)}
        exec(compile(source, str(path), "exec"), namespace)
        return namespace

    return run


def _class_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


# --- the pages say what TensorFlow raises ----------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_page_has_a_raises_line_after_fix(code: str) -> None:
    lines = page_text(code).splitlines()
    fix = next((i for i, line in enumerate(lines[:6]) if line.startswith("Fix: ")), None)
    assert fix is not None, "no 'Fix:' line in the page header"
    assert lines[fix + 1].startswith("Raises: "), "'Raises:' must follow the 'Fix:' line"
    name = raises(page_text(code))
    assert name == NO_EXCEPTION or re.fullmatch(r"[A-Z]\w*(Error|Exception|Warning)", name), name


# --- and TensorFlow agrees -------------------------------------------------------------


def _result(tf: ModuleType, namespace: dict[str, Any]) -> list[Any]:
    assert "result" in namespace, "the module must assign the traced result to `result`"
    return [tf.convert_to_tensor(t).numpy() for t in tf.nest.flatten(namespace["result"])]


def _same(a: list[Any], b: list[Any]) -> bool:
    import numpy as np

    return len(a) == len(b) and all(
        x.shape == y.shape and np.allclose(x, y) for x, y in zip(a, b, strict=True)
    )


def _traced_and_eager(tf: ModuleType, run_module, source: str, label: str) -> tuple[Any, Any]:
    traced = _result(tf, run_module(source, f"{label}_traced"))
    tf.config.run_functions_eagerly(True)
    try:
        eager = _result(tf, run_module(source, f"{label}_eager"))
    finally:
        tf.config.run_functions_eagerly(False)
    return traced, eager


@pytest.mark.parametrize("code", CODES)
def test_example_reproduces_the_error(code: str, tf: ModuleType, run_module) -> None:
    text = page_text(code)
    expected = raises(text)
    source = only_block(text, "Example")
    if expected == NO_EXCEPTION:
        traced, eager = _traced_and_eager(tf, run_module, source, code)
        assert not _same(traced, eager), f"traced and eager runs agree ({traced}): nothing lost"
        return
    with pytest.raises(Exception) as info:
        run_module(source, code)
    names = _class_names(info.value)
    assert expected in names, f"raised {names[0]}, not {expected}: {info.value}"


KERAS2_PAGES = [
    c
    for c in CODES
    if (pages_dir() / f"{c}.md").is_file()
    and "\n## Under Keras 2\n" in (pages_dir() / f"{c}.md").read_text(encoding="utf-8")
]


@pytest.mark.parametrize("code", KERAS2_PAGES)
def test_keras2_example_runs_cleanly_under_tf_keras(code: str, tf: ModuleType, run_module) -> None:
    """What the page says Keras 2 does (``tf_keras``, the ``tf-keras`` package) it does."""
    pytest.importorskip("tf_keras")
    run_module(only_block(page_text(code), "Under Keras 2"), f"{code}_keras2")


@pytest.mark.parametrize("code", CODES)
def test_use_instead_runs_cleanly(code: str, tf: ModuleType, run_module) -> None:
    text = page_text(code)
    source = only_block(text, "Use instead")
    if raises(text) == NO_EXCEPTION:
        traced, eager = _traced_and_eager(tf, run_module, source, code)
        assert _same(traced, eager), f"traced {traced} != eager {eager}"
        return
    run_module(source, code)
