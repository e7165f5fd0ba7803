"""Which file a dotted module name is, under the analysed roots (SPEC §1.6).

Imports are resolved against the analysed roots only: the directory above each file's
top-level package (the ``sys.path`` entry that makes its imports work), or the file's own
directory for scripts.  A top-level package's own folder is a root too, for the modules in
it: a project whose folder holds an ``__init__.py`` is as often run from inside
(``from helpers import f``) as from its parent (``from myproject.helpers import f``).
Installed packages are never read.
"""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from tflint_graph.core.facts import FOREIGN_PREFIXES, may_be_project


def real_path(path: Path) -> Path:
    """The canonical path; never raises (``Path.resolve`` does on symlink loops).

    A file that is not a symbolic link is its folder's canonical path plus its name: one
    ``lstat`` instead of one per component; and one per run (a run asks for every file's,
    several times: its context, its key, its modules)."""
    return _real_file(os.fspath(path))


@lru_cache(maxsize=16384)
def _real_file(text: str) -> Path:
    folder, name = os.path.split(text)
    if name not in ("", ".", "..") and not os.path.islink(text):
        return _real_folder(folder or ".") / name
    return Path(_realpath(text))


def _realpath(text: str) -> str:
    try:
        return os.path.realpath(text)
    except (OSError, ValueError):
        return os.path.abspath(text)


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> Path:
    return Path(_realpath(folder))


@lru_cache(maxsize=4096)
def package_root(path: Path) -> tuple[Path, str]:
    """(the ``sys.path`` entry that imports ``path``, its dotted module name).

    Walks up while directories are packages (hold an ``__init__.py``): ``src/pkg/sub/m.py``
    is ``pkg.sub.m`` under ``src``; a script outside any package is imported by its stem
    from its own directory.
    """
    path = real_path(path)
    root, packages = _package_of(path.parent)
    parts = packages if path.name == "__init__.py" else (*packages, path.stem)
    return root, ".".join(parts)


@lru_cache(maxsize=4096)
def _package_of(folder: Path) -> tuple[Path, tuple[str, ...]]:
    """(the ``sys.path`` entry above ``folder``, the package names down to it).  A folder
    whose name no import can spell (``tensorflow+examples``, ``my-project``) is no package,
    whatever it holds: the walk stops there."""
    if (
        folder.parent == folder
        or not _importable(folder.name)
        or not (folder / "__init__.py").is_file()
    ):
        return folder, ()
    root, packages = _package_of(folder.parent)
    return root, (*packages, folder.name)


