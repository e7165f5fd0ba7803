"""Which Keras a project declares (SPEC §1, ``keras-version = "auto"``).

Keras 3 does not AutoGraph-convert ``Layer.call`` and the steps; Keras 2 converts ``call``.
Which one a project runs is decided by its dependencies: a pin that excludes Keras 3 —
``tensorflow<2.16`` (``tf.keras`` is Keras 3 from TF 2.16 on), ``keras<3``, or ``tf-keras``
with ``TF_USE_LEGACY_KERAS`` — means Keras 2; anything else, no declaration included, means
Keras 3, the default of every TensorFlow released since March 2024.

The declarations are read from the first folder, walking up from the linted path, that
holds one of ``pyproject.toml``, ``setup.cfg``, ``setup.py``, ``requirements*.txt``
(also ``requirements/*.txt``), ``environment.yml``, or the metadata of a built package (an
sdist's ``PKG-INFO``, an unpacked wheel's ``*.dist-info/METADATA``); the walk stops at a
repository root.
So does a supported Python range that no TensorFlow with Keras 3 runs on
(``python_requires="<3.9"``: TensorFlow 2.16 needs Python 3.9).
Requirements are read whatever their environment markers: a project that supports Keras 2
anywhere is analysed as Keras 2, where fewer constructs raise (precision before recall).
"""

from __future__ import annotations

import configparser
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tflint_graph.core.config import Config, tomllib
from tflint_graph.core.vocabulary import LEGACY_SWITCH
from tflint_graph.source.files import default_excluded

_TENSORFLOW = frozenset(
    {"tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-macos", "tensorflow-intel"}
)
_LEGACY = frozenset({"tf-keras"})
# Packages that never supported Keras 3: a project that needs them runs Keras 2
# (TensorFlow Addons reached its end of life in 2024 on TensorFlow 2.15; the `tensorflow-gpu`
# package ended with TensorFlow 2.11, its 2.12.0 being a stub that refuses to build).
_KERAS2_ONLY = frozenset({"tensorflow-addons", "tensorflow-gpu"})
# Versions with Keras 3: a specifier that admits none of them excludes it.
_TF_WITH_KERAS3 = ("2.16.0", "2.17.0", "2.18.0", "2.19.0", "2.20.0", "2.21.0", "2.99.0")
_KERAS3 = ("3.0.0", "3.5.0", "3.15.0", "3.99.0")  # probes; lowest first
# Python versions TensorFlow 2.16+ (and Keras 3) support: a project's `python_requires` that
# admits none of them can only ever install Keras 2.
_PYTHONS_OF_KERAS3 = ("3.9.0", "3.10.0", "3.11.0", "3.12.0", "3.13.0", "3.14.0")
_PYTHON_REQUIRES = {
    "setup.py": re.compile(r"""python_requires\s*=\s*["']([^"'\n]+)["']"""),
    "setup.cfg": re.compile(r"^\s*python_requires\s*=\s*(.+?)\s*$", re.MULTILINE),
    "PKG-INFO": re.compile(r"^Requires-Python:\s*(.+?)\s*$", re.MULTILINE),
    "METADATA": re.compile(r"^Requires-Python:\s*(.+?)\s*$", re.MULTILINE),
}
_ANY_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# A requirement-like string literal in setup.py.
# (any spelling of the name: `tensorflow_addons` is `tensorflow-addons`)
_SETUP_PY = re.compile(
    r"""["']((?:tensorflow|tf[-_]keras|keras)(?:[-_.][A-Za-z0-9]+)*(?![A-Za-z0-9])[^"'\n]*)["']"""
)


@dataclass(frozen=True, slots=True)
class KerasDeclaration:
    version: str  # "2" or "3"
    reason: str  # for --verbose and JSON: "requirements.txt: tensorflow<2.16 excludes Keras 3"


def declared_keras(start: Path) -> KerasDeclaration:
    """The Keras the project around ``start`` (a file or folder) declares."""
    _SWITCH_SEEN.clear()  # each resolution reads the sources as they are now
    _PROJECT_SEEN.clear()
    found_at = _declaring_folder(start)
    if found_at is None:
        return KerasDeclaration("3", "no dependency declaration found")
    # The nearest folder whose declarations name TensorFlow or Keras decides (a `scripts/`
    # folder's shell script or a docs requirements file says nothing about them).
    decided = _nearest_decision(found_at[0], {})
    if decided is not None:
        return decided[1]
    folder = found_at[0]
    return KerasDeclaration("3", f"no pin in {folder.name or folder} excludes Keras 3")


