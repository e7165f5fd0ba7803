"""A timed block around the first call of a tf.function: the figure includes tracing."""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import CodeRange

from tflint_graph.checks.base import ModuleRule
from tflint_graph.core.finding import Severity
from tflint_graph.core.vocabulary import COUNTING_ITERABLES, PASS_THROUGH_ITERABLES
from tflint_graph.model import walk
from tflint_graph.model.autograph import loops_over_data
from tflint_graph.model.calls import argument, keyword
from tflint_graph.model.context import FunctionNode, ModuleContext
from tflint_graph.model.scopes import ImportAssignment
from tflint_graph.model.timing import CLOCKS, assigned_names, call_events, timed_block
from tflint_graph.model.values import assigned_value
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import TfFunctionRef, module_tf_functions, tf_function_of

# timeit functions that run ``stmt`` (first argument) after ``setup`` (second).
_TIMEIT = ("timeit.timeit", "timeit.repeat")
_TIMER_CLASS = "timeit.Timer"
# Calls beside the timed one that leave it a repeat of one computation (a device sync).
_NO_WORK = ("tensorflow.", "numpy.", "time.", "timeit.", "logging.", "absl.logging.", "sys.", "gc.")
_LOOPS = (cst.For, cst.While, cst.CompFor)
# Methods a step benchmark calls beside the step: collecting results, a progress bar.
_BESIDE_A_STEP = frozenset(
    {"append", "extend", "insert", "add", "update", "set_description", "set_postfix", "refresh"}
)
_TIMER_METHODS = frozenset({"timeit", "repeat", "autorange"})
# Words that say the author times the first call on purpose ("trace_time", "# cold start").
_DELIBERATE = ("trac", "compil", "warm", "first", "cold")

_Pos = tuple[int, int]
_IMPORTS_CLOCK = re.compile(r"\b(?:import|from)\b[^\n]*\b(?:time|timeit)\b")


class _NamesAndCalls(walk.Visitor):
    """Every name and call of the module, in source order."""

    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # an import binds a name; it runs nothing

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False


