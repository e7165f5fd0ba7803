"""``pytest --tflint-graph`` (SPEC §4, "From the project's own tests"): the plugin run by pytest
on a small TensorFlow project with its own tests (tests/fixtures/projects/pytest_plugin_pkg),
each run in a subprocess (``pytester.runpytest_subprocess``) so TensorFlow's state stays
there; and the verdicts read from hand-made records, without TensorFlow."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import DATA, PROJECTS, REPO, dedent
from tflint_graph.dynamic.suite import (
    NOT_REACHED,
    CallSite,
    Change,
    Entry,
    Raised,
    SavedFunction,
    Seen,
    SessionRecord,
    StaleRead,
    body_line,
    judge,
    watch_target,
)

pytest_plugins = ["pytester"]

PROJECT = PROJECTS / "pytest_plugin_pkg"
MARKER = re.compile(r"#\s*(TFG\d{3})\s*$")
PLUGIN = ("-p", "tflint_graph.pytest_plugin", "-p", "no:cacheprovider")
FINDING = re.compile(r"^(\S+\.py):(\d+):\d+: (TFG\d{3}) .*\[dynamic: ([a-z-]+): (.*)\]$")
TIMEOUT = 600
# Not pytest.importorskip: pytester restores sys.modules after each test, and numpy (under
# TensorFlow) cannot be imported twice in one process.  The runs import it in their own.
needs_tensorflow = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow (the dynamic extra)"
)


def _markers() -> dict[tuple[str, int], str]:
    found = {}
    for path in sorted((PROJECT / "tinytrain").glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if match := MARKER.search(line):
                found[(f"tinytrain/{path.name}", number)] = match.group(1)
    return found


def _project(pytester: pytest.Pytester) -> Path:
    shutil.copytree(PROJECT, pytester.path, dirs_exist_ok=True)
    return pytester.path


def _listed(lines: list[str]) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(path, line, code) -> (status, evidence) of the findings the section lists."""
    out = {}
    for line in lines:
        if match := FINDING.match(line):
            path, number, code, status, evidence = match.groups()
            out[(path, int(number), code)] = (status, evidence)
    return out


def _section(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if re.match(r"^=+ tflint-graph =+$", line))
    return lines[start:]


# -- without the flag (no TensorFlow needed) --------------------------------------------


def test_importing_the_plugin_imports_neither_tensorflow_nor_libcst() -> None:
    # Nor the analysis: pytest loads the plugin in every session of every project.
    heavy = ("tensorflow", "libcst", "numpy", "tflint_graph.api", "tflint_graph.core.config")
    code = (
        "import sys, tflint_graph.pytest_plugin\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_the_package_declares_the_plugin_to_pytest() -> None:
    toml = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    project = toml.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # Named as the module, so that `-p tflint_graph.pytest_plugin` finds it loaded already.
    assert project["entry-points"]["pytest11"] == {
        "tflint_graph.pytest_plugin": "tflint_graph.pytest_plugin"
    }


def _mentions_the_plugin(lines: list[str]) -> bool:
    """Whether the session printed anything of the plugin's, past pytest's own header (which
    lists the installed plugins, ours among them once the package is installed)."""
    return any("tflint-graph" in line for line in lines if not line.startswith("plugins:"))


def test_without_the_flag_the_plugin_does_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_nothing_heavy_was_imported():
            assert "tensorflow" not in sys.modules and "libcst" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, timeout=TIMEOUT)
    result.assert_outcomes(passed=1)
    assert not _mentions_the_plugin(result.outlines)
    # The options are there all the same.
    helped = pytester.runpytest_subprocess(*PLUGIN, "--help", timeout=TIMEOUT)
    assert "--tflint-graph-report=FILE" in helped.stdout.str()


def test_an_internal_error_is_one_warning_line_and_keeps_the_outcome(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--tflint-graph", "--tflint-graph-report", "out.txt", timeout=TIMEOUT
    )
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert "tflint-graph: no findings to confirm" in result.outlines
    warnings = [line for line in result.outlines if "tflint-graph: warning" in line]
    assert len(warnings) == 1
    assert "cannot tell the format from 'out.txt'" in warnings[0]
    assert not (pytester.path / "out.txt").exists()


