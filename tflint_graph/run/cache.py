"""The on-disk result cache, ``.tflint-graph-cache/``.

One JSON file per analysis, ``<root>/<2 hex>/<sha256>.json``. The key hashes everything an
analysis depends on: the file's bytes, the tool and cache-format versions and the tool's own
code, the effective configuration, the :class:`ProjectView` the file was analysed with, the
displayed and real paths, the working directory (per-file-ignores match relative to it) and
``TFLINT_GRAPH_*`` environment switches. Because the view is in the key, a callee edit that
changes what a caller learns (new roots, a tf.function table) gives the caller a new key:
nothing has to be invalidated by hand. Beside them, the same directory holds run records
(:class:`RunRecords`: one per set of files run together, with one part per file, named by
its content) and, under ``projects/``, each project's latest record.

Entries hold data only (JSON, decoded against a whitelist of our own fact types; never
pickle).  A missing, corrupt, truncated or foreign entry is a miss.  Writes go to a temporary
file renamed into place, so concurrent runs never see half an entry.  Nothing is ever
pruned (only a damaged part is removed, to be written again): the directory is safe to
delete at any time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import re
import stat
import time
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
from tflint_graph.source.modules import real_path
from tflint_graph.source.reading import read_regular

DIR_NAME = ".tflint-graph-cache"
# Bump when the entry layout or the meaning of a cached fact changes.  2: findings carry
# fix_safety; 3: a .ipynb file is read as a notebook (an earlier entry holds its TFG001 as
# Python) and findings carry a cell; 4: run records keep each file's analyses (project
# context); 5: summaries tell how accessors are called (ModuleSummary.accessor_calls);
# 6: a run record names each file's part (its findings and analyses), an entry of its own,
# instead of holding them all; 7: traced calls out (``ModuleSummary.outgoing``) name the
# methods reached through instances, constructors and bases of other modules, summaries name
# run-once decorators (``ModuleSummary.once_decorators``), and calls out and roots say why
# AutoGraph leaves their caller alone (``unconverted``: Keras 3); 8: summaries name a
# script's Keras classes (``ModuleSummary.eager_script``); 9: summaries leave inherited
# guard values to the run (``guard_classes``) and name the ones they looked up; 10: they name
# the parameters their functions hand to escape hatches (``escape_params``); 11: an accessor's
# call inside a method of its own name (a delegation) no longer counts in ``accessor_calls``;
# 12: summaries name the classes they make and use only eagerly (``eager_made``); 13: and
# the attribute names they read on other objects (``foreign_attributes``); 14: a module's own
# functions named like Keras entries (``evaluate(model, x)``) no longer hand anything to Keras
# (``eager_script``, ``eager_made``); 15: an instance compiled with ``run_eagerly=True`` is
# used eagerly where it is fitted or handed on (``eager_made``); 16: only when it is handed
# to the module's own plain functions; 17: a module building a functional model no longer
# makes every call of an instance in it symbolic, only those given its ``Input`` values;
# 18: the tf.functions a module exports carry their parameters' roles (TFG208 across modules);
# 19: summaries name the arguments their calls of other modules' tf.functions give an evident
# tensor (``tensor_args``).
CACHE_FORMAT = 19
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
        ProjectView,  # in run records: the view of each analysis
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
                f"{version.__version__}/{CACHE_FORMAT}/{code_stamp()}".encode(),
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


@dataclass
class RunTicket:
    """The key of a whole run (its files, by path), each file's ``stat`` when the run began
    and, once known, each file's digest (``RunRecords.load`` or ``.digest``)."""

    key: str
    reals: dict[str, str]  # each file's canonical path (the flake8 plugin looks files up by it)
    stamps: dict[str, tuple[int, int, int]]
    began: int  # time.time_ns() before the first stat
    digests: dict[str, str] = dataclasses.field(default_factory=dict)


# A file whose stat is as recorded is taken to hold the recorded bytes only when it was last
# modified this long before the recording run began: a file rewritten within the file
# system's timestamp granularity of being read keeps its stat (git's "racy" entries).
_SETTLED_NS = 2_000_000_000


def _file_digest(path: Path) -> str | None:
    read = read_regular(path)
    return None if read is None else hashlib.sha256(read[0]).hexdigest()


