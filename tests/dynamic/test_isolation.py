"""Isolation of dynamic mode: hostile plain-Python modules.

All but one of these run without TensorFlow: the runner only imports a file in a child process
and runs a probe payload there.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import site
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tflint_graph.dynamic.isolation import (
    ChildResult,
    module_name_for,
    run_isolated,
    stop_children,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

REPORT_NAME = "report({'name': module.__name__})"


def _write(root: Path, rel: str, source: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _run(
    root: Path,
    rel: str,
    source: str,
    payload: str = REPORT_NAME,
    *,
    timeout: float = 10.0,
    memory_mb: int | None = None,
    output_limit: int = 4096,
) -> ChildResult:
    path = _write(root, rel, source)
    return run_isolated(
        path, root, payload, timeout=timeout, memory_mb=memory_mb, output_limit=output_limit
    )


def test_normal_module_payload_reports_value(tmp_path: Path) -> None:
    res = _run(
        tmp_path,
        "mod.py",
        """
        print("hello from import")
        def double(x):
            return 2 * x
        """,
        "print('probe ran')\nreport({'value': module.double(21), 'name': module.__name__})",
    )
    assert res.ok, res.reason
    assert res.reason == ""
    assert res.data == {"value": 42, "name": "mod"}
    assert "hello from import" in res.stdout
    assert "probe ran" in res.stdout
    assert res.returncode == 0
    assert res.phase == "done"
    assert res.duration > 0


def test_package_module_with_relative_import(tmp_path: Path) -> None:
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/sub/__init__.py", "")
    _write(tmp_path, "pkg/sub/helpers.py", "VALUE = 7\n")
    res = _run(
        tmp_path,
        "pkg/sub/model.py",
        """
        from .helpers import VALUE
        from ..sub import helpers
        """,
        "report([module.__name__, module.VALUE, module.helpers.VALUE])",
    )
    assert res.ok, res.reason
    assert res.data == ["pkg.sub.model", 7, 7]


def test_module_names() -> None:
    root = Path("/proj")
    assert module_name_for(root / "a/b/c.py", root) == ("a.b.c", True)
    assert module_name_for(root / "a/__init__.py", root) == ("a", True)
    assert module_name_for(root / "my-scripts/train.py", root) == ("train", False)
    assert module_name_for(Path("/elsewhere/2x-net.py"), root) == ("_2x_net", False)


def test_module_in_non_package_directory_loads_from_path(tmp_path: Path) -> None:
    _write(tmp_path, "my-scripts/util.py", "X = 5\n")
    res = _run(tmp_path, "my-scripts/train.py", "from util import X\n", "report(module.X)")
    assert res.ok, res.reason
    assert res.data == 5


def test_main_block_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "trained.txt"
    res = _run(
        tmp_path,
        "train.py",
        f"""
        import argparse
        args = argparse.ArgumentParser().parse_args()  # sees no options from the runner
        def train():
            with open({str(marker)!r}, "w") as f:
                f.write("ran")
            while True:
                pass
        if __name__ == "__main__":
            train()
        """,
    )
    assert res.ok, res.reason
    assert res.data == {"name": "train"}
    assert not marker.exists()


def test_sys_exit_at_import(tmp_path: Path) -> None:
    res = _run(tmp_path, "quitter.py", "import sys\nsys.exit(3)\n")
    assert not res.ok
    assert res.reason == "exited with status 3 during import"
    assert res.data is None


def test_sys_exit_in_payload(tmp_path: Path) -> None:
    res = _run(tmp_path, "fine.py", "X = 1\n", "raise SystemExit('bye')")
    assert not res.ok
    assert res.reason == "exited with status 1 during payload"


def test_os_exit_at_import(tmp_path: Path) -> None:
    res = _run(tmp_path, "hard_exit.py", "import os\nos._exit(4)\n")
    assert not res.ok
    assert res.reason == "exited with status 4 during import"
    assert res.returncode == 4


def test_crash_by_signal(tmp_path: Path) -> None:
    res = _run(tmp_path, "crash.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    assert not res.ok
    assert res.reason == "killed by signal SIGSEGV during import"


def test_import_error(tmp_path: Path) -> None:
    res = _run(tmp_path, "broken.py", "import foo_does_not_exist_anywhere\n")
    assert not res.ok
    assert "No module named 'foo_does_not_exist_anywhere'" in res.reason
    assert res.reason.endswith("during import")
    assert "\n" not in res.reason
    assert "broken.py" in res.traceback


def test_payload_exception(tmp_path: Path) -> None:
    res = _run(tmp_path, "fine.py", "X = 1\n", "raise ValueError('bad probe\\nsecond line')")
    assert not res.ok
    assert res.reason == "ValueError: bad probe during payload"


def test_unserialisable_report(tmp_path: Path) -> None:
    res = _run(tmp_path, "fine.py", "X = 1\n", "report(object())")
    assert not res.ok
    assert res.reason.startswith("probe result is not JSON-serialisable")


def test_infinite_loop_times_out(tmp_path: Path) -> None:
    start = time.monotonic()
    res = _run(
        tmp_path,
        "spin.py",
        """
        import subprocess, sys
        # A grandchild in the same process group must die with it.
        child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        print("spinning", child.pid)
        while True:
            pass
        """,
        timeout=2.0,
    )
    elapsed = time.monotonic() - start
    assert not res.ok
    assert res.reason == "timed out after 2.0 s during import"
    assert "spinning" in res.stdout
    assert elapsed < 2.0 + 3.0
    grandchild = int(res.stdout.split()[1])
    time.sleep(0.2)
    stat = Path(f"/proc/{grandchild}/stat")
    if stat.exists():  # gone, or a zombie waiting for its new parent to reap it
        with contextlib.suppress(OSError):
            assert stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_huge_output_is_truncated(tmp_path: Path) -> None:
    res = _run(
        tmp_path,
        "noisy.py",
        """
        import sys
        print("x" * 50_000_000)
        sys.stderr.write("e" * 3_000_000)
        """,
        output_limit=1000,
    )
    assert res.ok, res.reason
    assert res.data == {"name": "noisy"}
    assert res.stdout == "x" * 1000
    assert res.stderr == "e" * 1000
    assert res.stdout_truncated and res.stderr_truncated
    assert res.reason.startswith("output truncated")


def test_huge_output_then_failure(tmp_path: Path) -> None:
    res = _run(tmp_path, "noisy_fail.py", "print('y' * 20_000_000)\nraise RuntimeError('boom')\n")
    assert not res.ok
    assert res.reason == "RuntimeError: boom during import"
    assert res.stdout_truncated
    assert len(res.stdout) == 4096


def test_module_deleting_its_cwd_cannot_touch_callers_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = tmp_path / "caller"
    caller.mkdir()
    keep = caller / "precious.txt"
    keep.write_text("keep me", encoding="utf-8")
    monkeypatch.chdir(caller)
    res = _run(
        tmp_path / "proj",
        "wiper.py",
        """
        import os, shutil
        for name in os.listdir("."):
            if os.path.isdir(name):
                shutil.rmtree(name)
            else:
                os.remove(name)
        with open("scratch.txt", "w") as f:
            f.write("junk")
        CWD = os.getcwd()
        """,
        "report(module.CWD)",
    )
    assert res.ok, res.reason
    assert keep.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in caller.iterdir()) == ["precious.txt"]
    assert not Path(res.data).exists()  # the scratch directory is gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS semantics")
def test_memory_limit(tmp_path: Path) -> None:
    res = _run(tmp_path, "hog.py", "blob = bytearray(2 * 1024**3)\n", memory_mb=200)
    assert not res.ok
    assert res.reason == "MemoryError during import (memory limit 200 MB)"


def test_name_clash_with_already_imported_module(tmp_path: Path) -> None:
    # The bootstrap has imported json itself, so the user's json.py cannot be the one loaded.
    res = _run(tmp_path, "json.py", "X = 1\n")
    assert not res.ok
    assert "name clash" in res.reason


def test_stdin_is_empty(tmp_path: Path) -> None:
    res = _run(
        tmp_path, "asks.py", "import sys\nANSWER = sys.stdin.read()\n", "report(module.ANSWER)"
    )
    assert res.ok, res.reason
    assert res.data == ""


# -- containment of the parent (SPEC §4) ----------------------------------------------------

REPO_ROOT = Path(__file__).resolve().parents[2]

# A stand-in for tflint-graph: runs each (file, source) pair of argv[1] through run_isolated in
# turn and prints the results as JSON. If a child ever reached it, it would die by the signal,
# and the test would see that instead of its output (the test process stays out of reach).
_DRIVER = """
import json, signal, sys
from pathlib import Path
from tflint_graph.dynamic.isolation import run_isolated
signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
root, modules = Path(sys.argv[1]), json.loads(sys.argv[2])
out = []
for name, source in modules:
    (root / name).write_text(source, encoding="utf-8")
    res = run_isolated(root / name, root, "report(module.__name__)", timeout=20.0,
                       memory_mb=None, output_limit=4096)
    out.append({"ok": res.ok, "reason": res.reason, "data": res.data, "rc": res.returncode})
