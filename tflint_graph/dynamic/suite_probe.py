"""The recorder of a test session (``pytest --tflint-graph``, SPEC §4); imports TensorFlow.

It is dynamic mode's :class:`~tflint_graph.dynamic.child.Probe` (the patched ``print``,
``random``, clocks, ``logging`` and file I/O, attributed to the user's line through
AutoGraph's source maps) over every project file with a finding, recording into a
:class:`~tflint_graph.dynamic.suite.SessionRecord` instead of per-call phases:

- ``tf.function`` calls are counted by wrapping ``Function.__call__`` (every tf.function,
  Keras's train function included): a call made from eager code is one *call* of that
  function object; it *traced* when its tracing count grew or a flagged line ran in a graph
  during it.  Calls made while a graph is built (nested tf.functions) are part of the outer
  call's trace and are not counted.
- ``Dataset.map`` (and the other tf.data transformations) traces its function when the
  dataset is built, without any ``tf.function`` call: the tf.data function wrapper is
  wrapped to name that graph.
- Whether an event happened while tracing is ``ops.inside_function()``: true in a
  tf.function's graph, in a tf.data function's graph and in Keras 3's train function (whose
  ``Layer.call`` AutoGraph does not convert but which still runs in that graph); false when
  ``run_functions_eagerly`` makes a tf.function run its Python body.
- ``sys.settrace`` records the flagged lines that run, exceptions passing through them (a
  test that expects the error with ``pytest.raises`` still shows it), and, for the state
  codes, the watched container or attribute before and after the statement.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import linecache
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from types import FrameType, ModuleType
from typing import Any

from tensorflow.python.data.ops import structured_function
from tensorflow.python.eager.polymorphic_function import polymorphic_function
from tensorflow.python.framework import ops
from tensorflow.python.saved_model import save as saved_model_save
from tensorflow.python.util import nest

from tflint_graph.dynamic import child
from tflint_graph.dynamic.suite import (
    INTERESTING,
    CallSite,
    Change,
    Entry,
    Raised,
    SavedFunction,
    Seen,
    SessionRecord,
    StaleRead,
)

__all__ = ["SuiteProbe"]

_MAX_RAISED = 500  # exceptions recorded per session (a loop that raises must not grow memory)


_TF_DIR = polymorphic_function.__file__.rsplit("/python/", 1)[0]


def _library(filename: str) -> bool:
    """A frame of TensorFlow, of this probe or of functools, between a user's call and
    ``Function.__call__``."""
    return filename.startswith(_TF_DIR) or filename == __file__ or filename.endswith("functools.py")


def _def_lines(python: Any) -> tuple[tuple[str, int], ...]:
    """(real path, line) of a Python function's ``def`` and of its first decorator, where
    its code starts (a finding about the whole function is on the ``def``, one about the
    ``@tf.function`` that makes it on the decorator)."""
    with contextlib.suppress(Exception):  # a method's tf.function wraps a TF-made function
        python = inspect.unwrap(python)
    code = getattr(python, "__code__", None)
    if code is None:
        return ()
    line = code.co_firstlineno
    path = child._real(code.co_filename)
    if code.co_name == "<lambda>":
        # `tf.function(lambda x: ...)`: the line that makes it (the next `def` is another).
        return ((path, line),)
    for offset in range(50):
        text = linecache.getline(code.co_filename, line + offset).lstrip()
        if text.startswith(("def ", "async def ")):
            return ((path, line + offset), (path, line)) if offset else ((path, line),)
        if not text:
            break
    return ()


# Ops of any graph: its inputs, constants and outputs, which compute nothing (TFG404).
_NO_WORK_OPS = frozenset({"Placeholder", "Const", "Identity", "IdentityN", "NoOp"})


def _note_work(site: CallSite, fn: Any) -> None:
    """The most ops that compute in one graph of ``fn`` traced so far (TFG404)."""
    with contextlib.suppress(Exception):  # a private listing: absent or changed, no verdict
        for concrete in fn._list_all_concrete_functions():
            ops = [op.type for op in concrete.graph.get_operations()]
            work = [t for t in ops if t not in _NO_WORK_OPS]
            if site.work is None or len(work) > site.work:
                site.work = len(work)
                site.work_ops = list(dict.fromkeys(work))


def _saved_graphs(fn: Any, test: str | None) -> SavedFunction | None:
    """The input specs of the graphs ``fn`` holds (what a SavedModel keeps of it)."""
    try:
        concrete = fn._list_all_concrete_functions()
        signatures = [c.structured_input_signature for c in concrete]
    except Exception:  # a private listing: absent or changed, no record
        return None
    shown: list[str] = []
    fixed = True
    for args, kwargs in signatures:
        specs = [
            s for s in nest.flatten((args, kwargs)) if hasattr(s, "shape") and hasattr(s, "dtype")
        ]
        fixed = fixed and all(s.shape.is_fully_defined() for s in specs)
        text = ", ".join(
            f"{s.dtype.name}{s.shape.as_list() if s.shape.rank is not None else '[...]'}"
            for s in specs
        )
        if text not in shown:
            shown.append(text)
    return SavedFunction(tuple(shown), fixed, "", test)


def _shapes(args: tuple[Any, ...], kwargs: dict[str, Any], *, dtypes: bool = True) -> str:
    """The shapes (and dtypes) of the tensors a call passed."""
    return ", ".join(
        f"{getattr(a.dtype, 'name', a.dtype) if dtypes else ''}{list(a.shape)}"
        for a in (*args, *kwargs.values())
        if hasattr(a, "shape") and hasattr(a, "dtype")
    )


def _add_values(site: CallSite, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Record the Python scalars a tracing call passed (what makes a new trace key)."""
    site.note(
        ", ".join(
            repr(a)
            for a in (*args, *kwargs.values())
            if isinstance(a, (bool, int, float, str)) and not hasattr(a, "dtype")
        )
    )


