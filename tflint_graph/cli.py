"""Command line: ``tflint-graph [PATHS]...``, ``tflint-graph rule CODE``, ``tflint-graph rules``.

Exit codes follow ruff and flake8: 0 clean, 1 findings, 2 usage, configuration or internal
error.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from tflint_graph.api import WarningCounter, default_jobs, lint_notebook, lint_paths, lint_source
from tflint_graph.core.config import (
    Config,
    ConfigError,
    find_config,
    load_file,
    validate_codes,
    with_overrides,
    with_rule_selection,
)
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.version import __version__
from tflint_graph.output import FORMATS, RunInfo, SourceLines
from tflint_graph.source.dependencies import with_folder_versions, with_keras_version
from tflint_graph.source.reading import decode, is_notebook

if TYPE_CHECKING:
    from tflint_graph.dynamic.session import DynamicSummary
    from tflint_graph.output.rewrite import FileFix

SUBCOMMANDS = ("check", "rule", "rules")


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


# The sections of the lint options in ``--help``, in the order a user needs them; an option
# in none of them is listed under "Other options".
_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Rule selection", ("select", "ignore", "extend_select", "fail_level", "exit_zero")),
    ("Fixes", ("fix", "unsafe_fixes", "diff", "show_fixes", "add_noqa")),
    (
        "Output",
        ("output_format", "output_file", "color", "statistics", "show_source", "quiet", "verbose"),
    ),
    (
        "Files and configuration",
        (
            "config_file",
            "keras_version",
            "exclude",
            "extend_exclude",
            "stdin_filename",
            "jobs",
            "no_cache",
        ),
    ),
    ("Dynamic mode (imports and runs your code)", ("dynamic", "dynamic_timeout", "device")),
)


def _format_sections(
    command: click.Command, ctx: click.Context, out: click.HelpFormatter, *, own_help: bool = True
) -> None:
    """``command``'s options, grouped under ``_SECTIONS``, in one column layout."""
    records = {
        p.name: record
        for p in command.get_params(ctx)
        if isinstance(p, click.Option)
        and (own_help or "--help" not in p.opts)
        and (record := p.get_help_record(ctx)) is not None
    }
    # write_dl aligns each call on its own: pad the terms to one width for every section.
    width = min(max((len(term) for term, _ in records.values()), default=0), _TERM_WIDTH)
    sections = [*_SECTIONS, ("Other options", tuple(records))]
    for title, names in sections:
        rows = [records.pop(n) for n in names if n in records]
        if rows:
            with out.section(title):
                out.write_dl([(term.ljust(width), text) for term, text in rows])


# The widest option column in --help; a longer term puts its text on the next line.
_TERM_WIDTH = 30


class _Check(click.Command):
    """The lint command, its ``--help`` in sections."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_sections(self, ctx, formatter)


class _DefaultToCheck(click.Group):
    """``tflint-graph PATHS`` means ``tflint-graph check PATHS`` (a path named like a
    subcommand can be spelled ``./rule``); ``--help`` shows the lint options first."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not any(a in ("--help", "-h", "--version", "-V") for a in args[:1]) and (
            not args or args[0] not in self.commands
        ):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [PATHS]...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        lint = self.commands["check"]
        lint_ctx = click.Context(lint, parent=ctx, info_name="check")
        _format_sections(lint, lint_ctx, formatter, own_help=False)
        self.format_commands(ctx, formatter)
        with formatter.section("Options"):
            formatter.write_dl(
                [r for p in self.get_params(ctx) if (r := p.get_help_record(ctx)) is not None]
            )


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="tflint-graph")
def main() -> None:
    """Find Python that silently stops working when TensorFlow traces it.

    \b
    Lints PATHS: files or directories (default: the current directory); - reads
    standard input.  Exit status: 0 no findings; 1 findings (those at or above
    --fail-level); 2 a usage, configuration or internal error.
    """


# tf.device names dynamic mode can trace on (checked before anything runs).
_DEVICE = re.compile(r"(?:cpu|gpu)(?::\d+)?|/device:(?:cpu|gpu):\d+", re.IGNORECASE)