def _decide(folder: Path, candidates: list[Path]) -> KerasDeclaration | None:
    """What the declarations ``candidates`` of ``folder`` say of Keras; None when they
    name neither TensorFlow nor Keras nor a Python range (a folder's documentation
    requirements, say), which decides nothing."""
    legacy: list[str] = []
    switch = False
    named = ""
    for file, text in _read(candidates):
        switch = switch or _sets_switch(text)
        for spec in _python_requires(file.name, text):
            if _excludes_python_of_keras3(spec):
                return KerasDeclaration(
                    "2", f"{file.name}: Python {spec} excludes every TensorFlow with Keras 3"
                )
        for requirement in _requirements(file, text):
            found = _excludes_keras3(requirement)
            if found == "legacy":
                legacy.append(f"{file.name}: {requirement}")
            elif found:
                return KerasDeclaration("2", f"{file.name}: {requirement} {found}")
            elif not named and _names_keras(requirement):
                named = file.name
    if legacy and (switch or _sources_mention_switch(folder)):
        return KerasDeclaration("2", f"{legacy[0]} with {LEGACY_SWITCH}")
    if named or legacy:
        return KerasDeclaration("3", f"no pin in {folder.name or folder} excludes Keras 3")
    return None


def _names_keras(requirement: str) -> bool:
    name = _package(requirement)
    return name in _TENSORFLOW or name in _LEGACY or name == "keras"


def _package(requirement: str) -> str:
    """The normalised name a requirement string starts with (``tf_keras`` -> ``tf-keras``);
    "" when it starts with none."""
    head = _ANY_NAME.match(requirement)
    return re.sub(r"[._]+", "-", head.group(1)).lower() if head else ""


def with_folder_versions(config: Config, files: Iterable[Path]) -> Config:
    """``config`` with the folders among ``files`` that run another Keras than the run's
    (``Config.keras_folders``), when ``keras-version`` is ``auto``.

    A monorepo's sub-project declares its own dependencies (``efficientdet/requirements.txt``
    pinning ``tensorflow<2.16`` under a root that pins nothing): the nearest folder above a
    file whose declarations name TensorFlow or Keras decides for it.  Where none does, a
    folder whose modules import what only Keras 2 has (``tensorflow_addons``,
    ``tf.keras.layers.experimental``, ``keras.engine``) runs Keras 2; the folder, not the
    run, so that a one-file run of the editor and a run over the tree agree."""
    if not config.keras_reason.startswith("auto"):
        return config
    nearest: dict[Path, tuple[Path, KerasDeclaration] | None] = {}
    imports: dict[Path, str] = {}
    differ: dict[str, tuple[str, str]] = {}
    seen: set[str] = set()
    folders = {os.path.dirname(os.path.abspath(file)) for file in files}
    top = Path(os.path.commonpath(sorted(folders))) if folders else None
    for where in sorted(folders):
        if where in seen:
            continue  # the folder's decision is made: one per folder
        seen.add(where)
        folder = Path(where)
        decided = _nearest_decision(folder, nearest)
        if decided is None and config.keras_version == "3":
            if folder not in imports:
                imports[folder] = _imports_keras2(folder)
            if imports[folder]:
                decided = folder, KerasDeclaration("2", f"{imports[folder]}, gone in Keras 3")
            elif top is not None:
                # Elsewhere in the project, an API TensorFlow dropped before Keras 3
                # (`backbones/` importing `tensorflow.python.keras.applications`, a trainer
                # setting `tf.keras.mixed_precision.experimental` policies): the whole
                # project runs the TensorFlow that has it.
                root = _project_root(folder, top)
                found = _project_imports_keras2(root)
                if found:
                    decided = root, KerasDeclaration("2", f"{found}, gone in Keras 3")
        if decided is not None and decided[1].version != config.keras_version:
            where, found = decided
            differ[str(where)] = (found.version, f"auto: {found.reason}")
    if not differ:
        return config
    # The deepest folder first: the one a lookup meets first is the nearest.
    folders = sorted(differ.items(), key=lambda item: -len(item[0]))
    return replace(config, keras_folders=tuple((f, v, why) for f, (v, why) in folders))


