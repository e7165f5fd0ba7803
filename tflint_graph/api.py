"""The library API: ``lint_source``, ``lint_notebook``, ``lint_file``, ``lint_paths`` (SPEC §3).

Everything the faces (CLI, flake8 plugin) and library users call; it wires the run
together (files, cache, pool, project) and hands back sorted ``Finding``s.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from tflint_graph.core.config import Config
from tflint_graph.core.facts import ProjectView
from tflint_graph.core.finding import Finding, tool_finding
from tflint_graph.run.cache import Cache, RunRecord, RunRecords, default_root, open_cache
from tflint_graph.source.context import project_root
from tflint_graph.source.dependencies import with_folder_versions, with_keras_version
from tflint_graph.source.files import iter_python_files
from tflint_graph.source.modules import forget_paths, real_path
from tflint_graph.source.reading import is_notebook, read_source

_log = logging.getLogger("tflint_graph")


def lint_source(
    source: str,
    path: str = "<stdin>",
    config: Config | None = None,
    *,
    noqa: bool = True,
    context: bool = False,
) -> list[Finding]:
    """Lint one module's source text and return its findings, sorted.

    ``path`` is only used for reporting and for ``per-file-ignores``; nothing is read from
    disk, so calls into other modules are not followed (``lint_paths`` does that).  Syntax
    errors are returned as a TFG001 finding, never raised.  ``noqa=False`` keeps findings
    that a ``# noqa`` comment silences (the flake8 plugin: flake8 applies noqa itself).
    ``context=True``: when ``path`` is a file of a project whose cache holds a record of a
    ``tflint-graph`` run over it, the text is analysed with what that run knew about the
    rest of the project (``project_view``), as the flake8 plugin and standard input do.
    """
    from tflint_graph.run.module import analyse_source  # the analysis: not at start-up

    config = config or Config()
    if os.path.isfile(path):
        config = with_folder_versions(with_keras_version(config, [Path(path)]), [Path(path)])
    view = project_view(path, config) if context else None
    return analyse_source(source, path, config, view, noqa=noqa)[0]


def project_view(path: str, config: Config) -> ProjectView | None:
    """What the latest ``tflint-graph`` run over the project of ``path`` (an existing file)
    told that file about the rest of the project, from the project's cache, read only;
    None without such a record."""
    if not os.path.isfile(path):
        return None
    resolved = Path(os.path.abspath(path))
    cache = default_root([resolved])
    if not (cache / "projects").is_dir():  # no cache, or none written by a context run
        return None
    analyses = RunRecords(Cache(cache, config)).latest(
        project_root(resolved)[0], str(real_path(resolved))
    )
    return analyses[-1][0] if analyses else None


def recorded_findings(
    path: str, source: str, config: Config, view: ProjectView
) -> list[Finding] | None:
    """What ``lint_source(source, path, config, view, noqa=False)`` returns, read from the
    project's cache where a ``tflint-graph`` run stored that very analysis; None when it is
    not there (the caller analyses).  Read-only: the flake8 plugin on a file unchanged since
    the run needs neither libcst nor the rules.

    The entry's key holds everything the analysis depends on (the file's bytes, the
    configuration, ``view``, ``path`` as shown, the working directory), so a hit is that
    analysis.  Stored findings are filtered by ``# noqa`` comments and the plugin's are not
    (flake8 applies them): a source with any ``noqa`` in it is analysed instead, as is text
    that is not the file's (unsaved, or line breaks that flake8 translated)."""
    if "noqa" in source.lower() or is_notebook(path) or not os.path.isfile(path):
        return None
    file = Path(path)
    cache = Cache(default_root([Path(os.path.abspath(path))]), config)
    ticket = cache.ticket(file, path, view)
    if ticket is None or read_source(file, path) != source:
        return None
    hit = cache.load(ticket)
    try:
        info = os.stat(file)  # the file read is the file hashed
    except OSError:
        return None
    if hit is None or (info.st_size, info.st_mtime_ns, info.st_ino) != ticket.stamp:
        return None
    return hit[0]


