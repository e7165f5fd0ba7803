"""Verdicts of dynamic mode: what the child saw, turned into a status per finding (SPEC §4).

The parent plans :class:`Target`\\ s (see :mod:`tflint_graph.dynamic.plan`), runs
:mod:`tflint_graph.dynamic.child` in an isolated child process (one per module, see
:func:`~tflint_graph.dynamic.isolation.run_isolated`) and reads its report here.  The child's
parameters travel as a JSON string literal; nothing from the configuration is ever evaluated
(Python values of ``py:`` arguments go through ``ast.literal_eval`` in the child).  Only the
arguments the module's own code passes (:mod:`~tflint_graph.dynamic.calls`) are evaluated,
in the child, in the imported module's namespace, as that code itself would.

A call is a *phase*.  The first phase is a symbolic trace (``get_concrete_function`` on
``TensorSpec``\\ s whose unknown dims stay unknown) where the child can make one, else the
first call, which traces; then come calls with concrete values of the same signature, which
must not trace again.  Probe hits are counted twice: all of them, and those that ran outside
graph building (*eager*, at call time).  Per code:

- TFG101/103/104/107/108 (a probed effect: ``print``, ``random``, clocks and environment,
  ``logging``, file I/O): ``confirmed`` when the probe fired at the flagged line while
  TensorFlow traced and never at call time (kept when a later call fails on a guessed value:
  a traced graph runs no Python); ``not-reproduced`` when it fired at call time;
  ``unverified`` when it never fired there.
- TFG102/105/106 (outer state): ``confirmed`` when the flagged line ran and the watched global
  or attribute changed while tracing, and neither happened on calls that did not trace again.
- TFG201-205, TFG208: ``confirmed`` when tracing raised the documented exception type with
  the documented message (``RAISES_MESSAGE``, read under AutoGraph's and Keras's wrappers) and
  the flagged line anywhere in its traceback; TFG207: ``InaccessibleTensorError`` anywhere in
  the function (TensorFlow reports it where the list is used after the loop);
  ``not-reproduced`` when the line ran and nothing was raised.
- TFG109 (staged): the global is changed and the function called again: ``confirmed`` when the
  traced result stays the same while an eager run's result changes (a function that draws
  random numbers is compared with the global seeds reset before each call, after checking
  that this makes both its traced and its eager results repeat).
- TFG209 (staged): ``confirmed`` when the traced result differs from an eager run of the same
  inputs (lost writes read as zeros).
- TFG301 (staged): ``confirmed`` when new batch sizes make the tracing count grow.
- TFG401 (staged): the median call time traced and eager after warm-up, and their ratio:
  ``confirmed`` when the graph is less than 1.5x faster than running the body eagerly.
- TFG303 (at a call of a module-level tf.function): a fresh copy called with two distinct
  Python values (ints, floats or strings, as the flagged call passes) at the parameter the
  call varies, then the first value again: ``confirmed`` when the second value traced once
  more and the repeated one did not; ``not-reproduced`` when the second value reused the
  first one's graph.
- TFG403 (at a first call in a timed block the rule still reports): a fresh copy of the
  tf.function, its first call (which traces) against the median warm call: ``confirmed``
  when it traced and took more than twice a warm call.
- TFG206: ``confirmed`` when the ``try`` body ran while tracing, the handler never ran, and
  no later call ran the body again (a traced graph runs no Python: the runtime error of an
  op raises after the ``try`` is over); ``not-reproduced`` when later calls ran the body.
- TFG305: the traced graph's ops, counted by the module line that created them:
  ``confirmed`` when the loop's lines created at least one op per iteration (unrolled); with
  a module global as the count, a fresh, timed trace with a tenth of it shows the graph
  shrink.
- TFG404: the op types of the graph the calls traced (and of the functions it calls):
  ``confirmed`` when it holds nothing but placeholders, identities, constants and no-ops
  (the inputs, the outputs, the Python result frozen at trace time); ``not-reproduced``,
  naming them, when some op computes.
- TFG304 (staged): after the calls at the first shape, new sizes of the unknown dims (the
  first dim without a signature), each called once cold and five times warm, and the same for
  a copy of the function without ``jit_compile``: ``confirmed`` when every new shape's first
  call costs at least 5 ms and three warm calls more than a warm call, and, when it traced
  again, three times what the copy's first call adds (tracing alone), so the extra is XLA
  compiling for that shape; ``not-reproduced`` when no new shape costs clearly more than the
  copy's (or the module's own tf.function has no ``jit_compile``); ``unverified`` in
  between, or when the function called is not the module's own.
- TFG402 (module level, no call): the module is executed again with
  ``run_functions_eagerly`` recording its callers: ``confirmed`` when the flagged line
  passed True and ``functions_run_eagerly()`` is True after the import (and was after the
  real import); ``not-reproduced`` when a later line turned it off; ``unverified`` when the
  line does not run on import.
- anything else: ``unverified`` (no dynamic check).

Probed effects are counted at the module line that calls the probed function, looking
through AutoGraph's generated code, logging, and frozen stdlib modules (``os.environ.get``
runs in ``<frozen _collections_abc>``); a probed call made inside another (``np.save``
opening its file) is not counted again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tflint_graph.core.examples import ArgSpec, PyValue, TensorSpecLite, concrete_shape
from tflint_graph.dynamic.isolation import run_isolated

__all__ = [
    "CONFIRMED",
    "NOT_REPRODUCED",
    "UNVERIFIED",
    "Attempt",
    "DatasetSpec",
    "DictSpec",
    "ProbeRun",
    "SourceExpr",
    "Target",
    "TupleSpec",
    "VariablesSpec",
    "Verdict",
    "Watch",
    "confirm_module",
    "payload_source",
    "verdicts_from_report",
]

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not-reproduced"
UNVERIFIED = "unverified"

# Which probe kind confirms which trace-time-effect code.
PROBE_KINDS: dict[str, str] = {
    "TFG101": "print",
    "TFG103": "random",
    "TFG104": "clock",
    "TFG107": "logging",
    "TFG108": "io",
}

# Codes confirmed by a watched global or attribute that changes during tracing only.
WATCH_CODES = frozenset({"TFG102", "TFG105", "TFG106"})

# The exception TensorFlow documents for each tracing-error code (class names, matched
# against the exception's MRO).
RAISES: dict[str, tuple[str, ...]] = {
    "TFG201": ("OperatorNotAllowedInGraphError",),
    "TFG202": ("AttributeError", "NotImplementedError"),
    "TFG203": ("OperatorNotAllowedInGraphError", "TypeError"),
    "TFG204": ("NotImplementedError",),
    "TFG205": ("ValueError",),
    "TFG207": ("InaccessibleTensorError",),
    "TFG208": ("ValueError",),
}

# What the documented error's own message says (a regular expression, searched in the message
# with the AutoGraph and Keras wrappers removed): the exception type alone is too common (a
# TypeError from a guessed dtype is no tensor used as a Python value).
RAISES_MESSAGE: dict[str, str] = {
    "TFG201": r"(?i)symbolic",
    "TFG202": r"numpy",
    "TFG203": r"(?i)symbolic",
    "TFG204": r"numpy",
    "TFG205": r"Variable",
    # The Keras object's variables are made where it is first called, not where it is built.
    "TFG208": r"singleton tf\.Variables|created on the first call",
}

# Codes whose error TensorFlow raises away from the flagged line.
RAISED_ANYWHERE = frozenset({"TFG207"})
# Codes whose error comes later in the same traced code: a layer built on the flagged line
# makes its variables (and raises) at its first call, a few lines further on.
RAISED_LATER = frozenset({"TFG208"})
# What TensorFlow says when a later trace of a tf.function makes variables (TFG208).
_NON_FIRST_CALL = re.compile(r"non-first call|singleton tf\.Variables|created on the first call")

# A graph less than this many times faster than eager buys nothing worth a tf.function.
SPEEDUP_WORTH_IT = 1.5

CALLS = 3  # the first call plus two later calls with new values

_CHILD = Path(__file__).with_name("child.py")


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``confirmed``, ``not-reproduced`` or ``unverified``; ``evidence`` says
    what happened (or why nothing could be checked), without the status word."""

    status: str
    evidence: str
    # The inputs the calls actually used (``float32[2,3]``) and the device they ran on.
    inputs: str = ""
    device: str = ""


