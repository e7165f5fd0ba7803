"""Run a user's module in an isolated child process (SPEC §4).

``run_isolated`` imports one file of the user's project in a child Python process and runs a
probe script (the *payload*) after the import. Whatever the module does (``sys.exit``,
``os._exit``, a crash, a hang, an import error, megabytes of output, deleting files in its
working directory) comes back as a ``ChildResult`` with ``ok=False`` and a one-line reason; the
parent never raises.

Isolation, and the choices behind it:

- The child is ``sys.executable -B -u -c BOOTSTRAP``. Not ``-I``: isolated mode drops
  ``PYTHONPATH`` and the user site-packages, which is where a user's own TensorFlow build may
  live. Instead the bootstrap replaces ``sys.path[0]`` (the child's cwd for ``-c``) with the
  project root. ``-B`` keeps the child from writing ``__pycache__`` into the user's tree, ``-u``
  keeps output written before a hang or a kill.
- The child's cwd is a fresh scratch directory, deleted afterwards, so relative-path file
  operations in user code never touch the caller's cwd. Its stdin is ``/dev/null``.
- The module is imported under its dotted name computed from the project root (never as
  ``__main__``, so ``if __name__ == "__main__":`` blocks do not run), with ``sys.argv`` set to
  just the module path so module-level ``argparse`` sees no options.
- Results travel on a dedicated pipe as JSON lines (phase markers, then one final message),
  never on stdout, which user code may flood. stdout and stderr are read incrementally and only
  the first ``output_limit`` bytes of each are kept.
- The child runs in its own session; on timeout the whole process group is killed with
  SIGKILL. A memory limit is applied with ``RLIMIT_AS`` in the child before the import (POSIX
  only; note that address space, not resident memory, is limited, so give TensorFlow, which
  reserves much address space, a generous figure).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ChildResult", "child_environment", "module_name_for", "run_isolated"]

# At most this many bytes of result JSON are kept; a bigger report is a failure.
RESULT_LIMIT = 16 * 1024 * 1024
_CHUNK = 65536

# Runs in the child. argv: [-c, result fd, config file]. Keeps its own references to what it
# needs before the user's code runs, since that code may patch json, os or sys.
_BOOTSTRAP = r"""
import importlib, importlib.util, json, os, sys, traceback
_fd = int(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as _f:
    _cfg = json.load(_f)
os.set_inheritable(_fd, False)
_dumps, _write, _exit, _samefile = json.dumps, os.write, os._exit, os.path.samefile
_out, _err = sys.__stdout__, sys.__stderr__

def _send(msg):
    buf = (_dumps(msg) + "\n").encode()
    while buf:
        buf = buf[_write(_fd, buf):]

def _finish(msg):
    for stream in (_out, _err):
        try:
            stream.flush()
        except BaseException:
            pass
    try:
        _send(msg)
    finally:
        _exit(0)

def _fail(phase, reason, tb=""):
    _finish({"event": "done", "status": "error", "phase": phase, "reason": reason, "tb": tb})

def _describe(exc):
    if isinstance(exc, SystemExit):
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        return "exited with status %d" % status
    text = str(exc).strip().splitlines()
    line = type(exc).__name__ + (": " + text[0] if text else "")
    return line[:300]

_phase = "setup"
try:
    if _cfg["memory_mb"] is not None:
        try:
            import resource
        except ImportError:
            resource = None
        if resource is not None:
            limit = _cfg["memory_mb"] * 1024 * 1024
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    sys.path[0:1] = _cfg["sys_path"]
    sys.argv = [_cfg["module_path"]]
    _phase = "import"
    _send({"event": "phase", "phase": _phase})
    _name = _cfg["module_name"]
    if _cfg["by_name"]:
        module = importlib.import_module(_name)
        _file = getattr(module, "__file__", None)
        if not _file or not _samefile(_file, _cfg["module_path"]):
            _fail(_phase, "module name %r resolves to %s, not to %s (name clash)"
                  % (_name, _file, _cfg["module_path"]))
    else:
        _spec = importlib.util.spec_from_file_location(_name, _cfg["module_path"])
        module = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = module
        _spec.loader.exec_module(module)
    _phase = "payload"
    _send({"event": "phase", "phase": _phase})
    _reported = []
    _ns = {"__name__": "__tflint_graph_probe__", "module": module,
           "report": _reported.append}
    exec(compile(_cfg["payload"], "<tflint-graph probe>", "exec"), _ns)
    _data = _reported[-1] if _reported else None
    try:
        _dumps(_data)
    except BaseException as exc:
        _fail(_phase, "probe result is not JSON-serialisable: " + _describe(exc))
    _finish({"event": "done", "status": "ok", "data": _data})
except BaseException as exc:
    try:
        _tb = traceback.format_exc()[-4000:]
    except BaseException:
        _tb = ""
    _fail(_phase, _describe(exc), _tb)
"""


@dataclass
class ChildResult:
    """What one isolated run produced.

    ``reason`` is a one-line explanation when ``ok`` is false; when ``ok`` is true it is empty,
    or a note such as "output truncated". ``phase`` is where the child was when it stopped
    ("startup", "setup", "import", "payload" or "done").
    """

    ok: bool
    reason: str
    data: Any = None
    stdout: str = ""
    stderr: str = ""
    duration: float = 0.0
    phase: str = "startup"
    returncode: int | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    traceback: str = ""


def module_name_for(module_path: Path, project_root: Path) -> tuple[str, bool]:
    """The dotted name of ``module_path`` relative to ``project_root``.

    Returns ``(name, by_name)``: ``by_name`` is true when every part is an identifier, so the
    module can be imported by that name (relative imports work). Otherwise the name is a
    sanitised stem and the file is loaded directly from its path.
    """
    path = module_path.resolve()
    try:
        rel = path.relative_to(project_root.resolve())
    except ValueError:
        rel = None
    if rel is not None:
        parts = list(rel.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(p.isidentifier() for p in parts):
            return ".".join(parts), True
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in path.stem) or "module"
    if stem[0].isdigit():
        stem = "_" + stem
    return stem, False


class _StreamCapture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.total += len(chunk)

    @property
    def truncated(self) -> bool:
        return self.total > len(self.kept)

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # The child leads its own session, so its pid is the group id; kill stragglers too.
    with contextlib.suppress(OSError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - non-POSIX
            proc.kill()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the parent's (a user's CUDA and library paths must reach their
    TensorFlow build), with TensorFlow's C++ logging quietened and no bytecode written into the
    user's tree, then ``extra`` on top."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    env.update(extra or {})
    return env


def run_isolated(
    module_path: Path,
    project_root: Path,
    payload: str,
    *,
    timeout: float,
    memory_mb: int | None,
    output_limit: int,
    env: Mapping[str, str] | None = None,
) -> ChildResult:
    """Import ``module_path`` in a child process and run ``payload`` there.

    The payload is Python source run after the import with ``module`` (the imported module)
    and ``report(obj)`` (send ``obj``, JSON-serialisable, back as ``ChildResult.data``; the
    last call wins) in its namespace. Never raises for anything the child does.
    """
    start = time.monotonic()
    module_path = Path(module_path).resolve()
    project_root = Path(project_root).resolve()
    name, by_name = module_name_for(module_path, project_root)
    sys_path = [str(project_root)]
    if not by_name and str(module_path.parent) not in sys_path:
        sys_path.append(str(module_path.parent))
    scratch = Path(tempfile.mkdtemp(prefix="tflint-graph-"))
    try:
        workdir = scratch / "cwd"
        workdir.mkdir()
        config = scratch / "config.json"
        config.write_text(
            json.dumps(
                {
                    "module_path": str(module_path),
                    "module_name": name,
                    "by_name": by_name,
                    "sys_path": sys_path,
                    "payload": payload,
                    "memory_mb": memory_mb,
                }
            ),
            encoding="utf-8",
        )
        return _run_child(
            config, workdir, timeout, output_limit, memory_mb, start, child_environment(env)
        )
    except Exception as exc:  # the parent must never go down with the child
        return ChildResult(
            ok=False,
            reason=f"could not run the child: {type(exc).__name__}: {exc}",
            duration=time.monotonic() - start,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_child(
    config: Path,
    workdir: Path,
    timeout: float,
    output_limit: int,
    memory_mb: int | None,
    start: float,
    env: dict[str, str],
) -> ChildResult:
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-B", "-u", "-c", _BOOTSTRAP, str(write_fd), str(config)],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)

    out, err = _StreamCapture(output_limit), _StreamCapture(output_limit)
    result = bytearray()
    result_total = 0
    timed_out = False
    deadline = start + timeout
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    try:
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ, out)
        sel.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
        sel.register(read_fd, selectors.EVENT_READ, None)
        exited_at: float | None = None
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                timed_out = proc.poll() is None
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            # Once the child has exited, drain briefly: a grandchild may hold the pipes open.
            if exited_at is not None and now - exited_at > 0.5:
                break
            for key, _ in sel.select(timeout=min(0.1, deadline - now)):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data is None:
                    result_total += len(chunk)
                    if len(result) < RESULT_LIMIT:
                        result += chunk
                else:
                    key.data.add(chunk)
        if not timed_out:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        _kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        sel.close()
        os.close(read_fd)
        proc.stdout.close()
        proc.stderr.close()

    phase, done = "startup", None
    for line in bytes(result).splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("event") == "phase":
            phase = str(msg.get("phase"))
        elif isinstance(msg, dict) and msg.get("event") == "done":
            done = msg

    rc = proc.returncode
    res = ChildResult(
        ok=False,
        reason="",
        stdout=out.text(),
        stderr=err.text(),
        duration=time.monotonic() - start,
        phase=phase,
        returncode=None if timed_out else rc,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
    )
    if timed_out:
        res.reason = f"timed out after {timeout:.1f} s during {phase}"
    elif result_total > RESULT_LIMIT:
        res.reason = f"probe result too large ({result_total} bytes, limit {RESULT_LIMIT})"
    elif done is not None:
        res.phase = str(done.get("phase", phase)) if done.get("status") != "ok" else "done"
        if done.get("status") == "ok" and rc == 0:
            res.ok = True
            res.data = done.get("data")
        else:
            res.reason = str(done.get("reason") or f"exited with status {rc}")
            res.traceback = str(done.get("tb") or "")
            if done.get("status") != "ok":
                res.reason += f" during {res.phase}"
            if memory_mb is not None and res.reason.startswith("MemoryError"):
                res.reason += f" (memory limit {memory_mb} MB)"
    elif rc is not None and rc < 0:
        res.reason = f"killed by signal {_signal_name(-rc)} during {phase}"
    else:
        res.reason = f"exited with status {rc} during {phase}"
    if res.ok and (out.truncated or err.truncated):
        res.reason = "output truncated: " + ", ".join(
            f"{label} {cap.total} bytes, kept {len(cap.kept)}"
            for label, cap in (("stdout", out), ("stderr", err))
            if cap.truncated
        )
    return res