@needs_tensorflow
def test_files_the_tests_write_stay_where_the_tests_put_them(pytester: pytest.Pytester) -> None:
    """Dynamic mode's child moves a module's writes into its scratch folder; a test suite
    reads back what it wrote, so the plugin must leave the paths alone."""
    pytester.makepyfile(
        tracelog="""
        import tensorflow as tf

        def make_step(path):
            @tf.function
            def step(x):
                with open(path, "a") as fh:
                    fh.write("traced\\n")
                return x * 2
            return step
        """,
        test_tracelog="""
        import pathlib
        import shutil
        import tempfile

        import tensorflow as tf
        from tracelog import make_step

        def test_the_log_is_written_once():
            # Outside the project (the rootdir), as pytest's own tmp_path usually is.
            folder = pathlib.Path(tempfile.mkdtemp())
            try:
                path = folder / "log.txt"
                step = make_step(str(path))
                step(tf.constant(1.0))
                step(tf.constant(2.0))
                assert path.read_text() == "traced\\n"
            finally:
                shutil.rmtree(folder)
        """,
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "--tflint-graph", timeout=TIMEOUT)
    result.assert_outcomes(passed=1)
    assert any("TFG108" in line and "confirmed" in line for line in result.outlines)
    assert not (pytester.path / "outside").exists()


@needs_tensorflow
def test_a_stale_global_is_judged_by_the_graph_the_call_ran(pytester: pytest.Pytester) -> None:
    """Two traces read two values of the global; a later call that runs the first graph
    after the global became the second value kept the first: stale, whatever the second
    trace read."""
    pytester.makepyfile(
        scale="""
        import tensorflow as tf

        SCALE = 1.0


        def set_scale(value):
            global SCALE
            SCALE = value


        @tf.function
        def scaled(x):
            return x * SCALE
        """,
        test_scale="""
        import tensorflow as tf

        import scale

        def test_the_scalar_graph_keeps_the_first_value():
            scale.set_scale(1.0)
            assert float(scale.scaled(tf.constant(3.0))) == 3.0
            scale.set_scale(2.0)
            assert scale.scaled(tf.constant([3.0, 3.0])).numpy().tolist() == [6.0, 6.0]
            assert float(scale.scaled(tf.constant(3.0))) == 3.0
        """,
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "--tflint-graph", timeout=TIMEOUT)
    result.assert_outcomes(passed=1)
    line = next(line for line in result.outlines if "TFG109" in line)
    assert "[dynamic: confirmed: SCALE was 1.0 when scaled() traced, and 2.0 at a later" in line


# -- the fixture project, with TensorFlow -----------------------------------------------


