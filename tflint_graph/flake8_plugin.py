"""The flake8 plugin (entry point ``flake8.extension``, code prefix ``TFG``).

flake8 hands each file over already read and decoded (``lines``; stdin works the same way),
so the plugin never touches the file itself.  It reports what ``tflint_graph.lint_source``
reports for that file on its own, minus the ``# noqa`` filtering: flake8 applies ``noqa``,
``--select``, ``--extend-ignore`` and ``--per-file-ignores`` to our findings like to any
other plugin's.

Options come from ``[tool.tflint-graph]`` in the nearest ``pyproject.toml`` above the file
(the working directory for stdin), the same file the CLI would use, and all of it applies:
the rule-tuning keys (``unroll-max``, ``serving-name-patterns``,
``extra-function-decorators``, ...) and also ``select``/``ignore``/``per-file-ignores``, so an
editor shows what ``tflint-graph`` shows and flake8's own options can only narrow it further.
``exclude`` does not apply: flake8 decides which files it checks.

Project context (SPEC §3): flake8 hands over one file, but a helper in it may be traced only
because another module calls it from a ``@tf.function``.  When the project's cache
(``.tflint-graph-cache/``) holds a record of a ``tflint-graph`` run over the project, the file
is analysed with what that run told it about the rest of the project (its view: roots from
other modules, their tf.functions, Keras bases, ...), so the plugin reports what that run
reported for the file, for the text flake8 hands over.  The plugin only reads the cache,
never writes it: flake8 may run several processes at once and on unsaved text, and a record
must describe files on disk.  Without a record the file is analysed on its own.  A file
unchanged since that run (the same bytes, configuration, path and working directory) and
without any ``noqa`` comment is answered from the findings the run stored for that very
analysis (``api.recorded_findings``): no libcst, no rules, no analysis.

flake8 knows its own ``# flake8: noqa`` but not ours: the plugin drops what a file-level
``# tflint-graph: noqa`` silences itself, so the file reads the same in every face.
"""

from __future__ import annotations

import ast
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tflint_graph.api import project_view, recorded_findings
from tflint_graph.core.config import Config, ConfigError, find_config, load_file
from tflint_graph.core.facts import ProjectView
from tflint_graph.core.noqa import file_noqa_codes, source_lines
from tflint_graph.core.version import __version__
from tflint_graph.source.dependencies import with_folder_versions, with_keras_version

__all__ = ["Plugin"]

_log = logging.getLogger("tflint_graph")

# Per process (flake8 may run several): directory -> its effective configuration.
_configs: dict[str, Config] = {}
# A broken pyproject.toml is reported once per file, not once per linted module.
_reported: set[Path] = set()

_STDIN_NAMES = frozenset({"stdin", "-", "<stdin>"})


def _config_for(filename: str) -> Config:
    """The ``[tool.tflint-graph]`` configuration governing ``filename``; never raises."""
    if filename in _STDIN_NAMES:
        directory = os.getcwd()
    else:
        directory = os.path.dirname(os.path.abspath(filename))
        if not os.path.isdir(directory):  # e.g. --stdin-display-name of a path not here
            directory = os.getcwd()
    cached = _configs.get(directory)
    if cached is not None:
        return cached
    config = Config()
    found = find_config([Path(directory)])
    if found is not None:
        try:
            config = load_file(found)
        except ConfigError as exc:
            # flake8 has no channel for a plugin's configuration errors; lint with the
            # defaults rather than not at all, and say why on stderr.
            if found not in _reported:
                _reported.add(found)
                _log.warning("tflint-graph: %s; using the default configuration", exc)
    config = with_keras_version(config, [Path(directory)])
    # Any module of the folder stands for the folder: the decision is the folder's.
    config = with_folder_versions(config, [Path(directory, "_")])
    _configs[directory] = config
    return config


def _context_view(filename: str, config: Config) -> ProjectView | None:
    """The view the project's latest run record gives ``filename`` (``api.project_view``)."""
    if filename in _STDIN_NAMES:
        return None
    return project_view(filename, config)


class Plugin:
    """flake8 checker: one instance per file."""

    name = "tflint-graph"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        # flake8 runs an AST plugin after its own syntax check (a file CPython cannot parse
        # gets E999 and never reaches us); its tree spares the analysis a parse.
        self._tree = tree if isinstance(tree, ast.Module) else None
        self._lines = lines
        self._filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        try:
            source = "".join(self._lines)
            config = _config_for(self._filename)
            view = _context_view(self._filename, config)
            # A file unchanged since the project's run: its findings are in the cache.
            findings = (
                recorded_findings(self._filename, source, config, view)
                if view is not None
                else None
            )
            if findings is None:
                # The analysis: not for a file the cache answers.
                from tflint_graph.run.module import analyse_source

                findings = analyse_source(
                    source, self._filename, config, view, noqa=False, python_tree=self._tree
                )[0]
            silenced = file_noqa_codes(source_lines(source)) if findings else None
        except Exception as exc:  # an exception here would abort the whole flake8 run
            _log.warning(
                "tflint-graph: internal error while linting %s: %s: %s (please report this)",
                self._filename,
                type(exc).__name__,
                exc,
            )
            return
        for f in findings:
            if silenced is not None and (not silenced or f.code.startswith(tuple(silenced))):
                continue
            # flake8 columns are 0-based; ours are 1-based like flake8's *output*.
            yield f.line, max(f.column - 1, 0), f"{f.code} {f.message}", type(self)
