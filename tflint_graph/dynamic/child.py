"""The probe that runs inside the child process of dynamic mode (SPEC §4).

Imported only in the child (see :func:`tflint_graph.dynamic.verdicts.payload_source`), after the
user's module, so it may import TensorFlow.  :func:`run` receives the imported module, the
``report`` callback of the runner and the parameters the parent planned (JSON), and reports one
dict: the device, TensorFlow's version and, per target, the calls made and what the probes saw.

For each target it builds the callable (a module-level ``tf.function``; a method of a class
constructed with the ``Class`` example from config, the arguments the module's own code
passes it, or guesses; Keras ``call`` and
``train_step`` through a ``tf.function`` as Keras's own train function does; a ``Dataset.map``
callback through ``tf.data``), then tries the planned input attempts in order until one runs
without an exception outside the flagged lines (guessed shapes may not fit the function).

Each attempt first traces the target symbolically (``TensorSpec``\\ s, unknown dims left
unknown; a ``Dataset.map`` callback is traced by ``.map()`` instead), then calls it with
concrete values.  Per phase it records: probe hits (``print``, ``random``, clock and environment
reads, ``logging``, file I/O) attributed to the module line of their direct caller, and
counted apart when they ran outside graph building (at call time), looking
through AutoGraph's generated code with the source maps AutoGraph builds; which module lines
ran (``sys.settrace``); fingerprints of watched state (a global, ``self.attr``) before and
after; and the exception, unwrapped from AutoGraph's and Keras's messages, with the module
lines in its traceback.  Experiments that
need several calls (a changed global, an eager re-run, new batch sizes, timing) run after the
three calls with every probe silent.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import datetime
import importlib
import importlib.util
import inspect
import io
import json
import linecache
import logging
import os
import pathlib
import pickle
import random
import re
import secrets
import shutil
import signal
import statistics
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from types import FrameType, ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.autograph.impl import api as ag_api
from tensorflow.python.autograph.operators import control_flow as ag_cf
from tensorflow.python.autograph.operators import py_builtins as ag_builtins
from tensorflow.python.autograph.pyct import loader as ag_loader

# Kept before any probe is installed: experiments time and compare with the real ones.
_perf_counter = time.perf_counter

_real_cache: dict[str, str] = {}


def _real(filename: str) -> str:
    found = _real_cache.get(filename)
    if found is None:
        found = (
            os.path.realpath(filename) if filename and not filename.startswith("<") else filename
        )
        _real_cache[filename] = found
    return found


def _looks_like(wrapper: Any, original: Any, name: str) -> None:
    """Give a probe the identity of what it replaces: code that names a function by its
    module and name (pytest-benchmark's ``time.perf_counter`` timer) must find the original."""
    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__qualname__ = getattr(original, "__qualname__", wrapper.__name__)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    module = getattr(original, "__module__", None)
    if isinstance(module, str):
        wrapper.__module__ = module


class Probe:
    """Line attribution and the per-phase record of one child run.

    Lines are attributed to the user's ``files``: the one module's file in the child; in a
    test session (``pytest --tflint-graph``, which subclasses this) ``module`` is None and
    ``files`` are the project's files with findings.  ``locate`` and ``caller`` say which
    file; ``map_line`` and ``caller_line`` give the line alone, as the child needs it."""

    def __init__(self, module: ModuleType | None, files: Iterable[str] = ()) -> None:
        self.module = module
        self.modfile = _real(module.__file__ or "") if module is not None else ""
        self.files = {self.modfile} if module is not None else set()
        self.files.update(_real(f) for f in files)
        # Frames of these files are looked through when finding the user's calling line.
        self.transparent = {
            _real(f)
            for f in (ag_api.__file__, ag_builtins.__file__, ag_cf.__file__, logging.__file__)
        }
        self.transparent.add(_real(__file__))
        self.generated: dict[str, dict[int, int]] = {}  # AutoGraph file -> {line: user line}
        self.origin: dict[str, str] = {}  # AutoGraph file -> the user file it was made from
        self.phase: str | None = None
        self.hits: dict[str, dict[str, dict[str, int]]] = {}
        # The same hits, counted again when they ran outside graph building: at call time.
        self.eager_hits: dict[str, dict[str, dict[str, int]]] = {}
        self.lines: dict[str, set[int]] = {}
        self.patched: dict[int, tuple[Any, Any]] = {}
        self.inside = 0  # how many probed calls are running (see ``patch``)
        # Move the module's writes into the scratch folder (``_scratch_path``): dynamic
        # mode's child runs in one; a test suite's writes are its own business.
        self.redirect_writes = True
        # tf.functions the module's code made, per phase: (line, the Function).
        self.created: dict[str, list[tuple[int, Any]]] = {}
        self.probed: dict[str, str] = {}  # probe name -> kind, for tests and the report

    # -- AutoGraph source maps
    def install_loader_hook(self) -> None:
        original = ag_loader.load_ast

        def load_ast(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            with contextlib.suppress(Exception):
                if isinstance(result, tuple) and len(result) == 3 and isinstance(result[2], dict):
                    for loc, origin in result[2].items():
                        source = _real(origin.loc.filename)
                        if source in self.files:
                            made = _real(loc.filename)
                            self.generated.setdefault(made, {})[loc.lineno] = origin.loc.lineno
                            self.origin.setdefault(made, source)
                        elif source in self.transparent:
                            # AutoGraph converted logging's own code: look through it too.
                            self.transparent.add(_real(loc.filename))
            return result

        ag_loader.load_ast = load_ast
        # Functions AutoGraph converted during the import (a module-level ``ds.map(fn)``)
        # are cached without a source map: convert them again, through the hook.
        with contextlib.suppress(Exception):
            transpiler = ag_api._TRANSPILER
            transpiler._cache = type(transpiler._cache)()

    def locate(self, filename: str, line: int) -> tuple[str, int] | None:
        """(user file, line) of a line of a user file or of AutoGraph's code made from one."""
        real = _real(filename)
        if real in self.files:
            return real, line
        table = self.generated.get(real)
        mapped = None if table is None else table.get(line)
        return None if mapped is None else (self.origin[real], mapped)

    def map_line(self, filename: str, line: int) -> int | None:
        found = self.locate(filename, line)
        return None if found is None else found[1]

    def caller(self, frame: FrameType | None) -> tuple[str, int] | None:
        """The user's (file, line) that made the call ``frame`` is in, looking through
        AutoGraph and the ``transparent`` files."""
        depth = 0
        while frame is not None and depth < 40:
            real = _real(frame.f_code.co_filename)
            if real in self.files or real in self.generated:
                return self.locate(real, frame.f_lineno)
            # Frozen stdlib modules (``<frozen os>``, ``<frozen _collections_abc>``: the code
            # behind os.environ.get and os.getenv) are library code to look through, like logging.
            if real not in self.transparent and not real.startswith("<frozen "):
                return None
            frame = frame.f_back
            depth += 1
        return None

    def caller_line(self, frame: FrameType | None) -> int | None:
        found = self.caller(frame)
        return None if found is None else found[1]

    # -- probes
    def hit(self, kind: str, name: str, frame: FrameType | None) -> None:
        if self.phase is None:
            return
        line = self.caller_line(frame)
        if line is None:
            return
        key = f"{kind}:{name}"
        counts = self.hits.setdefault(self.phase, {}).setdefault(str(line), {})
        counts[key] = counts.get(key, 0) + 1
        if not tf.inside_function():
            eager = self.eager_hits.setdefault(self.phase, {}).setdefault(str(line), {})
            eager[key] = eager.get(key, 0) + 1

    def patch(
        self,
        owner: Any,
        attr: str,
        kind: str,
        name: str,
        when: Callable[..., bool] | None = None,
        writes: bool = False,
    ) -> None:
        """Replace ``owner.attr`` by a wrapper that counts a hit at its caller's line (only
        where ``when(*args, **kwargs)`` holds, when given); with ``writes``, the path it
        writes (its first argument) is moved into the scratch folder when the module's own
        code calls it, as ``open`` does (see ``_scratch_path``).  A probed call made while
        another probed call runs is the library's own work (``np.save`` opens a file,
        ``os.getenv`` reads ``os.environ``, a logging record reads the clock), not a second
        effect of the user's line: it is not counted."""
        original = getattr(owner, attr, None)
        if original is None:
            return
        probe = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if probe.inside:
                return original(*args, **kwargs)
            frame = sys._getframe(1)
            if when is None or when(*args, **kwargs):
                probe.hit(kind, name, frame)
            probe.inside += 1
            try:
                if (
                    writes
                    and args
                    and probe.redirect_writes
                    and probe.caller_line(frame) is not None
                ):
                    # Inside: the folders made for the new path are no hit of the module's.
                    args = (_scratch_path(args[0], "w"), *args[1:])
                return original(*args, **kwargs)
            finally:
                probe.inside -= 1

        _looks_like(wrapper, original, name)
        patched = tf.autograph.experimental.do_not_convert(wrapper)
        setattr(owner, attr, patched)
        self.patched[id(original)] = (original, patched)
        self.probed[name] = kind

    def install_probes(self) -> None:
        self.patch(builtins, "print", "print", "print")
        self.install_random_probes()
        self.install_clock_probes()
        self.patch(os, "getenv", "clock", "os.getenv")
        self.patch(os, "getenvb", "clock", "os.getenvb")
        # os.environ[...] and os.environ.get(...) (Mapping.get calls __getitem__).
        self.patch(type(os.environ), "__getitem__", "clock", "os.environ")
        self.transparent.add(_real(os.__file__))
        with contextlib.suppress(Exception):
            import _collections_abc

            self.transparent.add(_real(_collections_abc.__file__))
        # The public methods, not _log: debug/info calls below the logger's level never
        # reach _log, yet they run (and are worth reporting) only while tracing. (The same
        # names as checks/logging_in_traced.py: this file runs in the child without the package.)
        for name in (
            "debug",
            "info",
            "warning",
            "warn",
            "error",
            "exception",
            "critical",
            "fatal",
            "log",
        ):
            self.patch(logging.Logger, name, "logging", "logging")
        self.patch(warnings, "warn", "logging", "warnings.warn")
        with contextlib.suppress(ImportError):
            from absl import logging as absl_logging

            for name in (
                "debug",
                "info",
                "warning",
                "warn",
                "error",
                "fatal",
                "log",
                "vlog",
                "log_every_n",
                "log_first_n",
                "log_every_n_seconds",
            ):
                self.patch(absl_logging, name, "logging", "absl.logging")
        # The child's standard input is not a terminal: a trace-time input() would end the
        # trace with EOFError before the function's other findings could be seen, so there
        # it reads an empty line (the probe still counts the call).
        real_input = builtins.input

        def no_terminal_input(prompt: object = "") -> str:
            stdin = sys.stdin
            return real_input(prompt) if stdin is not None and stdin.isatty() else ""

        builtins.input = no_terminal_input
        self.patch(builtins, "input", "io", "input")
        for owner, label in ((json, "json"), (pickle, "pickle")):
            self.patch(owner, "dump", "io", label + ".dump")
        self.install_file_probes()
        self.install_function_probe()
        for owner in (tf.config, tf.compat.v1.config):
            for name in ("run_functions_eagerly", "experimental_run_functions_eagerly"):
                # A switch to eager (TFG402) counts where the module's code turns it on.
                self.patch(owner, name, "switch", "run_functions_eagerly", when=_turns_on)
        # Read by TFG402's own check, not a probe of a trace-time effect.
        self.probed.pop("run_functions_eagerly", None)
        self.rebind()

    def install_function_probe(self) -> None:
        """``tf.function`` records each Function the module's code makes (TFG302), as a
        call (``tf.function(fn)``), a decorator (``@tf.function``) or a decorator factory
        (``@tf.function(jit_compile=True)``)."""
        original = tf.function
        probe = self

        def made(result: Any, frame: FrameType | None) -> Any:
            probe.function_made(result, frame)
            return result

        def function(*args: Any, **kwargs: Any) -> Any:
            frame = sys._getframe(1)
            if args and callable(args[0]):
                return made(original(*args, **kwargs), frame)
            decorator = original(*args, **kwargs)

            def apply(fn: Any) -> Any:
                return made(decorator(fn), sys._getframe(1))

            return apply

        _looks_like(function, original, "function")
        tf.function = function
        self.patched[id(original)] = (original, function)

    def function_made(self, function: Any, frame: FrameType | None) -> None:
        """Keep the Function the module's code just made, by its line (TFG302)."""
        line = self.caller_line(frame)
        if line is not None and self.phase is not None:
            self.created.setdefault(self.phase, []).append((line, function))

    def install_random_probes(self) -> None:
        """Every draw of ``random``, ``numpy.random``, ``secrets`` and ``uuid`` (TFG103).

        Every public function of ``random`` and of NumPy's legacy API (bound methods of a
        hidden instance, plus aliases such as ``ranf``) is patched on the module, where user
        code looks it up, so new ones are probed too; seeding, state, classes and NumPy's
        test runner are not draws (generators: see ``install_generator_probes``)."""
        not_draws = {"seed", "getstate", "setstate", "get_state", "set_state"}
        skip = not_draws | {"get_bit_generator", "set_bit_generator", "test", "default_rng"}
        for module, label in ((random, "random."), (np.random, "numpy.random.")):
            for name in dir(module):
                value = getattr(module, name)
                if name.startswith("_") or name in skip or isinstance(value, (type, ModuleType)):
                    continue
                if callable(value):
                    self.patch(module, name, "random", label + name)
        # random.Random() / SystemRandom() instances: Python classes, patched in place (each
        # on the methods it defines itself).  Draws made inside random.py (choice ->
        # _randbelow -> getrandbits) run inside a probed call and are not counted again.
        for cls in (random.Random, random.SystemRandom):
            own = set(vars(cls)) | ({"random", "getrandbits"} if cls is random.Random else set())
            for name in sorted(own):
                if (
                    not name.startswith("_")
                    and name not in not_draws
                    and callable(getattr(cls, name, None))
                ):
                    self.patch(cls, name, "random", f"random.{cls.__name__}.{name}")
        for name in ("token_bytes", "token_hex", "token_urlsafe", "randbelow", "choice"):
            self.patch(secrets, name, "random", "secrets." + name)
        self.patch(secrets, "randbits", "random", "secrets.randbits")
        for name in ("uuid1", "uuid4"):  # uuid3/uuid5 hash their arguments: not random
            self.patch(uuid, name, "random", "uuid." + name)
        self.patch(os, "urandom", "random", "os.urandom")
        self.install_generator_probes()

    def install_generator_probes(self) -> None:
        """``np.random.default_rng()`` generators and ``RandomState`` instances.

        Both are C types whose methods cannot be replaced; a subclass with probed methods
        can, and stays an instance of the C type for ``isinstance``.  ``default_rng`` and
        ``RandomState`` return the subclass from now on (generators made in ``__init__`` or
        in traced code), and generators the import already made (``rng =
        np.random.default_rng(0)`` at module level) are replaced by one drawing from the
        same bit generator, so the stream of numbers is unchanged."""
        probe = self
        made: dict[type, type] = {}
        for base, label in (
            (np.random.Generator, "Generator"),
            (np.random.RandomState, "RandomState"),
        ):
            methods = {
                name: _probed_method(probe, getattr(base, name), f"numpy.random.{label}.{name}")
                for name in dir(base)
                if not name.startswith("_")
                and name not in ("spawn", "seed", "get_state", "set_state", "bit_generator")
                and callable(getattr(base, name))
            }
            made[base] = _lookalike(base, methods)
        generator, legacy = made[np.random.Generator], made[np.random.RandomState]
        original_rng = np.random.default_rng

        def default_rng(seed: Any = None) -> Any:
            if probe.inside:
                return original_rng(seed)
            probe.hit("random", "numpy.random.default_rng", sys._getframe(1))
            if isinstance(seed, np.random.Generator):
                return seed  # default_rng(g) returns g itself
            return generator(original_rng(seed).bit_generator)

        self._replace(np.random, "default_rng", default_rng, "random", "numpy.random.default_rng")
        self._replace(np.random, "RandomState", legacy, "random", "numpy.random.RandomState")
        # Generators the module made at import (none yet in a test session: no module).
        made = vars(self.module) if self.module is not None else {}
        for key, value in list(made.items()):
            if type(value) is np.random.Generator:
                setattr(self.module, key, generator(value.bit_generator))
            elif type(value) is np.random.RandomState:
                with contextlib.suppress(Exception):
                    setattr(self.module, key, legacy(value._bit_generator))

    def _replace(self, owner: Any, attr: str, new: Any, kind: str, name: str) -> None:
        """Put ``new`` (which counts its own hits) in place of ``owner.attr``."""
        original = getattr(owner, attr)
        setattr(owner, attr, new)
        self.patched[id(original)] = (original, new)
        self.probed[name] = kind

    def install_clock_probes(self) -> None:
        """Clock reads (TFG104): ``time``'s clocks; ``localtime``/``gmtime``/``ctime``/
        ``asctime``/``strftime`` only when called without a time (then they read the
        clock); ``datetime.now/utcnow/today`` and ``date.today``."""
        for name in (
            "time",
            "time_ns",
            "perf_counter",
            "perf_counter_ns",
            "monotonic",
            "monotonic_ns",
            "process_time",
            "process_time_ns",
            "thread_time",
            "thread_time_ns",
        ):
            self.patch(time, name, "clock", "time." + name)

        def no_time(*args: Any, **kwargs: Any) -> bool:
            return not args or args[0] is None

        for name in ("localtime", "gmtime", "ctime", "asctime"):
            self.patch(time, name, "clock", "time." + name, when=no_time)
        self.patch(
            time,
            "strftime",
            "clock",
            "time.strftime",
            when=lambda *args, **kwargs: len(args) < 2 or args[1] is None,
        )
        self.install_datetime_probes()

    def install_datetime_probes(self) -> None:
        """``datetime.datetime`` and ``datetime.date`` are C types: their classmethods cannot
        be replaced.  The ``datetime`` module gets subclasses whose ``now``/``utcnow``/
        ``today`` count a hit; a metaclass keeps ``isinstance(d, datetime.datetime)`` true
        for instances of the real class (made by libraries, or before the probes)."""
        probe = self
        for real, names in (
            (_real_datetime, ("now", "utcnow", "today")),
            (_real_date, ("today",)),
        ):

            class _Meta(type):
                def __instancecheck__(cls, obj: Any, real: type = real) -> bool:
                    return isinstance(obj, real)

                def __subclasscheck__(cls, sub: type, real: type = real) -> bool:
                    return issubclass(sub, real)

            # getattr(real, name) is the classmethod bound to the real class: it returns an
            # instance of the real class, which the metaclass still counts as one of these.
            methods = {
                name: classmethod(
                    _probed_method(
                        probe, getattr(real, name), f"datetime.{real.__name__}.{name}", bound=True
                    )
                )
                for name in names
            }
            probed = _lookalike(real, methods)
            self._replace(datetime, real.__name__, probed, "clock", f"datetime.{real.__name__}")
            for name in names:
                self.probed[f"datetime.{real.__name__}.{name}"] = "clock"

    def install_file_probes(self) -> None:
        """File writes (TFG108): ``open`` (whose file's ``write``/``writelines``/``flush``
        count at the line that calls them), ``os``/``shutil`` file operations, ``pathlib``
        writes, NumPy's savers, ``tf.io.gfile``."""
        self._patch_open(builtins, "open", "open")
        self._patch_open(io, "open", "io.open")
        for name in ("makedirs", "mkdir"):
            self.patch(os, name, "io", "os." + name, writes=True)
        for name in ("remove", "unlink", "rename", "replace", "rmdir", "removedirs", "system"):
            self.patch(os, name, "io", "os." + name)
        for name in ("copy", "copy2", "copyfile", "copytree", "move", "rmtree"):
            self.patch(shutil, name, "io", "shutil." + name)
        for name in ("write_text", "write_bytes", "open", "mkdir", "touch", "unlink"):
            self.patch(pathlib.Path, name, "io", "Path." + name)
        for name in ("save", "savez", "savez_compressed", "savetxt"):
            self.patch(np, name, "io", "numpy." + name, writes=True)
        with contextlib.suppress(Exception):
            from tensorflow.python.lib.io import file_io

            # tf.io.gfile.GFile is file_io.FileIO: its constructor and its writes.
            for name in ("__init__", "write"):
                label = "GFile" if name == "__init__" else "GFile.write"
                self.patch(file_io.FileIO, name, "io", "tensorflow.io.gfile." + label)
            for name in ("makedirs", "mkdir", "remove", "rename", "copy", "rmtree"):
                self.patch(tf.io.gfile, name, "io", "tensorflow.io.gfile." + name)

    def _patch_open(self, owner: Any, attr: str, name: str) -> None:
        """``open`` counts a hit, and a file it opens for the module's code counts one at
        each line that writes to it (file objects are C types: the module gets a thin
        proxy; library code keeps the real file)."""
        original = getattr(owner, attr)
        probe = self

        def opener(*args: Any, **kwargs: Any) -> Any:
            if probe.inside:
                return original(*args, **kwargs)
            frame = sys._getframe(1)
            probe.hit("io", name, frame)
            ours = probe.caller_line(frame) is not None
            probe.inside += 1
            try:
                if ours and args and probe.redirect_writes:
                    mode = args[1] if len(args) > 1 else kwargs.get("mode")
                    args = (_scratch_path(args[0], mode), *args[1:])
                handle = original(*args, **kwargs)
            finally:
                probe.inside -= 1
            return _ProbedFile(handle, probe) if ours else handle

        _looks_like(opener, original, attr)
        self._replace(owner, attr, tf.autograph.experimental.do_not_convert(opener), "io", name)
        for method in ("write", "writelines", "flush"):
            self.probed["file." + method] = "io"

    def rebind(self, module: ModuleType | None = None) -> None:
        """``from time import time`` binds the original in the module: rebind to the probe."""
        module = module or self.module
        if module is None:
            return
        for key, value in list(vars(module).items()):
            entry = self.patched.get(id(value))
            if entry is not None and entry[0] is value:
                setattr(module, key, entry[1])

    # -- line tracing
    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and self.phase is not None:
            line = self.map_line(frame.f_code.co_filename, frame.f_lineno)
            if line is not None:
                self.lines.setdefault(self.phase, set()).add(line)
        return self._local

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        real = _real(frame.f_code.co_filename)
        if real in self.files or real in self.generated:
            return self._local
        return None

    @contextlib.contextmanager
    def recording(self, phase: str) -> Iterator[None]:
        self.phase = phase
        sys.settrace(self._global)
        # A distribution strategy runs each replica's step in a thread of its own.
        threading.settrace(self._global)
        try:
            yield
        finally:
            threading.settrace(None)  # type: ignore[arg-type]
            sys.settrace(None)
            self.phase = None

    def exception_locations(self, exc: BaseException) -> list[tuple[str, int]]:
        """The user (file, line)s in the exception's traceback (and in the tracebacks it was
        raised from), outermost first; AutoGraph's re-raised errors carry the user's frames as
        text only, so the message is read too."""
        found: list[tuple[str, int]] = []
        seen: set[int] = set()
        current: BaseException | None = exc
        chain = []
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            chain.append(current)
            current = current.__cause__ or current.__context__
        for item in reversed(chain):
            tb = item.__traceback__
            while tb is not None:
                where = self.locate(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
                if where is not None:
                    found.append(where)
                tb = tb.tb_next
            for filename, number in re.findall(r'File "([^"]+)", line (\d+)', str(item)):
                if _real(filename) in self.files:
                    found.append((_real(filename), int(number)))
        return found

    def exception_lines(self, exc: BaseException) -> list[int]:
        """The lines of ``exception_locations`` (the child has one file)."""
        return [line for _, line in self.exception_locations(exc)]

    def exception_line(self, exc: BaseException) -> int | None:
        """The deepest module line the exception passed through."""
        lines = self.exception_lines(exc)
        return lines[-1] if lines else None


_real_datetime = datetime.datetime
_real_date = datetime.date


def _scratch_path(path: Any, mode: Any) -> Any:
    """Where the module's own code may write ``path``: inside the child's folder (its cwd,
    the scratch folder).  A log file under ``/var/log`` or in a folder the project creates
    first would make the trace raise before the finding's line runs, and nothing may be
    written outside the scratch folder anyway."""
    if not isinstance(mode, str) or not any(c in mode for c in "wax+"):
        return path
    try:
        target = os.path.abspath(os.fspath(path))
    except TypeError:  # a file descriptor
        return path
    here = os.getcwd()
    if os.path.commonpath([here, target]) != here:
        target = os.path.join(here, "outside", target.lstrip(os.sep))
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(target), exist_ok=True)
    return target


def _probed_method(probe: Probe, original: Any, name: str, bound: bool = False) -> Any:
    """A method for a subclass of a C type that counts a hit at its caller's line, then
    calls ``original`` (a method descriptor, or with ``bound`` an already bound method)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not probe.inside:
            probe.hit("random" if name.startswith("numpy") else "clock", name, sys._getframe(1))
        probe.inside += 1
        try:
            return original(*args, **kwargs) if bound else original(self, *args, **kwargs)
        finally:
            probe.inside -= 1

    _looks_like(method, original, name)
    method.__doc__ = getattr(original, "__doc__", None)
    probe.probed[name] = "random" if name.startswith("numpy") else "clock"
    return tf.autograph.experimental.do_not_convert(method)


def _lookalike(real: type, methods: dict[str, Any]) -> type:
    """A subclass of ``real`` with ``methods``, for which ``isinstance``/``issubclass`` answer
    as for ``real`` itself (instances made by the real class still count)."""

    class _Meta(type):
        def __instancecheck__(cls, obj: Any) -> bool:
            return isinstance(obj, real)

        def __subclasscheck__(cls, sub: type) -> bool:
            return issubclass(sub, real)

    probed = _Meta(real.__name__, (real,), dict(methods))
    probed.__module__ = real.__module__
    probed.__qualname__ = real.__qualname__
    return probed


class _ProbedFile:
    """A file opened by the module's code: ``write``/``writelines``/``flush`` count a hit at
    the calling line; everything else is the real file's."""

    def __init__(self, handle: Any, probe: Probe) -> None:
        self._handle = handle
        self._probe = probe

    def _count(self, name: str) -> None:
        if not self._probe.inside:
            self._probe.hit("io", "file." + name, sys._getframe(2))

    def write(self, *args: Any) -> Any:
        self._count("write")
        return self._handle.write(*args)

    def writelines(self, *args: Any) -> Any:
        self._count("writelines")
        return self._handle.writelines(*args)

    def flush(self) -> Any:
        self._count("flush")
        return self._handle.flush()

    def __enter__(self) -> _ProbedFile:
        self._handle.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._handle.__exit__(*exc)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._handle)

    def __next__(self) -> Any:
        return next(self._handle)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def _first_line(text: str) -> str:
    lines = [s for s in text.strip().splitlines() if s.strip()]
    return lines[0].strip()[:300] if lines else ""


_WRAPPERS = (
    "in user code",
    "Exception encountered when calling",
    "Exception encountered while",
    "Could not automatically infer the output shape",
)


def _unwrapped(text: str) -> str:
    """The error's own message under the wrappers AutoGraph and Keras put around it:
    AutoGraph's "in user code: File ... TypeError: <message>", Keras's "Exception encountered
    when calling X.call(). <message> Arguments received by ...", and Keras's symbolic build
    ("Could not automatically infer the output shape ... Error encountered: <message>")."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    for _ in range(6):
        stripped = text.strip()
        if not stripped.startswith(_WRAPPERS):
            break
        if stripped.startswith("in user code"):
            found = list(re.finditer(r"^\s*\w+(?:Error|Exception|Warning): ", stripped, re.M))
            if not found:
                break
            text = stripped[found[-1].end() :]
            continue
        if "Error encountered:" in stripped:
            text = stripped.split("Error encountered:", 1)[1]
            continue
        _, _, rest = stripped.partition("\n")
        if not rest.strip():
            break
        text = rest
    kept = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line.startswith(("Arguments received", "\u2022")):
            break
        if line:
            kept.append(line)
    return " ".join(kept)


def _describe(probe: Probe, exc: BaseException) -> dict[str, Any]:
    detail = _unwrapped(str(exc)) or type(exc).__name__
    message = detail[:300]
    if len(message) > 120 and ". " in message[:200]:
        message = message[: message.index(". ") + 1]  # the first sentence says it
    lines = probe.exception_lines(exc)
    return {
        "type": type(exc).__name__,
        "mro": [c.__name__ for c in type(exc).__mro__],
        "message": message,
        # What the verdicts match a rule's documented error against.
        "detail": detail[:1500],
        "line": lines[-1] if lines else None,
        "lines": sorted(set(lines)),
    }


# -- inputs


def make_input(
    spec: dict[str, Any], seed: int, batch: int | None = None, module: ModuleType | None = None
) -> Any:
    if spec["kind"] == "py":
        return ast.literal_eval(spec["repr"])
    if spec["kind"] == "expr":
        value = _evaluated(spec, module)
        if batch is not None and _batched(value):
            # New batch sizes of the module's own tensor (TFG301): its first row repeated.
            return tf.repeat(value[:1], batch, axis=0)
        return value
    if spec["kind"] == "tuple":
        return tuple(make_input(s, seed, batch, module) for s in spec["items"])
    if spec["kind"] == "dict":
        return {k: make_input(s, seed, batch, module) for k, s in spec["items"].items()}
    if spec["kind"] == "variables":
        made = _variables(spec)
        return made[0] if spec.get("one") else made
    if spec["kind"] == "dataset":
        # Two batches, as the smallest dataset a loop over it sees more than once.
        element = make_input(spec["element"], seed, batch, module)
        return tf.data.Dataset.from_tensors(element).repeat(2)
    rng = np.random.default_rng(seed)
    shape = list(spec["shape"])
    if batch is not None and shape:
        shape[0] = batch
    dtype_name = spec["dtype"]
    dtype = getattr(tf, dtype_name)
    if dtype_name == "string":
        n = int(np.prod(shape)) if shape else 1
        # A CSV line has as many fields as decode_csv wants: "1" parses as a number or a string.
        texts = [",".join(["1"] * spec["fields"])] * n if spec.get("fields") else None
        texts = texts or [f"s{seed}_{i}" for i in range(n)]
        if spec.get("image"):
            texts = [_encoded_image(spec["image"], seed + i) for i in range(n)]
        values = np.array(texts, dtype=object).reshape(shape)
        return tf.constant(values, dtype=tf.string)
    if dtype_name == "bool":
        return tf.constant(rng.random(shape) < 0.5)
    if dtype_name.startswith(("int", "uint")):
        low, high = spec.get("values") or (1, 10)
        return tf.cast(tf.constant(rng.integers(low, high, size=shape)), dtype)
    if dtype_name.startswith("complex"):
        real, imag = rng.standard_normal(shape), rng.standard_normal(shape)
        part = tf.float64 if dtype_name == "complex128" else tf.float32
        return tf.complex(tf.constant(real, part), tf.constant(imag, part))
    return tf.cast(tf.constant(rng.standard_normal(shape).astype("float32")), dtype)


def _encoded_image(encoding: str, seed: int) -> bytes:
    """A small RGB image, encoded as the decoder that failed on a guessed string wants."""
    pixels = np.random.default_rng(seed).integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    encode = tf.io.encode_jpeg if encoding == "jpeg" else tf.io.encode_png
    return bytes(encode(tf.constant(pixels)).numpy())


# Values of the module's own expressions, evaluated once per module state (a model or an
# optimizer must be the same object on every call); cleared when the module is executed again.
# Keyed by the argument too: two arguments spelt alike (a GAN's two `Adam(2e-4)`) are two
# objects, as in the module's own call.
_EVALUATED: dict[tuple[str, int], Any] = {}


def _evaluated(spec: dict[str, Any], module: ModuleType | None) -> Any:
    """An argument the module's own code passes (or, with a ``scope``, another module of the
    project), evaluated over that module's own names."""
    if module is None:
        raise Unreachable("an argument from the module's own call needs the module")
    key = (spec["source"], id(spec))
    if key not in _EVALUATED:
        scope = (
            _project_module(spec["scope"], spec.get("scope_path", ""))
            if spec.get("scope")
            else module
        )
        code = compile(spec["source"], "<module call>", "eval")
        try:
            _EVALUATED[key] = eval(code, vars(scope))
        except Exception as exc:
            # A script's absl flags are parsed by `app.run`, which never ran: their defaults.
            if not _parse_absl_flags(exc):
                raise
            _EVALUATED[key] = eval(code, vars(scope))
    return _EVALUATED[key]