@needs_tensorflow
def test_the_tests_confirm_every_reached_finding_and_the_report_is_the_clis_json(
    pytester: pytest.Pytester,
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    root = _project(pytester)
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--tflint-graph", "--tflint-graph-report", "report.json", timeout=TIMEOUT
    )
    # The project's own outcomes: the bool(tensor) bug fails its test, as without the plugin.
    result.assert_outcomes(passed=8, failed=1)
    section = _section(result.outlines)
    assert section[1].startswith(
        "tflint-graph: 7 confirmed, 0 not-reproduced, 0 unverified, 1 not reached by the tests"
    )
    listed = _listed(section)
    expected = _markers()
    assert {(p, n) for p, n, _ in listed} == set(expected)
    assert {(p, n): c for p, n, c in listed} == expected
    status = {key[2]: value for key, value in listed.items()}
    assert status["TFG104"] == ("unverified", "not reached by the tests")
    assert {c for c, (s, _) in status.items() if s == "confirmed"} == {
        "TFG101",
        "TFG102",
        "TFG103",
        "TFG109",
        "TFG201",
        "TFG301",
        "TFG303",
    }
    assert status["TFG101"][1].startswith(
        "print ran 1 time while tracing, 0 times over 10 later calls of train_step: "
        "trace-time only (in tests/test_model.py::test_training_reduces_the_loss)"
    )
    assert "LOSS_HISTORY changed while tracing (len 0 -> len 1)" in status["TFG102"][1]
    assert "while tracing _brighten (a Dataset.map() function)" in status["TFG103"][1]
    assert status["TFG201"][1].startswith(
        "OperatorNotAllowedInGraphError at line 15 while tracing "
        "(in tests/test_metrics.py::test_capped_mean_caps_large_values): Using a symbolic"
    )

    doc = json.loads((root / "report.json").read_text(encoding="utf-8"))
    schema = json.loads(
        (REPO / "tflint_graph" / "schemas" / "findings-v1.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator(schema).validate(doc)
    in_json = {(f["path"], f["line"], f["code"]): f["dynamic"] for f in doc["findings"]}
    assert {k: (v["status"], v["evidence"]) for k, v in in_json.items()} == listed
    # A retrace per new Python value, seen at the call site.
    assert status["TFG303"][1].startswith(
        "scaled() traced 3 times over 3 calls from line 28, once per new Python value "
        "(1, 2, 3) (in tests/test_metrics.py::test_running_scales_grow_with_the_step)"
    )
    assert status["TFG109"][1].startswith(
        "SCALE was 1.0 when scaled_sum() traced, and 2.0 at a later call that did not trace "
        "again: the graph kept 1.0"
    )
    assert status["TFG301"][1].startswith(
        "serve() traced 2 times over 2 calls, once per new input shape "
        "(float32[2, 3]; float32[5, 3])"
    )
    assert doc["dynamic"]["confirmed"] == 7 and doc["dynamic"]["not-reached"] == 1
    assert doc["dynamic"]["unverified"] == 1  # the unreached one, in the CLI's three statuses
    # The static findings are the CLI's, to the field.
    cli = subprocess.run(
        [sys.executable, "-m", "tflint_graph", ".", "--output-format", "json", "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    static = json.loads(cli.stdout)["findings"]
    assert [{**f, "dynamic": None} for f in doc["findings"]] == static


@needs_tensorflow
def test_without_the_flag_the_project_has_the_same_outcomes_and_no_section(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess(*PLUGIN, timeout=TIMEOUT)
    result.assert_outcomes(passed=8, failed=1)
    assert not _mentions_the_plugin(result.outlines)


@needs_tensorflow
def test_tests_that_run_functions_eagerly_leave_findings_unverified_and_sarif_validates(
    pytester: pytest.Pytester,
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    root = _project(pytester)
    (root / "tests" / "conftest.py").write_text(
        "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True)\n", encoding="utf-8"
    )
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--tflint-graph", "--tflint-graph-report", "out/report.sarif", timeout=TIMEOUT
    )
    # Eagerly, bool(tensor) works: that test passes (as it does without the plugin).
    result.assert_outcomes(passed=9)
    listed = {code: value for (_, _, code), value in _listed(_section(result.outlines)).items()}
    # Nothing was traced: the claim was not tested, which is no reason to dismiss it.
    status, evidence = listed["TFG101"]
    assert status == "unverified"
    assert "in calls of train_step run eagerly (tf.config.run_functions_eagerly(True))" in evidence
    assert listed["TFG201"][0] == "unverified"
    assert "eagerly it does not raise" in listed["TFG201"][1]
    # tf.data traces its functions whatever run_functions_eagerly says.
    assert listed["TFG103"][0] == "confirmed"
    assert listed["TFG303"] == (
        "unverified",
        "scaled() ran eagerly in all 3 calls from line 28 (tf.config.run_functions_eagerly(True))",
    )

    log = json.loads((root / "out" / "report.sarif").read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    validator.validate(log)
    results = {
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"]): r
        for r in log["runs"][0]["results"]
    }
    dynamic = results[("tinytrain/model.py", "TFG101")]["properties"]["dynamic"]
    assert (dynamic["status"], dynamic["evidence"]) == ("unverified", evidence)
    assert dynamic["device"].startswith("/device:")
    assert log["runs"][0]["properties"]["dynamic"]["source"] == "pytest"


@needs_tensorflow
def test_the_tests_confirm_cost_findings_each_by_its_own_effect(
    pytester: pytest.Pytester,
) -> None:
    # Unrolled loops, tiny helpers, graphs without work, tf.functions made per call, timers
    # around a first call, XLA with varying shapes, dropped TensorArray writes and handlers
    # of graph errors: each confirmed by what the tests made TensorFlow do at the line.
    project = PROJECTS / "pytest_costs_pkg"
    shutil.copytree(project, pytester.path, dirs_exist_ok=True)
    result = pytester.runpytest_subprocess(*PLUGIN, "--tflint-graph", timeout=TIMEOUT)
    result.assert_outcomes(passed=15)
    section = _section(result.outlines)
    assert section[1].startswith("tflint-graph: 15 confirmed, 0 not-reproduced, 0 unverified")
    listed = _listed(section)
    marked = {}
    for name in ("ops.py", "export.py", "lambdas.py", "anneal.py", "monitor.py"):
        text = (project / "costkit" / name).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if match := MARKER.search(line):
                marked[(f"costkit/{name}", number, match.group(1))] = "confirmed"
    assert {key: status for key, (status, _) in listed.items()} == marked
    evidence = {
        code: text
        for (path, _, code), (_, text) in listed.items()
        if not any(name in path for name in ("lambdas", "anneal", "monitor"))
    }
    # An attribute of the object an eager method reassigns between the tests' calls.
    annealed = next(text for (path, _, _), (_, text) in listed.items() if "anneal" in path)
    assert annealed.startswith(
        "self.temperature was 2.0 when scores() traced, and 1.0 at a later call that did not "
        "trace again: the graph kept 2.0"
    )
    # tf.functions made from lambdas: the line that makes one, the name that calls it.
    lambdas = {code: text for (path, _, code), (_, text) in listed.items() if "lambdas" in path}
    assert lambdas["TFG302"].startswith("3 tf.function objects were made from this definition")
    assert lambdas["TFG403"].startswith("<lambda>() called 5 times from line 20, and 1 time")
    # A tf.function made in a callback from a method defined elsewhere: counted where it is
    # made; the switch to eager execution, by the call that turned it on.
    monitor = {code: text for (path, _, code), (_, text) in listed.items() if "monitor" in path}
    assert monitor["TFG302"].startswith("3 tf.function objects were made from this definition")
    assert monitor["TFG402"].startswith(
        "tf.config.run_functions_eagerly(True) ran 1 time at line 29 "
        "(in tests/test_monitor.py::test_the_report_reads_the_error): from then on"
    )
    assert evidence["TFG305"].startswith(
        "the loop body (line 30) ran 120 times while one graph was built"
    )
    assert evidence["TFG302"].startswith(
        "3 tf.function objects were made from this definition, and each traced on its first call"
    )
    assert "(only inputs, constants and outputs)" in evidence["TFG404"]
    assert "while another function's graph was being built, and inlined" in evidence["TFG401"]
    assert evidence["TFG304"].startswith("scores() was called with 2 input shapes")
    assert (
        "1 time it traced first: the time measured around that call includes tracing"
        in (evidence["TFG403"])
    )
    assert "(parts.flow unchanged)" in evidence["TFG209"]
    assert evidence["TFG206"].startswith(
        "the try body (line 46) ran 1 time while a graph was built and put CheckNumerics "
        "(line 46) in the graph"
    )
    # The tests never rebind the global nor call the saved method: both are staged or read
    # from what TensorFlow kept, without running the tests' code again.
    assert evidence["TFG109"].startswith(
        "TEMPERATURE was 1.0 when calibrated() traced; staged, as the tests never rebound it: "
        "with TEMPERATURE = 3.0 the arguments of a later call still selected the graph built "
        "with 1.0 (no new trace)"
    )
    assert evidence["TFG301"].startswith(
        "tf.saved_model.save wrote it with no traced graph (nothing had called it)"
    )


# -- verdicts from records (no TensorFlow) ----------------------------------------------

FILE = "/project/pkg/step.py"


def _seen(**counts: Any) -> Seen:
    entries = counts.pop("entries", [])
    seen = Seen(**counts)
    for entry in entries:
        (seen.eager_entries if seen.eager else seen.entries)[id(entry)] = entry
    return seen


def test_a_probe_hit_while_tracing_with_later_calls_is_confirmed() -> None:
    step = Entry("train_step", calls=15, traced=1)
    record = SessionRecord(
        lines={(FILE, 7): _seen(graph=1, entries=[step])},
        hits={(FILE, 7): {"print:print": _seen(graph=2, entries=[step])}},
    )
    verdict = judge(FILE, 7, "TFG101", record)
    assert verdict.status == "confirmed"
    assert verdict.evidence == (
        "print ran 2 times while tracing, 0 times over 14 later calls of train_step: "
        "trace-time only"
    )


def test_calls_forced_to_run_eagerly_say_nothing_beside_traced_ones() -> None:
    # One test switched every tf.function to eager (a CLI's debug flag), others traced the
    # function and called its graph: the forced calls are left out, not taken as per call.
    step = Entry("train_step", calls=15, traced=1)
    seen = _seen(graph=2, entries=[step])
    seen.eager, seen.forced = 4, 4
    record = SessionRecord(lines={(FILE, 7): seen}, hits={(FILE, 7): {"print:print": seen}})
    verdict = judge(FILE, 7, "TFG101", record)
    assert verdict.status == "confirmed"
    assert "(its 4 times in calls run with tf.config.run_functions_eagerly(True) on are left " in (
        verdict.evidence
    )
    # One eager call that was not forced is a call that ran the line without tracing.
    seen.eager = 5
    assert judge(FILE, 7, "TFG101", record).status == "not-reproduced"


def test_a_probe_hit_with_no_call_after_the_trace_stays_unverified() -> None:
    step = Entry("train_step", calls=1, traced=1)
    record = SessionRecord(hits={(FILE, 7): {"print:print": _seen(graph=1, entries=[step])}})
    verdict = judge(FILE, 7, "TFG101", record)
    assert verdict.status == "unverified"
    assert "no later call could show it does not run again" in verdict.evidence


def test_a_probe_hit_in_plain_eager_code_proves_nothing() -> None:
    record = SessionRecord(hits={(FILE, 7): {"random:random.random": _seen(plain=3)}})
    verdict = judge(FILE, 7, "TFG103", record)
    assert verdict.status == "unverified"
    assert "the tests never traced it" in verdict.evidence


def test_a_line_no_test_ran_is_not_reached_unless_lines_were_not_recorded() -> None:
    assert judge(FILE, 9, "TFG104", SessionRecord()).status == NOT_REACHED
    blind = SessionRecord(no_lines="another tracer owns sys.settrace")
    verdict = judge(FILE, 9, "TFG104", blind)
    assert verdict.status == "unverified" and "another tracer" in verdict.evidence


def test_a_raising_code_needs_the_documented_exception_at_its_line() -> None:
    def raised(line: int, name: str, message: str = "m") -> Raised:
        return Raised(FILE, line, 3, 20, name, (name, "Exception"), message, True, "t::x")

    ran = {(FILE, 12): _seen(graph=1)}
    wrong = SessionRecord(lines=ran, raised=[raised(12, "ValueError")])
    assert judge(FILE, 12, "TFG201", wrong).status == "unverified"
    elsewhere = SessionRecord(
        lines=ran, raised=[raised(14, "OperatorNotAllowedInGraphError", "symbolic")]
    )
    assert judge(FILE, 12, "TFG201", elsewhere).status == "not-reproduced"
    # TFG207's error surfaces where the list is used: anywhere in the same function.
    moved = SessionRecord(lines=ran, raised=[raised(18, "InaccessibleTensorError")])
    assert judge(FILE, 12, "TFG207", moved).status == "confirmed"
    # The documented error says what it is about: the type alone is too common.
    vague = SessionRecord(lines=ran, raised=[raised(12, "OperatorNotAllowedInGraphError")])
    assert judge(FILE, 12, "TFG201", vague).status == "unverified"
    message = "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed."
    here = SessionRecord(lines=ran, raised=[raised(12, "OperatorNotAllowedInGraphError", message)])
    verdict = judge(FILE, 12, "TFG201", here)
    assert verdict.status == "confirmed"
    assert verdict.evidence == (
        f"OperatorNotAllowedInGraphError at line 12 while tracing (in t::x): {message}"
    )


def test_a_layer_built_per_trace_raises_at_its_first_call_further_on() -> None:
    """TFG208: Keras makes a layer's variables (and TensorFlow raises) where the layer is
    first called, after the line that builds it; an error before that line, or another
    ValueError, is no confirmation."""
    message = "tf.function only supports singleton tf.Variables created on the first call."

    def raised(line: int, text: str = message) -> Raised:
        return Raised(FILE, line, 3, 20, "ValueError", ("ValueError", "Exception"), text, True, "t")

    ran = {(FILE, 12): _seen(graph=1)}
    first_call = SessionRecord(lines=ran, raised=[raised(14)])
    verdict = judge(FILE, 12, "TFG208", first_call)
    assert verdict.status == "confirmed"
    assert "at line 14 while tracing" in verdict.evidence
    before = SessionRecord(lines=ran, raised=[raised(10)])
    assert judge(FILE, 12, "TFG208", before).status != "confirmed"
    other = SessionRecord(lines=ran, raised=[raised(14, "Shapes (2, 3) and (3,) are incompatible")])
    assert judge(FILE, 12, "TFG208", other).status != "confirmed"


def _saved(saved: SavedFunction, calls: int = 0) -> Any:
    site = CallSite("serve", calls=calls, traced=min(calls, 1), saved=saved)
    return judge(FILE, 4, "TFG301", SessionRecord(defs={(FILE, 4): site}))


def test_a_saved_function_is_judged_by_the_graphs_the_savedmodel_kept() -> None:
    nothing = _saved(SavedFunction((), True, test="t::x"))
    assert nothing.status == "confirmed"
    assert "wrote it with no traced graph" in nothing.evidence and "(in t::x)" in nothing.evidence
    fixed = _saved(SavedFunction(("float32[2, 3]",), True), calls=1)
    assert fixed.status == "confirmed"
    assert "fixed input shapes (float32[2, 3]): loaded back, it refuses" in fixed.evidence
    # A graph traced with unknown dims serves every size of them: no claim.
    relaxed = _saved(SavedFunction(("float32[None, 3]",), False))
    assert relaxed.status == "unverified"
    # ...and the calls' own shapes decide when the tests called it.
    assert _saved(SavedFunction(("float32[None, 3]",), False), calls=1).status == "unverified"
    refused = _saved(SavedFunction((), False, "ValueError: Expected a TensorFlow function"))
    assert refused.status == "confirmed"
    assert refused.evidence.startswith("tf.saved_model.save raised ValueError: Expected")


def test_a_global_the_tests_never_rebind_is_confirmed_only_when_staged() -> None:
    read = StaleRead("RATE", "step()", "0.5", later=3)
    key = (FILE, 9)
    left = judge(FILE, 9, "TFG109", SessionRecord(stale={key: read}))
    assert left.status == "unverified" and "the tests never rebound it" in left.evidence
    staged = StaleRead("RATE", "step()", "0.5", later=3, staged="2.0", test="t::x")
    verdict = judge(FILE, 9, "TFG109", SessionRecord(stale={key: staged}))
    assert verdict.status == "confirmed"
    assert "staged, as the tests never rebound it: with RATE = 2.0" in verdict.evidence
    assert "so every later call keeps 0.5 (in t::x)" in verdict.evidence


def test_a_state_write_without_a_visible_change_is_not_claimed() -> None:
    step = Entry("train_step", calls=3, traced=1)
    record = SessionRecord(lines={(FILE, 5): _seen(graph=1, entries=[step])})
    assert judge(FILE, 5, "TFG106", record).status == "unverified"
    # A global write is the statement itself.
    assert judge(FILE, 5, "TFG105", record).status == "confirmed"


@pytest.mark.parametrize(
    ("source", "chain"),
    [
        ("HISTORY.append(x)\n", ("HISTORY",)),
        ("self.cache[key] = value\n", ("self", "cache")),
        ("self.steps += 1\n", ("self", "steps")),
        ("del self.seen[k]\n", ("self", "seen")),
        ("f(x).append(1)\n", None),
        ('self.history["loss"].append(x)\n', ("self", "history")),
    ],
)
def test_watch_target_names_the_state_a_statement_changes(
    source: str, chain: tuple[str, ...] | None
) -> None:
    assert watch_target(source, 1) == chain


@needs_tensorflow
def test_a_report_path_outside_the_project_does_not_widen_what_is_analysed(
    pytester: pytest.Pytester,
) -> None:
    # Without an ini file pytest takes its rootdir from the arguments before it knows the
    # plugin's options, so `--tflint-graph-report ../reports/r.json` (an existing file) made
    # it the parent folder, and the analysis covered everything there.
    root = _project(pytester)
    (root / "pyproject.toml").unlink()
    outside = root.parent / "reports"
    outside.mkdir(exist_ok=True)
    (outside / "r.json").write_text("{}", encoding="utf-8")
    (outside / "decoy.py").write_text(
        "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n",
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess(
        *PLUGIN,
        "--tflint-graph",
        "--tflint-graph-report",
        str(outside / "r.json"),
        "tests",
        timeout=TIMEOUT,
    )
    listed = _listed(_section(result.outlines))
    assert listed and all(path.startswith("tinytrain/") for path, _, _ in listed)
    doc = json.loads((outside / "r.json").read_text(encoding="utf-8"))
    assert not any("decoy" in f["path"] for f in doc["findings"])


def test_cost_codes_without_the_effect_stay_unverified() -> None:
    once = CallSite("make", calls=3, traced=1, objects=1)
    assert judge(FILE, 4, "TFG302", SessionRecord(defs={(FILE, 4): once})).status == "unverified"
    warm = CallSite("step", calls=5, traced=0)
    traced = CallSite("normalize", calls=5, traced=1)
    # Per function at the line: `step(normalize(x))` timed for `step`, which never traced.
    record = SessionRecord(
        named_sites={(FILE, 9): {"step": warm, "normalize": traced}},
        timed={(FILE, 9): "step"},
    )
    verdict = judge(FILE, 9, "TFG403", record)
    assert (verdict.status, verdict.evidence) == (
        "unverified",
        "step() called 5 times from line 9 and never traced there (traced before the timer)",
    )
    forced = CallSite("step", calls=5, eager=5)
    record = SessionRecord(named_sites={(FILE, 9): {"step": forced}}, timed={(FILE, 9): "step"})
    assert "ran eagerly in all 5 calls" in judge(FILE, 9, "TFG403", record).evidence
    eager_only = CallSite("helper", calls=4, traced=1)
    verdict = judge(FILE, 2, "TFG401", SessionRecord(defs={(FILE, 2): eager_only}))
    assert verdict.status == "unverified" and "never inlined" in verdict.evidence
    one_shape = CallSite("score", calls=3, traced=1, inputs=["float32[2, 8]"])
    assert judge(FILE, 6, "TFG304", SessionRecord(defs={(FILE, 6): one_shape})).status == (
        "unverified"
    )
    # A loop whose body ran no more times per graph than unroll-max (a `break`, few items).
    body = _seen(graph=6, most=3)
    record = SessionRecord(
        lines={(FILE, 8): body}, bodies={(FILE, 7): (FILE, 8)}, unroll_max={(FILE, 7): 100}
    )
    verdict = judge(FILE, 7, "TFG305", record)
    assert (verdict.status, verdict.evidence) == (
        "unverified",
        "the loop body (line 8) ran 3 times while one graph was built, not more than 100",
    )
    # A TensorArray changed by the statement, or an eager one (written in place), proves
    # nothing.
    for change in (
        Change("parts.flow", True, "SymbolicTensor", "SymbolicTensor", True),
        Change("self.ta.flow", True, "EagerTensor", "EagerTensor", False),
    ):
        record = SessionRecord(lines={(FILE, 5): _seen(graph=1)}, changes={(FILE, 5): [change]})
        assert judge(FILE, 5, "TFG209", record).status == "unverified"
    # A handler that ran while tracing caught an error raised then.
    record = SessionRecord(
        lines={(FILE, 4): _seen(graph=1), (FILE, 6): _seen(graph=1)},
        bodies={(FILE, 5): (FILE, 4)},
        handlers={(FILE, 5): (FILE, 6)},
    )
    verdict = judge(FILE, 5, "TFG206", record)
    assert verdict.status == "unverified" and "caught an error raised while tracing" in (
        verdict.evidence
    )
    # A try body whose graph ops check nothing at run time leaves the handler nothing to miss.
    bypassed = SessionRecord(
        lines={(FILE, 4): _seen(graph=1)},
        bodies={(FILE, 5): (FILE, 4)},
        handlers={(FILE, 5): (FILE, 6)},
        try_ops={(FILE, 5): {"Cast": 4}},
    )
    assert judge(FILE, 5, "TFG206", bypassed).status == "unverified"
    bypassed.try_ops[(FILE, 5)] = {"Cast": 4, "Assert": 4}
    assert judge(FILE, 5, "TFG206", bypassed).status == "confirmed"


def test_a_graph_that_computes_is_no_function_without_work() -> None:
    site = CallSite("frames", calls=2, traced=1, work=2, work_ops=["AddV2", "FloorDiv"])
    verdict = judge(FILE, 3, "TFG404", SessionRecord(defs={(FILE, 3): site}))
    assert (verdict.status, verdict.evidence) == (
        "not-reproduced",
        "frames()'s graph computes with TensorFlow ops (AddV2, FloorDiv)",
    )


def test_the_block_a_finding_is_about() -> None:
    source = dedent(
        """
        for i in range(3):
            x = i
        try:
            y = 1
        except ValueError:
            y = 2
        """
    )
    assert body_line(source, 1) == 2
    assert body_line(source, 5) == 4
    assert body_line(source, 5, handler=True) == 6
    assert body_line(source, 3) is None
