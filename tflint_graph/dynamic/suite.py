"""Verdicts from a test session (``pytest --tflint-graph``, SPEC §4): what the probes saw while
the project's own tests ran, turned into a status per finding.

No TensorFlow here (the recorder that fills a :class:`SessionRecord` is
:mod:`tflint_graph.dynamic.suite_probe`), so the verdicts can be read and tested on their own.

In a test session nothing decides how often a function is called, so every event at a
flagged line (a probe hit, the line running, an exception passing through it) is counted by
*when* it happened: while a graph was being built (tracing), in a call of a ``tf.function``
that did not trace (a later call, or one run eagerly), or in plain eager code outside any
``tf.function``.  Each ``tf.function`` object counts its calls made from eager code and how
many of them traced.  A trace-time-only effect is one seen while tracing and never in a later
call, where later calls happened.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    PROBE_KINDS,
    RAISED_ANYWHERE,
    RAISED_LATER,
    RAISES,
    RAISES_MESSAGE,
    UNVERIFIED,
    WATCH_CODES,
    Verdict,
    try_verdict,
)

__all__ = [
    "NOT_REACHED",
    "NOT_REACHED_EVIDENCE",
    "CallSite",
    "Change",
    "Entry",
    "Raised",
    "SavedFunction",
    "Seen",
    "SessionRecord",
    "StaleRead",
    "body_line",
    "judge",
    "watch_target",
]

# A finding in code no test executed; JSON and SARIF know three statuses, so there it is
# ``unverified`` with this evidence.
NOT_REACHED = "not-reached"
NOT_REACHED_EVIDENCE = "not reached by the tests"
NOT_REACHED_VERDICT = Verdict(NOT_REACHED, NOT_REACHED_EVIDENCE)

# Exception classes worth recording when they pass through a flagged line.
INTERESTING = frozenset(t for types in RAISES.values() for t in types)

# Codes ``tflint-graph --dynamic`` has an experiment for that a test run cannot stage.
_DYNAMIC_ONLY = frozenset({"TFG109", "TFG209", "TFG401"})


@dataclass
class Entry:
    """A ``tf.function`` object whose calls from eager code were counted, or a graph that was
    built without one (a ``Dataset.map`` function: ``per_element``, its graph runs for every
    element of the dataset)."""

    name: str
    calls: int = 0
    traced: int = 0  # calls that traced (the tracing count grew, or a probed line ran in a graph)
    raised: int = 0  # calls that raised
    eager: int = 0  # calls that ran the Python function eagerly (run_functions_eagerly)
    per_element: bool = False

    @property
    def later(self) -> int:
        """Calls that ran the graph without tracing again."""
        return max(0, self.calls - self.traced - self.raised - self.eager)


@dataclass
class Seen:
    """How often something happened at one line, by when."""

    graph: int = 0  # while a graph was being built
    eager: int = 0  # in a call of a tf.function that did not trace
    plain: int = 0  # in eager code outside any tf.function call
    forced: int = 0  # of ``eager``: with tf.config.run_functions_eagerly(True) on
    entries: dict[int, Entry] = field(default_factory=dict)  # whose tracing saw it
    eager_entries: dict[int, Entry] = field(default_factory=dict)  # whose later calls saw it
    test: str | None = None  # the first test it happened in
    # The most times it happened while one graph was built (a loop body unrolled, TFG305).
    most: int = 0
    run: int = 0  # times in the graph being built now (``run_of``)
    run_of: int = 0  # serial number of the call building it

    def merge(self, other: Seen) -> None:
        self.graph += other.graph
        self.eager += other.eager
        self.plain += other.plain
        self.forced += other.forced
        self.entries.update(other.entries)
        self.eager_entries.update(other.eager_entries)
        self.test = self.test or other.test
        self.most = max(self.most, other.most)


@dataclass(frozen=True)
class Raised:
    """An exception that passed through a user line: where, in which function (its first and
    last line), what, whether while tracing, in which test."""

    path: str
    line: int
    first: int
    last: int
    type: str
    classes: tuple[str, ...]  # the names in its MRO
    message: str
    graph: bool | None  # None: seen only in a failed test's traceback
    test: str | None


@dataclass(frozen=True)
class Change:
    """The watched state of a flagged statement before and after it ran once."""

    label: str
    graph: bool
    before: str
    after: str
    changed: bool


@dataclass
class CallSite:
    """Calls of one ``tf.function`` from one flagged line of eager code: how many traced,
    and the Python values (not tensors) each tracing call passed."""

    name: str
    calls: int = 0
    traced: int = 0
    eager: int = 0  # calls that ran the Python function (run_functions_eagerly)
    values: list[str] = field(default_factory=list)  # distinct, at most _MAX_VALUES
    # Of a flagged definition: the tf.function objects made from it (TFG302), its calls made
    # while another graph was built (inlined there, TFG401), the most ops doing work in one
    # of its graphs (None: never looked at; TFG404) and the input shapes of every call (TFG304).
    objects: int = 0
    nested: int = 0
    work: int | None = None
    work_ops: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    # TFG301: what ``tf.saved_model.save`` kept of it, the first time a test saved it.
    saved: SavedFunction | None = None

    def note(self, shown: str, into: list[str] | None = None) -> None:
        """Keep ``shown`` (the values or shapes of a call that traced) if it is new."""
        kept = self.values if into is None else into
        if shown and shown not in kept and len(kept) < _MAX_VALUES:
            kept.append(shown)


_MAX_VALUES = 8


@dataclass(frozen=True)
class SavedFunction:
    """A flagged tf.function that ``tf.saved_model.save`` wrote (TFG301): the input specs of
    the graphs it held when written (shown; ``fixed`` when no dim was unknown), or the error
    saving raised for it as a signature."""

    specs: tuple[str, ...]
    fixed: bool
    raised: str = ""
    test: str | None = None


@dataclass
class StaleRead:
    """TFG109: a module global a graph read while it was built, and what a later call of the
    same function (one that did not trace again) found there."""

    name: str
    function: str
    traced: str  # the value shown, when the graph was built
    later: int = 0  # later calls made after the trace
    changed: str = ""  # the value at the first later call that found another, shown
    test: str | None = None
    # Staged when the tests never rebind it: the value set after a later call, whose
    # arguments then still selected the graph built with the old one (shown).
    staged: str = ""


@dataclass
class SessionRecord:
    """Everything the probes of one test session saw at the flagged lines."""

    lines: dict[tuple[str, int], Seen] = field(default_factory=dict)
    hits: dict[tuple[str, int], dict[str, Seen]] = field(default_factory=dict)
    raised: list[Raised] = field(default_factory=list)
    changes: dict[tuple[str, int], list[Change]] = field(default_factory=dict)
    sites: dict[tuple[str, int], CallSite] = field(default_factory=dict)
    # TFG301: the calls of a tf.function by its def line, with the input shapes that traced.
    defs: dict[tuple[str, int], CallSite] = field(default_factory=dict)
    stale: dict[tuple[str, int], StaleRead] = field(default_factory=dict)
    # TFG305/TFG206: the first line of the loop body or the ``try`` body a finding is about,
    # and of the flagged handler's own body (recorded in ``lines`` like flagged lines).
    bodies: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    handlers: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    # TFG206: the op types (each with a line that made one) the ``try`` body put in the
    # graphs it ran in.
    try_ops: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    # TFG305: the unroll-max a loop's copies must exceed; TFG403: the function timed.
    unroll_max: dict[tuple[str, int], int] = field(default_factory=dict)
    timed: dict[tuple[str, int], str] = field(default_factory=dict)
    # The calls from a flagged line, per tf.function called there (by name).
    named_sites: dict[tuple[str, int], dict[str, CallSite]] = field(default_factory=dict)
    # Empty while lines are recorded; else why not (another tracer owns sys.settrace).
    no_lines: str = ""


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


def _calls(n: int) -> str:
    return f"{n} later call" if n == 1 else f"{n} later calls"


def _names(entries: Iterable[Entry]) -> str:
    names = list(dict.fromkeys(e.name for e in entries))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _in(test: str | None) -> str:
    return f" (in {test})" if test else ""


def judge(path: str, line: int, code: str, record: SessionRecord) -> Verdict:
    """The status of the finding ``code`` at ``path`` (a real path) ``line``; status
    :data:`NOT_REACHED` when no test ran the line."""
    key = (path, line)
    ran = record.lines.get(key)
    if code in PROBE_KINDS:
        return _probe(key, code, record, ran)
    if code in RAISES:
        return _raises(key, code, record, ran)
    if code in WATCH_CODES:
        return _state(key, code, record, ran)
    if code == "TFG303":
        return _retraced(key, record, ran)
    if code == "TFG301":
        return _new_shapes(key, record)
    if code == "TFG402":
        return _switched(key, record, ran)
    if code == "TFG109" and key in record.stale:
        return _stale(record.stale[key])
    cheap = _CHEAP.get(code)
    if cheap is not None:
        # No record: the tests never called the function, or never ran the block.
        return cheap(key, record) or _unreached(key, record, None) or NOT_REACHED_VERDICT
    unreached = _unreached(key, record, ran)
    if unreached is not None:
        return unreached
    more = " (tflint-graph --dynamic has one)" if code in _DYNAMIC_ONLY else ""
    return Verdict(UNVERIFIED, f"a test run has no check for {code}{more}")


def _retraced(key: tuple[str, int], record: SessionRecord, ran: Seen | None) -> Verdict:
    """TFG303: the tf.function called at the line traced again for a new Python value."""
    site = record.sites.get(key)
    if site is None or not site.calls:
        unreached = _unreached(key, record, ran)
        return unreached or Verdict(
            UNVERIFIED, f"no test called a tf.function from eager code at line {key[1]}"
        )
    if site.eager == site.calls:
        return Verdict(
            UNVERIFIED,
            f"{site.name}() ran eagerly in all {site.calls} calls from line {key[1]} "
            "(tf.config.run_functions_eagerly(True))",
        )
    values = ", ".join(site.values[:5]) + (", ..." if len(site.values) > 5 else "")
    calls = f"{site.calls} call" if site.calls == 1 else f"{site.calls} calls"
    where = f"{site.name}() traced {_times(site.traced)} over {calls} from line {key[1]}"
    if site.traced >= 2 and len(site.values) >= 2:
        return Verdict(
            CONFIRMED,
            f"{where}, once per new Python value ({values}){_in(ran.test if ran else None)}",
        )
    return Verdict(
        UNVERIFIED,
        f"{where}: the tests passed it no second Python value, so no retrace was seen",
    )


def _switched(key: tuple[str, int], record: SessionRecord, ran: Seen | None) -> Verdict:
    """TFG402: the line turned eager execution on for every tf.function of the process."""
    seen = record.hits.get(key, {}).get("switch:run_functions_eagerly")
    if seen is not None:
        times = _times(seen.graph + seen.eager + seen.plain)
        return Verdict(
            CONFIRMED,
            f"tf.config.run_functions_eagerly(True) ran {times} at line {key[1]}"
            f"{_in(seen.test)}: from then on every tf.function of the process runs its Python "
            "eagerly, untraced",
        )
    unreached = _unreached(key, record, ran)
    if unreached is not None:
        return unreached
    assert ran is not None
    return Verdict(
        UNVERIFIED,
        f"line {key[1]} ran but never turned eager execution on in the tests{_in(ran.test)}",
    )


def _new_shapes(key: tuple[str, int], record: SessionRecord) -> Verdict:
    """TFG301: the function traced again for each new input shape the tests gave it, or a
    test saved it with only the graphs of fixed shapes traced before (or none)."""
    site = record.defs.get(key)
    if site is not None and site.saved is not None:
        saved = _saved(site.saved)
        if saved.status == CONFIRMED or not site.calls:
            return saved
    if site is None or not site.calls:
        return Verdict(NOT_REACHED, NOT_REACHED_EVIDENCE)
    calls = f"{site.calls} call" if site.calls == 1 else f"{site.calls} calls"
    where = f"{site.name}() traced {_times(site.traced)} over {calls}"
    if site.traced >= 2 and len(site.values) >= 2:
        shapes = "; ".join(site.values[:4]) + ("; ..." if len(site.values) > 4 else "")
        return Verdict(CONFIRMED, f"{where}, once per new input shape ({shapes})")
    if site.eager == site.calls:
        return Verdict(UNVERIFIED, f"{where}: all ran eagerly (run_functions_eagerly)")
    return Verdict(UNVERIFIED, f"{where}: the tests gave it one input shape")


def _saved(saved: SavedFunction) -> Verdict:
    if saved.raised:
        return Verdict(CONFIRMED, f"tf.saved_model.save raised {saved.raised}{_in(saved.test)}")
    if not saved.specs:
        return Verdict(
            CONFIRMED,
            "tf.saved_model.save wrote it with no traced graph (nothing had called it): "
            "loaded back, it cannot be called at all (no concrete function was saved)"
            f"{_in(saved.test)}",
        )
    shown = "; ".join(saved.specs[:4]) + ("; ..." if len(saved.specs) > 4 else "")
    if saved.fixed:
        return Verdict(
            CONFIRMED,
            f"tf.saved_model.save wrote only the graphs traced before for fixed input shapes "
            f"({shown}): loaded back, it refuses any other shape{_in(saved.test)}",
        )
    return Verdict(
        UNVERIFIED,
        f"tf.saved_model.save wrote graphs with unknown dims ({shown}){_in(saved.test)}",
    )


def _all_eager(site: CallSite) -> Verdict | None:
    """``unverified`` when every call of ``site`` ran its Python eagerly
    (``tf.config.run_functions_eagerly(True)``): nothing was traced."""
    if site.calls and site.eager == site.calls:
        return Verdict(
            UNVERIFIED,
            f"{site.name}() ran eagerly in all {site.calls} calls "
            "(tf.config.run_functions_eagerly(True)), so the tests never traced it",
        )
    return None


def _timed_trace(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG403: a call of the timed tf.function at the timed line traced, so the time taken
    around it includes tracing."""
    name = record.timed.get(key)
    named = record.named_sites.get(key, {})
    if name not in named and set(named) == {"<lambda>"}:
        name = "<lambda>"  # `infer = tf.function(lambda x: ...)`: called by another name
    site = _calls_traced(named.get(name) if name else None)
    if not isinstance(site, CallSite):
        return site
    where = f"{site.name}() called {_times(site.calls)} from line {key[1]}"
    if site.traced:
        return Verdict(
            CONFIRMED,
            f"{where}, and {_times(site.traced)} it traced first: the time measured around "
            "that call includes tracing",
        )
    return Verdict(UNVERIFIED, f"{where} and never traced there (traced before the timer)")