@dataclass(frozen=True)
class TupleSpec:
    """One argument that is a tuple of tensors (the ``data`` Keras passes to ``train_step``)."""

    items: tuple[ArgSpec, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(i) for i in self.items) + ")"


@dataclass(frozen=True)
class DictSpec:
    """One argument that is a dict of tensors (a dataset element of named features, the
    ``data`` of a step fed from one): key -> spec."""

    items: tuple[tuple[str, ArgSpec], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in self.items) + "}"


@dataclass(frozen=True)
class SourceExpr:
    """An argument the module's own code passes (see :mod:`~tflint_graph.dynamic.calls`):
    source text over the module's names, evaluated in the child in the module's namespace;
    with ``scope``, in that other module's of the project (the training script that builds
    the object, see :mod:`~tflint_graph.dynamic.project`)."""

    text: str
    scope: str = ""
    # The scope module's file: the child loads it from there when its name imports another
    # module (a `tests/` folder without `__init__.py` behind an installed `tests` package).
    scope_path: str = ""

    def __str__(self) -> str:
        return f"{self.scope}: {self.text}" if self.scope else self.text


@dataclass(frozen=True)
class VariablesSpec:
    """One argument that is a list of ``tf.Variable``\\ s (one per tensor spec): what a body
    ``.assign``\\ s through (``for ema, w in zip(ema_weights, weights): ema.assign(...)``).
    The child makes them once and passes the same objects to every call, as a training loop
    passes its model's weights."""

    items: tuple[TensorSpecLite, ...]
    one: bool = False  # the variable itself, not a list: a body that `.assign`s the argument

    def __str__(self) -> str:
        if self.one:
            return f"Variable {self.items[0]}"
        return "[" + ", ".join(f"Variable {i}" for i in self.items) + "]"


@dataclass(frozen=True)
class DatasetSpec:
    """One argument that is a ``tf.data.Dataset`` of two batches of ``element`` (what an
    evaluation or training function iterates: ``for images, targets in dataset``)."""

    element: ArgSpec | TupleSpec | DictSpec

    def __str__(self) -> str:
        return f"Dataset of {self.element}"


Spec = ArgSpec | TupleSpec | DictSpec | SourceExpr | VariablesSpec | DatasetSpec


@dataclass(frozen=True)
class Attempt:
    """One way to call the target: where the inputs came from, and the inputs."""

    source: str  # "input_signature", "config", "annotations", "guessed"
    args: tuple[Spec, ...] = ()
    kwargs: Mapping[str, Spec] = field(default_factory=dict)

    def __str__(self) -> str:
        parts = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs.items()]
        return ", ".join(parts) or "no arguments"


@dataclass(frozen=True)
class Watch:
    """State a finding claims changes at trace time only: a module global (``kind="global"``),
    an attribute of the target's own object (``"self"``), an attribute of a global
    (``"global_attr"``), or the mutable default of a parameter (``"default"``: ``name`` the
    function, ``attr`` the parameter)."""

    line: int
    code: str
    kind: str
    name: str = ""
    attr: str = ""

    @property
    def label(self) -> str:
        if self.kind == "self":
            return f"self.{self.attr}"
        if self.kind == "default":
            return f"the default of {self.attr} in {self.name}()"
        return f"{self.name}.{self.attr}" if self.kind == "global_attr" else self.name


# Ops that check the values they get when the graph runs and raise a tf.errors.OpError on
# bad ones (TFG206): assertions, numeric checks, iterators at their end, Python functions
# (tf.py_function), lookups by data-dependent indices, decoders and parsers, file reads,
# factorizations; counted only with an input known at run time alone.  Not DecodeCompressed:
# with its default compression_type "" it copies its input and never fails.  Ops outside the set
# may fail too (shapes unknown while tracing): no claim either way is made for them.
RUNTIME_CHECKED_OPS = frozenset(
    {
        "Assert",
        "CheckNumerics",
        "CheckNumericsV2",
        "EnsureShape",
        "IteratorGetNext",
        "IteratorGetNextSync",
        "EagerPyFunc",
        "PyFunc",
        "PyFuncStateless",
        "GatherV2",
        "GatherNd",
        "ResourceGather",
        "ResourceGatherNd",
        "ScatterNd",
        "TensorScatterUpdate",
        "TensorScatterAdd",
        "UnsortedSegmentSum",
        "DecodeJpeg",
        "DecodePng",
        "DecodeImage",
        "DecodeBmp",
        "DecodeGif",
        "DecodeRaw",
        "DecodeAndCropJpeg",
        "DecodeWav",
        "DecodeBase64",
        "DecodeJSONExample",
        "DecodeCSV",
        "ParseExample",
        "ParseExampleV2",
        "ParseSingleExample",
        "ParseSequenceExample",
        "ParseSequenceExampleV2",
        "ParseTensor",
        "StringToNumber",
        "ReadFile",
        "Cholesky",
        "MatrixInverse",
        "MatrixSolve",
        "Range",
    }
)


