"""The modules of one run, and what crosses between them (SPEC §1.6, issue 4).

A run lints each file on its own first.  What one module learns about another travels as
small, picklable facts (a :class:`ModuleSummary` out, a :class:`ProjectView` in), never as
parsed trees, so memory stays per-file and files can later be linted in parallel:

* a traced function that calls ``helpers.normalize`` makes ``normalize`` a traced root of
  ``helpers.py`` (with the chain so far), which may reach further modules in turn;
* a module that calls ``step`` imported from ``model.py`` learns that ``step`` is a
  ``tf.function`` (and with which options), for the call-site rules TFG302/TFG303/TFG403.

Imports are resolved against the analysed roots only: the directory above each file's
top-level package (the ``sys.path`` entry that makes its imports work), or the file's own
directory for scripts.  Installed packages are never read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from tflint_graph.canonical import canonical, keras_kinds_of
from tflint_graph.config import Config
from tflint_graph.finding import Finding

if TYPE_CHECKING:
    from tflint_graph.cache import Cache

# Canonical prefixes that never name code of the analysed project.
FOREIGN_PREFIXES = (
    "tensorflow.",
    "keras.",
    "builtins.",
    "numpy.",
    "functools.",
    "tensorflow_",
)


class TraceKind(str, Enum):
    DECORATED = "decorated"
    WRAPPED = "wrapped"
    KERAS = "keras"
    DATASET = "dataset"
    CONTROL_FLOW = "control-flow"
    CALLEE = "callee"


@dataclass(frozen=True, slots=True)
class TfFunction:
    """A ``tf.function`` object that calls can reach, and the options that matter at call
    sites.  ``qualname`` is ``step`` / ``Trainer.step`` inside its module."""

    qualname: str
    display: str  # "step()"
    signature: bool  # input_signature given
    jit_compile: bool = False
    reduce_retracing: bool = False
    origin: str | None = None  # the file that defines it
    line: int = 0  # the def (or assignment) line in that file


@dataclass(frozen=True, slots=True)
class ExternalRoot:
    """Traced code of another module calls (or hands to TensorFlow) ``qualname`` here."""

    qualname: str
    kind: TraceKind
    reason: str  # "called from step() in train.py"
    chain: tuple[str, ...]  # the chain up to and excluding this function
    autograph: bool = True


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A traced call from this module into a name imported from elsewhere (absolute)."""

    target: str
    kind: TraceKind
    reason: str
    chain: tuple[str, ...]
    autograph: bool = True


@dataclass(frozen=True, slots=True)
class ExportFact:
    """Another module exports something defined here (TFG301 reports at the def).

    ``kind`` is ``function`` (passed in ``signatures=`` or to ``add_endpoint``) or ``object``
    (an instance of class ``target`` saved with ``tf.saved_model.save``).  ``target`` is an
    absolute name in the exporting module and becomes a qualname here."""

    target: str
    kind: str
    why: str
    signatures: bool = False  # object saved with signatures=
    # Attributes the exporting module touches on the saved object (`m.rank` in signatures=,
    # `m.rank.get_concrete_function(spec)`, a warm-up call): judged there, not here.
    touched: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RemoteFinding:
    """A finding about a function of another module, judged from this module's calls (an
    XLA function called here with varying shapes): SPEC puts it on that function's def.
    ``target`` is absolute in the judging module and becomes a qualname where it lands."""

    target: str
    code: str
    name: str
    severity: str
    message: str
    fix: str | None = None


@dataclass(slots=True)
class ModuleSummary:
    """What other modules may need to know about one module after it was analysed."""

    module: str | None
    exports: dict[str, TfFunction] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)  # name -> absolute import
    outgoing: list[Outgoing] = field(default_factory=list)
    # Absolute names imported from elsewhere that this module calls (call-site candidates);
    # for a module summarised from its syntax alone, every name it may call.
    called_imports: set[str] = field(default_factory=set)
    # Module-level classes -> their bases: absolute names, or "<local>Name" for a class here.
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What this module exports that other modules define.
    exports_elsewhere: list[ExportFact] = field(default_factory=list)
    # Findings this module's code makes about functions defined elsewhere.
    remote: list[RemoteFinding] = field(default_factory=list)


