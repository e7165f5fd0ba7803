"""Which files a run lints: recursion, default excludes, user globs and ``.gitignore``.

Files named on the command line are linted even if a default or ``.gitignore`` rule would
skip them (as in ruff), but user ``exclude`` patterns still apply (as in flake8, so a
pre-commit hook honours the project's excludes).  Symlinked directories are not followed,
so symlink loops cannot trap the walk.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tflint_graph.config import DEFAULT_EXCLUDE, Config


@dataclass(frozen=True)
class _Pattern:
    glob: str
    negated: bool
    dir_only: bool
    anchored: bool


class _GitIgnore:
    """The subset of gitignore syntax projects use: globs, ``/`` anchors, ``!``, ``**``."""

    def __init__(self, base: Path, text: str) -> None:
        self.base = base
        self.patterns: list[_Pattern] = []
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            line = line[1:] if negated else line
            line = line.removeprefix("\\")
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            if line:
                self.patterns.append(_Pattern(line, negated, dir_only, anchored))

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
            if p.anchored:
                glob = p.glob.replace("**/", "*").replace("/**", "/*")
                hit = fnmatch.fnmatchcase(rel, glob)
            else:
                hit = fnmatch.fnmatchcase(path.name, p.glob)
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


def _default_excluded(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDE)


def _ignored(path: Path, is_dir: bool, ignores: Sequence[_GitIgnore]) -> bool:
    verdict = False
    for ignore in ignores:
        result = ignore.verdict(path, is_dir)
        if result is not None:
            verdict = result
    return verdict


def _walk(top: Path, config: Config, ignores: list[_GitIgnore], out: list[Path]) -> None:
    local = _read_gitignore(top)
    chain = [*ignores, local] if local is not None else ignores
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError:
        return  # unreadable directory: nothing to lint below it
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if _default_excluded(entry.name) or config.is_excluded(path):
                continue
            if _ignored(path, True, chain):
                continue
            _walk(path, config, chain, out)
        elif entry.name.endswith(".py"):
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


def iter_python_files(paths: Sequence[Path], config: Config) -> list[Path]:
    """The files to lint, each once.  Raises FileNotFoundError for a missing path."""
    for path in paths:
        if not os.path.lexists(path):
            raise FileNotFoundError(str(path))
    out: list[Path] = []
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            _walk(path, config, _parent_ignores(path), out)
        elif path.is_dir():
            _walk(path, config, [], out)
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
