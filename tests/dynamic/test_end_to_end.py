"""``tflint-graph --dynamic`` end to end, with real TensorFlow (SPEC §4).

Each module runs in its own child process that imports TensorFlow (several seconds), so the
runs are shared by module-scoped fixtures: the ``fixtures/dynamic`` project (every finding there
is a real bug and must come back confirmed), and a project of hostile modules that must never
take the run down.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import REPO, REPO_FIXTURES
from tflint_graph.cli import main

FIXTURE = REPO_FIXTURES / "dynamic"
MARKER = re.compile(r"#\s*(TFG\d{3}(?:\s*,\s*TFG\d{3})*)\s*$")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")


def _cli(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tflint_graph", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _markers(root: Path) -> set[tuple[str, int, str]]:
    found = set()
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = MARKER.search(line)
            if match:
                rel = path.relative_to(root).as_posix()
                found |= {(rel, number, c.strip()) for c in match.group(1).split(",")}
    return found


@pytest.fixture(scope="module")
def fixture_run() -> dict:
    pytest.importorskip("tensorflow")
    proc = _cli(".", "--dynamic", "--no-cache", "--output-format", "json", cwd=FIXTURE)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    doc["_stderr"] = proc.stderr
    return doc


def test_every_real_bug_of_the_fixture_is_confirmed(fixture_run: dict) -> None:
    got = {
        (Path(f["path"]).as_posix(), f["line"], f["code"]): f["dynamic"]
        for f in fixture_run["findings"]
    }
    expected = _markers(FIXTURE)
    assert set(got) == expected
    not_confirmed = {k: v for k, v in got.items() if v["status"] != "confirmed"}
    assert not not_confirmed, json.dumps(
        {f"{k[0]}:{k[1]} {k[2]}": v for k, v in not_confirmed.items()}, indent=1
    )


def test_evidence_says_what_happened(fixture_run: dict) -> None:
    by_code: dict[str, list[str]] = {}
    for f in fixture_run["findings"]:
        by_code.setdefault(f["code"], []).append(f["dynamic"]["evidence"])
    assert any(
        "while tracing with symbolic inputs, 0 times over 3 calls with values that reused the "
        "trace: trace-time only" in e
        for e in by_code["TFG101"]
    )
    assert any("OperatorNotAllowedInGraphError at line 9" in e for e in by_code["TFG201"])
    assert any("InaccessibleTensorError" in e for e in by_code["TFG207"])
    assert any("eager result" in e and "[0.0, 0.0, 0.0]" in e for e in by_code["TFG209"])
    assert any(
        "staged: dynamic mode called it with new batch sizes" in e and "went 1 ->" in e
        for e in by_code["TFG301"]
    )
    assert any("traced" in e and "eager" in e and "us" in e for e in by_code["TFG401"])
    assert any(
        "staged: dynamic mode set" in e and "still returned the old result" in e
        for e in by_code["TFG109"]
    )
    assert any("len 0 -> len 1" in e for e in by_code["TFG102"])
    # A constructor that takes a network: built the way the module's own script builds it,
    # and a signature naming module constants: read from the imported tf.function.
    assert any(
        "inputs float32[2,4] (traced as float32[None,4]) from input_signature" in e
        and "constructed as Agent(build_policy(OBS_DIM, NUM_ACTIONS), epsilon=0.1)" in e
        for e in by_code["TFG103"]
    )
    # A custom train_step runs through the train function fit runs, one batch per call.
    assert any(
        "called through Keras's own train function (make_train_function)" in e
        for e in by_code["TFG106"]
    )
    # Class ids in range for a parameter named like labels (a sparse cross-entropy).
    assert any("guessed inputs float32[2,4], int32[2]" in e for e in by_code["TFG102"])
    # Where the inputs came from is part of the evidence.
    evidence = [e for es in by_code.values() for e in es]
    assert any("from input_signature" in e for e in evidence)
    assert any("from config" in e for e in evidence)
    assert any("from annotations" in e for e in evidence)
    assert any("guessed inputs" in e for e in evidence)


def test_summary_and_json_fields(fixture_run: dict) -> None:
    summary = fixture_run["dynamic"]
    total = len(fixture_run["findings"])
    assert summary["confirmed"] == total
    assert summary["not-reproduced"] == summary["unverified"] == 0
    assert "CPU" in summary["device"] or "GPU" in summary["device"]
    assert re.search(
        rf"Dynamic mode: {total} confirmed, 0 not reproduced, 0 unverified on \S+",
        fixture_run["_stderr"],
    )
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "tflint_graph" / "schemas" / "findings-v1.json").read_text())
    doc = {k: v for k, v in fixture_run.items() if not k.startswith("_")}
    jsonschema.validate(doc, schema)


def test_text_and_sarif_carry_the_status(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "step.py").write_text(
        textwrap.dedent(
            """\
            import tensorflow as tf


            @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
            def step(x):
                print("step")
                return x + 1.0
            """
        ),
        encoding="utf-8",
    )
    text = _cli("step.py", "--dynamic", "--no-cache", cwd=project)
    assert text.returncode == 1, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith("step.py:6:5: TFG101 ")
    assert first.endswith(
        "[dynamic: confirmed: print ran 1 time while tracing with symbolic inputs, 0 times over "
        "3 calls with values that reused the trace: trace-time only; inputs float32[2] (traced "
        "as float32[None]) from input_signature]"
    )
    sarif = _cli("step.py", "--dynamic", "--no-cache", "--output-format", "sarif", cwd=project)
    run = json.loads(sarif.stdout)["runs"][0]
    dynamic = run["results"][0]["properties"]["dynamic"]
    assert dynamic["status"] == "confirmed"
    assert dynamic["inputs"] == "float32[2]" and "CPU" in dynamic["device"]
    assert run["properties"]["dynamic"]["confirmed"] == 1


# -- hostile modules ------------------------------------------------------------------------

# Each module has one static finding (a print in a tf.function) so dynamic mode imports it;
# the hostile part runs at import, before TensorFlow is imported, to keep the children fast.
_TRACED = """
import tensorflow as tf


