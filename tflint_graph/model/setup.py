"""One-time setup (SPEC §2): code in traced bodies that runs on the first trace only *by
design*, which TFG102, TFG103, TFG105, TFG106, TFG108, TFG205 and TFG208 leave alone.

Setup is a region guarded by a test of whether the state it sets up exists yet (``if not
self.built:``, ``if self.table is None:``, ``if getattr(self, "cache", None) is None:``,
``if not hasattr(self, "x"):``, a method that returns such a test, an early ``if self.x is not
None: return``, ``if not os.path.exists(path):`` over a block that writes ``path``),
together with every function the region calls; a guard may also sit inside the helper the
traced code calls (``self._maybe_init()``).  The test only counts when the region, or what
it calls, sets (or at least touches) the state it tests: ``if self.config.use_b:`` guards
something else and is re-evaluated on every trace.  The body of ``with tf.init_scope():``,
Keras ``build()`` and ``__init__`` (a fresh object), and code under ``if
tf.executing_eagerly():`` are setup too.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tflint_graph.core.facts import TraceKind
from tflint_graph.model import walk
from tflint_graph.model.calls import super_method
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.eager import TracingGuards
from tflint_graph.model.names import dotted, root_name
from tflint_graph.model.scopes import Assignment, ImportAssignment, Scope
from tflint_graph.model.values import (
    call_mode,
    calls_in,
    declared_outer_names,
    ends_in_exit,
    is_init_scope,
    mode_writes,
)
from tflint_graph.source.prefilter import run_once_decorators

# Methods that set an object up: Keras calls ``build`` once, before or outside the step's
# trace; ``__init__`` makes a fresh object.
CREATION_METHODS = frozenset({"__init__", "build", "_build", "build_from_config"})

# Flags Keras (or the usual lazy-init idiom) sets itself, so the region need not.
_BUILT_FLAGS = frozenset({"built", "_built", "initialized", "_initialized"})

# How far call sites, helper writes and guard methods are followed.
_MAX_DEPTH = 8

# Tests of whether a file exists: `if not os.path.exists(path):` guards a block that writes
# that file (a draw or a download kept on disk), which later calls read instead.
_EXISTS_CALLS = (
    "os.path.exists",
    "os.path.isfile",
    "os.path.isdir",
    "tensorflow.io.gfile.exists",
    "tensorflow.gfile.Exists",
)
_EXISTS_METHODS = frozenset({"exists", "is_file", "is_dir"})  # pathlib
# Words in the name of a call that writes what it is given: `np.save(path, a)`,
# `pickle.dump(x, f)`, `df.to_csv(path)`, `urlretrieve(url, path)`, `Path(p).write_text(s)`.
_WRITE_WORDS = ("save", "dump", "write", "copy", "download", "retrieve", "mkdir", "to_")


def _returned_flag(fn: cst.FunctionDef) -> str | None:
    """The global a function without parameters only returns (``return _FLAG``, ``return
    not _FLAG``), after an optional docstring; the twin of ``prefilter.global_state``."""
    params = fn.params
    if params.params or params.posonly_params or params.kwonly_params:
        return None
    body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
    if body and _is_docstring(body[0]):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    small = body[0].body[0] if len(body[0].body) == 1 else None
    value = small.value if isinstance(small, cst.Return) else None
    while isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        value = value.expression
    return value.value if isinstance(value, cst.Name) else None


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _module_names(module: cst.Module) -> set[str]:
    """Names bound by assignments at module level (``_FLAG = False``, also in ``try``/``if``)."""
    found: set[str] = set()
    todo: list[cst.CSTNode] = list(module.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = (
                    [t.target for t in small.targets]
                    if isinstance(small, cst.Assign)
                    else [small.target]
                    if isinstance(small, cst.AnnAssign)
                    else []
                )
                found.update(t.value for t in targets if isinstance(t, cst.Name))
        elif isinstance(stmt, cst.Try | cst.If):
            todo.extend(stmt.body.body)
            for handler in getattr(stmt, "handlers", ()):
                todo.extend(handler.body.body)
            orelse = stmt.orelse
            if isinstance(orelse, cst.Else):
                todo.extend(orelse.body.body)
            elif isinstance(orelse, cst.If):
                todo.append(orelse)
    return found


class OneTimeSetup:
    """Answers "does this node run on the first trace only, by design?" for one module."""

    def __init__(self, definitions: Definitions, guards: TracingGuards) -> None:
        self.definitions = definitions
        self.guards = guards
        self.ctx = definitions.ctx
        self._writes: dict[FunctionNode, frozenset[str]] = {}
        self._returned_tests: dict[cst.FunctionDef, list[str]] = {}
        self._callees: dict[tuple[FunctionNode, bool], bool] = {}
        self._once: frozenset[str] | None = None

    # -- public -----------------------------------------------------------------------
    def covers(self, node: cst.CSTNode, fn: TracedFunction, *, construction: bool = True) -> bool:
        """``node`` (inside ``fn``) is one-time setup, or does not run while tracing.
        ``construction=False`` leaves out ``__init__``: an object constructed per trace is
        fresh state, but a value it draws is still frozen into that trace's graph."""
        return self._covers(node, fn, 0, construction)

    def writes(self, fn: FunctionNode) -> frozenset[str]:
        """``self.x`` chains and ``global`` names ``fn`` assigns or mutates, with those of the
        functions it calls (as far as this module shows)."""
        return self._writes_of(fn, 0)

    # -- regions ----------------------------------------------------------------------
    def _covers(
        self, node: cst.CSTNode, fn: TracedFunction, depth: int, construction: bool
    ) -> bool:
        fn_node = fn.node
        if isinstance(fn_node, cst.FunctionDef) and (
            (
                fn_node.name.value in CREATION_METHODS
                and (construction or fn_node.name.value != "__init__")
            )
            or self._runs_once(fn_node)
        ):
            return True
        if self.guarded(node, fn_node) or self.guards.untraced(node, fn_node):
            return True
        return self._called_in_setup(fn, depth, construction)

    def _called_in_setup(self, fn: TracedFunction, depth: int, construction: bool) -> bool:
        """Every traced call of callee ``fn`` is itself setup (the same for all its nodes)."""
        fn_node = fn.node
        known = self._callees.get((fn_node, construction))
        if known is not None:
            return known
        parent = fn.parent
        if fn.kind is TraceKind.CALLEE and parent is None:
            result = fn.setup_elsewhere  # called from other modules' setup blocks only
        elif fn.kind is not TraceKind.CALLEE or parent is None or depth > _MAX_DEPTH:
            result = False
        elif isinstance(fn_node, cst.Lambda):
            # A lambda in a traced body: its creation is guarded where the lambda is written.
            result = self._covers(fn_node, parent, depth + 1, construction)
        else:
            sites = list(self.definitions.calls_in(parent.node, fn_node))
            # No call site: reached some other way (passed as an argument ...): do not guess.
            result = all(self._covers(s, parent, depth + 1, construction) for s in sites)
        self._callees[(fn_node, construction)] = result
        return result

    def once_decorators(self) -> frozenset[str]:
        """The module's run-once decorators (``ModuleSummary.once_decorators``)."""
        if self._once is None:
            self._once = run_once_decorators(self.ctx.cpython_tree())
        return self._once

    def _runs_once(self, fn: cst.FunctionDef) -> bool:
        """``fn`` is decorated with a run-once decorator of this module or, by what the run
        says, of another (``@once.once def _initialize(self, x)``): its body runs on the
        object's first call only, by design."""
        for dec in fn.decorators:
            expr = dec.decorator
            if type(expr) is cst.Name:
                local = [a for a in self.ctx.bindings(expr) if not isinstance(a, ImportAssignment)]
                if local:
                    node = local[0].node
                    if (
                        len(local) == 1
                        and type(node) is cst.FunctionDef
                        and self.ctx.parent(node) is self.ctx.module
                        and node.name.value in self.once_decorators()
                    ):
                        return True
                    continue
            known = self.ctx.view.once_decorators
            if known and any(
                self.ctx.view.absolute(n) in known for n in self.ctx.resolve(expr).imported
            ):
                return True
        return False

    def guarded(self, node: cst.CSTNode, fn: FunctionNode) -> bool:
        """``node`` runs under a one-time guard of ``fn`` itself (traced or not: ``if _TABLE
        is None: _TABLE = load()`` in a lazy initialiser), or ``with tf.init_scope():``."""
        child: cst.CSTNode = node
        for anc in self.ctx.ancestors(node):
            if anc is fn:
                return False
            if self._guards(anc, child, fn):
                return True
            child = anc
        return False

    def _guards(self, anc: cst.CSTNode, child: cst.CSTNode, fn: FunctionNode) -> bool:
        """``anc`` makes its part ``child`` one-time setup."""
        ctx = self.ctx
        if isinstance(anc, cst.If) and child is not anc.test:
            if child is anc.body and self._first_call_counter(anc.test, fn):
                return True
            region = [anc.body] + ([anc.orelse] if anc.orelse is not None else [])
            present = _runs_when_present(anc.test)
            if present is not None and present == (child is anc.body):
                # `if self.w is not None: self.w /= s`: the branch that runs once the state
                # exists runs on every call after, unless it uses the state up (`= None`).
                return self._consumes(anc.test, child, fn) and self._is_guard(anc.test, region, fn)
            return self._is_guard(anc.test, region, fn)
        if isinstance(anc, cst.IfExp) and child is not anc.test:
            return self._is_guard(anc.test, [_statement_of(ctx, anc)], fn)
        if isinstance(anc, cst.BooleanOperation) and child is anc.right:
            # `self.v = self.v or tf.Variable(...)`
            return self._is_guard(anc.left, [_statement_of(ctx, anc)], fn)
        if isinstance(anc, cst.With):
            return is_init_scope(ctx, anc)
        if isinstance(anc, cst.IndentedBlock):
            # `if self.x is not None: return` earlier in the block, and what follows sets x.
            body = list(anc.body)
            for i, stmt in enumerate(body):
                if stmt is child:
                    return False
                if (
                    isinstance(stmt, cst.If)
                    and stmt.orelse is None
                    and ends_in_exit(stmt.body)
                    and self._is_guard(stmt.test, body[i + 1 :], fn)
                ):
                    return True
        return False

    # -- guards -----------------------------------------------------------------------
    def _first_call_counter(self, test: cst.BaseExpression, fn: FunctionNode) -> bool:
        """``if self.step == 0:`` where a statement of ``fn``'s own body steps the counter on
        every call (``self.step += 1``) and nothing but ``__init__``/``build`` sets it
        otherwise: the counter passes that value once, so the block runs on one call."""
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(fn, cst.FunctionDef)
            and isinstance(fn.body, cst.IndentedBlock)
        ):
            return False
        sides = (test.left, test.comparisons[0].comparator)
        counter = next((d for s in sides if (d := dotted(s)) and d.startswith("self.")), None)
        if counter is None or not any(isinstance(s, cst.Integer) for s in sides):
            return False
        stepped = any(
            isinstance(small, cst.AugAssign)
            and isinstance(small.operator, cst.AddAssign)
            and isinstance(small.value, cst.Integer)
            and dotted(small.target) == counter
            for stmt in fn.body.body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
        )
        cls = self.ctx.enclosing_class(fn)
        return stepped and all(
            f is fn or f.name.value in ("__init__", "build") or counter not in self.writes(f)
            for f in self.definitions.facts.functions
            if self.ctx.enclosing_class(f) is cls
        )

    def _consumes(self, test: cst.BaseExpression, branch: cst.CSTNode, fn: FunctionNode) -> bool:
        """``branch`` sets the state ``test`` reads back to nothing (``self._pending =
        None``, ``False``, ``del``) in a statement of its own: it runs once per value."""
        tested = set(self._tested_state(test, fn, 0))
        for node in walk.descendants(branch):
            if isinstance(node, cst.Assign) and (
                isinstance(node.value, cst.Name) and node.value.value in ("None", "False")
            ):
                if any(dotted(t.target) in tested for t in node.targets):
                    return True
            elif isinstance(node, cst.Del) and dotted(node.target) in tested:
                return True
        return False

    def _is_guard(
        self, test: cst.BaseExpression, region: list[cst.CSTNode], fn: FunctionNode
    ) -> bool:
        """``test`` reads state that outlives the trace, and ``region`` (what it guards, with
        the functions it calls) sets or touches that state: the first trace flips it."""
        if _threshold(test):
            return False  # `if self.epsilon > self.epsilon_min:` decays on many calls
        tested = self._tested_state(test, fn, 0)
        if not tested:
            return False
        files = {t[len("file:") :] for t in tested if t.startswith("file:")}
        if files and any(self._writes_file(part, files) for part in region):
            return True
        if any(t.rsplit(".", 1)[-1] in _BUILT_FLAGS for t in tested):
            return True  # Keras sets `built` itself
        base_calls = False
        for part in region:
            for expr in _dotted_exprs(part):
                if _touched(self.ctx, expr) and any(
                    _related(dotted(expr) or "", t) for t in tested
                ):
                    return True
            for call in calls_in(part):
                base_calls = base_calls or super_method(call) is not None
                if set(tested) & self._foreign(call.func, self.ctx.view.global_writes):
                    return True  # `options.warn_fallback(...)` switches the flag over there
                for callee, _ in self.definitions.callables(call.func, fn):
                    if any(_related(w, t) for w in self.writes(callee) for t in tested):
                        return True
                    base_calls = base_calls or any(
                        super_method(c) is not None for c in calls_in(callee)
                    )
        # `if not self._built_from_signature: self._build_from_signature(q, v)`, whose
        # `super()._build_from_signature(...)` (a library base) sets the flag: a flag nothing
        # in this module writes is the base's own, and the region hands over to the base.
        return base_calls and all(
            t.startswith("self.") and not self._written_in_module(t) for t in tested
        )

    def _written_in_module(self, text: str) -> bool:
        """Some function of the module assigns or mutates ``text`` (``self._flag``)."""
        return any(text in self.writes(f) for f in self.definitions.facts.functions)

    def _tested_state(self, test: cst.BaseExpression, fn: FunctionNode, depth: int) -> list[str]:
        """The ``self.x`` chains and outer names ``test`` reads: directly, through
        ``hasattr``/``getattr`` with a literal name, or through a method of the class that
        returns such a test (``self._needs_init()``)."""
        ctx = self.ctx
        found = [text for expr in _state_refs(ctx, test, fn) if (text := dotted(expr))]
        for call in calls_in(test):
            func = call.func
            path = self._existence_tested(call)
            if path is not None:
                found.append(f"file:{ctx.code(path)}")
                continue
            if (
                isinstance(func, cst.Name)
                and func.value in ("hasattr", "getattr")
                and len(call.args) >= 2
                and isinstance(call.args[1].value, cst.SimpleString)
            ):
                attr = call.args[1].value.evaluated_value
                owner = dotted(call.args[0].value)
                if isinstance(attr, str) and owner is not None:
                    found.append(f"{owner}.{attr}")
            elif isinstance(func, cst.Attribute) and depth < 2:
                for method in self.definitions.methods_of(func, fn):
                    found.extend(self._returned_test(method, depth + 1))
            if not call.args:
                # `options.is_custom_kernel_disabled()`: another module's global flag.
                found.extend(sorted(self._foreign(func, self.ctx.view.global_reads)))
        return found

    def _existence_tested(self, call: cst.Call) -> cst.BaseExpression | None:
        """The path whose existence ``call`` tests (``os.path.exists(p)``,
        ``Path(p).exists()``, ``p.is_file()``), else None."""
        func = call.func
        if self.ctx.resolve(func).is_(*_EXISTS_CALLS):
            return call.args[0].value if call.args else None
        if isinstance(func, cst.Attribute) and func.attr.value in _EXISTS_METHODS:
            return _path_of(self.ctx, func.value)
        return None

    def _writes_file(self, part: cst.CSTNode, paths: set[str]) -> bool:
        """``part`` writes one of ``paths`` (by their code): the guard tests whether the
        file it makes exists yet."""
        ctx = self.ctx
        for call in calls_in(part):
            func = call.func
            name = (func.attr.value if isinstance(func, cst.Attribute) else dotted(func)) or ""
            if not any(word in name.lower() for word in _WRITE_WORDS) and not _opens_to_write(call):
                continue
            given = [a.value for a in call.args]
            if isinstance(func, cst.Attribute):
                given.append(_path_of(ctx, func.value))  # `Path(p).write_text(s)`
            if any(ctx.code(g) in paths for g in given):
                return True
        return False

    def _returned_test(self, method: cst.FunctionDef, depth: int) -> list[str]:
        if method not in self._returned_tests:
            self._returned_tests[method] = []  # a recursive method tests nothing more
            returns = self.definitions.facts.bodies.get(method)
            tested: list[str] = []
            for value in returns.returns if returns is not None else ():
                tested.extend(self._tested_state(value, method, depth))
            self._returned_tests[method] = tested
        return self._returned_tests[method]

    # -- across modules -----------------------------------------------------------------
    def exported(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        """``ModuleSummary.global_reads`` and ``global_writes``: the module's functions that
        return a test of module globals, and those that set module globals (absolute names)."""
        module = self.ctx.view.module
        reads: dict[str, frozenset[str]] = {}
        writes: dict[str, frozenset[str]] = {}
        if module is None:
            return reads, writes
        globals_here = _module_names(self.ctx.module)
        # Only `global` statements here, or another module's setters called here, set one.
        writers = "global " in self.ctx.source or bool(self.ctx.view.global_writes)
        for stmt in self.ctx.module.body:
            if not isinstance(stmt, cst.FunctionDef):
                continue
            name = stmt.name.value
            flag = _returned_flag(stmt)
            if flag is not None and flag in globals_here:
                reads[name] = frozenset({f"{module}.{flag}"})
            if not writers:
                continue
            written = {w for w in self.writes(stmt) if w in globals_here}
            # Written through another module's function: already absolute.
            absolute = {
                w for w in self.writes(stmt) if "." in w and not w.startswith(("self.", "cls."))
            }
            if written or absolute:
                writes[name] = frozenset({f"{module}.{w}" for w in written} | absolute)
        return reads, writes

    def _foreign(self, func: cst.BaseExpression, table: dict[str, frozenset[str]]) -> set[str]:
        """What ``table`` (a ``ProjectView`` map of other modules' functions) says of the
        function ``func`` names."""
        if not table:
            return set()
        found: set[str] = set()
        for name in self.ctx.resolve(func).imported:
            found |= table.get(self.ctx.view.absolute(name), frozenset())
        return found

    # -- what functions set -------------------------------------------------------------
    def _writes_of(self, fn: FunctionNode, depth: int) -> frozenset[str]:
        cached = self._writes.get(fn)
        if cached is not None:
            return cached
        self._writes[fn] = frozenset()  # a call cycle adds nothing
        written = _Written(declared_outer_names(self.ctx, fn))
        written.walk(fn.body)
        found = set(written.found)
        facts = self.definitions.facts.bodies.get(fn)
        if facts is not None and depth < _MAX_DEPTH:
            for call in facts.calls:
                for callee, _ in self.definitions.callables(call.func, fn):
                    found |= self._writes_of(callee, depth + 1)
                found |= self._foreign(call.func, self.ctx.view.global_writes)
        self._writes[fn] = frozenset(found)
        return self._writes[fn]


def _runs_when_present(test: cst.BaseExpression) -> bool | None:
    """True when ``test`` holds once the state it reads exists (``x is not None``, a bare
    ``self.table``, ``hasattr(self, "t")``), False when it holds while the state is missing
    (``x is None``, ``not self._initialized``, ``not hasattr(...)``); None for anything else
    (a comparison with a value, ``and``/``or``)."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated = not negated
        test = test.expression
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1:
            return None
        comparison = test.comparisons[0]
        none = comparison.comparator
        if not (isinstance(none, cst.Name) and none.value == "None"):
            return None
        if isinstance(comparison.operator, cst.IsNot | cst.NotEqual):
            present = True
        elif isinstance(comparison.operator, cst.Is | cst.Equal):
            present = False
        else:
            return None
        return present != negated
    if isinstance(test, cst.Name | cst.Attribute) or (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value in ("hasattr", "getattr")
    ):
        return not negated
    return None


_ORDERINGS = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def _threshold(test: cst.BaseExpression) -> bool:
    """``test`` orders values (``self.eps > self.eps_min``, ``not step < warmup``): it asks how
    far some state has come, which stays true for many calls, not whether it exists yet."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if not isinstance(test, cst.Comparison) or not all(
        isinstance(c.operator, _ORDERINGS) for c in test.comparisons
    ):
        return False
    # `if self.mask.shape[0] < n:` grows a cache to the input's static size: a new size
    # means a new trace, so it is setup for each trace, not a counter.
    return not any(
        (isinstance(node, cst.Attribute) and node.attr.value in _SIZES)
        or (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "len"
        )
        for node in walk.descendants(test)
    )


