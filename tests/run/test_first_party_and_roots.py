"""Which modules are the project's own (SPEC §1.6): a project folder holding an
``__init__.py`` resolves its imports both from its parent and from inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tflint_graph import Config, lint_paths
from tflint_graph.source.modules import ModuleIndex, package_root

# Package names: plain, and one FOREIGN_PREFIXES would take for a TensorFlow library.
PACKAGES = ("demo",)
HELPER = "def helper(x):\n    print('hi')\n    return x\n"


def _step(imports: str, call: str = "helper(x)") -> str:
    return f"import tensorflow as tf\n{imports}\n\n@tf.function\ndef step(x):\n    return {call}\n"


def _run(paths: list[Path], root: Path) -> list[tuple[str, int, str, tuple[str, ...]]]:
    return [
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code, f.chain)
        for f in lint_paths(paths, Config())
    ]


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