def _nearest_decision(
    folder: Path, memo: dict[Path, tuple[Path, KerasDeclaration] | None]
) -> tuple[Path, KerasDeclaration] | None:
    """The nearest folder from ``folder`` up (to a repository root) whose declarations
    decide the Keras, with the decision."""
    walked: list[Path] = []
    found: tuple[Path, KerasDeclaration] | None = None
    for here in (folder, *folder.parents):
        if here in memo:
            found = memo[here]
            break
        walked.append(here)
        candidates = list(_candidates(here))
        decision = _decide(here, candidates) if candidates else None
        if decision is not None:
            found = here, decision
            break
        if (here / ".git").exists():
            break
    for here in walked:
        memo[here] = found
    return found


# Imports that only work where Keras 2 runs (verified to fail under TensorFlow 2.21 with
# Keras 3.15): TensorFlow Addons, never ported to Keras 3, and the Keras 2 namespaces that
# Keras 3 removed (`tf.keras.layers.experimental.preprocessing`, `keras.engine`, ...); at
# any indent (an import inside a function or a `try` counts).
_KERAS2_MODULES = (
    rb"tensorflow_addons"
    rb"|tensorflow\.keras\.(?:mixed_precision\.experimental|layers\.experimental|experimental"
    rb"|wrappers|utils\.np_utils|optimizers\.experimental)"
    rb"|keras\.(?:engine|layers\.(?:experimental|core|convolutional|recurrent|preprocessing)"
    rb"|wrappers|utils\.np_utils|backend\.tensorflow_backend)"
    # `from tensorflow.keras.layers import experimental` and the like
    rb"|(?:tensorflow\.)?keras(?:\.layers|\.mixed_precision)?[ \t]+import[ \t]+experimental"
)
_KERAS2_IMPORTS = re.compile(
    rb"^[ \t]*(?:import|from)[ \t]+(" + _KERAS2_MODULES + rb")\b", re.MULTILINE
)
# The same in a notebook's JSON: a line of a cell's source starts a JSON string, or follows
# an escaped newline inside one.
_KERAS2_NOTEBOOK_IMPORTS = re.compile(
    rb'(?:"|\\n)[ \t]*(?:import|from)[ \t]+(' + _KERAS2_MODULES + rb")\b"
)


def _imports_keras2(folder: Path) -> str:
    """``module imports name`` for a module directly in ``folder`` that imports what only
    Keras 2 has; "" when none does."""
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".ipynb"))
    except OSError:
        return ""
    for path in names[:_SCAN_LIMIT]:
        data = _regular_bytes(path)
        if data is None:
            continue
        pattern = _KERAS2_NOTEBOOK_IMPORTS if path.suffix == ".ipynb" else _KERAS2_IMPORTS
        found = pattern.search(data) if b"import" in data else None
        if found is not None:
            return f"{path.name} imports {found.group(1).decode()}"
    return ""


_SCAN_LIMIT = 5000  # Python files read for the switch: a bound on huge trees

# APIs that TensorFlow itself dropped before Keras 3 came, used anywhere in a module's text:
# `tf.keras.mixed_precision.experimental.Policy(...)`, TensorFlow's own copy of Keras 2's
# applications (`tensorflow.python.keras.applications`, gone in TensorFlow 2.21).  They pin
# the TensorFlow of the whole project (one process imports them all), where a library import
# such as `tensorflow_addons` only speaks for its folder (a sub-project of a monorepo).
_KERAS2_ANYWHERE = re.compile(
    rb"\bkeras\.(?:mixed_precision\.experimental|layers\.experimental\.preprocessing)\b"
    rb"|\btensorflow\.python\.keras\.(?:applications|engine|utils|saving)\b"
)
_PROJECT_SCAN_LIMIT = 2000  # Python files of a project read for Keras 2 APIs
# What `_project_imports_keras2` found per project root (a flake8 run asks once per file).
_PROJECT_SEEN: dict[Path, str] = {}


def _project_root(folder: Path, top: Path) -> Path:
    """The repository root above ``folder`` (a ``.git`` folder), else ``top``, the folder
    the run's files have in common."""
    for here in (folder, *folder.parents):
        if (here / ".git").exists():
            return here
    return top


