"""Probes and verdicts for module-level ``tf.function``s (SPEC §4, issue 6 deliverable 5).

The parent (``confirm`` / ``confirm_module``) runs :func:`payload_source` in the child that
:func:`~tflint_graph.dynamic.runner.run_isolated` starts. The payload's parameters travel as a
JSON string literal formatted into the source (``json.dumps`` then ``repr``); nothing the user
wrote is ever evaluated (Python values of ``py:`` arguments go through ``ast.literal_eval``).

In the child, for each target function:

1. three input sets are built from the specs *before* any probe is installed: same shapes and
   dtypes, new values each time (NumPy generators seeded 1, 2, 3); ``py:`` values are passed
   unchanged, so the signature stays the same and a later call must not retrace;
2. probes are installed: ``builtins.print``; ``random.*`` and ``numpy.random.*`` samplers;
   ``time.time/perf_counter/monotonic/...`` and ``os.getenv``; ``logging.Logger._log``
   (module globals bound to the same objects, ``from time import time``, are patched too).
   A hit is attributed to the source line of the *direct* caller, looking through AutoGraph's
   ``converted_call`` / ``print_`` frames and mapping AutoGraph's generated code back to the
   module with the source maps AutoGraph builds (recorded by wrapping ``loader.load_ast``);
   calls made by TensorFlow's own code are never counted;
3. a line tracer (``sys.settrace``) records which lines of the module ran during each call;
4. the function is called three times on the first GPU if TensorFlow sees one, else the CPU;
   an exception is recorded with the deepest module line found in its traceback chain (or,
   failing that, in the ``File "...", line N`` text of an AutoGraph error message).

The parent turns that report into a :class:`Verdict` per ``(line, code)`` finding:

- TFG101/TFG103/TFG104/TFG107: ``confirmed`` when the matching probe fired at the line during the
  first call and never on the later two; ``not-reproduced`` when it fired later too;
  ``unverified`` when it never fired there.
- TFG201-TFG205: ``confirmed`` when the first call raised at the flagged line (or, when no module
  line could be located at all, raised the documented exception type); ``not-reproduced`` when
  the line ran during tracing and nothing was raised; ``unverified`` otherwise.
- anything else: ``unverified`` (no dynamic check yet).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tflint_graph.dynamic.inputs import ArgSpec, PyValue, TensorSpecLite, concrete_shape
from tflint_graph.dynamic.runner import run_isolated

__all__ = [
    "PROBE_KINDS",
    "ProbeRun",
    "Target",
    "Verdict",
    "confirm",
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
}

# The exception TensorFlow documents for each tracing-error code (by class name, matched
# against the exception's MRO).
RAISES: dict[str, tuple[str, ...]] = {
    "TFG201": ("OperatorNotAllowedInGraphError",),
    "TFG202": ("AttributeError", "NotImplementedError"),
    "TFG203": ("OperatorNotAllowedInGraphError",),
    "TFG204": ("NotImplementedError",),
    "TFG205": ("ValueError",),
}

CALLS = 3  # the first call plus two later calls with new values


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``confirmed``, ``not-reproduced`` or ``unverified``; ``evidence`` says
    what happened (or why nothing could be checked), without the status word."""

    status: str
    evidence: str


@dataclass(frozen=True)
class Target:
    """One module-level ``tf.function`` to call, its inputs and the findings inside it."""

    function: str
    specs: Sequence[ArgSpec]
    findings: Sequence[tuple[int, str]]


@dataclass
class ProbeRun:
    """What one child run gave: a verdict per ``(line, code)``, the device, the wall time,
    and the child's failure reason (empty when it ran to the end)."""

    verdicts: dict[tuple[int, str], Verdict] = field(default_factory=dict)
    device: str | None = None
    duration: float = 0.0
    reason: str = ""
    report: Any = None


# -- the child side ------------------------------------------------------------------------