@dataclass(frozen=True)
class Target:
    """A callable of one module to run, how, and the findings it can confirm.

    ``kind``: ``function`` (a module-level tf.function), ``wrap`` (a module-level function
    wrapped in ``tf.function``), ``method`` (``Class.method`` on ``Class(*ctor)``, wrapped when
    not a tf.function), ``keras_call`` (calling a Keras layer/model/loss object inside a
    tf.function), ``keras_step`` (``train_step`` one batch per call through Keras's own train
    function, ``test_step``/``predict_step`` through ``tf.function``, after compile and build),
    ``map`` (a ``Dataset.map`` callback)."""

    path: str
    findings: tuple[tuple[int, str], ...]
    attempts: tuple[Attempt, ...] = ()
    kind: str = "function"
    module: str = ""
    ctor: tuple[Spec, ...] = ()
    ctor_kwargs: Mapping[str, Spec] = field(default_factory=dict)
    # Guessed constructor arguments tried when the module's own call fails, and the note
    # that then replaces ``note``.
    fallback_ctor_kwargs: Mapping[str, Spec] = field(default_factory=dict)
    fallback_note: str = ""
    # The module's own ``model.compile(...)`` for a Keras step (else a default compile).
    compile_args: tuple[Spec, ...] = ()
    compile_kwargs: Mapping[str, Spec] = field(default_factory=dict)
    watches: tuple[Watch, ...] = ()
    stale: tuple[str, ...] = ()
    # Findings whose flagged expression a short-circuit may skip though its line runs
    # (after an `and`/`or`, in a conditional expression's branch): (line, code).
    maybe_skipped: tuple[tuple[int, str], ...] = ()
    eager_diff: bool = False
    shapes: bool = False
    timing: bool = False
    autograph: bool = True
    # For guessed inputs, what each positional parameter looks like by its name ("tensor",
    # "label", "string", or "fixed" when the source described it): the child refines the
    # guess with the input shape of a Keras model the module builds.
    roles: tuple[str, ...] = ()
    # The names of the parameters the attempts fill (positional, then keyword-only): a
    # TensorFlow error names the placeholder it rejects, which carries the name.
    names: tuple[str, ...] = ()
    # ``factory``: the name of the tf.function the factory ``path`` returns.
    inner: str = ""
    # A module-level function callable without arguments that returns an instance of the
    # owner class (``build_agent()``): the owner when no constructor call can be made.
    owner_factory: str = ""
    # Tests of the project that build the owner (pytest node ids under ``project_root``).
    owner_tests: tuple[str, ...] = ()
    project_root: str = ""
    # How the target was reached when that is not obvious ("via tf.function(helper())...").
    note: str = ""
    # ``note`` without how the owner is constructed (for an owner a project test built).
    base_note: str = ""
    # TFG303: (call line, parameter, positional index or None, "int"/"float"/"str") to stage
    # distinct Python values for.  TFG403: the lines of first calls in a timed block.
    # TFG305: (loop line, last line, iterations, module global that sets the count or "").
    retrace: tuple[tuple[int, str, int | None, str], ...] = ()
    # TFG208 at a call: (call line, parameter, positional index or None, the optimizer class
    # the call makes, as the module spells it) to call a fresh copy with a second optimizer.
    swaps: tuple[tuple[int, str, int | None, str], ...] = ()
    first_call: tuple[int, ...] = ()
    loops: tuple[tuple[int, int, int, str], ...] = ()
    # TFG206: (except line, first line of the try body, first line of the handler's body).
    handlers: tuple[tuple[int, int, int], ...] = ()
    # TFG404: read the op types of the traced graph.  TFG304: time first calls at new
    # shapes, with XLA and without.
    ops: bool = False
    xla: bool = False


@dataclass
class ProbeRun:
    """What one child run gave: a verdict per ``(line, code)``, the device, the wall time,
    and the child's failure reason (empty when it ran to the end)."""

    verdicts: dict[tuple[int, str], Verdict] = field(default_factory=dict)
    device: str | None = None
    duration: float = 0.0
    reason: str = ""
    report: Any = None


def try_verdict(body: int, ops: Mapping[str, int], when: str, suffix: str = "") -> Verdict:
    """TFG206 from the op types (with a line each) the ``try`` body put in a graph."""
    checked = {t: n for t, n in ops.items() if t in RUNTIME_CHECKED_OPS}
    if not checked:
        shown = ", ".join(
            t[:-1] + " on static values" if t.endswith("*") else t for t in sorted(ops)[:6]
        )
        return Verdict(
            UNVERIFIED,
            f"the try body (line {body}) ran {when}, but none of its graph ops ({shown or 'none'}) "
            f"is one known to raise on the values it gets at run time{suffix}",
        )
    shown = ", ".join(f"{t} (line {n})" for t, n in sorted(checked.items())[:4])
    return Verdict(
        CONFIRMED,
        f"the try body (line {body}) ran {when} and put {shown} in the graph, which checks its "
        "values when the graph runs; the handler never ran: such an op raises after this try "
        f"has finished{suffix}",
    )


# -- the child's parameters ----------------------------------------------------------------


def payload_source(params: dict[str, Any] | None = None) -> str:
    """The payload run in the child: it loads ``child.py`` by path (the user's project may
    shadow package names) and hands it ``params`` as a JSON string literal."""
    blob = json.dumps(params if params is not None else {"targets": [], "calls": CALLS})
    return (
        "import importlib.util as _util\n"
        f"_spec = _util.spec_from_file_location('_tflint_graph_child', {str(_CHILD)!r})\n"
        "_child = _util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_child)\n"
        f"_P = {blob!r}\n"
        "_child.run(module, report, _P)\n"
    )


def spec_json(spec: Spec, unknown: int = 2) -> dict[str, Any]:
    if isinstance(spec, PyValue):
        return {"kind": "py", "repr": repr(spec.value)}
    if isinstance(spec, TensorSpecLite):
        # "relaxed" is what the symbolic trace uses: unknown dims stay unknown (SPEC §4).
        relaxed = None if spec.shape is None else list(spec.shape)
        out: dict[str, Any] = {
            "kind": "tensor",
            "dtype": spec.dtype,
            "shape": list(concrete_shape(spec, unknown)),
            "relaxed": relaxed,
        }
        if spec.values is not None:
            out["values"] = list(spec.values)
        return out
    if isinstance(spec, TupleSpec):
        return {"kind": "tuple", "items": [spec_json(s, unknown) for s in spec.items]}
    if isinstance(spec, DictSpec):
        return {"kind": "dict", "items": {k: spec_json(s, unknown) for k, s in spec.items}}
    if isinstance(spec, SourceExpr):
        out = {"kind": "expr", "source": spec.text}
        if spec.scope:
            out["scope"] = spec.scope
            out["scope_path"] = spec.scope_path
        return out
    if isinstance(spec, VariablesSpec):
        out = {"kind": "variables", "items": [spec_json(s, unknown) for s in spec.items]}
        if spec.one:
            out["one"] = True
        return out
    if isinstance(spec, DatasetSpec):
        return {"kind": "dataset", "element": spec_json(spec.element, unknown)}
    raise TypeError(f"not an argument spec: {spec!r}")