def _importable(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def forget_paths() -> None:
    """Drop what is remembered about the file system (a run starts afresh: a link or an
    ``__init__.py`` may have changed since the last one)."""
    for cached in (_real_file, _real_folder, package_root, _package_of):
        cached.cache_clear()


class ModuleIndex:
    """Finds the file of a dotted module name under the analysed roots."""

    def __init__(self, files: Iterable[Path]) -> None:
        roots: set[Path] = set()
        tops: set[str] = set()  # top-level names of the run's modules
        inner: set[str] = set()  # and the names they have inside their top-level package
        for file in files:
            root, name = package_root(real_path(file))
            if not name:
                continue
            roots.add(root)
            head, _, rest = name.partition(".")
            tops.add(head)
            if rest:
                inner.add(rest.partition(".")[0])
        self.roots = sorted(roots)
        self.first_party = first_party(tops, inner)
        self._cache: dict[tuple[str, tuple[Path, ...]], Path | None] = {}
        # Candidate files looked for and not found: one created later changes what imports
        # resolve to (the cache's run record checks they are still absent).
        self.absent: set[Path] = set()

    def module_of(self, path: Path, *, resolved: bool = False) -> str | None:
        root, name = package_root(path if resolved else real_path(path))
        return name if name and root in self.roots else None

    def file_of(self, module: str, importer: Path | None = None) -> Path | None:
        """The file of ``module``; the importer's own roots are searched first, as Python's
        ``sys.path[0]`` is the script's directory: the folder above its top-level package,
        then that package's own folder (``from helpers import f`` inside ``myproject/``)."""
        own = own_roots(importer) if importer is not None else ()
        key = (module, own)
        if key in self._cache:
            return self._cache[key]
        found: Path | None = None
        rel = Path(*module.split("."))
        for root in [*own, *(r for r in self.roots if r not in own)]:
            for candidate in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
                if candidate.is_file():
                    found = real_path(candidate)
                    break
                self.absent.add(candidate)
            if found is not None:
                break
        self._cache[key] = found
        return found

    def split(self, name: str, importer: Path | None = None) -> tuple[str, str] | None:
        """``pkg.helpers.normalize`` -> (``pkg.helpers``, ``normalize``): the longest
        prefix that is a module of the analysed roots, and the rest."""
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.file_of(module, importer) is not None:
                return module, ".".join(parts[i:])
        return None


def own_roots(importer: Path) -> tuple[Path, ...]:
    """Where the imports of ``importer`` are looked for first: the ``sys.path`` entry
    above its top-level package, then, for a module in a package, that package's folder."""
    root, name = package_root(importer)
    head, dot, _ = name.partition(".")
    if dot or (name and importer.name == "__init__.py"):
        return root, root / head
    return (root,)


def first_party(tops: Iterable[str], inner: Iterable[str]) -> frozenset[str]:
    """The top-level names of the run's modules that ``FOREIGN_PREFIXES`` would take for
    libraries (a package ``tensorflow_examples``): code of the run is first-party whatever
    its name.  ``inner`` are names below a top-level package, importable as top-level names
    only when that package's folder is a source root: they override prefixes
    (``tensorflow_examples`` inside a folder ``examples/``) but never a library's own name
    (a subpackage ``mylib/keras/`` is glue for Keras, not a second Keras).  ``builtins`` is
    never a file."""
    libraries = {p.rstrip(".") for p in FOREIGN_PREFIXES if p.endswith(".")}
    names = {*tops, *(n for n in inner if n not in libraries)} - {"builtins"}
    return frozenset(n for n in names if not may_be_project(f"{n}.x"))


# Import statements in a file's text (``Project.likely_reached``): ``from a import b, c`` and
# ``import a.b as c, d``, wherever they stand.  Found from the word (a fast literal search),
# then read from the start of its line.
_IMPORT_WORD = re.compile(rb"import\b")


_IMPORT_LINE = re.compile(
    rb"[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import\b([^\n#;]*)|import[ \t]+([^\n#;]+))"
)


# Import lines are looked for at the top of each file: in this many bytes, before the first
# top-level def or class.
HEAD_BYTES = 16384


FIRST_CODE = (b"\ndef ", b"\nclass ", b"\nasync def ", b"\n@")


def imported_modules(text: bytes) -> set[str]:
    """Module names the import lines of ``text`` may load (``from a import b`` loads ``a``
    and maybe ``a.b``); relative names keep their dots.  A guess from the text: lines in
    strings count too, parenthesised continuation lines do not."""
    found: set[str] = set()
    lines: set[int] = set()
    for word in _IMPORT_WORD.finditer(text):
        start = text.rfind(b"\n", 0, word.start()) + 1
        match = _IMPORT_LINE.match(text, start) if start not in lines else None
        lines.add(start)
        if match is None:
            continue
        base, names, plain = (
            g.decode("latin-1") if g is not None else None for g in match.groups()
        )
        if plain is not None:
            found.update(part.split()[0] for part in plain.split(",") if part.split())
            continue
        assert base is not None and names is not None
        found.add(base)
        sep = "" if base.endswith(".") else "."
        for part in names.strip().strip("()\\").split(","):
            words = part.split()
            if words and words[0].isidentifier():
                found.add(f"{base}{sep}{words[0]}")
    return found
