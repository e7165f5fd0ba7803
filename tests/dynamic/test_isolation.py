"""Isolation of dynamic mode: hostile plain-Python modules.

None of these needs TensorFlow: the runner only imports a file in a child process and runs a
probe payload there.
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tflint_graph.dynamic.isolation import ChildResult, module_name_for, run_isolated

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