def _project_imports_keras2(root: Path) -> str:
    """``path uses name`` for a module of the project under ``root`` that uses an API only
    a TensorFlow before Keras 3 has; "" when none does (read once per root)."""
    if root in _PROJECT_SEEN:
        return _PROJECT_SEEN[root]
    found = ""
    for path, data in _python_sources(root, _PROJECT_SCAN_LIMIT):
        match = _KERAS2_ANYWHERE.search(data) if b"keras" in data else None
        if match is not None:
            found = f"{os.path.relpath(path, root)} uses {match.group(0).decode()}"
            break
    _PROJECT_SEEN[root] = found
    return found


# What `_sources_mention_switch` found per folder during one run (the run's Keras and its
# sub-projects' both ask); `declared_keras`, which starts a run's resolution, clears it.
_SWITCH_SEEN: dict[Path, bool] = {}


def _sources_mention_switch(folder: Path) -> bool:
    if folder not in _SWITCH_SEEN:
        _SWITCH_SEEN[folder] = _scan_for_switch(folder)
    return _SWITCH_SEEN[folder]


def _scan_for_switch(folder: Path) -> bool:
    """Some Python file of the project sets or asks for ``TF_USE_LEGACY_KERAS`` (a package
    that needs tf-keras says so at import): read only when ``tf-keras`` is declared."""
    needle = LEGACY_SWITCH.encode()
    return any(
        needle in data and _sets_switch(data.decode("utf-8", "replace"))
        for _, data in _python_sources(folder, _SCAN_LIMIT)
    )


def _python_sources(folder: Path, limit: int) -> Iterator[tuple[Path, bytes]]:
    """The bytes of the first ``limit`` ``.py`` files under ``folder`` (hidden and excluded
    folders left out), in a stable order."""
    seen = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not default_excluded(d))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > limit:
                return
            path = Path(top) / name
            data = _regular_bytes(path)
            if data is not None:
                yield path, data


def _sets_switch(text: str) -> bool:
    """``text`` sets ``TF_USE_LEGACY_KERAS``: names it outside a ``#`` comment (``ENV
    ...=1``, ``os.environ[...] = "1"``), or in a comment that gives it a true value (``#
    export TF_USE_LEGACY_KERAS=1``, an instruction); a comment saying the switch is not used
    sets nothing."""
    if LEGACY_SWITCH not in text:
        return False
    for line in text.splitlines():
        code, _, comment = line.partition("#")
        if LEGACY_SWITCH in code or _SWITCH_ON.search(comment):
            return True
    return False


_SWITCH_ON = re.compile(LEGACY_SWITCH + r"""["']?\s*[:=]\s*["']?(1|true|yes)\b""", re.I)


def _declaring_folder(start: Path) -> tuple[Path, list[Path]] | None:
    """The first folder up from ``start`` that holds declarations, with them."""
    try:
        here = start.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop
        here = Path(os.path.abspath(start))
    try:
        if not here.is_dir():
            here = here.parent
    except OSError:
        here = here.parent
    for folder in (here, *here.parents):
        candidates = list(_candidates(folder))
        if candidates:
            return folder, candidates
        if (folder / ".git").exists():
            return None
    return None