print(json.dumps(out))
"""


def _driver(root: Path, modules: list[tuple[str, str]]) -> subprocess.Popen[str]:
    root.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(root), json.dumps(modules)],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a signal to the driver's group must not reach pytest's
    )


def _drive(root: Path, *modules: tuple[str, str]) -> list[dict]:
    proc = _driver(root, list(modules))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"the runner's parent died ({proc.returncode}): {err[-2000:]}"
    return json.loads(out)


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` has ended (a zombie waiting for init to reap it counts as ended)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat")
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
            os.kill(pid, 0)
        except (FileNotFoundError, ProcessLookupError):
            return True
        except OSError:
            pass  # no /proc (macOS): os.kill decides
        time.sleep(0.1)
    return False


# The module writes its pid next to itself, signals its parent, then would go on running.
_SIGNALS_PARENT = """
import os, pathlib, signal, subprocess, time
pathlib.Path(__file__).with_suffix(".pid").write_text(str(os.getpid()))
{how}
time.sleep(30)
"""


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        (
            "os.kill(os.getppid(), signal.SIGTERM)",
            "PermissionError: tflint-graph dynamic mode does not let the module send SIGTERM to "
            "process {ppid} (its runner), outside the module's own session during import",
        ),
        (
            "os.killpg(os.getpgid(os.getppid()), signal.SIGTERM)",
            "PermissionError: tflint-graph dynamic mode does not let the module send SIGTERM to "
            "process group {ppid} (its runner's), outside the module's own session during import",
        ),
        (
            "os.kill(-os.getpgid(os.getppid()), signal.SIGUSR1)",
            "PermissionError: tflint-graph dynamic mode does not let the module send SIGUSR1 to "
            "process group {ppid} (its runner's), outside the module's own session during import",
        ),
        (
            'subprocess.run(["kill", str(os.getppid())])',
            "the module signalled its runner (SIGTERM) during import",
        ),
        (
            'subprocess.run(["kill", "-HUP", "--", "-%d" % os.getpgid(os.getppid())])',
            "the module signalled its runner (SIGHUP) during import",
        ),
        (
            'subprocess.run(["kill", "-INT", str(os.getppid())])',
            "the module signalled its runner (SIGINT) during import",
        ),
        (
            # Past the guard, straight to the C library.
            "import ctypes; ctypes.CDLL(None).kill(os.getppid(), signal.SIGUSR1)",
            "the module signalled its runner (SIGUSR1) during import",
        ),
        (
            'subprocess.run(["kill", "-KILL", str(os.getppid())])',
            "the module killed its runner (SIGKILL) during import",
        ),
        (
            # Reaches only the module's own threads: the child dies, nothing else.
            "import threading; signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)",
            "killed by signal SIGTERM during import",
        ),
    ],
)
def test_a_module_signalling_its_parent_cannot_reach_it(
    tmp_path: Path, how: str, reason: str
) -> None:
    if "ctypes" in how and not sys.platform.startswith("linux"):
        pytest.skip("ctypes.CDLL(None) finds kill in the C library on Linux")
    project = tmp_path / "proj"
    (res,) = _drive(project, ("signals.py", _SIGNALS_PARENT.format(how=how)))
    assert not res["ok"]
    if "{ppid}" in reason:  # the guard names the runner's pid; it is not the driver's
        ppid = re.search(r"process (?:group )?(\d+)", res["reason"])
        assert ppid is not None, res["reason"]
        reason = reason.format(ppid=ppid.group(1))
    assert res["reason"] == reason
    assert res["data"] is None
    assert _gone(int((project / "signals.pid").read_text()))


def test_the_next_module_still_runs_after_one_signalled_its_parent(tmp_path: Path) -> None:
    first = _SIGNALS_PARENT.format(how='subprocess.run(["kill", "-TERM", str(os.getppid())])')
    results = _drive(tmp_path, ("first.py", first), ("second.py", "X = 1\n"))
    assert [r["ok"] for r in results] == [False, True]
    assert results[0]["reason"] == "the module signalled its runner (SIGTERM) during import"
    assert results[1]["data"] == "second"
    assert results[1]["reason"] == ""


def test_signals_within_the_module_own_session_still_work(tmp_path: Path) -> None:
    res = _run(
        tmp_path,
        "own.py",
        """
        import os, signal, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        os.kill(child.pid, signal.SIGTERM)
        CODE = child.wait()
        os.kill(os.getpid(), 0)
        os.killpg(0, 0)
        os.kill(os.getppid(), 0)  # signal 0 only asks whether it exists
        try:
            os.kill(2**22 + 12345, signal.SIGTERM)
        except OSError as exc:
            MISSING = type(exc).__name__
        """,
        "report([module.CODE, module.MISSING])",
    )
    assert res.ok, res.reason
    assert res.data == [-15, "ProcessLookupError"]


def _wait_for(path: Path, within: float = 20.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            return int(path.read_text())
        time.sleep(0.05)
    pytest.fail(f"{path} never appeared")


_SPINS = """
import os, pathlib
pid_file = pathlib.Path(__file__).with_suffix(".pid")
pid_file.with_suffix(".tmp").write_text(str(os.getpid()))
pid_file.with_suffix(".tmp").rename(pid_file)
while True:
    pass
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_ctrl_c_or_a_killed_parent_takes_the_child_along(tmp_path: Path, sig: int) -> None:
    # Ctrl-C (SIGINT) still stops the parent; after any death of the parent, the runner sees
    # its lifeline close and kills the child.
    proc = _driver(tmp_path, [("spins.py", _SPINS)])
    try:
        pid = _wait_for(tmp_path / "spins.pid")
        proc.send_signal(sig)
        proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode != 0
    assert _gone(pid)