# What one file of a run analysed: its findings with the view of its last analysis, and each
# (view, summary) of its analyses in order (``Project.analyses``).
Analyses = list[tuple[ProjectView, "ModuleSummary | None"]]


@dataclass
class RunRecord:
    """A loaded run record: each file's digest as recorded and the key of its part (its
    findings and analyses, an entry of its own), which is read and unpacked only when asked
    for: a run on a few files of a large project reads only theirs."""

    ticket: RunTicket
    digests: dict[str, str]  # as recorded
    parts: dict[str, str]  # name -> the key of its part
    outside: dict[str, str]  # files outside the run it read, and their digests
    absent: list[str]  # files it looked for and did not find
    cache: Cache
    settles: bool = False  # written again, it would spare reading some files next time
    mend: bool = True  # remove a damaged part (so that the next record writes it again)
    _read: dict[str, list[Any] | None] = dataclasses.field(default_factory=dict, repr=False)

    def changed(self) -> list[str]:
        """The files whose bytes differ from the record's."""
        return [n for n, d in self.ticket.digests.items() if self.digests.get(n) != d]

    def findings(self, name: str) -> list[Finding] | None:
        found = self._half(name, 0)
        if isinstance(found, list) and all(isinstance(f, Finding) for f in found):
            return found
        return self._damaged(name)

    def analyses(self, name: str) -> Analyses | None:
        found = self._half(name, 1)
        if not isinstance(found, list) or not found:
            return self._damaged(name)
        for item in found:
            if not (
                isinstance(item, tuple)
                and len(item) == 2
                and isinstance(item[0], ProjectView)
                and (item[1] is None or isinstance(item[1], ModuleSummary))
            ):
                return self._damaged(name)
        return found

    def _half(self, name: str, index: int) -> Any:
        if name not in self._read:
            self._read[name] = _read_part(self.cache._entry(self.parts[name]), self.parts[name])
        part = self._read[name]
        if part is None or part is _MISSING:
            return None
        try:
            return unpack(part[index])
        except (ValueError, TypeError, RecursionError):
            return None

    def _damaged(self, name: str) -> None:
        """A part that is there but does not decode as one: removed when ``mend``, so that
        the run made afresh stores it again (parts are written only where none is)."""
        if self.mend and self._read.get(name) is not _MISSING:
            with contextlib.suppress(OSError):
                os.unlink(self.cache._entry(self.parts[name]))
        return None


# A part whose entry does not exist (as opposed to one that is damaged).
_MISSING: list[Any] = []