def params_for(
    targets: Sequence[Target], *, device: str | None = None, unknown: int = 2
) -> dict[str, Any]:
    out = []
    for i, t in enumerate(targets):
        out.append(
            {
                "id": i,
                "path": t.path,
                "kind": t.kind,
                "module": t.module,
                "findings": [list(f) for f in t.findings],
                "expected": [[line, list(RAISES[c])] for line, c in t.findings if c in RAISES],
                "raised_anywhere": sorted(
                    {RAISES[c][0] for _, c in t.findings if c in RAISED_ANYWHERE}
                ),
                "ctor": [spec_json(s, unknown) for s in t.ctor],
                "ctor_kwargs": {k: spec_json(s, unknown) for k, s in t.ctor_kwargs.items()},
                "fallback_ctor_kwargs": {
                    k: spec_json(s, unknown) for k, s in t.fallback_ctor_kwargs.items()
                },
                "compile_args": [spec_json(s, unknown) for s in t.compile_args],
                "compile_kwargs": {k: spec_json(s, unknown) for k, s in t.compile_kwargs.items()},
                "options": {"autograph": t.autograph},
                "attempts": [
                    {
                        "source": a.source,
                        "shown": str(a),
                        "args": [spec_json(s, unknown) for s in a.args],
                        "kwargs": {k: spec_json(s, unknown) for k, s in a.kwargs.items()},
                    }
                    for a in t.attempts
                ],
                "watch": [
                    {"kind": w.kind, "name": w.name, "attr": w.attr, "label": w.label}
                    for w in t.watches
                ],
                "roles": list(t.roles),
                "names": list(t.names),
                "inner": t.inner,
                "owner_factory": t.owner_factory,
                "owner_tests": list(t.owner_tests),
                "project_root": t.project_root,
                "stale": list(t.stale),
                "eager_diff": t.eager_diff,
                "shapes": t.shapes,
                "timing": t.timing,
                "retrace": [list(r) for r in t.retrace],
                "swap": [list(w) for w in t.swaps],
                "first_call": list(t.first_call),
                "loops": [list(loop) for loop in t.loops],
                "handlers": [list(h) for h in t.handlers],
                "ops": t.ops,
                "xla": t.xla,
            }
        )
    return {"calls": CALLS, "device": device, "unknown_dim": unknown, "targets": out}


# -- verdicts ------------------------------------------------------------------------------


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


def _kind_hits(call: dict[str, Any], line: int, kind: str, key: str = "hits") -> dict[str, int]:
    hits = call.get(key, {}).get(str(line), {})
    return {k.partition(":")[2]: int(v) for k, v in hits.items() if k.partition(":")[0] == kind}


