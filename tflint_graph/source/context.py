"""The project around the files of a run: its root and its Python files (SPEC §3, "project
context everywhere").

A pre-commit hook passes only the staged files and an editor one buffer, yet a helper is
traced because an unchanged module calls it from a ``@tf.function``.  So a run reads the
project around the files it is given as context.  The project root of a given path is:

1. the directory of the ``pyproject.toml`` with a ``[tool.tflint-graph]`` table that
   configures it (the file the CLI reads its configuration from): everything below it is
   the project, minus excludes, ``.gitignore`` and the default excludes, as for
   ``tflint-graph .`` there;
2. else the top of its package tree: the folder above the outermost package (a folder with an
   ``__init__.py``) that holds it, the ``sys.path`` entry its imports resolve from; for a
   script outside any package, its own folder.  Only that folder's own ``.py`` files and its
   packages are the project then (never a whole home directory or ``/tmp`` for a script that
   lies there).

The version-control root is not used: a repository also holds examples, vendored code and
other projects, and imports resolve only under the package roots anyway.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from tflint_graph.core.config import DEFAULT_EXCLUDE, Config, find_config
from tflint_graph.source.files import iter_python_files
from tflint_graph.source.modules import package_root, real_path
from tflint_graph.source.reading import is_notebook


def project_root(path: Path) -> tuple[Path, bool]:
    """(the project root of ``path``, whether a configuring ``pyproject.toml`` names it)."""
    found = find_config([path])
    if found is not None:
        return found.parent.resolve(), True
    resolved = real_path(path)
    if resolved.is_dir():
        init = resolved / "__init__.py"
        return (package_root(init)[0] if init.is_file() else resolved), False
    return package_root(resolved)[0], False


def context_files(paths: Sequence[Path], config: Config) -> list[Path]:
    """The Python files of the projects around ``paths`` (see the module docstring), spelt
    relative to the working directory when they lie below it (as ``tflint-graph .`` spells
    them, so that both runs share cache entries), else absolute.  Folders that cannot be
    read are skipped: only the given files' problems are reported."""
    roots: dict[Path, bool] = {}
    for path in paths:
        root, configured = project_root(path)
        roots[root] = roots.get(root, False) or configured
    found: list[Path] = []
    for root, configured in sorted(roots.items()):
        shown = _spelling(root)
        tops = [shown] if configured else _package_tops(shown, config)
        found += iter_python_files(tops, config, []) if tops else []
    return found


def _spelling(path: Path) -> Path:
    cwd = Path.cwd().resolve()
    try:
        return Path(os.path.relpath(path, cwd)) if path.is_relative_to(cwd) else path
    except ValueError:
        return path


def _package_tops(root: Path, config: Config) -> list[Path]:
    """``root``'s own ``.py`` files and notebooks, and its packages (folders with an
    ``__init__.py``)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    tops: list[Path] = []
    for entry in entries:
        path = Path(entry.path)
        if _skipped(entry.name, path, config):
            continue
        try:
            # A notebook imports the folder's modules like a script: its calls trace them.
            module = (entry.name.endswith(".py") or is_notebook(entry.name)) and entry.is_file()
            package = entry.is_dir(follow_symlinks=False) and (path / "__init__.py").is_file()
        except OSError:
            continue
        if module or package:
            tops.append(path)
    return tops


def _skipped(name: str, path: Path, config: Config) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in DEFAULT_EXCLUDE) or config.is_excluded(path)


def given_reals(files: Iterable[Path]) -> dict[Path, Path]:
    """Each given file by its canonical path (a context file with the same one is the same
    module, whatever the spelling)."""
    return {real_path(f): f for f in files}