@dataclass(slots=True)
class ProjectView:
    """What a module is told about the rest of the run before it is analysed."""

    module: str | None = None  # dotted name, when the file lies in an analysed root
    is_package: bool = False  # an ``__init__.py``: relative imports start at the module
    roots: tuple[ExternalRoot, ...] = ()
    tf_functions: dict[str, TfFunction] = field(default_factory=dict)  # absolute name -> fn
    # Keras kinds ("model", "layer", ...) of base classes defined in other modules.
    keras_classes: dict[str, frozenset[str]] = field(default_factory=dict)
    # Functions and classes of this module that other modules export (targets are qualnames).
    exported: tuple[ExportFact, ...] = ()
    # Findings other modules make about this module's functions (targets are qualnames).
    remote: tuple[RemoteFinding, ...] = ()

    def absolute(self, name: str) -> str:
        """``.helpers.f`` seen from ``pkg.train`` is ``pkg.helpers.f``."""
        if not name.startswith("."):
            return name
        dots = len(name) - len(name.lstrip("."))
        rest = name[dots:]
        if self.module is None:
            return rest
        parts = self.module.split(".")
        if not self.is_package:
            parts = parts[:-1]
        drop = dots - 1
        if drop > len(parts):
            return rest
        base = parts[: len(parts) - drop]
        return ".".join([*base, rest]) if rest else ".".join(base)


def may_be_project(name: str) -> bool:
    """``name`` (absolute) could be code of the analysed project, not a library we know."""
    return not name.startswith(FOREIGN_PREFIXES) and "." in name


def _real(path: Path) -> Path:
    """The canonical path; never raises (``Path.resolve`` does on symlink loops).

    A file that is not a symbolic link is its folder's canonical path plus its name: one
    ``lstat`` instead of one per component (a run asks for every file's, several times)."""
    text = os.fspath(path)
    folder, name = os.path.split(text)
    if name not in ("", ".", "..") and not os.path.islink(text):
        return Path(_real_folder(folder or "."), name)
    return Path(_realpath(text))


def _realpath(text: str) -> str:
    try:
        return os.path.realpath(text)
    except (OSError, ValueError):
        return os.path.abspath(text)


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return _realpath(folder)


@lru_cache(maxsize=4096)
def package_root(path: Path) -> tuple[Path, str]:
    """(the ``sys.path`` entry that imports ``path``, its dotted module name).

    Walks up while directories are packages (hold an ``__init__.py``): ``src/pkg/sub/m.py``
    is ``pkg.sub.m`` under ``src``; a script outside any package is imported by its stem
    from its own directory.
    """
    path = _real(path)
    root, packages = _package_of(path.parent)
    parts = packages if path.name == "__init__.py" else (*packages, path.stem)
    return root, ".".join(parts)


@lru_cache(maxsize=4096)
def _package_of(folder: Path) -> tuple[Path, tuple[str, ...]]:
    """(the ``sys.path`` entry above ``folder``, the package names down to it)."""
    if folder.parent == folder or not (folder / "__init__.py").is_file():
        return folder, ()
    root, packages = _package_of(folder.parent)
    return root, (*packages, folder.name)


def forget_paths() -> None:
    """Drop what is remembered about the file system (a run starts afresh: a link or an
    ``__init__.py`` may have changed since the last one)."""
    for cached in (_real_folder, package_root, _package_of):
        cached.cache_clear()