def lint_notebook(
    notebook: str,
    path: str = "<stdin>.ipynb",
    config: Config | None = None,
    *,
    noqa: bool = True,
) -> list[Finding]:
    """Lint a Jupyter notebook's JSON text (the ``.ipynb`` file's content); sorted findings.

    Its code cells, in order, are one module (IPython magics and shell escapes skipped);
    each finding's ``cell`` is the cell it is in (1-based, markdown cells counted) and its
    line and column are the cell's own.  Text that is not a notebook gives a TFG001
    finding, never an exception.  As ``lint_source``, nothing is read from disk.
    """
    from tflint_graph.run.module import analyse_notebook  # the analysis: not at start-up

    return analyse_notebook(notebook, path, config or Config(), noqa=noqa)[0]


def lint_file(
    path: Path, config: Config | None = None, display: str | None = None
) -> list[Finding]:
    """Lint one file on disk on its own (calls into other modules are not followed); a
    ``.ipynb`` file is read as a Jupyter notebook (``lint_notebook``); unreadable or
    undecodable files give TFG002."""
    from tflint_graph.run.module import analyse_file  # the analysis: not at start-up

    return analyse_file(path, config or Config(), display)[0]


class WarningCounter(logging.Handler):
    """Counts the warnings (internal errors) logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def _counting_warnings() -> Iterator[list[int]]:
    """Counts warnings the run logs (yields a list that holds the count afterwards)."""
    handler, count = WarningCounter(), []
    _log.addHandler(handler)
    try:
        yield count
    finally:
        _log.removeHandler(handler)
        if handler.count:
            count.append(handler.count)


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    config: Config | None = None,
    *,
    jobs: int | None = None,
    cache: bool | Path | None = None,
    files_found: list[Path] | None = None,
    context: bool = False,
) -> Iterator[Finding]:
    """Lint files and directories (recursively, honouring excludes); yields sorted findings.
    Directories give their Python files and Jupyter notebooks (``*.py``, ``*.ipynb``).

    The files form one run: traced code that calls into another module of the run (or into
    a module next to them that imports resolve to) makes that code traced too, and calls of
    tf.functions imported from other modules are judged at their call sites.

    ``context=True`` (the CLI's default) makes the project around ``paths`` part of the run
    (``source.context``: the folder of the configuring pyproject.toml, else the top of the
    package tree): a helper in a given file that only an unchanged module of the project
    calls from a ``@tf.function`` is traced.  Findings are still yielded for the given files
    only.  Off by default here, so that a library call reads only what it is given.

    A path that does not exist raises ``FileNotFoundError`` before anything is linted: the CLI
    turns it into a usage error (exit 2).  A directory that cannot be read gives a TFG002
    finding on that directory; the rest of the run goes on.

    ``jobs`` analyses files in that many processes (default 1: in-process); the findings
    are the same for any number.  ``cache`` reuses results of earlier runs: ``True`` keeps
    them in ``.tflint-graph-cache`` next to the pyproject.toml found for ``paths`` (else in
    the project they belong to: ``run.cache.project_root``), a path keeps them there;
    default none.  ``config`` defaults to the built-in settings, not to a pyproject.toml:
    ``Config.discover(path)`` loads the one the command line would use.  ``files_found``, when
    given, receives the files the run lints (the CLI warns when there are none).
    """
    config = config or Config()
    forget_paths()  # canonical paths are remembered per run: the tree or the folder may differ
    errors: list[tuple[Path, str]] = []
    targets = [Path(p) for p in paths]
    config = with_keras_version(config, targets)
    files = sorted(iter_python_files(targets, config, errors), key=str)
    if files_found is not None:
        files_found.extend(files)
    run_files, roots = _with_context(files, targets, config) if context and files else (files, [])
    config = with_folder_versions(config, run_files)
    store = open_cache(cache, targets, config) if files else None
    records = RunRecords(store) if store is not None else None
    ticket = records.ticket(run_files) if records is not None else None
    record = records.load(ticket) if records is not None and ticket is not None else None
    found: dict[str, list[Finding]] | None = None
    if record is not None and store is not None:
        found = _from_record(record, files, store, config, jobs or 1, roots)
    elif records is not None and ticket is not None and not records.digest(ticket):
        ticket = None  # a file cannot be read: reported afresh, never recorded
    if found is None:
        # Batches of files are analysed from the cache, in-process or over `jobs` processes.
        # The analysis: not at start-up (a run answered from the cache needs none of it).
        from tflint_graph.run.gc_pause import gc_paused
        from tflint_graph.run.module import analyse_file
        from tflint_graph.run.parallel import AnalysisPool
        from tflint_graph.run.project import Project
        from tflint_graph.source.store import STORE

        pool = AnalysisPool(analyse_file, config, jobs or 1, store)
        project = Project(run_files, config, pool)
        reached = (
            {str(f) for r in project.likely_reached() for f in project.in_run[r]}
            if STORE.may_outgrow(run_files, jobs or 1)
            else set()
        )
        with _counting_warnings() as warned, gc_paused(), STORE.keeping_first(reached):
            results = project.run()
        found = {str(p): results[p] for p in files}
        # A run that logged an internal error is redone next time, warning included.
        if records is not None and ticket is not None and not warned:
            from tflint_graph.run.cache import pack_entry

            entries = {str(p): pack_entry(results[p], project.analyses[p]) for p in run_files}
            records.store(ticket, entries, *project.consulted(), projects=roots)
    work: list[tuple[str, list[Finding]]] = [(str(p), found[str(p)]) for p in files]
    work += [
        (str(d), [tool_finding(str(d), "TFG002", reason)])
        for d, reason in errors
        if config.is_enabled("TFG002", str(d))
    ]
    for _, found_here in sorted(work, key=lambda item: item[0]):
        yield from found_here


def _with_context(
    files: list[Path], targets: list[Path], config: Config
) -> tuple[list[Path], list[Path]]:
    """The given ``files`` and the other files of their projects (each module once, as
    given where it was given), sorted; and the project roots."""
    from tflint_graph.source.context import context_files, project_root
    from tflint_graph.source.modules import real_path

    seen = {str(real_path(f)) for f in files}  # by text: hashing a Path costs more
    extra: list[Path] = []
    for file in context_files(targets, config):
        real = str(real_path(file))
        if real not in seen:
            seen.add(real)
            extra.append(file)
    roots = sorted({project_root(t)[0] for t in targets})
    return sorted([*files, *extra], key=str), roots


def _from_record(
    record: RunRecord,
    files: list[Path],
    store: Cache,
    config: Config,
    jobs: int,
    roots: list[Path],
) -> dict[str, list[Finding]] | None:
    """The findings of ``files`` from a record of the same run: as recorded where no file
    changed; where some did, when they still summarise as before (``recheck``), with theirs
    analysed again; else ``None`` (the run is made afresh).  An updated record is stored."""
    changed = record.changed()
    wanted = {str(p) for p in files}
    found: dict[str, list[Finding]] = {}
    if changed:
        from tflint_graph.run.gc_pause import gc_paused
        from tflint_graph.run.module import analyse_file
        from tflint_graph.run.parallel import AnalysisPool
        from tflint_graph.run.project import recheck

        recorded = {}
        for name in changed:
            analyses = record.analyses(name)
            if analyses is None:
                return None
            recorded[Path(name)] = analyses
        pool = AnalysisPool(analyse_file, config, jobs, store)
        try:
            with _counting_warnings() as warned, gc_paused():
                fresh = recheck(pool, list(recorded), recorded)
        finally:
            pool.close()
        if fresh is None:
            return None
        from tflint_graph.run.cache import pack_entry

        # Only the parts of the files analysed again are new: the others' stay as stored.
        entries = {}
        for file, findings in fresh.items():
            entries[str(file)] = pack_entry(findings, recorded[file])
            found[str(file)] = findings
        if not warned:
            RunRecords(store).update(record, entries, roots)
    elif record.settles:
        RunRecords(store).update(record, {}, roots)
    for name in sorted(wanted - set(found)):
        findings = record.findings(name)
        if findings is None:
            return None
        found[name] = findings
    return found


def default_jobs() -> int:
    """All cores this process may use (``--jobs``'s default)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1