def _n_calls(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def _raised(exc: dict[str, Any]) -> str:
    where = f" at line {exc['line']}" if exc.get("line") else ""
    return f"{exc['type']}{where}: {exc['message']}"


def _sum(counts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for name, n in c.items():
            total[name] = total.get(name, 0) + n
    return total


class _Judge:
    """Verdicts for the findings of one target from its part of the child's report.

    The first phase is the symbolic trace when the child could make one (``symbolic``), else
    the first call, which traces.  A probe hit is *graph* when it ran while TensorFlow built
    a graph and *eager* when it ran at call time: only eager hits show a statement that is
    not trace-time only, and graph hits keep their weight when a later call fails."""

    def __init__(self, target: Target, entry: dict[str, Any]) -> None:
        self.target = target
        self.entry = entry
        attempts = entry.get("attempts", [])
        chosen = entry.get("chosen")
        self.result: dict[str, Any] | None = attempts[chosen] if chosen is not None else None
        self.attempts = attempts
        result = self.result or {}
        calls: list[dict[str, Any]] = result.get("calls", [])
        self.calls = calls
        self.symbolic = bool(calls and calls[0].get("symbolic"))
        # The calls with values, after the symbolic trace.
        self.valued = calls[1:] if self.symbolic else calls
        inputs = result.get("inputs")
        self.inputs = str(inputs or "")
        note = target.fallback_note if entry.get("ctor_fallback") else target.note
        if result.get("from_test"):
            # The object a test built: the planned constructor call (and what it staged)
            # never ran.
            note = target.base_note
        source = result.get("source")
        traced_with = result.get("traced_with")
        shown = f"{inputs} (traced as {traced_with})" if traced_with else inputs
        if not inputs:
            self.suffix = f"; {note}" if note else ""
        elif inputs == "no arguments" and source == "guessed":
            self.suffix = "; called with no arguments (its parameters' defaults, if any)"
        elif source == "guessed":
            self.suffix = f"; guessed inputs {shown}"
        else:
            self.suffix = f"; inputs {shown} from {source}"
        if result.get("via"):
            self.suffix += f"; called through {result['via']}"
        if result.get("calls_skipped"):
            self.suffix += f"; {result['calls_skipped']}"
        if inputs and note:
            self.suffix += f"; {note}"

    def verdict(self, line: int, code: str) -> Verdict:
        return dataclasses.replace(self._verdict(line, code), inputs=self.inputs)

    def _verdict(self, line: int, code: str) -> Verdict:
        if self.entry.get("error"):
            return Verdict(UNVERIFIED, str(self.entry["error"]))
        if code == "TFG402" and self.target.kind != "caller":
            return self._switch(line, self.entry.get("switch"))
        if self.result is None:
            return Verdict(UNVERIFIED, self._no_attempt())
        first = self.calls[0]
        if code == "TFG402":
            return self._switched(line)
        if code == "TFG302":
            return self._recreated(line)
        if code in PROBE_KINDS:
            return self._probe(line, code, first)
        if code in WATCH_CODES:
            return self._watch(line, code, first)
        experiments = self.result.get("experiments", {})
        if code == "TFG208" and f"swap:{line}" in experiments:
            return self._swapped(line, experiments[f"swap:{line}"])
        if code in RAISES:
            return self._raises(line, code, first)
        if code == "TFG109":
            return self._stale(line, first, experiments)
        if code == "TFG209":
            return self._eager_diff(experiments.get("eager_diff"))
        if code == "TFG301":
            return self._shapes(experiments.get("shapes"))
        if code == "TFG401":
            return self._timing(experiments.get("timing"))
        if code == "TFG303":
            return self._retrace(line, experiments.get(f"retrace:{line}"))
        if code == "TFG403":
            return self._first_call(experiments.get("first_call"))
        if code == "TFG305":
            return self._graph(line, experiments.get(f"graph:{line}"))
        if code == "TFG404":
            return self._work(experiments.get("ops"))
        if code == "TFG304":
            return self._recompiled(experiments.get("xla"))
        if code == "TFG206":
            return self._bypassed(line, first, experiments.get(f"try:{line}"))
        return Verdict(UNVERIFIED, f"no dynamic check for {code}")

    def _no_attempt(self) -> str:
        if not self.attempts:
            return "no inputs: add an input_signature, annotations, or a config example"
        # The first attempt is the most natural guess: its error says most.
        last = self.attempts[0]
        if last.get("error"):
            return f"{last['error']} (inputs {last.get('inputs')} from {last.get('source')})"
        calls = last.get("calls") or [{}]
        exc = calls[0].get("exception")
        tried = len(self.attempts)
        what = (
            f"{tried} input guesses (the first, {last.get('inputs')}, raised)"
            if tried > 1
            else f"inputs {last.get('inputs')}"
        )
        if exc:
            return f"the function could not be run with {what}: {_raised(exc)}"
        return f"the function could not be run with {what}"

    def _later_exception(self) -> dict[str, Any] | None:
        return next((c["exception"] for c in self.calls[1:] if c.get("exception")), None)

    def _tracing(self) -> str:
        return (
            "while tracing with symbolic inputs"
            if self.symbolic
            else "while tracing on the first call"
        )

    def _per_call(self) -> list[dict[str, Any]]:
        """Calls with values that did not trace again: what runs on them runs on every call."""
        return [c for c in self.valued if c.get("traced") is not True and c is not self.calls[0]]

    def _probe(self, line: int, code: str, first: dict[str, Any]) -> Verdict:
        kind = PROBE_KINDS[code]
        every = _sum([_kind_hits(c, line, kind) for c in self.calls])
        eager = _sum([_kind_hits(c, line, kind, "eager_hits") for c in self.calls])
        graph = {k: n - eager.get(k, 0) for k, n in every.items() if n - eager.get(k, 0) > 0}
        what = ", ".join(sorted(every)) or kind
        exc = first.get("exception")
        later_exc = self._later_exception()
        completed = [c for c in self._per_call() if not c.get("exception")]
        if eager:
            n = sum(eager.values())
            return Verdict(
                NOT_REPRODUCED,
                f"{what} ran {_times(n)} at call time, outside graph tracing, over "
                f"{len(self.valued)} calls: it is not trace-time only here{self.suffix}",
            )
        if not graph:
            if exc is not None:
                return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)}{self.suffix}")
            if later_exc is not None:
                return Verdict(UNVERIFIED, f"a later call raised {_raised(later_exc)}{self.suffix}")
            ran = any(line in c.get("lines", ()) for c in self.calls)
            why = f"line ran but no {kind} call was seen there" if ran else "line never ran"
            return Verdict(UNVERIFIED, why + self.suffix)
        n1 = sum(graph.values())
        retraced = sum(1 for c in self.valued[1:] if c.get("traced"))
        head = f"{what} ran {_times(n1)} {self._tracing()}"
        if exc is not None:
            tail = f", then tracing raised {_raised(exc)}; a traced graph runs no Python"
        elif completed:
            tail = (
                f", 0 times over {_n_calls(len(completed))} with values that reused the trace: "
                "trace-time only"
            )
        elif later_exc is not None:
            tail = (
                f"; the calls with values then raised {_raised(later_exc)}, but a traced graph "
                "runs no Python"
            )
        else:
            tail = ", never at call time: trace-time only"
        if retraced:
            again = "1 later call" if retraced == 1 else f"{retraced} later calls"
            tail += f" (the function traced again on {again})"
        return Verdict(CONFIRMED, f"{head}{tail}{self.suffix}")

    def _watch(self, line: int, code: str, first: dict[str, Any]) -> Verdict:
        watch = next((w for w in self.target.watches if w.line == line and w.code == code), None)
        exc = first.get("exception")
        if exc is not None:
            return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)}{self.suffix}")
        later_exc = self._later_exception()
        per_call = self._per_call()
        completed = [c for c in per_call if not c.get("exception")]
        ran_first = line in first.get("lines", ())
        ran_later = any(line in c.get("lines", ()) for c in per_call)
        # The plan named a written variable the child could not read (a closure cell).
        unreadable = watch is not None and watch.label in first.get("missing", ())
        if unreadable and code == "TFG105" and ran_first and not ran_later and completed:
            # A global/nonlocal write is the statement itself: running while tracing only
            # is the whole claim, even where the variable (a closure cell) cannot be read.
            return Verdict(
                CONFIRMED,
                f"the write on line {line} ran {self._tracing()} and never over "
                f"{_n_calls(len(completed))} after it{self.suffix}",
            )
        if watch is None:
            return Verdict(UNVERIFIED, "the changed state could not be named from the source")
        label = watch.label
        if code == "TFG102" and label not in first.get("containers", ()):
            return Verdict(UNVERIFIED, f"{label} does not hold a list, dict or set{self.suffix}")
        change1 = first.get("changed", {}).get(label)
        later = [c.get("changed", {}).get(label) for c in per_call]
        if any(later) or ran_later:
            return Verdict(
                NOT_REPRODUCED,
                f"{label} changed on later calls too, which did not trace again{self.suffix}"
                if any(later)
                else f"line {line} ran again on later calls that did not trace{self.suffix}",
            )
        if change1 and ran_first:
            if completed:
                tail = f"and never over {_n_calls(len(completed))} after it"
            elif later_exc is not None:
                tail = (
                    f"; the calls with values then raised {_raised(later_exc)}, but a traced "
                    "graph runs no Python"
                )
            else:
                return Verdict(
                    UNVERIFIED, f"{label} changed while tracing; no later call ran{self.suffix}"
                )
            return Verdict(
                CONFIRMED,
                f"{label} changed {self._tracing()} ({change1}) {tail}; line {line} ran while "
                f"tracing only{self.suffix}",
            )
        if later_exc is not None:
            return Verdict(UNVERIFIED, f"a later call raised {_raised(later_exc)}{self.suffix}")
        if not ran_first:
            return Verdict(UNVERIFIED, f"line never ran{self.suffix}")
        return Verdict(
            UNVERIFIED, f"line {line} ran but {label} did not visibly change{self.suffix}"
        )

    def _raises(self, line: int, code: str, first: dict[str, Any]) -> Verdict:
        exc = first.get("exception")
        if exc is None:
            if line in first.get("lines", ()) and (line, code) in self.target.maybe_skipped:
                return Verdict(
                    UNVERIFIED,
                    f"line {line} ran during tracing and nothing was raised, but an `and`/`or`"
                    f" or a conditional expression there may have left the flagged part "
                    f"unevaluated{self.suffix}",
                )
            if line in first.get("lines", ()):
                return Verdict(
                    NOT_REPRODUCED,
                    f"line {line} ran during tracing and nothing was raised{self.suffix}",
                )
            return Verdict(UNVERIFIED, f"line never ran during tracing{self.suffix}")
        documented = bool(set(RAISES[code]) & set(exc.get("mro", ())))
        pattern = RAISES_MESSAGE.get(code)
        text = str(exc.get("detail") or exc.get("message", ""))
        specific = documented and (pattern is None or re.search(pattern, text) is not None)
        lines = set(exc.get("lines") or ([exc["line"]] if exc.get("line") else []))
        # TFG207's error surfaces where the list is used after the loop, not at the append.
        later = code in RAISED_LATER and any(at > line for at in lines)
        if specific and (line in lines or code in RAISED_ANYWHERE or later):
            return Verdict(CONFIRMED, _raised(exc) + self.suffix)
        if specific:
            return Verdict(
                UNVERIFIED,
                f"the first call raised {_raised(exc)}, but line {line} is not in its "
                f"traceback{self.suffix}",
            )
        return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)} instead{self.suffix}")

    def _stale(self, line: int, first: dict[str, Any], experiments: dict[str, Any]) -> Verdict:
        found = [(k, v) for k, v in experiments.items() if k.startswith("stale:")]
        watch = next(
            (w for w in self.target.watches if w.line == line and w.code == "TFG109"), None
        )
        if watch is None:
            return Verdict(UNVERIFIED, "the global could not be named from the source")
        exp = experiments.get("stale:" + watch.label)
        if exp is None:
            exc = first.get("exception")
            if exc is not None:
                return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)}{self.suffix}")
            return Verdict(
                UNVERIFIED, "the global was not changed" if found else "no experiment ran"
            )
        if exp.get("error"):
            return Verdict(UNVERIFIED, f"changing {watch.label}: {exp['error']}{self.suffix}")
        change = f"staged: dynamic mode set {watch.label} = {exp['new']} (was {exp['old']})"
        if exp.get("seeded"):
            change += (
                " (the function draws random numbers: TensorFlow's, Python's and NumPy's seeds "
                "were reset before each compared call)"
            )
        if exp["traced_changed"]:
            return Verdict(
                NOT_REPRODUCED,
                f"{change}, and the traced function returned a new result{self.suffix}",
            )
        if exp["eager_changed"]:
            return Verdict(
                CONFIRMED,
                f"{change}: the traced function still returned the old result while an "
                f"eager run's result changed: the graph kept the trace-time value{self.suffix}",
            )
        tried = f" (other values raised: {', '.join(exp['raised'])})" if exp.get("raised") else ""
        return Verdict(
            UNVERIFIED,
            f"{change}: neither the traced nor an eager result changed{tried}{self.suffix}",
        )

    def _eager_diff(self, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return Verdict(UNVERIFIED, "no eager comparison ran")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        staged = "staged: the same inputs run traced and eagerly"
        if exp["differs"]:
            return Verdict(
                CONFIRMED,
                f"{staged}: traced result {exp['traced']} but eager result {exp['eager']}: "
                f"the write was lost in the graph{self.suffix}",
            )
        return Verdict(NOT_REPRODUCED, f"{staged}: the results agree ({exp['eager']}){self.suffix}")

    def _shapes(self, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return Verdict(UNVERIFIED, "no retracing check ran")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        before, counts, sizes = exp["before"], exp["counts"], exp["sizes"]
        if before is None or None in counts:
            return Verdict(UNVERIFIED, "the tracing count is not available")
        sizes_shown = ", ".join(str(s) for s in sizes)
        staged = f"staged: dynamic mode called it with new batch sizes {sizes_shown}"
        if counts[-1] > before:
            raised = (
                f" (the last call then raised {exp['raised']} when its graph ran, after the trace)"
                if exp.get("raised")
                else ""
            )
            return Verdict(
                CONFIRMED,
                f"{staged}: the tracing count went {before} -> {counts[-1]}{raised}: each new "
                f"request shape traces again{self.suffix}",
            )
        return Verdict(
            NOT_REPRODUCED,
            f"{staged}: the tracing count stayed {before}{self.suffix}",
        )

    def _timing(self, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return Verdict(UNVERIFIED, "no timing ran")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        traced, eager = float(exp["traced_us"]), float(exp["eager_us"])
        speedup = eager / traced if traced > 0 else float("inf")
        shown = (
            f"staged: median of {exp['repeats']} calls after warm-up: traced {traced:.0f} us, "
            f"eager {eager:.0f} us"
        )
        if speedup < SPEEDUP_WORTH_IT:
            return Verdict(
                CONFIRMED, f"{shown} ({speedup:.2f}x): the graph buys no speed-up{self.suffix}"
            )
        return Verdict(NOT_REPRODUCED, f"{shown}: the graph is {speedup:.1f}x faster{self.suffix}")

    def _not_run(self, what: str) -> Verdict:
        """No experiment result: the first or a later call raised, or nothing ran."""
        exc = self.calls[0].get("exception") if self.calls else None
        if exc is not None:
            return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)}{self.suffix}")
        return Verdict(UNVERIFIED, f"no {what} ran{self.suffix}")

    def _swapped(self, line: int, exp: dict[str, Any]) -> Verdict:
        """TFG208 at a call: a fresh copy of the tf.function called with the guessed optimizer,
        then with a new optimizer of the class the flagged call makes."""
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        staged = (
            f"staged: called a fresh copy of {self.target.path}() with its guessed inputs, then "
            f"again with a new {exp['maker']}() for {exp['param']} (the call at line {line} "
            "passes another optimizer)"
        )
        raised = exp.get("raised")
        if raised is None:
            return Verdict(NOT_REPRODUCED, f"{staged}: the second call ran{self.suffix}")
        message = exp.get("message", "")
        if raised == "ValueError" and _NON_FIRST_CALL.search(message):
            return Verdict(CONFIRMED, f"{staged}: ValueError: {message}{self.suffix}")
        return Verdict(UNVERIFIED, f"{staged}: it raised {raised}: {message}{self.suffix}")

    def _retrace(self, line: int, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return self._not_run("retracing check")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        param, values, counts = exp["param"], exp["values"], exp["counts"]
        if None in counts:
            return Verdict(UNVERIFIED, "the tracing count is not available")
        # The first value traced the fresh copy; each other distinct value must trace once
        # more, and the first value again must reuse its graph.
        n = len(values)
        first, new, repeat = counts[0], counts[n - 1] - counts[0], counts[-1] - counts[n - 1]
        shown = ", then ".join(f"{param}={v}" for v in values)
        staged = (
            f"staged: called a fresh copy of {self.target.path}() with {shown}, then "
            f"{param}={values[0]} again (Python {exp['kind']}s, as the call at line {line} "
            "passes a varying one)"
        )
        if new >= n - 1 and repeat == 0:
            return Verdict(
                CONFIRMED,
                f"{staged}: tracing count {first} -> {counts[n - 1]}, one new graph per new "
                f"value, and none for the repeated value{self.suffix}",
            )
        if new == 0:
            return Verdict(
                NOT_REPRODUCED,
                f"{staged}: tracing count stayed {first} after the first value{self.suffix}",
            )
        return Verdict(
            UNVERIFIED,
            f"{staged}: tracing count {first} -> {counts[-1]}, not one trace per new "
            f"value{self.suffix}",
        )

    def _first_call(self, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return self._not_run("first-call timing")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        first, warm, traces = float(exp["first_ms"]), float(exp["warm_ms"]), exp["traces"]
        shown = (
            f"staged: a fresh copy of {self.target.path}() took {first:.1f} ms on its first "
            f"call (tracing count 0 -> {traces}) and {warm:.2f} ms per warm call (median of "
            f"{exp['repeats']})"
        )
        # The figure is off when tracing adds a quarter of a call or more (and at least a
        # millisecond, above timer noise): a heavy body hides tracing less, but it is there.
        if traces >= 1 and first - warm >= max(1.0, 0.25 * warm):
            ratio = first / warm if warm > 0 else float("inf")
            return Verdict(
                CONFIRMED,
                f"{shown}: a timed first call measures tracing ({ratio:.1f}x a warm call, "
                f"{first - warm:.1f} ms more){self.suffix}",
            )
        return Verdict(
            NOT_REPRODUCED, f"{shown}: tracing adds little to the first call{self.suffix}"
        )

    def _bypassed(self, line: int, first: dict[str, Any], exp: dict[str, Any] | None) -> Verdict:
        """TFG206: the ``try`` body ran while tracing, put an op that checks its values at
        run time in the graph, and its handler never ran: that op raises after the ``try``
        is over."""
        found = next((h for h in self.target.handlers if h[0] == line), None)
        if found is None:
            return Verdict(UNVERIFIED, "the try statement could not be found")
        _, body, handler = found
        if any(handler in c.get("lines", ()) for c in self.calls):
            return Verdict(
                UNVERIFIED,
                f"the handler (line {handler}) ran: it caught an error raised while tracing"
                f"{self.suffix}",
            )
        if any(body in c.get("lines", ()) for c in self._per_call()):
            return Verdict(
                NOT_REPRODUCED,
                f"the try body (line {body}) ran again on later calls that did not trace: it "
                f"runs as Python on every call, where the handler can catch{self.suffix}",
            )
        exc = first.get("exception")
        if exc is not None:  # the try may not have finished: nothing to conclude
            return Verdict(UNVERIFIED, f"the first call raised {_raised(exc)}{self.suffix}")
        if body not in first.get("lines", ()):
            return Verdict(UNVERIFIED, f"the try body (line {body}) never ran{self.suffix}")
        if first.get("traced") is False:
            return Verdict(UNVERIFIED, f"the first call did not trace{self.suffix}")
        if exp is None or exp.get("error"):
            why = exp["error"] if exp else "its graph was not read"
            return Verdict(UNVERIFIED, f"the try body (line {body}) traced, but {why}{self.suffix}")
        return try_verdict(body, exp["ops"], self._tracing(), self.suffix)

    def _graph(self, line: int, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return self._not_run("graph measurement")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        count, ops, in_loop = exp["count"], exp["ops"], exp["loop_ops"]
        took = "" if exp.get("seconds") is None else f" in {float(exp['seconds']):.2f} s"
        shown = (
            f"tracing {self.target.path}() built a graph of {ops} ops{took}, {in_loop} of them "
            f"created by the loop at line {line} ({count} iterations)"
        )
        staged = exp.get("staged") or {}
        if staged.get("error"):
            shown += f"; staged: a smaller {staged.get('name', 'count')} raised {staged['error']}"
        elif staged:
            shown += (
                f"; staged: with {staged['name']} = {staged['new']} instead of {staged['old']}, "
                f"{staged['ops']} ops ({staged['loop_ops']} from the loop) in "
                f"{float(staged['seconds']):.2f} s"
            )
        if in_loop >= count:
            return Verdict(
                CONFIRMED, f"{shown}: the loop is unrolled, one copy per iteration{self.suffix}"
            )
        return Verdict(
            NOT_REPRODUCED,
            f"{shown}: fewer ops than iterations, so the loop is not unrolled into the graph"
            f"{self.suffix}",
        )

    def _work(self, exp: dict[str, Any] | None) -> Verdict:
        """TFG404: the traced graph holds no op but its inputs, outputs and constants."""
        if exp is None:
            return self._not_run("graph reading")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        types: dict[str, int] = exp["types"]
        quiet = set(exp["no_work"])
        work = {t: n for t, n in types.items() if t not in quiet}
        total = sum(types.values())
        inputs, outputs = types.get("Placeholder", 0), types.get("Identity", 0)
        consts = types.get("Const", 0)
        traced = f"the graph traced for {self.target.path}() holds {total} ops"
        if not work:
            return Verdict(
                CONFIRMED,
                f"{traced} and none computes: {inputs} placeholders (inputs), {outputs} "
                f"identities (outputs), {consts} constants (the Python result, frozen at trace "
                f"time): every call runs no TensorFlow op and returns what tracing "
                f"computed{self.suffix}",
            )
        shown = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(work.items()))
        n = sum(work.values())
        return Verdict(
            NOT_REPRODUCED,
            f"{traced}, {n} of them computation besides its inputs and outputs ({shown}): the "
            f"body does build TensorFlow ops{self.suffix}",
        )

    def _recompiled(self, exp: dict[str, Any] | None) -> Verdict:
        """TFG304: a first call at a new shape pays an XLA compilation a copy without
        ``jit_compile`` does not."""
        if exp is None:
            return self._not_run("new-shape timing")
        if exp.get("error"):
            return Verdict(UNVERIFIED, exp["error"] + self.suffix)
        rows = exp["rows"]
        parts = []
        compiled, cheap = [], []
        retraced = False
        for row in rows:
            xla, plain = row["xla"], row["plain"]
            extra = float(xla["first_ms"]) - float(xla["warm_ms"])
            base = max(0.0, float(plain["first_ms"]) - float(plain["warm_ms"]))
            traced = xla["traces"][1] is not None and xla["traces"][0] != xla["traces"][1]
            parts.append(
                f"{row['inputs']}: first call {float(xla['first_ms']):.1f} ms, warm "
                f"{float(xla['warm_ms']):.2f} ms"
                + (" (traced again)" if traced else " (no new trace)")
                + f"; without jit_compile {float(plain['first_ms']):.1f} ms first, "
                f"{float(plain['warm_ms']):.2f} ms warm"
            )
            # XLA compiling is tens of milliseconds even for a tiny graph: well above timer
            # noise and a warm call, and above what tracing alone adds to the copy's first
            # call (without a new trace there is no tracing to tell apart).
            clear = extra >= max(5.0, 3.0 * float(xla["warm_ms"]))
            compiled.append(clear and (not traced or extra >= 3.0 * base))
            retraced = retraced or traced
            cheap.append(extra <= max(1.0, 1.5 * base))
        nested = exp.get("nested_xla") or []
        also = f" (the copy still calls XLA-compiled {', '.join(nested)})" if nested else ""
        shown = (
            f"staged: called {self.target.path}() at new shapes after warm calls at the first "
            f"({'; '.join(parts)}){also}"
        )
        if exp.get("jit_compile") is not True:
            how = "the module's own tf.function" if exp.get("own") else "the tf.function called"
            status = NOT_REPRODUCED if exp.get("own") else UNVERIFIED
            return Verdict(
                status,
                f"{shown}: {how} does not compile with XLA (jit_compile is "
                f"{exp.get('jit_compile')}){self.suffix}",
            )
        if all(compiled):
            why = (
                "with no new trace, every new shape's first call costs many warm calls"
                if not retraced
                else "every new shape's first call costs over three times what tracing "
                "again costs the copy without jit_compile"
            )
            return Verdict(
                CONFIRMED,
                f"{shown}: {why}: XLA compiles the function again for each new shape{self.suffix}",
            )
        if all(cheap):
            return Verdict(
                NOT_REPRODUCED,
                f"{shown}: a first call at a new shape costs no more than the copy without "
                f"jit_compile{self.suffix}",
            )
        return Verdict(
            UNVERIFIED,
            f"{shown}: the first calls at new shapes cost more than the copy's, but not "
            f"clearly a compilation each{self.suffix}",
        )

    def _caller_calls(self, line: int) -> tuple[list[dict[str, Any]], str | None]:
        """The calls of the eager code in which the line ran (a call that raised later on
        counts: what the line did was done), or why there are none."""
        ran = [c for c in self.calls if line in c.get("lines", ())]
        if not ran:
            exc = next((c["exception"] for c in self.calls if c.get("exception")), None)
            if exc:
                return [], (
                    f"calling {self.target.path}() as Python raised before line {line}: "
                    f"{_raised(exc)}{self.suffix}"
                )
            return [], f"line {line} never ran over {len(self.calls)} calls{self.suffix}"
        later = next((c["exception"] for c in ran if c.get("exception")), None)
        if later:
            self.suffix = f"; the call then raised {_raised(later)}" + self.suffix
        return ran, None

    def _recreated(self, line: int) -> Verdict:
        """TFG302: each call of the function made a new tf.function at the line, and each
        traced."""
        done, why = self._caller_calls(line)
        if why is not None:
            return Verdict(UNVERIFIED, why)
        made = [m for c in done for m in c.get("created", ()) if m[0] in (line, line + 1)]
        traces = sum(m[1] or 0 for m in made)
        calls = f"{len(done)} calls of {self.target.path}()"
        if len(made) >= 2 and traces >= len(made):
            return Verdict(
                CONFIRMED,
                f"{calls} made {len(made)} new tf.functions at line {line}, traced {traces} "
                f"times in all: every call builds and traces a new graph{self.suffix}",
            )
        if len(done) < 2:
            # One call shows nothing about the next (it raised before the function was called
            # again): no evidence either way.
            return Verdict(
                UNVERIFIED,
                f"only {calls} ran line {line} (made {len(made)} tf.function there): a second "
                f"call is needed to see a new one made{self.suffix}",
            )
        if len(made) >= 2:
            return Verdict(
                UNVERIFIED,
                f"{calls} made {len(made)} new tf.functions at line {line}, but only "
                f"{traces} traces ran there (the caller may call them later){self.suffix}",
            )
        return Verdict(
            NOT_REPRODUCED,
            f"{calls} made {len(made)} tf.function at line {line}: it is not made "
            f"again on every call{self.suffix}",
        )

    def _switched(self, line: int) -> Verdict:
        """TFG402 inside a function: calling it leaves every tf.function eager."""
        done, why = self._caller_calls(line)
        if why is not None:
            return Verdict(UNVERIFIED, why)
        if any(c.get("eager_after") for c in done):
            return Verdict(
                CONFIRMED,
                f"after a call of {self.target.path}(), tf.config.functions_run_eagerly() is "
                f"True: every tf.function of the program then runs its Python eagerly, "
                f"untraced{self.suffix}",
            )
        if any(_kind_hits(c, line, "switch") for c in done):
            return Verdict(
                CONFIRMED,
                f"line {line} switched every tf.function to eager execution while "
                f"{self.target.path}() ran (it switched back before returning): what it "
                f"called there ran its Python eagerly, untraced{self.suffix}",
            )
        return Verdict(
            NOT_REPRODUCED,
            f"line {line} ran over {len(done)} calls of {self.target.path}() but never "
            f"turned eager execution on{self.suffix}",
        )

    def _switch(self, line: int, exp: dict[str, Any] | None) -> Verdict:
        if exp is None:
            return Verdict(UNVERIFIED, "the import was not checked")
        if not exp.get("reloaded"):
            return Verdict(UNVERIFIED, "executing the module again for the check failed")
        here = [value for at, value in exp.get("calls", ()) if at == line]
        if not here:
            return Verdict(UNVERIFIED, f"line {line} did not run while importing the module")
        after = "True" if exp["after_reload"] else "False"
        ran = (
            f"run_functions_eagerly({here[-1]}) ran at line {line} while importing the module; "
            f"tf.config.functions_run_eagerly() is {after} after the import"
        )
        if here[-1] and exp["after_reload"] and exp.get("after_import"):
            return Verdict(
                CONFIRMED, f"{ran}: every tf.function of the program runs eagerly, untraced"
            )
        return Verdict(NOT_REPRODUCED, ran)


def verdicts_from_report(report: Any, targets: Sequence[Target]) -> dict[tuple[int, str], Verdict]:
    """Turn the child's report into verdicts (separate from running, for tests and reuse)."""
    out: dict[tuple[int, str], Verdict] = {}
    entries = report.get("targets", []) if isinstance(report, dict) else []
    by_id = {e.get("id"): e for e in entries if isinstance(e, dict)}
    for i, target in enumerate(targets):
        entry = by_id.get(i)
        for line, code in target.findings:
            if entry is None:
                verdict = Verdict(UNVERIFIED, "no report for this function")
            else:
                try:
                    verdict = _Judge(target, entry).verdict(line, code)
                except (KeyError, TypeError, ValueError, IndexError) as exc:
                    verdict = Verdict(UNVERIFIED, f"unreadable probe report ({exc!r})")
            # A finding two targets reach keeps its strongest verdict.
            previous = out.get((line, code))
            if previous is None or _rank(verdict) > _rank(previous):
                out[(line, code)] = verdict
    return out


def _rank(verdict: Verdict) -> int:
    return {UNVERIFIED: 0, NOT_REPRODUCED: 1, CONFIRMED: 2}[verdict.status]


def confirm_module(
    module_path: Path,
    project_root: Path,
    targets: Sequence[Target],
    *,
    timeout: float,
    device: str | None = None,
    unknown: int = 2,
    memory_mb: int | None = None,
    output_limit: int = 65536,
    env: Mapping[str, str] | None = None,
) -> ProbeRun:
    """Run every target of one module in one child process and return the verdicts."""
    start = time.monotonic()
    run = ProbeRun()
    result = run_isolated(
        Path(module_path),
        Path(project_root),
        payload_source(params_for(targets, device=device, unknown=unknown)),
        timeout=timeout,
        memory_mb=memory_mb,
        output_limit=output_limit,
        env=env,
    )
    run.duration = time.monotonic() - start
    if not result.ok or not isinstance(result.data, dict):
        run.reason = result.reason or "the probe sent no report"
        for target in targets:
            for key in target.findings:
                run.verdicts[key] = Verdict(UNVERIFIED, run.reason)
        return run
    run.report = result.data
    run.device = result.data.get("device")
    run.verdicts = {
        key: dataclasses.replace(v, device=str(run.device or ""))
        for key, v in verdicts_from_report(result.data, targets).items()
    }
    return run