class _Call:
    """One outermost call being counted: of a tf.function, or a tf.data function's trace."""

    __slots__ = ("entry", "forced", "raised", "saw_graph", "serial")
    _made = itertools.count(1)

    def __init__(self, entry: Entry, forced: bool = False) -> None:
        self.entry = entry
        self.forced = forced
        self.raised = False
        self.saw_graph = False
        self.serial = next(_Call._made)  # unlike id(), never reused by a later call


def _entry_name(fn: Any) -> str:
    python = getattr(fn, "_python_function", None)
    name = getattr(python, "__name__", None) or getattr(fn, "__name__", None) or "a tf.function"
    module = getattr(python, "__module__", "") or ""
    return f"Keras's {name}" if module.startswith("keras") else str(name)


class SuiteProbe(child.Probe):
    """Probes over many files; ``wanted`` are the flagged (real path, line)s, ``watches``
    the name chains of the state the state codes' statements change."""

    def __init__(
        self,
        files: set[str],
        wanted: set[tuple[str, int]],
        watches: Mapping[tuple[str, int], tuple[str, ...]],
        stale: Mapping[tuple[str, int], str] | None = None,
        bodies: Mapping[tuple[str, int], tuple[str, int]] | None = None,
    ) -> None:
        super().__init__(None, files)
        self.redirect_writes = False  # the tests' files stay where the tests put them
        self.wanted = wanted
        self.watches = dict(watches)
        # TFG109: the module global each flagged line reads.
        self.stale = dict(stale or {})
        # Per tf.function entry: (line, the module's globals, name, value when traced).
        self._reads: dict[int, list[tuple[tuple[str, int], dict[str, Any], str, Any]]] = {}
        self.record = SessionRecord(bodies=dict(bodies or {}))
        self._bodies = set(self.record.bodies.values())
        self._last: dict[FrameType, tuple[str, int]] = {}  # the last body line per frame
        self.on = False
        self.test: str | None = None
        self._threads = threading.local()  # each thread has its own calls in progress
        self._pending: dict[FrameType, tuple[tuple[str, int], Any, str, bool]] = {}
        self._spans: dict[int, tuple[int, int]] = {}
        self._unnamed = Entry("a graph built outside any tf.function call")
        self._seen_raised: set[tuple[Any, ...]] = set()
        self._traced = False
        # TFG109: per tf.function entry and flagged line, the values its traces read.
        self._traced_values: dict[tuple[int, tuple[str, int]], dict[Any, str]] = {}
        # ... and per graph being built (kept alive here: ids are not reused meanwhile).
        self._graph_values: dict[tuple[tuple[str, int], int], tuple[Any, tuple[Any, str]]] = {}
        # TFG206: the graphs each finding's try body ran in (read when the session stops).
        self._try_graphs: dict[tuple[str, int], list[Any]] = {}

    @property
    def _stack(self) -> list[_Call]:
        stack: list[_Call] | None = getattr(self._threads, "stack", None)
        if stack is None:
            stack = self._threads.stack = []
        return stack

    # -- installing
    def start(self) -> None:
        self.install_loader_hook()
        self.install_probes()
        self._count_functions()
        self._name_dataset_functions()
        self._watch_saves()
        for module in list(sys.modules.values()):  # imported already (by a conftest.py)
            if (
                isinstance(module, ModuleType)
                and child._real(getattr(module, "__file__", None) or "") in self.files
            ):
                self.rebind(module)
        self.on = True
        if sys.gettrace() is None:
            sys.settrace(self._global)
            self._traced = True
        else:
            self.record.no_lines = (
                "another tracer (coverage or a debugger) owns sys.settrace, so the lines that "
                "ran were not recorded"
            )

    def stop(self) -> None:
        """Stop recording; the patched functions stay, passing through to the originals."""
        self.on = False
        if self._traced:
            if sys.gettrace() == self._global:
                sys.settrace(None)
            else:  # a tracer started after ours (coverage) took the lines from some point on
                self.record.no_lines = (
                    "another tracer (coverage or a debugger) replaced the line recorder during "
                    "the session"
                )
        for pending in list(self._pending.values()):
            self._change(pending, None)
        self._pending.clear()
        for key, graphs in self._try_graphs.items():
            body = self.record.bodies[key]
            found: dict[str, int] = {}
            for graph in graphs:
                with contextlib.suppress(Exception):  # a graph that cannot be read: no record
                    for kind, line in child.ops_by_lines(
                        graph, key[0], body[1], key[1] - 1
                    ).items():
                        found[kind] = min(found.get(kind, line), line)
            self.record.try_ops[key] = found
        self._try_graphs.clear()

    def _count_functions(self) -> None:
        original = polymorphic_function.Function.__call__
        probe = self

        @functools.wraps(original)
        def __call__(fn: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True  # pytest shows the user's frames, not the probe's
            stack = probe._stack
            if stack or not probe.on or ops.inside_function():
                if probe.on and ops.inside_function():
                    nested = probe._defined(fn, _entry_name(fn))
                    if nested is not None:
                        nested.nested += 1  # inlined into the graph being built (TFG401)
                elif probe.on and stack and stack[0].forced:
                    nested = probe._defined(fn, _entry_name(fn))
                    if nested is not None:  # run eagerly inside an eager call: no graph
                        nested.calls += 1
                        nested.eager += 1
                return original(fn, *args, **kwargs)
            entry = getattr(fn, "_tflint_graph_entry", None)
            new = entry is None
            if entry is None:
                entry = Entry(_entry_name(fn))
                with contextlib.suppress(Exception):  # kept on the object: one per function
                    fn._tflint_graph_entry = entry
            call = _Call(entry, forced=bool(getattr(fn, "_run_functions_eagerly", False)))
            sites = probe._sites(entry)
            defined = probe._defined(fn, entry.name)
            if defined is not None:
                defined.objects += new
            before = fn.experimental_get_tracing_count()
            stack.append(call)
            try:
                return original(fn, *args, **kwargs)
            except BaseException:
                call.raised = True
                raise
            finally:
                stack.pop()
                entry.calls += 1
                if call.forced:
                    entry.eager += 1
                    for site in sites:
                        site.eager += 1
                elif call.raised:
                    entry.raised += 1
                elif call.saw_graph or fn.experimental_get_tracing_count() > before:
                    entry.traced += 1
                    for site in sites:
                        site.traced += 1
                        _add_values(site, args, kwargs)
                    if defined is not None:
                        defined.traced += 1
                        defined.note(_shapes(args, kwargs))
                        _note_work(defined, fn)
                else:
                    probe._later_call(entry, fn, args, kwargs)
                for site in sites:
                    site.calls += 1
                if defined is not None:
                    defined.calls += 1
                    defined.eager += call.forced
                    if not call.raised:  # a call the input_signature refused ran nothing
                        defined.note(_shapes(args, kwargs, dtypes=False), defined.inputs)

        polymorphic_function.Function.__call__ = __call__

    def _sites(self, entry: Entry) -> tuple[CallSite, ...]:
        """The records of calls from the flagged line of user code that is calling ``entry``:
        of every tf.function called there (TFG303's call sites), and of ``entry`` alone
        (TFG403's timed call); none from any other line."""
        frame = sys._getframe(2)
        while frame is not None and _library(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return ()
        key = (child._real(frame.f_code.co_filename), frame.f_lineno)
        if key not in self.wanted:
            return ()
        site = self.record.sites.get(key)
        if site is None:
            site = self.record.sites[key] = CallSite(entry.name)
        named = self.record.named_sites.setdefault(key, {})
        own = named.get(entry.name)
        if own is None:
            own = named[entry.name] = CallSite(entry.name)
        return (site, own)

    def _defined(self, fn: Any, name: str) -> CallSite | None:
        """The record of calls of a tf.function whose ``def`` line (or decorator line) is
        flagged (TFG301, TFG302, TFG304, TFG401, TFG404)."""
        keys = getattr(fn, "_tflint_graph_def", None)
        if keys is None:
            lines = _def_lines(getattr(fn, "_python_function", None))
            keys = tuple(k for k in lines if k in self.wanted)
            made = getattr(fn, "_tflint_graph_made", None)
            if made is not None and made not in keys:
                keys = (*keys, made)
            with contextlib.suppress(Exception):
                fn._tflint_graph_def = keys
        if not keys:
            return None
        found = next((self.record.defs[k] for k in keys if k in self.record.defs), None)
        if found is None:
            found = CallSite(name)
        for key in keys:  # one record under its def line and its decorator line
            self.record.defs.setdefault(key, found)
        return found

    def _later_call(self, entry: Entry, fn: Any, args: tuple[Any, ...], kwargs: Any) -> None:
        """A call of ``entry`` that ran its graph without tracing: what the globals its graph
        read while it was built hold now (TFG109); one the tests left alone is staged."""
        for key, scope, name, value in self._reads.get(id(entry), ()):
            read = self.record.stale[key]
            read.later += 1
            if read.changed or name not in scope:
                continue
            now = child._fingerprint(scope[name])
            # The value the graph this call ran read while it was built (the first trace's,
            # where that graph cannot be told).
            kept = self._kept_value(key, fn, args, kwargs) or value
            if now[0] != kept[0]:
                read.changed = now[1]
                read.traced = kept[1]
                read.test = read.test or self.test
            elif not read.staged and len(self._traced_values.get((id(entry), key), ())) <= 1:
                read.staged = self._stage_stale(fn, args, kwargs, scope, name)
                read.test = read.test or self.test

    def _kept_value(
        self, key: tuple[str, int], fn: Any, args: tuple[Any, ...], kwargs: Any
    ) -> tuple[Any, str] | None:
        """What line ``key`` read while the graph a call of ``fn`` with these arguments
        runs was built."""
        if not self._graph_values:
            return None
        try:
            with self._paused():
                graph = fn.get_concrete_function(*args, **kwargs).graph
        except Exception:
            return None
        found = self._graph_values.get((key, id(graph)))
        return found[1] if found is not None and found[0] is graph else None

    def _stage_stale(
        self, fn: Any, args: tuple[Any, ...], kwargs: Any, scope: dict[str, Any], name: str
    ) -> str:
        """Rebind the global for a moment and ask ``fn`` for the graph its last call's
        arguments select (no call: the tests' state stays as it was): the shown new value
        when that is still the graph built before, with no new trace; else ''."""
        old = scope[name]
        values = child._staged_values(old)
        if not values:
            return ""
        try:
            with self._paused():
                count = fn.experimental_get_tracing_count()
                before = fn.get_concrete_function(*args, **kwargs)
                scope[name] = values[0]
                after = fn.get_concrete_function(*args, **kwargs)
                same = after is before and fn.experimental_get_tracing_count() == count
        except Exception:
            return ""
        finally:
            scope[name] = old
        return repr(values[0]) if same else ""

    @contextlib.contextmanager
    def _paused(self) -> Iterator[None]:
        """Record nothing meanwhile: a trace the probe makes itself is none of the tests'."""
        self.on = False
        try:
            yield
        finally:
            self.on = True

    @functools.cached_property
    def _try_bodies(self) -> dict[tuple[str, int], list[tuple[str, int]]]:
        """The first line of each TFG206 finding's ``try`` body, with the findings."""
        found: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for key in self.record.handlers:
            body = self.record.bodies.get(key)
            if body is not None:
                found.setdefault(body, []).append(key)
        return found

    def _note_try_graph(self, body: tuple[str, int]) -> None:
        graph = ops.get_default_graph()
        for key in self._try_bodies[body]:
            graphs = self._try_graphs.setdefault(key, [])
            if len(graphs) < 3 and all(g is not graph for g in graphs):
                graphs.append(graph)

    def _read_stale(self, where: tuple[str, int], frame: FrameType) -> None:
        """A flagged line reads a module global (or an attribute of ``self``) while a graph is
        built (TFG109)."""
        shown = self.stale[where]
        stack = self._stack
        if not stack:
            return
        scope: dict[str, Any] | None
        if shown.startswith("self."):
            # An attribute of the object: its `__dict__` holds it as a module's globals do.
            name = shown[len("self.") :]
            scope = getattr(frame.f_locals.get("self"), "__dict__", None)
        else:
            name = shown
            scope = None if name in frame.f_locals else frame.f_globals
        if not isinstance(scope, dict) or name not in scope:
            return
        entry = stack[0].entry
        value = child._fingerprint(scope[name])
        graph: Any = ops.get_default_graph()
        while graph is not None:  # a branch's graph and the function graphs around it
            self._graph_values.setdefault((where, id(graph)), (graph, value))
            graph = getattr(graph, "outer_graph", None)
        seen = self._traced_values.setdefault((id(entry), where), {})
        if value[0] not in seen:
            seen[value[0]] = value[1]
            read = self.record.stale.get(where)
            if read is not None and len(seen) > 1:  # another trace saw another value
                read.traced = " or ".join(seen.values())
        reads = self._reads.setdefault(id(entry), [])
        if any(r[0] == where for r in reads):
            return
        reads.append((where, scope, name, value))
        self.record.stale.setdefault(where, StaleRead(shown, f"{entry.name}()", value[1]))

    def _name_dataset_functions(self) -> None:
        wrapper_class = structured_function.StructuredFunctionWrapper
        original = wrapper_class.__init__
        probe = self

        @functools.wraps(original)
        def __init__(wrapper: Any, func: Any, transformation_name: Any, *a: Any, **k: Any) -> None:
            __tracebackhide__ = True
            stack = probe._stack
            if stack or not probe.on:
                original(wrapper, func, transformation_name, *a, **k)
                return
            name = getattr(func, "__name__", "") or "function"
            entry = Entry(f"{name} (a {transformation_name} function)", per_element=True)
            stack.append(_Call(entry))
            try:
                original(wrapper, func, transformation_name, *a, **k)
            finally:
                stack.pop()

        wrapper_class.__init__ = __init__  # type: ignore[method-assign]

    def _watch_saves(self) -> None:
        """What ``tf.saved_model.save`` (and Keras's export, which calls it) writes of each
        flagged tf.function of the saved object: the graphs it holds once written, those
        saving traced included (TFG301)."""
        original = saved_model_save.save_and_return_nodes
        probe = self

        @functools.wraps(original)
        def save_and_return_nodes(
            obj: Any, export_dir: Any, signatures: Any = None, *a: Any, **k: Any
        ) -> Any:
            __tracebackhide__ = True
            found = probe._saved_functions(obj, signatures) if probe.on else []
            try:
                result = original(obj, export_dir, signatures, *a, **k)
            except ValueError as exc:
                for site, _, signed in found:
                    if signed and site.saved is None:
                        text = str(exc).splitlines()[0] if str(exc) else ""
                        site.saved = SavedFunction((), False, f"ValueError: {text}", probe.test)
                raise
            for site, fn, _ in found:
                if site.saved is None:
                    site.saved = _saved_graphs(fn, probe.test)
            return result

        saved_model_save.save_and_return_nodes = save_and_return_nodes

    def _saved_functions(self, obj: Any, signatures: Any) -> list[tuple[CallSite, Any, bool]]:
        """The flagged tf.functions saving ``obj`` writes: its methods and attributes that
        are tf.functions, and the signatures (whether each was given as one)."""
        functions: dict[int, tuple[Any, bool]] = {}
        with contextlib.suppress(Exception):  # an object that refuses to be looked at
            for name in dir(type(obj)):
                if isinstance(
                    inspect.getattr_static(type(obj), name, None), polymorphic_function.Function
                ):
                    fn = getattr(obj, name)
                    functions[id(fn)] = (fn, False)
            for value in vars(obj).values():
                if isinstance(value, polymorphic_function.Function):
                    functions[id(value)] = (value, False)
        given = signatures.values() if isinstance(signatures, Mapping) else [signatures]
        for fn in given:
            if isinstance(fn, polymorphic_function.Function):
                functions[id(fn)] = (fn, True)
        found = []
        for fn, signed in functions.values():
            site = self._defined(fn, _entry_name(fn))
            if site is not None:
                found.append((site, fn, signed))
        return found

    # -- recording
    def _count(self, seen: Seen) -> bool:
        graph = ops.inside_function()
        stack = self._stack
        call = stack[0] if stack else None
        if graph:
            seen.graph += 1
            building = (call.serial if call is not None else 0, id(ops.get_default_graph()))
            seen.run = seen.run + 1 if seen.run_of == building else 1
            seen.run_of = building
            seen.most = max(seen.most, seen.run)
            if call is not None:
                call.saw_graph = True
                seen.entries[id(call.entry)] = call.entry
            else:
                seen.entries[id(self._unnamed)] = self._unnamed
        elif call is not None:
            seen.eager += 1
            seen.eager_entries[id(call.entry)] = call.entry
            if call.forced:
                seen.forced += 1
        else:
            seen.plain += 1
        if seen.test is None:
            seen.test = self.test
        return graph

    def function_made(self, function: Any, frame: FrameType | None) -> None:
        """A Function made by a flagged ``tf.function(...)`` call of a function defined
        elsewhere (``tf.function(self.model.error)`` in a callback) counts under that line."""
        where = self.caller(frame) if self.on else None
        if where is not None and where in self.wanted:
            with contextlib.suppress(Exception):
                function._tflint_graph_made = where

    def hit(self, kind: str, name: str, frame: FrameType | None) -> None:
        if not self.on:
            return
        where = self.caller(frame)
        if where is None or where not in self.wanted:
            return
        seen = self.record.hits.setdefault(where, {}).setdefault(f"{kind}:{name}", Seen())
        self._count(seen)

    def _local(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if not self.on:
            return None
        pending = self._pending.pop(frame, None) if self._pending else None
        if event == "line":
            where = self.locate(frame.f_code.co_filename, frame.f_lineno)
            if self._last and where is not None and self._last.get(frame, where) != where:
                del self._last[frame]  # another statement ran since the body line
            if pending is not None:
                if pending[0] == where:
                    self._pending[frame] = pending  # AutoGraph made several lines of it
                    return self._local
                self._change(pending, frame)
            if where is not None and where in self.wanted:
                if where in self._bodies:
                    if self._last.get(frame) == where:
                        return self._local  # the same statement, another generated line
                    self._last[frame] = where
                graph = self._count(self.record.lines.setdefault(where, Seen()))
                if graph and where in self.stale:
                    self._read_stale(where, frame)
                if graph and where in self._try_bodies:
                    self._note_try_graph(where)
                names = self.watches.get(where)
                if names is not None:
                    state = self._read(frame, names)
                    self._pending[frame] = (where, state, ".".join(names), graph)
        elif pending is not None:  # return or exception: the statement is over
            self._change(pending, frame)
        if event == "return" and self._last:
            self._last.pop(frame, None)
        if event == "exception":
            self._exception(frame, arg[1])
        return self._local

    def _read(self, frame: FrameType, names: tuple[str, ...]) -> Any:
        value: Any = child._MISSING
        for scope in (frame.f_locals, frame.f_globals):
            if names[0] in scope:
                value = scope[names[0]]
                break
        try:
            for attr in names[1:]:
                if value is child._MISSING:
                    break
                value = getattr(value, attr, child._MISSING)
        except Exception:
            value = child._MISSING
        return None if value is child._MISSING else child._fingerprint(value)

    def _change(
        self, pending: tuple[tuple[str, int], Any, str, bool], frame: FrameType | None
    ) -> None:
        where, before, label, graph = pending
        if before is None or frame is None:
            return
        after = self._read(frame, self.watches[where])
        if after is None:
            return
        changes = self.record.changes.setdefault(where, [])
        if len(changes) < 50:
            changes.append(Change(label, graph, before[1], after[1], before[0] != after[0]))

    def _exception(self, frame: FrameType, exc: BaseException | None) -> None:
        if exc is None:
            return
        mro = tuple(c.__name__ for c in type(exc).__mro__)
        if not INTERESTING.intersection(mro):
            return
        where = self.locate(frame.f_code.co_filename, frame.f_lineno)
        if where is None:
            return
        first, last = self._span(frame, where[1])
        self._add_raised(where, first, last, exc, mro, ops.inside_function())

    def _add_raised(
        self,
        where: tuple[str, int],
        first: int,
        last: int,
        exc: BaseException,
        mro: tuple[str, ...],
        graph: bool | None,
    ) -> None:
        key = (where, type(exc).__name__, graph, self.test)
        if key in self._seen_raised or len(self.record.raised) >= _MAX_RAISED:
            return
        self._seen_raised.add(key)
        message = child._describe(self, exc)["message"]
        self.record.raised.append(
            Raised(
                where[0], where[1], first, last, type(exc).__name__, mro, message, graph, self.test
            )
        )

    def _span(self, frame: FrameType, line: int) -> tuple[int, int]:
        """The first and last user line of the function ``frame`` runs (for AutoGraph's
        code, of the converted function it was made from)."""
        code = frame.f_code
        found = self._spans.get(id(code))
        if found is None:
            real = child._real(code.co_filename)
            table = self.generated.get(real)
            if table is not None and real not in self.files:
                lines = list(table.values())
            else:
                lines = [n for _, _, n in code.co_lines() if n is not None]
            found = (min(lines), max(lines)) if lines else (line, line)
            self._spans[id(code)] = found
        return found

    def failed(self, exc: BaseException) -> None:
        """A test failed with ``exc``: every flagged line in its traceback saw it raised."""
        mro = tuple(c.__name__ for c in type(exc).__mro__)
        if not INTERESTING.intersection(mro):
            return
        for where in self.exception_locations(exc):
            self._add_raised(where, where[1], where[1], exc, mro, None)