def _read_part(path: Path, key: str) -> list[Any] | None:
    """The two halves of the part ``key`` (packed findings, packed analyses), ``_MISSING``
    when it is not there, ``None`` when its entry is not one (the caller removes it)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return _MISSING
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return None
    part = entry.get("part")
    if entry.get("key") != key or not isinstance(part, list) or len(part) != 2:
        return None
    return part


def pack_entry(findings: list[Finding], analyses: Analyses) -> str:
    """One file's part of a run record: its findings and the (view, summary) of each of its
    analyses (see :class:`RunRecords`), as JSON text."""
    return _dumps([pack(findings), pack(analyses)])


def _part_key(text: str) -> str:
    # Named by its content: a part two records share (most files, when a few changed) is
    # one entry, written once.
    return _digest([b"part", f"{version.__version__}/{CACHE_FORMAT}".encode(), text.encode()])


_KEY = re.compile(r"[0-9a-f]{64}")


def _is_key(value: Any) -> bool:
    """Whether ``value`` can be the key of an entry (a record names its parts by key: a
    damaged one must not name a file elsewhere)."""
    return isinstance(value, str) and _KEY.fullmatch(value) is not None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class RunRecords:
    """Whole-run results on top of the per-file entries: an unchanged tree is answered
    from one entry, without building the run's cross-module picture again.  A record holds,
    for every file of the run, its digest, its ``stat``, its canonical path and the key of
    its part, and names every file outside the run that the run read and every file it
    looked for and did not find.  A part (an entry of its own, named by its content) holds
    one file's findings and the (view, summary) of each of its analyses.  A record answers
    a run while those outside files are as they were and the absent ones still absent; a
    file of the run that changed since is analysed again (``run.project.recheck``), and
    the record written again names the new parts of those files and the same parts of the
    others: a run on a few edited files of a large project reads and writes the record
    and those files' parts, never the other files' findings."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def ticket(self, files: list[Path]) -> RunTicket | None:
        """The run's key and its files' stats; ``None`` when one is not a regular file
        (unreadable files are reported afresh)."""
        began = time.time_ns()
        stamps = self._stamps([str(p) for p in files])
        if stamps is None:
            return None
        reals = {str(p): str(real_path(p)) for p in files}
        key = _digest([b"run", self.cache.salt.encode(), stable_json(reals).encode()])
        return RunTicket(key, reals, stamps, began)

    @staticmethod
    def _stamps(names: Iterable[str]) -> dict[str, tuple[int, int, int]] | None:
        stamps = {}
        for name in names:
            try:
                info = os.stat(name)
            except (OSError, ValueError):
                return None
            if not stat.S_ISREG(info.st_mode):
                return None
            stamps[name] = _stamp(info)
        return stamps

    def digest(self, ticket: RunTicket) -> bool:
        """Fill in every file's digest; ``False`` when one cannot be read."""
        for name in ticket.stamps:
            if name not in ticket.digests:
                digest = _file_digest(Path(name))
                if digest is None:
                    return False
                ticket.digests[name] = digest
        return True

    def load(self, ticket: RunTicket) -> RunRecord | None:
        """The record of the same files, whatever their bytes now (``ticket`` gets their
        digests); ``None`` when there is none, or when a file outside the run it read
        changed or a file it did not find exists now."""
        entry = self._read(self.cache._entry(ticket.key))
        if entry is None or entry.get("key") != ticket.key:
            return None
        try:
            for name, digest in entry["outside"].items():
                if _file_digest(Path(name)) != digest:
                    return None
            if any(_is_file(name) for name in entry["absent"]):
                return None
            files = entry["files"]
            if not isinstance(files, dict) or set(files) != set(ticket.stamps):
                return None
            began = int(entry["began"])
            digests: dict[str, str] = {}
            parts: dict[str, str] = {}
            unsettled = []
            for name, now in ticket.stamps.items():
                fields = files[name]
                if not isinstance(fields, list):
                    return None
                digest, size, mtime, inode, _, part = fields
                if not isinstance(digest, str) or not _is_key(part):
                    return None
                digests[name], parts[name] = digest, part
                if (size, mtime, inode) == now and now[1] < began - _SETTLED_NS:
                    ticket.digests[name] = digest
                else:
                    unsettled.append(name)
            outside, absent = dict(entry["outside"]), [str(n) for n in entry["absent"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if not self.digest(ticket):
            return None
        record = RunRecord(ticket, digests, parts, outside, absent, self.cache)
        # Files read again only because they were modified just before the record was made:
        # written again now, their stat can be trusted the next time.
        record.settles = any(ticket.stamps[n][1] < ticket.began - _SETTLED_NS for n in unsettled)
        return record

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            entry = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return None
        return entry

    def store(
        self,
        ticket: RunTicket,
        entries: Mapping[str, str],
        outside: list[Path],
        absent: list[Path],
        projects: Iterable[Path] = (),
    ) -> None:
        """Write the record (``entries``: each file's part, ``pack_entry``) unless a file
        changed during the run; never raises.  For each of ``projects`` (project roots),
        the record becomes that project's latest (:meth:`latest`)."""
        digests = {}
        for path in outside:
            digest = _file_digest(path)
            if digest is None:
                return
            digests[str(path)] = digest
        parts = {name: _part_key(text) for name, text in entries.items()}
        texts = {parts[name]: text for name, text in entries.items()}
        self._write(ticket, parts, texts, digests, [str(p) for p in absent], projects)

    def update(
        self, record: RunRecord, entries: Mapping[str, str], projects: Iterable[Path] = ()
    ) -> None:
        """Write ``record`` again with the files' bytes of now, the parts ``entries`` of the
        files analysed again and the recorded parts of the others."""
        parts = dict(record.parts)
        texts = {}
        for name, text in entries.items():
            parts[name] = key = _part_key(text)
            texts[key] = text
        self._write(record.ticket, parts, texts, record.outside, record.absent, projects)

    def _write(
        self,
        ticket: RunTicket,
        parts: Mapping[str, str],
        texts: Mapping[str, str],
        outside: dict[str, str],
        absent: list[str],
        projects: Iterable[Path],
    ) -> None:
        try:
            if not self.digest(ticket) or self._stamps(ticket.stamps) != ticket.stamps:
                return  # a file changed during the run
            # The parts first: a record never names one that is not written yet.
            for key, text in texts.items():
                target = self.cache._entry(key)
                if not target.is_file():
                    target.parent.mkdir(exist_ok=True)
                    part = f'{{"format":{CACHE_FORMAT},"key":"{key}","part":{text}}}'
                    _write_atomic(target, part.encode())
            files = {
                name: [ticket.digests[name], *stamp, ticket.reals[name], parts[name]]
                for name, stamp in ticket.stamps.items()
            }
            entry = {
                "format": CACHE_FORMAT,
                "key": ticket.key,
                "began": ticket.began,
                "files": files,  # name -> [digest, size, mtime_ns, inode, real path, part]
                "outside": outside,
                "absent": absent,
            }
            target = self.cache._entry(ticket.key)
            target.parent.mkdir(exist_ok=True)
            _write_atomic(target, _dumps(entry).encode())
            for root in projects:
                key = _project_key(root)
                pointer = self._pointer(key)
                pointer.parent.mkdir(exist_ok=True)
                latest = {
                    "format": CACHE_FORMAT,
                    "key": key,
                    "root": str(root),
                    "record": ticket.key,
                }
                _write_atomic(pointer, _dumps(latest).encode())
        except (OSError, TypeError, ValueError, KeyError, RecursionError):
            pass

    def _pointer(self, key: str) -> Path:
        """Where the key of the latest record of a project is (beside the entries)."""
        return self.cache.root / "projects" / f"{key}.json"

    def latest(self, root: Path, real: str) -> Analyses | None:
        """The analyses of the file ``real`` (canonical path) in the latest record of the
        project ``root``, whichever working directory and configuration it was made with;
        ``None`` when there is none.  Read-only (the flake8 plugin); a record read once
        is kept for the next file while it is unchanged on disk."""
        pointer = self._read(self._pointer(_project_key(root)))
        key = pointer.get("record") if pointer is not None else None
        if not _is_key(key):
            return None
        path = self.cache._entry(key)
        try:
            stamp = _stamp(os.stat(path))
        except OSError:
            return None
        kept = _LATEST.get(path)
        if kept is None or kept[0] != stamp:
            entry = self._read(path)
            if entry is None or entry.get("key") != key:
                return None
            kept = _LATEST[path] = (stamp, entry)
        try:
            files = kept[1]["files"]
            parts = {n: f[5] for n, f in files.items() if isinstance(f, list) and f[4] == real}
            if not all(_is_key(k) for k in parts.values()):
                return None
            ticket = RunTicket(key, {}, {}, 0)
            record = RunRecord(ticket, {}, parts, {}, [], self.cache, mend=False)
            return record.analyses(next(iter(parts))) if parts else None
        except (KeyError, TypeError, AttributeError, IndexError):
            return None


# Records the flake8 plugin read, by path: (their stat, their content).
_LATEST: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _project_key(root: Path) -> str:
    stamp = f"{version.__version__}/{CACHE_FORMAT}/{code_stamp()}".encode()
    return _digest([b"project", stamp, bytes(root)])


_CODE_STAMP: list[str] = []


def code_stamp() -> str:
    """The analysing code itself (each module's size and modification time): a git checkout
    or an editable install changes it under the same version number, and what other code
    cached must not answer for it."""
    if not _CODE_STAMP:
        package = Path(__file__).resolve().parent.parent
        seen: list[str] = []
        stack = [package]
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                        stack.append(Path(entry.path))
                    elif entry.name.endswith(".py"):
                        st = entry.stat()
                        seen.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
        _CODE_STAMP.append(_digest([line.encode() for line in sorted(seen)]))
    return _CODE_STAMP[0]


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


# The errors ``Path.is_file`` takes for "no such file" (any other one propagates).
_ABSENT_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
_ABSENT_WINERRORS = frozenset({21, 123, 1921})


def _is_file(name: str) -> bool:
    """``Path(name).is_file()`` without building a ``Path`` (``name`` is one already
    normalised, as records write them): a record names thousands of absent files, and
    building their paths was most of loading it."""
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except OSError as exc:
        if (
            exc.errno not in _ABSENT_ERRNOS
            and getattr(exc, "winerror", None) not in _ABSENT_WINERRORS
        ):
            raise
        return False
    except ValueError:
        return False


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