def test_stop_children_stops_running_children(tmp_path: Path) -> None:
    path = _write(tmp_path, "spins.py", _SPINS)
    results: list[ChildResult] = []
    worker = threading.Thread(
        target=lambda: results.append(
            run_isolated(path, tmp_path, REPORT_NAME, timeout=60, memory_mb=None, output_limit=99)
        )
    )
    worker.start()
    pid = _wait_for(tmp_path / "spins.pid")
    start = time.monotonic()
    stop_children()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.monotonic() - start < 5
    (res,) = results
    assert not res.ok
    assert _gone(pid)


# -- containment of files ----------------------------------------------------------------------


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A home and a system temp folder of the test's own (nothing else writes there), with a
    user's Keras setting in the home."""
    home, system_tmp = tmp_path / "home", tmp_path / "system-tmp"
    (home / ".keras").mkdir(parents=True)
    (home / ".keras" / "keras.json").write_text('{"floatx": "float16"}', encoding="utf-8")
    system_tmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("TMPDIR", "TEMP", "TMP", "KERAS_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))  # the parent's cached one
    return home, system_tmp


_WRITES_OUTSIDE = """
import os, pathlib, tempfile
tmp = tempfile.gettempdir()
pathlib.Path(tmp, "eval_metrics_0.jsonl").write_text("{}")
tempfile.NamedTemporaryFile(delete=False).write(b"x")
tempfile.mkdtemp()
pathlib.Path(os.path.expanduser("~/x")).write_text("x")
(pathlib.Path.home() / ".config" / "tool").mkdir(parents=True)
ENV = {k: os.environ.get(k) for k in ("HOME", "TMPDIR", "TEMP", "TMP", "KERAS_HOME",
       "XDG_CACHE_HOME", "MPLCONFIGDIR", "TFHUB_CACHE_DIR", "PYTHONUSERBASE")}
ENV["gettempdir"] = tmp
keras_home = os.environ.get("KERAS_HOME") or os.path.expanduser("~/.keras")
KERAS_JSON = pathlib.Path(keras_home, "keras.json").read_text()
"""


def test_home_and_temp_folder_are_the_child_own(outside: tuple[Path, Path]) -> None:
    home, system_tmp = outside
    project = home.parent / "proj"
    before = (_tree(home), _tree(system_tmp))
    res = _run(project, "writer.py", _WRITES_OUTSIDE, "report([module.ENV, module.KERAS_JSON])")
    assert res.ok, res.reason
    env, keras_json = res.data
    assert (_tree(home), _tree(system_tmp)) == before  # nothing new outside, scratch removed
    scratch = Path(env["KERAS_HOME"]).parents[1]
    assert scratch.parent == system_tmp  # made by the parent, in its temp folder
    assert not scratch.exists()
    assert env["TMPDIR"] == env["TEMP"] == env["TMP"] == env["gettempdir"]
    for key in ("HOME", "TMPDIR", "KERAS_HOME", "XDG_CACHE_HOME", "MPLCONFIGDIR"):
        assert Path(env[key]).is_relative_to(scratch), key
    assert keras_json == '{"floatx": "float16"}'  # the user's Keras settings still hold
    assert env["PYTHONUSERBASE"] == os.environ.get("PYTHONUSERBASE", site.getuserbase())


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow and Keras"
)
def test_keras_and_autograph_write_inside_the_scratch_folder(outside: tuple[Path, Path]) -> None:
    home, system_tmp = outside
    (home / ".keras" / "keras.json").unlink()  # Keras writes a default one on import
    project = home.parent / "proj"
    before = (_tree(home), _tree(system_tmp))
    res = _run(
        project,
        "traced.py",
        """
        import os, pathlib, tempfile
        import keras
        import tensorflow as tf

        @tf.function(autograph=True)
        def step(x):
            if tf.reduce_sum(x) > 0:  # AutoGraph converts this, writing a temp module
                x = x * 2.0
            return x

        step(tf.ones([2]))
        keras_home = os.environ.get("KERAS_HOME") or os.path.expanduser("~/.keras")
        KERAS_JSON = os.path.isfile(os.path.join(keras_home, "keras.json"))
        TEMP_FILES = sorted(p.name for p in pathlib.Path(tempfile.gettempdir()).rglob("*"))
        """,
        "report([module.KERAS_JSON, module.TEMP_FILES])",
        timeout=120,
    )
    assert res.ok, res.reason + res.stderr[-2000:]
    keras_json, temp_files = res.data
    assert keras_json
    assert any(name.startswith("__autograph_generated_file") for name in temp_files), temp_files
    assert (_tree(home), _tree(system_tmp)) == before