def _project_module(name: str, path: str) -> ModuleType:
    """The project's module ``name``, or the one at ``path`` when that name imports
    another: a project's `tests/` folder without ``__init__.py`` is a namespace package,
    which any installed regular package named ``tests`` wins over."""
    try:
        found = importlib.import_module(name)
    except ImportError:
        if not path:
            raise
        found = None
    if found is not None and (not path or _same_file(getattr(found, "__file__", None), path)):
        return found
    key = "_tflint_graph_project_" + re.sub(r"\W", "_", name)
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {name} from {path}")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[key] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules[key]
            raise
    return sys.modules[key]


def _same_file(a: str | None, b: str) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


def _parse_absl_flags(exc: BaseException) -> bool:
    """Mark absl's flags parsed (each keeps its default) after ``exc`` said they were not;
    whether that was the error."""
    flags = sys.modules.get("absl.flags")
    if flags is None or not isinstance(exc, getattr(flags, "UnparsedFlagAccessError", ())):
        return False
    flags.FLAGS.mark_as_parsed()
    return True


def _variables(spec: dict[str, Any]) -> list[Any]:
    """The variables of a ``variables`` spec: made once per module state, so every call (and
    the symbolic trace) gets the same objects, as a training loop's weights are; new ones
    per call would make each call trace again."""
    key = ("variables", id(spec))
    if key not in _EVALUATED:
        _EVALUATED[key] = [tf.Variable(make_input(s, i + 1)) for i, s in enumerate(spec["items"])]
    return _EVALUATED[key]


def symbolic_input(spec: dict[str, Any], module: ModuleType | None = None) -> Any:
    """What the symbolic trace passes for ``spec``: a ``TensorSpec`` whose unknown dims stay
    unknown, so tracing needs no valid values; Python values (and variables) as they are."""
    if spec["kind"] == "py":
        return ast.literal_eval(spec["repr"])
    if spec["kind"] == "variables":
        made = _variables(spec)
        return made[0] if spec.get("one") else made
    if spec["kind"] == "tuple":
        return tuple(symbolic_input(s, module) for s in spec["items"])
    if spec["kind"] == "dict":
        return {k: symbolic_input(s, module) for k, s in spec["items"].items()}
    if spec["kind"] == "expr":
        value = _evaluated(spec, module)
        if tf.is_tensor(value) or isinstance(value, np.ndarray):
            return tf.TensorSpec(value.shape, tf.as_dtype(value.dtype))
        return value
    if spec["kind"] == "dataset":
        return make_input(spec, 0, module=module)  # a dataset traces by its element spec
    shape = spec.get("relaxed", spec["shape"])
    return tf.TensorSpec(shape, getattr(tf, spec["dtype"]))


def _has_batch(spec: dict[str, Any], module: ModuleType | None = None) -> bool:
    if spec["kind"] in ("tuple", "dict"):
        return any(_has_batch(s, module) for s in _items(spec))
    if spec["kind"] == "expr":
        try:
            return _batched(_evaluated(spec, module))
        except Exception:
            return False
    return spec["kind"] == "tensor" and bool(spec["shape"])


