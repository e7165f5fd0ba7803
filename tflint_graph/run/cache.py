"""The on-disk result cache, ``.tflint-graph-cache/``.

One JSON file per analysis, ``<root>/<2 hex>/<sha256>.json``.  The key hashes everything an
analysis depends on: the file's bytes, the tool and cache-format versions, the effective
configuration, the :class:`ProjectView` the file was analysed with, the displayed and real
paths, the working directory (per-file-ignores match relative to it) and ``TFLINT_GRAPH_*``
environment switches.  Because the view is in the
key, a callee edit that changes what a caller learns (new roots, a tf.function table) gives
the caller a new key: nothing has to be invalidated by hand.

Entries hold data only (JSON, decoded against a whitelist of our own fact types; never
pickle).  A missing, corrupt, truncated or foreign entry is a miss.  Writes go to a temporary
file renamed into place, so concurrent runs never see half an entry.  Nothing is ever
pruned: the directory is safe to delete at any time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from tflint_graph.core import version
from tflint_graph.core.config import Config, find_config
from tflint_graph.core.facts import (
    ExportFact,
    ExternalRoot,
    ModuleSummary,
    Outgoing,
    ProjectView,
    RemoteFinding,
    TfFunction,
    TraceKind,
)
from tflint_graph.core.finding import DynamicStatus, Finding, Severity
from tflint_graph.source.reading import read_regular

DIR_NAME = ".tflint-graph-cache"
# Bump when the entry layout or the meaning of a cached fact changes.  2: findings carry
# fix_safety; 3: a .ipynb file is read as a notebook (an earlier entry holds its TFG001 as
# Python) and findings carry a cell.
CACHE_FORMAT = 3
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tflint-graph.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

# The only types an entry may name: anything else makes the entry a miss.
_DATACLASSES: dict[str, type] = {
    t.__name__: t
    for t in (
        Finding,
        DynamicStatus,
        ModuleSummary,
        TfFunction,
        ExternalRoot,
        Outgoing,
        ExportFact,
        RemoteFinding,
    )
}
_ENUMS: dict[str, type[Enum]] = {"Severity": Severity, "TraceKind": TraceKind}

Result = tuple[list[Finding], ModuleSummary | None]


class CacheFormatError(ValueError):
    """An entry that is not one this version wrote."""


# -- codec ---------------------------------------------------------------------------------


def pack(value: Any) -> Any:
    """A JSON-able form of a finding, a summary or a nested fact, tagged so that
    :func:`unpack` restores tuples, sets, frozensets, dicts with any keys and enums."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Enum):  # before str: our enums are str subclasses
        name = type(value).__name__
        if name not in _ENUMS:
            raise TypeError(f"cannot cache enum {name}")
        return {"e": name, "v": value.value}
    if isinstance(value, str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _DATACLASSES.get(name) is not type(value):
            raise TypeError(f"cannot cache {name}")
        fields = {f.name: pack(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"c": name, "f": fields}
    if isinstance(value, list):
        return [pack(v) for v in value]
    if isinstance(value, tuple):
        return {"t": [pack(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        # Set order depends on the hash seed: sort, so an entry's bytes are reproducible.
        items = sorted((pack(v) for v in value), key=_sort_key)
        return {"fs" if isinstance(value, frozenset) else "s": items}
    if isinstance(value, dict):
        return {"d": [[pack(k), pack(v)] for k, v in value.items()]}
    raise TypeError(f"cannot cache {type(value).__name__}")


def unpack(data: Any) -> Any:
    """The inverse of :func:`pack`; :class:`CacheFormatError` for anything else."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [unpack(v) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CacheFormatError("unexpected value")
    try:
        if "t" in data:
            return tuple(unpack(v) for v in _list(data["t"]))
        if "s" in data:
            return {unpack(v) for v in _list(data["s"])}
        if "fs" in data:
            return frozenset(unpack(v) for v in _list(data["fs"]))
        if "d" in data:
            return {unpack(k): unpack(v) for k, v in _list(data["d"])}
        if "e" in data:
            return _ENUMS[data["e"]](data["v"])
        if "c" in data:
            cls = _DATACLASSES[data["c"]]
            fields = data["f"]
            if not isinstance(fields, dict):
                raise CacheFormatError("fields are not a mapping")
            return cls(**{str(k): unpack(v) for k, v in fields.items()})
    except (KeyError, TypeError, ValueError) as exc:  # unknown tag, field, enum value
        raise CacheFormatError(str(exc)) from exc
    raise CacheFormatError("unknown tag")


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CacheFormatError("expected a list")
    return value


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def stable_json(value: Any) -> str:
    """A canonical text of a configuration or a view, for keys: dataclasses by type and
    fields, mappings in order, sets sorted; anything unforeseen by its ``repr``."""
    return json.dumps(_key_form(value), sort_keys=True, separators=(",", ":"))


def _key_form(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Enum):
        return [type(value).__name__, value.value]
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return ["path", os.fspath(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _key_form(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return [type(value).__name__, fields]
    if isinstance(value, Mapping):
        return ["map", [[_key_form(k), _key_form(v)] for k, v in value.items()]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted((_key_form(v) for v in value), key=_sort_key)]
    if isinstance(value, (list, tuple)):
        return [_key_form(v) for v in value]
    return ["repr", repr(value)]


# -- the store -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Ticket:
    """A cache key for one file analysed with one view, and the file's ``stat`` when it
    was hashed: a result is stored only if the file did not change meanwhile."""

    key: str
    stamp: tuple[int, int, int]


class Cache:
    """The entries under one directory; picklable (workers of a ``--jobs`` pool store what
    they analysed)."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        # Everything the run shares, hashed once.
        self.salt = _digest(
            [
                f"{version.__version__}/{CACHE_FORMAT}".encode(),
                stable_json(config).encode(),
                os.getcwd().encode(errors="surrogateescape"),
                # Switches such as TFLINT_GRAPH_NO_PREFILTER choose another analysis path:
                # comparing the paths must not be answered from the other's entries.
                stable_json(sorted(_switches())).encode(),
            ]
        )

    @classmethod
    def open(cls, root: Path, config: Config) -> Cache | None:
        """The cache in ``root`` (created with its tag and ``.gitignore``); ``None`` when
        it cannot be created: the run goes on without a cache."""
        try:
            root.mkdir(parents=True, exist_ok=True)
            for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "*\n")):
                if not (root / name).is_file():
                    _write_atomic(root / name, text.encode())
            if not os.access(root, os.W_OK | os.X_OK):
                return None
        except OSError:
            return None
        return cls(root, config)

    def ticket(self, path: Path, shown: str, view: ProjectView) -> Ticket | None:
        """The key of ``path`` analysed with ``view``; ``None`` if it cannot be read (the
        analysis reports that, uncached)."""
        read = read_regular(path)
        if read is None:
            return None
        data, info = read
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return None
        key = _digest(
            [
                self.salt.encode(),
                data,
                stable_json(view).encode(),
                shown.encode(errors="surrogateescape"),
                real.encode(errors="surrogateescape"),
            ]
        )
        return Ticket(key, _stamp(info))

    def _entry(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, ticket: Ticket) -> Result | None:
        """The cached result, or ``None`` (absent, unreadable, corrupt or foreign)."""
        try:
            raw = self._entry(ticket.key).read_bytes()
            entry = json.loads(raw)
            if (
                not isinstance(entry, dict)
                or entry.get("format") != CACHE_FORMAT
                or entry.get("key") != ticket.key
            ):
                return None
            findings = unpack(entry["findings"])
            summary = unpack(entry["summary"])
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        if not isinstance(findings, list) or not all(isinstance(f, Finding) for f in findings):
            return None
        if summary is not None and not isinstance(summary, ModuleSummary):
            return None
        return findings, summary

    def store(self, ticket: Ticket, path: Path, result: Result) -> None:
        """Write ``result`` unless ``path`` changed since it was hashed; never raises."""
        try:
            if _stamp(os.stat(path)) != ticket.stamp:
                return
            findings, summary = result
            entry = {
                "format": CACHE_FORMAT,
                "key": ticket.key,
                "findings": pack(findings),
                "summary": pack(summary),
            }
            target = self._entry(ticket.key)
            target.parent.mkdir(exist_ok=True)
            _write_atomic(target, json.dumps(entry, separators=(",", ":")).encode())
        except (OSError, TypeError, ValueError, RecursionError):
            pass


@dataclass(frozen=True)
class RunTicket:
    """The key of a whole run (its files, by path) and each file's digest."""

    key: str
    digests: dict[str, str]


def _file_digest(path: Path) -> str | None:
    read = read_regular(path)
    return None if read is None else hashlib.sha256(read[0]).hexdigest()


class RunRecords:
    """Whole-run results on top of the per-file entries: an unchanged tree is answered
    from one entry, without building the run's cross-module picture again.  A record is
    valid while every file of the run, every file outside it that the run read, and the
    absence of every file the run looked for and did not find are as they were."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def ticket(self, files: list[Path]) -> RunTicket | None:
        digests: dict[str, str] = {}
        for path in files:
            digest = _file_digest(path)
            if digest is None:
                return None  # unreadable files are reported afresh
            digests[str(path)] = digest
        names = [(str(p), os.path.realpath(p)) for p in files]
        key = _digest([b"run", self.cache.salt.encode(), stable_json(names).encode()])
        return RunTicket(key, digests)

    def load(self, ticket: RunTicket) -> dict[str, list[Finding]] | None:
        try:
            entry = json.loads(self.cache._entry(ticket.key).read_bytes())
            if (
                not isinstance(entry, dict)
                or entry.get("format") != CACHE_FORMAT
                or entry.get("key") != ticket.key
                or entry.get("files") != ticket.digests
            ):
                return None
            for name, digest in entry["outside"].items():
                if _file_digest(Path(name)) != digest:
                    return None
            if any(Path(name).is_file() for name in entry["absent"]):
                return None
            found = {name: unpack(items) for name, items in entry["findings"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None
        if set(found) != set(ticket.digests) or not all(
            isinstance(items, list) and all(isinstance(f, Finding) for f in items)
            for items in found.values()
        ):
            return None
        return found

    def store(
        self,
        ticket: RunTicket,
        findings: Mapping[str, list[Finding]],
        outside: list[Path],
        absent: list[Path],
    ) -> None:
        """Write the record unless a file changed during the run; never raises."""
        try:
            if self.ticket([Path(name) for name in ticket.digests]) != ticket:
                return
            digests = {}
            for path in outside:
                digest = _file_digest(path)
                if digest is None:
                    return
                digests[str(path)] = digest
            entry = {
                "format": CACHE_FORMAT,
                "key": ticket.key,
                "files": ticket.digests,
                "outside": digests,
                "absent": [str(p) for p in absent],
                "findings": {name: pack(items) for name, items in findings.items()},
            }
            target = self.cache._entry(ticket.key)
            target.parent.mkdir(exist_ok=True)
            _write_atomic(target, json.dumps(entry, separators=(",", ":")).encode())
        except (OSError, TypeError, ValueError, RecursionError):
            pass


# What marks the top folder of a project that has no [tool.tflint-graph] table.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", ".hg")


def default_root(paths: Iterable[Path]) -> Path:
    """``.tflint-graph-cache`` next to the pyproject.toml that configures the run, else in
    the project the paths belong to (:func:`project_root`): never in whatever folder the
    command happens to run from."""
    targets = list(paths)
    found = find_config(targets)
    return (found.parent if found is not None else project_root(targets)) / DIR_NAME


def project_root(paths: Iterable[Path]) -> Path:
    """The nearest folder at or above the paths' common folder that holds a project marker
    (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.git``, ``.hg``), else that common
    folder itself."""
    folders: list[str] = []
    for path in paths:
        try:
            resolved = os.path.realpath(path)  # never raises on a symlink loop
            folders.append(resolved if os.path.isdir(resolved) else os.path.dirname(resolved))
        except (OSError, ValueError):
            continue
    if not folders:
        return Path.cwd()
    try:
        common = Path(os.path.commonpath(folders))
    except ValueError:  # paths on different drives
        common = Path(folders[0])
    for folder in (common, *common.parents):
        if any(os.path.exists(folder / marker) for marker in PROJECT_MARKERS):
            return folder
    return common


def open_cache(cache: bool | Path | None, paths: Iterable[Path], config: Config) -> Cache | None:
    """``lint_paths``'s ``cache`` argument as a :class:`Cache`: ``None``/``False`` none,
    ``True`` the default directory, a path that directory."""
    if cache is None or cache is False:
        return None
    root = default_root(paths) if cache is True else Path(cache)
    return Cache.open(root, config)


def _switches() -> Iterable[tuple[str, str]]:
    return ((k, v) for k, v in os.environ.items() if k.startswith("TFLINT_GRAPH_"))


def _digest(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:  # length-prefixed: no two part lists hash alike
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_size, info.st_mtime_ns, info.st_ino)


def _write_atomic(target: Path, data: bytes) -> None:
    import tempfile  # only when writing: warm runs start faster without it

    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