class ModuleIndex:
    """Finds the file of a dotted module name under the analysed roots."""

    def __init__(self, files: Iterable[Path]) -> None:
        roots: set[Path] = set()
        for file in files:
            root, name = package_root(_real(file))
            if name:
                roots.add(root)
        self.roots = sorted(roots)
        self._cache: dict[tuple[str, Path | None], Path | None] = {}
        # Candidate files looked for and not found: one created later changes what imports
        # resolve to (the cache's run record checks they are still absent).
        self.absent: set[Path] = set()

    def module_of(self, path: Path, *, resolved: bool = False) -> str | None:
        root, name = package_root(path if resolved else _real(path))
        return name if name and root in self.roots else None

    def file_of(self, module: str, importer: Path | None = None) -> Path | None:
        """The file of ``module``; the importer's own root is searched first, as Python's
        ``sys.path[0]`` is the script's directory."""
        first = package_root(importer)[0] if importer is not None else None
        key = (module, first)
        if key in self._cache:
            return self._cache[key]
        found: Path | None = None
        rel = Path(*module.split("."))
        roots = ([first] if first is not None else []) + [r for r in self.roots if r != first]
        for root in roots:
            for candidate in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
                if candidate.is_file():
                    found = _real(candidate)
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


LOCAL = "<local>"
Analyse = Callable[
    [Path, Config, "str | None", "ProjectView | None"],
    tuple[list[Finding], "ModuleSummary | None"],
]

# Import statements in a file's text (``Project.likely_reached``): ``from a import b, c`` and
# ``import a.b as c, d``, wherever they stand.  Found from the word (a fast literal search),
# then read from the start of its line.
_IMPORT_WORD = re.compile(rb"import\b")
_IMPORT_LINE = re.compile(
    rb"[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import\b([^\n#;]*)|import[ \t]+([^\n#;]+))"
)
# Import lines are looked for at the top of each file: in this many bytes, before the first
# top-level def or class.
_HEAD_BYTES = 16384
_FIRST_CODE = (b"\ndef ", b"\nclass ", b"\nasync def ", b"\n@")


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


# Cross-module propagation stops after this many rounds (a chain this long through
# different modules is already beyond what a reader follows).
_MAX_ROUNDS = 12


