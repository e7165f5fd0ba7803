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
- The child runs below a *runner*, a second interpreter (standard library only, ``-I -S``)
  that tflint-graph starts; runner and child each lead their own session. So ``getppid()``, its
  process group and a terminal's signals are the runner's, never tflint-graph's. The runner
  catches every signal that can be caught: one that reaches it (``kill $PPID``, ctypes) means
  the module signalled its runner, and the child is stopped and reported so. A runner killed or
  stopped by the module shows as such too; the parent then kills the child's group itself.
- Before the user's code runs, the child's ``os.kill``, ``os.killpg`` and
  ``signal.pidfd_send_signal`` refuse (``PermissionError``) to signal anything outside the
  module's own session; signal 0 (does it exist?) stays allowed. ``signal.pthread_kill`` only
  reaches the child's own threads. A module that looks tflint-graph up by name and signals it
  with another program is not stopped: only a PID namespace would, and tflint-graph keeps its
  default handling on purpose, so that Ctrl-C and a service manager's SIGTERM still stop a run.
- When the child ends, or tflint-graph is done with it (timeout included), the runner kills the
  child's whole process group with SIGKILL (background processes too) before reaping the
  child, and reports its exit status on a status pipe. The runner's stdin is a lifeline: when
  tflint-graph closes it or ends, even by SIGKILL, the runner kills the child;
  ``stop_children`` stops every running child at once (Ctrl-C).
- The child has its own ``HOME``, ``TMPDIR`` (``TEMP``, ``TMP``, ``tempfile.tempdir``), Keras
  home, XDG folders, ``MPLCONFIGDIR`` and ``TFHUB_CACHE_DIR`` in the scratch folder, so what
  Keras (``keras.json``), AutoGraph (generated modules) and user code write there goes with
  it. The user's ``keras.json`` is copied in (backend, floatx); ``PYTHONUSERBASE`` keeps the
  user site-packages and ``CUDA_CACHE_PATH`` the GPU's compiled-kernel cache where they were.
  Literal paths such as ``/tmp/x`` are not redirected.
