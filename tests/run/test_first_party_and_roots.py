"""Which modules are the project's own (SPEC §1.6): a package of the run is first-party
whatever its name, and a project folder holding an ``__init__.py`` resolves its imports
both from its parent and from inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tflint_graph import Config, lint_paths
from tflint_graph.core.facts import ProjectView, may_be_project
from tflint_graph.source.modules import ModuleIndex, first_party, package_root

# Package names: plain, and one FOREIGN_PREFIXES would take for a TensorFlow library.
PACKAGES = ("demo", "tensorflow_demo")
HELPER = "def helper(x):\n    print('hi')\n    return x\n"


def _step(imports: str, call: str = "helper(x)") -> str:
    return f"import tensorflow as tf\n{imports}\n\n@tf.function\ndef step(x):\n    return {call}\n"


def _run(paths: list[Path], root: Path) -> list[tuple[str, int, str, tuple[str, ...]]]:
    return [
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code, f.chain)
        for f in lint_paths(paths, Config())
    ]


# -- 1. a first-party package named like a TensorFlow library ---------------------------


def test_first_party_tensorflow_named_package_is_followed(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "tensorflow_demo/__init__.py": "",
            "tensorflow_demo/core/__init__.py": "",
            "tensorflow_demo/core/helpers.py": HELPER,
            "tensorflow_demo/train.py": _step("from tensorflow_demo.core.helpers import helper"),
        },
    )
    assert _run([tmp_path], tmp_path) == [
        ("tensorflow_demo/core/helpers.py", 2, "TFG101", ("step()", "helper()"))
    ]


def test_tf_function_of_a_tensorflow_named_package_is_judged_at_the_call_site(
    tmp_path: Path,
) -> None:
    write_tree(
        tmp_path,
        {
            "tensorflow_demo/__init__.py": "",
            "tensorflow_demo/model.py": "import tensorflow as tf\n\n@tf.function\n"
            "def step(x):\n    return x * 2\n",
            "tensorflow_demo/run.py": "from tensorflow_demo.model import step\n\n"
            "for i in range(10):\n    step(i)\n",
        },
    )
    assert [(p, code) for p, _, code, _ in _run([tmp_path], tmp_path)] == [
        ("tensorflow_demo/run.py", "TFG303")
    ]


def test_third_party_tensorflow_package_outside_the_run_stays_foreign(tmp_path: Path) -> None:
    # A module outside the run that an import resolves to is followed (tests/run/
    # test_cross_module.py); a TensorFlow library's name is not, though a copy lies there.
    write_tree(
        tmp_path,
        {
            "tensorflow_probability/__init__.py": HELPER,
            "train.py": _step("import tensorflow_probability as tfp", "tfp.helper(x)"),
            "other.py": _step("import mine", "mine.helper(x)"),
            "mine.py": HELPER,
        },
    )
    found = _run([tmp_path / "train.py", tmp_path / "other.py"], tmp_path)
    assert found == []  # mine.py is reached, but outside the run: not reported
    assert _run([tmp_path / "train.py", tmp_path / "mine.py", tmp_path / "other.py"], tmp_path) == [
        ("mine.py", 2, "TFG101", ("step()", "helper()"))
    ]


def test_first_party_names() -> None:
    assert first_party({"tensorflow_demo", "utils", "keras"}, {"tensorflow_x", "keras", "y"}) == {
        "tensorflow_demo",
        "keras",  # a top-level module of the run: first-party whatever its name
        "tensorflow_x",
    }
    assert first_party({"builtins"}, ()) == frozenset()
    assert may_be_project("tensorflow_demo.core.f", frozenset({"tensorflow_demo"}))
    assert not may_be_project("tensorflow_probability.f", frozenset({"tensorflow_demo"}))
    assert not may_be_project("tensorflow_demo.core.f")
    assert not may_be_project("tensorflow.function", frozenset({"tensorflow_demo"}))
    assert ProjectView(first_party=frozenset({"tensorflow_demo"})).may_be_project(
        "tensorflow_demo.f"
    )


def test_index_first_party_comes_from_the_run(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "examples/__init__.py": "",
            "examples/tensorflow_demo/__init__.py": "",
            "examples/tensorflow_demo/m.py": "",
            "examples/keras/__init__.py": "",
            "tensorflow_probability/__init__.py": "",
        },
    )
    index = ModuleIndex(
        [tmp_path / "examples/tensorflow_demo/m.py", tmp_path / "examples/keras/__init__.py"]
    )
    assert index.first_party == {"tensorflow_demo"}


# -- 2. an __init__.py at the root of the linted folder ---------------------------------


@pytest.mark.parametrize(
    "imports",
    [
        "from myproject.helpers import helper",  # the package, seen from the folder's parent
        "from helpers import helper",  # the folder itself as a source root
        "import myproject.helpers as h\nhelper = h.helper",
        "from . import helpers\nhelper = helpers.helper",
    ],
)
def test_project_folder_that_is_a_package(tmp_path: Path, imports: str) -> None:
    write_tree(
        tmp_path,
        {
            "myproject/__init__.py": "",
            "myproject/helpers.py": HELPER,
            "myproject/train.py": _step(imports),
        },
    )
    assert _run([tmp_path / "myproject"], tmp_path) == [
        ("myproject/helpers.py", 2, "TFG101", ("step()", "helper()"))
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_folder_whose_name_is_no_identifier_is_no_package(tmp_path: Path, package: str) -> None:
    # A clone named `tensorflow+examples` with an __init__.py: no import can spell it.
    write_tree(
        tmp_path,
        {
            "my+repo/__init__.py": "",
            f"my+repo/{package}/__init__.py": "",
            f"my+repo/{package}/helpers.py": HELPER,
            f"my+repo/{package}/train.py": _step(f"from {package}.helpers import helper"),
        },
    )
    root = tmp_path / "my+repo"
    assert package_root(root / package / "train.py") == (root, f"{package}.train")
    assert _run([root], tmp_path) == [
        (f"my+repo/{package}/helpers.py", 2, "TFG101", ("step()", "helper()"))
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_repository_folder_that_is_a_package(tmp_path: Path, package: str) -> None:
    # The same clone named `examples`: its package is `examples.<package>` from the
    # parent, and `<package>` from the folder itself, as its modules import it.
    write_tree(
        tmp_path,
        {
            "examples/__init__.py": "",
            f"examples/{package}/__init__.py": "",
            f"examples/{package}/helpers.py": HELPER,
            f"examples/{package}/train.py": _step(f"from {package}.helpers import helper"),
        },
    )
    assert _run([tmp_path / "examples"], tmp_path) == [
        (f"examples/{package}/helpers.py", 2, "TFG101", ("step()", "helper()"))
    ]


def test_inner_root_serves_its_own_package_only(tmp_path: Path) -> None:
    # `from helpers import helper` in a script outside myproject/ does not reach
    # myproject/helpers.py: that folder is a root for its own modules only.
    write_tree(
        tmp_path,
        {
            "myproject/__init__.py": "",
            "myproject/helpers.py": HELPER,
            "scripts/train.py": _step("from helpers import helper"),
        },
    )
    assert _run([tmp_path], tmp_path) == []
    index = ModuleIndex([tmp_path / "myproject/helpers.py", tmp_path / "scripts/train.py"])
    assert index.file_of("helpers", tmp_path / "scripts/train.py") is None
    assert index.file_of("helpers", tmp_path / "myproject/__init__.py") is not None


def test_module_names_are_unchanged(tmp_path: Path) -> None:
    write_tree(tmp_path, {"myproject/__init__.py": "", "myproject/helpers.py": ""})
    index = ModuleIndex([tmp_path / "myproject/helpers.py"])
    assert index.module_of(tmp_path / "myproject/helpers.py") == "myproject.helpers"
    assert index.roots == [tmp_path.resolve()]
