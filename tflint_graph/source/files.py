"""Which files a run lints: recursion, default excludes, user globs and ``.gitignore``.

A walk finds Python files and Jupyter notebooks (``*.py``, ``*.ipynb``; Jupyter's own
``.ipynb_checkpoints`` copies are a default exclude).

Files and directories named on the command line are linted even if a default or
``.gitignore`` rule would skip them (as in ruff), but user ``exclude`` patterns still apply
(as in flake8, so a pre-commit hook honours the project's excludes).  A symlinked directory
is walked only when named on the command line; inside a walk, symlinked directories are not
followed, so symlink loops cannot trap it.  Unreadable directories are reported to the caller.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tflint_graph.core.config import DEFAULT_EXCLUDE, Config

# The files a directory walk lints: Python files and Jupyter notebooks.
LINTED_SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool


def _glob_to_regex(glob: str) -> re.Pattern[str]:
    """gitignore glob syntax: ``*``/``?`` stop at ``/``, ``**`` crosses directories,
    ``[...]`` classes (``[!...]`` negated), ``\\`` escapes."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            close = glob.find("]", i + 2)
            if close < 0:
                out.append(re.escape("["))
                i += 1
                continue
            body = glob[i + 1 : close]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close + 1
        elif glob[i] == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:
        return re.compile(re.escape(glob) + r"\Z")


class _GitIgnore:
    """The gitignore syntax projects use: globs, ``/`` anchors, ``!``, ``**``, trailing ``/``."""

    def __init__(self, base: Path, text: str) -> None:
        self.base = base
        self.patterns: list[_Pattern] = []
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            line = line[1:] if negated else line
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            if line:
                self.patterns.append(_Pattern(_glob_to_regex(line), negated, dir_only, anchored))

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by ``!``; None: no pattern matched."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        result: bool | None = None
        for p in self.patterns:
            if p.dir_only and not is_dir:
                continue
            hit = p.regex.match(rel if p.anchored else path.name)
            if hit:
                result = not p.negated
        return result


def _read_gitignore(directory: Path) -> _GitIgnore | None:
    candidate = directory / ".gitignore"
    try:
        if candidate.is_file():
            return _GitIgnore(directory, candidate.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return None


def default_excluded(name: str) -> bool:
    """A folder or file name the defaults always skip (``.git``, ``venv``, ``build``...)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDE)


def _ignored(path: Path, is_dir: bool, ignores: Sequence[_GitIgnore]) -> bool:
    verdict = False
    for ignore in ignores:
        result = ignore.verdict(path, is_dir)
        if result is not None:
            verdict = result
    return verdict


def _walk(
    top: Path,
    config: Config,
    ignores: list[_GitIgnore],
    out: list[Path],
    errors: list[tuple[Path, str]],
) -> None:
    local = _read_gitignore(top)
    chain = [*ignores, local] if local is not None else ignores
    try:
        with os.scandir(top) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        errors.append((top, f"cannot read directory: {exc.strerror or exc}"))
        return
    for entry in entries:
        path = top / entry.name  # as Path(entry.path), at half the cost (a walk makes many)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if default_excluded(entry.name) or config.is_excluded(path):
                continue
            if _ignored(path, True, chain):
                continue
            _walk(path, config, chain, out, errors)
        elif entry.name.endswith(LINTED_SUFFIXES):
            if config.is_excluded(path) or _ignored(path, False, chain):
                continue
            out.append(path)


def _parent_ignores(directory: Path) -> list[_GitIgnore]:
    """``.gitignore`` files above a walked directory, up to the repository root."""
    found: list[_GitIgnore] = []
    try:
        here = directory.resolve()
    except OSError:
        return found
    for parent in here.parents:
        ignore = _read_gitignore(parent)
        if ignore is not None:
            # Anchor the patterns to the unresolved spelling the walk uses.
            try:
                rel = here.relative_to(parent)
                ignore.base = directory / Path(*[".."] * len(rel.parts))
                ignore.base = Path(os.path.normpath(ignore.base))
            except ValueError:
                continue
            found.insert(0, ignore)
        if (parent / ".git").exists():
            break
    return found


def iter_python_files(
    paths: Sequence[Path],
    config: Config,
    errors: list[tuple[Path, str]] | None = None,
) -> list[Path]:
    """The files to lint, each once.  Raises FileNotFoundError for a missing path.

    Directories that cannot be read are skipped; when ``errors`` is given, each is appended
    to it as ``(directory, reason)`` so the caller can report it.
    """
    for path in paths:
        if not os.path.lexists(path):
            raise FileNotFoundError(str(path))
    problems: list[tuple[Path, str]] = errors if errors is not None else []
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            if config.is_excluded(path):
                continue
            parents = [] if path.is_symlink() else _parent_ignores(path)
            _walk(path, config, parents, out, problems)
        elif not config.is_excluded(path):
            out.append(path)
    seen: set[str] = set()
    unique = []
    for p in out:
        key = os.path.normpath(str(p))
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique
