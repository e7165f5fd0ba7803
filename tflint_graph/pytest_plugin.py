"""``pytest --tflint-graph``: confirm the static findings with the project's own tests (SPEC §4).

A pytest plugin (entry point group ``pytest11``), off unless ``--tflint-graph`` is given:
without the flag it only adds its options, and imports neither TensorFlow nor libcst.  With
it, before any conftest or test module imports the user's code, it runs the static analysis
over the project as ``tflint-graph`` would (the rootdir, or ``--tflint-graph-paths``, with the
``[tool.tflint-graph]`` config found from there) and installs dynamic mode's probes over the
files with findings (:mod:`tflint_graph.dynamic.suite_probe`).  The tests then run as usual;
at the end of the session each finding gets a status from what the tests did
(:func:`tflint_graph.dynamic.suite.judge`), printed in a ``tflint-graph`` section and, with
``--tflint-graph-report FILE``, written as JSON or SARIF in the CLI's own formats.

The plugin never fails the session or changes an outcome: probes pass through to the real
functions, and an internal error becomes one warning line in the section.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tflint_graph.core.config import Config
    from tflint_graph.core.finding import Finding
    from tflint_graph.dynamic.suite_probe import SuiteProbe

_NAME = "tflint-graph-session"
# Report formats by file extension (``--tflint-graph-format`` overrides).
_BY_EXTENSION = {".json": "json", ".sarif": "sarif"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tflint-graph", "confirm tflint-graph's findings with these tests")
    group.addoption(
        "--tflint-graph",
        action="store_true",
        dest="tflint_graph",
        default=False,
        help="run tflint-graph's static analysis over the project, then confirm each finding "
        "from what these tests do with probes and tf.function tracing counts installed",
    )
    group.addoption(
        "--tflint-graph-paths",
        action="append",
        dest="tflint_graph_paths",
        default=None,
        metavar="PATH",
        help="a file or folder to analyse (repeatable)  [default: the rootdir]",
    )
    group.addoption(
        "--tflint-graph-report",
        dest="tflint_graph_report",
        default=None,
        metavar="FILE",
        help="also write the findings and their statuses to FILE (.json or .sarif)",
    )
    group.addoption(
        "--tflint-graph-format",
        dest="tflint_graph_format",
        default=None,
        choices=["json", "sarif", "text", "github"],
        help="the format of --tflint-graph-report  [default: from its extension]",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Install the probes before the initial conftest.py files import the user's code."""
    if getattr(early_config.known_args_namespace, "tflint_graph", False):
        _install(early_config)


def pytest_configure(config: pytest.Config) -> None:
    # Where pytest_load_initial_conftests did not run (the plugin registered later).
    if config.getoption("tflint_graph", False) and not config.pluginmanager.has_plugin(_NAME):
        _install(config)


def _install(config: pytest.Config) -> None:
    session = _Session(config)
    config.pluginmanager.register(session, _NAME)
    session.start()


class _Session:
    """The plugin's state in one test session with ``--tflint-graph``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.errors: list[str] = []
        self.findings: list[Finding] = []
        self.lint_config: Config | None = None
        self.probe: SuiteProbe | None = None
        self.started = time.monotonic()
        # Finding paths are relative to it (as the CLI run there prints them); a test that
        # changes the working directory and leaves it does not move them.
        self.home = Path(config.invocation_params.dir)
        self.reals: dict[str, str] = {}
        self.device: str | None = None
        self.done = False
        self.report_line = ""

    def _warn(self, what: str, exc: BaseException) -> None:
        self.errors.append(f"{what}: {type(exc).__name__}: {exc}")

    # -- before the tests
    def start(self) -> None:
        if getattr(self.config.option, "numprocesses", None) or hasattr(self.config, "workerinput"):
            # pytest-xdist: the tests run in other processes than the one that reports.
            self.errors.append("--tflint-graph needs the tests in one process: run without -n")
            return
        try:
            self.findings, self.lint_config = _analyse(self.config)
            self.reals = {f.path: os.path.realpath(f.path) for f in self.findings}
        except Exception as exc:
            self._warn("static analysis failed", exc)
            return
        try:
            self.probe = _probe_for(self.findings)
            if self.probe is not None:
                self.probe.start()
        except Exception as exc:
            self.probe = None
            self._warn("could not install the probes", exc)

    # -- while the tests run
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        if self.probe is not None:
            self.probe.test = item.nodeid
        try:
            yield
        finally:
            if self.probe is not None:
                self.probe.test = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, None, None]:
        yield
        if self.probe is None or call.excinfo is None:
            return
        try:
            self.probe.failed(call.excinfo.value)
        except Exception as exc:
            self._warn("could not read a test's exception", exc)

    # -- after them
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish()

    def finish(self) -> None:
        if self.done:
            return
        self.done = True
        if self.probe is not None:
            try:
                self.probe.stop()
                # Only now: listing logical devices initialises them, which a conftest that
                # sets GPU memory growth must do first.
                self.device = _device()
            except Exception as exc:
                self._warn("could not stop the probes", exc)
        try:
            self.findings = self._judged()
        except Exception as exc:
            self._warn("could not judge the findings", exc)
        target = self.config.getoption("tflint_graph_report")
        if target:
            try:
                with _working_dir(self.home):
                    self.report_line = self._write(Path(target))
            except Exception as exc:
                self._warn(f"could not write {target}", exc)

    def _judged(self) -> list[Finding]:
        from tflint_graph.core.finding import TOOL_CODES, DynamicStatus
        from tflint_graph.dynamic.suite import NOT_REACHED, NOT_REACHED_EVIDENCE, judge
        from tflint_graph.dynamic.verdicts import UNVERIFIED

        self.statuses: list[str] = []
        out = []
        for f in self.findings:
            if f.code in TOOL_CODES:
                out.append(f)
                continue
            if f.cell is not None:
                status = DynamicStatus(UNVERIFIED, "a notebook is not run by the tests")
                self.statuses.append(UNVERIFIED)
            elif self.probe is None:
                status = DynamicStatus(UNVERIFIED, "the probes were not installed")
                self.statuses.append(UNVERIFIED)
            else:
                real = self.reals.get(f.path) or os.path.realpath(f.path)
                verdict = judge(real, f.line, f.code, self.probe.record)
                self.statuses.append(verdict.status)
                status = (
                    DynamicStatus(UNVERIFIED, NOT_REACHED_EVIDENCE)
                    if verdict.status == NOT_REACHED
                    else DynamicStatus(verdict.status, verdict.evidence, device=self.device)
                )
            out.append(dataclasses.replace(f, dynamic=status))
        return out

    def counts(self) -> dict[str, int]:
        from tflint_graph.dynamic.suite import summary_counts

        return dict(summary_counts(getattr(self, "statuses", [])))

    def summary(self) -> str:
        from tflint_graph.dynamic.suite import NOT_REACHED

        c = self.counts()
        return (
            f"tflint-graph: {c['confirmed']} confirmed, {c['not-reproduced']} not-reproduced, "
            f"{c['unverified']} unverified, {c[NOT_REACHED]} not reached by the tests "
            f"(on {self.device or 'no device'})"
        )

    def _run_info(self, root: Path) -> Any:
        from tflint_graph.dynamic.suite import NOT_REACHED
        from tflint_graph.output import RunInfo, SourceLines

        c = self.counts()
        dynamic = {
            "device": self.device,
            "confirmed": c["confirmed"],
            "not-reproduced": c["not-reproduced"],
            "unverified": c["unverified"] + c[NOT_REACHED],
            "not-reached": c[NOT_REACHED],
            "source": "pytest",
            "seconds": round(time.monotonic() - self.started, 2),
        }
        keras = None
        if self.lint_config is not None:
            keras = (self.lint_config.keras_version, self.lint_config.keras_reason)
        return RunInfo(lines=SourceLines(), root=root, dynamic=dynamic, keras=keras)

    def _write(self, target: Path) -> str:
        from tflint_graph.output import FORMATS

        name = self.config.getoption("tflint_graph_format")
        if name is None:
            suffixes = [s.lower() for s in target.suffixes]
            name = "sarif" if ".sarif" in suffixes else _BY_EXTENSION.get(target.suffix.lower())
        if name is None:
            raise ValueError(
                f"cannot tell the format from {target.name!r}: name it .json or .sarif, or "
                "give --tflint-graph-format"
            )
        text = FORMATS[name](self.findings, self._run_info(self.home))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n", encoding="utf-8")
        return f"tflint-graph: wrote the {name} report to {target}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.finish()
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", "tflint-graph")
        try:
            from tflint_graph.output import FORMATS

            write(self.summary() if self.findings else "tflint-graph: no findings to confirm")
            with _working_dir(self.home):
                listed = FORMATS["text"](self.findings, self._run_info(self.home))
            for line in listed.splitlines():
                write(line)
            if self.report_line:
                write(self.report_line)
        except Exception as exc:
            self._warn("could not print the findings", exc)
        if self.errors:
            # One line: the plugin must never take the user's session down.
            write(f"tflint-graph: warning: internal error: {self.errors[0]} (please report this)")


@contextlib.contextmanager
def _working_dir(path: Path) -> Iterator[None]:
    """Source lines are read by the findings' relative paths: from where they were found."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _project(config: pytest.Config) -> Path:
    """pytest's rootdir, where an ini file decides it.  Without one pytest takes the common
    folder of the arguments before it knows the plugins' options, so the value of
    ``--tflint-graph-report ../out.json`` would widen it to the parent folder: the folder
    pytest runs in and the test paths it collects decide instead."""
    if config.inipath is not None:
        return config.rootpath
    base = str(config.invocation_params.dir)
    paths = [base]
    for arg in config.args:
        path = os.path.abspath(os.path.join(base, str(arg).split("::")[0]))
        if os.path.exists(path):
            paths.append(path if os.path.isdir(path) else os.path.dirname(path))
    try:
        return Path(os.path.commonpath(paths))
    except ValueError:  # paths on different drives
        return config.rootpath


def _paths(config: pytest.Config) -> list[str]:
    """The paths to analyse, relative to the working directory where they lie under it (the
    CLI run from there shows the same paths)."""
    given: Sequence[str] = config.getoption("tflint_graph_paths") or [str(_project(config))]
    out = []
    for p in given:
        absolute = os.path.abspath(os.path.join(str(config.invocation_params.dir), p))
        relative = os.path.relpath(absolute)
        out.append(absolute if relative.startswith("..") else relative)
    return out


def _analyse(config: pytest.Config) -> tuple[list[Finding], Config]:
    from tflint_graph.api import lint_paths
    from tflint_graph.core.config import Config
    from tflint_graph.source.dependencies import with_keras_version

    paths = _paths(config)
    lint_config = Config.discover(paths[0])
    lint_config = with_keras_version(lint_config, [Path(p) for p in paths])
    # As the command line runs it: the project around the paths as context, the cache on.
    return list(lint_paths(paths, lint_config, context=True, cache=True)), lint_config


def _probe_for(findings: Sequence[Finding]) -> SuiteProbe | None:
    from tflint_graph.core.finding import TOOL_CODES
    from tflint_graph.dynamic.suite import body_line, watch_target
    from tflint_graph.dynamic.verdicts import WATCH_CODES

    wanted: set[tuple[str, int]] = set()
    watches: dict[tuple[str, int], tuple[str, ...]] = {}
    stale: dict[tuple[str, int], str] = {}
    bodies: dict[tuple[str, int], tuple[str, int]] = {}
    handlers: dict[tuple[str, int], tuple[str, int]] = {}
    unroll_max: dict[tuple[str, int], int] = {}
    timed: dict[tuple[str, int], str] = {}
    sources: dict[str, str] = {}

    def source(real: str) -> str:
        if real not in sources:
            try:
                sources[real] = Path(real).read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError):
                sources[real] = ""
        return sources[real]

    for f in findings:
        if f.code in TOOL_CODES or f.cell is not None:
            continue
        real = os.path.realpath(f.path)
        wanted.add((real, f.line))
        if f.code in WATCH_CODES:
            names = watch_target(source(real), f.line)
            if names is not None:
                watches[(real, f.line)] = names
        elif f.code in ("TFG206", "TFG305"):
            # The block it is about: a try body run while tracing (and a handler that never
            # ran then), a loop body run many times while one graph is built.
            body = body_line(source(real), f.line)
            if body is not None:
                wanted.add((real, body))
                bodies[(real, f.line)] = (real, body)
            caught = body_line(source(real), f.line, handler=True)
            if caught is not None:
                wanted.add((real, caught))
                handlers[(real, f.line)] = (real, caught)
            limit = re.search(r"unroll-max=(\d+)", f.message)
            if limit is not None:
                unroll_max[(real, f.line)] = int(limit.group(1))
        elif f.code == "TFG403":
            # The function the finding names is called at its column (`step(x)`, `self.step`).
            lines = source(real).splitlines()
            text = lines[f.line - 1][f.column - 1 :] if f.line <= len(lines) else ""
            called = re.match(r"[A-Za-z_][\w.]*", text)
            if called is not None:
                timed[(real, f.line)] = called.group().rsplit(".", 1)[-1]
        elif f.code == "TFG209":
            # `ta.write(i, v)` with the result dropped: the array's flow stays the same.
            names = watch_target(source(real), f.line)
            if names is not None:
                watches[(real, f.line)] = (*names, "flow")
        elif f.code == "TFG109":
            # The global read is the name the finding points at (`LEARNING_RATE`), or the
            # attribute of `self` (`self.noise`, which an eager method reassigns).
            lines = source(real).splitlines()
            text = lines[f.line - 1][f.column - 1 :] if f.line <= len(lines) else ""
            name = re.match(r"(?:self\.)?[A-Za-z_]\w*", text)
            if name is not None and not text[name.end() :].startswith("."):
                stale[(real, f.line)] = name.group()
    if not wanted:
        return None
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:
        raise RuntimeError(
            "--tflint-graph needs TensorFlow, which is not installed: "
            "pip install 'tflint-graph[dynamic]'"
        )
    # TensorFlow from here on: the flag asked for it.
    from tflint_graph.dynamic.suite_probe import SuiteProbe

    probe = SuiteProbe({p for p, _ in wanted}, wanted, watches, stale, bodies)
    probe.record.handlers.update(handlers)
    probe.record.unroll_max.update(unroll_max)
    probe.record.timed.update(timed)
    return probe


def _device() -> str | None:
    import tensorflow as tf

    devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
    return devices[0].name if devices else None


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.pluginmanager.get_plugin(_NAME)
    if isinstance(session, _Session) and not session.done:
        session.finish()
        if session.errors:
            print(f"tflint-graph: warning: internal error: {session.errors[0]}", file=sys.stderr)