_PAYLOAD = r"""
import ast as _ast, builtins as _builtins, json as _json, logging as _logging, os as _os
import random as _random, re as _re, sys as _sys, time as _time
_P = _json.loads(__PARAMS__)
import numpy as _np
import tensorflow as tf
from tensorflow.python.autograph.pyct import loader as _ag_loader
from tensorflow.python.autograph.impl import api as _ag_api
from tensorflow.python.autograph.operators import control_flow as _ag_cf
from tensorflow.python.autograph.operators import py_builtins as _ag_builtins

_real_cache = {}
def _real(fn):
    r = _real_cache.get(fn)
    if r is None:
        r = _os.path.realpath(fn) if fn and not fn.startswith("<") else fn
        _real_cache[fn] = r
    return r

_MODFILE = _real(module.__file__)
_THIS = _sys._getframe().f_code.co_filename
_TRANSPARENT = {_real(f) for f in (_ag_api.__file__, _ag_builtins.__file__, _ag_cf.__file__,
                                   _logging.__file__)}
_TRANSPARENT.add(_THIS)
_GEN = {}  # AutoGraph generated file -> {generated line: module line}

_orig_load_ast = _ag_loader.load_ast
def _load_ast(*a, **k):
    res = _orig_load_ast(*a, **k)
    try:
        if isinstance(res, tuple) and len(res) == 3 and isinstance(res[2], dict):
            for loc, origin in res[2].items():
                src = _real(origin.loc.filename)
                if src == _MODFILE:
                    _GEN.setdefault(_real(loc.filename), {})[loc.lineno] = origin.loc.lineno
                elif src in _TRANSPARENT:
                    # AutoGraph converted logging's own code: look through it as well.
                    _TRANSPARENT.add(_real(loc.filename))
    except Exception:
        pass
    return res
_ag_loader.load_ast = _load_ast

def _map(fn, ln):
    r = _real(fn)
    if r == _MODFILE:
        return ln
    m = _GEN.get(r)
    return None if m is None else m.get(ln)

def _caller_line(frame):
    depth = 0
    while frame is not None and depth < 40:
        r = _real(frame.f_code.co_filename)
        if r == _MODFILE:
            return frame.f_lineno
        if r in _GEN:
            return _GEN[r].get(frame.f_lineno)
        if r not in _TRANSPARENT:
            return None
        frame = frame.f_back
        depth += 1
    return None

_phase = [None]
_HITS = {}   # phase -> {line: {probe name: count}}
_LINES = {}  # phase -> set of module lines that ran

def _hit(kind, name, frame):
    ph = _phase[0]
    if ph is None:
        return
    ln = _caller_line(frame)
    if ln is None:
        return
    d = _HITS.setdefault(ph, {}).setdefault(str(ln), {})
    key = kind + ":" + name
    d[key] = d.get(key, 0) + 1

def _local(frame, event, arg):
    if event == "line" and _phase[0] is not None:
        ln = _map(frame.f_code.co_filename, frame.f_lineno)
        if ln is not None:
            _LINES.setdefault(_phase[0], set()).add(ln)
    return _local

def _global(frame, event, arg):
    r = _real(frame.f_code.co_filename)
    if r == _MODFILE or r in _GEN:
        return _local
    return None

# -- inputs, built before any probe is installed
def _make(spec, seed):
    if spec["kind"] == "py":
        return _ast.literal_eval(spec["repr"])
    rng = _np.random.default_rng(seed)
    shape, dt = tuple(spec["shape"]), spec["dtype"]
    dtype = getattr(tf, dt)
    if dt == "string":
        n = int(_np.prod(shape)) if shape else 1
        arr = _np.array(["s%d_%d" % (seed, i) for i in range(n)], dtype=object).reshape(shape)
        return tf.constant(arr, dtype=tf.string)
    if dt == "bool":
        return tf.constant(rng.random(shape) < 0.5)
    if dt.startswith("int") or dt.startswith("uint"):
        return tf.cast(tf.constant(rng.integers(1, 10, size=shape)), dtype)
    if dt.startswith("complex"):
        re_, im_ = rng.standard_normal(shape), rng.standard_normal(shape)
        return tf.complex(tf.constant(re_), tf.constant(im_)) if dt == "complex128" else \
            tf.complex(tf.constant(re_, tf.float32), tf.constant(im_, tf.float32))
    return tf.cast(tf.constant(rng.standard_normal(shape).astype("float32")), dtype)

_targets = []
for _t in _P["targets"]:
    _entry = {"function": _t["function"], "inputs": None, "error": None}
    try:
        _entry["inputs"] = [[_make(s, seed) for s in _t["specs"]]
                            for seed in range(1, _P["calls"] + 1)]
    except Exception as exc:
        _entry["error"] = "could not build inputs: %s: %s" % (type(exc).__name__, str(exc)[:200])
    _targets.append(_entry)

# -- probes
_patched = {}
def _wrap(kind, name, orig):
    def probe(*a, **k):
        _hit(kind, name, _sys._getframe(1))
        return orig(*a, **k)
    probe.__name__ = getattr(orig, "__name__", name)
    probe.__doc__ = getattr(orig, "__doc__", None)
    return probe

def _patch(owner, attr, kind, name):
    orig = getattr(owner, attr, None)
    if orig is None:
        return
    probe = _wrap(kind, name, orig)
    probe = tf.autograph.experimental.do_not_convert(probe)
    setattr(owner, attr, probe)
    _patched[id(orig)] = (orig, probe)

_patch(_builtins, "print", "print", "print")
for _n in ("random", "randint", "uniform", "choice", "choices", "shuffle", "sample", "gauss",
           "randrange", "normalvariate", "getrandbits"):
    _patch(_random, _n, "random", "random." + _n)
for _n in ("rand", "randn", "randint", "random", "random_sample", "uniform", "normal",
           "choice", "shuffle", "permutation", "standard_normal", "binomial", "poisson"):
    _patch(_np.random, _n, "random", "numpy.random." + _n)
for _n in ("time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns", "process_time"):
    _patch(_time, _n, "clock", "time." + _n)
_patch(_os, "getenv", "clock", "os.getenv")
_patch(_logging.Logger, "_log", "logging", "logging")
for _k, _v in list(vars(module).items()):
    _p = _patched.get(id(_v))
    if _p is not None and _p[0] is _v:
        setattr(module, _k, _p[1])

# -- calls
def _exc_line(e):
    line, seen, cur = None, set(), e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        tb = cur.__traceback__
        while tb is not None:
            ln = _map(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
            if ln is not None:
                line = ln
            tb = tb.tb_next
        cur = cur.__cause__ or cur.__context__
    if line is None:
        for fn, ln in _re.findall(r'File "([^"]+)", line (\d+)', str(e)):
            if _real(fn) == _MODFILE:
                line = int(ln)
    return line

def _first_line(text):
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""

_gpus = tf.config.list_logical_devices("GPU")
_device = (_gpus or tf.config.list_logical_devices("CPU"))[0].name
_results = []
for _t in _targets:
    res = {"function": _t["function"], "error": _t["error"], "calls": [], "tracing_count": None}
    _results.append(res)
    if res["error"] is not None:
        continue
    fn = module
    for part in _t["function"].split("."):
        fn = getattr(fn, part, None)
    if fn is None:
        res["error"] = "function %s not found in the module" % _t["function"]
        continue
    if not hasattr(fn, "experimental_get_tracing_count"):
        res["error"] = "%s is not a tf.function" % _t["function"]
        continue
    for i, args in enumerate(_t["inputs"]):
        ph = "%s#%d" % (_t["function"], i)
        call = {"hits": {}, "lines": [], "exception": None}
        _phase[0] = ph
        _sys.settrace(_global)
        try:
            with tf.device(_device):
                fn(*args)
        except BaseException as exc:
            call["exception"] = {
                "type": type(exc).__name__,
                "mro": [c.__name__ for c in type(exc).__mro__],
                "message": _first_line(str(exc)),
                "line": _exc_line(exc),
            }
        finally:
            _sys.settrace(None)
            _phase[0] = None
        call["hits"] = _HITS.get(ph, {})
        call["lines"] = sorted(_LINES.get(ph, ()))
        res["calls"].append(call)
        if call["exception"] is not None:
            break
    try:
        res["tracing_count"] = int(fn.experimental_get_tracing_count())
    except Exception:
        pass

report({"device": _device, "tf_version": tf.__version__, "functions": _results})
"""