def _calls_traced(site: CallSite | None) -> CallSite | Verdict | None:
    """``site`` when some of its calls could trace; None when there were no calls, and the
    ``unverified`` verdict when all ran eagerly."""
    if site is None or not site.calls:
        return None
    return _all_eager(site) or site


def _made_per_call(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG302: every tf.function object made from the definition traced on its first call."""
    site = _calls_traced(record.defs.get(key))
    if not isinstance(site, CallSite):
        return site
    made = f"{site.objects} tf.function objects were made from this definition"
    traces = f"{_times(site.traced)} over {site.calls} calls"
    if site.objects >= 2 and site.traced >= site.objects:
        return Verdict(CONFIRMED, f"{made}, and each traced on its first call ({traces})")
    return Verdict(UNVERIFIED, f"{made} in the tests ({site.name}() traced {traces})")


def _inlined(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG401: the helper was called while another graph was built (inlined into it)."""
    site = record.defs.get(key)
    if site is None or not (site.calls or site.nested):
        return None
    if site.nested:
        own = f"; its own graph cache traced {_times(site.traced)}" if site.traced else ""
        return Verdict(
            CONFIRMED,
            f"{site.name}() was called {_times(site.nested)} while another function's graph "
            f"was being built, and inlined into that graph{own}",
        )
    return _all_eager(site) or Verdict(
        UNVERIFIED, f"{site.name}() was called only from eager code in the tests, never inlined"
    )


def _no_work(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG404: the graphs traced from the function hold no op that computes."""
    site = record.defs.get(key)
    if site is None:
        return None
    if site.work is None:
        return _all_eager(site) or (
            Verdict(UNVERIFIED, f"{site.name}() was never traced in the tests")
            if site.calls
            else None
        )
    if site.work == 0:
        return Verdict(
            CONFIRMED,
            f"{site.name}() traced {_times(site.traced)} and its graphs hold no op that "
            "computes (only inputs, constants and outputs): each trace ran plain Python once",
        )
    ops = ", ".join(site.work_ops[:5])
    return Verdict(NOT_REPRODUCED, f"{site.name}()'s graph computes with TensorFlow ops ({ops})")


def _recompiled(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG304: the jit-compiled function was called with more than one input shape."""
    site = _calls_traced(record.defs.get(key))
    if not isinstance(site, CallSite):
        return site
    if len(site.inputs) >= 2:
        shapes = "; ".join(site.inputs[:4]) + ("; ..." if len(site.inputs) > 4 else "")
        return Verdict(
            CONFIRMED,
            f"{site.name}() was called with {len(site.inputs)} input shapes ({shapes}): XLA "
            "compiles it again for each",
        )
    return Verdict(
        UNVERIFIED, f"the tests called {site.name}() with one input shape (among calls that ran)"
    )


def _unrolled(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG305: the loop's body ran many times while one graph was built."""
    body = record.bodies.get(key)
    seen = record.lines.get(body) if body is not None else None
    if seen is None:
        return None
    if not seen.graph:
        return Verdict(UNVERIFIED, "the loop body ran only outside graphs in the tests")
    limit = record.unroll_max.get(key, 1)
    copies = f"the loop body (line {body[1]}) ran {seen.most} times while one graph was built"
    if seen.most > limit:
        return Verdict(
            CONFIRMED,
            f"{copies}: the loop was unrolled into {seen.most} copies (more than {limit})"
            f"{_in(seen.test)}",
        )
    return Verdict(UNVERIFIED, f"{copies}, not more than {limit}")


def _handler_bypassed(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG206: the ``try`` body of the handler ran while a graph was built, so an op that
    fails when the graph runs raises after this ``try`` is over."""
    body = record.bodies.get(key)
    seen = record.lines.get(body) if body is not None else None
    if seen is None:
        return None
    if not seen.graph:
        return Verdict(UNVERIFIED, f"the try body (line {body[1]}) ran only outside graphs")
    handler = record.handlers.get(key)
    caught = record.lines.get(handler) if handler is not None else None
    if caught is not None and caught.graph:
        return Verdict(
            UNVERIFIED,
            f"the handler (line {handler[1]}) ran while a graph was built: it caught an error "
            "raised while tracing",
        )
    ops = record.try_ops.get(key)
    when = f"{_times(seen.graph)} while a graph was built"
    if ops is None:
        return Verdict(
            UNVERIFIED, f"the try body (line {body[1]}) ran {when}, but its graph was not read"
        )
    return try_verdict(body[1], ops, when, _in(seen.test))


def _lost_write(key: tuple[str, int], record: SessionRecord) -> Verdict | None:
    """TFG209: the TensorArray written at the line, while a graph was built, was the same
    array afterwards (``write`` returned the updated one, which was dropped)."""
    changes = record.changes.get(key, ())
    # A TensorArray made eagerly (in `__init__`) is written in place: its write loses nothing.
    kept = [c for c in changes if c.graph and not c.changed and "Eager" not in c.before]
    if not kept:
        if changes:
            return Verdict(UNVERIFIED, "the write changed the TensorArray, or it was no graph's")
        return None
    return Verdict(
        CONFIRMED,
        f"{kept[0].label.rsplit('.', 1)[0]} was the same TensorArray after the write at line "
        f"{key[1]} while a graph was built ({kept[0].label} unchanged): the written array "
        "returned by write() was dropped",
    )


_CHEAP = {
    "TFG206": _handler_bypassed,
    "TFG209": _lost_write,
    "TFG302": _made_per_call,
    "TFG304": _recompiled,
    "TFG305": _unrolled,
    "TFG401": _inlined,
    "TFG403": _timed_trace,
    "TFG404": _no_work,
}


def body_line(source: str, line: int, *, handler: bool = False) -> int | None:
    """The line of the first statement of the block a finding at ``line`` is about: the
    body of the ``for`` there (TFG305), the ``try`` body of the ``except`` there (TFG206),
    or with ``handler`` that ``except``'s own body."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.AsyncFor) and node.lineno == line and node.body:
            return None if handler else node.body[0].lineno
        if isinstance(node, ast.Try):
            for h in node.handlers:
                if h.lineno == line:
                    return h.body[0].lineno if handler else node.body[0].lineno
    return None


def _stale(read: StaleRead) -> Verdict:
    """TFG109: a later call, which did not trace again, found the global rebound."""
    where = f"{read.name} was {read.traced} when {read.function} traced"
    if read.changed:
        return Verdict(
            CONFIRMED,
            f"{where}, and {read.changed} at a later call that did not trace again: the graph "
            f"kept {read.traced}{_in(read.test)}",
        )
    if not read.later:
        return Verdict(UNVERIFIED, f"{where}; no later call of it followed")
    if read.staged:
        return Verdict(
            CONFIRMED,
            f"{where}; staged, as the tests never rebound it: with {read.name} = {read.staged} "
            f"the arguments of a later call still selected the graph built with {read.traced} "
            f"(no new trace), so every later call keeps {read.traced}{_in(read.test)}",
        )
    return Verdict(
        UNVERIFIED,
        f"{where}; it was the same at the {_calls(read.later)}: the tests never rebound it",
    )


def _unreached(key: tuple[str, int], record: SessionRecord, ran: Seen | None) -> Verdict | None:
    if ran is not None:
        return None
    if record.no_lines:
        return Verdict(UNVERIFIED, f"nothing seen at line {key[1]}; {record.no_lines}")
    return Verdict(NOT_REACHED, NOT_REACHED_EVIDENCE)


def _ran_eagerly(seen: Seen) -> bool:
    """The line ran in calls that did not trace, and that tells something: not when every
    such call ran with ``tf.config.run_functions_eagerly(True)`` on (a test of a CLI that
    switches it) while other calls traced it; those calls show nothing of what a graph does."""
    return bool(seen.eager) and not (seen.graph and seen.forced >= seen.eager)


def _forced_note(seen: Seen) -> str:
    if not (seen.forced and seen.graph):
        return ""
    return (
        f" (its {_times(seen.forced)} in calls run with tf.config.run_functions_eagerly(True) "
        "on are left out: they build no graph)"
    )


def _eager_status(seen: Seen) -> str:
    """Python that ran at call time is no trace-time-only statement, unless the tests forced
    every function to run eagerly: then nothing was traced, and the claim was not tested (a
    user told "not reproduced" would dismiss a real bug)."""
    return UNVERIFIED if seen.forced >= seen.eager else NOT_REPRODUCED


def _eagerly(seen: Seen) -> str:
    names = _names(seen.eager_entries.values())
    if seen.forced:
        return (
            f"in calls of {names} run eagerly (tf.config.run_functions_eagerly(True)), so the "
            "tests never traced it"
        )
    return f"in {_calls(seen.eager)} of {names} that did not trace"


def _traced_only(seen: Seen, what: str) -> Verdict | None:
    """The verdict for something seen while tracing only: confirmed when later calls (or a
    tf.data pipeline) ran the graph without it; None when the tests made no such call."""
    entries = list(seen.entries.values())
    later = sum(e.later for e in entries)
    plain = (
        f"; it also ran {_times(seen.plain)} in eager code outside any tf.function"
        if (seen.plain)
        else ""
    )
    if later:
        return Verdict(
            CONFIRMED,
            f"{what} while tracing, 0 times over {_calls(later)} of "
            f"{_names(e for e in entries if e.later)}: trace-time only{plain}{_forced_note(seen)}"
            f"{_in(seen.test)}",
        )
    element = [e for e in entries if e.per_element]
    if element:
        return Verdict(
            CONFIRMED,
            f"{what} while tracing {_names(element)} and never while the dataset ran it: tf.data "
            f"runs the traced graph for every element, so it is trace-time only{plain}"
            f"{_in(seen.test)}",
        )
    return None


def _no_later(seen: Seen, what: str) -> Verdict:
    entries = list(seen.entries.values())
    counted = [e for e in entries if e.calls]
    if counted:
        calls = sum(e.calls for e in counted)
        return Verdict(
            UNVERIFIED,
            f"{what} while tracing {_names(counted)}, but each of its {calls} call(s) in the tests "
            f"traced or raised, so no later call could show it does not run again"
            f"{_in(seen.test)}",
        )
    return Verdict(
        UNVERIFIED,
        f"{what} while a graph was built outside any tf.function call (a Keras symbolic "
        f"build, get_concrete_function), and no call of the function followed{_in(seen.test)}",
    )


def _probe(key: tuple[str, int], code: str, record: SessionRecord, ran: Seen | None) -> Verdict:
    kind = PROBE_KINDS[code]
    seen = Seen()
    names: list[str] = []
    for what, counted in record.hits.get(key, {}).items():
        if what.partition(":")[0] == kind:
            names.append(what.partition(":")[2])
            seen.merge(counted)
    what = ", ".join(sorted(set(names))) or kind
    if not (seen.graph or seen.eager or seen.plain):
        unreached = _unreached(key, record, ran)
        if unreached is not None:
            return unreached
        return Verdict(UNVERIFIED, f"line {key[1]} ran but no {kind} call was seen there")
    if _ran_eagerly(seen):
        during = f"{_times(seen.graph)} while tracing and " if seen.graph else ""
        return Verdict(
            _eager_status(seen),
            f"{what} ran {during}{_times(seen.eager)} {_eagerly(seen)}{_in(seen.test)}",
        )
    if seen.graph:
        return _traced_only(seen, f"{what} ran {_times(seen.graph)}") or _no_later(
            seen, f"{what} ran {_times(seen.graph)}"
        )
    return Verdict(
        UNVERIFIED,
        f"{what} ran {_times(seen.plain)}, only in eager code outside any tf.function (a test "
        f"calling it directly): the tests never traced it{_in(seen.test)}",
    )


def _documented(raised: Raised, code: str) -> bool:
    """The exception the rule documents: its type, and what its message says."""
    pattern = RAISES_MESSAGE.get(code)
    return bool(set(RAISES[code]) & set(raised.classes)) and (
        pattern is None or re.search(pattern, raised.message) is not None
    )


def _raises(key: tuple[str, int], code: str, record: SessionRecord, ran: Seen | None) -> Verdict:
    path, line = key
    # Anywhere in the function that holds the line; for RAISED_LATER after it (a layer
    # built on the line raises at its first call).
    anywhere = code in RAISED_ANYWHERE
    later = code in RAISED_LATER
    here = [
        r
        for r in record.raised
        if r.path == path
        and (
            r.line == line
            or (anywhere and r.first <= line <= r.last)
            or (later and r.first <= line < r.line <= r.last)
        )
    ]
    matching = [r for r in here if _documented(r, code)]
    if matching:
        best = next((r for r in matching if r.graph), matching[0])
        when = " while tracing" if best.graph else ""
        return Verdict(
            CONFIRMED, f"{best.type} at line {best.line}{when}{_in(best.test)}: {best.message}"
        )
    unreached = _unreached(key, record, ran)
    if unreached is not None:
        return unreached
    assert ran is not None
    if ran.graph:
        if here:
            other = here[0]
            return Verdict(
                UNVERIFIED,
                f"line {line} ran while tracing and raised {other.type} instead: {other.message}"
                f"{_in(other.test)}",
            )
        return Verdict(
            NOT_REPRODUCED, f"line {line} ran while tracing and nothing was raised{_in(ran.test)}"
        )
    if _ran_eagerly(ran):
        return Verdict(
            _eager_status(ran),
            f"line {line} ran, but only {_eagerly(ran)}; eagerly it does not raise{_in(ran.test)}",
        )
    return Verdict(
        UNVERIFIED,
        f"line {line} ran only in eager code outside any tf.function, where it does not raise: "
        f"the tests never traced it{_in(ran.test)}",
    )


def _state(key: tuple[str, int], code: str, record: SessionRecord, ran: Seen | None) -> Verdict:
    line = key[1]
    unreached = _unreached(key, record, ran)
    if unreached is not None:
        return unreached
    assert ran is not None
    if _ran_eagerly(ran):
        return Verdict(
            _eager_status(ran), f"line {line} ran {_eagerly(ran)}: it runs per call{_in(ran.test)}"
        )
    if not ran.graph:
        return Verdict(
            UNVERIFIED,
            f"line {line} ran only in eager code outside any tf.function: the tests never traced "
            f"it{_in(ran.test)}",
        )
    changes = [c for c in record.changes.get(key, []) if c.graph]
    changed = next((c for c in changes if c.changed), None)
    what = f"line {line} ran"
    verdict = _traced_only(ran, what)
    if verdict is None:
        return _no_later(ran, what)
    if changed is not None:
        return Verdict(
            CONFIRMED,
            f"{changed.label} changed while tracing ({changed.before} -> "
            f"{changed.after}); {verdict.evidence}",
        )
    if code == "TFG105":  # a global/nonlocal write is the statement itself
        return verdict
    if changes:
        return Verdict(
            UNVERIFIED,
            f"{verdict.evidence}, but {changes[0].label} did not visibly change there",
        )
    return Verdict(
        UNVERIFIED,
        f"{verdict.evidence}, but the state it changes could not be read to see it change",
    )


def watch_target(source: str, line: int) -> tuple[str, ...] | None:
    """The name chain (``("self", "history")``) of the state the statement at ``line``
    mutates: the container of ``x.append(...)``/``x[k] = v``/``del x[k]`` (the dict of
    ``d[k].append(...)``), or the attribute or
    name an assignment writes; None when it is no plain chain of names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno != line:
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute):
                receiver = func.value
                if isinstance(receiver, ast.Subscript):
                    # `self.history["loss"].append(x)`: the dict's fingerprint counts the
                    # items of the lists it holds.
                    receiver = receiver.value
                return _chain(receiver)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets[:1]:
            if isinstance(target, ast.Subscript):
                return _chain(target.value)
            return _chain(target)
    return None


def _chain(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        base = _chain(node.value)
        return None if base is None else (*base, node.attr)
    return None


def summary_counts(statuses: Iterable[str]) -> Mapping[str, int]:
    counts = {CONFIRMED: 0, NOT_REPRODUCED: 0, UNVERIFIED: 0, NOT_REACHED: 0}
    for status in statuses:
        counts[status] += 1
    return counts