class BenchmarkIncludesTracing(ModuleRule):
    """A timing block around the first call of a tf.function measures its tracing too."""

    code = "TFG403"
    name = "benchmark-includes-tracing"
    severity = Severity.INFO

    VALID = [
        """
import time
import tensorflow as tf

@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)

x = tf.ones([64, 64])
step(x)  # warm-up: traces once
start = time.perf_counter()
for _ in range(100):
    step(x)
print(time.perf_counter() - start)
""",
        """
import timeit
import tensorflow as tf

@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)

x = tf.ones([64, 64])
print(timeit.timeit(lambda: step(x), setup=lambda: step(x), number=100))
""",
    ]
    INVALID = [
        """
import time
import tensorflow as tf

@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)

x = tf.ones([64, 64])
start = time.perf_counter()
for _ in range(100):
    step(x)  # TFG403
print(time.perf_counter() - start)
""",
        """
import timeit
import tensorflow as tf

@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)

x = tf.ones([64, 64])
print(timeit.timeit(lambda: step(x), number=100))  # TFG403
""",
    ]

    def check(self) -> None:
        ctx = self.ctx
        if not _IMPORTS_CLOCK.search(ctx.source):
            return  # neither time nor timeit imported: nothing is timed
        self.traced = traced_of(ctx)
        collector = _NamesAndCalls()
        collector.walk(self.ctx.module)
        self.names: dict[str, list[cst.Name]] = {}
        for name in collector.names:
            self.names.setdefault(name.value, []).append(name)
        # timeit statements given as strings: "step(x)" mentions step, like code would.
        self.strings: list[tuple[_Pos, str]] = []
        timed: list[tuple[cst.Call, cst.Call]] = []
        reported: set[cst.Call] = set()
        for call in collector.calls:
            if self._traced(call):
                continue
            res = self.traced.resolve(call.func)
            if res.is_(*CLOCKS):
                self._timed_block(call, reported)
            elif res.is_(*_TIMEIT):
                timed.append((call, call))
            elif (
                isinstance(call.func, cst.Attribute)
                and call.func.attr.value in _TIMER_METHODS
                and isinstance(call.func.value, cst.Call)
                and self.traced.resolve(call.func.value.func).is_(_TIMER_CLASS)
            ):
                timed.append((call.func.value, call))
            if res.is_(*_TIMEIT, _TIMER_CLASS):
                for arg in (
                    argument(call, 0, "stmt", strict=True),
                    argument(call, 1, "setup", strict=True),
                ):
                    if isinstance(arg, cst.SimpleString) and isinstance(arg.evaluated_value, str):
                        self.strings.append((self._pos(arg), arg.evaluated_value))
        for config, call in timed:
            self._timeit(config, call, reported)

    # -- t0 = time.perf_counter() ... time.perf_counter() - t0 ----------------------------
    def _timed_block(self, timer: cst.Call, reported: set[cst.Call]) -> None:
        ctx = self.ctx
        block = timed_block(ctx, self.traced.definitions, timer)
        if block is None:
            return
        stmt, end_stmt = block.start, block.end
        scope = ctx.enclosing_function(stmt)
        start = self._pos(stmt)
        first: dict[object, tuple[cst.Call, TfFunctionRef]] = {}
        for call in block.calls:
            if not self._repeats_only(call, stmt):
                continue  # a loop over data: an epoch timer, not a benchmark
            ref = tf_function_of(ctx, call.func, ctx.enclosing_function(call))
            if ref is not None and ref.info not in first:
                first[ref.info] = (call, ref)
        if not first:
            return
        if self._deliberate(stmt) or self._deliberate(end_stmt):
            return
        end = ctx.position(end_stmt).start.line
        line = ctx.position(stmt).start.line
        clock = ctx.code(timer.func)
        for call, ref in first.values():
            if call in reported or self._warm(call, stmt, scope, start):
                continue
            if self._epoch(ref) or self._later_pass(call, stmt):
                continue
            if self._made_in_block(call, stmt):
                continue  # `t0 = ...; f = tf.function(g); f(x)`: it times the staging itself
            reported.add(call)
            shown = f"{call.func.value}()" if isinstance(call.func, cst.Name) else ref.info.display
            self.report(
                call,
                f"the first call of {shown} runs inside the block timed by {clock}() "
                f"(lines {line}-{end}): the figure includes tracing {shown} into a graph, "
                f"which takes far longer than a call; call {shown} once before the timer "
                "starts (a warm-up call)",
                None,
                fix=f"call {shown} once before the timer starts",
            )

    def _made_in_block(self, call: cst.Call, start: cst.CSTNode) -> bool:
        """The ``tf.function`` that ``call`` calls by name is made (wrapped, or defined and
        decorated) after the clock starts: the timer measures making and tracing it, on
        purpose ("staging time")."""
        if not isinstance(call.func, cst.Name):
            return False
        if any(
            isinstance(a, cst.For | cst.While | cst.CompFor) for a in self._between(call, start)
        ):
            return False  # made, then called n times and divided: a per-call figure
        begin, at = self.ctx.source_order(start), self.ctx.source_order(call)
        found = self.ctx.bindings(call.func)
        return bool(found) and all(begin < self.ctx.source_order(a.node) < at for a in found)

    def _between(self, node: cst.CSTNode, start: cst.CSTNode) -> list[cst.CSTNode]:
        """The ancestors of ``node`` up to the block that holds ``start``."""
        around = set(map(id, self.ctx.ancestors(start)))
        out: list[cst.CSTNode] = []
        for a in self.ctx.ancestors(node):
            if id(a) in around or isinstance(a, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                break
            out.append(a)
        return out

    def _repeats_only(self, call: cst.Call, start: cst.CSTNode) -> bool:
        """Every loop around ``call`` that the timed block itself opens only repeats it
        (``for _ in range(100)``, a literal list): a loop over a dataset times training or
        evaluation, where the elapsed time is meant to include everything."""
        around = set(map(id, self.ctx.ancestors(start)))
        for a in self.ctx.ancestors(call):
            if isinstance(a, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                break
            # A loop inside the block, or one around the whole block: a step timer in a
            # training loop over the data (`for batch in dataset: t0 = ...; step(batch)`)
            # logs each step's time, and only the first step's includes the trace.
            data_loop = isinstance(a, cst.While) or (
                isinstance(a, cst.For | cst.CompFor)
                and (
                    not self._counted(a.iter)
                    or _slices_by_target(a)
                    or self._fed_by_a_loader(a, call)
                    or self._pulls_batches(call)
                )
            )
            if isinstance(a, cst.For) and id(a) not in around and self._does_more(a, call):
                return False  # a training run that shows its progress: a whole-run timer
            if data_loop:
                if id(a) not in around:
                    return False  # a loop over data inside the block: an epoch timer
                # Around the block: a step timer started on every pass (a training log's
                # step time), unless the loop adds the times up into one figure
                # (`total_time += elapsed`, `times.append(elapsed)`).
                every_pass = isinstance(a, cst.For | cst.While) and self.ctx.parent(start) is a.body
                return not every_pass or self._accumulates(a, start)
        return True

    def _does_more(self, loop: cst.For, call: cst.Call) -> bool:
        """Each pass also runs other code for its effect, a statement calling something
        that is neither the timed function nor TensorFlow, NumPy or the clock, nor what a
        step benchmark does beside (collect results, `outs.append(y)`; log, `print`,
        `log.debug(...)`; move a progress bar; wait for the result, `sync(y)`): showing or
        recording the state the steps change (``display(img)``, ``add_frame(frames, img)``)
        makes the loop a run whose every part the timer means to include."""
        timed = self.ctx.code(call.func)
        results = _result_names(self.ctx, call)
        for node in walk.descendants(loop.body):
            if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)):
                continue
            other = node.value
            if other is call or self.ctx.code(other.func) == timed:
                continue
            res = self.traced.resolve(other.func)
            if res.startswith(*_NO_WORK) or res.is_builtin("print"):
                continue
            func = other.func
            if isinstance(func, cst.Attribute) and (
                self.ctx.code(func.value) == timed  # `step.get_concrete_function(...)`
                or func.attr.value in _BESIDE_A_STEP
                or "log" in self.ctx.code(func.value).lower()
            ):
                continue
            if other.args and all(
                isinstance(a.value, cst.Name) and a.value.value in results for a in other.args
            ):
                continue  # `sync(y)`: waits for the step's result
            return True
        return False

    def _fed_by_a_loader(self, loop: cst.For | cst.CompFor, call: cst.Call) -> bool:
        """``for i in range(1000): X, y = loader.get_batch(bs); step(X, y)``: each pass binds
        the call's arguments from another call first (a data loader), so the loop goes over
        data.  Arguments the timed call itself returned (a decoder feeding its own output
        back), or inputs TensorFlow or NumPy makes afresh (`x = tf.random.normal(shape)`), are
        repeats of one computation, still a benchmark."""
        if not isinstance(loop, cst.For):
            return False
        wanted = {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
        timed = self.ctx.code(call.func)
        limit = self.ctx.source_order(call)
        for node in walk.descendants(loop.body):
            if (
                isinstance(node, cst.Assign)
                and isinstance(node.value, cst.Call)
                and self.ctx.code(node.value.func) != timed
                and not self.traced.resolve(node.value.func).startswith("tensorflow.", "numpy.")
                and self.ctx.source_order(node) < limit
                and any(n.value in wanted for t in node.targets for n in _names(t.target))
            ):
                return True
        return False

    def _pulls_batches(self, call: cst.Call) -> bool:
        """The call takes its data from an iterator (``step(iterator)`` with ``iterator =
        iter(dataset)``, or ``step(next(it))``): each call gets the next batch, so a loop
        of such calls goes over the data (a custom training or evaluation loop)."""
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Call) and self.traced.resolve(value.func).is_builtin("next"):
                return not self._one_batch(value)
            if not isinstance(value, cst.Name):
                continue
            values = [assigned_value(self.ctx, a.node) for a in self.ctx.bindings(value)]
            if values and all(
                isinstance(v, cst.Call)
                and self.traced.resolve(v.func).is_builtin("iter")
                and not self._one_batch(v)
                for v in values
            ):
                return True
        return False

    def _one_batch(self, pull: cst.Call) -> bool:
        """``next(...)``/``iter(...)`` of what yields one batch again and again
        (``itertools.repeat(x)``, ``Dataset.from_tensors(x).repeat()``): a benchmark's."""
        source = pull.args[0].value if pull.args else None
        if isinstance(source, cst.Name):
            found = [assigned_value(self.ctx, a.node) for a in self.ctx.bindings(source)]
            source = found[0] if len(found) == 1 else None
        for node in (source, *walk.descendants(source)) if source is not None else ():
            if isinstance(node, cst.Call):
                res = self.traced.resolve(node.func)
                if res.is_("itertools.repeat") or (
                    isinstance(node.func, cst.Attribute) and node.func.attr.value == "from_tensors"
                ):
                    return True
        return False

    def _accumulates(self, loop: cst.CSTNode, start: cst.CSTNode) -> bool:
        """``loop`` adds up what is timed from ``start`` (``t0 = time.time()``): ``total +=
        time.time() - t0``, or a name bound to that difference added to a total or
        appended to a list."""
        ctx = self.ctx
        assign = start.body[0] if isinstance(start, cst.SimpleStatementLine) else start
        begun = assign.targets[0].target if isinstance(assign, cst.Assign) else None
        if not isinstance(begun, cst.Name):
            return False
        elapsed: set[str] = set()
        spans: list[cst.BaseExpression] = []
        for node in walk.descendants(loop):
            if (
                isinstance(node, cst.BinaryOperation)
                and isinstance(node.operator, cst.Subtract)
                and ctx.code(node.right) == begun.value
            ):
                spans.append(node)
                parent = ctx.parent(node)
                if isinstance(parent, cst.Assign) and isinstance(
                    parent.targets[0].target, cst.Name
                ):
                    elapsed.add(parent.targets[0].target.value)

        def timed(expr: cst.BaseExpression) -> bool:
            return any(s is expr for s in spans) or (
                isinstance(expr, cst.Name) and expr.value in elapsed
            )

        for node in walk.descendants(loop):
            if (
                isinstance(node, cst.AugAssign)
                and isinstance(node.operator, cst.AddAssign)
                and timed(node.value)
            ):
                return True
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "append"
                and node.args
                and timed(node.args[0].value)
            ):
                return True
        return False

    def _counted(self, iterable: cst.BaseExpression) -> bool:
        """A loop that only counts: over ``range``, ``itertools.repeat``, a literal list, or
        a progress bar over one of them (``tqdm(range(n))``, ``trange(n)``)."""
        if isinstance(iterable, cst.List | cst.Tuple):
            return True
        if isinstance(iterable, cst.Call):
            res = self.traced.resolve(iterable.func)
            if res.is_(*PASS_THROUGH_ITERABLES):
                first = argument(iterable, 0, "iterable", strict=True)
                return first is not None and self._counted(first)
            return (
                res.is_builtin("range")
                or res.is_("itertools.repeat")
                or (res.is_(*COUNTING_ITERABLES) and not res.is_("itertools.count"))
            )
        return False

    def _epoch(self, ref: TfFunctionRef) -> bool:
        """One call runs a whole epoch or evaluation pass in a graph loop over the data
        (``for _ in tf.range(steps): strategy.run(step_fn, args=(next(iterator),))``): it
        is traced once and then runs every step, so the timer is an epoch timer, like an
        eager ``for batch in dataset`` loop, and a warm-up call would be an extra epoch."""
        fn = self.ctx.traced.get(ref.node) if ref.node is not None else None
        return fn is not None and loops_over_data(self.ctx, fn, self.traced.definitions)

    def _later_pass(self, call: cst.Call, start: cst.CSTNode) -> bool:
        """The clock starts under an ``if`` inside a loop that also makes the call, and the
        condition does not surely hold on the loop's first pass (``for i in range(2): if i
        == 1: start = ...``, ``if step == warmup_steps:``): an earlier pass made the call,
        and traced it, before the clock started."""
        ctx = self.ctx
        around = set(map(id, ctx.ancestors(call)))
        branches: list[tuple[cst.If, bool]] = []
        child: cst.CSTNode = start
        for a in ctx.ancestors(start):
            if isinstance(a, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                return False
            if isinstance(a, cst.If) and child is not a.test and id(child) not in around:
                # (a branch that holds the call too delays the call with the clock)
                branches.append((a, child is a.body))
            if isinstance(a, cst.For | cst.While) and id(a) in around:
                return any(not _first_pass(ctx, a, b.test, want) for b, want in branches)
            child = a
        return False

    # -- timeit.timeit(lambda: step(x), number=N) -------------------------------------
    def _timeit(self, config: cst.Call, call: cst.Call, reported: set[cst.Call]) -> None:
        ctx = self.ctx
        stmt = argument(config, 0, "stmt", strict=True)
        if stmt is None:
            return
        setup = argument(config, 1, "setup", strict=True)
        scope = ctx.enclosing_function(call)
        start = self._pos(call)
        found: list[tuple[cst.CSTNode, TfFunctionRef, cst.BaseExpression]] = []
        if isinstance(stmt, cst.Lambda):
            seen: set[object] = set()
            for event in call_events(stmt.body):
                if not event.sure:
                    continue
                ref = tf_function_of(ctx, event.call.func, stmt)
                if ref is not None and ref.info not in seen:
                    seen.add(ref.info)
                    found.append((event.call, ref, event.call.func))
        elif isinstance(stmt, cst.Name | cst.Attribute):
            ref = tf_function_of(ctx, stmt, scope)
            if ref is not None:
                found.append((stmt, ref, stmt))
        elif isinstance(stmt, cst.SimpleString) and keyword(config, "globals") is not None:
            found += self._string_stmt(stmt)
        if not found:
            return
        holder = next(
            (a for a in ctx.ancestors(call) if isinstance(a, cst.SimpleStatementLine)), call
        )
        if self._deliberate(holder):
            return
        what = ctx.code(call.func) if call is config else f"timeit.Timer(...).{_attr(call)}"
        for where, ref, callee in found:
            if setup is not None and _mentions(ctx.code(setup), _key(callee)):
                continue  # warmed up in setup
            if isinstance(where, cst.Call) and where in reported:
                continue
            if self._warm(callee, call, scope, start, inside=call):
                continue
            if isinstance(where, cst.Call):
                reported.add(where)
            shown = ref.info.display
            self.report(
                where,
                f"{what}() times the first call of {shown}, which traces it into a graph: "
                f"the figure includes tracing; call {shown} once before timing it (or in "
                "setup=)",
                None,
                fix=f"call {shown} once before timing it",
            )

    def _string_stmt(
        self, stmt: cst.SimpleString
    ) -> list[tuple[cst.CSTNode, TfFunctionRef, cst.BaseExpression]]:
        """``timeit.timeit("step(x)", globals=globals())``: module-level tf.functions
        called by name in the string."""
        value = stmt.evaluated_value
        if not isinstance(value, str):
            return []
        try:
            parsed = cst.parse_module(value)
        except Exception:
            return []
        exports = module_tf_functions(self.ctx)
        found = []
        seen: set[str] = set()
        for event in call_events(parsed):
            func = event.call.func
            if event.sure and isinstance(func, cst.Name) and func.value not in seen:
                info = exports.get(func.value)
                if info is not None:
                    seen.add(func.value)
                    found.append((stmt, TfFunctionRef(info), func))
        return found

    # -- was it surely not called before? ----------------------------------------------
    def _warm(
        self,
        callee: cst.BaseExpression,
        anchor: cst.CSTNode,
        scope: FunctionNode | None,
        start: _Pos,
        inside: cst.CSTNode | None = None,
    ) -> bool:
        """The tf.function may already have been called (or traced) before ``start``:
        any earlier mention of it, or of the object it belongs to, counts."""
        ctx = self.ctx
        if isinstance(callee, cst.Call):
            callee = callee.func
        # `step` or `model.step` (a module imported whole): a global function, mentioned
        # by its name or as an attribute of the module.
        key: cst.Name
        imported_module = False
        if isinstance(callee, cst.Name):
            key = callee
        elif isinstance(callee, cst.Attribute):
            root = callee
            while isinstance(root, cst.Attribute):
                root = root.value
            if not isinstance(root, cst.Name) or root.value in ("self", "cls"):
                return True  # an object whose earlier life we cannot see
            bindings = ctx.bindings(root)
            if bindings and all(isinstance(b, ImportAssignment) for b in bindings):
                key, imported_module = callee.attr, True
            else:
                owner = ctx.scope(anchor)
                if not bindings or any(
                    isinstance(b.node, cst.Param) or b.scope is not owner for b in bindings
                ):
                    return True
                key = root
        else:
            return True
        is_global = isinstance(callee, cst.Name) or imported_module
        if is_global:
            for at, text in self.strings:
                if at < start and _mentions(text, key.value):
                    return True
        span = ctx.position(inside) if inside is not None else None
        same = {a.node for a in ctx.bindings(key)} if not imported_module else set()
        # `enc.encode(x)` earlier does not warm up `enc.encode_fixed`: another method of
        # the object has its own graph cache.
        method = (
            callee.attr.value
            if isinstance(callee, cst.Attribute) and key is not callee.attr
            else None
        )
        for use in self.names.get(key.value, ()):
            if use is key or self._binding(use):
                continue
            parent = ctx.parent(use)
            if (
                method is not None
                and isinstance(parent, cst.Attribute)
                and parent.value is use
                and parent.attr.value != method
                and isinstance(ctx.parent(parent), cst.Call)
                and ctx.parent(parent).func is parent  # type: ignore[union-attr]
            ):
                continue
            if self._is_attr(use):
                if not is_global or self._other_object(use):
                    continue
            else:
                other = {a.node for a in ctx.bindings(use)}
                if same and other and not same & other:
                    continue  # another variable of the same name
            if span is not None and _contains(span, ctx.position(use)):
                continue
            if scope is None:
                # Module code: an earlier mention at module level, or in a function that
                # something calls, may have run first.
                if self._pos(use) < start and self._may_run_before(use, start):
                    return True
            elif self._within(use, scope):
                if self._pos(use) < start:
                    return True
            elif is_global and self._may_run_before(use, None):
                return True  # other code of the module uses it: it may have run first
        return False

    def _may_run_before(self, use: cst.Name, start: _Pos | None) -> bool:
        """A mention outside the timing code may have run before it: it is module code, in
        a method, or in a function that this module calls (from other functions, or from
        module code before ``start`` when the timing code is module code too).  A function
        this module never calls is an entry point of its own; other modules are not seen."""
        outer: FunctionNode | None = None
        for a in self.ctx.ancestors(use):
            if isinstance(a, cst.FunctionDef | cst.Lambda):
                outer = a
        if outer is None or not isinstance(outer, cst.FunctionDef):
            return True
        if self.ctx.enclosing_class(outer) is not None:
            return True
        for ref in self.names.get(outer.name.value, ()):
            if ref is outer.name or self._binding(ref) or self._is_attr(ref):
                continue
            inside = any(
                isinstance(a, cst.FunctionDef | cst.Lambda) for a in self.ctx.ancestors(ref)
            )
            if inside or start is None or self._pos(ref) < start:
                return True
        return False

    def _other_object(self, use: cst.Name) -> bool:
        """``use`` is the attribute of something other than a module of the run:
        ``tf.math.tanh`` or ``self.step`` do not mention the global ``tanh``/``step``."""
        parent = self.ctx.parent(use)
        assert isinstance(parent, cst.Attribute)
        res = self.ctx.resolve(parent)
        return not any(self.ctx.view.may_be_project(name) for name in res.imported)

    # -- small helpers -------------------------------------------------------------------
    def _deliberate(self, stmt: cst.CSTNode) -> bool:
        """The statement's own text (not the comments above it) says it times tracing."""
        text = self.ctx.code(stmt).lower()
        return any(word in text for word in _DELIBERATE)

    def _traced(self, node: cst.CSTNode) -> bool:
        return any(a in self.ctx.traced for a in self.ctx.ancestors(node))

    def _pos(self, node: cst.CSTNode) -> _Pos:
        where = self.ctx.position(node).start
        return where.line, where.column

    def _within(self, node: cst.CSTNode, scope: FunctionNode | None) -> bool:
        if scope is None:
            return True
        return any(a is scope for a in self.ctx.ancestors(node))

    def _binding(self, name: cst.Name) -> bool:
        """``name`` is what a def, class, parameter or assignment binds."""
        parent = self.ctx.parent(name)
        if isinstance(parent, cst.FunctionDef | cst.ClassDef | cst.Param):
            return parent.name is name
        if isinstance(parent, cst.AssignTarget | cst.AnnAssign):
            return parent.target is name
        return isinstance(parent, cst.For) and parent.target is name

    def _is_attr(self, name: cst.Name) -> bool:
        parent = self.ctx.parent(name)
        return isinstance(parent, cst.Attribute) and parent.attr is name


def _result_names(ctx: ModuleContext, call: cst.Call) -> set[str]:
    """The names the timed call's result is bound to (``y = step(x)``, ``y, s = ...``)."""
    parent = ctx.parent(call)
    if not isinstance(parent, cst.Assign) or parent.value is not call:
        return set()
    return {n.value for t in parent.targets for n in _names(t.target)}


def _slices_by_target(loop: cst.For | cst.CompFor) -> bool:
    """``for b in range(n): step(x[b * bs:(b + 1) * bs])``: the counter cuts the data into
    batches, so the loop goes over data (a whole prediction or epoch), not over repeats."""
    if not isinstance(loop, cst.For):
        return False
    names = {n.value for n in _names(loop.target)}
    for node in walk.descendants(loop.body):
        if isinstance(node, cst.Slice) and any(
            n.value in names
            for part in (node.lower, node.upper)
            if part is not None
            for n in _names(part)
        ):
            return True
    return False


def _first_pass(
    ctx: ModuleContext, loop: cst.For | cst.While, test: cst.BaseExpression, want: bool
) -> bool:
    """``test`` surely evaluates to ``want`` on the first pass of ``loop``: it reads nothing
    the loop rebinds (then it is the same on every pass, and a clock started at all starts on
    the first), or it only reads the counter of ``for i in range(...)`` /
    ``enumerate(...)`` (0, or the literal start), and evaluates to ``want`` there."""
    rebound = assigned_names(loop)
    used = {n.value for n in _names(test)}
    if not used & rebound:
        return True
    known = _counter(ctx, loop)
    if known is None or used & rebound != {known[0]}:
        return False
    value = _evaluate(test, {known[0]: known[1]})
    return value is not None and bool(value) is want


def _counter(ctx: ModuleContext, loop: cst.For | cst.While) -> tuple[str, int] | None:
    """The loop's counter and its first value: ``for i in range(n)`` (0),
    ``range(k, n)`` (k), ``for i, x in enumerate(xs)`` (0, or ``start=``)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return None
    res = ctx.resolve(loop.iter.func)
    target = loop.target
    if res.is_builtin("range") and isinstance(target, cst.Name):
        if len(loop.iter.args) == 1:
            return target.value, 0
        first = _evaluate(loop.iter.args[0].value, {})
        return (target.value, first) if first is not None else None
    if res.is_builtin("enumerate") and isinstance(target, cst.Tuple) and target.elements:
        counter = target.elements[0].value
        begin = argument(loop.iter, 1, "start")
        first = 0 if begin is None else _evaluate(begin, {})
        if isinstance(counter, cst.Name) and first is not None:
            return counter.value, first
    return None


def _evaluate(expr: cst.BaseExpression, env: dict[str, int]) -> int | None:
    """The integer value (``True`` is 1) of a small expression over known names; None when
    something in it is unknown."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.Name):
        return env.get(expr.value)
    if isinstance(expr, cst.UnaryOperation):
        v = _evaluate(expr.expression, env)
        if v is None:
            return None
        if isinstance(expr.operator, cst.Not):
            return int(not v)
        return -v if isinstance(expr.operator, cst.Minus) else None
    if isinstance(expr, cst.BinaryOperation):
        left, right = _evaluate(expr.left, env), _evaluate(expr.right, env)
        if left is None or right is None:
            return None
        op = expr.operator
        if isinstance(op, cst.Add):
            return left + right
        if isinstance(op, cst.Subtract):
            return left - right
        if isinstance(op, cst.Modulo) and right:
            return left % right
        return None
    if isinstance(expr, cst.BooleanOperation):
        left, right = _evaluate(expr.left, env), _evaluate(expr.right, env)
        if isinstance(expr.operator, cst.And):
            if left == 0 or right == 0:
                return 0
            return None if left is None or right is None else 1
        if left or right:
            return 1
        return None if left is None or right is None else 0
    if isinstance(expr, cst.Comparison):
        value = _evaluate(expr.left, env)
        for target in expr.comparisons:
            other = _evaluate(target.comparator, env)
            if value is None or other is None:
                return None
            verdict = _compare(target.operator, value, other)
            if verdict is None:
                return None
            if not verdict:
                return 0
            value = other
        return 1
    return None


def _compare(op: cst.BaseCompOp, left: int, right: int) -> bool | None:
    if isinstance(op, cst.Equal | cst.Is):
        return left == right
    if isinstance(op, cst.NotEqual | cst.IsNot):
        return left != right
    if isinstance(op, cst.LessThan):
        return left < right
    if isinstance(op, cst.LessThanEqual):
        return left <= right
    if isinstance(op, cst.GreaterThan):
        return left > right
    if isinstance(op, cst.GreaterThanEqual):
        return left >= right
    return None


def _names(expr: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found.append(node)
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)  # `self.i`: the object, not the attribute name
            continue
        stack.extend(walk.children(node))
    return found


def _attr(call: cst.Call) -> str:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else ""


def _key(callee: cst.BaseExpression) -> str:
    """The name whose mention in ``setup=`` counts as a warm-up."""
    node = callee.func if isinstance(callee, cst.Call) else callee
    while isinstance(node, cst.Attribute):
        node = node.attr if isinstance(node.attr, cst.Name) else node.value
    return node.value if isinstance(node, cst.Name) else ""


def _mentions(text: str, name: str) -> bool:
    if not name:
        return True
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def _contains(outer: CodeRange, inner: CodeRange) -> bool:
    return (outer.start.line, outer.start.column) <= (inner.start.line, inner.start.column) and (
        inner.end.line,
        inner.end.column,
    ) <= (outer.end.line, outer.end.column)
