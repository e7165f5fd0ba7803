"""The pre-commit hook (.pre-commit-hooks.yaml), exercised through pre-commit itself.

`pre-commit try-repo` builds a virtualenv and pip-installs the hook repository (PyPI is needed,
as in CI). It does so on every call: try-repo keeps its store in its own temporary directory and
ignores PRE_COMMIT_HOME, so the two runs cannot share an environment (about 12 s each).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

BUGGY = """\
import tensorflow as tf


@tf.function
def step(x):
    print("tracing", x)
    return x * 2
"""

CLEAN = """\
import tensorflow as tf


@tf.function
def step(x):
    tf.print("step", x)
    return x * 2
"""


def _pre_commit() -> list[str] | None:
    """The pre-commit command of this interpreter's environment, or None when missing."""
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "pre_commit"]


PRE_COMMIT = _pre_commit()
GIT = shutil.which("git")

pytestmark = pytest.mark.skipif(
    PRE_COMMIT is None or GIT is None,
    reason="needs git and pre-commit (pip install -e '.[dev]' installs pre-commit)",
)


@pytest.fixture(scope="session")
def isolated_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment that ignores the user's git and pre-commit state.

    HOME is kept so pip still finds the user's index configuration; git's global and system
    config (commit signing, hooksPath, templates) are switched off, and pre-commit's home
    (cache, logs) is a session temp dir.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        # A test run from inside a git hook inherits these; SKIP would disable our hook.
        if not key.startswith("GIT_") and not key.startswith("PRE_COMMIT") and key != "SKIP"
    }
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="tflint-graph tests",
        GIT_AUTHOR_EMAIL="tests@example.invalid",
        GIT_COMMITTER_NAME="tflint-graph tests",
        GIT_COMMITTER_EMAIL="tests@example.invalid",
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        PRE_COMMIT_COLOR="never",
    )
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run([GIT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)


def _init_repo(path: Path, env: dict[str, str]) -> None:
    _git(path, env, "init", "-q")
    _git(path, env, "config", "user.name", "tflint-graph tests")
    _git(path, env, "config", "user.email", "tests@example.invalid")
    _git(path, env, "config", "commit.gpgsign", "false")
    _git(path, env, "add", "-A")
    _git(path, env, "commit", "-q", "-m", "snapshot")


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, isolated_env: dict[str, str]) -> Path:
    """A committed snapshot of the working tree, so try-repo installs the code under test.

    Pointing try-repo at REPO would install the last commit only (and needs REPO to be a git
    checkout); copying tracked plus untracked-not-ignored files includes uncommitted edits.
    """
    listing = subprocess.run(
        [GIT, "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        env=isolated_env,
        capture_output=True,
        text=True,
    )
    if listing.returncode != 0:  # e.g. tests run from an unpacked sdist
        pytest.skip(f"{REPO} is not a git checkout: {listing.stderr.strip()}")
    listed = listing.stdout
    dest = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # deleted-but-tracked files are listed too
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _init_repo(dest, isolated_env)
    return dest


def _try_repo(
    tmp_path: Path, hook_repo: Path, env: dict[str, str], files: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "project"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    _init_repo(project, env)
    return subprocess.run(
        [*PRE_COMMIT, "try-repo", str(hook_repo), "tflint-graph", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_manifest_validates(isolated_env: dict[str, str]) -> None:
    result = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        env=isolated_env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hook_fails_on_buggy_file_and_prints_finding(
    tmp_path: Path, hook_repo: Path, isolated_env: dict[str, str]
) -> None:
    result = _try_repo(tmp_path, hook_repo, isolated_env, {"train.py": BUGGY})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "train.py:6:5: TFG101" in output, output


def test_hook_passes_on_clean_file(
    tmp_path: Path, hook_repo: Path, isolated_env: dict[str, str]
) -> None:
    result = _try_repo(tmp_path, hook_repo, isolated_env, {"train.py": CLEAN})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "tflint-graph" in output and "Passed" in output, output
