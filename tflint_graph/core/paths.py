"""Which files are tests: rules about production behaviour or costs leave them alone."""

from __future__ import annotations

from pathlib import PurePath

_TEST_DIRS = frozenset({"tests", "test"})


def is_test_file(path: str) -> bool:
    """A test module by its name: ``test_*.py``, ``*_test.py``, ``conftest.py``.  The name
    reads the same from every interface (the CLI, flake8, an editor), a folder does not."""
    base = PurePath(path.replace("\\", "/")).name
    return (
        base == "conftest.py"
        or (base.startswith("test_") and base.endswith(".py"))
        or base.endswith("_test.py")
    )


def is_test_path(path: str) -> bool:
    """A test module by its name, or anything under a ``tests/``/``test/`` folder."""
    parts = PurePath(path.replace("\\", "/")).parts
    if not parts:
        return False
    return is_test_file(path) or any(part in _TEST_DIRS for part in parts[:-1])