def _device(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and _DEVICE.fullmatch(value.strip()) is None:
        raise click.BadParameter(
            f"{value!r} is not a device dynamic mode can trace on; "
            "use cpu, gpu, gpu:N, /device:CPU:0 or /device:GPU:N",
            ctx,
            param,
        )
    return value.strip() if value is not None else None


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


@main.command(
    cls=_Check,
    short_help="Lint PATHS (the default command: `tflint-graph PATHS` is the same).",
)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Codes or prefixes to enable, separated by commas.")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Codes to enable on top of the selection.")
@click.option("--exclude", multiple=True, help="Glob patterns of paths to skip (replaces config).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to skip, on top of exclude.")
@click.option(
    "--output-format",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="How findings are printed.",
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the findings to FILE instead of standard output.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour text output; auto: on a terminal, unless NO_COLOR is set.",
)
@click.option("--statistics", is_flag=True, help="Print a count per code instead of findings.")
@click.option("--show-source", is_flag=True, help="Show the offending source line.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--fail-level",
    type=click.Choice(["error", "warning", "info"]),
    default="info",
    show_default=True,
    help="The lowest severity that makes the exit status 1 (all findings are still shown).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--fix", is_flag=True, help="Apply safe automatic fixes; report what remains.")
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, apply unsafe fixes too (they may change what the code does).",
)
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option(
    "--show-fixes", is_flag=True, help="List the fixes applied or available, per file and code."
)
@click.option(
    "--add-noqa",
    is_flag=True,
    help="Add a `# noqa: CODE` comment to every line with a finding; report nothing.",
)
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
    callback=_device,
    help="Device for --dynamic: cpu, gpu, gpu:N, /device:GPU:N  [default: first GPU, else CPU]",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="pyproject.toml to read instead of searching upwards from the paths.",
)
@click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path),
    help=(
        "Lint standard input as this path (its configuration and per-file-ignores apply, "
        "and its project as the last run over it recorded it); a .ipynb path reads it as a "
        "Jupyter notebook."
    ),
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
    "--keras-version",
    type=click.Choice(["auto", "2", "3"]),
    default=None,
    help="Which Keras `keras`/`tf.keras` classes are (Keras 3 converts no Layer.call); "
    "auto: from the project's declared dependencies.  [default: the keras-version setting]",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Say on stderr which Keras version was assumed and why."
)
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
    output_file: Path | None,
    color: str,
    statistics: bool,
    show_source: bool,
    exit_zero: bool,
    fail_level: str,
    quiet: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    show_fixes: bool,
    add_noqa: bool,
    dynamic: bool,
    dynamic_timeout: float,
    device: str | None,
    config_file: Path | None,
    stdin_filename: Path | None,
    jobs: int | None,
    no_cache: bool,
    keras_version: str | None,
    verbose: bool,
    no_context: bool,
) -> None:
    """Lint PATHS (files or directories; default: the current directory; - reads standard
    input, as does --stdin-filename without PATHS)."""
    stdin = _reads_stdin(paths, stdin_filename)
    targets = [stdin_filename or Path("-")] if stdin else list(paths) or [Path(".")]
    config = _load_config(config_file, [stdin_filename or Path.cwd()] if stdin else targets)
    codes = {
        "--select": _split_codes(select),
        "--ignore": _split_codes(ignore),
        "--extend-select": _split_codes(extend_select),
    }
    overrides: dict[str, Any] = {
        "keras_version": keras_version,
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
    config = with_keras_version(config, [stdin_filename or Path.cwd()] if stdin else targets)
    if verbose or (statistics and not quiet):
        click.echo(f"tflint-graph: Keras {config.keras_version} ({config.keras_reason})", err=True)
    if add_noqa and (fix or diff or dynamic):
        _fail("--add-noqa cannot be combined with --fix, --diff or --dynamic")
    if dynamic:
        if stdin:
            _fail("--dynamic cannot lint standard input (it imports the module from disk)")
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
    # Standard input: its text, by the path it is linted as.
    sources: dict[str, str] = {}
    # Where the report goes: stdout, unless stdout carries the fixed standard input.
    report_to_stderr = stdin and (fix or add_noqa)
    fixed: int | None = None
    applied: list[tuple[str, str, str]] | None = None
    linted: list[Path] = []
    try:
        if stdin:
            findings = _lint_stdin(targets[0], config, sources)
            linted.append(targets[0])
        else:
            findings = list(lint_paths(targets, config, files_found=linted, **run_options))
        sub_projects = [
            (os.path.relpath(folder), version, reason)
            for folder, version, reason in with_folder_versions(config, linted).keras_folders
        ]
        if verbose or (statistics and not quiet):
            for folder, version, reason in sub_projects:
                click.echo(f"tflint-graph: Keras {version} in {folder} ({reason})", err=True)
        if not linted:  # as ruff: a warning, and no "All checks passed!" for nothing checked
            click.echo(
                "tflint-graph: warning: No Python files found under the given path(s)", err=True
            )
        if add_noqa:
            _add_noqa(findings, sources, quiet)
        if diff:
            _show_diff(findings, sources, unsafe_fixes, quiet)
        if fix:
            fixed, applied, findings = _fix(findings, sources, unsafe_fixes, stdin, targets, config)
            if fixed and not stdin:  # positions moved: what remains is what a fresh run finds
                findings = list(lint_paths(targets, config, **run_options))
        if dynamic:
            findings, dynamic_summary = _confirm(
                findings, config, dynamic_timeout, device, run_options["jobs"]
            )
        text = output_format == "text"
        terminal = output_file is None and _is_terminal(sys.stderr if report_to_stderr else None)
        run = RunInfo(
            lines=SourceLines(sources),  # read after --fix has written
            show_source=show_source,
            statistics=statistics,
            summary=not quiet and bool(linted or findings),
            fixed=fixed,
            show_fixable=text and not statistics,
            unsafe_fixes=unsafe_fixes,
            show_fixes=show_fixes,
            applied=applied if show_fixes else None,
            color=text and _use_colour(color, terminal),
            width=_terminal_width() if text and terminal else None,
            dynamic=dynamic_summary.as_dict() if dynamic_summary is not None else None,
            keras=(config.keras_version, config.keras_reason),
            keras_folders=sub_projects,
        )
        output = FORMATS[output_format](findings, run)
    except FileNotFoundError as exc:
        _fail(f"path does not exist: {exc}")
    except Exception as exc:  # a bug: one clear line and exit 2, never a traceback
        _fail(f"internal error: {type(exc).__name__}: {exc} (please report this)")
    finally:
        log.removeHandler(counter)
        log.propagate = propagate

    _write_report(output, output_file, run.color, report_to_stderr)
    if dynamic_summary is not None and not quiet:
        click.echo(dynamic_summary.line(), err=True)
    if counter.count:
        sys.exit(2)
    threshold = _SEVERITY_RANK[Severity(fail_level)]
    failing = any(_SEVERITY_RANK[f.severity] >= threshold for f in findings)
    sys.exit(0 if exit_zero or not failing else 1)


def _reads_stdin(paths: tuple[Path, ...], stdin_filename: Path | None) -> bool:
    """``-`` as the only path, or ``--stdin-filename`` without paths (as ruff)."""
    if any(str(p) == "-" for p in paths):
        if len(paths) > 1:
            _fail("- (standard input) cannot be combined with other paths")
        return True
    if stdin_filename is not None and paths:
        _fail("--stdin-filename names standard input: give no PATHS, or -")
    return stdin_filename is not None


def _lint_stdin(path: Path, config: Config, sources: dict[str, str]) -> list[Finding]:
    """Standard input linted as the module ``path`` (its per-file-ignores apply), or as a
    Jupyter notebook's JSON when ``path`` ends in ``.ipynb``; the text goes into
    ``sources``.  The rest of the project is what the latest run over it recorded in the
    cache (``api.project_view``); without such a record the text is linted alone."""
    shown = str(path)
    data = sys.stdin.buffer.read()
    if is_notebook(shown):
        from tflint_graph.source.notebook import read_notebook  # only for notebooks

        notebook = read_notebook(data, shown)
        if isinstance(notebook, Finding):  # TFG001 (not a notebook) or TFG002 (not UTF-8)
            return [notebook] if config.is_enabled(notebook.code, shown) else []
        sources[shown] = notebook.text
        return _lint_text(notebook.text, shown, config)
    decoded = decode(data, shown)
    if isinstance(decoded, Finding):  # TFG002: not text
        return [decoded] if config.is_enabled(decoded.code, shown) else []
    sources[shown] = decoded
    return _lint_text(decoded, shown, config)


def _lint_text(text: str, shown: str, config: Config) -> list[Finding]:
    """Standard input's text linted as ``shown``: a notebook's JSON, or a Python module."""
    if is_notebook(shown):
        return lint_notebook(text, shown, config)
    # With the project around it, as the last run over the project saw it (its cache).
    return lint_source(text, shown, config, context=True)


def _is_terminal(stream: Any | None) -> bool:
    stream = stream if stream is not None else sys.stdout
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _terminal_width() -> int:
    import shutil  # with its compression modules: only for output to a terminal

    return shutil.get_terminal_size().columns


def _use_colour(choice: str, terminal: bool) -> bool:
    """``--color``: ``always``/``never`` as said; ``auto`` colours a terminal unless
    ``NO_COLOR`` is set (https://no-color.org), or anything when ``FORCE_COLOR`` is."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal and os.environ.get("TERM") != "dumb"


def _write_report(output: str, output_file: Path | None, colour: bool, to_stderr: bool) -> None:
    if output_file is None:
        if output:
            click.echo(output, err=to_stderr, color=colour)
        return
    try:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        output_file.write_text(output + "\n" if output else "", encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output_file}: {exc.strerror or exc}")


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


def _show_diff(
    findings: list[Finding], sources: dict[str, str], unsafe: bool, quiet: bool
) -> NoReturn:
    """``--diff``: the fixes as a unified diff on stdout, nothing written; exit 1 when there
    is something to fix (as ruff does)."""
    plans = _plans(findings, sources, unsafe)
    for plan in plans:
        click.echo(plan.diff(), nl=False)
    count = sum(p.count for p in plans)
    if not quiet and count:
        click.echo(f"Would fix {count} finding{'s' if count != 1 else ''}.", err=True)
    sys.exit(1 if plans else 0)


def _plans(findings: list[Finding], sources: dict[str, str], unsafe: bool) -> list[FileFix]:
    from tflint_graph.output.fix import plan_fixes, plan_source  # loads the rules

    if not sources:
        return plan_fixes(findings, unsafe=unsafe)
    plans = [plan_source(path, text, findings, unsafe=unsafe) for path, text in sources.items()]
    return [p for p in plans if p is not None]


def _fix(
    findings: list[Finding],
    sources: dict[str, str],
    unsafe: bool,
    stdin: bool,
    targets: list[Path],
    config: Config,
) -> tuple[int, list[tuple[str, str, str]], list[Finding]]:
    """``--fix``: write every file a fix changes (standard input: print the fixed text on
    stdout, as ruff does); (findings fixed, (path, code, name) of each, the findings of
    standard input after fixing)."""
    names = {f.code: f.name for f in findings}
    fixed = 0
    applied: list[tuple[str, str, str]] = []
    for plan in _plans(findings, sources, unsafe):
        if stdin:
            # A notebook's fixed JSON (its ``fixed`` is the module of its cells).
            sources[plan.path] = (
                plan.new_data.decode("utf-8") if is_notebook(plan.path) else plan.fixed
            )
        else:
            try:
                plan.write()
            except OSError as exc:  # counted by _ErrorCounter: exit 2
                logging.getLogger("tflint_graph").warning("cannot write %s: %s", plan.path, exc)
                continue
        fixed += plan.count
        applied += [(plan.path, code, names.get(code, "")) for code in plan.codes]
    if stdin:
        shown = str(targets[0])
        text = sources.get(shown)
        if text is not None:
            click.echo(text, nl=False)
            if fixed:
                findings = _lint_text(text, shown, config)
    return fixed, applied, findings


def _add_noqa(findings: list[Finding], sources: dict[str, str], quiet: bool) -> NoReturn:
    """``--add-noqa``: a ``# noqa: CODE`` for every finding, written into its file
    (standard input: the annotated text on stdout); exit 0, as ruff."""
    from tflint_graph.output.add_noqa import plan_noqa

    plans = plan_noqa(findings, sources)
    added = 0
    for plan in plans:
        if plan.path in sources:
            # A notebook's JSON with the directives (its ``fixed`` is the module of its cells).
            sources[plan.path] = (
                plan.new_data.decode("utf-8") if is_notebook(plan.path) else plan.fixed
            )
            added += plan.count
            continue
        try:
            plan.write()
        except OSError as exc:
            _fail(f"cannot write {plan.path}: {exc.strerror or exc}")
        added += plan.count
    for text in sources.values():
        click.echo(text, nl=False)
    rewritten = {p.path for p in plans}
    left = sum(f.code not in ("TFG001", "TFG002") and f.path not in rewritten for f in findings)
    if not quiet:
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
        if left:
            click.echo(
                f"tflint-graph: warning: {left} finding{'s' if left != 1 else ''} could not be "
                "silenced (a file that does not parse back unchanged is never rewritten)",
                err=True,
            )
    sys.exit(0)


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


@main.command(short_help="Print the reference page of rule CODE, for example TFG101.")
@click.argument("code")
def rule(code: str) -> None:
    """Print the reference page of rule CODE (e.g. TFG101)."""
    from tflint_graph.output.pages import read_page  # only this command reads the pages

    page = read_page(code)
    if page is None:
        from tflint_graph.checks import rule_table

        known = ", ".join(c for c, *_ in rule_table())
        _fail(f"unknown rule code {code!r}; known codes: {known}")
    click.echo(page.rstrip("\n"))


@main.command(name="rules", short_help="List every rule: code, name, severity and summary.")
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