- A memory limit is applied with ``RLIMIT_AS`` in the child before the import (POSIX
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
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ChildResult", "child_environment", "module_name_for", "run_isolated", "stop_children"]

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

def _guard_signals():
    # The runner and tflint-graph live in other sessions: refuse to signal anything outside
    # the module's own session (signal 0, an existence check, stays allowed). Closures keep the
    # real functions out of reach of the module's globals.
    import signal
    kill, killpg, getsid = os.kill, os.killpg, os.getsid
    own, runner = getsid(0), os.getppid()  # the runner leads its own session and group

    def outside(pid):
        try:
            return getsid(pid) != own
        except OSError:  # no such process (or group leader): the real call says so
            return False

    def refuse(sig, target):
        try:
            sig = signal.Signals(sig).name
        except (ValueError, TypeError):
            sig = "signal %r" % (sig,)
        raise PermissionError("tflint-graph dynamic mode does not let the module send %s to %s, "
                              "outside the module's own session" % (sig, target))

    def process(pid):
        return "process %d%s" % (pid, " (its runner)" if pid == runner else "")

    def group(pgid):
        return "process group %d%s" % (pgid, " (its runner's)" if pgid == runner else "")

    def guarded_kill(pid, sig, /):
        if sig != 0:
            if pid == -1:
                refuse(sig, "every process")
            if pid > 0 and outside(pid):
                refuse(sig, process(pid))
            if pid < -1 and outside(-pid):
                refuse(sig, group(-pid))
        return kill(pid, sig)

    def guarded_killpg(pgid, sig, /):
        if sig != 0 and pgid > 0 and outside(pgid):
            refuse(sig, group(pgid))
        return killpg(pgid, sig)

    guarded_kill.__doc__, guarded_killpg.__doc__ = kill.__doc__, killpg.__doc__
    os.kill, os.killpg = guarded_kill, guarded_killpg
    send_pidfd = getattr(signal, "pidfd_send_signal", None)
    if send_pidfd is not None:
        def guarded_pidfd_send_signal(pidfd, sig, siginfo=None, flags=0, /):
            try:
                with open("/proc/self/fdinfo/%d" % pidfd, encoding="ascii") as f:
                    pids = [int(l.split()[1]) for l in f if l.startswith("Pid:")]
            except (OSError, ValueError, IndexError):
                pids = []
            if sig != 0 and pids and pids[0] > 0 and outside(pids[0]):
                refuse(sig, process(pids[0]))
            return send_pidfd(pidfd, sig, siginfo, flags)
        guarded_pidfd_send_signal.__doc__ = send_pidfd.__doc__
        signal.pidfd_send_signal = guarded_pidfd_send_signal
    # signal.pthread_kill reaches only this process's own threads.

_phase = "setup"
try:
    _guard_signals()
    import tempfile
    tempfile.tempdir = _cfg["tmpdir"]  # the child's own, in the scratch folder
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
    sys.path.extend(_cfg.get("fallback_path", ()))
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

# The runner between tflint-graph and the child (see the module docstring). argv: [-c, status
# fd, result fd, child argv...]. Only the standard library, no json or subprocess (start-up
# time). It reports on the status fd, one line each: "spawned PID", "signal N" (a signal
# reached it, so the module signalled its runner: the child is stopped), "error TEXT",
# and last "exit RC" (the child's status, negative for a signal).
_RUNNER = r"""
import os, select, signal, sys
_status, _result, _argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
os.set_inheritable(_status, False)

def _say(*words):
    line = (" ".join(str(w) for w in words).replace("\n", " ") + "\n").encode()
    try:
        while line:
            line = line[os.write(_status, line):]
    except OSError:
        pass

_got = []
def _note(signum, frame):
    _got.append(signum)

_wake_r, _wake_w = os.pipe()
os.set_blocking(_wake_w, False)
signal.set_wakeup_fd(_wake_w)
# Left alone: what cannot be caught, what does no harm by default, and hardware faults (a
# handler that returns would re-run the faulting instruction).
_left = {getattr(signal, n, None) for n in ("SIGKILL", "SIGSTOP", "SIGCONT", "SIGWINCH",
         "SIGURG", "SIGCHLD", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")}
for _s in signal.valid_signals():
    if _s not in _left:
        try:
            signal.signal(_s, _note)
        except (OSError, ValueError, RuntimeError):
            pass
signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes the select below

_err_r, _err_w = os.pipe()  # close-on-exec: EOF once the child's exec succeeded
_pid = os.fork()
if _pid == 0:
    try:
        os.setsid()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.set_inheritable(_result, True)
        os.execv(_argv[0], _argv)
    except BaseException as exc:
        try:
            os.write(_err_w, ("%s: %s" % (type(exc).__name__, exc)).encode()[:500])
        finally:
            os._exit(127)
os.close(_err_w)
os.close(_result)
_null = os.open(os.devnull, os.O_RDWR)
# From now on only the child holds the output pipes: they close when it and its own are done.
os.dup2(_null, 1)
os.dup2(_null, 2)
_failed = os.read(_err_r, 1000)
if _failed:
    _say("error", _failed.decode("utf-8", "replace"))
else:
    _say("spawned", _pid)

_reaped = None  # the child's wait status, where it had to be reaped to see it end

def _exited():
    global _reaped
    try:
        if hasattr(os, "waitid"):  # sees the end without reaping: the group id stays ours
            return os.waitid(os.P_PID, _pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        pid, status = os.waitpid(_pid, os.WNOHANG)
    except ChildProcessError:
        return True
    if pid:
        _reaped = status
    return bool(pid)

try:
    while not _failed:
        if _got:
            _say("signal", _got[0])
            break
        if _exited():
            break
        _ready = select.select([0, _wake_r], [], [], 1.0)[0]
        if _wake_r in _ready:
            os.read(_wake_r, 4096)
        if 0 in _ready and not os.read(0, 4096):
            break  # tflint-graph closed the lifeline: it is done with this child, or gone
finally:
    # Kill the child's group (background processes too) before reaping the child, so that
    # the group id cannot be reused in between.
    try:
        os.killpg(_pid, signal.SIGKILL)
    except OSError:
        pass
    _rc = os.waitstatus_to_exitcode(os.waitpid(_pid, 0)[1] if _reaped is None else _reaped)
    if not _failed:
        _say("exit", _rc)
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


# Files that mark the top of a checkout (where its scripts are run from).
_CHECKOUT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def fallback_path(root: Path, levels: int = 3) -> list[str]:
    """Folders above ``root`` up to the checkout's top, for the end of the child's
    ``sys.path``: a script in ``bench/`` or ``scripts/`` imports the project's package as it
    does when run from the checkout (``python -m scripts.x``, an editable install).  At the
    end, they never shadow an installed module."""
    out: list[str] = []
    folder = root
    for _ in range(levels):
        if any((folder / m).exists() for m in _CHECKOUT_MARKERS) or folder.parent == folder:
            break
        folder = folder.parent
        out.append(str(folder))
    return out


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


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# Where, below the scratch folder, the child's own home and temp folder are.
_HOME, _TMP = "home", "tmp"


def _private_folders(scratch: Path) -> dict[str, str]:
    """Environment variables that point everything the child writes "outside" into
    ``scratch``: its home, temp folder, Keras home and the caches libraries keep there."""
    home, tmp = scratch / _HOME, scratch / _TMP
    keras = home / ".keras"
    for folder in (home, tmp, keras):
        folder.mkdir(parents=True, exist_ok=True)
    # Keras reads its backend, floatx and image data format from keras.json: the user's
    # settings must hold in the child too (Keras writes a default one otherwise).
    user_keras = Path(os.environ.get("KERAS_HOME") or Path("~/.keras").expanduser())
    with contextlib.suppress(OSError):
        config = user_keras / "keras.json"
        if config.is_file() and config.stat().st_size < 1 << 20:
            shutil.copyfile(config, keras / "keras.json")
    env = {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "TEMP": str(tmp),
        "TMP": str(tmp),
        "KERAS_HOME": str(keras),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "MPLCONFIGDIR": str(home / ".config" / "matplotlib"),
        "TFHUB_CACHE_DIR": str(tmp / "tfhub_modules"),
        # A new HOME would move the user site-packages, where the user's TensorFlow may be.
        "PYTHONUSERBASE": os.environ.get("PYTHONUSERBASE") or site.getuserbase(),
    }
    # The GPU driver's compiled-kernel cache stays where it was: without it every child would
    # compile PTX again, which can take minutes on a GPU newer than the TensorFlow build.
    env["CUDA_CACHE_PATH"] = os.environ.get("CUDA_CACHE_PATH") or str(
        Path("~/.nv/ComputeCache").expanduser()
    )
    return env


def child_environment(
    extra: Mapping[str, str] | None = None, *, scratch: Path | None = None
) -> dict[str, str]:
    """The child's environment: the parent's (a user's CUDA and library paths must reach their
    TensorFlow build), with TensorFlow's C++ logging quietened and no bytecode written into the
    user's tree; with ``scratch``, its own ``HOME``, temp folder and Keras home in that folder
    (created here); then ``extra`` on top."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    if scratch is not None:
        env.update(_private_folders(scratch))
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
        child_env = child_environment(env, scratch=scratch)
        config = scratch / "config.json"
        config.write_text(
            json.dumps(
                {
                    "module_path": str(module_path),
                    "module_name": name,
                    "by_name": by_name,
                    "sys_path": sys_path,
                    "fallback_path": fallback_path(project_root),
                    "payload": payload,
                    "memory_mb": memory_mb,
                    "tmpdir": child_env.get("TMPDIR", str(scratch / _TMP)),
                }
            ),
            encoding="utf-8",
        )
        return _run_child(config, workdir, timeout, output_limit, memory_mb, start, child_env)
    except Exception as exc:  # the parent must never go down with the child
        return ChildResult(
            ok=False,
            reason=f"could not run the child: {type(exc).__name__}: {exc}",
            duration=time.monotonic() - start,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class _Runner:
    """The parent's side of one runner process: what it reported on its status pipe, and how
    to stop it and its child."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.buffer = bytearray()
        self.child_pid: int | None = None
        self.signal: int | None = None
        self.exit_rc: int | None = None
        self.error = ""
        # The runner's own exit status when the run ended, before it was told to stop.
        self.ended_rc: int | None = None

    def add(self, chunk: bytes) -> None:
        self.buffer += chunk
        *lines, rest = bytes(self.buffer).split(b"\n")
        self.buffer = bytearray(rest[:4096])
        for raw in lines:
            word, _, arg = raw.decode("utf-8", errors="replace").partition(" ")
            with contextlib.suppress(ValueError):
                if word == "spawned":
                    self.child_pid = int(arg)
                elif word == "signal" and self.signal is None:
                    self.signal = int(arg)
                elif word == "exit":
                    self.exit_rc = int(arg)
                elif word == "error":
                    self.error = arg[:300]

    def stop(self) -> None:
        """Close the lifeline (the runner then kills its child and reports), and kill the
        child's group here too unless the runner has already reaped it."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        if self.exit_rc is None and self.child_pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.child_pid, signal.SIGKILL)


# Runners now running, for stop_children (worker threads of the session run them).
_LIVE: set[_Runner] = set()
_LIVE_LOCK = threading.Lock()


def stop_children() -> None:
    """Stop every child now running (on Ctrl-C: the run stops, its children with it)."""
    with _LIVE_LOCK:
        runners = list(_LIVE)
    for runner in runners:
        runner.stop()
        with contextlib.suppress(OSError):
            runner.proc.kill()


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
    status_fd, status_write_fd = os.pipe()
    child = [sys.executable, "-B", "-u", "-c", _BOOTSTRAP, str(write_fd), str(config)]
    # -I -S: the runner needs only the standard library, and nothing from the environment.
    runner_argv = [sys.executable, "-I", "-S", "-B", "-c", _RUNNER, str(status_write_fd)]
    try:
        proc = subprocess.Popen(
            [*runner_argv, str(write_fd), *child],
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd, status_write_fd),
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        os.close(status_fd)
        raise
    finally:
        os.close(write_fd)
        os.close(status_write_fd)

    runner = _Runner(proc)
    with _LIVE_LOCK:
        _LIVE.add(runner)
    out, err = _StreamCapture(output_limit), _StreamCapture(output_limit)
    result = bytearray()
    result_total = 0
    timed_out = False
    deadline = start + timeout
    assert proc.stdout is not None and proc.stderr is not None
    child_side = {proc.stdout.fileno(), proc.stderr.fileno(), read_fd}
    sel = selectors.DefaultSelector()
    try:
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ, out)
        sel.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
        sel.register(read_fd, selectors.EVENT_READ, result)
        sel.register(status_fd, selectors.EVENT_READ, runner)
        exited_at: float | None = None
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                timed_out = runner.exit_rc is None and proc.poll() is None
                break
            # Over when the runner is gone or has reported, or when the child's pipes are all
            # closed (a runner stopped by the module would otherwise keep the run waiting).
            if exited_at is None and (
                runner.exit_rc is not None
                or runner.signal is not None
                or proc.poll() is not None
                or not child_side & set(sel.get_map())
            ):
                exited_at = now
            # Drain briefly: a grandchild may hold the pipes open.
            if exited_at is not None and now - exited_at > 0.5:
                break
            for key, _ in sel.select(timeout=min(0.1, deadline - now)):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data is result:
                    result_total += len(chunk)
                    if len(result) < RESULT_LIMIT:
                        result += chunk
                else:
                    key.data.add(chunk)
        if not timed_out:
            # A runner that has reported exits at once; one the module stopped never does.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(runner)
        runner.ended_rc = proc.poll()
        runner.stop()
        # Let the runner reap its child (no zombie left behind), then make sure it is gone.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        sel.close()
        os.close(read_fd)
        os.close(status_fd)
        proc.stdout.close()
        proc.stderr.close()
    return _result_of(
        runner, bytes(result), result_total, out, err, timed_out, timeout, memory_mb, start
    )


def _result_of(
    runner: _Runner,
    result: bytes,
    result_total: int,
    out: _StreamCapture,
    err: _StreamCapture,
    timed_out: bool,
    timeout: float,
    memory_mb: int | None,
    start: float,
) -> ChildResult:
    phase, done = "startup", None
    for line in result.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("event") == "phase":
            phase = str(msg.get("phase"))
        elif isinstance(msg, dict) and msg.get("event") == "done":
            done = msg

    rc = runner.exit_rc
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
    runner_rc = runner.ended_rc
    if timed_out:
        res.reason = f"timed out after {timeout:.1f} s during {phase}"
    elif result_total > RESULT_LIMIT:
        res.reason = f"probe result too large ({result_total} bytes, limit {RESULT_LIMIT})"
    elif runner.signal is not None:
        res.reason = (
            f"the module signalled its runner ({_signal_name(runner.signal)}) during {phase}"
        )
    elif runner.error:
        res.reason = f"could not run the child: {runner.error}"
    elif rc is None:
        # The runner never reported the child's end: the module killed or stopped it.
        if runner_rc is not None and runner_rc < 0:
            res.reason = f"the module killed its runner ({_signal_name(-runner_rc)}) during {phase}"
        elif runner_rc is None:
            res.reason = f"the module stopped its runner during {phase}"
        else:
            res.reason = f"the runner exited with status {runner_rc} during {phase}"
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
    elif rc < 0:
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