_SIZES = frozenset({"shape", "ndim", "size"})


def _touched(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    """``expr`` is set, deleted or changed here, not only read: an assignment target (also
    through an item, ``self.cache[k] = v``), or the object of a method call
    (``self.cache.update(...)``).  Reading the tested value (``open(self.log_path)`` under
    ``if self.log_path:``) sets nothing up."""
    node: cst.CSTNode = expr
    parent = ctx.parent(node)
    while isinstance(parent, cst.Subscript) and parent.value is node:
        node, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.AssignTarget | cst.Del) or (
        isinstance(parent, cst.AugAssign | cst.AnnAssign) and parent.target is node
    ):
        return True
    if isinstance(parent, cst.Element | cst.Tuple | cst.List):
        return True  # `self.a, self.b = ...` (or a display read: rare under such a guard)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return isinstance(ctx.parent(parent), cst.Call)  # `self.cache.update(...)`
    return isinstance(parent, cst.Call) and parent.func is node  # `self._build()`


def _path_of(ctx: ModuleContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The path ``Path(p)`` wraps (``p``), or ``expr`` itself."""
    if isinstance(expr, cst.Call) and expr.args and ctx.resolve(expr.func).startswith("pathlib."):
        return expr.args[0].value
    return expr


def _opens_to_write(call: cst.Call) -> bool:
    """``open(p, "w")``/``GFile(p, "wb")``: an opener whose mode writes."""
    if (dotted(call.func) or "").rsplit(".", 1)[-1] not in ("open", "GFile", "Open"):
        return False
    mode = call_mode(call)
    if not (isinstance(mode, cst.SimpleString) and isinstance(mode.evaluated_value, str)):
        return False  # read, or a mode the code computes
    return mode_writes(mode)


def _related(written: str, tested: str) -> bool:
    """Setting ``self.a`` sets ``self.a.b``; setting ``self.a.b`` touches ``self.a``."""
    return written == tested or written.startswith(tested + ".") or tested.startswith(written + ".")


def _statement_of(ctx: ModuleContext, node: cst.CSTNode) -> cst.CSTNode:
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            return anc
    return node


class _Written(walk.Visitor):
    """Targets ``self.x`` / ``self.x[k]`` / ``self.x.append(...)`` / ``setattr(self, "x", v)``
    and writes to the function's ``global`` names."""

    def __init__(self, outer: set[str]) -> None:
        self.outer = outer
        self.found: list[str] = []

    def _target(self, target: cst.BaseExpression) -> None:
        while isinstance(target, cst.Subscript):
            target = target.value
        if isinstance(target, cst.Tuple | cst.List):
            for el in target.elements:
                self._target(el.value)
            return
        text = dotted(target)
        if text is None:
            return
        if isinstance(target, cst.Attribute) or text in self.outer:
            self.found.append(text)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "setattr" and len(node.args) >= 2:
            owner, attr = dotted(node.args[0].value), node.args[1].value
            if owner is not None and isinstance(attr, cst.SimpleString):
                name = attr.evaluated_value
                if isinstance(name, str):
                    self.found.append(f"{owner}.{name}")
        elif isinstance(func, cst.Attribute):
            receiver = dotted(func.value)
            root = receiver.partition(".")[0] if receiver is not None else ""
            if receiver is not None and (
                (isinstance(func.value, cst.Attribute) and root in ("self", "cls"))
                or receiver in self.outer
            ):
                self.found.append(receiver)  # `self.cache.insert(...)` fills the cache


def _state_refs(
    ctx: ModuleContext, test: cst.BaseExpression, fn: FunctionNode
) -> Iterator[cst.BaseExpression]:
    """Names and attribute chains in ``test`` that outlive one trace of ``fn``."""
    outer = declared_outer_names(ctx, fn)
    for expr in _dotted_exprs(test):
        root = root_name(expr)
        if root is None:
            continue
        res = ctx.resolve(root)
        if res.imported and not res.local:
            continue  # a module (tf.executing_eagerly) or builtin
        if root.value in outer:
            yield expr
            continue
        found = ctx.bindings(root)
        if not found:
            continue
        if root.value in ("self", "cls"):
            yield expr
            continue
        own = ctx.function_scope(fn)
        if any(a.scope is own for a in found):
            # A local or parameter is reset on every trace, unless it only holds what a
            # lasting container holds: `v = self._cache.get(k)`, then `if v is None:` tests
            # whether the container has the entry yet.  An attribute of a parameter
            # (`cosmo._workspace`) is state of the object the caller hands in.
            if expr is root:
                yield from _looked_up(ctx, found, own)
            elif len(found) == 1 and isinstance(found[0].node, cst.Param):
                yield expr
            continue
        yield expr


# Lookups that answer None (or a default) when a container has no entry yet.
_LOOKUPS = frozenset({"get"})


def _looked_up(
    ctx: ModuleContext, found: list[Assignment], own: Scope | None
) -> Iterator[cst.BaseExpression]:
    """The containers on an object (``self``, a parameter) a local was read from, when every
    binding of it in the function is such a lookup (``counter = self._counters.get(name)``)."""
    out = []
    for binding in found:
        if binding.scope is not own or not isinstance(binding.node, cst.Name):
            return
        parent = ctx.parent(binding.node)
        stmt = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else None
        value = stmt.value if isinstance(stmt, cst.Assign) else None
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _LOOKUPS
            # A container on an object (`self._cache`, `params._store`), not a fresh dict.
            and "." in (dotted(value.func.value) or "")
        ):
            out.append(value.func.value)
        elif (
            isinstance(value, cst.Attribute)
            and isinstance(value.value, cst.Name)
            and value.value.value in ("self", "cls")
        ):
            out.append(value)  # `ema = self._ema`, then `if ema is None:` tests `self._ema`
        elif not any(isinstance(anc, cst.If) for anc in ctx.ancestors(binding.node)):
            return  # bound otherwise too, not only to the entry the guard creates
    yield from out


class _Chains(walk.Visitor):
    def __init__(self) -> None:
        self.found: list[cst.BaseExpression] = []

    def visit_Attribute(self, attr: cst.Attribute) -> bool:
        if dotted(attr) is not None:
            self.found.append(attr)
        else:
            self.walk(attr.value)  # not the attribute's own name
        return False

    def visit_Name(self, name: cst.Name) -> None:
        self.found.append(name)

    def visit_Arg(self, arg: cst.Arg) -> bool:
        self.walk(arg.value)  # not the keyword's name
        return False


def _dotted_exprs(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Maximal ``a.b.c`` chains and bare names in ``node``."""
    chains = _Chains()
    chains.walk(node)
    return chains.found