def _batched(value: Any) -> bool:
    """A tensor, or a NumPy array (what a module's own call often passes), with a first axis."""
    if isinstance(value, np.ndarray):
        return value.ndim >= 1
    return tf.is_tensor(value) and value.shape.rank is not None and value.shape.rank >= 1


def _items(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of a tuple or dict spec."""
    items = spec["items"]
    return list(items.values()) if isinstance(items, dict) else list(items)


def _fingerprint(value: Any) -> tuple[Any, str]:
    """(what identifies the value's state, how to show it).  A container's state is the
    identity of what it holds: for a dict, of each key and value (``items()`` makes new
    pairs on every read, so their ids would change while the dict does not)."""
    if isinstance(value, dict):
        # A list a dict holds (`history["loss"]`) changes without a new id: its items count.
        pairs = tuple((id(k), id(v), _held(v)) for k, v in list(value.items())[:64])
        return ("dict", len(value), pairs), _dict_shown(value)
    if isinstance(value, (list, set, bytearray, collections.deque)):
        ids = tuple(id(x) for x in list(value)[:64])
        return (type(value).__name__, len(value), ids), f"len {len(value)}"
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        shown = repr(value)
        return ("value", shown[:200]), shown[:40]
    return ("id", id(value)), type(value).__name__


def _held(value: Any) -> tuple[int, tuple[int, ...]] | None:
    """The length and item ids of a list, set or deque (a dict's value), else None."""
    if isinstance(value, (list, set, collections.deque)):
        return len(value), tuple(id(x) for x in list(value)[:64])
    return None


def _dict_shown(mapping: dict[Any, Any]) -> str:
    """A small dict of plain values as Python writes it (``{'steps': 2}``: its values may
    change while its length does not), of lists by their lengths (``{'loss': len 1}``), else
    its length."""
    plain = (type(None), bool, int, float, str)
    if len(mapping) <= 8 and all(isinstance(k, plain) for k in mapping):
        if all(isinstance(v, plain) for v in mapping.values()):
            text = repr(mapping)
        elif all(_held(v) is not None for v in mapping.values()):
            text = "{" + ", ".join(f"{k!r}: len {len(v)}" for k, v in mapping.items()) + "}"
        else:
            text = ""
        if text and len(text) <= 60:
            return text
    return f"len {len(mapping)}"


_MISSING = object()


def _read_watch(watch: dict[str, Any], module: ModuleType, owner: Any) -> Any:
    if watch["kind"] == "default":
        return _default_of(module, watch["name"], watch["attr"])
    if watch["kind"] == "global":
        return getattr(module, watch["name"], _MISSING)
    if watch["kind"] == "self":
        return _MISSING if owner is None else getattr(owner, watch["attr"], _MISSING)
    base = getattr(module, watch["name"], _MISSING)
    return _MISSING if base is _MISSING else getattr(base, watch["attr"], _MISSING)


def _default_of(module: ModuleType, qualname: str, param: str) -> Any:
    """The default object of ``param`` of the module's function ``qualname`` (the same object
    on every call that does not pass it)."""
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return _MISSING
    fn = getattr(obj, "python_function", obj)  # a tf.function: the Python function it wraps
    try:
        default = inspect.signature(fn).parameters[param].default
    except (KeyError, TypeError, ValueError):
        return _MISSING
    return _MISSING if default is inspect.Parameter.empty else default


def _outputs(value: Any) -> list[Any]:
    """A comparable, host-side copy of a call's result."""
    out: list[Any] = []
    for item in tf.nest.flatten(value, expand_composites=True):
        if hasattr(item, "numpy"):
            try:
                out.append(np.asarray(item.numpy()))
                continue
            except Exception:
                pass
        out.append(repr(item)[:200])
    return out


def _same(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if x.dtype.kind in "fc":
                if not np.allclose(x, y, equal_nan=True):
                    return False
            elif not np.array_equal(x, y):
                return False
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray) or x != y:
            return False
    return True


def _show(values: list[Any]) -> str:
    parts = []
    for v in values[:3]:
        if isinstance(v, np.ndarray):
            flat = (
                np.round(v.reshape(-1)[:4].astype(float), 3).tolist()
                if v.dtype.kind in "fciub"
                else v.reshape(-1)[:4].tolist()
            )
            parts.append(str(flat) + ("..." if v.size > 4 else ""))
        else:
            parts.append(str(v)[:40])
    return ", ".join(parts)


# -- targets


class Unreachable(Exception):
    """The target cannot be built (missing, needs constructor arguments, not callable)."""


def _module_tf_function(module: ModuleType, python: Any) -> tuple[str, Any] | None:
    """The module global holding ``tf.function(python, ...)``, and its name, if there is
    exactly one."""
    found = [
        (name, value)
        for name, value in vars(module).items()
        if hasattr(value, "experimental_get_tracing_count")
        and getattr(value, "python_function", None) is python
    ]
    return found[0] if len(found) == 1 else None


def _built_owner(module: Any, cls: type, factory: str) -> Any:
    """What the module's own factory ``factory()`` returns, when it is a ``cls``."""
    make = getattr(module, factory, None) if factory else None
    if not callable(make):
        return None
    try:
        made = make()
    except (Exception, SystemExit):
        return None
    return made if isinstance(made, cls) else None


class _OwnerBuilt(BaseException):
    """Stops a project test once it has built the object a target needs (no ``except
    Exception:`` of the test catches it; pytest reports it as the test's failure)."""


class _TestTooSlow(BaseException):
    """Stops a project test that has not built the object within its time."""


# Seconds a project test may run before it builds the object: the module's other targets
# share the child's time limit.
_TEST_BUDGET = 15.0


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise ``_TestTooSlow`` in the main thread after ``seconds`` (no limit elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: FrameType | None) -> None:
        raise _TestTooSlow

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _owner_from_tests(cls: type, tests: list[str], root: str) -> tuple[Any, str] | None:
    """An instance of ``cls`` as one of the project's tests builds it (``tests``: pytest
    node ids under ``root``), and that test's id: the test runs with its fixtures until its
    first ``cls(...)`` returns, and stops there; for a Keras callback, until ``fit`` gives it
    its model (``set_model``), which its methods read as ``self.model``."""
    if not tests or not root:
        return None
    try:
        import pytest
    except ImportError:
        return None
    caught: list[Any] = []
    hook = "set_model" if callable(getattr(cls, "set_model", None)) else "__init__"
    original = cls.__dict__.get(hook)
    inherited = getattr(cls, hook)

    def stop(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = inherited(self, *args, **kwargs)
        if type(self) is cls and not caught:
            caught.append(self)
            raise _OwnerBuilt
        return result

    setattr(cls, hook, stop)
    sink = io.StringIO()
    cwd = os.getcwd()
    before = set(sys.modules)
    environ = dict(os.environ)
    eager = tf.config.functions_run_eagerly()
    try:
        for test in tests:
            args = [
                str(pathlib.Path(root) / test), "-q", "-x", "--no-header", "-p", "no:cacheprovider",
                "--capture=sys", f"--rootdir={root}", "-W", "ignore",
            ]  # fmt: skip
            try:
                with contextlib.ExitStack() as stack:
                    stack.enter_context(contextlib.redirect_stdout(sink))
                    stack.enter_context(contextlib.redirect_stderr(sink))
                    stack.enter_context(_time_limit(_TEST_BUDGET))
                    pytest.main(args)
            except (Exception, SystemExit, _OwnerBuilt, _TestTooSlow):
                pass
            finally:
                # What the test changed for the whole process goes back as it was.
                os.chdir(cwd)
                os.environ.clear()
                os.environ.update(environ)
                tf.config.run_functions_eagerly(eager)
            if caught:
                return caught[0], test
    finally:
        if original is None:
            delattr(cls, hook)
        else:
            setattr(cls, hook, original)
        # The tests' modules (and project modules first imported by them) go: imported again
        # later, they see the module as it is then, not a class reloaded since.
        inside = str(pathlib.Path(root).resolve()) + os.sep
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", "") or "").startswith(inside):
                del sys.modules[name]
    return None


def _awaits_model(obj: Any) -> bool:
    """A Keras callback that ``fit`` has not given its model yet."""
    if not callable(getattr(obj, "set_model", None)):
        return False
    try:
        return getattr(obj, "model", None) is None
    except Exception:  # a property that raises before `set_model`
        return True


def _unbuilt(obj: Any) -> bool:
    """A Keras model (layer) not built yet: no shape its inputs could be read from."""
    return isinstance(obj, _keras_model_type()) and not getattr(obj, "built", True)


class TargetCaller:
    """Calls one target: ``call(args)`` runs one phase; experiments use ``plain``."""

    def __init__(
        self,
        module: ModuleType,
        target: dict[str, Any],
        ctor: list[Any],
        ctor_kwargs: dict[str, Any],
    ) -> None:
        self.module = module
        self.target = target
        self.kind = target["kind"]
        self.owner: Any = None
        self.fn: Any = None
        self.dataset_iter: Any = None
        self.sets: list[list[Any]] = []
        self.keras_train = False
        # Why the module's own constructor call was not used (a guessed one was).
        self.fallback = ""
        # The symbolic inputs the graph-only checks read the traced graph with, when the
        # calls were skipped (TFG305/TFG404 only: the graph shows their effect).
        self.graph_args: tuple[list[Any], dict[str, Any]] | None = None
        self.train_iter: Any = None
        self.train_fn: Any = None
        self.factory_args: Any = None
        # The owner is the object a project test built (not the planned constructor call).
        self.from_test = False
        # A Dataset.map callback's experiments: one dataset per input set, mapped once.
        self._mapped: dict[int, tuple[list[Any], Any]] = {}
        built = ""  # how the owner was made, when not by its constructor
        path = target["path"].split(".")
        obj: Any = module
        static = None
        if self.kind == "method" and len(path) == 2:
            cls = getattr(module, path[0], None)
            static = inspect.getattr_static(cls, path[1], None) if isinstance(cls, type) else None
        if isinstance(static, (staticmethod, classmethod)):
            # Called on the class: no instance (nor constructor arguments) needed.
            obj = getattr(module, path[0])
            path = path[1:]
        elif self.kind in ("method", "keras_call", "keras_step") or (
            self.kind == "caller" and len(path) == 2
        ):
            cls = getattr(module, path[0], None)
            if not isinstance(cls, type):
                raise Unreachable(f"class {path[0]} not found in the module")
            try:
                self.owner = cls(*ctor, **ctor_kwargs)
                if _awaits_model(self.owner):
                    # A Keras callback reads the model `fit` gives it: as a test fits one.
                    built = self._owner_from_tests(cls, path[0], target) or built
                if not ctor and not ctor_kwargs and _unbuilt(self.owner):
                    # A subclassed model made without arguments has no input shape yet;
                    # the module's own factory (`build_forecaster()`) builds it.
                    made = _built_owner(module, cls, target.get("owner_factory", ""))
                    if made is not None and not _unbuilt(made):
                        self.owner = made
                        built = f"{path[0]} built by the module's {target['owner_factory']}()"
            except (Exception, SystemExit) as exc:
                # How the module itself builds one (`agent = build_agent()`): its factory.
                self.owner = _built_owner(module, cls, target.get("owner_factory", ""))
                tested = self._owner_from_tests(cls, path[0], target) if self.owner is None else ""
                if tested:
                    built = tested
                elif self.owner is None:
                    how = "with guessed arguments" if ctor_kwargs or ctor else "without arguments"
                    raise Unreachable(
                        f"{path[0]}() could not be constructed {how} "
                        f"({type(exc).__name__}: {_first_line(str(exc))[:120]}); give its "
                        f'arguments as an example for "{target["module"]}:{path[0]}"'
                    ) from exc
                else:
                    built = f"{path[0]} built by the module's {target['owner_factory']}()"
            obj = self.owner
            path = path[1:]
        for part in path:
            obj = getattr(obj, part, None)
            if obj is None:
                raise Unreachable(f"{target['path']} not found in the module")
        if not callable(obj):
            raise Unreachable(f"{target['path']} is not callable")
        if self.kind == "factory":
            obj = self._built_by(obj, ctor, ctor_kwargs)
        options = target.get("options", {})
        # Whether ``fn`` is the module's own tf.function (its options, signature and
        # jit_compile), not one dynamic mode made around a Python function.
        self.own = False
        self.via = built
        if self.kind == "wrap":
            # `g = tf.function(f, jit_compile=True, ...)` at module level: call ``g``, as the
            # module does, rather than a tf.function of dynamic mode's own around ``f``.
            made = _module_tf_function(module, obj)
            if made is not None:
                self.via = f"the module's own tf.function {made[0]}"
                obj = made[1]
        if self.kind == "keras_call":
            layer = self.owner

            def keras_call(*args: Any, **kwargs: Any) -> Any:
                return layer(*args, **kwargs)

            self.fn = tf.function(keras_call)
        elif self.kind == "keras_step":
            # Experiments call the step through a tf.function of their own; the calls go
            # through Keras's own train function (see ``call``).  Keras 3 does not
            # AutoGraph-convert its steps: neither may that tf.function (a tensor `if` in
            # `test_step` raises under `evaluate`, and must here).
            self.fn = tf.function(obj, autograph=options.get("autograph", True))
            self.keras_train = path[-1] == "train_step" and hasattr(
                self.owner, "make_train_function"
            )
        elif self.kind in ("map", "caller") or hasattr(obj, "experimental_get_tracing_count"):
            self.fn = obj  # a caller runs as plain Python: the eager code a finding is about
            self.own = self.kind not in ("map", "caller")
        elif self.kind in ("function", "factory"):
            raise Unreachable(f"{target['path']} is not a tf.function")
        else:
            self.fn = tf.function(obj, autograph=options.get("autograph", True))

    def _owner_from_tests(self, cls: type, name: str, target: dict[str, Any]) -> str:
        """Take as the owner the ``cls`` (the module's ``name``) one of the project's tests
        builds (see ``_owner_from_tests``); how it was built, or "" when no test built one."""
        tested = _owner_from_tests(
            cls, target.get("owner_tests", []), target.get("project_root", "")
        )
        if tested is None:
            return ""
        self.owner, test = tested
        self.from_test = True
        return f"{name} built as the test {test} builds it"

    def _built_by(self, factory: Any, ctor: list[Any], ctor_kwargs: dict[str, Any]) -> Any:
        """The tf.function named ``inner`` that calling ``factory`` returns (alone, or in a
        tuple or list)."""
        inner = self.target.get("inner", "")
        # What the step closes over (the model it trains), for inputs shaped for it.
        self.factory_args = SimpleNamespace(
            **{f"arg{i}": v for i, v in enumerate([*ctor, *ctor_kwargs.values()])}
        )
        try:
            made = factory(*ctor, **ctor_kwargs)
        except (Exception, SystemExit) as exc:
            raise Unreachable(
                f"{self.target['path']}() could not be called to build {inner}() "
                f"({type(exc).__name__}: {_first_line(str(exc))[:120]})"
            ) from exc
        for item in made if isinstance(made, tuple | list) else (made,):
            python = getattr(item, "python_function", item)
            if getattr(python, "__name__", None) == inner:
                return item
        raise Unreachable(f"{self.target['path']}() did not return {inner}()")

    def prepare(self, args: list[Any]) -> None:
        """Eager set-up Keras's own train function does first: compile, build, optimizer."""
        if self.kind != "keras_step":
            return
        model = self.owner
        given = self.target.get("compile_args") or self.target.get("compile_kwargs")
        if given:
            # The module's own compile(): a custom one (a GAN's two optimizers) needs its
            # own arguments.
            model.compile(
                *[make_input(s, 1, module=self.module) for s in self.target["compile_args"]],
                **{
                    k: make_input(s, 1, module=self.module)
                    for k, s in self.target["compile_kwargs"].items()
                },
            )
        elif not getattr(model, "compiled", True) or getattr(model, "optimizer", None) is None:
            model.compile(optimizer="sgd", loss="mse")
        data = args[0]
        x = data[0] if isinstance(data, tuple) else data
        try:
            model(x)
        except Exception:
            # Not built (a dict of features the step unpacks itself): an optimizer built now
            # would hold no variables, and refuse the model's when the step applies them.
            return
        with contextlib.suppress(Exception):
            model.optimizer.build(model.trainable_variables)

    def traces_symbolically(self) -> bool:
        # A Dataset.map callback is traced by .map() itself, before any element exists;
        # Keras's train function takes an iterator, and traces on its first call.
        return not self.keras_train and (
            self.kind == "map" or hasattr(self.fn, "get_concrete_function")
        )

    def trace(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.kind == "map":
            # .map() traces the callback on the element's spec, before any element runs.
            self._make_dataset(self.sets[0])
            return None
        return self.fn.get_concrete_function(*args, **kwargs)

    def call(self, args: list[Any], kwargs: dict[str, Any], index: int) -> Any:
        if self.keras_train:
            return self._keras_train_call(index)
        if self.kind != "map":
            return self.fn(*args, **kwargs)
        if self.dataset_iter is None:
            self._make_dataset(args)
        return next(self.dataset_iter)

    def _keras_train_call(self, index: int) -> Any:
        """One step of the train function ``fit`` runs (``make_train_function``), on a
        dataset whose batches are the input sets: Keras's own tf.function, options and data
        handling, one call per phase."""
        model = self.owner
        if index == 0:
            ds = None
            for batch in self.sets:
                one = tf.data.Dataset.from_tensors(batch[0])
                ds = one if ds is None else ds.concatenate(one)
            self.train_iter = iter(ds)
            made = model.make_train_function()
            self.train_fn = made if callable(made) else model.train_function
        return self.train_fn(self.train_iter)

    def _make_dataset(self, args: list[Any]) -> None:
        # The three input sets become three elements; map traces once, at .map().
        element = tuple(
            tf.nest.map_structure(lambda *parts: tf.stack(parts), *[s[i] for s in self.sets])
            for i in range(len(args))
        )
        ds = tf.data.Dataset.from_tensor_slices(element if len(element) > 1 else element[0])
        self.dataset_iter = iter(ds.map(self.fn))

    def tracing_count(self) -> int | None:
        # Keras's train function hides its tf.functions (Keras 2's is one).
        return _count_of(self.train_fn if self.keras_train else self.fn)

    def plain(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """One more graph call (experiments); for a Dataset.map callback, the element of a
        dataset mapped once for these inputs (iterating it again runs the same graph)."""
        if self.kind == "map":
            found = self._mapped.get(id(args))
            if found is None:
                element = tuple(args) if len(args) > 1 else args[0]
                found = (args, tf.data.Dataset.from_tensors(element).map(self.fn))
                self._mapped[id(args)] = found  # the inputs kept: their id stays theirs
            return next(iter(found[1]))
        return self.fn(*args, **kwargs)

    def eager(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self.kind == "map":
            return self.fn(*args, **kwargs)  # the callback's Python body, on eager tensors
        tf.config.run_functions_eagerly(True)
        try:
            return self.fn(*args, **kwargs)
        finally:
            tf.config.run_functions_eagerly(False)


def _attempt(
    probe: Probe,
    runner: TargetCaller,
    target: dict[str, Any],
    attempt: dict[str, Any],
    calls: int,
    device: str,
) -> dict[str, Any]:
    """Trace the target symbolically (its Python body runs once, on ``TensorSpec``\\ s), then
    call it ``calls`` times with concrete values of that signature.  Each is a *phase*; the
    symbolic trace, when there is one, is the first, so trace-time evidence is recorded
    before any value can fail."""
    args_shown = [_shown(s) for s in attempt["args"]]
    kwargs_shown = [f"{k}={_shown(s)}" for k, s in attempt.get("kwargs", {}).items()]
    result: dict[str, Any] = {
        "source": attempt["source"],
        "inputs": ", ".join(args_shown + kwargs_shown) or "no arguments",
        "calls": [],
    }
    if runner.kind == "caller":
        # Eager code (a training loop making a tf.function per epoch): two calls show whether
        # each call makes a new one; a third would repeat its whole run (often the slowest
        # part of a module's check) and show nothing more.
        calls = min(calls, 2)
    sets = []
    for seed in range(1, calls + 1):
        args = [make_input(s, seed, module=runner.module) for s in attempt["args"]]
        kwargs = {
            k: make_input(s, seed, module=runner.module)
            for k, s in attempt.get("kwargs", {}).items()
        }
        sets.append((args, kwargs))
    runner.sets = [a for a, _ in sets]
    if runner.keras_train:
        result["via"] = "Keras's own train function (make_train_function), one batch per call"
        if runner.via:
            result["via"] += f"; {runner.via}"
    elif runner.via:
        result["via"] = runner.via
    if runner.from_test:
        result["from_test"] = True
    if runner.kind == "map" and (
        attempt.get("kwargs") or not all(_tensors_only(s) for s in attempt["args"])
    ):
        result["error"] = "a Dataset.map callback takes tensors only"
        return result
    watches = target.get("watch", [])
    runner.prepare(sets[0][0])
    phases: list[tuple[str, Callable[[], Any]]] = []
    if runner.traces_symbolically():
        sym_args = [symbolic_input(s, runner.module) for s in attempt["args"]]
        sym_kwargs = {
            k: symbolic_input(s, runner.module) for k, s in attempt.get("kwargs", {}).items()
        }
        relaxed = [_shown(s, relaxed=True) for s in attempt["args"]]
        if relaxed != args_shown:
            result["traced_with"] = ", ".join(relaxed)
        phases.append(("trace", lambda: runner.trace(sym_args, sym_kwargs)))
    codes = {code for _, code in target.get("findings", ())}
    if phases and codes <= _GRAPH_ONLY_CODES:
        # What these codes claim shows in the traced graph; running it costs another trace
        # for the concrete shapes (an unrolled loop traces slowly) and, with XLA, a compile
        # that can take minutes on a CPU.
        xla = getattr(runner.fn, "_jit_compile", None) is True
        result["calls_skipped"] = (
            "the function is compiled with XLA (jit_compile=True) and the graph shows the "
            "effect: it was traced, not called"
            if xla
            else "the graph shows the effect: it was traced, not called"
        )
        runner.graph_args = (sym_args, sym_kwargs)
        sets = sets[:1]
    for index, (args, kwargs) in enumerate(sets if "calls_skipped" not in result else ()):
        phases.append(
            (str(index), lambda a=args, k=kwargs, i=index: runner.call(a, k, i))  # type: ignore[misc]
        )
    for label, run_phase in phases:
        phase = f"{target['id']}#{attempt['source']}#{label}"
        call: dict[str, Any] = {"exception": None, "changed": {}, "symbolic": label == "trace"}
        before = [_fingerprint(_read_watch(w, runner.module, runner.owner)) for w in watches]
        count_before = runner.tracing_count()
        with probe.recording(phase):
            try:
                with tf.device(device):
                    run_phase()
            except BaseException as exc:
                call["exception"] = _describe(probe, exc)
        count_after = runner.tracing_count()
        # Whether this phase traced (a retrace on a later call is trace time too).
        call["traced"] = (
            None if count_before is None or count_after is None else count_after > count_before
        )
        values = [_read_watch(w, runner.module, runner.owner) for w in watches]
        after = [_fingerprint(v) for v in values]
        call["missing"] = [
            w["label"] for w, v in zip(watches, values, strict=True) if v is _MISSING
        ]
        call["containers"] = [
            w["label"]
            for w, v in zip(watches, values, strict=True)
            if isinstance(v, (list, dict, set, bytearray, collections.deque))
        ]
        for w, b, a in zip(watches, before, after, strict=True):
            if b[0] != a[0]:
                call["changed"][w["label"]] = f"{b[1]} -> {a[1]}"
        if runner.kind == "caller":
            # What this call of the eager code did: tf.functions it made (and how often each
            # traced), and whether it left every tf.function running eagerly.
            call["created"] = [[line, _count_of(fn)] for line, fn in probe.created.get(phase, [])]
            call["eager_after"] = bool(tf.config.functions_run_eagerly())
            tf.config.run_functions_eagerly(False)
        call["hits"] = probe.hits.get(phase, {})
        call["eager_hits"] = probe.eager_hits.get(phase, {})
        call["lines"] = sorted(probe.lines.get(phase, ()))
        result["calls"].append(call)
        if call["exception"] is not None:
            break
    result["tracing_count"] = runner.tracing_count()
    result["sets"] = sets
    return result


# Codes whose evidence is the traced graph alone (its ops), not what calls do.
_GRAPH_ONLY_CODES = frozenset({"TFG305", "TFG404"})


def _tensors_only(spec: dict[str, Any]) -> bool:
    if spec["kind"] in ("tuple", "dict"):
        return all(_tensors_only(s) for s in _items(spec))
    return spec["kind"] == "tensor"


def _turns_on(*args: Any, **kwargs: Any) -> bool:
    return bool(args[0] if args else next(iter(kwargs.values()), False))


def _count_of(fn: Any) -> int | None:
    getter = getattr(fn, "experimental_get_tracing_count", None)
    try:
        return int(getter()) if getter is not None else None
    except Exception:
        return None


def _raised(result: dict[str, Any]) -> bool:
    """The first call of ``result`` raised."""
    calls = result.get("calls") or []
    return bool(calls) and calls[0].get("exception") is not None


def _usable(result: dict[str, Any], target: dict[str, Any]) -> bool:
    if result.get("error"):
        return False
    first = result["calls"][0] if result["calls"] else None
    if first is None:
        return False
    exc = first["exception"]
    if target["kind"] == "caller" and exc is not None:
        # Eager code that fails later on (a dataset it cannot download) has done what a
        # flagged line does by then: made its tf.function, switched to eager.
        ran = set(first.get("lines", ()))
        return any(line in ran for line, _ in target.get("findings", ()))
    if exc is None:
        # A tf.function that returns without ever tracing (left broken by an earlier failed
        # trace) showed nothing.
        return result.get("tracing_count") != 0
    mro = set(exc.get("mro", ()))
    # The error a finding predicts, at its line: a guess that fails elsewhere is a bad guess.
    lines = set(exc.get("lines") or ()) | {exc.get("line")}
    for line, types in target.get("expected", ()):
        if line in lines and mro & set(types):
            return True
    # Some errors surface away from the flagged line (TFG207: where the list is used).
    return bool(set(target.get("raised_anywhere", ())) & mro)


_RANDOM = "the traced function draws random numbers, so results cannot be compared"


def _draws_random(runner: TargetCaller, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """Whether the traced graph (or a function in its library: loop bodies, branches) holds a
    stateful random op: its results differ call to call, so they prove nothing compared."""
    try:
        graph_def = runner.fn.get_concrete_function(*args, **kwargs).graph.as_graph_def()
    except Exception:
        return False
    ops = {n.op for n in graph_def.node}
    for fn in graph_def.library.function:
        ops.update(n.op for n in fn.node_def)
    return any(
        ("Random" in op or op in ("Multinomial", "TruncatedNormal")) and "Stateless" not in op
        for op in ops
    )


class _State:
    """The variables a traced function captures: restored before each experiment call and
    read after it, so a training step (which updates its weights) can be compared run to
    run, and a change that only reaches the weights (a learning rate) is seen."""

    def __init__(self, runner: TargetCaller, args: list[Any], kwargs: dict[str, Any]) -> None:
        self.variables: list[Any] = []
        with contextlib.suppress(Exception):
            concrete = runner.fn.get_concrete_function(*args, **kwargs)
            self.variables = [v for v in concrete.variables if hasattr(v, "assign")]
        self.saved = [v.numpy() for v in self.variables]

    def observe(self, call: Callable[[], Any]) -> list[Any]:
        for v, value in zip(self.variables, self.saved, strict=True):
            v.assign(value)
        out = _outputs(call())
        return out + [np.asarray(v.numpy()) for v in self.variables]

    def restore(self) -> None:
        for v, value in zip(self.variables, self.saved, strict=True):
            with contextlib.suppress(Exception):
                v.assign(value)


def _staged_values(old: Any) -> list[Any]:
    """New values for a number or bool the function read while tracing, most telling first:
    a value that moves nothing (a threshold already past every draw, a scale the output
    ignores) leaves the eager run as it was too, so the next one is tried."""
    if isinstance(old, bool):
        return [not old]
    if isinstance(old, int):
        return [old * 2 + 1, 0, -old - 1, old * 10 + 10]
    if isinstance(old, float):
        # Orders of magnitude too: a sampling temperature shows at 0.1, rarely at 0.25.
        return [old * 2.0 + 1.0, 0.0, -old - 1.0, old / 4.0, old / 10.0, old * 10.0 + 10.0]
    return []


def _stale(
    runner: TargetCaller,
    attempt: dict[str, Any],
    result: dict[str, Any],
    watch: dict[str, Any],
) -> dict[str, Any]:
    """Change what the function read while tracing (a module global, an attribute of its own
    object or of a global), call the traced function and an eager run again."""
    label = watch["label"]
    if watch["kind"] == "self":
        holder: Any = runner.owner
        attr = watch["attr"]
    elif watch["kind"] == "global_attr":
        holder, attr = getattr(runner.module, watch["name"], None), watch["attr"]
    else:
        holder, attr = runner.module, watch["name"]
    old = _MISSING if holder is None else getattr(holder, attr, _MISSING)
    if old is _MISSING:
        where = "a module global" if watch["kind"] == "global" else "set on its object"
        return {"error": f"{label} is not {where}"}
    values = _staged_values(old)
    if not values:
        return {"error": f"{label} is a {type(old).__name__}; only numbers and bools are changed"}
    args, kwargs = result["sets"][0]
    seeded = _draws_random(runner, args, kwargs)
    # Several inputs of the same signature (no new trace), tried one at a time: one input may
    # give the same result either way (a greedy action that happens to equal the seeded random
    # one); eight rarely all do.  The calls' own inputs first, more made only when needed.
    sets = list(result["sets"])

    def input_set(i: int) -> tuple[list[Any], dict[str, Any]]:
        while len(sets) <= i:
            seed = len(sets) + 1
            sets.append(
                (
                    [make_input(s, seed, module=runner.module) for s in attempt["args"]],
                    {
                        k: make_input(s, seed, module=runner.module)
                        for k, s in attempt.get("kwargs", {}).items()
                    },
                )
            )
        return sets[i]

    def traced(i: int) -> Any:
        _reseed(seeded)
        return runner.plain(*input_set(i))

    def eager(i: int) -> Any:
        _reseed(seeded)
        return runner.eager(*input_set(i))

    state = _State(runner, args, kwargs)
    bases: dict[int, tuple[list[Any], list[Any]]] = {}

    def base(i: int) -> tuple[list[Any], list[Any]]:
        """The traced and eager results of input ``i`` before any change, each checked to
        repeat (a difference later must come from the change)."""
        if i not in bases:
            first = state.observe(lambda: traced(i))
            if not _same(first, state.observe(lambda: traced(i))):
                raise _Unsteady("the traced function is not deterministic")
            eager_old = state.observe(lambda: eager(i))
            if seeded and not _same(eager_old, state.observe(lambda: eager(i))):
                raise _Unsteady("the eager run is not deterministic, even with the seeds reset")
            bases[i] = (first, eager_old)
        return bases[i]

    out: dict[str, Any] = {}
    try:
        base(0)
        raised = []
        for new in values:
            for i in range(8):
                try:
                    if i and _repeats_input(input_set(i), sets[:i]):
                        continue  # the module's own argument, the same on every seed
                    traced_old, eager_old = base(i)
                except _Unsteady:
                    raise
                except Exception:
                    break  # no more inputs can be made
                setattr(holder, attr, new)
                try:
                    traced_new = state.observe(lambda i=i: traced(i))  # type: ignore[misc]
                    eager_new = state.observe(lambda i=i: eager(i))  # type: ignore[misc]
                except Exception as exc:
                    # The value itself may be out of range (a temperature of 0): no evidence.
                    raised.append(f"{new!r}: {type(exc).__name__}")
                    break
                finally:
                    setattr(holder, attr, old)
                out = {
                    "old": repr(old)[:40],
                    "new": repr(new)[:40],
                    # Both on the same input: a graph that follows the value changes with it.
                    "traced_changed": not _same(traced_old, traced_new),
                    "eager_changed": not _same(eager_old, eager_new),
                    "seeded": seeded,
                }
                if out["traced_changed"] or out["eager_changed"]:
                    break
            # A value the eager run does not notice shows nothing either way: try the next.
            if out and (out["traced_changed"] or out["eager_changed"]):
                break
        if raised:
            out["raised"] = raised
        if not out:
            return {"error": "every staged value raised (" + ", ".join(raised) + ")"}
    except Exception as exc:
        return {
            "error": str(exc)
            if isinstance(exc, _Unsteady)
            else (f"{type(exc).__name__}: {_first_line(str(exc))[:200]}")
        }
    finally:
        state.restore()
    return out


def _repeats_input(one: Any, earlier: list[Any]) -> bool:
    """Whether an input set holds the same values as one already tried."""
    values = _outputs(one)
    return any(_same(values, _outputs(e)) for e in earlier)


class _Unsteady(Exception):
    """A compared run does not repeat its own result: nothing can be read from a change."""


def _reseed(seeded: bool) -> None:
    """Before each compared call of a function that draws random numbers: the same global
    seeds (TensorFlow's, Python's, NumPy's), so its draws repeat call to call, traced and
    eager alike (each against itself)."""
    if seeded:
        tf.random.set_seed(_SEED)
        random.seed(_SEED)
        np.random.seed(_SEED)


_SEED = 1234


def _eager_diff(runner: TargetCaller, result: dict[str, Any]) -> dict[str, Any]:
    """Compare the traced result with eager runs of the same inputs (TFG209), each call
    from the same variable values."""
    args, kwargs = result["sets"][0]
    first = result["calls"][0]
    if first["exception"] is not None:
        return {"error": f"the traced call raised {first['exception']['type']} first"}
    if _draws_random(runner, args, kwargs):
        return {"error": _RANDOM}
    state = _State(runner, args, kwargs)
    try:
        eager1 = state.observe(lambda: runner.eager(args, kwargs))
        eager2 = state.observe(lambda: runner.eager(args, kwargs))
        if not _same(eager1, eager2):
            return {"error": "the eager result is not deterministic"}
        traced1 = state.observe(lambda: runner.plain(args, kwargs))
        traced2 = state.observe(lambda: runner.plain(args, kwargs))
    except Exception as exc:
        return {
            "error": f"a comparison call raised {type(exc).__name__}: {_first_line(str(exc))[:150]}"
        }
    finally:
        state.restore()
    if not _same(traced1, traced2):
        return {"error": "the traced result is not deterministic"}
    return {"differs": not _same(traced1, eager1), "traced": _show(traced1), "eager": _show(eager1)}


def _shapes(
    runner: TargetCaller, result: dict[str, Any], attempt: dict[str, Any], base: int
) -> dict[str, Any]:
    """New batch sizes, same dtypes: how many new traces (TFG301)."""
    if not any(_has_batch(s, runner.module) for s in attempt["args"]):
        return {"error": "no argument has a batch dimension to vary"}
    before = runner.tracing_count()
    sizes = [base + 1, base + 2]
    counts = []
    try:
        for size in sizes:
            args = [make_input(s, 7, size, runner.module) for s in attempt["args"]]
            kwargs = {
                k: make_input(s, 7, size, runner.module)
                for k, s in attempt.get("kwargs", {}).items()
            }
            runner.plain(args, kwargs)
            counts.append(runner.tracing_count())
    except Exception as exc:
        raised = f"{type(exc).__name__}: {_first_line(str(exc))[:150]}"
        after = runner.tracing_count()
        last = counts[-1] if counts else before
        if after is not None and last is not None and after > last:
            # The new size traced, then its guessed values failed when the graph ran.
            counts.append(after)
            return {
                "before": before,
                "counts": counts,
                "sizes": sizes[: len(counts)],
                "raised": raised,
            }
        return {"error": f"a call with a new batch size raised {raised}"}
    return {"before": before, "counts": counts, "sizes": sizes}


def _timing(runner: TargetCaller, result: dict[str, Any], repeats: int = 15) -> dict[str, Any]:
    """Median per-call time of the traced function and of its Python body run eagerly."""
    args, kwargs = result["sets"][0]
    python = getattr(runner.fn, "python_function", None)
    if python is None:
        return {"error": "no Python function behind the tf.function"}

    def timed(fn: Callable[..., Any]) -> float:
        samples = []
        for _ in range(3):
            _outputs(fn(*args, **kwargs))
        for _ in range(repeats):
            start = _perf_counter()
            _outputs(fn(*args, **kwargs))  # fetching the result waits for the device
            samples.append(_perf_counter() - start)
        return statistics.median(samples)

    try:
        traced = timed(runner.fn)
        eager = timed(python)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {_first_line(str(exc))[:150]}"}
    return {"traced_us": traced * 1e6, "eager_us": eager * 1e6, "repeats": repeats}


def _shown(spec: dict[str, Any], *, relaxed: bool = False) -> str:
    """``float32[2,3]``: the sizes actually run (or, ``relaxed``, traced: ``float32[None,3]``)."""
    if spec["kind"] == "py":
        return "py:" + spec["repr"]
    if spec["kind"] == "expr":
        # `__import__('importlib').import_module('pkg.models').build()` as `pkg.models.build()`
        text = _IMPORTED.sub(_module_prefix, spec["source"])
        text = text if len(text) <= 40 else text[:37] + "..."
        return f"{spec['scope']}: {text}" if spec.get("scope") else text
    if spec["kind"] == "tuple":
        return "(" + ", ".join(_shown(s, relaxed=relaxed) for s in spec["items"]) + ")"
    if spec["kind"] == "variables":
        if spec.get("one"):
            return "Variable " + _shown(spec["items"][0])
        return "[" + ", ".join("Variable " + _shown(s) for s in spec["items"]) + "]"
    if spec["kind"] == "dict":
        shown = (f"{k}: {_shown(v, relaxed=relaxed)}" for k, v in spec["items"].items())
        return "{" + ", ".join(shown) + "}"
    if spec["kind"] == "dataset":
        return "Dataset of " + _shown(spec["element"], relaxed=relaxed)
    shape = spec.get("relaxed") if relaxed and "relaxed" in spec else spec["shape"]
    if shape is None:
        return f"{spec['dtype']}[?]"
    shown = f"{spec['dtype']}[{','.join(str(d) for d in shape)}]"
    if spec.get("image"):
        return f"{shown} ({spec['image'].upper()}-encoded images)"
    return f"{shown} (CSV lines of {spec['fields']} fields)" if spec.get("fields") else shown


_IMPORTED = re.compile(r"__import__\('([\w.]+)'\)(?:\.import_module\('([\w.]+)'\))?\.")


def _module_prefix(found: re.Match[str]) -> str:
    return f"{found.group(2) or found.group(1)}."


def _keras_model_type() -> Any:
    try:
        import keras

        return keras.Model
    except ImportError:
        return tf.keras.Model


def _io_shapes(model: Any) -> tuple[list[int], list[int]] | None:
    """(input shape, output shape) of a model with one known input and one output, the
    unknown dims given a small size."""
    try:
        inputs, outputs = list(model.inputs or ()), list(model.outputs or ())
    except Exception:
        inputs, outputs = [], []
    if not inputs and not outputs:
        return _built_shapes(model)
    if len(inputs) != 1 or len(outputs) != 1:
        return None
    try:
        x_shape = [2] + [2 if d is None else int(d) for d in tuple(inputs[0].shape)[1:]]
        out_shape = [2] + [2 if d is None else int(d) for d in tuple(outputs[0].shape)[1:]]
    except (TypeError, ValueError):
        return None
    return x_shape, out_shape


def _built_shapes(model: Any) -> tuple[list[int], list[int]] | None:
    """(input shape, output shape) of a subclassed model built for one input
    (``model.build((None, 16, 4))``): Keras 3 and Keras 2 keep the shape it was built for;
    the output's is what one eager call on zeros of that shape gives."""
    if not getattr(model, "built", False):
        return None
    given = getattr(model, "_build_shapes_dict", None)
    shape = None
    if isinstance(given, dict) and len(given) == 1:
        shape = next(iter(given.values()))
    elif given is None:
        shape = getattr(model, "_build_input_shape", None)
    try:
        dims = [int(d) if d is not None else None for d in tuple(shape)]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if len(dims) < 2:
        return None
    x_shape = [2] + [2 if d is None else d for d in dims[1:]]
    try:
        out = model(tf.zeros(x_shape), training=False)
        out_shape = [int(d) for d in out.shape]
    except Exception:
        return None
    return x_shape, out_shape


def _step_attempts(owner: Any, first: dict[str, Any]) -> list[dict[str, Any]]:
    """Guesses for a Keras step shaped like the models it holds: the model itself when it
    is functional, else its sub-models (a GAN's discriminator takes the real images, its
    generator the noise: both are tried, in the order the constructor set them)."""
    data = first["args"][0] if first["args"] else None
    if data is None or data["kind"] not in ("tuple", "tensor"):
        return []
    models = _held_models(owner)
    out = []
    seen = []
    for model in models:
        shapes = _io_shapes(model)
        if shapes is None or shapes in seen:
            continue
        seen.append(shapes)
        x_shape, out_shape = shapes
        x = _tensor_spec("float32", x_shape)
        spec = x
        if data["kind"] == "tuple":
            spec = {
                "kind": "tuple",
                "items": [x, _tensor_spec("float32", out_shape), *data["items"][2:]],
            }
        out.append({"source": "guessed", "shown": _shown(spec), "args": [spec], "kwargs": {}})
    return out[:3]


def _tensor_spec(dtype: str, shape: list[int]) -> dict[str, Any]:
    # Traced with an unknown batch size, as Keras's own train function does.
    return {"kind": "tensor", "dtype": dtype, "shape": shape, "relaxed": [None, *shape[1:]]}


def _defining_globals(module: ModuleType, target: dict[str, Any]) -> dict[str, Any]:
    """The globals of the module that defines a function target: the module itself, or the
    one a tf.function it imports comes from (whose models the function uses)."""
    obj: Any = module
    for part in target["path"].split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return vars(module)
    python = getattr(obj, "python_function", obj)
    found = getattr(inspect.unwrap(python), "__globals__", None)
    return found if isinstance(found, dict) else vars(module)


def _model_attempts(
    module: ModuleType,
    target: dict[str, Any],
    first: dict[str, Any],
    owner: Any = None,
) -> list[dict[str, Any]]:
    """Guesses shaped like a Keras model the module has built at import (``model =
    build_model()`` with an ``Input``), or, for a method, one its object holds
    (``self.q_net``): a step function usually feeds it a batch, and its labels are class ids
    or match the model's output."""
    model_type = _keras_model_type()
    roles = target["roles"]
    inputs = ("tensor", "image", "audio", "example")  # what a model's input shape replaces
    if not set(inputs) & set(roles) or len(roles) != len(first["args"]):
        return []
    passed = {}
    for role, given in zip(roles, first["args"], strict=True):
        if role == "model" and given["kind"] == "expr":
            # The model the attempt passes (built by the module's own builder) comes first.
            with contextlib.suppress(Exception):
                passed[f"arg{len(passed)}"] = make_input(given, 1, module=module)
    if passed:
        scope = passed
        owner = passed  # in the order given
    elif owner is not None:
        try:
            scope = dict(vars(owner))
        except TypeError:
            return []
    elif target["kind"] == "function":
        scope = _defining_globals(module, target)
    else:
        scope = vars(module)
    # Insertion order for an object (the constructor's order: its main model first).
    for name in scope if owner is not None else sorted(scope):
        model = scope[name]
        shapes = _io_shapes(model) if isinstance(model, model_type) else None
        if shapes is None:
            continue
        x_shape, out_shape = shapes
        x = {"kind": "tensor", "dtype": "float32", "shape": x_shape}
        # One example (the body adds the batch axis itself): the model's input less its batch.
        one = {"kind": "tensor", "dtype": "float32", "shape": x_shape[1:]}
        classes = out_shape[-1] if len(out_shape) > 1 and out_shape[-1] > 1 else 2
        labels = [
            {"kind": "tensor", "dtype": "int32", "shape": [2], "values": [0, classes]},
            {"kind": "tensor", "dtype": "float32", "shape": out_shape},
        ]
        if len(out_shape) != 2:
            # Not (batch, classes): a sequence or a map (a forecast, a segmentation), whose
            # targets are most often shaped like it; the class ids come second.
            labels.reverse()
        # A mask beside images a model maps to images (a segmentation): shaped like its output.
        mask = (
            {"kind": "tensor", "dtype": "float32", "shape": out_shape}
            if len(out_shape) == 4
            else None
        )
        out = []
        for label in labels if "label" in roles else labels[:1]:
            args = [
                one
                if role == "example"
                else x
                if role in inputs
                else label
                if role == "label"
                else labels[1]
                if role in ("target", "prediction")  # shaped like the model's output
                else mask
                if role == "mask" and mask is not None
                else given
                for role, given in zip(roles, first["args"], strict=True)
            ]
            out.append(
                {
                    "source": "guessed",
                    "shown": ", ".join(_shown(a) for a in args),
                    "args": args,
                    "kwargs": first.get("kwargs", {}),
                }
            )
        return out
    return []


def _held_models(owner: Any) -> list[Any]:
    """``owner`` if it is a Keras model, then the Keras models its attributes hold, in the
    order its constructor set them (a GAN's discriminator, then its generator)."""
    model_type = _keras_model_type()
    held = [owner] if isinstance(owner, model_type) else []
    try:
        return held + [v for v in vars(owner).values() if isinstance(v, model_type)]
    except TypeError:  # an object without a __dict__
        return held


def _output_attempts(module: ModuleType, first: dict[str, Any], owner: Any) -> list[dict[str, Any]]:
    """Guesses whose parts read by key (``targets["mask"]``) are shaped like the dict a model
    the object holds returns for the guessed batch: class ids for a part with classes on its
    last axis (what a sparse cross-entropy takes), the output's own shape otherwise."""
    held = _held_models(owner)
    args = first["args"]
    if len(args) == 1 and args[0]["kind"] == "tuple":
        # A Keras step's data, `(images, targets)`: the same, inside the tuple.
        inner = {**first, "args": args[0]["items"]}
        return [
            {
                **found,
                "args": [{"kind": "tuple", "items": found["args"]}],
                "shown": _shown({"kind": "tuple", "items": found["args"]}),
            }
            for found in _output_attempts(module, inner, owner)
        ]
    batch = next(
        (
            i
            for i, a in enumerate(args)
            if a["kind"] == "tensor" and a["dtype"] == "float32" and len(a["shape"]) >= 2
        ),
        None,
    )
    keyed = [i for i, a in enumerate(args) if a["kind"] == "dict"]
    if batch is None or not keyed:
        return []
    for model in held:
        try:
            out = model(make_input(args[batch], 1, module=module), training=False)
        except Exception:
            continue
        if not isinstance(out, dict):
            continue
        shaped = list(args)
        for i in keyed:
            items = dict(args[i]["items"])
            for key in items:
                if key not in out or not hasattr(out[key], "shape"):
                    continue
                dims = [int(d) for d in out[key].shape]
                if len(dims) > 1 and dims[-1] > 1:
                    items[key] = {**_tensor_spec("int32", dims[:-1]), "values": [0, dims[-1]]}
                else:
                    items[key] = _tensor_spec("float32", dims)
            shaped[i] = {"kind": "dict", "items": items}
        if shaped != args:
            shown = ", ".join(_shown(a) for a in shaped)
            return [
                {
                    "source": "guessed",
                    "shown": shown,
                    "args": shaped,
                    "kwargs": first.get("kwargs", {}),
                }
            ]
    return []


_DTYPE_CLASH = re.compile(r"has type (\w+) that does not match expected type of (\w+)")
_ARG_CLASH = re.compile(r"has type (\w+) that does not match type (\w+) of argument")
_DIM_CLASH = re.compile(r"Dimensions must be equal, but are (\d+) and (\d+)")
_SPEC_CLASH = re.compile(
    r"Can not cast TensorSpec\(shape=\(([^)]*)\), dtype=tf\.(\w+)[^)]*\) to "
    r"TensorSpec\(shape=\(([^)]*)\), dtype=tf\.(\w+)"
)
_PY_FLOAT_CLASH = re.compile(
    r"Expected (int32|int64) passed to parameter '\w+' of op '\w+', got [-+.\w]+ of type 'float'"
)
# A Keras layer's input spec: "expected min_ndim=4, found ndim=2" (a Conv2D fed a matrix).
_NDIM_CLASH = re.compile(r"expected (?:min_)?ndim=(\d+), found ndim=(\d+)")
# The same, told by what the body does with the guess's shape: `batch, steps, width =
# x.shape` on a matrix ("not enough values to unpack (expected 3, got 2)"), `x[:, :, 0]`
# ("Index out of range using input dim 2; input has only 2 dims").
_UNPACK_CLASH = re.compile(r"not enough values to unpack \(expected (\d+), got (\d+)\)")
_INDEX_DIM_CLASH = re.compile(
    r"Index out of range using input dim (\d+); input has only (\d+) dims"
)
# A reduction over an axis the guess lacks: "Invalid reduction dimension 1 for input with 1
# dimensions" (`tf.reduce_sum(labels, axis=[1, 2])` on a vector).
_REDUCE_CLASH = re.compile(r"Invalid reduction dimension (\d+) for input with (\d+) dimensions")
# An op that takes a scalar: "Shape must be rank 0 but is rank 2 for 'limit' for ... Range".
_SCALAR_CLASH = re.compile(r"Shape must be rank 0 but is rank (\d+) for '(\w+)'")
# An op's input of another rank: "Shape must be rank 0 but is rank 1 for '{{node DecodePng}}
# = ...' with input shapes: [2]" (a decoder takes one encoded string), "Shape must be rank 2
# but is rank 1 for '{{node concat}} = ConcatV2[...]' with input shapes: [2,2], [2], []".
_NODE_RANK_CLASH = re.compile(
    r"Shape must be rank (\d+) but is rank (\d+) for '\{\{node [^}]*\}\}[^']*' with input "
    r"shapes: ((?:\[[\d,]*\](?:, )?)+)"
)
# A tensor subscripted with a string key: "... are valid indices, got 'image'".
_KEY_CLASH = re.compile(r"are valid indices, got '([^']+)'")
# A key a dict guess lacks, as Keras wraps the KeyError ("\x1b[1mseason\x1b[0m").
# str() of a KeyError is the repr of its text: the escape may be spelt out.
_KERAS_KEY = re.compile(r"(?:\x1b|\\x1b)\[1m'?([^'\x1b\\]+?)'?(?:\x1b|\\x1b)\[0m")
# "Input 'num_elements' of 'TensorListReserve' Op has type float32 that does not match
# expected type of int32": one argument must be integers.
_INPUT_CLASH = re.compile(
    r"Input '(\w+)' of '\w+' Op has type (float\d+) that does not match expected type of "
    r"(int32|int64)"
)


def _rank_shape(rank: int) -> list[int]:
    """A small batch of that rank: ``[2, 3]``, ``[2, 4, 3]``, ``[2, 4, 4, 3]``..."""
    return [2, *([4] * (rank - 2)), 3] if rank >= 2 else [2] * rank


# tf.io.decode_csv on a guessed string: "Expect 2 fields but have 1 in record 0".
# An image decoder on a guessed string: "Unknown image file format. One of JPEG, ... required."
# The op that failed names the format it needs (DecodeAndCropJpeg takes JPEG only).
_IMAGE_CLASH = re.compile(r"Unknown image file format")
_JPEG_OP = re.compile(r"DecodeJpeg|DecodeAndCropJpeg")
_CSV_CLASH = re.compile(r"Expect (\d+) fields but have \d+ in record")
_RANK_CLASH = re.compile(r"target\.shape=\(([^)]*)\), output\.shape=\(([^)]*)\)")
_SPARSE_CLASH = "must have rank (ndim) `target.ndim - 1`"
# Keras: "expected axis -1 of input shape to have value 4, but received input with shape (2, 3)"
_AXIS_CLASH = re.compile(
    r"expected axis -1 of input shape to have value (\d+), but received input with shape "
    r"\(([^)]*)\)"
)


# Keras's functional Input: "is incompatible with the layer: expected shape=(None, 32, 32,
# 3), found shape=(2, 4, 4, 3)".
_INPUT_SHAPE_CLASH = re.compile(r"expected shape=\(([^)]*)\), found shape=\(([^)]*)\)")
# A strided slice past the guess: "slice index 499 of dimension 0 out of bounds".
_SLICE_CLASH = re.compile(r"slice index (\d+) of dimension (\d+) out of bounds")
# `tf.math.top_k(scores, k=10)` on scores as wide as the guessed batch ("input must have
# last dimension >= k = 10 but is 2": the candidates a query is scored against).
_TOP_K_CLASH = re.compile(r"must have last dimension >= k = (\d+) but is (\d+)")


def _last_dims(message: str) -> tuple[int, int] | None:
    """(size given, size wanted) of the last axis, from a matmul's or a Keras layer's error."""
    if m := _DIM_CLASH.search(message):
        return int(m.group(1)), int(m.group(2))
    if (m := _AXIS_CLASH.search(message)) and (received := _dims(m.group(2))):
        return received[-1], int(m.group(1))
    return None


def _dims(text: str) -> list[int] | None:
    """``"None, 8"`` -> ``[2, 8]`` (unknown dims get a small size)."""
    try:
        return [2 if d.strip() == "None" else int(d) for d in text.split(",") if d.strip()]
    except ValueError:
        return None


Fix = Callable[[dict[str, Any]], dict[str, Any]]


def _fix_for(message: str) -> Fix | None:
    """How to correct guessed specs the way TensorFlow's error asks: the dtype an op wants,
    the size a matmul needed, the spec an inner tf.function's signature takes, the labels a
    loss wanted."""
    if (m := _DTYPE_CLASH.search(message)) or (m := _ARG_CLASH.search(message)):
        have, want = m.groups()
        if m.re is _ARG_CLASH and want.startswith("int") and have.startswith("float"):
            # "Input 'y' of 'Sub' Op has type float32 that does not match type int32 of
            # argument 'x'": the int guess (a label) becomes the float type.
            have, want = want, have
        if want not in ("string", "int32", "int64", "float32", "float64", "bool"):
            return None

        def retype(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] == "tensor" and spec["dtype"] == have:
                shape = spec["shape"][:1] if want == "string" else spec["shape"]
                return {**spec, "dtype": want, "shape": shape}
            return spec

        return retype
    if m := _PY_FLOAT_CLASH.search(message):
        # "Expected int32 passed to parameter 'y' of op 'Mul', got 1.5 of type 'float'": the
        # int guess (a label scaled by a Python float) holds floats.
        have = m.group(1)

        def floats(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] == "tensor" and spec["dtype"] == have:
                return {k: v for k, v in spec.items() if k != "values"} | {"dtype": "float32"}
            return spec

        return floats
    ranks = None
    if m := _NDIM_CLASH.search(message) or _UNPACK_CLASH.search(message):
        ranks = int(m.group(1)), int(m.group(2))
    elif m := _INDEX_DIM_CLASH.search(message):
        ranks = int(m.group(1)) + 1, int(m.group(2))
    if ranks is not None:
        wanted, found = ranks

        def reshape(spec: dict[str, Any]) -> dict[str, Any]:
            floats = spec["kind"] == "tensor" and spec["dtype"].startswith("float")
            if floats and len(spec["shape"]) == found and wanted >= 1:
                return {**spec, "shape": _rank_shape(wanted)}
            return spec

        return reshape
    if m := _REDUCE_CLASH.search(message):
        axis, found = int(m.group(1)), int(m.group(2))

        def widen(spec: dict[str, Any]) -> dict[str, Any]:
            shape = spec.get("shape")
            if spec["kind"] == "tensor" and shape is not None and len(shape) == found:
                # The axes it reduces over, of a small size each.
                return {**spec, "shape": [*shape, *([4] * (axis + 1 - found))]}
            return spec

        return widen
    if m := _NODE_RANK_CLASH.search(message):
        want, have = int(m.group(1)), int(m.group(2))
        given = [_dims(d) or [] for d in re.findall(r"\[([\d,]*)\]", m.group(3))]
        wrong = [d for d in given if len(d) == have]

        def rerank(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] != "tensor" or spec["shape"] not in wrong:
                return spec
            shape = spec["shape"][:want] + [3] * (want - have)
            return {**spec, "shape": shape, "relaxed": [None, *shape[1:]] if shape else []}

        return rerank
    if m := _CSV_CLASH.search(message):
        fields = int(m.group(1))

        def as_csv(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] == "tensor" and spec["dtype"] == "string":
                return {**spec, "fields": fields}
            return spec

        return as_csv
    if _IMAGE_CLASH.search(message):
        encoding = "jpeg" if _JPEG_OP.search(message) else "png"

        def as_image(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] == "tensor" and spec["dtype"] == "string" and not spec.get("image"):
                return {**spec, "image": encoding}
            return spec

        return as_image
    if m := _INPUT_SHAPE_CLASH.search(message):
        wanted_shape, found_shape = _dims(m.group(1)), _dims(m.group(2))

        def refit(spec: dict[str, Any]) -> dict[str, Any]:
            # A functional model's Input: the guess of the shape it found gets the one it
            # expected (unknown dims small).
            if spec["kind"] == "tensor" and wanted_shape and spec["shape"] == found_shape:
                return {**spec, "shape": wanted_shape}
            return spec

        return refit
    if m := _SLICE_CLASH.search(message):
        index, axis = int(m.group(1)), int(m.group(2))

        def grow(spec: dict[str, Any]) -> dict[str, Any]:
            # `x[i]` for i up to a literal bound: the axis must hold that many items.  A loop
            # over the axis (`for day in range(DAYS): x[:, day]`) asks one more each time:
            # four times the size saves most of the retries.
            shape = spec.get("shape") or []
            if spec["kind"] == "tensor" and axis < len(shape) and shape[axis] <= index:
                size = max(index + 1, 4 * shape[axis])
                return {**spec, "shape": [*shape[:axis], size, *shape[axis + 1 :]]}
            return spec

        return grow
    if m := _TOP_K_CLASH.search(message):
        k, size = int(m.group(1)), int(m.group(2))

        def widen_to_k(spec: dict[str, Any]) -> dict[str, Any]:
            # Every axis of the guessed size grows to k: the scores' last axis came from one.
            shape = spec.get("shape") or []
            if spec["kind"] == "tensor" and size in shape:
                return {**spec, "shape": [k if d == size else d for d in shape]}
            return spec

        return widen_to_k
    sizes = _last_dims(message)
    if sizes is not None:
        old, new = sizes

        def resize(spec: dict[str, Any]) -> dict[str, Any]:
            floats = spec["kind"] == "tensor" and spec["dtype"].startswith("float")
            if floats and spec["shape"] and spec["shape"][-1] == old:
                return {**spec, "shape": [*spec["shape"][:-1], new]}
            return spec

        return resize
    if m := _SPEC_CLASH.search(message):
        source, wanted = _dims(m.group(1)), _dims(m.group(3))
        from_dtype, to_dtype = m.group(2), m.group(4)

        def respec(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] != "tensor" or source is None or wanted is None:
                return spec
            extra = len(source) - len(spec["shape"])  # dims the function added itself
            if spec["dtype"] == from_dtype and 0 <= extra < len(wanted):
                return {**spec, "dtype": to_dtype, "shape": wanted[extra:]}
            return spec

        return respec
    if (m := _RANK_CLASH.search(message)) and _SPARSE_CLASH in message:
        # A sparse loss: one class id per row of the output ("`output` must have rank (ndim)
        # `target.ndim - 1`"): int ids shaped like the output without its class axis.
        target, output = _dims(m.group(1)), _dims(m.group(2))

        def sparse(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] != "tensor" or not output or spec["shape"] != target:
                return spec
            return {**_tensor_spec("int32", output[:-1]), "values": [0, output[-1]]}

        sparse.labels_only = True  # type: ignore[attr-defined]
        return sparse
    if m := _RANK_CLASH.search(message):
        target, output = _dims(m.group(1)), _dims(m.group(2))

        def relabel(spec: dict[str, Any]) -> dict[str, Any]:
            # The labels a loss compared with the model's output: integer class ids, or
            # targets of another shape, become floats shaped like the output.
            if spec["kind"] != "tensor" or not output:
                return spec
            if spec["dtype"].startswith("int") or spec["shape"] == target:
                return {**spec, "dtype": "float32", "shape": output}
            return spec

        relabel.labels_only = True  # type: ignore[attr-defined]
        return relabel
    return None


def _reformatted(attempt: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    """A usable guess whose traced graph then failed on the strings it was fed (a Dataset.map
    callback decoding images or CSV lines: the trace runs on specs, the elements on values):
    the same guess with strings of the format the op wants, so that the calls run too."""
    calls = result["calls"][1:] if result["calls"] and result["calls"][0]["symbolic"] else []
    failed = next((c["exception"] for c in calls if c["exception"] is not None), None)
    if failed is None:
        return None
    message = failed.get("detail") or failed.get("message", "")
    if not (_IMAGE_CLASH.search(message) or _CSV_CLASH.search(message)):
        return None
    return _adapted(attempt, {"calls": [{"exception": failed}]})


def _adapted(
    attempt: dict[str, Any], result: dict[str, Any], target: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The guess again, corrected as the first call's error asks (see ``_fix_for``)."""
    if attempt["source"] not in ("guessed", "annotations", "the module's own calls") or not (
        result.get("calls")
    ):
        return None
    exc = result["calls"][0].get("exception") or {}
    message = exc.get("detail") or exc.get("message", "")
    names = (target or {}).get("names") or []
    if named := _named_operand(attempt, message, names):
        return named
    # The parameters the failing line of the module names (`tf.io.decode_png(raw, ...)`):
    # those the error is about, when the message names none.
    at_line = _named_at_line(target, exc, names)
    if m := _ALLOWED_CLASH.search(message):
        return _retyped_one(
            attempt, *m.groups(), message=f"{message} {' '.join(at_line)}", names=names
        )
    if m := _INPUT_CLASH.search(message):
        param, have, want = m.groups()
        return _retyped_one(attempt, param, have, want, message=message, names=names)
    if m := _SCALAR_CLASH.search(message):
        rank = int(m.group(1))
        return _retyped_one(attempt, m.group(2), "", "int32", rank, message=message, names=names)
    if m := _KEY_CLASH.search(message):
        return _keyed_one(attempt, m.group(1))
    if exc.get("type") == "KeyError":
        return _key_added(attempt, exc)
    found = _fix_for(message)
    if found is None:
        return None
    fix_spec = found
    if (
        (m := _ARG_CLASH.search(message))
        and m.group(1).startswith("float")
        and m.group(2).startswith("int")
        and not _holds(attempt, m.group(2))
    ):
        # "Input 'y' of 'Less' Op has type float32 that does not match type int32 of
        # argument 'x'" with no int guess to make float: a float guess compared with an
        # int of the function's own (a loop counter) is an int scalar, one at a time.
        return _retyped_one(
            attempt, "compared", m.group(1), m.group(2), -1, message=message, names=names
        )

    labels_only = getattr(fix_spec, "labels_only", False)
    # The parameters the failing line names (`self.loss_fn(speakers, logits)`): the labels
    # a loss compared, the operand an op got of the wrong dtype.
    only = (
        {i for i, n in enumerate(names) if n in at_line}
        if (_DTYPE_CLASH.search(message) or labels_only) and len(attempt["args"]) > 1
        else set()
    )

    def fix(spec: dict[str, Any]) -> dict[str, Any]:
        if spec["kind"] == "tuple" and labels_only:
            # A Keras step's (x, y, ...): what a loss compared is y, never x.
            head, *rest = spec["items"]
            return {**spec, "items": [head, *(fix(s) for s in rest)]}
        if spec["kind"] == "tuple":
            return {**spec, "items": [fix(s) for s in spec["items"]]}
        if spec["kind"] == "dict":
            return {**spec, "items": {k: fix(v) for k, v in spec["items"].items()}}
        if spec["kind"] == "dataset":
            return {**spec, "element": fix(spec["element"])}
        fixed = fix_spec(spec)
        if "relaxed" in spec and fixed.get("shape") != spec.get("shape"):
            # The symbolic trace takes the new sizes too, keeping the unknown dims unknown.
            old = spec["relaxed"]
            new = fixed["shape"]
            same_rank = old is not None and len(old) == len(new)
            fixed = {
                **fixed,
                "relaxed": [None if same_rank and old[i] is None else d for i, d in enumerate(new)],
            }
        return fixed

    args = [fix(a) if not only or i in only else a for i, a in enumerate(attempt["args"])]
    kwargs = {k: fix(v) for k, v in attempt.get("kwargs", {}).items()}
    alternative = None
    if only:
        # The line may reach the culprit through a local (`fields = split(row)`): every
        # parameter of that dtype retyped, tried next when these fail.
        every = [fix(a) for a in attempt["args"]]
        if every != args:
            alternative = _with_args({**attempt, "kwargs": kwargs}, every)
    if (
        args == attempt["args"]
        and kwargs == attempt.get("kwargs", {})
        and (m := _NDIM_CLASH.search(message))
        and int(m.group(1)) > int(m.group(2))
    ):
        # No input had the rank a layer found: the body reduced it on the way
        # (`Dense(...)(tf.reduce_mean(h, axis=1))`); the inputs get the axes it lost.
        more = int(m.group(1)) - int(m.group(2))

        def deeper(spec: dict[str, Any]) -> dict[str, Any]:
            if spec["kind"] == "tensor" and spec["dtype"].startswith("float") and spec["shape"]:
                shape = _rank_shape(len(spec["shape"]) + more)
                return {**spec, "shape": shape, "relaxed": [None, *shape[1:]]}
            return spec

        fix_spec = deeper
        args = [fix(a) for a in attempt["args"]]
        kwargs = {k: fix(v) for k, v in attempt.get("kwargs", {}).items()}
        if args == attempt["args"] and kwargs == attempt.get("kwargs", {}):
            # No float input of that rank: integer ids a layer embeds and then pools
            # (`Dense(...)(tf.reduce_mean(embed(tokens), axis=1))`) need the sequence axis.
            found_rank = int(m.group(2))

            def sequences(spec: dict[str, Any]) -> dict[str, Any]:
                shape = spec.get("shape")
                if (
                    spec["kind"] == "tensor"
                    and spec["dtype"].startswith("int")
                    and (shape is not None and len(shape) == found_rank)
                ):
                    wider = [*shape, *([3] * more)]
                    return {**spec, "shape": wider, "relaxed": [None, *wider[1:]]}
                return spec

            fix_spec = sequences
            args = [fix(a) for a in attempt["args"]]
            kwargs = {k: fix(v) for k, v in attempt.get("kwargs", {}).items()}
    if args == attempt["args"] and kwargs == attempt.get("kwargs", {}):
        return alternative
    found = _with_args({**attempt, "kwargs": kwargs}, args)
    if alternative is not None:
        found["alternative"] = alternative
    return found


# "Value passed to parameter 'indices' has DataType float32 not in list of allowed values:
# int32, int64": one argument (which one, the message does not say) must be integers.
_ALLOWED_CLASH = re.compile(
    r"Value passed to parameter '(\w+)' has DataType (\w+) not in list of allowed values: "
    r"([\w, ]+)"
)


# "... for '{{node sub}} = Sub[T=DT_FLOAT](dense/BiasAdd, target)' with input shapes: [2,3], [2]."
_OPERANDS = re.compile(r"= \w+\[[^\]]*\]\(([^)]*)\)' with input shapes: ((?:\[[^\]]*\](?:, )?)+)")


def _named_operand(
    attempt: dict[str, Any], message: str, names: list[str]
) -> dict[str, Any] | None:
    """An op that combined a parameter's placeholder with another tensor of another shape
    (``Sub(dense/BiasAdd, target)``, shapes ``[2,3], [2]``): that parameter takes the other
    operand's shape.  A traced function's placeholders carry its parameters' names."""
    m = _OPERANDS.search(message)
    if not m or "shape" not in message.lower():
        return None
    operands = [o.strip() for o in m.group(1).split(",")]
    shapes = [_dims(x) for x in re.findall(r"\[([^\]]*)\]", m.group(2))]
    if len(operands) != 2 or len(shapes) != 2 or None in shapes:
        return None
    args = list(attempt["args"])
    for mine, other in ((0, 1), (1, 0)):
        name = operands[mine]
        if name in names and operands[other] not in names and names.index(name) < len(args):
            index = names.index(name)
            spec = args[index]
            wanted = shapes[other]
            if spec["kind"] != "tensor" or spec["shape"] == wanted or wanted is None:
                return None
            args[index] = {
                **spec,
                "shape": wanted,
                "relaxed": [None, *wanted[1:]] if wanted else [],
            }
            shown = ", ".join(_shown(a) for a in args)
            return {**attempt, "shown": shown, "args": args}
    return None


def _holds(attempt: dict[str, Any], dtype: str) -> bool:
    """Whether any guessed tensor of the attempt has ``dtype``."""

    def has(spec: dict[str, Any]) -> bool:
        if spec["kind"] in ("tuple", "variables"):
            return any(has(s) for s in spec["items"])
        if spec["kind"] == "dict":
            return any(has(s) for s in spec["items"].values())
        return spec["kind"] == "tensor" and spec["dtype"] == dtype

    return any(has(s) for s in [*attempt["args"], *attempt.get("kwargs", {}).values()])


def _named_at_line(
    target: dict[str, Any] | None, exc: dict[str, Any], names: list[str]
) -> list[str]:
    """The guessed parameters that the module line where the error was raised names."""
    module = sys.modules.get((target or {}).get("module") or "")
    path = getattr(module, "__file__", None)
    line = exc.get("line")
    if not path or not line or not names:
        return []
    text = linecache.getline(path, int(line))
    return [n for n in names if n and re.search(rf"\b{re.escape(n)}\b", text)]


def _changed(
    attempt: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> dict[str, Any] | None:
    """The guess with ``change`` applied to its parts, outermost first, inside tuples and a
    dataset's element (``change`` gives the new part, or None to look inside); None when
    nothing changed."""

    def rebuild(spec: dict[str, Any]) -> dict[str, Any]:
        new = change(spec)
        if new is not None:
            return new
        if spec["kind"] == "tuple":
            return {**spec, "items": [rebuild(s) for s in spec["items"]]}
        if spec["kind"] == "dataset":
            return {**spec, "element": rebuild(spec["element"])}
        return spec

    args = [rebuild(a) for a in attempt["args"]]
    return None if args == attempt["args"] else _with_args(attempt, args)


def _keyed_one(attempt: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The guess with its first float tensor (a Keras step's ``x``, the batch a function
    hands its model) made a dict holding it under ``key``: the body subscripts it so."""
    done = False

    def wrap(spec: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal done
        if done:
            return spec
        if spec["kind"] == "tensor" and spec["dtype"].startswith("float") and spec["shape"]:
            done = True
            return {"kind": "dict", "items": {key: spec}}
        return None

    return _changed(attempt, wrap)


def _key_added(attempt: dict[str, Any], exc: dict[str, Any]) -> dict[str, Any] | None:
    """The guess with the key a ``KeyError`` names added to its dicts that lack it: a float
    batch of the size of the dict's first tensor (``inputs["season"]`` beside the image)."""
    detail = exc.get("detail") or exc.get("message") or ""
    m = _KERAS_KEY.search(detail)
    key = m.group(1) if m else detail.strip().strip("'\"")
    if not key or len(key) > 64 or "\n" in key:
        return None

    def add(spec: dict[str, Any]) -> dict[str, Any] | None:
        if spec["kind"] != "dict":
            return None
        if key in spec["items"]:
            return spec
        first = next((v for v in spec["items"].values() if v["kind"] == "tensor"), None)
        rows = first["shape"][:1] if first is not None and first["shape"] else [2]
        return {**spec, "items": {**spec["items"], key: _keyed_spec(key, rows)}}

    return _changed(attempt, add)


# Feature names of integer ids, as the plan reads parameter names: a sequence of token ids,
# or one id per row (`product_idx`, `user_id`), small enough for any vocabulary.
_SEQUENCE_KEY = re.compile(r"(^|_)(tokens?|token_ids|input_ids|word_ids)$")
_ID_KEY = re.compile(r"_(idx|id|index)$")


def _keyed_spec(key: str, rows: list[int]) -> dict[str, Any]:
    """A batch for the feature ``key``: ids as its name says, else floats."""
    if _SEQUENCE_KEY.search(key):
        return {**_tensor_spec("int32", [*rows, 3]), "values": [0, 2]}
    if _ID_KEY.search(key):
        return {**_tensor_spec("int32", list(rows)), "values": [0, 2]}
    return _tensor_spec("float32", [*rows, 3])


def _with_args(attempt: dict[str, Any], args: list[dict[str, Any]]) -> dict[str, Any]:
    kwargs = attempt.get("kwargs", {})
    shown = ", ".join([_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in kwargs.items()])
    return {"source": attempt["source"], "shown": shown, "args": args, "kwargs": kwargs}


def _retyped_one(
    attempt: dict[str, Any],
    param: str,
    have: str,
    allowed: str,
    rank: int | None = None,
    *,
    message: str = "",
    names: list[str] | None = None,
) -> dict[str, Any] | None:
    """The guess with one more argument of dtype ``have`` made integers (0 and 1, in range
    as indices), or, with ``rank``, one argument of that rank made a small integer scalar
    (a ``tf.range`` limit, a count).  Which one: first an argument the error names (a traced
    function's placeholders carry its parameters' names: ``Range(range/Cast, max_len, ...)``),
    then one named like a count, then the others in order; when the last retry changed one
    for the same op parameter and it still fails, that one is put back and the next tried."""
    wanted = [t.strip() for t in allowed.split(",")]
    want = next((t for t in ("int32", "int64") if t in wanted), None)
    if want is None:
        return None
    args = list(attempt["args"])
    kwargs = dict(attempt.get("kwargs", {}))
    keys = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]
    labels = list(names or ()) + list(kwargs)

    def name_of(key: tuple[str, Any]) -> str:
        if key[0] == "kw":
            return str(key[1])
        return labels[key[1]] if key[1] < len(labels) else ""

    def rank_of(key: tuple[str, Any]) -> int:
        name = name_of(key)
        if name and re.search(rf"\b{re.escape(name)}\b", message):
            return 0
        return 1 if rank is not None and _COUNT_NAME.search(name) else 2

    def get(key: tuple[str, Any]) -> dict[str, Any]:
        return args[key[1]] if key[0] == "arg" else kwargs[key[1]]

    def put(key: tuple[str, Any], spec: dict[str, Any]) -> None:
        if key[0] == "arg":
            args[key[1]] = spec
        else:
            kwargs[key[1]] = spec

    tried: list[list[Any]] = []
    last = attempt.get("retyped")
    if last and last["param"] == param:
        # That argument was not the one: put it back, try the next.
        put(tuple(last["key"]), last["spec"])
        tried = list(last.get("tried", ()))
    # A bound compared with a counter comes after the data it bounds (`plan(obs, horizon)`):
    # the last argument first.
    for key in sorted(keys[::-1] if rank == -1 else keys, key=rank_of):
        spec = get(key)
        if spec["kind"] != "tensor" or list(key) in tried:
            continue
        if rank == -1 and spec["dtype"] == have:
            # Any rank of that dtype becomes an int scalar (a bound compared with a counter).
            put(key, {**spec, "dtype": want, "shape": [], "relaxed": [], "values": [2, 5]})
        elif rank is not None and len(spec["shape"]) == rank:
            put(key, {**spec, "dtype": want, "shape": [], "relaxed": [], "values": [2, 5]})
        elif rank is None and spec["dtype"] == have:
            put(key, {**spec, "dtype": want, "values": [0, 2]})
        else:
            continue
        shown = ", ".join(
            [_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in kwargs.items()]
        )
        return {
            "source": attempt["source"],
            "shown": shown,
            "args": args,
            "kwargs": kwargs,
            "retyped": {
                "param": param,
                "key": list(key),
                "spec": spec,
                "tried": [*tried, list(key)],
            },
        }
    return None


# Parameter names of counts and lengths (a loop bound, a number of steps).
_COUNT_NAME = re.compile(
    r"(^|_)(n|k|num|count|counts|steps?|length|len|limit|size|depth|max_\w+|num_\w+|n_\w+)$"
)


def _signature_attempt(runner: TargetCaller, unknown: int) -> dict[str, Any] | None:
    """An attempt from the ``input_signature`` of the ``tf.function`` being called."""
    signature = getattr(runner.fn, "input_signature", None)
    if not signature:
        return None
    args = []
    for spec in signature:
        if not isinstance(spec, tf.TensorSpec) or spec.shape.rank is None:
            return None
        relaxed = list(spec.shape.as_list())
        args.append(
            {
                "kind": "tensor",
                "dtype": spec.dtype.name,
                "shape": [unknown if d is None else d for d in relaxed],
                "relaxed": relaxed,
            }
        )
    return {
        "source": "input_signature",
        "shown": ", ".join(_shown(a) for a in args),
        "args": args,
        "kwargs": {},
    }


def _runner(module: ModuleType, target: dict[str, Any]) -> TargetCaller:
    try:
        return _built(module, target)
    except Unreachable as exc:
        fallback = target.get("fallback_ctor_kwargs")
        if not fallback:
            raise
        reason = str(exc)
    runner = TargetCaller(
        module, target, [], {k: make_input(s, 1, module=module) for k, s in fallback.items()}
    )
    runner.fallback = reason
    return runner


def _built(module: ModuleType, target: dict[str, Any]) -> TargetCaller:
    try:
        ctor = [make_input(s, 1, module=module) for s in target.get("ctor", [])]
        ctor_kwargs = {
            k: make_input(s, 1, module=module) for k, s in target.get("ctor_kwargs", {}).items()
        }
    except Unreachable:
        raise
    except (Exception, SystemExit) as exc:  # argparse exits when the options are missing
        raise Unreachable(
            f"the constructor arguments could not be built ({type(exc).__name__}: "
            f"{_first_line(str(exc))[:120]})"
        ) from exc
    return TargetCaller(module, target, ctor, ctor_kwargs)


def _bindings(module: ModuleType) -> dict[str, int]:
    return {k: id(v) for k, v in vars(module).items()}


def _holds_built_state(module: ModuleType, snapshot: dict[str, int]) -> bool:
    """The module's globals may carry what a failed attempt did to them: a Keras layer or
    model (built for the guessed shape), an optimizer (built for its variables), a
    ``tf.Module`` or ``tf.Variable``, a tf.function that made variables; or a global the
    attempt rebound."""
    if _bindings(module) != snapshot:
        return True
    kinds: list[type] = [tf.Module, tf.Variable]
    with contextlib.suppress(ImportError, AttributeError):
        import keras

        kinds += [keras.layers.Layer, keras.optimizers.Optimizer]
    built = tuple(kinds)
    # A tf.function called once traces again only in a mode that forbids making variables:
    # one that made some says nothing of this try, and one handed objects the module's own
    # expressions build anew (a model, an optimizer) would have to make theirs there.
    called = [
        v for v in vars(module).values() if getattr(v, "_created_variables", None) is not None
    ]
    return any(isinstance(v, built) for v in vars(module).values()) or any(
        v._created_variables or _EVALUATED for v in called
    )


def _reload(probe: Probe, graphs_on: bool = True) -> bool:
    """Execute the module again in place (its globals as the import left them); with
    ``graphs_on``, graphs stay on whatever the module switches (see ``_graphs_on``)."""
    _EVALUATED.clear()
    try:
        importlib.reload(probe.module)
    except BaseException:  # the import worked once; if it does not again, stop trying
        return False
    finally:
        if graphs_on:
            _graphs_on()
    probe.rebind()
    return True


def _graphs_on() -> bool:
    """Turn ``tf.config.run_functions_eagerly`` off; whether the module had turned it on.
    A module that switches graphs off at import (TFG402) would make every experiment run
    eagerly: prints per call, no traces counted, evidence of the opposite of the truth."""
    was_on = bool(tf.config.functions_run_eagerly())
    if was_on:
        tf.config.run_functions_eagerly(False)
    return was_on


def _pick_device(requested: str | None) -> tuple[str | None, str]:
    gpus = tf.config.list_logical_devices("GPU")
    cpus = tf.config.list_logical_devices("CPU")
    seen = [d.name for d in gpus + cpus]
    if not requested:
        return (gpus or cpus)[0].name, ""
    text = requested.strip()
    low = text.lower()
    if low in ("cpu", "gpu"):
        wanted = f"/device:{low.upper()}:0"
    elif re.fullmatch(r"(cpu|gpu):\d+", low):
        kind, _, number = low.partition(":")
        wanted = f"/device:{kind.upper()}:{number}"
    else:
        wanted = text
    for name in seen:
        if name.lower().endswith(wanted.lower().replace("/device:", "device:")):
            return name, ""
    return None, f"device {requested} not found; TensorFlow sees: {', '.join(seen) or 'none'}"


# Planned guesses tried per target before giving up: a module whose guesses fail must not
# cost many times its import and one trace.
_MAX_GUESSES = 6


def run(module: ModuleType, report: Callable[[Any], None], params_json: str) -> None:
    params = json.loads(params_json)
    calls = int(params.get("calls", 3))
    probe = Probe(module)
    probe.install_loader_hook()
    eager_at_import = _graphs_on()  # TFG402's evidence; the experiments need graphs
    device, device_error = _pick_device(params.get("device"))
    # A global seed before anything is traced: random ops get fixed op seeds, and resetting
    # it before a compared call (TFG109) makes their draws repeat (see ``_reseed``).
    tf.random.set_seed(_SEED)
    probe.install_probes()
    results = []
    used = False  # has any call touched the module's state yet?
    snapshot = _bindings(module)
    for target in params["targets"]:
        entry: dict[str, Any] = {"id": target["id"], "error": None, "attempts": []}
        results.append(entry)
        if device_error:
            entry["error"] = device_error
            continue
        if target["kind"] == "module":  # TFG402: a module-level check, nothing to call
            entry["switch"] = _switch_check(probe, eager_at_import)
            used = True
            continue
        chosen = None
        attempts = list(target["attempts"])
        if target.get("roles") and target["kind"] in ("function", "wrap", "method") and attempts:
            attempts = _model_attempts(module, target, attempts[0]) + attempts
        adapted = 0
        reformatting = None  # a usable attempt whose later calls failed on the values' format
        # Eager code whose first call ran the flagged lines, then failed on a guessed value:
        # usable, but a corrected guess may make the second call that some verdicts need.
        partial = None
        # Only the planned guesses count towards the cap: those shaped by the module's models
        # and the corrections an error asks for come on top.
        planned = {id(a) for a in target["attempts"]}
        guesses = 0
        signature_read = False
        shaped = target["kind"] != "keras_step"  # step guesses shaped by its models added
        owner_shaped = False  # a method's guesses shaped by its object's models added
        for index, attempt in enumerate(attempts):
            if id(attempt) in planned:
                guesses += 1
                if guesses > _MAX_GUESSES:
                    break  # guesses that kept failing: more of them cost time, rarely run
            # A failed guess may have built a model for the wrong shape: start each target,
            # and each attempt when the module holds such objects, from a freshly executed
            # module, as the import left it.  Executing it again costs what importing it
            # did; a module of plain functions is left as it is.
            # A guess retried with values of another format (images for a decoder) needs its
            # function traced again: its cache holds the first trace, whose evidence the
            # retry must show too.
            fresh = attempt.get("fresh", False)
            if used and (index == 0 or fresh or _holds_built_state(module, snapshot)):
                if not _reload(probe):
                    break
                snapshot = _bindings(module)
            elif used:
                _EVALUATED.clear()  # the module's own arguments, built anew
            try:
                runner = _runner(module, target)
            except Unreachable as exc:
                entry["error"] = str(exc)
                break
            except Exception as exc:
                entry["error"] = f"could not reach {target['path']}: {type(exc).__name__}: {exc}"[
                    :300
                ]
                break
            used = True
            if runner.fallback:
                entry["ctor_fallback"] = runner.fallback
            guessed = ("guessed", "annotations", "the module's own calls")
            holder = runner.owner if target["kind"] == "method" else runner.factory_args
            if (
                not owner_shaped
                and holder is not None
                and target["kind"] in ("method", "factory")
                and target.get("roles")
                and attempt["source"] == "guessed"
            ):
                # A method of an object holding a model (an agent's `self.q_net`), or a step
                # a factory made around the model it was given: inputs shaped for that
                # model first, the plain guesses next.
                owner_shaped = True
                extra = _model_attempts(module, target, attempt, holder) or _output_attempts(
                    module, attempt, holder
                )
                if extra:
                    at = attempts.index(attempt)
                    attempts[at:at] = extra
                    attempt = extra[0]
            if not shaped and runner.owner is not None and attempt["source"] == "guessed":
                shaped = True
                extra = _step_attempts(runner.owner, attempt) or _output_attempts(
                    module, attempt, runner.owner
                )
                if extra:
                    at = attempts.index(attempt)
                    attempts[at:at] = extra
                    attempt = extra[0]
            if not signature_read and attempt["source"] in guessed:
                signature_read = True
                # The source's signature was not a literal (it names module constants): the
                # tf.function the import built holds it.
                real = _signature_attempt(runner, int(params.get("unknown_dim", 2)))
                if real is not None:
                    # Tried first; the guess stays next in line.
                    attempts.insert(attempts.index(attempt), real)
                    attempt = real
            try:
                result = _attempt(probe, runner, target, attempt, calls, device or "")
            except (Exception, SystemExit) as exc:  # the module's own argument expressions may exit
                result = {
                    "source": attempt["source"],
                    "inputs": attempt["shown"],
                    "calls": [],
                    "error": f"could not call it: {type(exc).__name__}: "
                    f"{_first_line(str(exc))[:200]}",
                }
            entry["attempts"].append(result)
            if reformatting is not None:
                # The traced guess whose values failed, or this one where they now run.
                chosen = (attempt, result) if _usable(result, target) else reformatting
                break
            if _usable(result, target):
                if target["kind"] == "caller" and adapted < 6:
                    retry = _adapted(attempt, result, target) if _raised(result) else None
                    if retry is not None:
                        partial = (attempt, result)
                        adapted += 1
                        retry.pop("alternative", None)
                        attempts.insert(attempts.index(attempt) + 1, retry)
                        continue
                chosen = (attempt, result)
                better = _reformatted(attempt, result) if adapted < 6 else None
                if better is None:
                    break
                adapted += 1
                reformatting = chosen
                attempts.insert(attempts.index(attempt) + 1, {**better, "fresh": True})
                continue
            retyped = _adapted(attempt, result, target)
            if retyped is not None and adapted < 6:
                adapted += 1
                at = attempts.index(attempt) + 1
                alternative = retyped.pop("alternative", None)
                attempts[at:at] = [retyped] if alternative is None else [retyped, alternative]
        chosen = chosen or partial
        if chosen is not None:
            _experiments(runner, target, *chosen, params)
            entry["chosen"] = next(i for i, r in enumerate(entry["attempts"]) if r is chosen[1])
        for r in entry["attempts"]:
            r.pop("sets", None)  # tensors stay in the child
    report({"device": device, "tf_version": tf.__version__, "targets": results})


# Python values staged for TFG303, by the kind of value the flagged call passes: a second
# value must trace again, the first again must not (two traces, the least that shows it).
_STAGED: dict[str, list[Any]] = {"int": [1, 2], "float": [0.5, 1.5], "str": ["a", "b"]}


def _retrace(runner: TargetCaller, result: dict[str, Any], spec: list[Any]) -> dict[str, Any]:
    """TFG303: a fresh copy of the tf.function called with distinct Python values at the
    parameter the flagged call varies, then with the first value again; the tracing count
    read after each call."""
    _line, param, index, kind = spec
    args, kwargs = result["sets"][0]
    failed = []
    for staged in [kind] + [k for k in _STAGED if k != kind]:
        values = _STAGED[staged]
        counts = []
        try:
            # A fresh copy per experiment: calls staged for another flagged call of the same
            # tf.function (same values) must not already be in the cache.
            fresh = _fresh(runner)
            for value in [*values, values[0]]:
                call_args, call_kwargs = _with_argument(args, kwargs, param, index, value)
                fresh(*call_args, **call_kwargs)
                counts.append(int(fresh.experimental_get_tracing_count()))
        except Exception as exc:
            failed.append(f"{staged}s: {type(exc).__name__}: {_first_line(str(exc))[:100]}")
            continue
        return {
            "param": param,
            "kind": staged,
            "values": [repr(v) for v in values],
            "counts": counts,
        }
    return {"error": "calls with staged Python values raised (" + "; ".join(failed) + ")"}


def _swap(runner: TargetCaller, result: dict[str, Any], spec: list[Any]) -> dict[str, Any]:
    """TFG208 at a call: a fresh copy of the tf.function called with the inputs that ran,
    then again with a new optimizer of the class the flagged call makes (``maker()``, its
    defaults) at the parameter that call fills."""
    _line, param, index, maker = spec
    args, kwargs = result["sets"][0]
    shown = {"param": param, "maker": maker}
    try:
        fresh = _fresh(runner)
        fresh(*args, **kwargs)
        other = eval(compile(f"{maker}()", "<staged optimizer>", "eval"), vars(runner.module))
    except Exception as exc:
        return {
            **shown,
            "error": f"the staged calls could not start: {type(exc).__name__}: "
            f"{_first_line(str(exc))[:150]}",
        }
    call_args, call_kwargs = _with_argument(args, kwargs, param, index, other)
    try:
        fresh(*call_args, **call_kwargs)
    except Exception as exc:
        return {**shown, "raised": type(exc).__name__, "message": _first_line(str(exc))[:300]}
    return {**shown, "raised": None}


def _with_argument(
    args: list[Any], kwargs: dict[str, Any], param: str, index: int | None, value: Any
) -> tuple[list[Any], dict[str, Any]]:
    """The inputs with ``value`` at the parameter a flagged call fills: by position when the
    call passes it so, else by name."""
    call_args, call_kwargs = list(args), dict(kwargs)
    if index is not None and index < len(call_args):
        call_args[index] = value
    else:
        call_kwargs[param] = value
    return call_args, call_kwargs


def _fresh(runner: TargetCaller) -> Any:
    """A new tf.function like the target's, with an empty cache (its first call traces)."""
    if runner.kind == "map":  # the callback itself: traced in a graph as tf.data does
        return tf.function(runner.fn)
    clone = getattr(runner.fn, "_clone", None)
    if clone is not None:
        return clone(None)
    return tf.function(runner.fn.python_function)


def _first_call(runner: TargetCaller, result: dict[str, Any], repeats: int = 5) -> dict[str, Any]:
    """TFG403: the first call of a fresh copy of the tf.function (it traces) against the
    median of warm calls, as a benchmark without warm-up would see them."""
    args, kwargs = result["sets"][0]
    try:
        fresh = _fresh(runner)
        start = _perf_counter()
        _outputs(fresh(*args, **kwargs))
        first = _perf_counter() - start
        traces = int(fresh.experimental_get_tracing_count())
        samples = []
        for _ in range(repeats):
            start = _perf_counter()
            _outputs(fresh(*args, **kwargs))
            samples.append(_perf_counter() - start)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {_first_line(str(exc))[:150]}"}
    return {
        "first_ms": first * 1e3,
        "warm_ms": statistics.median(samples) * 1e3,
        "traces": traces,
        "repeats": repeats,
    }


def _graph_ops(graph: Any, modfile: str, first: int, last: int) -> tuple[int, int]:
    """(ops in the graph and the functions it calls, ops created by module lines ``first``
    to ``last``): each op keeps the Python stack that created it, AutoGraph's mapped back."""
    total = in_lines = 0
    for current in _graphs(graph):
        for op in current.get_operations():
            total += 1
            with contextlib.suppress(Exception):
                if _op_lines(op, modfile, first, last):
                    in_lines += 1
    return total, in_lines


def _op_lines(op: Any, modfile: str, first: int, last: int) -> list[int]:
    """The lines ``first`` to ``last`` of the module in the Python stack that created ``op``
    (AutoGraph's generated code mapped back)."""
    return [
        frame.lineno
        for frame in op.traceback
        if first <= frame.lineno <= last and _real(frame.filename) == modfile
    ]


def ops_by_lines(graph: Any, modfile: str, first: int, last: int) -> dict[str, int]:
    """The op types created by module lines ``first`` to ``last`` in ``graph`` and the
    functions it calls, each with the first such line that created one (TFG206); a type
    whose ops there all take only static values (constants, known shapes) ends in ``*``."""
    found: dict[str, int] = {}
    for current in _graphs(graph):
        for op in current.get_operations():
            with contextlib.suppress(Exception):
                lines = _op_lines(op, modfile, first, last)
                if lines:
                    key = op.type if _data_dependent(op) else op.type + "*"
                    found[key] = min(found.get(key, lines[0]), lines[0])
    return {k: n for k, n in found.items() if not (k.endswith("*") and k[:-1] in found)}


# Ops whose output is known while tracing when their input's shape is fully defined.
_SHAPE_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank"})


def _data_dependent(op: Any) -> bool:
    """Some input of ``op`` depends on values only known when the graph runs (an argument,
    a variable, an iterator), not on constants and fully known shapes alone."""
    todo = [op]
    seen: set[int] = set()
    while todo:
        current = todo.pop()
        for tensor in current.inputs:
            source = tensor.op
            if id(source) in seen:
                continue
            seen.add(id(source))
            if source.type == "Const":
                continue
            if source.type in _SHAPE_OPS:
                if all(i.shape.is_fully_defined() for i in source.inputs):
                    continue
                return True
            if not source.inputs or len(seen) > 500:
                return True  # a placeholder, a variable's handle, or too far to tell
            todo.append(source)
    return False


def _try_ops(runner: TargetCaller, result: dict[str, Any], handler: list[int]) -> dict[str, Any]:
    """TFG206: the op types the ``try`` body (its first line up to the ``except``) put in
    the graph the calls traced."""
    line, body, _ = handler
    args, kwargs = runner.graph_args or result["sets"][0]
    fn = _fresh(runner) if runner.kind == "map" else runner.fn
    try:
        concrete = fn.get_concrete_function(*args, **kwargs)
    except Exception as exc:
        return {
            "error": f"reading the traced graph raised {type(exc).__name__}: "
            f"{_first_line(str(exc))[:150]}"
        }
    modfile = _real(runner.module.__file__ or "")
    return {"ops": ops_by_lines(concrete.graph, modfile, body, line - 1)}


def _graphs(graph: Any) -> Iterator[Any]:
    """``graph`` and, once each, the graphs of the functions it (or one of them) calls."""
    seen: set[int] = set()
    todo = [graph]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for fn in getattr(current, "_functions", {}).values():
            inner = getattr(fn, "graph", None)
            if inner is not None:
                todo.append(inner)


def _graph_size(runner: TargetCaller, result: dict[str, Any], loop: list[Any]) -> dict[str, Any]:
    """TFG305: trace a fresh copy and count the graph's ops, and those the loop's body
    created; when a module global sets the count, trace again with a smaller one."""
    line, last, count, name = loop
    args, kwargs = runner.graph_args or result["sets"][0]
    modfile = _real(runner.module.__file__ or "")

    def measure(cached: bool) -> tuple[int, int, float | None]:
        # The graph the calls already traced costs nothing to read; a fresh trace (a
        # Dataset.map callback has no cached one, a staged count needs one) is timed.
        fn = runner.fn if cached and runner.kind != "map" else _fresh(runner)
        start = _perf_counter()
        concrete = fn.get_concrete_function(*args, **kwargs)
        seconds = None if fn is runner.fn else _perf_counter() - start
        return (*_graph_ops(concrete.graph, modfile, line, last), seconds)

    try:
        total, in_loop, seconds = measure(cached=True)
    except Exception as exc:
        return {
            "error": f"tracing again raised {type(exc).__name__}: {_first_line(str(exc))[:150]}"
        }
    out: dict[str, Any] = {"count": count, "ops": total, "loop_ops": in_loop, "seconds": seconds}
    old = getattr(runner.module, name, None) if name else None
    if isinstance(old, int) and not isinstance(old, bool) and old > 2:
        small = max(2, old // 10)
        setattr(runner.module, name, small)
        try:
            staged_total, staged_loop, staged_seconds = measure(cached=False)
            out["staged"] = {
                "name": name,
                "old": old,
                "new": small,
                "ops": staged_total,
                "loop_ops": staged_loop,
                "seconds": staged_seconds,
            }
        except Exception as exc:
            out["staged"] = {"error": f"{type(exc).__name__}: {_first_line(str(exc))[:100]}"}
        finally:
            setattr(runner.module, name, old)
    return out


# Op types that are a graph's inputs and outputs, not computation: the placeholders of the
# arguments (and captures), the identities of the returned tensors, the constants a Python
# result is frozen into, and control-only no-ops.
_NO_WORK_OPS = frozenset({"Placeholder", "Identity", "IdentityN", "Const", "NoOp"})


def _graph_work(runner: TargetCaller, result: dict[str, Any]) -> dict[str, Any]:
    """TFG404: the op types of the concrete graph the calls traced (and of the functions it
    calls), to tell computation from a graph of inputs, outputs and frozen constants."""
    args, kwargs = runner.graph_args or result["sets"][0]
    try:
        concrete = runner.fn.get_concrete_function(*args, **kwargs)
    except Exception as exc:
        return {
            "error": f"reading the traced graph raised {type(exc).__name__}: "
            f"{_first_line(str(exc))[:150]}"
        }
    types: dict[str, int] = {}
    for current in _graphs(concrete.graph):
        for op in current.get_operations():
            types[op.type] = types.get(op.type, 0) + 1
    return {"types": types, "no_work": sorted(_NO_WORK_OPS)}


def _has_unknown(spec: dict[str, Any]) -> bool:
    if spec["kind"] in ("tuple", "dict"):
        return any(_has_unknown(s) for s in _items(spec))
    return spec["kind"] == "tensor" and None in (spec.get("relaxed") or ())


def _resized(spec: dict[str, Any], size: int, unknown_only: bool) -> dict[str, Any] | None:
    """``spec`` with a new size for its unknown dims (``None`` in the traced signature) or,
    when no argument has any (``unknown_only`` false), for its first dim; None when nothing
    changes (a Python value, a scalar, a fully known shape)."""
    if spec["kind"] in ("tuple", "dict"):
        items = spec["items"]
        keys = list(items) if isinstance(items, dict) else list(range(len(items)))
        parts = [_resized(items[k], size, unknown_only) for k in keys]
        if all(p is None for p in parts):
            return None
        new = [p if p is not None else items[k] for k, p in zip(keys, parts, strict=True)]
        return {
            **spec,
            "items": dict(zip(keys, new, strict=True)) if isinstance(items, dict) else new,
        }
    if spec["kind"] != "tensor" or not spec["shape"]:
        return None
    shape = list(spec["shape"])
    unknown = [i for i, d in enumerate(spec.get("relaxed") or ()) if d is None]
    if unknown_only and not unknown:
        return None
    for i in unknown or [0]:
        shape[i] = size
    return {**spec, "shape": shape}


def _calls_xla(graph: Any) -> list[str]:
    """The functions a graph (or one it calls) calls with ``_XlaMustCompile`` set: nested
    jit-compiled tf.functions, which XLA compiles whoever calls them."""
    found: list[str] = []
    for current in _graphs(graph):
        for op in current.get_operations():
            with contextlib.suppress(Exception):
                attr = op.node_def.attr
                if "_XlaMustCompile" in attr and attr["_XlaMustCompile"].b:
                    name = attr["f"].func.name if "f" in attr else op.name
                    found.append(re.sub(r"^__inference_|_\d+$", "", name))
    return sorted(set(found))


def _xla_recompile(
    runner: TargetCaller, result: dict[str, Any], attempt: dict[str, Any], base: int
) -> dict[str, Any]:
    """TFG304: after the calls at the first shape, call the tf.function at new sizes of its
    unknown dims (its first dim without a signature): the first call at each new shape
    against warm calls at that shape, and the same for a copy without ``jit_compile`` (its
    first call shows what tracing alone costs), with the tracing count of each."""
    fn = runner.fn
    python = getattr(fn, "python_function", None)
    if python is None or not hasattr(fn, "experimental_get_tracing_count"):
        return {"error": "no tf.function to time"}
    args, kwargs = result["sets"][0]
    sizes = [base + 1, base + 2]
    staged = []
    every = [*attempt["args"], *attempt.get("kwargs", {}).values()]
    unknown_only = any(_has_unknown(s) for s in every)
    for size in sizes:
        specs = [_resized(s, size, unknown_only) for s in attempt["args"]]
        kw_specs = {
            k: _resized(s, size, unknown_only) for k, s in attempt.get("kwargs", {}).items()
        }
        if all(s is None for s in [*specs, *kw_specs.values()]):
            return {"error": "no argument has a dimension to vary"}
        staged.append(
            (
                [
                    make_input(s if s is not None else o, 7, module=runner.module)
                    for s, o in zip(specs, attempt["args"], strict=True)
                ],
                {
                    k: make_input(
                        s if s is not None else attempt["kwargs"][k], 7, module=runner.module
                    )
                    for k, s in kw_specs.items()
                },
                ", ".join(
                    _shown(s if s is not None else o)
                    for s, o in zip(specs, attempt["args"], strict=True)
                ),
            )
        )

    def timed(f: Any, a: list[Any], k: dict[str, Any]) -> float:
        start = _perf_counter()
        _outputs(f(*a, **k))  # fetching the result waits for the device
        return (_perf_counter() - start) * 1e3

    try:
        plain = tf.function(
            python,
            input_signature=fn.input_signature,
            autograph=bool(getattr(fn, "_autograph", True)),
            jit_compile=False,
        )
        timed(fn, args, kwargs)
        timed(plain, args, kwargs)
        nested = _calls_xla(plain.get_concrete_function(*args, **kwargs).graph)
        rows = []
        for a, k, shown in staged:
            row: dict[str, Any] = {"inputs": shown}
            for label, f in (("xla", fn), ("plain", plain)):
                before = _count_of(f)
                first = timed(f, a, k)
                warm = statistics.median(timed(f, a, k) for _ in range(5))
                row[label] = {
                    "first_ms": first,
                    "warm_ms": warm,
                    "traces": [before, _count_of(f)],
                }
            rows.append(row)
    except Exception as exc:
        return {
            "error": f"a call at a new shape raised {type(exc).__name__}: "
            f"{_first_line(str(exc))[:150]}"
        }
    jit = getattr(fn, "_jit_compile", None)
    return {
        "jit_compile": jit if isinstance(jit, bool) else None,
        "own": runner.own,
        "rows": rows,
        "nested_xla": nested,
    }


def _switch_check(probe: Probe, after_import: bool) -> dict[str, Any]:
    """TFG402: whether functions ran eagerly after the import (``after_import``), and which
    module lines set it: the module is executed again with ``run_functions_eagerly``
    recording its callers (from eager mode off, so only what the module itself does shows)."""
    seen: list[list[Any]] = []
    saved = []
    reset = tf.config.run_functions_eagerly
    for owner in (tf.config, tf.compat.v1.config):
        for name in ("run_functions_eagerly", "experimental_run_functions_eagerly"):
            original = getattr(owner, name, None)
            if original is None:
                continue
            saved.append((owner, name, original))

            def recorder(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                value = args[0] if args else next(iter(kwargs.values()), None)
                seen.append([probe.caller_line(sys._getframe(1)), bool(value)])
                return _original(*args, **kwargs)

            setattr(owner, name, recorder)
    try:
        reset(False)
        reloaded = _reload(probe, graphs_on=False)
        after_reload = bool(tf.config.functions_run_eagerly())
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        _graphs_on()
    return {
        "after_import": after_import,
        "after_reload": after_reload,
        "reloaded": reloaded,
        "calls": seen,
    }


def _experiments(
    runner: TargetCaller,
    target: dict[str, Any],
    attempt: dict[str, Any],
    result: dict[str, Any],
    params: dict[str, Any],
) -> None:
    experiments: dict[str, Any] = {}
    if not result["calls"][0]["exception"]:
        # A Dataset.map callback too: the dataset keeps the graph it mapped.
        watches = {w["label"]: w for w in target.get("watch", [])}
        for label in target.get("stale", []):
            if label in watches:
                experiments["stale:" + label] = _stale(runner, attempt, result, watches[label])
    if not result["calls"][0]["exception"] and runner.kind != "map":
        if target.get("eager_diff"):
            experiments["eager_diff"] = _eager_diff(runner, result)
        if target.get("shapes"):
            experiments["shapes"] = _shapes(runner, result, attempt, params.get("unknown_dim", 2))
        if target.get("timing"):
            experiments["timing"] = _timing(runner, result)
        for spec in target.get("retrace", []):
            experiments[f"retrace:{spec[0]}"] = _retrace(runner, result, spec)
        for spec in target.get("swap", []):
            experiments[f"swap:{spec[0]}"] = _swap(runner, result, spec)
        if target.get("first_call"):
            experiments["first_call"] = _first_call(runner, result)
        for loop in target.get("loops", []):
            experiments[f"graph:{loop[0]}"] = _graph_size(runner, result, loop)
        for handler in target.get("handlers", []):
            experiments[f"try:{handler[0]}"] = _try_ops(runner, result, handler)
        if target.get("ops"):
            experiments["ops"] = _graph_work(runner, result)
        if target.get("xla"):
            experiments["xla"] = _xla_recompile(
                runner, result, attempt, params.get("unknown_dim", 2)
            )
    elif target.get("eager_diff") and runner.kind != "map":
        experiments["eager_diff"] = _eager_diff(runner, result)
    if not result["calls"][0]["exception"] and runner.kind == "map":
        # A Dataset.map callback's graph is measured too (traced with one element's specs).
        for loop in target.get("loops", []):
            experiments[f"graph:{loop[0]}"] = _graph_size(runner, result, loop)
        for handler in target.get("handlers", []):
            experiments[f"try:{handler[0]}"] = _try_ops(runner, result, handler)
    result["experiments"] = experiments