def _candidates(folder: Path) -> Iterator[Path]:
    """The declaration files of ``folder``, in a fixed order; one listing of the folder
    (a run looks at every folder of the tree: a stat per possible name was most of it)."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        if name in names and (folder / name).is_file():
            yield folder / name
    for name in sorted(n for n in names if _conda_env(n)):
        if (folder / name).is_file():
            yield folder / name
    if "PKG-INFO" in names and (folder / "PKG-INFO").is_file():
        yield folder / "PKG-INFO"
    if "Dockerfile" in names and (folder / "Dockerfile").is_file():
        yield folder / "Dockerfile"
    if "docker" in names and (folder / "docker" / "Dockerfile").is_file():
        yield folder / "docker" / "Dockerfile"
    yield from (
        folder / n for n in sorted(names) if n.startswith("requirements") and n.endswith(".txt")
    )
    try:
        if "requirements" in names:
            yield from sorted((folder / "requirements").glob("*.txt"))
        for n in sorted(names):
            if n.endswith(".dist-info") and (folder / n / "METADATA").is_file():
                yield folder / n / "METADATA"
    except OSError:
        return
    yield from (folder / n for n in sorted(names) if n.endswith(".sh"))


def _read(files: list[Path]) -> Iterator[tuple[Path, str]]:
    for file in files:
        data = _regular_bytes(file)
        if data is not None:
            yield file, _text(data)


def _text(data: bytes) -> str:
    """Declarations as text: UTF-8, or UTF-16 when a byte-order mark says so (a
    `pip freeze > requirements.txt` in Windows PowerShell writes UTF-16)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _regular_bytes(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (a FIFO named ``x.py`` would block the
    read forever); None otherwise or when it cannot be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        return path.read_bytes()
    except (OSError, ValueError):
        return None


def _requirements(file: Path, text: str) -> Iterator[str]:
    """The requirement strings a declaration file names (unparsed, PEP 508 or near it)."""
    name = file.name
    if name == "pyproject.toml":
        yield from _pyproject(text)
    elif name == "setup.cfg":
        yield from _setup_cfg(text)
    elif name == "setup.py":
        yield from (m.group(1) for m in _SETUP_PY.finditer(text))
    elif name in ("PKG-INFO", "METADATA"):
        for line in text.splitlines():
            if line.startswith("Requires-Dist:"):
                yield line[len("Requires-Dist:") :].strip()
            elif not line.strip():
                break  # the headers end at the first blank line; the description follows
    elif name == "Dockerfile":
        yield from _dockerfile(text)
    elif name.endswith(".sh"):  # an install script: `pip install tensorflow==2.3.1`
        yield from _pip_pins(text)
    elif _conda_env(name):
        yield from _conda_items(text)
    else:  # requirements*.txt
        for line in text.splitlines():
            item = line.split(" #", 1)[0].strip()
            if item and not item.startswith(("#", "-")):
                yield item


# `FROM tensorflow/tensorflow:2.3.1-gpu`: the image pins TensorFlow.
_TF_IMAGE = re.compile(r"^\s*FROM\s+tensorflow/tensorflow:(\d+\.\d+(?:\.\d+)?)", re.I | re.M)
# `RUN pip install tensorflow-gpu==2.4.1 numpy`: the requirements a pip line names.
_PIP_INSTALL = re.compile(r"\bpip3?\s+install\s+([^&;|\n\\]+)")


def _dockerfile(text: str) -> Iterator[str]:
    """The TensorFlow version of a ``tensorflow/tensorflow`` base image, and the pinned
    requirements of ``pip install`` lines."""
    for m in _TF_IMAGE.finditer(text):
        yield f"tensorflow=={m.group(1)}"
    yield from _pip_pins(text)


def _pip_pins(text: str) -> Iterator[str]:
    """The pinned requirements that the ``pip install`` lines of a script name."""
    for m in _PIP_INSTALL.finditer(text):
        for word in m.group(1).split():
            word = word.strip("\"'")
            if word and not word.startswith("-") and re.search(r"[=<>~]", word):
                yield word


def _pyproject(text: str) -> Iterator[str]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return
    project = data.get("project", {})
    if isinstance(project, dict):
        yield from _strings(project.get("dependencies"))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            for group in extras.values():
                yield from _strings(group)
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group in groups.values():
            yield from _strings(group)
    poetry = data.get("tool", {}).get("poetry", {})
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies")]
        for group in (poetry.get("group") or {}).values():
            if isinstance(group, dict):
                tables.append(group.get("dependencies"))
        for table in tables:
            if isinstance(table, dict):
                for dep, constraint in table.items():
                    if isinstance(constraint, dict):
                        constraint = constraint.get("version", "")
                    if isinstance(constraint, str):
                        yield f"{dep}{_poetry(constraint)}"


def _poetry(constraint: str) -> str:
    """Poetry's ``^2.12`` / ``~2.15`` / ``2.15.*`` / ``*`` as a PEP 440 specifier."""
    c = constraint.strip()
    if c in ("", "*"):
        return ""
    caret = re.fullmatch(r"\^(\d+)(?:\.(\d+))?(?:\.\d+)?", c)
    if caret:
        major, minor = int(caret.group(1)), int(caret.group(2) or 0)
        upper = f"{major + 1}" if major else f"0.{minor + 1}"
        return f">={c[1:]},<{upper}"
    tilde = re.fullmatch(r"~(\d+)\.(\d+)(?:\.\d+)?", c)
    if tilde:
        return f">={c[1:]},<{tilde.group(1)}.{int(tilde.group(2)) + 1}"
    if c[0].isdigit():
        return f"=={c}"
    return c


def _setup_cfg(text: str) -> Iterator[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if parser.has_option("options", "install_requires"):
        yield from _lines(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            yield from _lines(value)


def _lines(value: str) -> Iterator[str]:
    return (line.strip() for line in value.splitlines() if line.strip())


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


def _conda_env(name: str) -> bool:
    """A conda environment file: ``environment.yml``, ``conda_env.yaml``, ``conda.yml``..."""
    stem, dot, suffix = name.rpartition(".")
    return (
        bool(dot)
        and suffix in ("yml", "yaml")
        and ("conda" in stem or stem.startswith("environment"))
    )


def _conda_items(text: str) -> Iterator[str]:
    """The packages a conda environment lists (pip's spelling: conda's ``tensorflow=2.15``
    is ``tensorflow==2.15.*``)."""
    for line in text.splitlines():
        item = line.strip()
        if item.startswith("- "):
            spec = item[2:].strip()
            conda = re.fullmatch(r"([A-Za-z0-9._-]+)=([0-9][0-9.]*)", spec)
            yield f"{conda.group(1)}=={conda.group(2)}.*" if conda else spec


def _python_requires(name: str, text: str) -> Iterator[str]:
    """The Python versions a declaration file admits (``python_requires``,
    ``requires-python``, ``Requires-Python:``, a conda environment's ``python=3.8``), as
    specifier strings."""
    if _conda_env(name):
        for item in _conda_items(text):
            if _package(item) == "python":
                spec = item[len("python") :].strip()
                if spec and spec[0] in "=<>!~":
                    yield spec
        return
    if name == "pyproject.toml":
        try:
            project = tomllib.loads(text).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeError):
            return
        value = project.get("requires-python") if isinstance(project, dict) else None
        if isinstance(value, str):
            yield value
        return
    pattern = _PYTHON_REQUIRES.get(name)
    if pattern is not None:
        yield from (m.group(1) for m in pattern.finditer(text))


def _excludes_python_of_keras3(spec: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier:
        return False
    return bool(str(specifier)) and not any(specifier.contains(v) for v in _PYTHONS_OF_KERAS3)


def _excludes_keras3(requirement: str) -> str:
    """Why ``requirement`` excludes Keras 3 ("excludes Keras 3"), "legacy" for ``tf-keras``
    (Keras 2 only with ``TF_USE_LEGACY_KERAS``), or "" when it does not."""
    # Imported here: only a run that resolves `keras-version = "auto"` parses requirements.
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import Version

    name = _package(requirement)
    if not name:
        return ""
    if name in _KERAS2_ONLY:
        return "never supported Keras 3"
    if name not in _TENSORFLOW and name not in _LEGACY and name != "keras":
        return ""
    if name in _LEGACY:
        return "legacy"
    try:
        specifier = Requirement(requirement).specifier
    except InvalidRequirement:
        return ""
    probes = _KERAS3 if name == "keras" else _TF_WITH_KERAS3
    low, high = Version(probes[0]), Version("4" if name == "keras" else "3")
    # The versions the specifier names count too: `tensorflow==2.18.1` admits no probe.
    named = [spec.version.removesuffix(".*") for spec in specifier]
    candidates = [*probes, *(v for v in named if _parses(v) and low <= Version(v) < high)]
    if not str(specifier) or any(specifier.contains(v, prereleases=True) for v in candidates):
        return ""
    return "excludes Keras 3"


def _parses(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


def with_keras_version(config: Config, paths: Sequence[Path]) -> Config:
    """``config`` with ``keras-version = "auto"`` resolved from the project's declarations
    (from its configuring folder, else the first path); an explicit setting is kept."""
    if config.keras_reason:
        return config
    if config.keras_version != "auto":
        return replace(config, keras_reason="set in the configuration")
    start = config.root or (paths[0] if paths else Path.cwd())
    found = declared_keras(start)
    return replace(config, keras_version=found.version, keras_reason=f"auto: {found.reason}")
