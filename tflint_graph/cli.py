"""Command line: ``tflint-graph [PATHS]...``, ``tflint-graph rule CODE``, ``tflint-graph rules``.

Exit codes follow ruff and flake8: 0 clean, 1 findings, 2 usage, configuration or internal
error.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from tflint_graph.api import WarningCounter, default_jobs, lint_paths
from tflint_graph.core.config import (
    Config,
    ConfigError,
    find_config,
    load_file,
    validate_codes,
    with_overrides,
    with_rule_selection,
)
from tflint_graph.core.finding import Finding
from tflint_graph.core.version import __version__
from tflint_graph.output import FORMATS, RunInfo, SourceLines
from tflint_graph.output.pages import read_page

if TYPE_CHECKING:
    from tflint_graph.dynamic.session import DynamicSummary

SUBCOMMANDS = ("check", "rule", "rules")


class _DefaultToCheck(click.Group):
    """``tflint-graph PATHS`` means ``tflint-graph check PATHS`` (a path named like a
    subcommand can be spelled ``./rule``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not any(a in ("--help", "-h", "--version") for a in args[:1]) and (
            not args or args[0] not in self.commands
        ):
            args = ["check", *args]
        return super().parse_args(ctx, args)


def _split_codes(values: Sequence[str]) -> tuple[str, ...] | None:
    if not values:
        return None
    codes = [c.strip().upper() for v in values for c in v.split(",") if c.strip()]
    return tuple(codes)


class _ErrorCounter(WarningCounter):
    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        click.echo(f"tflint-graph: {record.getMessage()}", err=True)


def entry() -> NoReturn:
    """The ``tflint-graph`` command (and ``python -m tflint_graph``).

    A process that lints and exits: cyclic garbage collection stays off throughout (the
    analysis frees its memory by reference counting; ``run.gc_pause`` still collects
    after every few MB of analysed source).  Once the command has finished and its output
    is flushed, the process ends without the interpreter's teardown: freeing the parsed
    trees it keeps for second analyses (``source.store.STORE``) object by object took about a
    second after a ``--jobs 1`` run of a 25k-line project, for nothing.
    """
    gc.disable()
    try:
        main()
        status: object = 0
    except SystemExit as exc:  # click ends every command this way
        status = exc.code
    _hard_exit(status)


def _hard_exit(status: object) -> NoReturn:
    """``sys.exit(status)`` without the interpreter's teardown (every ``with`` block and
    pool of the command has been closed by now; no atexit work is ours)."""
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:  # sys.exit("message") prints the message and exits with 1
        print(status, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`)
            stream.flush()
    os._exit(code)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tflint-graph")
def main() -> None:
    """Find Python that silently stops working when TensorFlow traces it."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Codes or prefixes to enable (comma-separated).")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Codes to enable on top of the selection.")
@click.option("--exclude", multiple=True, help="Glob patterns of paths to skip (replaces config).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to skip, on top of exclude.")
@click.option(
    "--output-format",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
)
@click.option("--statistics", is_flag=True, help="Print a count per code instead of findings.")
@click.option("--show-source", is_flag=True, help="Show the offending source line.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--fix", is_flag=True, help="Apply safe automatic fixes; report what remains.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option(
    "--dynamic",
    is_flag=True,
    help="Import each module in a child process and trace the real functions with TensorFlow "
    "to confirm each finding (runs your code; needs the dynamic extra).",
)
@click.option(
    "--dynamic-timeout",
    type=click.FloatRange(min=1.0),
    default=60.0,
    show_default=True,
    help="Seconds each module's child process may run.",
)
@click.option(
    "--device",
    default=None,
    help="Device for --dynamic: cpu, gpu, gpu:1, /device:GPU:0  [default: first GPU, else CPU]",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="pyproject.toml to read instead of searching upwards from the paths.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Files analysed in parallel.  [default: all cores]",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write .tflint-graph-cache/.")
@click.option(
    "--no-context",
    is_flag=True,
    help="Read only the given files, not the project around them (see README).",
)
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    output_format: str,
    statistics: bool,
    show_source: bool,
    exit_zero: bool,
    quiet: bool,
    fix: bool,
    diff: bool,
    dynamic: bool,
    dynamic_timeout: float,
    device: str | None,
    config_file: Path | None,
    jobs: int | None,
    no_cache: bool,
    no_context: bool,
) -> None:
    """Lint PATHS (files or directories; default: the current directory)."""
    targets = list(paths) or [Path(".")]
    config = _load_config(config_file, targets)
    codes = {
        "--select": _split_codes(select),
        "--ignore": _split_codes(ignore),
        "--extend-select": _split_codes(extend_select),
    }
    overrides: dict[str, Any] = {
        "exclude": tuple(exclude) or None,
        "extend_exclude": (*config.extend_exclude, *extend_exclude) if extend_exclude else None,
    }
    try:
        for option, values in codes.items():
            if values:
                validate_codes(option, values)
        config = with_rule_selection(
            with_overrides(config, **overrides),
            select=codes["--select"],
            ignore=codes["--ignore"],
            extend_select=codes["--extend-select"],
        )
    except ConfigError as exc:
        _fail(str(exc))
    if dynamic:
        from tflint_graph.dynamic.session import DynamicUnavailable, require_tensorflow

        try:
            require_tensorflow()
        except DynamicUnavailable as exc:
            _fail(str(exc))
        if fix or diff:
            _fail("--dynamic cannot be combined with --fix or --diff")

    dynamic_summary: DynamicSummary | None = None
    run_options: dict[str, Any] = {
        "jobs": jobs or default_jobs(),
        "cache": not no_cache,
        "context": not no_context,
    }
    counter = _ErrorCounter()
    log = logging.getLogger("tflint_graph")
    log.addHandler(counter)
    propagate, log.propagate = log.propagate, False
    linted: list[Path] = []
    try:
        findings = list(lint_paths(targets, config, files_found=linted, **run_options))
        if not linted:  # as ruff: a warning, and no "All checks passed!" for nothing checked
            click.echo(
                "tflint-graph: warning: No Python files found under the given path(s)", err=True
            )
        if diff:
            _show_diff(findings, quiet)
        fixed = _apply_fixes(findings) if fix else 0
        if fixed:  # positions moved: what remains is what a fresh run finds
            findings = list(lint_paths(targets, config, **run_options))
        if dynamic:
            findings, dynamic_summary = _confirm(
                findings, config, dynamic_timeout, device, run_options["jobs"]
            )
        run = RunInfo(
            lines=SourceLines(),  # read after --fix has written
            show_source=show_source,
            statistics=statistics,
            summary=not quiet and bool(linted or findings),
            fixed=fixed if fix else None,
            dynamic=dynamic_summary.as_dict() if dynamic_summary is not None else None,
        )
        output = FORMATS[output_format](findings, run)
    except FileNotFoundError as exc:
        _fail(f"path does not exist: {exc}")
    except Exception as exc:  # a bug: one clear line and exit 2, never a traceback
        _fail(f"internal error: {type(exc).__name__}: {exc} (please report this)")
    finally:
        log.removeHandler(counter)
        log.propagate = propagate

    if output:
        click.echo(output)
    if dynamic_summary is not None and not quiet:
        click.echo(dynamic_summary.line(), err=True)
    if counter.count:
        sys.exit(2)
    sys.exit(0 if exit_zero or not findings else 1)


def _confirm(
    findings: list[Finding], config: Config, timeout: float, device: str | None, jobs: int
) -> tuple[list[Finding], DynamicSummary]:
    """``--dynamic``: every finding with its dynamic status; a progress line on a terminal."""
    from tflint_graph.dynamic.session import confirm_findings

    progress = None
    if sys.stderr.isatty():

        def progress(done: int, total: int, path: str) -> None:
            text = f"dynamic: {done}/{total} modules traced, last {path}"[:100]
            click.echo(f"\r{text:<100}", err=True, nl=done == total)

    return confirm_findings(
        findings, config, timeout=timeout, device=device, jobs=jobs, progress=progress
    )


def _show_diff(findings: list[Finding], quiet: bool) -> NoReturn:
    """``--diff``: the fixes as a unified diff on stdout, nothing written; exit 1 when there
    is something to fix (as ruff does)."""
    from tflint_graph.output.fix import plan_fixes

    plans = plan_fixes(findings)
    for plan in plans:
        click.echo(plan.diff(), nl=False)
    count = sum(p.count for p in plans)
    if not quiet and count:
        click.echo(f"Would fix {count} finding{'s' if count != 1 else ''}.", err=True)
    sys.exit(1 if plans else 0)


def _apply_fixes(findings: list[Finding]) -> int:
    """``--fix``: write every file a safe fix changes; the number of findings fixed."""
    from tflint_graph.output.fix import plan_fixes

    plans = plan_fixes(findings)
    fixed = 0
    for plan in plans:
        try:
            plan.write()
        except OSError as exc:  # counted by _ErrorCounter: exit 2
            logging.getLogger("tflint_graph").warning("cannot write %s: %s", plan.path, exc)
            continue
        fixed += plan.count
    return fixed


def _fail(message: str) -> NoReturn:
    click.echo(f"tflint-graph: error: {message}", err=True)
    sys.exit(2)


def _load_config(config_file: Path | None, targets: list[Path]) -> Config:
    try:
        if config_file is not None:
            if not config_file.is_file():
                _fail(f"config file does not exist: {config_file}")
            return load_file(config_file, require_table=True)
        found = find_config(targets)
        return load_file(found) if found is not None else Config()
    except ConfigError as exc:
        _fail(str(exc))
    raise AssertionError("unreachable")


@main.command()
@click.argument("code")
def rule(code: str) -> None:
    """Print the reference page of rule CODE (e.g. TFG101)."""
    page = read_page(code)
    if page is None:
        from tflint_graph.checks import rule_table

        known = ", ".join(c for c, *_ in rule_table())
        _fail(f"unknown rule code {code!r}; known codes: {known}")
    click.echo(page.rstrip("\n"))


@main.command(name="rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def list_rules(output_format: str) -> None:
    """List every rule: code, name, severity and summary."""
    from tflint_graph.checks import rule_table

    rows = rule_table()
    if output_format == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {"code": c, "name": n, "severity": s.value, "summary": summary}
                    for c, n, s, summary in rows
                ],
                indent=2,
            )
        )
        return
    for code, name, severity, summary in rows:
        click.echo(f"{code}  {name:<34} {severity.value:<8} {summary}")