def payload_source(params: dict[str, Any] | None = None) -> str:
    """The payload source run in the child; ``params`` (``{"targets": [...], "calls": N}``,
    see :func:`_params`) are formatted in as a JSON string literal."""
    blob = json.dumps(params if params is not None else {"targets": [], "calls": CALLS})
    return _PAYLOAD.replace("__PARAMS__", repr(blob), 1)


def _spec_json(spec: ArgSpec) -> dict[str, Any]:
    if isinstance(spec, PyValue):
        return {"kind": "py", "repr": repr(spec.value)}
    if isinstance(spec, TensorSpecLite):
        return {"kind": "tensor", "dtype": spec.dtype, "shape": list(concrete_shape(spec))}
    raise TypeError(f"not an argument spec: {spec!r}")


def _params(targets: Sequence[Target]) -> dict[str, Any]:
    return {
        "calls": CALLS,
        "targets": [
            {"function": t.function, "specs": [_spec_json(s) for s in t.specs]} for t in targets
        ],
    }


# -- the parent side -----------------------------------------------------------------------


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


def _kind_hits(call: dict[str, Any], line: int, kind: str) -> dict[str, int]:
    hits = call.get("hits", {}).get(str(line), {})
    return {k.partition(":")[2]: int(v) for k, v in hits.items() if k.partition(":")[0] == kind}


