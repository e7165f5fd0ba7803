"""TFG402 exempts test files: which paths count as tests."""

from __future__ import annotations

import pytest

from tests.helpers import found

SOURCE = "import tensorflow as tf\ntf.config.run_functions_eagerly(True)\n"


@pytest.mark.parametrize(
    "path",
    [
        "test_train.py",
        "pkg/test_train.py",
        "train_test.py",
        "conftest.py",
        "tests/helpers.py",
        "project/tests/unit/model.py",
        "project/test/model.py",
        "C:\\repo\\tests\\model.py",
    ],
)
def test_test_files_are_exempt(path: str) -> None:
    assert (2, "TFG402") not in found(SOURCE, path)


@pytest.mark.parametrize(
    "path",
    [
        "train.py",
        "src/pkg/train.py",
        "testing/model.py",
        "contest.py",
        "latest.py",
        "tests.py",
        "attest_model.py",
        "<stdin>",
    ],
)
def test_other_files_are_not(path: str) -> None:
    assert (2, "TFG402") in found(SOURCE, path)