@tf.function
def step(x):
    print("step")
    return x
"""

HOSTILE = {
    "exits.py": "import sys\nsys.exit(3)\n",
    "hard_exit.py": "import os\nos._exit(0)\n",
    "broken_import.py": "import not_a_module_anyone_has_xyz\n",
    "crashes.py": "import ctypes\nctypes.string_at(0)\n",
    "spawns.py": textwrap.dedent(
        """\
        import pathlib, subprocess, sys
        child = subprocess.Popen(["sleep", "300"])
        pathlib.Path(__file__).with_name("spawned.pid").write_text(str(child.pid))
        sys.exit(0)
        """
    ),
    # Past the in-child guard (a separate program), at what looks like its parent's group.
    "signals_parent.py": textwrap.dedent(
        """\
        import os, subprocess
        subprocess.run(["kill", "-TERM", "--", "-%d" % os.getpgid(os.getppid())])
        """
    ),
}

# Floods its output, deletes what it finds in its working directory, and keeps a training
# loop under the main guard; its own finding must still be confirmed.
UNRULY = textwrap.dedent(
    """\
    import os
    import pathlib
    import sys

    for _ in range(3000):
        sys.stdout.write("x" * 9999 + "\\n")
    for name in os.listdir("."):
        try:
            os.remove(name)
        except OSError:
            pass

    import tensorflow as tf


    @tf.function(input_signature=[tf.TensorSpec(shape=[2], dtype=tf.float32)])
    def step(x):
        print("step")
        return x * 2.0


    if __name__ == "__main__":
        pathlib.Path(__file__).with_name("trained.txt").write_text("the training loop ran")
    """
)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    pytest.importorskip("tensorflow")
    project = tmp_path_factory.mktemp("hostile")
    for name, head in HOSTILE.items():
        (project / name).write_text(head + _TRACED, encoding="utf-8")
    (project / "unruly.py").write_text(UNRULY, encoding="utf-8")
    (project / "keep_me.txt").write_text("project data", encoding="utf-8")
    start = time.monotonic()
    proc = _cli(
        ".",
        "--dynamic",
        "--no-cache",
        "--dynamic-timeout",
        "120",
        "--output-format",
        "json",
        cwd=project,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    return project, doc, f"{elapsed:.1f}s"


def _status(doc: dict, path: str) -> dict:
    (found,) = [f for f in doc["findings"] if f["path"] == path and f["code"] == "TFG101"]
    return found["dynamic"]


def test_hostile_modules_are_unverified_with_the_reason(hostile_run) -> None:
    _, doc, _ = hostile_run
    reasons = {
        "exits.py": "exited with status 3 during import",
        "hard_exit.py": "during import",
        "broken_import.py": "ModuleNotFoundError",
        "crashes.py": "killed by signal SIGSEGV",
        "spawns.py": "exited with status 0 during import",
        "signals_parent.py": "the module signalled its runner (SIGTERM) during import",
    }
    for path, reason in reasons.items():
        status = _status(doc, path)
        assert status["status"] == "unverified", (path, status)
        assert reason in status["evidence"], (path, status)


def test_unruly_module_is_contained_and_still_confirmed(hostile_run) -> None:
    project, doc, _ = hostile_run
    assert _status(doc, "unruly.py")["status"] == "confirmed"
    # The child ran in a scratch directory, and never as __main__.
    assert (project / "keep_me.txt").read_text(encoding="utf-8") == "project data"
    assert (project / "unruly.py").exists()
    assert not (project / "trained.txt").exists()


def test_background_process_does_not_outlive_the_run(hostile_run) -> None:
    project, _, _ = hostile_run
    pid = int((project / "spawned.pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A zombie reparented to init is reaped shortly; check its state.
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z":
            return
        time.sleep(0.2)
    pytest.fail(f"background process {pid} is still alive")


def test_a_hanging_module_costs_the_timeout_only(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    (tmp_path / "hangs.py").write_text("while True:\n    pass\n" + _TRACED, encoding="utf-8")
    start = time.monotonic()
    proc = _cli("hangs.py", "--dynamic", "--no-cache", "--dynamic-timeout", "3", cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    assert "[dynamic: unverified: timed out after 3.0 s during import]" in proc.stdout
    assert elapsed < 60


def test_ctrl_c_stops_the_run_and_its_children(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    spins = "import os, pathlib\n" + (
        "pathlib.Path(__file__).with_suffix('.pid').write_text(str(os.getpid()))\n"
        "while True:\n    pass\n"
    )
    for name in ("a", "b", "c"):  # with 2 jobs, c waits in the queue
        (tmp_path / f"{name}.py").write_text(spins + _TRACED, encoding="utf-8")
    # SIGINT as a terminal's Ctrl-C sends it, even if this test runs with SIGINT ignored.
    run_cli = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv = ['tflint-graph', '.', '--dynamic', '--no-cache', '--jobs', '2', "
        "'--dynamic-timeout', '120']; runpy.run_module('tflint_graph', run_name='__main__')"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", run_cli],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
        assert len(pids) == 2, proc.stderr
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - start
    finally:
        proc.kill()
    assert "Aborted!" in err
    assert elapsed < 10, elapsed
    assert not (tmp_path / "c.pid").exists()  # the queued module never started
    time.sleep(1)
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_without_tensorflow_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def no_tensorflow(name: str, *args: object, **kwargs: object):
        if name == "tensorflow":
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", no_tensorflow)
    (tmp_path / "m.py").write_text(_TRACED, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["m.py", "--dynamic", "--no-cache"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "tflint-graph: error: --dynamic needs TensorFlow, which is not installed: "
        "pip install 'tflint-graph[dynamic]'"
    ]
    assert result.stdout == ""


def test_an_unknown_device_is_reported_not_fatal(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    (tmp_path / "m.py").write_text(_TRACED, encoding="utf-8")
    proc = _cli("m.py", "--dynamic", "--no-cache", "--device", "gpu:7", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "[dynamic: unverified: device gpu:7 not found; TensorFlow sees:" in proc.stdout


def test_a_dict_filled_while_tracing_is_confirmed_with_its_contents(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    (tmp_path / "counters.py").write_text(
        textwrap.dedent(
            """
            import tensorflow as tf

            STATS = {"steps": 0}

            @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
            def step(x):
                STATS["steps"] += 1  # TFG102
                return x * 2.0
            """
        ),
        encoding="utf-8",
    )
    proc = _cli("counters.py", "--dynamic", "--no-cache", "--output-format", "json", cwd=tmp_path)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["code"] == "TFG102"
    assert finding["dynamic"]["status"] == "confirmed", finding["dynamic"]
    assert "{'steps': 0} -> {'steps': 1}" in finding["dynamic"]["evidence"]


def test_a_module_call_that_exits_falls_back_to_guesses(tmp_path: Path) -> None:
    # The script's own call needs its command line: evaluating it exits (argparse), which
    # must cost that attempt only, not the module's findings.
    pytest.importorskip("tensorflow")
    (tmp_path / "m.py").write_text(
        textwrap.dedent(
            """\
            import argparse
            import tensorflow as tf


            @tf.function
            def step(x, scale):
                print("step", x)
                return x * scale


            if __name__ == "__main__":
                parser = argparse.ArgumentParser()
                parser.add_argument("--scale", type=float, required=True)
                step(tf.zeros([2]), parser.parse_args().scale)
            """
        ),
        encoding="utf-8",
    )
    proc = _cli("m.py", "--dynamic", "--no-cache", "--output-format", "json", cwd=tmp_path)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["dynamic"]["status"] == "confirmed", finding["dynamic"]
    assert "guessed inputs" in finding["dynamic"]["evidence"]