class Project:
    """Lints the files of one run, then lets them learn from each other.

    1. Every file is analysed on its own (findings and a summary).
    2. tf.functions exported by modules are looked up for the names each module calls.
    3. Traced calls into other modules become traced roots there; those modules are analysed
       again with their new roots, which may reach further modules, until nothing changes.
       Modules outside the run that imports resolve to are parsed only when traced code or a
       call site reaches them; their findings are not reported.
    """

    def __init__(
        self,
        files: Sequence[Path],
        config: Config,
        analyse: Analyse,
        *,
        jobs: int = 1,
        cache: Cache | None = None,
    ) -> None:
        # Imported here: the runner and the cache build on this module's facts.
        from tflint_graph.parallel import Runner

        forget_paths()
        self.files = list(files)
        self.config = config
        self.analyse = analyse
        # Batches of files are analysed from the cache, in-process or over `jobs` processes.
        self.runner = Runner(analyse, config, jobs, cache)
        self.index = ModuleIndex(self.files)
        self.findings: dict[Path, list[Finding]] = {}
        self.summaries: dict[Path, ModuleSummary | None] = {}
        self.in_run: dict[Path, list[Path]] = {}
        for file in self.files:
            self.in_run.setdefault(_real(file), []).append(file)
        self.roots: dict[Path, dict[str, ExternalRoot]] = {}
        self.tables: dict[Path, dict[str, TfFunction]] = {}
        self.keras_classes: dict[Path, dict[str, frozenset[str]]] = {}
        self.exported: dict[Path, list[ExportFact]] = {}
        self.remote: dict[Path, list[RemoteFinding]] = {}

    def _view(self, resolved: Path) -> ProjectView:
        return ProjectView(
            module=self.index.module_of(resolved),
            is_package=resolved.name == "__init__.py",
            roots=tuple(self.roots.get(resolved, {}).values()),
            tf_functions=self.tables.get(resolved, {}),
            keras_classes=self.keras_classes.get(resolved, {}),
            exported=tuple(self.exported.get(resolved, ())),
            remote=tuple(self.remote.get(resolved, ())),
        )

    def _analyse(self, *files: Path) -> None:
        """Analyse ``files`` (resolved) with what the run knows now.  They are independent
        of each other, so they go to the runner as one batch (possibly in parallel)."""
        # Two paths of the run may be one file (a symlink): each is reported as given.
        tasks = [
            (shown, self._view(resolved))
            for resolved in files
            for shown in self.in_run.get(resolved, [resolved])
        ]
        results = iter(self.runner.run(tasks))
        for resolved in files:
            summary = None
            for shown in self.in_run.get(resolved, [resolved]):
                self.findings[shown], summary = next(results)
            self.summaries[resolved] = summary

    def summary(self, resolved: Path) -> ModuleSummary | None:
        """A module's summary; files outside the run are read now, the first time."""
        if resolved not in self.summaries:
            self._analyse(resolved)
        return self.summaries[resolved]

    def locate(self, name: str, importer: Path, depth: int = 0) -> tuple[Path, str] | None:
        """(file, qualname in it) that the absolute ``name`` denotes, following re-exports
        (``from .helpers import normalize`` in a package's ``__init__.py``)."""
        split = self.index.split(name, importer) if depth <= 4 else None
        if split is None:
            return None
        module, rest = split
        file = self.index.file_of(module, importer)
        assert file is not None
        summary = self.summary(file)
        if summary is not None:
            head, _, tail = rest.partition(".")
            target = summary.reexports.get(head)
            further = (f"{target}.{tail}" if tail else target) if target else None
            if further is not None and further != name:
                found = self.locate(further, file, depth + 1)
                if found is not None:
                    return found
        return file, rest

    def likely_reached(self) -> set[Path]:
        """Files of the run that TensorFlow modules of the run import, as their import lines
        say: the modules other modules' traced code reaches, which are analysed again once
        the run knows their roots.  Only a hint for which parsed trees to keep (a wrong guess
        costs time, never a result)."""
        from tflint_graph.cache import read_regular

        # The run's files are resolved already: their module names need no realpath.
        names = {f: self.index.module_of(f, resolved=True) for f in sorted(self.in_run)}
        by_module = {m: f for f, m in names.items() if m}
        found: set[Path] = set()
        for resolved, module in names.items():
            read = read_regular(resolved, _HEAD_BYTES)
            head = read[0] if read is not None else b""
            if b"tensorflow" not in head and b"keras" not in head:
                continue
            ends = [at for word in _FIRST_CODE if (at := head.find(word)) >= 0]
            view = ProjectView(module, resolved.name == "__init__.py")
            for name in imported_modules(head[: min(ends, default=len(head))]):
                target = by_module.get(view.absolute(name))
                if target is not None and target != resolved:
                    found.add(target)
        return found

    def consulted(self) -> tuple[list[Path], list[Path]]:
        """Files outside the run that were read, and candidate files looked for and not
        found: with the run's own files, everything its results depend on."""
        outside = sorted(f for f in self.summaries if f not in self.in_run)
        return outside, sorted(self.index.absent)

    def run(self) -> dict[Path, list[Finding]]:
        try:
            self._analyse(*self.in_run)
            # Modules that learnt about other modules' tf.functions, Keras bases or exports
            # are analysed again first: what they now trace (a subclass's steps) reaches
            # further.
            self._analyse(*sorted(self._link_tf_functions()))
            self._propagate()
            self._analyse(*sorted(self._route_remote()))
        finally:
            self.runner.close()
        return {f: self.findings[f] for f in self.files}

    def _route_remote(self) -> set[Path]:
        """Hand findings about other modules' functions to the modules that define them."""
        stale: set[Path] = set()
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            for fact in summary.remote if summary is not None else ():
                found = self.locate(fact.target, resolved)
                if found is None or found[0] == resolved or found[0] not in self.in_run:
                    continue
                local = RemoteFinding(
                    found[1], fact.code, fact.name, fact.severity, fact.message, fact.fix
                )
                known = self.remote.setdefault(found[0], [])
                if local not in known:
                    known.append(local)
                    stale.add(found[0])
        return stale

    def _link_tf_functions(self) -> set[Path]:
        """Tell each module which names it calls are tf.functions of other modules, and
        which base classes of its classes are Keras classes defined elsewhere."""
        stale: set[Path] = set()
        for resolved in self.in_run:
            summary = self.summaries.get(resolved)
            if summary is None:
                continue
            table: dict[str, TfFunction] = {}
            for name in sorted(summary.called_imports):
                found = self.locate(name, resolved)
                if found is None or found[0] == resolved:
                    continue
                target = self.summary(found[0])
                if target is not None and found[1] in target.exports:
                    table[name] = target.exports[found[1]]
            classes: dict[str, frozenset[str]] = {}
            for bases in summary.classes.values():
                for ref in bases:
                    if ref.startswith(LOCAL) or not may_be_project(ref):
                        continue
                    found = self.locate(ref, resolved)
                    if found is not None and found[0] != resolved:
                        kinds = self.class_kinds(*found)
                        if kinds:
                            classes[ref] = kinds
            if table:
                self.tables[resolved] = table
            if classes:
                self.keras_classes[resolved] = classes
            if table or classes:
                stale.add(resolved)
            for fact in summary.exports_elsewhere:
                found = self.locate(fact.target, resolved)
                if found is not None and found[0] != resolved:
                    local = ExportFact(found[1], fact.kind, fact.why, fact.signatures, fact.touched)
                    known = self.exported.setdefault(found[0], [])
                    if local not in known:
                        known.append(local)
                        stale.add(found[0])
        return stale

    def class_kinds(self, file: Path, qualname: str, depth: int = 0) -> frozenset[str]:
        """Keras kinds of class ``qualname`` of ``file``, through bases in any module."""
        summary = self.summary(file)
        bases = summary.classes.get(qualname) if summary is not None else None
        if not bases or depth > 8:
            return frozenset()
        kinds: set[str] = set()
        for ref in bases:
            if ref.startswith(LOCAL):
                kinds |= self.class_kinds(file, ref[len(LOCAL) :], depth + 1)
                continue
            direct = keras_kinds_of([canonical(ref)])
            if direct:
                kinds |= direct
            elif may_be_project(ref):
                found = self.locate(ref, file)
                if found is not None and found != (file, qualname):
                    kinds |= self.class_kinds(*found, depth + 1)
        return frozenset(kinds)

    def _propagate(self) -> None:
        seen: set[tuple[Path, Outgoing]] = set()
        pending = self._outgoing(sorted(self.summaries), seen)
        for _ in range(_MAX_ROUNDS):
            if not pending:
                break
            changed: set[Path] = set()
            # Shortest chains first, so each function keeps the shortest way it is reached.
            for source, out in sorted(
                pending, key=lambda p: (len(p[1].chain), p[1].target, p[1].chain, str(p[0]))
            ):
                found = self.locate(out.target, source)
                if found is None or found[0] == source:
                    continue
                file, qualname = found
                known = self.roots.setdefault(file, {})
                if qualname not in known:
                    known[qualname] = ExternalRoot(
                        qualname, out.kind, out.reason, out.chain, out.autograph
                    )
                    changed.add(file)
            self._analyse(*sorted(changed))
            pending = self._outgoing(sorted(changed), seen)

    def _outgoing(
        self, files: Iterable[Path], seen: set[tuple[Path, Outgoing]]
    ) -> list[tuple[Path, Outgoing]]:
        found = []
        for file in files:
            summary = self.summaries.get(file)
            for out in summary.outgoing if summary is not None else ():
                if (file, out) not in seen:
                    seen.add((file, out))
                    found.append((file, out))
        return found
