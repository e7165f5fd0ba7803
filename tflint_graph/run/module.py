"""One module's analysis: source text in, findings and a summary out (SPEC §1, §5).

A pure function of (source, config, view): CPython's verdict and the prefilter decide
whether libcst and the rules run at all; if they do, ``run.dispatch`` runs them over the
tree (parsed once, through the process's tree store).  Bad input never escapes as an
exception: unreadable files are TFG002, unparsable ones TFG001, an internal error is logged
and costs only this file.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tflint_graph.core.config import Config
from tflint_graph.core.facts import ModuleSummary, ProjectView
from tflint_graph.core.finding import Finding, tool_finding
from tflint_graph.core.noqa import is_suppressed, source_lines
from tflint_graph.run.gc_pause import gc_paused
from tflint_graph.source import prefilter
from tflint_graph.source.eager_use import eager_instances
from tflint_graph.source.notebook import (
    Notebook,
    ipython_script,
    is_notebook,
    parse_notebook,
    read_notebook,
)
from tflint_graph.source.parse import parse, python_error_finding, verdict_of
from tflint_graph.source.reading import read_regular_file, read_source
from tflint_graph.source.store import STORE
from tflint_graph.source.syntax import SyntaxVerdict, judge_source

if TYPE_CHECKING:
    from tflint_graph.checks import Rule

_log = logging.getLogger("tflint_graph")


def analyse_source(
    source: str,
    path: str,
    config: Config,
    view: ProjectView | None = None,
    *,
    noqa: bool = True,
    python_tree: ast.Module | None = None,
) -> tuple[list[Finding], ModuleSummary | None]:
    """Findings of one module (filtered and sorted) and what other modules of the run may
    learn from it; ``view`` is what the run knows about this module's neighbours.
    ``noqa=False`` skips ``# noqa`` filtering; ``python_tree`` is ``ast.parse(source)``
    when the caller has it (it is not parsed again)."""
    with gc_paused(len(source)):
        return _analyse_source(source, path, config, view, noqa, python_tree)


def _analyse_source(
    source: str,
    path: str,
    config: Config,
    view: ProjectView | None,
    noqa: bool,
    python_tree: ast.Module | None,
) -> tuple[list[Finding], ModuleSummary | None]:
    view = view or ProjectView()
    summary: ModuleSummary | None = None
    full = bool(config.extra_function_decorators) or view.tells_anything()
    verdict = verdict_of(source, python_tree)
    if verdict.error is not None and path.endswith(".py"):
        script = ipython_script(source)
        if script is not None:
            # A notebook exported as a script: its Python is analysed as the notebook's
            # would be; no fix is offered (the file itself does not parse to rewrite).
            findings, summary = _analyse_source(script, path, config, view, noqa, None)
            return [dataclasses.replace(f, fix_safety=None) for f in findings], summary
    tree, scan = verdict.tree, None
    rules: list[type[Rule]] | None = None  # the enabled rules, once looked up
    if not full and prefilter.MAY_TRACE.search(source) is not None:
        # A TensorFlow module whose code names nothing that could be traced (see
        # prefilter.may_hold_traced) has nothing traced of its own and nothing a rule checks
        # outside traced code (data and constant modules, plain tf.Module code): until the
        # run reaches into it (the view), it is summarised from CPython's tree like a module
        # without TensorFlow.
        if not prefilter.enabled():
            full = True
        else:
            # The enabled rules and their words: not at start-up (they import libcst)
            from tflint_graph.run.dispatch import enabled_rules, trigger_words

            rules = enabled_rules(config, path)
            words = prefilter.triggers(trigger_words(rules))
            if words.text.search(source) is not None:
                scan = prefilter.Scan(tree, view) if tree is not None else None
                full = scan is None or prefilter.may_hold_traced(scan, words)
    if not full:
        findings, summary = _untraced(source, path, view, verdict, scan)
    else:
        parsed = parse(source, path, verdict)
        if isinstance(parsed, Finding):
            findings = [parsed]
        else:
            # libcst and the rules: not at start-up (runs answered from the cache need neither)
            from tflint_graph.run.dispatch import run_rules
            from tflint_graph.source.fromast import Unsupported

            prepared = STORE.take_prepared(source)
            try:
                findings, summary, prepared = run_rules(
                    parsed, source, path, config, view, verdict.tree, prepared, True, rules, scan
                )
            except Unsupported:
                # libcst cannot give the positions of a tree built from CPython's (it parses
                # the file differently, or not at all): its own tree is analysed instead.
                STORE.forget(source)
                parsed = parse(source, path, verdict, build=False)
                findings, summary, prepared = (
                    ([parsed], None, None)
                    if isinstance(parsed, Finding)
                    else run_rules(
                        parsed, source, path, config, view, verdict.tree, None, True, rules
                    )
                )
            STORE.keep_prepared(source, prepared)
    lines = source_lines(source) if noqa else []
    kept = [
        f
        for f in findings
        if config.is_enabled(f.code, path) and not (noqa and is_suppressed(lines, f.line, f.code))
    ]
    return sorted(set(kept), key=lambda f: f.sort_key), summary


def _untraced(
    source: str,
    path: str,
    view: ProjectView,
    verdict: SyntaxVerdict,
    scan: prefilter.Scan | None = None,
) -> tuple[list[Finding], ModuleSummary | None]:
    """A module that cannot hold traced code and that no other module reaches: no rule can
    report anything, only its summary (imports, classes, called imports) is needed.

    CPython's tree gives it (``prefilter.py``); libcst runs only where CPython rejects the source,
    to report TFG001 exactly as ``parse`` does (or accept syntax newer than this Python).
    ``verdict`` is CPython's on ``source``; ``scan`` the walk of its tree, when made.
    """
    tree = verdict.tree
    # How other modules' code calls and switches what this module defines: from CPython's
    # tree whenever there is one (plain Python facts, the same with or without libcst).
    state: dict[str, dict[str, Any]] = {}
    imports: dict[str, str] = {}
    if tree is not None:
        scan = scan or prefilter.Scan(tree, view)
        state["accessor_calls"] = prefilter.accessor_calls(path, scan)
        reads, writes = prefilter.global_state(tree, view.module, source)
        state.update(global_reads=reads, global_writes=writes)
        state["once_decorators"] = prefilter.run_once_decorators(tree)
        state["escape_params"] = prefilter.escape_params(tree, source)
        imports = prefilter.module_imports(tree, view)  # read only: shared with the summary
        state["tracing_values"] = prefilter.tracing_values(tree, imports)
        state["eager_made"], state["used_otherwise"], state["foreign_attributes"] = eager_instances(
            tree, path, view, scan.imports, scan.calls, scan.attributes
        )
    if tree is not None and prefilter.enabled():
        assert scan is not None
        return [], ModuleSummary(
            view.module,
            reexports=imports,
            called_imports=scan.called_imports(),
            classes=prefilter.module_classes(tree, imports),
            **state,
        )
    parsed = parse(source, path, verdict)
    if isinstance(parsed, Finding):
        return [parsed], None
    # libcst's summary: for source CPython rejects and libcst accepts (or no prefilter)
    from tflint_graph.run.summary import called_imports, module_classes, module_imports

    imports = module_imports(parsed, view)
    return [], ModuleSummary(
        view.module,
        reexports=imports,
        called_imports=called_imports(parsed, view),
        classes=module_classes(parsed, imports),
        **state,
    )


def analyse_notebook(
    notebook: str | Notebook,
    path: str,
    config: Config,
    view: ProjectView | None = None,
    *,
    noqa: bool = True,
) -> tuple[list[Finding], ModuleSummary | None]:
    """``analyse_source`` for a Jupyter notebook (its JSON text, or parsed): its code cells
    are one module; findings come back with their cell, and lines and columns in it."""
    parsed = parse_notebook(notebook, path) if isinstance(notebook, str) else notebook
    if isinstance(parsed, Finding):
        return ([parsed] if config.is_enabled(parsed.code, path) else []), None
    findings, summary = analyse_source(parsed.source, path, config, view, noqa=noqa)
    if any(f.code == "TFG001" for f in findings):
        recovered = _without_broken_cells(parsed, path, config, view, noqa)
        if recovered is not None:
            findings, summary = recovered
    mapped = [parsed.to_cells(f) for f in findings]
    return sorted(mapped, key=lambda f: f.sort_key), summary


_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)")


def _in_notebook_lines(message: str, first: int) -> str:
    return _LINE_IN_MESSAGE.sub(lambda m: f"line {first + int(m.group(1)) - 1}", message)


def _without_broken_cells(
    parsed: Notebook, path: str, config: Config, view: ProjectView | None, noqa: bool
) -> tuple[list[Finding], ModuleSummary | None] | None:
    """The notebook analysed with the code cells that do not parse on their own left blank,
    and the TFG001 of the first of those (an exercise's blank, a pasted traceback): one bad
    cell must not hide the findings of the others (SPEC §5).  None when no single cell is at
    fault (the cells only fail together) or every cell is."""
    broken: list[Finding] = []
    cells = []
    for cell in parsed.cells:
        verdict = judge_source("".join(line + "\n" for line in cell.python))
        if verdict.error is None and verdict.too_deep is None:
            cells.append(cell)
            continue
        if verdict.error is not None:
            error = verdict.error
            error.lineno = cell.first + max(error.lineno or 1, 1) - 1
            # "(detected at line 3)" counts in the cell: in the notebook's lines, as the
            # message's line references are mapped back to cells with the finding
            error.msg = _in_notebook_lines(str(error.msg), cell.first)
            finding = python_error_finding(path, error)
        else:
            finding = tool_finding(path, "TFG001", verdict.too_deep or "", cell.first, 1)
        if config.is_enabled("TFG001", path):
            broken.append(finding)
        cells.append(dataclasses.replace(cell, python=("",) * len(cell.python)))
    if not broken or len(broken) == len([c for c in parsed.cells if c.python]):
        return None
    patched = dataclasses.replace(parsed, cells=tuple(cells))
    findings, summary = analyse_source(patched.source, path, config, view, noqa=noqa)
    # The first error only, as for a .py file (and as before): fixing it shows the next.
    return [f for f in findings if f.code != "TFG001"] + broken[:1], summary


def analyse_file(
    path: Path, config: Config, display: str | None = None, view: ProjectView | None = None
) -> tuple[list[Finding], ModuleSummary | None]:
    """``analyse_source`` for a file on disk (``analyse_notebook`` for a ``.ipynb``);
    never raises."""
    shown = display or str(path)
    notebook = is_notebook(str(path))
    decoded = read_regular_file(path, shown) if notebook else read_source(path, shown)
    if isinstance(decoded, Finding):
        return ([decoded] if config.is_enabled(decoded.code, shown) else []), None
    try:
        if isinstance(decoded, bytes):
            parsed = read_notebook(decoded, shown)
            if isinstance(parsed, Finding):
                return ([parsed] if config.is_enabled(parsed.code, shown) else []), None
            return analyse_notebook(parsed, shown, config, view)
        return analyse_source(decoded, shown, config, view)
    except Exception as exc:
        _log.warning(
            "internal error while linting %s: %s: %s (please report this)",
            shown,
            type(exc).__name__,
            exc,
        )
        return [], None