def _verdict_for(code: str, line: int, fn: dict[str, Any], suffix: str) -> Verdict:
    calls: list[dict[str, Any]] = fn.get("calls", [])
    if fn.get("error"):
        return Verdict(UNVERIFIED, str(fn["error"]))
    if not calls:
        return Verdict(UNVERIFIED, "the function was not called")
    first = calls[0]
    exc = first.get("exception")
    if code in PROBE_KINDS:
        if exc is not None:
            where = f" at line {exc['line']}" if exc.get("line") else ""
            return Verdict(
                UNVERIFIED, f"the first call raised {exc['type']}{where}: {exc['message']}{suffix}"
            )
        later_exc = next((c["exception"] for c in calls[1:] if c.get("exception")), None)
        if later_exc is not None:
            return Verdict(
                UNVERIFIED,
                f"a later call raised {later_exc['type']}: {later_exc['message']}{suffix}",
            )
        kind = PROBE_KINDS[code]
        hits1 = _kind_hits(first, line, kind)
        later: dict[str, int] = {}
        for c in calls[1:]:
            for name, n in _kind_hits(c, line, kind).items():
                later[name] = later.get(name, 0) + n
        n1, nl = sum(hits1.values()), sum(later.values())
        what = ", ".join(sorted(set(hits1) | set(later))) or kind
        n_later = len(calls) - 1
        if n1 and not nl:
            return Verdict(
                CONFIRMED,
                f"{what} ran {_times(n1)} on the first call, 0 times over "
                f"{n_later} later calls: trace-time only{suffix}",
            )
        if nl:
            return Verdict(
                NOT_REPRODUCED,
                f"{what} ran on every call ({_times(n1)} on the "
                f"first, {_times(nl)} over {n_later} later calls){suffix}",
            )
        ran = any(line in c.get("lines", ()) for c in calls)
        why = f"line ran but no {kind} call was seen there" if ran else "line never ran"
        return Verdict(UNVERIFIED, why + suffix)
    if code in RAISES:
        if exc is None:
            if line in first.get("lines", ()):
                return Verdict(
                    NOT_REPRODUCED, f"line {line} ran during tracing and nothing was raised{suffix}"
                )
            return Verdict(UNVERIFIED, f"line never ran during tracing{suffix}")
        at = exc.get("line")
        if at == line or (at is None and set(exc.get("mro", ())) & set(RAISES[code])):
            where = f" at line {at}" if at is not None else ""
            return Verdict(CONFIRMED, f"{exc['type']}{where}: {exc['message']}{suffix}")
        where = f" at line {at}" if at is not None else ""
        return Verdict(
            UNVERIFIED,
            f"the first call raised {exc['type']}{where} instead: {exc['message']}{suffix}",
        )
    return Verdict(UNVERIFIED, f"no dynamic check for {code} yet")


def verdicts_from_report(report: Any, targets: Sequence[Target]) -> dict[tuple[int, str], Verdict]:
    """Turn the child's report into verdicts (separate from running, for tests and reuse)."""
    out: dict[tuple[int, str], Verdict] = {}
    functions = report.get("functions", []) if isinstance(report, dict) else []
    device = report.get("device") if isinstance(report, dict) else None
    for i, target in enumerate(targets):
        fn = functions[i] if i < len(functions) and isinstance(functions[i], dict) else None
        for line, code in target.findings:
            if fn is None:
                out[(line, code)] = Verdict(UNVERIFIED, "no report for this function")
                continue
            count = fn.get("tracing_count")
            suffix = f" (tracing count {count}; device {device})" if count is not None else ""
            out[(line, code)] = _verdict_for(code, line, fn, suffix)
    return out


def confirm_module(
    module_path: Path,
    project_root: Path,
    targets: Sequence[Target],
    *,
    timeout: float,
    memory_mb: int | None = None,
    output_limit: int = 65536,
) -> ProbeRun:
    """Run every target of one module in one child process and return the verdicts."""
    start = time.monotonic()
    run = ProbeRun()
    result = run_isolated(
        Path(module_path),
        Path(project_root),
        payload_source(_params(targets)),
        timeout=timeout,
        memory_mb=memory_mb,
        output_limit=output_limit,
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
    run.verdicts = verdicts_from_report(result.data, targets)
    return run


def confirm(
    module_path: Path,
    project_root: Path,
    function_name: str,
    specs: Iterable[ArgSpec],
    findings: Iterable[tuple[int, str]],
    timeout: float,
) -> dict[tuple[int, str], Verdict]:
    """Confirm ``findings`` ((line, code) pairs) of one module-level ``tf.function``."""
    target = Target(function_name, tuple(specs), tuple(findings))
    return confirm_module(module_path, project_root, [target], timeout=timeout).verdicts
