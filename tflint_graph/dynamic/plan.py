"""From static findings to what the child should call (SPEC §4).

For one module, every finding is placed in the traced function that holds it; that function's
traced *root* in the same module (the ``tf.function``, Keras step, ``Dataset.map`` callback...
its chain starts at) is what the child calls, because calling the root traces every helper on
the way.  A root is reachable when it is a module-level function, a method of a module-level
class, or a lambda a module-level name holds (``scale = lambda x: ...``, ``step =
tf.function(lambda x: ...)``); inline lambdas, nested functions and roots that only another
module's code traces are not, and their findings get ``unverified`` with that reason.
Findings at a call of a tf.function (TFG303, TFG403) target the module-level tf.function the
call names, here or in a module of the project this one imports (:mod:`~tflint_graph.dynamic.
homes`: inputs planned from the defining module, the object called through this module's
name for it); TFG402 gets a module-level target with nothing to call.

Inputs, in order of trust: a config example (``"pkg.mod:fn"``), a literal ``input_signature``,
then annotations and guesses (small float32 tensors of a few ranks, tried in turn by the child
until one runs without an error away from the flagged lines).  A parameter with a default is
left to its default.

This module parses the source again with libcst (the static run keeps no trees) and never
imports TensorFlow.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import libcst as cst

from tflint_graph.checks.benchmark_includes_tracing import BenchmarkIncludesTracing
from tflint_graph.checks.large_unrolled_loop import LargeUnrolledLoop
from tflint_graph.checks.python_value_argument import varying_arguments
from tflint_graph.core.config import Config
from tflint_graph.core.examples import Example, PyValue, TensorSpecLite, from_signature_source
from tflint_graph.core.finding import Finding
from tflint_graph.core.vocabulary import OPTIMIZER_NAME
from tflint_graph.dynamic.calls import ModuleCalls
from tflint_graph.dynamic.homes import Home, home_of, imported_homes, view_with
from tflint_graph.dynamic.project import (
    CONFIG_PARAM,
    builder_source,
    constructor_elsewhere,
    default_config,
    model_builders,
    tests_building,
)
from tflint_graph.dynamic.suite import body_line
from tflint_graph.dynamic.verdicts import (
    PROBE_KINDS,
    RAISES,
    UNVERIFIED,
    WATCH_CODES,
    Attempt,
    DatasetSpec,
    DictSpec,
    SourceExpr,
    Spec,
    Target,
    TupleSpec,
    VariablesSpec,
    Verdict,
    Watch,
)
from tflint_graph.model import walk
from tflint_graph.model.calls import keyword
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.scopes import GlobalScope
from tflint_graph.model.values import assigned_value, single_assignments
from tflint_graph.source.modules import package_root
from tflint_graph.traced import find_traced, traced_of
from tflint_graph.traced.callsites import tf_function_calls

# Codes dynamic mode can check, and why the others are left alone.
CHECKED = (
    frozenset(PROBE_KINDS)
    | WATCH_CODES
    | frozenset(RAISES)
    | {
        "TFG109",
        "TFG206",
        "TFG209",
        "TFG301",
        "TFG302",
        "TFG303",
        "TFG304",
        "TFG305",
        "TFG401",
        "TFG402",
        "TFG403",
        "TFG404",
    }
)
# Codes reported at a call of a tf.function in the calling code: the child calls the
# tf.function itself and stages what the call site does (distinct Python values, a first
# call).
CALL_SITE_CODES = frozenset({"TFG303", "TFG403"})
# Codes about what eager code does (creates a tf.function on each call, switches every
# tf.function to eager): the child calls the function that holds the flagged line, as
# Python, and watches.
CALLER_CODES = frozenset({"TFG302", "TFG402"})

# Shapes tried, in turn, for tensor parameters the source does not describe.
GUESSED_SHAPES: tuple[tuple[int, ...], ...] = ((2, 3), (2, 4, 4, 3), (4,), ())
KERAS_STEPS = frozenset({"train_step", "test_step", "predict_step"})
_TENSOR_ANNOTATIONS = frozenset(
    {
        "tensorflow.Tensor",
        "tensorflow.types.experimental.Tensor",
        "tensorflow.types.experimental.TensorLike",
        "tensorflow.Variable",
    }
)
_PY_ANNOTATIONS: Mapping[str, PyValue] = {
    "builtins.int": PyValue(2),
    "builtins.float": PyValue(0.5),
    "builtins.bool": PyValue(True),
    "builtins.str": PyValue("a"),
}


@dataclass
class ModulePlan:
    """The targets of one module, and verdicts already known without running anything."""

    targets: list[Target] = field(default_factory=list)
    verdicts: dict[tuple[int, str], Verdict] = field(default_factory=dict)


def plan_module(
    path: str,
    source: str,
    findings: Sequence[Finding],
    config: Config,
    module_name: str,
    examples: Mapping[str, Example],
) -> ModulePlan:
    plan = ModulePlan()
    wanted = []
    for f in findings:
        key = (f.line, f.code)
        if f.code not in CHECKED:
            plan.verdicts[key] = Verdict(UNVERIFIED, f"no dynamic check for {f.code}")
        else:
            wanted.append(f)
    if not wanted:
        return plan
    try:
        module = cst.parse_module(source)
        ctx = ModuleContext(path, source, module, config)
        ctx.traced = find_traced(ctx)
    except (cst.ParserSyntaxError, RecursionError) as exc:
        for f in wanted:
            plan.verdicts[(f.line, f.code)] = Verdict(UNVERIFIED, f"could not analyse: {exc}")
        return plan
    tree = _ast(source)
    calls = _module_calls(tree)
    homes: list[Home] = []
    if any(f.code in CALL_SITE_CODES | {"TFG208"} for f in wanted):
        # A call of a tf.function another module of the project defines: the analysis needs
        # to know that module's tf.functions to see the call, as the static run did.
        homes = imported_homes(path, tree, module_name, config)
        if homes:
            ctx = ModuleContext(path, source, module, config, view_with(module_name, path, homes))
            ctx.traced = find_traced(ctx)
    lines = source.splitlines()
    local_names: dict[Finding, frozenset[str]] = {}
    defaults: dict[Finding, dict[str, str]] = {}
    by_entry: dict[cst.CSTNode, tuple[_Entry, list[Finding]]] = {}
    extras: dict[Finding, tuple[str, tuple[Any, ...]]] = {}
    switches = [f for f in wanted if f.code == "TFG402"]
    if switches:
        _plan_switches(ctx, switches, module_name, plan)
    at_import = {key for t in plan.targets for key in t.findings}
    for f in wanted:
        if f.code == "TFG402" and (
            (f.line, f.code) in plan.verdicts or (f.line, f.code) in at_import
        ):
            continue  # checked at import, or not reachable at all
        holder = None if f.code in CALL_SITE_CODES | CALLER_CODES else _holder(ctx, f)
        # TFG208 at an eager call: the tf.function it calls, given a second optimizer.
        at_call = f.code in CALL_SITE_CODES or (f.code == "TFG208" and holder is None)
        reached = (
            _call_site_entry(ctx, f, homes)
            if at_call
            else _caller_entry(ctx, f)
            if f.code in CALLER_CODES
            else _entry_for(ctx, holder, f)
        )
        if isinstance(reached, str):
            plan.verdicts[(f.line, f.code)] = Verdict(UNVERIFIED, reached)
            continue
        entry, extra = reached if isinstance(reached, tuple) else (reached, None)
        if f.code == "TFG305":
            extra = _loop_extra(ctx, f)
            if isinstance(extra, str):
                plan.verdicts[(f.line, f.code)] = Verdict(UNVERIFIED, extra)
                continue
        if f.code == "TFG206":
            body, caught = body_line(source, f.line), body_line(source, f.line, handler=True)
            if body is None or caught is None:
                plan.verdicts[(f.line, f.code)] = Verdict(UNVERIFIED, "no except clause there")
                continue
            extra = ("handler", (f.line, body, caught))
        if extra is not None:
            extras[f] = extra
        holder_node = holder.node if holder is not None else entry.node
        local_names[f] = _locals(holder_node)
        defaults[f] = _mutable_defaults(entry.home.ctx if entry.home else ctx, holder_node)
        by_entry.setdefault(entry.node, (entry, []))[1].append(f)
    for entry, found in sorted(by_entry.values(), key=lambda item: _entry_line(ctx, *item)):
        kind, qualname = entry.kind, entry.qualname
        home = entry.home
        if home is not None:
            # Inputs from the defining module's source, its own calls and its example.
            attempts, roles = _attempts(
                home.ctx, entry, f"{home.module}:{qualname}", examples, home.calls
            )
        else:
            attempts, roles = _attempts(ctx, entry, f"{module_name}:{qualname}", examples, calls)
        if _under_training(entry.node, {f.line for f in found}, (home.ctx if home else ctx)):
            # `if training and random.random() < rate:`: the finding runs as `fit` runs it.
            attempts = tuple(
                a
                if a.source in ("config", "input_signature") or "training" in a.kwargs
                else replace(a, kwargs={**a.kwargs, "training": PyValue(True)})
                for a in attempts
            )
        class_name = qualname.partition(".")[0] if "." in qualname and home is None else ""
        ctor_example = examples.get(f"{module_name}:{class_name}") if class_name else None
        ctor: tuple[Spec, ...] = ()
        ctor_kwargs: dict[str, Spec] = {}
        fallback: dict[str, Spec] = {}
        fallback_note = ""
        note = entry.note
        factory = entry.kind == "factory"
        maker = qualname if factory else class_name
        own = calls.constructor(maker) if maker and calls is not None else None
        scope = scope_path = ""
        if own is None and class_name and ctor_example is None and not factory:
            # Constructed by another module of the project (the training script).
            elsewhere = constructor_elsewhere(_root_of(path), module_name, class_name)
            if elsewhere is not None:
                scope, found_in, own = elsewhere
                scope_path = str(found_in)
        guessed_ctor: dict[str, PyValue | SourceExpr] | None = None
        guessed_note = ""
        if ctor_example is not None:
            ctor, ctor_kwargs = tuple(ctor_example.args), dict(ctor_example.kwargs)
        else:
            guessed_ctor = (
                _ctor_guess(ctx, class_name, module_name)
                if class_name
                else _factory_guess(ctx, qualname, module_name)
                if factory
                else None
            )
            if guessed_ctor:
                shown = ", ".join(f"{k}={_shown_guess(v)}" for k, v in guessed_ctor.items())
                guessed_note = _join(
                    note, f"{'made' if factory else 'constructed'} as {maker}({shown}), guessed"
                )
            if own is not None:
                ctor = tuple(SourceExpr(a, scope, scope_path) for a in own.args)
                ctor_kwargs = {k: SourceExpr(v, scope, scope_path) for k, v in own.kwargs}
                # The module's own arguments may need what only its script sets up (parsed
                # command-line options): the guess stays as a fallback.
                if guessed_ctor:
                    fallback = dict(guessed_ctor)
                    fallback_note = guessed_note + ", as the module's own call failed"
                where = f"{scope} does" if scope else "module does"
                note = _join(
                    note,
                    f"{'made' if factory else 'constructed'} as {own.shown(maker)}, as the "
                    f"{where} on line {own.line}",
                )
        flags = (
            _branch_flags(ctx, class_name, entry.node, {f.line for f in found})
            if class_name and ctor_example is None and home is None
            else {}
        )
        if own is not None:
            # Already set where the project builds it: nothing to stage.
            given = dict(own.kwargs)
            flags = {
                n: (i, v)
                for n, (i, v) in flags.items()
                if given.get(n, "None") in ("None", "False")
                and (i >= len(own.args) or own.args[i] in ("None", "False"))
            }
        if flags:
            # The findings sit under `if self.use_positions:` (`if self.log_path:`), off by
            # default: the object is built with it on, as a caller wanting that branch does.
            for name, (index, value) in flags.items():
                if index < len(ctor):
                    ctor = (*ctor[:index], value, *ctor[index + 1 :])
                else:
                    ctor_kwargs[name] = value
                if guessed_ctor is not None:
                    guessed_ctor[name] = value
                if fallback:
                    fallback[name] = value
            staged = ", ".join(f"{name}={value.value!r}" for name, (_, value) in flags.items())
            note = _join(note, f"staged: built with {staged}, which the flagged branch needs")
            guessed_note = _join(guessed_note, f"staged: built with {staged}")
        owner_factory = _owner_factory(ctx, class_name) if class_name and not factory else ""
        # The last resort when neither constructor nor factory builds it: the project's tests.
        owner_tests = (
            tests_building(_root_of(path), module_name, class_name)
            if class_name and not factory and ctor_example is None
            else ()
        )
        if ctor_example is None and own is None and guessed_ctor:
            if owner_factory:
                # The module's own factory first (`build_agent()`), which builds the object
                # as the project does; the guess if it fails.
                fallback = dict(guessed_ctor)
                fallback_note = guessed_note + ", as the module's own factory failed"
            else:
                ctor_kwargs = dict(guessed_ctor)
                note = guessed_note
        watches = tuple(
            w
            for f in found
            if f.code in WATCH_CODES | {"TFG109"}
            if (w := _watch(tree, lines, f, local_names[f], defaults[f])) is not None
        )
        codes = {f.code for f in found}
        retrace = tuple(e[1] for f in found if (e := extras.get(f)) and e[0] == "retrace")
        swaps = tuple(e[1] for f in found if (e := extras.get(f)) and e[0] == "swap")
        if retrace:
            # TFG303's parameter takes a Python value at the flagged call: guess one, not a
            # tensor (`1.0 / (step + 1)` raises on an int32 tensor).
            attempts = [_python_at_staged(a, retrace) for a in attempts]
        compiled = (
            calls.method_call(class_name, "compile")
            if kind == "keras_step" and calls is not None
            else None
        )
        plan.targets.append(
            Target(
                path=entry.path or qualname,
                findings=tuple(sorted({(f.line, f.code) for f in found})),
                attempts=attempts,
                kind=kind,
                module=module_name,
                ctor=ctor,
                ctor_kwargs=ctor_kwargs,
                fallback_ctor_kwargs=fallback,
                fallback_note=fallback_note,
                owner_factory=owner_factory,
                owner_tests=owner_tests,
                project_root=str(_root_of(path).resolve()) if owner_tests else "",
                compile_args=tuple(SourceExpr(a) for a in compiled.args) if compiled else (),
                compile_kwargs={k: SourceExpr(v) for k, v in compiled.kwargs} if compiled else {},
                watches=watches,
                stale=tuple(sorted({w.label for w in watches if w.code == "TFG109"})),
                maybe_skipped=tuple(
                    sorted(
                        {(f.line, f.code) for f in found if f.code in RAISES and _may_skip(ctx, f)}
                    )
                ),
                eager_diff="TFG209" in codes,
                shapes="TFG301" in codes,
                timing="TFG401" in codes,
                autograph=entry.autograph,
                roles=roles,
                inner=entry.inner,
                names=tuple(
                    p.name.value
                    for group in _params(entry.node, method="." in qualname)
                    for p in group
                ),
                note=note,
                base_note=entry.note,
                retrace=retrace,
                swaps=swaps,
                first_call=tuple(f.line for f in found if f.code == "TFG403"),
                loops=tuple(e[1] for f in found if (e := extras.get(f)) and e[0] == "loop"),
                handlers=tuple(e[1] for f in found if (e := extras.get(f)) and e[0] == "handler"),
                ops="TFG404" in codes,
                xla="TFG304" in codes,
            )
        )
    return plan


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _entry_line(ctx: ModuleContext, entry: _Entry, found: list[Finding]) -> int:
    """Targets run in source order: a tf.function of another module where it is called."""
    if entry.home is not None:
        return min(f.line for f in found)
    return ctx.position(entry.node).start.line


@dataclass(frozen=True)
class _Entry:
    """The function the child calls for some findings, and how."""

    node: FunctionNode  # a lambda when a module-level name holds it
    kind: str
    qualname: str
    input_signature: cst.BaseExpression | None = None
    autograph: bool = True
    note: str = ""
    # For a factory (``qualname`` names a module-level function that builds and returns a
    # tf.function): the name of the function it returns, whose parameters the attempts fill.
    inner: str = ""
    # A tf.function another module defines (``home``; ``node`` and ``qualname`` are there),
    # reached by the calling module's own name for it (``path``: ``step``, ``model.step``).
    home: Home | None = None
    path: str = ""


def _entry_for(ctx: ModuleContext, holder: TracedFunction | None, finding: Finding) -> _Entry | str:
    """The traced root that reaches the finding; when that root cannot be called by name
    (a lambda, a nested function) or lies in another module, the nearest function on the way
    that can, called through a ``tf.function`` of its own (a helper's body is traced the same
    way whichever graph calls it)."""
    if holder is None:
        # Only code another module traces (the finding names its chain); a call-site
        # finding in eager code must never be run as if it were traced.
        node = _enclosing_def(ctx, finding) if finding.chain else None
        if node is None:
            why = f" ({finding.context})" if finding.context else ""
            return f"not inside a function dynamic mode can call by name{why}"
        reach = _reach_def(ctx, node, TraceKind.CALLEE)
        if isinstance(reach, str):
            return reach
        shown = f"{reach[1]}()"
        caller = f" ({finding.context})" if finding.context else ""
        return _Entry(
            node, *reach, note=f"via tf.function({shown}): traced from another module{caller}"
        )
    chain = [holder]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    root = chain[-1]
    reach = _reach(ctx, root)
    if not isinstance(reach, str):
        return _Entry(root.node, *reach, root.input_signature, root.autograph)
    factory = _factory_entry(ctx, root)
    if factory is not None:
        return factory
    # The root cannot be called: take the outermost callable function below it.
    for fn in reversed(chain[:-1]):
        if isinstance(fn.node, cst.FunctionDef):
            below = _reach_def(ctx, fn.node, TraceKind.CALLEE)
            if not isinstance(below, str):
                return _Entry(
                    fn.node,
                    *below,
                    fn.input_signature,
                    fn.autograph,
                    note=f"via tf.function({below[1]}()): {reach}",
                )
    return reach


def _no_argument_functions(ctx: ModuleContext) -> list[cst.FunctionDef]:
    """Module-level functions (not tests) callable with no arguments: every parameter has a
    default.  How the module itself builds what a target wants."""
    found = []
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.FunctionDef) or stmt.name.value.startswith("test"):
            continue
        params = stmt.params
        if params.posonly_params or any(
            p.default is None for p in (*params.params, *params.kwonly_params)
        ):
            continue
        found.append(stmt)
    return found


def _owner_factory(ctx: ModuleContext, class_name: str) -> str:
    """A module-level function that every parameter of has a default and that returns an
    instance of ``class_name`` (``return Agent(net, opt, cfg)``, or a name bound to one):
    how the module itself builds an object whose constructor wants built parts."""
    for stmt in _no_argument_functions(ctx):
        for ret in _Nodes(cst.Return).of_node(stmt):
            if ctx.enclosing_function(ret) is stmt and _constructs(ctx, ret.value, class_name):
                return stmt.name.value
    return ""


def _constructs(ctx: ModuleContext, value: cst.BaseExpression | None, class_name: str) -> bool:
    if isinstance(value, cst.Name):
        bound = [
            assigned_value(ctx, a.node, with_items=False)
            for a in ctx.bindings(value)
            if not isinstance(a.node, cst.Param)
        ]
        return len(bound) == 1 and _constructs(ctx, bound[0], class_name)
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == class_name
    )


def _factory_entry(ctx: ModuleContext, root: TracedFunction) -> _Entry | None:
    """A tf.function defined inside a module-level function that returns it (alone or in
    a tuple: ``return train_step, steps_done``), as training-loop factories do: the child
    calls the factory, with the arguments the module's own code passes it, and takes the
    returned function by name."""
    node = root.node
    if not isinstance(node, cst.FunctionDef):
        return None
    outer = ctx.enclosing_function(node)
    if not isinstance(outer, cst.FunctionDef) or not isinstance(ctx.parent(outer), cst.Module):
        return None
    if ctx.enclosing_function(outer) is not None or not any(
        node.name.value in _returned_names(ret) for ret in _Nodes(cst.Return).of_node(outer)
    ):
        return None
    return _Entry(
        node,
        "factory",
        outer.name.value,
        root.input_signature,
        root.autograph,
        note=f"built by {outer.name.value}()",
        inner=node.name.value,
    )


def _returned_names(ret: cst.CSTNode) -> set[str]:
    value = ret.value if isinstance(ret, cst.Return) else None
    items = value.elements if isinstance(value, cst.Tuple | cst.List) else ()
    names = {e.value.value for e in items if isinstance(e.value, cst.Name)}
    if isinstance(value, cst.Name):
        names.add(value.value)
    return names


def _caller_entry(ctx: ModuleContext, finding: Finding) -> _Entry | str:
    """The function of the module holding a TFG302/TFG402 line, called as plain Python:
    twice, to see whether each call makes (and traces) a new tf.function; once, to see
    whether it switches tf.functions to eager."""
    # `@tf.function` on a def nested in the loop: the outer function makes it each time.
    node = _enclosing_def(ctx, finding, nested=True)
    if node is None:
        return "not inside a function: importing the module ran it before dynamic mode could watch"
    reach = _reach_def(ctx, node, TraceKind.CALLEE)
    if isinstance(reach, str):
        return reach
    qualname = reach[1]
    return _Entry(node, "caller", qualname, note=f"called {qualname}() as Python")


def _plan_switches(
    ctx: ModuleContext, findings: Sequence[Finding], module_name: str, plan: ModulePlan
) -> None:
    """TFG402 needs no call: the child re-runs the module's import and reads
    ``tf.config.functions_run_eagerly()`` after it.  Only a statement the import runs can
    show anything: one inside a function, or under ``if __name__ == "__main__":``, cannot."""
    checked = []
    for f in findings:
        node = _node_at(ctx, f, cst.Call)
        if node is None:
            reason = "no call of tf.config.run_functions_eagerly at the finding"
        elif ctx.enclosing_function(node) is not None:
            continue  # the child calls that function (see ``_caller_entry``)
        elif any(
            isinstance(a, cst.If) and "__main__" in ctx.code(a.test) for a in ctx.ancestors(node)
        ):
            reason = 'the call is under `if __name__ == "__main__":`, which dynamic mode never runs'
        else:
            checked.append(f)
            continue
        plan.verdicts[(f.line, f.code)] = Verdict(UNVERIFIED, reason)
    if checked:
        plan.targets.append(
            Target(
                path="",
                findings=tuple(sorted({(f.line, f.code) for f in checked})),
                kind="module",
                module=module_name,
            )
        )


def _may_skip(ctx: ModuleContext, finding: Finding) -> bool:
    """The flagged expression sits where a trace may not evaluate it even when its line
    runs: after an ``and``/``or`` (``if self.rescale and tf.reduce_max(x) > 1.0:`` with
    ``rescale`` off), or in one branch of a conditional expression."""
    node = _node_at(ctx, finding, cst.BaseExpression)
    child = node
    for anc in ctx.ancestors(node) if node is not None else ():
        if isinstance(anc, cst.BooleanOperation) and child is anc.right:
            return True
        if isinstance(anc, cst.IfExp) and child is not anc.test:
            return True
        if isinstance(anc, cst.BaseStatement | cst.BaseSmallStatement):
            break
        child = anc
    return False


def _node_at(ctx: ModuleContext, finding: Finding, kind: type) -> Any:
    """The outermost node of type ``kind`` that starts where the finding does."""
    where = (finding.line, finding.column - 1)
    for node in _Nodes(kind).of(ctx.module):
        span = ctx.position(node)
        if (span.start.line, span.start.column) == where:
            return node
    return None


class _Nodes(walk.Visitor):
    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.found: list[cst.CSTNode] = []

    def of(self, module: cst.Module) -> list[cst.CSTNode]:
        self.walk(module)
        return self.found

    def of_node(self, node: cst.FunctionDef) -> list[cst.CSTNode]:
        """In ``node``'s own body, not in the functions it defines."""
        for stmt in node.body.body:
            if not isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                self.walk(stmt)
        return self.found

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found.append(node)
        return True


def _call_site_entry(
    ctx: ModuleContext, finding: Finding, homes: Sequence[Home] = ()
) -> tuple[_Entry, tuple[str, tuple[Any, ...]] | None] | str:
    """For TFG303/TFG403 (reported at a call in the calling code): the module-level
    tf.function the call names (here, or in a module of the project it imports), and for
    TFG303 what to stage: the parameter that receives the varying Python value, and its kind
    (int, float or str) as the call passes it."""
    where = (finding.line, finding.column - 1)
    site = None
    for call, ref in tf_function_calls(ctx):
        span = ctx.position(call)
        if (span.start.line, span.start.column) == where:
            site = (call, ref)
            break
    if site is None:
        return "not a call of a tf.function of this module"
    call, ref = site
    func = call.func
    shown = ctx.code(func)
    home = None
    if ref.node is None:
        found = home_of(ref, list(homes))
        if found is None:
            return f"{shown} is a tf.function of another module dynamic mode could not read"
        home, ref = found
    node = ref.node
    bound = ctx.bindings(func) if isinstance(func, cst.Name) else ()
    owner_ctx = home.ctx if home is not None else ctx
    cls = owner_ctx.enclosing_class(node) if isinstance(node, cst.FunctionDef) else None
    signature = ref.keyword("input_signature")
    signature = signature if _given_expr(signature) else None
    autograph = ref.keyword("autograph")
    converted = not (isinstance(autograph, cst.Name) and autograph.value == "False")
    params = [*node.params.posonly_params, *node.params.params] if node is not None else []
    if home is not None:
        reach = _imported_reach(ctx, func, ref, home)
        if isinstance(reach, str):
            return reach
        entry = dataclasses.replace(reach, input_signature=signature, autograph=converted)
    elif (
        isinstance(func, cst.Attribute)
        and isinstance(node, cst.FunctionDef)
        and cls is not None
        and isinstance(ctx.parent(cls), cst.Module)
    ):
        # `trainer.step(x, i)` / `self.step(x, i)`: the method, on an instance the child
        # constructs (the bound parameter is not the call's first argument).
        reach = _reach_def(ctx, node, TraceKind.DECORATED)
        if isinstance(reach, str):
            return reach
        entry = _Entry(node, "method", reach[1], signature, converted)
        static = any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in node.decorators
        )
        params = params if static else params[1:]
    elif (
        not isinstance(func, cst.Name)
        or not isinstance(node, cst.FunctionDef | cst.Lambda)
        or len(bound) != 1
        or not isinstance(bound[0].scope, GlobalScope)
    ):
        return f"{shown} is not a tf.function of this module dynamic mode can call by name"
    else:
        entry = _Entry(node, "function", func.value, signature, converted)
    if finding.code == "TFG208":
        return _second_optimizer(ctx, finding, call, params, entry, shown)
    if finding.code == "TFG403":
        sink: list[Finding] = []
        BenchmarkIncludesTracing(ctx, sink).check()
        if not any((g.line, g.column) == (finding.line, finding.column) for g in sink):
            return "the call is not the first call of a tf.function in a timed block"
        return entry, None
    culprits = varying_arguments(ctx, call, ref)
    if not culprits:
        return f"no argument of this call of {shown} is a Python value that varies"
    arg, region = culprits[0]
    if arg.keyword is not None:
        # `step(x, rate=lr)` with `rate` positional: the child passes the inputs it builds
        # positionally, so the staged value goes at the parameter's place.
        param = arg.keyword.value
        names = [p.name.value for p in params]
        index = names.index(param) if param in names else None
    else:
        index = call.args.index(arg)
        if any(a.star or a.keyword is not None for a in call.args[:index]) or index >= len(params):
            return f"the varying argument of {shown} cannot be matched to a parameter"
        param = params[index].name.value
    kind = _value_kind(arg.value)
    swept = region.iter if isinstance(region, cst.For) else None
    if (
        isinstance(arg.value, cst.Name)
        and isinstance(swept, cst.List | cst.Tuple)
        and swept.elements
    ):
        kind = _value_kind(swept.elements[0].value)  # `for lr in [0.1, 0.01]: step(x, lr)`
    if kind is None:
        return f"`{ctx.code(arg.value)}` is a container: dynamic mode stages scalars only"
    return entry, ("retrace", (finding.line, param, index, kind))


# TFG208's message at a call: "step() is called with another optimizer fine_opt (...".
_SECOND_OBJECT = re.compile(
    r"is called with another (optimizer|model) (.+?) \((?:an earlier|every)"
)


def _second_optimizer(
    ctx: ModuleContext,
    finding: Finding,
    call: cst.Call,
    params: list[cst.Param],
    entry: _Entry,
    shown: str,
) -> tuple[_Entry, tuple[str, tuple[Any, ...]]] | str:
    """TFG208 at a call that gives a tf.function another optimizer: the parameter it fills
    and the optimizer class it makes there (``keras.optimizers.Adam``), for the child to
    call a fresh copy with the guessed optimizer and then with a new one of that class."""
    m = _SECOND_OBJECT.search(finding.message)
    if m is None or m.group(1) != "optimizer":
        return "dynamic mode stages a second optimizer, not a second model"
    arg = next((a for a in call.args if ctx.code(a.value) == m.group(2)), None)
    if arg is None or arg.star:
        return f"the new optimizer's argument to {shown} was not found"
    value = arg.value
    if isinstance(value, cst.Name):
        bound = ctx.bindings(value)
        value = (
            assigned_value(ctx, bound[0].node)
            if len(bound) == 1 and isinstance(bound[0].node, cst.Name)
            else None
        )
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name | cst.Attribute):
        return f"the optimizer {m.group(2)} is not made by a call dynamic mode can repeat"
    names = [p.name.value for p in params]
    if arg.keyword is not None:
        param = arg.keyword.value
        index = names.index(param) if param in names else None
    else:
        index = call.args.index(arg)
        if any(a.star or a.keyword is not None for a in call.args[:index]) or index >= len(names):
            return f"the optimizer argument of {shown} cannot be matched to a parameter"
        param = names[index]
    return entry, ("swap", (finding.line, param, index, ctx.code(value.func)))


def _imported_reach(
    ctx: ModuleContext, func: cst.BaseExpression, ref: Any, home: Home
) -> _Entry | str:
    """A module-level tf.function of ``home`` that the calling module names by an import of
    its own at module level (``step`` from ``from pkg.model import step``, ``m.step`` from
    ``from pkg import model as m``)."""
    shown = ctx.code(func)
    qualname = ref.info.qualname
    if "." in qualname or not isinstance(ref.node, cst.FunctionDef | cst.Lambda):
        return (
            f"{shown} is a method of a class of {home.module}: dynamic mode calls only the "
            "module-level tf.functions of another module"
        )
    parts: list[str] = []
    expr: cst.BaseExpression = func
    while isinstance(expr, cst.Attribute):
        parts.insert(0, expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return f"{shown} is not a name dynamic mode can look up in the module"
    bound = ctx.bindings(expr)
    if not bound or not all(isinstance(b.scope, GlobalScope) for b in bound):
        return f"{expr.value} is not bound at module level: dynamic mode cannot look {shown} up"
    path = ".".join([expr.value, *parts])
    return _Entry(
        ref.node,
        "function",
        qualname,
        note=f"{qualname}() is defined in {home.module}, called here as {path}()",
        home=home,
        path=path,
    )


def _given_expr(expr: cst.BaseExpression | None) -> bool:
    return expr is not None and not (isinstance(expr, cst.Name) and expr.value == "None")


# Not among the values the staged experiment passes (1, 2, 3; 0.5, 1.5, 2.5; "a", "b", "c").
_PYTHON_OF_KIND = {"int": PyValue(0), "float": PyValue(0.25), "str": PyValue("z")}


def _python_at_staged(attempt: Attempt, staged: tuple[tuple[Any, ...], ...]) -> Attempt:
    """``attempt`` with a Python value of the staged kind where it guessed a tensor for the
    parameter a TFG303 call passes a Python value (by position, or by keyword)."""
    args = list(attempt.args)
    kwargs = dict(attempt.kwargs)
    for _, param, index, kind in staged:
        value = _PYTHON_OF_KIND.get(kind)
        if value is None:
            continue
        if index is not None and index < len(args) and isinstance(args[index], TensorSpecLite):
            args[index] = value
        elif isinstance(kwargs.get(param), TensorSpecLite):
            kwargs[param] = value
    return dataclasses.replace(attempt, args=tuple(args), kwargs=kwargs)


def _value_kind(expr: cst.BaseExpression) -> str | None:
    """The Python type a varying argument has, from how the call writes it (``i`` from a
    ``range``: int; ``0.1 * i``, ``i / 2``: float; an f-string: str); None for a container."""
    if isinstance(expr, cst.List | cst.Tuple | cst.Set | cst.Dict):
        return None
    if isinstance(expr, cst.FormattedString | cst.SimpleString | cst.ConcatenatedString):
        return "str"
    if isinstance(expr, cst.Float):
        return "float"
    if isinstance(expr, cst.UnaryOperation):
        return _value_kind(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return "float"
        kinds = {_value_kind(expr.left), _value_kind(expr.right)}
        return "str" if "str" in kinds else "float" if "float" in kinds else "int"
    named = isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)
    if named and expr.func.value in ("float", "str"):  # type: ignore[attr-defined]
        return str(expr.func.value)  # type: ignore[attr-defined]
    return "int"


def _loop_extra(ctx: ModuleContext, finding: Finding) -> tuple[str, tuple[Any, ...]] | str:
    """TFG305: the loop's lines, how many times it runs, and the module global that sets
    that count (dynamic mode traces once more with a smaller one), if any."""
    node = _node_at(ctx, finding, cst.For)
    if not isinstance(node, cst.For):
        return "no for loop at the finding"
    count = LargeUnrolledLoop(ctx, [])._count(node.iter)
    if count is None:
        return "the number of iterations is not known"
    span = ctx.position(node)
    name = ""
    if isinstance(node.iter, cst.Call):
        names = [a.value.value for a in node.iter.args if isinstance(a.value, cst.Name)]
        if len(names) == 1 and len(node.iter.args) == 1:
            name = names[0]
    return "loop", (finding.line, span.end.line, count, name)


def _enclosing_def(
    ctx: ModuleContext, finding: Finding, *, nested: bool = False
) -> cst.FunctionDef | None:
    """The module-level function or method of a module-level class whose body holds the
    finding directly (not inside a nested function or lambda, unless ``nested``)."""
    where = (finding.line, finding.column - 1)

    def holds(node: cst.CSTNode) -> bool:
        span = ctx.position(node)
        return (span.start.line, span.start.column) <= where <= (span.end.line, span.end.column)

    candidates: list[cst.FunctionDef] = []
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.FunctionDef):
            candidates.append(stmt)
        elif isinstance(stmt, cst.ClassDef):
            candidates += [m for m in stmt.body.body if isinstance(m, cst.FunctionDef)]
    for fn in candidates:
        if holds(fn):
            inner = _InnerFunctions()
            inner.walk(fn.body)
            if not nested and any(holds(n) for n in inner.found):
                return None
            return fn
    return None


class _InnerFunctions(walk.Visitor):
    def __init__(self) -> None:
        self.found: list[cst.CSTNode] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.found.append(node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.found.append(node)
        return False


# Constructor parameters dynamic mode fills in when a class example gives none.
_INT_PARAM = re.compile(
    r"^(units|filters|size|dim|depth|width|height|classes|heads|layers|channels|features|"
    r"capacity|steps|length|k|vocab_size|hidden|hidden_\w+|num_\w+|n_\w+|\w+_dim|\w+_size|"
    r"\w+_units|\w+_classes|\w+_layers)$"
)
_FLOAT_PARAM = re.compile(
    r"^(rate|dropout|alpha|beta|gamma|lr|learning_rate|scale|temperature|eps|epsilon|momentum|"
    r"threshold|margin|decay|\w+_rate|\w+_scale)$"
)


# A distribution strategy parameter: the default strategy every TensorFlow program has.
_STRATEGY_PARAM = re.compile(r"^(strategy|\w+_strategy)$")
_DEFAULT_STRATEGY = SourceExpr("__import__('tensorflow').distribute.get_strategy()")


def _ctor_guess(
    ctx: ModuleContext, class_name: str, module_name: str = ""
) -> dict[str, PyValue | SourceExpr] | None:
    """Keyword arguments for ``Class(...)`` from the names, annotations and uses of its
    ``__init__``'s required parameters (``units`` → 4, ``dropout`` → 0.1, ``model`` → one the
    project's builder makes); None when there is nothing to guess or some parameter cannot
    be guessed."""
    cls = next(
        (s for s in ctx.module.body if isinstance(s, cst.ClassDef) and s.name.value == class_name),
        None,
    )
    init = None
    if cls is not None:
        init = next(
            (
                m
                for m in cls.body.body
                if isinstance(m, cst.FunctionDef) and m.name.value == "__init__"
            ),
            None,
        )
    if init is None or cls is None:
        return None
    return _params_guess(ctx, init, cls, module_name, method=True)


def _factory_guess(
    ctx: ModuleContext, qualname: str, module_name: str
) -> dict[str, PyValue | SourceExpr] | None:
    """Keyword arguments for a factory ``make_step(model, optimizer)`` nothing calls, guessed
    as a constructor's are."""
    fn = next(
        (s for s in ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == qualname),
        None,
    )
    return None if fn is None else _params_guess(ctx, fn, fn, module_name, method=False)


def _params_guess(
    ctx: ModuleContext,
    fn: cst.FunctionDef,
    body: cst.CSTNode,
    module_name: str,
    *,
    method: bool,
) -> dict[str, PyValue | SourceExpr] | None:
    required, keyword_only = _params(fn, method=method)
    sizes = _sizes(body, [p.name.value for p in [*required, *keyword_only]])
    guesses: dict[str, PyValue | SourceExpr] = {}
    for param in [*required, *keyword_only]:
        described = _annotation(ctx, param)
        name = param.name.value
        value: PyValue | SourceExpr
        if isinstance(described, PyValue):
            value = described
        elif _STRATEGY_PARAM.match(name):
            value = _DEFAULT_STRATEGY
        elif _INT_PARAM.match(name) or name in sizes:
            value = PyValue(4)
        elif _FLOAT_PARAM.match(name):
            value = PyValue(0.1)
        elif OPTIMIZER_NAME.match(name):
            value = _DEFAULT_OPTIMIZER
        elif _MODEL_NAME.search(name) and (model := _any_model(ctx, module_name, name)):
            value = SourceExpr(model)
        elif _CENTRE_PARAM.match(name):
            value = PyValue(0.0)
        elif _SPREAD_PARAM.match(name):
            value = PyValue(1.0)
        elif CONFIG_PARAM.match(name) and (config := default_config(_root_of(ctx.path))):
            value = SourceExpr(config)
        else:
            return None
        guesses[name] = value
    return guesses or None


def _shown_guess(value: PyValue | SourceExpr) -> str:
    if isinstance(value, PyValue):
        return repr(value.value)
    if value is _DEFAULT_STRATEGY:
        return "<default strategy>"
    if value is _DEFAULT_OPTIMIZER:
        return "<Adam>"
    # `__import__('importlib').import_module('pkg.models').build()` reads as `pkg.models.build()`,
    # wherever it sits (a builder given the project's settings).
    return re.sub(r"__import__\('importlib'\)\.import_module\('([\w.]+)'\)\.", r"\1.", value.text)


# An optimizer parameter (`OPTIMIZER_NAME`): a plain Adam, as most training code makes.
_DEFAULT_OPTIMIZER = SourceExpr("__import__('keras').optimizers.Adam(0.001)")
# Calls whose first argument (or `units=`/`filters=`) is a size: a parameter passed there
# (directly, or through the attribute the constructor stores it in) is a small int.
_SIZE_CALLS = frozenset(
    {
        "Dense",
        "Conv1D",
        "Conv2D",
        "Conv3D",
        "Conv1DTranspose",
        "Conv2DTranspose",
        "LSTM",
        "GRU",
        "SimpleRNN",
        "LSTMCell",
        "GRUCell",
        "SimpleRNNCell",
        "Embedding",
        "range",
    }
)
_SIZE_KEYWORDS = frozenset({"units", "filters", "output_dim"})


def _sizes(body: cst.CSTNode, names: list[str]) -> set[str]:
    """The ``names`` (parameters) that ``body`` passes as a size: ``Dense(units)``,
    ``range(self.horizon)`` after ``self.horizon = horizon``."""
    stored: dict[str, str] = {}  # attribute -> parameter
    for node in walk.descendants(body):
        if (
            isinstance(node, cst.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Attribute)
            and isinstance(node.targets[0].target.value, cst.Name)
            and node.targets[0].target.value.value == "self"
            and isinstance(node.value, cst.Name)
            and node.value.value in names
        ):
            stored[node.targets[0].target.attr.value] = node.value.value
    found: set[str] = set()
    for node in walk.descendants(body):
        if type(node) is not cst.Call:
            continue
        func = node.func
        callee = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        given = [
            a.value
            for i, a in enumerate(node.args)
            if (a.keyword is None and i == 0 and a.star == "" and callee in _SIZE_CALLS)
            or (a.keyword is not None and a.keyword.value in _SIZE_KEYWORDS)
        ]
        for value in given:
            if isinstance(value, cst.Name) and value.value in names:
                found.add(value.value)
            elif (
                isinstance(value, cst.Attribute)
                and isinstance(value.value, cst.Name)
                and value.value.value == "self"
                and value.attr.value in stored
            ):
                found.add(stored[value.attr.value])
    return found


def _any_model(ctx: ModuleContext, module_name: str, param: str) -> str:
    """Source that builds a model for ``param``: the module's own builder, else the
    project's (see :func:`~tflint_graph.dynamic.project.model_builders`), the module's own
    model classes first; "" for none."""
    builder = _model_builder(ctx, param)
    if builder:
        return f"{builder}()"
    found = model_builders(_root_of(ctx.path), param=param)
    # The module's own model (a class that needs no argument) before the project's others.
    found.sort(key=lambda mf: mf[0] != module_name)
    return builder_source(*found[0]) if found else ""


# Parameters that hold a statistic a constructor normalises with (`mean`, `std`): a neutral
# Python value, which broadcasts against any batch.
_CENTRE_PARAM = re.compile(r"^(mean|mu|loc|offset|shift|\w+_mean)$")
_SPREAD_PARAM = re.compile(r"^(std|stddev|sigma|var|variance|\w+_std)$")


def _root_of(path: str) -> Path:
    """The ``sys.path`` folder the child imports the module from: its project's modules."""
    return package_root(Path(path))[0]


def _module_calls(tree: ast.Module | None) -> ModuleCalls | None:
    """The module's own calls, or None for a tree too deep to index (the guesses remain)."""
    if tree is None:
        return None
    try:
        return ModuleCalls(tree)
    except RecursionError:
        return None


def _ast(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _holder(ctx: ModuleContext, finding: Finding) -> TracedFunction | None:
    """The innermost traced function whose source span holds the finding."""
    best: TracedFunction | None = None
    best_size = None
    where = (finding.line, finding.column - 1)
    for node, info in ctx.traced.items():
        span = ctx.position(node)
        start = (span.start.line, span.start.column)
        end = (span.end.line, span.end.column)
        if start <= where <= end:
            size = (end[0] - start[0], end[1] - start[1])
            if best_size is None or size < best_size:
                best, best_size = info, size
    return best


def _reach(ctx: ModuleContext, root: TracedFunction) -> tuple[str, str] | str:
    """(target kind, qualname) of a root the child can get hold of, or why not."""
    node = root.node
    if isinstance(node, cst.Lambda):
        named = _lambda_name(ctx, node, root.kind)
        if named is None:
            return f"{root.display} is a lambda: dynamic mode can only call named functions"
        return named
    return _reach_def(ctx, node, root.kind)


def _lambda_name(ctx: ModuleContext, node: cst.Lambda, kind: TraceKind) -> tuple[str, str] | None:
    """A lambda the child can get by a module-level name: ``scale = lambda x: ...`` (traced
    through ``tf.function(scale)`` or ``ds.map(scale)``), or ``step =
    tf.function(lambda x: ...)`` (the tf.function itself)."""
    parent = ctx.parent(node)
    wrapped = isinstance(parent, cst.Arg)
    if wrapped:
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call) or len(call.args) < 1 or call.args[0] is not parent:
            return None
        parent = ctx.parent(call)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return None
    target = parent.targets[0].target
    line = ctx.parent(parent)
    if not isinstance(target, cst.Name) or not isinstance(ctx.parent(line), cst.Module):
        return None
    if wrapped:
        return ("function", target.value) if kind is TraceKind.WRAPPED else None
    return ("map" if kind is TraceKind.DATASET else "wrap"), target.value


def _reach_def(ctx: ModuleContext, node: cst.FunctionDef, kind: TraceKind) -> tuple[str, str] | str:
    if ctx.enclosing_function(node) is not None:
        return f"{node.name.value}() is a nested function: dynamic mode cannot reach it by name"
    name = node.name.value
    cls = ctx.enclosing_class(node)
    if cls is None:
        if not isinstance(ctx.parent(node), cst.Module):
            return f"{name}() is not defined at module level"
        if kind is TraceKind.DECORATED:
            return "function", name
        if kind is TraceKind.DATASET:
            return "map", name
        return "wrap", name
    if not isinstance(ctx.parent(cls), cst.Module):
        return f"{name}() belongs to a class that is not defined at module level"
    qualname = f"{cls.name.value}.{name}"
    if kind is TraceKind.KERAS and name in KERAS_STEPS:
        return "keras_step", qualname
    if kind is TraceKind.KERAS and name == "call":
        return "keras_call", qualname
    return "method", qualname


def _params(node: FunctionNode, method: bool) -> tuple[list[cst.Param], list[cst.Param]]:
    """Required positional and required keyword-only parameters (``self``/``cls`` dropped,
    except for a ``staticmethod``)."""
    positional = [*node.params.posonly_params, *node.params.params]
    static = any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in getattr(node, "decorators", ())  # a lambda has none
    )
    if method and positional and not static:
        positional = positional[1:]
    required = [p for p in positional if p.default is None]
    keyword_only = [p for p in node.params.kwonly_params if p.default is None]
    # `mask=None` with `if mask is None: return ...` first: the code after it (where the
    # findings usually are) runs only when the caller passes one.
    skipped = _returns_when_none(node)
    keyword_only += [
        p
        for p in [*positional, *node.params.kwonly_params]
        if p.default is not None and p.name.value in skipped
    ]
    return required, keyword_only


def _returns_when_none(node: FunctionNode) -> set[str]:
    """Parameters the body tests first thing with ``if p is None: return ...``."""
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return set()
    found = set()
    for stmt in node.body.body:
        if not isinstance(stmt, cst.If):
            continue
        test = stmt.test
        if (
            isinstance(test, cst.Comparison)
            and isinstance(test.left, cst.Name)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Is)
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None"
            and stmt.orelse is None
            and isinstance(stmt.body, cst.IndentedBlock)
            and any(
                isinstance(s, cst.SimpleStatementLine)
                and any(isinstance(x, cst.Return) for x in s.body)
                for s in stmt.body.body
            )
        ):
            found.add(test.left.value)
    return found


def _annotation(ctx: ModuleContext, param: cst.Param) -> Spec | str | None:
    """A spec from ``param``'s annotation, ``"tensor"`` for a tensor of unknown shape, or
    None when the annotation says nothing usable."""
    if param.annotation is None:
        return None
    expr = param.annotation.annotation
    names = ctx.resolve(expr).imported if not isinstance(expr, cst.SimpleString) else frozenset()
    if isinstance(expr, cst.SimpleString) and "Tensor" in expr.value:
        return "tensor"
    if names & _TENSOR_ANNOTATIONS:
        return "tensor"
    for name in names:
        if name in _PY_ANNOTATIONS:
            return _PY_ANNOTATIONS[name]
    return None


def _dataset_annotation(ctx: ModuleContext, param: cst.Param) -> bool:
    """``param`` is annotated as a ``tf.data.Dataset``."""
    if param.annotation is None or isinstance(param.annotation.annotation, cst.SimpleString):
        return False
    return ctx.resolve(param.annotation.annotation).is_("tensorflow.data.Dataset")


def _attempts(
    ctx: ModuleContext,
    entry: _Entry,
    key: str,
    examples: Mapping[str, Example],
    calls: ModuleCalls | None = None,
) -> tuple[tuple[Attempt, ...], tuple[str, ...]]:
    """The ways to call the root, and the roles of its guessed positional parameters."""
    example = examples.get(key)
    if example is not None:
        args: tuple[Spec, ...] = tuple(example.args)
        if entry.kind == "keras_step" and len(args) > 1:
            args = (TupleSpec(tuple(example.args)),)
        return (Attempt("config", args, dict(example.kwargs)),), ()
    kind = entry.kind
    if entry.input_signature is not None:
        specs = from_signature_source(ctx.code(entry.input_signature))
        if specs is not None:
            return (Attempt("input_signature", tuple(specs)),), ()
    node = entry.node
    if kind == "keras_step":
        return _step_attempts(ctx, node), ()
    required, keyword_only = _params(node, method="." in entry.qualname)
    described = [_annotation(ctx, p) for p in [*required, *keyword_only]]
    source = "annotations" if any(d is not None for d in described) else "guessed"
    names = [p.name.value for p in [*required, *keyword_only]]
    method = "." in entry.qualname
    passed: dict[str, str] = {}
    if calls is not None and kind != "map" and any(d is None for d in described):
        # A Python value the module's own calls pass (`augment(image, 0.5)`) is no tensor.
        # The name the module calls it by (a lambda bound to a name has no name of its own).
        called = entry.inner or entry.qualname.rpartition(".")[2]
        literals = calls.literals(called, names, method=method)
        described = [
            PyValue(literals[n]) if d is None and _plain(literals.get(n, _NO_VALUE)) else d
            for d, n in zip(described, names, strict=True)
        ]
        # Objects and values the module's own calls build (`optimizer_step(model, ...)`
        # with `model = build_model()`): tried first, then the guesses without them.
        passed = {
            n: text
            for n, text in calls.arguments(called, names, method=method).items()
            if described[names.index(n)] is None
        }
    # `features, labels = inputs`: a parameter the body unpacks is a tuple of that many parts;
    # one it subscripts with strings (`features["age"]`) a dict with those keys.
    use = _DataUse(names).of(node)
    unpacked = {n: parts for n, parts in _unpacked(node).items() if n in names}
    for name, (callee, param) in _handed_on(ctx, node, names).items():
        # `strategy.run(self._step_fn, args=(batch,))`: the callee shows what it holds.
        if name not in unpacked and not use.keys.get(name):
            inner = _DataUse([param]).of(callee)
            parts = _unpacked(callee).get(param)
            if inner.keys.get(param):
                use.keys[name] = inner.keys[param]
            elif parts:
                unpacked[name] = parts
    zipped = _zipped(node, names)
    iterated = _iterated(node, names)
    assigned = _assigned_through(node, names)
    files = _file_paths(ctx, node, names)
    variables = _assigned_directly(node, names)
    # How the body uses a parameter says its dtype better than its name (see `_uses`).
    # A name that already says what it holds (labels, token ids, steps) keeps its guess.
    used_as = {n: u for n, u in _uses(node, names).items() if u == "target" or _role(n) == "tensor"}
    # A model nothing passes (no call of the function in the module): one the module's own
    # builder makes (`build_model()`), as its training script would.
    built: dict[str, str] = {}
    for i, name in enumerate(names):
        if described[i] is None and name not in passed and _MODEL_NAME.search(name):
            model = _any_model(ctx, key.partition(":")[0], name)
            if model:
                built[name] = model
    # The project's settings nothing passes (`train(stream, cfg)`): their defaults.
    config = default_config(_root_of(ctx.path)) if any(map(CONFIG_PARAM.match, names)) else ""
    configs = {
        name
        for i, name in enumerate(names)
        if config and described[i] is None and name not in passed and CONFIG_PARAM.match(name)
    }
    # An optimizer nothing passes: a plain Adam, as most training code makes.
    optimizers = {
        name for i, name in enumerate(names) if described[i] is None and OPTIMIZER_NAME.match(name)
    }
    # A callback mapped over batches (`ds.batch(32).map(mix)`) takes a batch, not one element.
    per_element = kind == "map" and not _maps_batches(ctx, entry.qualname)
    attempts = []
    for with_calls in (True, False) if passed else (False,):
        for shape in GUESSED_SHAPES:
            specs: list[Spec] = [
                d
                if isinstance(d, (PyValue, TensorSpecLite, TupleSpec))
                else SourceExpr(passed[name])
                if with_calls and name in passed
                else SourceExpr(built[name])
                if name in built
                else SourceExpr(config)
                if name in configs
                else _DEFAULT_OPTIMIZER
                if name in optimizers
                else _SAMPLE_FILE
                if name in files
                else VariablesSpec((TensorSpecLite("float32", shape),), one=True)
                if name in variables
                else _used_guess(used_as[name], shape)
                if name in used_as
                else _unpacked_guess(unpacked[name], shape, per_element)
                if name in unpacked
                else _keyed_guess(use.keys[name], shape, per_element)
                if use.keys.get(name)
                else _variables_guess(shape)
                if name in assigned
                else _guess(name, shape, per_element=per_element, as_list=name in zipped)
                for d, name in zip(described, names, strict=True)
            ]
            positional = tuple(specs[: len(required)])
            keywords = {
                p.name.value: s for p, s in zip(keyword_only, specs[len(required) :], strict=True)
            }
            how = "the module's own calls" if with_calls else source
            attempts.append(Attempt(how, positional, keywords))
            if all(isinstance(s, (PyValue, SourceExpr)) for s in specs) or with_calls:
                break  # nothing shaped to vary, or one try of the module's own values
    looped = [i for i, n in enumerate(names) if n in iterated and n not in zipped]
    params = [*required, *keyword_only]
    if looped and all(_dataset_annotation(ctx, params[i]) for i in looped):
        # Annotated `tf.data.Dataset`: datasets of batches first, then the other guesses.
        firsts = [_with_datasets(ctx, a, node, iterated, names, looped) for a in attempts[:2]]
        attempts[:0] = firsts
    elif looped:
        # A parameter the body loops over as batches may be a tensor (its rows) or a dataset
        # of batches: after each of the first two guesses, the same with datasets there.
        for at in (1, 0) if len(attempts) > 1 else (0,):
            attempts.insert(
                at + 1, _with_datasets(ctx, attempts[at], node, iterated, names, looped)
            )
    attempts = _unique(attempts)  # the same guess twice (a keyed dict per shape) runs once
    single = _expanded(node, names)
    roles = tuple(
        "fixed"
        if d is not None
        or name in optimizers
        or name in configs
        or used_as.get(name) in ("count", "ids", "size")
        else "model"
        if name in built or (name in passed and _MODEL_NAME.search(name))
        else "target"
        if used_as.get(name) == "target"
        else "example"
        if name in single and _role(name) in ("tensor", "image", "audio")
        else _role(name)
        for d, name in zip(described[: len(required)], names, strict=False)
    )
    return tuple(attempts), roles


# Calls whose argument at that position (or keyword) holds integer indices.
_INDEX_ARGS: Mapping[str, tuple[int, str]] = {
    "gather": (1, "indices"),
    "gather_nd": (1, "indices"),
    "embedding_lookup": (1, "ids"),
    "one_hot": (0, "indices"),
    "bincount": (0, "arr"),
}
# Calls whose argument at that position (or keyword) is a count: an int scalar.
_COUNT_ARGS: Mapping[str, tuple[int, str]] = {
    "range": (0, "limit"),
    "one_hot": (1, "depth"),
    "top_k": (1, "k"),
}


# Calls whose argument at that position (or keyword) is a static shape: the sizes listed in
# it must be Python ints while tracing (a tensor there raises TypeError).
_STATIC_SHAPE_ARGS: Mapping[str, tuple[int, str]] = {
    "TensorArray": (4, "element_shape"),
    "ensure_shape": (1, "shape"),
    "set_shape": (0, "shape"),
    "TensorSpec": (0, "shape"),
}


def _sizes_in(expr: cst.BaseExpression | None) -> Iterator[cst.BaseExpression]:
    """The operands of ``expr`` through arithmetic (``i * hop + size``): each a number in
    the same place."""
    if isinstance(expr, cst.BinaryOperation):
        yield from _sizes_in(expr.left)
        yield from _sizes_in(expr.right)
    elif isinstance(expr, cst.UnaryOperation):
        yield from _sizes_in(expr.expression)
    elif expr is not None:
        yield expr


def _uses(node: FunctionNode, names: list[str]) -> dict[str, str]:
    """Parameters whose use in the body says what they hold, whatever their names:
    ``"count"`` (a slice bound ``x[:, :n]``, also in arithmetic ``x[i * hop : i * hop +
    size]``, ``range(n)``, ``tf.one_hot(_, n)``: an int scalar), ``"size"`` (listed in a
    static shape, ``element_shape=[size]``: a Python int), ``"ids"`` (``tf.gather(_, idx)``,
    ``tf.one_hot(idx, _)``, an embedding lookup: int indices), ``"target"`` (a label-named
    parameter subtracted from or by another parameter, ``y_true - y_pred``: a float tensor
    like the prediction, as in regression)."""
    wanted = set(names)
    found: dict[str, str] = {}

    def mark(expr: cst.BaseExpression | None, use: str) -> None:
        if isinstance(expr, cst.Name) and expr.value in wanted:
            if use == "size" and found.get(expr.value) == "count":
                found[expr.value] = use  # a Python int serves as a count too
            found.setdefault(expr.value, use)

    for sub in walk.descendants(node):
        if isinstance(sub, cst.Slice):
            for bound in (sub.lower, sub.upper):
                for operand in _sizes_in(bound):
                    mark(operand, "count")
        elif isinstance(sub, cst.Call):
            func = sub.func
            callee = (
                func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            )
            if callee in _STATIC_SHAPE_ARGS:
                shape = _argument(sub, *_STATIC_SHAPE_ARGS[callee])
                if isinstance(shape, (cst.List, cst.Tuple)):
                    for element in shape.elements:
                        mark(element.value, "size")
            for table, use in ((_COUNT_ARGS, "count"), (_INDEX_ARGS, "ids")):
                if callee in table:
                    index, word = table[callee]
                    mark(_argument(sub, index, word), use)
            if callee in ("subtract", "squared_difference") and len(sub.args) >= 2:
                _mark_target(found, sub.args[0].value, sub.args[1].value, wanted)
        elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Subtract):
            _mark_target(found, sub.left, sub.right, wanted)
    return found


def _mark_target(
    found: dict[str, str], left: cst.BaseExpression, right: cst.BaseExpression, wanted: set[str]
) -> None:
    """``y_true - y_pred``, ``model(x) - y``, ``pred[:, h] - y[:, h]``: a label-named
    parameter on one side, a computed value (no number) on the other."""
    sides = [_operand(left, wanted), _operand(right, wanted)]
    for (name, _), (_, other) in ((sides[0], sides[1]), (sides[1], sides[0])):
        if name and other and _role(name) == "label":
            found.setdefault(name, "target")


def _operand(expr: cst.BaseExpression, wanted: set[str]) -> tuple[str, bool]:
    """(the parameter ``expr`` is, or indexes; whether ``expr`` is a computed value)."""
    base = expr.value if isinstance(expr, cst.Subscript) else expr
    if isinstance(expr, cst.Subscript) and any(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
        for e in expr.slice
    ):
        base = None  # `targets["count"] - out["count"]`: an item of a dict, not the dict
    name = base.value if isinstance(base, cst.Name) and base.value in wanted else ""
    computed = isinstance(expr, (cst.Name, cst.Call, cst.Subscript, cst.Attribute))
    return name, computed


def _argument(call: cst.Call, index: int, word: str) -> cst.BaseExpression | None:
    given = keyword(call, word)
    if given is not None:
        return given
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def _used_guess(use: str, shape: tuple[int, ...]) -> Spec:
    if use == "size":
        return PyValue(2)
    if use == "count":
        return TensorSpecLite("int32", (), values=(2, 4))
    if use == "ids":
        # One small id per example: in range for any table.
        return TensorSpecLite("int32", shape[:1], values=(0, 2))
    return TensorSpecLite("float32", shape)


_BATCHERS = frozenset({"batch", "padded_batch", "ragged_batch", "bucket_by_sequence_length"})


# Parameters that usually hold a Keras model (a network the function calls).
_MODEL_NAME = re.compile(
    r"^(model|net|network|\w+_model|\w+_net|generator|discriminator|encoder|decoder|critic|"
    r"actor|classifier|backbone|student|teacher)$"
)
_KERAS_MODELS = ("keras.Model", "keras.Sequential")


def _model_builder(ctx: ModuleContext, param: str) -> str:
    """A module-level function, every parameter of which has a default, that returns a Keras
    model (``keras.Sequential([...])``, ``keras.Model(inputs, outputs)``, an instance of a
    model class of the module, or a name bound once to one): the one named after ``param``
    (``build_generator`` for ``generator``) first, else the first in the module."""
    found = []
    for stmt in _no_argument_functions(ctx):
        if any(
            ctx.enclosing_function(ret) is stmt and _builds_model(ctx, ret.value)
            for ret in _Nodes(cst.Return).of_node(stmt)
            if isinstance(ret, cst.Return)
        ):
            found.append(stmt.name.value)
    named = [f for f in found if param in f]
    return (named or found or [""])[0]


def _builds_model(ctx: ModuleContext, value: cst.BaseExpression | None, depth: int = 0) -> bool:
    if isinstance(value, cst.Name) and depth < 3:
        bound = [
            assigned_value(ctx, a.node, with_items=False)
            for a in ctx.bindings(value)
            if not isinstance(a.node, cst.Param)
        ]
        return len(bound) == 1 and _builds_model(ctx, bound[0], depth + 1)
    if not isinstance(value, cst.Call):
        return False
    if ctx.resolve(value.func).is_(*_KERAS_MODELS):
        return True
    # `Classifier(...)`, a class of the module derived from a Keras model.
    cls = next(
        (
            s
            for s in ctx.module.body
            if isinstance(s, cst.ClassDef)
            and isinstance(value.func, cst.Name)
            and s.name.value == value.func.value
        ),
        None,
    )
    return cls is not None and any(ctx.resolve(b.value).is_(*_KERAS_MODELS) for b in cls.bases)


def _maps_batches(ctx: ModuleContext, name: str) -> bool:
    """Every ``.map(name)`` of the module maps a dataset already batched: the chain it is
    called on, or the value its dataset name was last given before it in the same function
    (``ds = ds.batch(32)`` ... ``ds = ds.map(name)``), passes a ``.batch()``."""
    sites = [
        call
        for call in _Nodes(cst.Call).of(ctx.module)
        if isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "map"
        and call.args
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == name
    ]
    return bool(sites) and all(
        isinstance(c.func, cst.Attribute) and _batched_chain(ctx, c.func.value, c, 0) for c in sites
    )


def _batched_chain(
    ctx: ModuleContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int
) -> bool:
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in _BATCHERS:
            return True
        if expr.func.attr.value in ("unbatch", "rebatch"):
            return False
        expr = expr.func.value
    if not isinstance(expr, cst.Name) or depth > 4:
        return False
    # The last plain assignment of the name before ``at``, in the same function.
    scope = ctx.enclosing_function(at)
    before = ctx.line(at)
    last: tuple[int, cst.Assign] | None = None
    finder = _Nodes(cst.Assign)
    assigns = (
        finder.of(ctx.module) if not isinstance(scope, cst.FunctionDef) else finder.of_node(scope)
    )
    for assign in assigns:
        if (
            isinstance(assign, cst.Assign)
            and ctx.enclosing_function(assign) is scope
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and assign.targets[0].target.value == expr.value
            and ctx.line(assign) < before
            and (last is None or ctx.line(assign) > last[0])
        ):
            last = (ctx.line(assign), assign)
    if last is None:
        return False
    # Inside an `if` (`if use_cutout: ds = ds.map(...)`) the assignment may not have run;
    # its own chain still holds what came before it.
    return _batched_chain(ctx, last[1].value, last[1], depth + 1)


def _expanded(node: FunctionNode, names: list[str]) -> set[str]:
    """Parameters the body gives a batch axis of its own (``tf.expand_dims(obs, 0)``, an
    agent acting on one observation): one example, not a batch, when shaped for a model."""
    found: set[str] = set()
    for call in walk.descendants(node):
        if type(call) is not cst.Call or not call.args:
            continue
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        first = call.args[0].value
        if name == "expand_dims" and isinstance(first, cst.Name) and first.value in names:
            axis = keyword(call, "axis") or (call.args[1].value if len(call.args) > 1 else None)
            if isinstance(axis, cst.Integer) and axis.value == "0":
                found.add(first.value)
    return found


_NO_VALUE = object()


def _plain(value: object) -> bool:
    """A value a call passes that stays a Python value (a list may be a batch of data)."""
    return isinstance(value, (bool, int, float, str)) and not isinstance(value, bytes)


# Parameter names that usually hold class labels, and ones that usually hold strings.
_LABEL_NAME = re.compile(r"(^|_)(labels?|targets?|y|y_true|classes|class_ids?)$")
# What a model outputs: shaped like its output, not its input.
_PREDICTION_NAME = re.compile(r"(^|_)(y_pred|y_hat|preds?|predictions?|logits|forecasts?)$")
_MASK_NAME = re.compile(r"(^|_)(masks?|padding_mask|attention_mask|valid)$")
# Names that usually hold a list of tensors (what tf.clip_by_global_norm takes).
_LIST_NAME = re.compile(r"(^|_)(grads|gradients|tensors|t_list|weights_list)$")
# Names of one number per example (a replay batch: rewards, done flags; discrete actions).
_PER_EXAMPLE_NAME = re.compile(
    r"(^|_)(rewards?|dones?|terminals?|terminated|truncated|discounts?|returns?|advantages?|"
    r"log_probs?|old_log_probs?)$"
)
_ACTION_NAME = re.compile(r"(^|_)(actions?|action_ids?)$")
# Rates and coefficients: a Python number (an optimizer takes no tensor learning rate).
_RATE_NAME = re.compile(
    r"^(lr|learning_rate|\w+_rate|rate|temperature|momentum|decay|\w+_decay|epsilon|eps)$"
)
# Counters and counts a function takes as a number (an epoch, a step, a length limit).
_COUNT_NAME = re.compile(
    r"^(epochs?|steps?|step_num|iterations?|iters?|global_step|batch_idx|timestep|"
    r"num_\w+|max_\w+|n_\w+|\w+_steps|count|limit|max_len)$"
)
# Integer ids an embedding looks up (token ids, item ids, start tokens).
_IDS_NAME = re.compile(
    r"(^|_)(tokens?|ids|token_ids|input_ids|word_ids|item_ids|user_ids|indices|idx|"
    r"start_tokens?|prompt)$"
)
# Ids that come as sequences (a title's tokens), not one per row (`product_idx`).
_SEQUENCE_NAME = re.compile(r"(^|_)(tokens?|token_ids|input_ids|word_ids|prompt)$")
_ONE_ID_NAME = re.compile(r"_(idx|id|index)$")
_IMAGE_NAME = re.compile(r"(^|_)(images?|imgs?|pixels|frames?|pictures?|photos?)$")
# Sampled sound: a waveform per example, long enough for a short-time Fourier transform
# (frames of up to 2048 samples), as audio front ends (`tf.signal.stft`) need.
_AUDIO_NAME = re.compile(r"(^|_)(waves?|waveforms?|audios?|wavs?|speech|pcm)$")
_AUDIO_SAMPLES = 4000
_STRING_NAME = re.compile(
    r"(^|_)(serialized|records?|lines?|text|texts|sentences?|paths?|filenames?|files?|protos?|"
    r"strings?|examples?)$"
)


def _role(name: str) -> str:
    if _LABEL_NAME.search(name):
        return "label"
    if _PREDICTION_NAME.search(name):
        return "prediction"
    if _MASK_NAME.search(name):
        return "mask"
    if _LIST_NAME.search(name):
        return "list"
    if _PER_EXAMPLE_NAME.search(name):
        return "per_example"
    if _ACTION_NAME.search(name):
        return "action"
    if _IMAGE_NAME.search(name):
        return "image"
    if _AUDIO_NAME.search(name):
        return "audio"
    if _IDS_NAME.search(name):
        return "ids"
    if _COUNT_NAME.search(name):
        return "count"
    if _RATE_NAME.search(name):
        return "rate"
    return "string" if _STRING_NAME.search(name) else "tensor"


def _under_training(node: FunctionNode, lines: set[int], ctx: ModuleContext) -> bool:
    """A finding of ``node`` (a Keras ``call`` with ``training=None``) sits in the body of an
    ``if`` that needs ``training`` true (``if training and ...:``), or after an early ``if not
    training: return x``: it runs only when the caller passes ``training=True``, as ``fit``
    does."""
    if not isinstance(node, cst.FunctionDef) or not any(
        p.name.value == "training" and p.default is not None
        for p in [*node.params.params, *node.params.kwonly_params]
    ):
        return False
    for stmt in walk.descendants(node.body):
        if not isinstance(stmt, cst.If) or not _needs_training(stmt.test):
            continue
        first, last = ctx.line(stmt), ctx.end_line(stmt.body)
        if any(first <= line <= last for line in lines):
            return True
    # `if not training: return x` first: the rest of the body runs only in training.
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if (
            isinstance(stmt, cst.If)
            and stmt.orelse is None
            and isinstance(stmt.test, cst.UnaryOperation)
            and isinstance(stmt.test.operator, cst.Not)
            and _needs_training(stmt.test.expression)
            and isinstance(stmt.body, cst.IndentedBlock)
            and isinstance(stmt.body.body[-1], cst.SimpleStatementLine)
            and isinstance(stmt.body.body[-1].body[-1], (cst.Return, cst.Raise))
        ):
            first, end = ctx.line(stmt), ctx.end_line(stmt)
            # A finding in the early-return block itself runs without training.
            inside = any(first <= line <= end for line in lines)
            return not inside and any(line > end for line in lines)
    return False


def _branch_flags(
    ctx: ModuleContext, class_name: str, node: FunctionNode, lines: set[int]
) -> dict[str, tuple[int, PyValue]]:
    """Constructor options the findings of ``node`` need on: a finding in the body of ``if
    self.flag:`` (or ``if self.flag and ...:``) where ``__init__`` stores its parameter ``flag
    =False`` as ``self.flag`` (value True), or in the body of ``if self.log_path:`` / ``if
    self.log_path is not None:`` where it stores ``log_path=None`` and that body opens it as a
    file (a path in the scratch folder); name -> (its position after ``self``, the value)."""
    cls = next(
        (c for c in ctx.module.body if isinstance(c, cst.ClassDef) and c.name.value == class_name),
        None,
    )
    init = next(
        (
            f
            for f in (cls.body.body if cls is not None else ())
            if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"
        ),
        None,
    )
    if init is None:
        return {}
    params = [*init.params.posonly_params, *init.params.params][1:]
    off = {
        p.name.value: i
        for i, p in enumerate(params)
        if isinstance(p.default, cst.Name) and p.default.value in ("False", "None")
    }
    stored: dict[str, str] = {}  # attribute -> parameter
    for stmt in walk.descendants(init.body):
        if (
            isinstance(stmt, cst.Assign)
            and len(stmt.targets) == 1
            and isinstance(attr := stmt.targets[0].target, cst.Attribute)
            and isinstance(attr.value, cst.Name)
            and attr.value.value == "self"
            and isinstance(stmt.value, cst.Name)
            and stmt.value.value in off
        ):
            stored[attr.attr.value] = stmt.value.value
    found: dict[str, tuple[int, PyValue]] = {}
    for stmt in walk.descendants(node.body) if stored else ():
        if not isinstance(stmt, cst.If):
            continue
        first, last = ctx.line(stmt.body), ctx.end_line(stmt.body)
        # A finding in the body, or in the test after the flag (`if self.ignore_empty and
        # tf.reduce_sum(y) == 0:`), which the flag short-circuits.
        in_test = ctx.line(stmt) in lines and isinstance(stmt.test, cst.BooleanOperation)
        if not in_test and not any(first <= line <= last for line in lines):
            continue
        for attr in _self_flags(stmt.test):
            name = stored.get(attr)
            if name is None:
                continue
            default = params[off[name]].default
            if isinstance(default, cst.Name) and default.value == "False":
                found[name] = (off[name], PyValue(True))
            elif _opens_attribute(ctx, stmt.body, attr):
                found[name] = (off[name], _SAMPLE_FILE)
    return found


def _opens_attribute(ctx: ModuleContext, body: cst.CSTNode, attr: str) -> bool:
    """``body`` passes ``self.<attr>`` as the path to a file call (``open(self.log, "a")``)."""
    for call in walk.descendants(body):
        if type(call) is not cst.Call or not call.args:
            continue
        first = call.args[0].value
        if not (
            isinstance(first, cst.Attribute)
            and isinstance(first.value, cst.Name)
            and first.value.value == "self"
            and first.attr.value == attr
        ):
            continue
        if _is_file_call(ctx, call.func):
            return True
    return False


def _self_flags(test: cst.BaseExpression) -> Iterator[str]:
    """The ``self.x`` attributes a test needs true (or set): ``self.x``, ``self.x is not
    None``, ``self.x and ...``."""
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.IsNot)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        test = test.left
    if (
        isinstance(test, cst.Attribute)
        and isinstance(test.value, cst.Name)
        and test.value.value == "self"
    ):
        yield test.attr.value
    elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _self_flags(test.left)
        yield from _self_flags(test.right)


def _needs_training(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name):
        return test.value == "training"
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _needs_training(test.left) or _needs_training(test.right)
    return False


def _zipped(node: FunctionNode, names: list[str]) -> set[str]:
    """Parameters the body hands to ``zip(...)`` (``for ema, w in zip(ema_weights,
    weights):``): Python sequences, such as lists of variables, not tensors."""
    found: set[str] = set()
    for call in walk.descendants(node):
        if type(call) is cst.Call and isinstance(call.func, cst.Name) and call.func.value == "zip":
            found.update(
                a.value.value
                for a in call.args
                if isinstance(a.value, cst.Name) and a.value.value in names
            )
    return found


# What opens, names or writes a file by the path it is given first.
_FILE_CALLS = (
    "builtins.open",
    "io.open",
    "pathlib.Path",
    "os.path.",
    "numpy.save",
    "numpy.savez",
    "numpy.savetxt",
    "numpy.load",
    "numpy.loadtxt",
    "tensorflow.io.gfile.",
)
# A file name for a parameter the body uses as a path: the child runs in its scratch folder.
_SAMPLE_FILE = PyValue("tflint_graph_sample.txt")


def _file_paths(ctx: ModuleContext, node: FunctionNode, names: list[str]) -> set[str]:
    """Parameters the body passes as the path to ``open``, ``Path``, ``os.path.*``,
    ``np.save``/``np.load`` or ``tf.io.gfile``: Python strings, which no tensor can stand
    for (``Path(log_path).write_text(...)`` raises on a symbolic string)."""
    found: set[str] = set()
    for call in walk.descendants(node):
        if type(call) is not cst.Call or not call.args:
            continue
        first = call.args[0].value
        if not (isinstance(first, cst.Name) and first.value in names):
            continue
        if _is_file_call(ctx, call.func):
            found.add(first.value)
    return found


def _is_file_call(ctx: ModuleContext, func: cst.BaseExpression) -> bool:
    """``func`` takes a file path first (``open``, ``Path``, ``os.path.*``, ``np.save``...)."""
    resolved = ctx.resolve(func)
    return any(resolved.startswith(f) if f.endswith(".") else resolved.is_(f) for f in _FILE_CALLS)


_ASSIGNS = frozenset({"assign", "assign_add", "assign_sub"})


def _assigned_through(node: FunctionNode, names: list[str]) -> set[str]:
    """Parameters whose items the body ``.assign``\\ s to (``for ema, w in zip(ema_weights,
    weights): ema.assign(...)``, ``for v in params: v.assign_sub(...)``): lists of
    variables, which no tensor can stand for."""
    found: set[str] = set()
    for loop in walk.descendants(node):
        if type(loop) is not cst.For:
            continue
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        it, target = loop.iter, loop.target
        if isinstance(it, cst.Name):
            pairs.append((target, it))
        elif (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "zip"
            and isinstance(target, cst.Tuple)
            and len(target.elements) == len(it.args)
        ):
            pairs += [(e.value, a.value) for e, a in zip(target.elements, it.args, strict=True)]
        for item, seq in pairs:
            if not (isinstance(item, cst.Name) and isinstance(seq, cst.Name)):
                continue
            if seq.value not in names:
                continue
            if any(
                type(c) is cst.Call
                and isinstance(c.func, cst.Attribute)
                and c.func.attr.value in _ASSIGNS
                and isinstance(c.func.value, cst.Name)
                and c.func.value.value == item.value
                for c in walk.descendants(loop.body)
            ):
                found.add(seq.value)
    return found


def _assigned_directly(node: FunctionNode, names: list[str]) -> set[str]:
    """Parameters the body assigns to as a whole (``ema.assign(decay * ema + ...)``): a
    ``tf.Variable``, which no tensor can stand for."""
    return {
        c.func.value.value
        for c in walk.descendants(node)
        if type(c) is cst.Call
        and isinstance(c.func, cst.Attribute)
        and c.func.attr.value in _ASSIGNS
        and isinstance(c.func.value, cst.Name)
        and c.func.value.value in names
    }


def _variables_guess(shape: tuple[int, ...]) -> VariablesSpec:
    # Shaped like the gradient list `_guess` makes for a zipped parameter: a kernel and a bias.
    bias = shape[-1:] if shape else (3,)
    return VariablesSpec((TensorSpecLite("float32", shape), TensorSpecLite("float32", bias)))


def _unpacked(node: FunctionNode) -> dict[str, tuple[str, ...]]:
    """Parameters the body unpacks (``x, y = batch``): name -> the names of the parts."""
    if not isinstance(node, cst.FunctionDef):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for _, small in single_assignments(node.body):
        target = small.targets[0].target
        if isinstance(target, cst.Tuple) and isinstance(small.value, cst.Name):
            parts = [e.value for e in target.elements]
            if all(isinstance(p, cst.Name) for p in parts):
                found.setdefault(
                    small.value.value, tuple(p.value for p in parts if isinstance(p, cst.Name))
                )
    return found


def _unpacked_guess(parts: tuple[str, ...], shape: tuple[int, ...], per_element: bool) -> Spec:
    return TupleSpec(tuple(_guess(p, shape, per_element=per_element) for p in parts))


def _keyed_guess(keys: tuple[str, ...], shape: tuple[int, ...], per_element: bool) -> Spec:
    # Named features are usually one value per example: a column, not an image.
    column = shape[:1] if shape and not per_element else ()
    return DictSpec(tuple((k, _guess(k, column, per_element=per_element)) for k in keys))


# What only a dict (of the containers a body may get) has.
_DICT_VIEWS = frozenset({"items", "keys", "values"})
# Keras's helpers that split a step's `data` into (x, y, sample_weight).
_UNPACKERS = frozenset({"unpack_x_y_sample_weight", "unpack_x_y"})


class _DataUse(walk.Visitor):
    """How a function's body uses its parameters as containers: the string keys it
    subscripts (``x["age"]``, ``x.get("age")``, made-up ones for ``x.items()``), the largest
    integer index it takes (``data[1]``), and whether it hands one to Keras's unpacking
    helper or to a parent's step (both take a tuple)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)
        self.keys: dict[str, tuple[str, ...]] = {}
        self.index: dict[str, int] = {}
        self.split: set[str] = set()
        # Loop variables over literal strings: `for name in ("item", "shop"): x[name]`.
        self.swept: dict[str, tuple[str, ...]] = {}

    def of(self, node: FunctionNode) -> _DataUse:
        self.walk(node.body)
        return self

    def _key(self, name: str, key: str) -> None:
        if key not in self.keys.get(name, ()):
            self.keys[name] = (*self.keys.get(name, ()), key)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if (
            isinstance(node, cst.For)
            and isinstance(node.target, cst.Name)
            and isinstance(node.iter, cst.Tuple | cst.List)
        ):
            words = [
                el.value.evaluated_value
                for el in node.iter.elements
                if isinstance(el.value, cst.SimpleString)
            ]
            if words and len(words) == len(node.iter.elements):
                self.swept[node.target.value] = tuple(w for w in words if isinstance(w, str))
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Name)
            and node.value.value in self.names
            and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets)
        ):
            self.split.add(node.value.value)
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            name = node.value.value
            if name in self.names and len(node.slice) == 1:
                index = node.slice[0].slice
                if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                    key = index.value.evaluated_value
                    if isinstance(key, str):
                        self._key(name, key)
                elif isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                    self.index[name] = max(self.index.get(name, 0), int(index.value.value))
                elif (
                    isinstance(index, cst.Index)
                    and isinstance(index.value, cst.Name)
                    and index.value.value in self.swept
                ):
                    for key in self.swept[index.value.value]:
                        self._key(name, key)
        elif isinstance(node, cst.Call):
            func = node.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "get"
                and isinstance(func.value, cst.Name)
                and func.value.value in self.names
                and node.args
                and isinstance(node.args[0].value, cst.SimpleString)
            ):
                key = node.args[0].value.evaluated_value
                if isinstance(key, str):
                    self._key(func.value.value, key)
            elif (
                isinstance(func, cst.Attribute)
                and func.attr.value in _DICT_VIEWS
                and not node.args
                and isinstance(func.value, cst.Name)
                and func.value.value in self.names
                and not self.keys.get(func.value.value)
            ):
                # `values.items()`: a dict, whatever its keys (two made-up ones).
                for key in ("a", "b"):
                    self._key(func.value.value, key)
            called = (
                func.attr.value
                if isinstance(func, cst.Attribute)
                else (func.value if isinstance(func, cst.Name) else "")
            )
            if called in _UNPACKERS or called in KERAS_STEPS:
                for arg in node.args:
                    if isinstance(arg.value, cst.Name) and arg.value.value in self.names:
                        self.split.add(arg.value.value)
        return True


# Methods that call a function with the arguments given in ``args=`` (a strategy's step).
_RUNNERS = frozenset({"run", "experimental_run_v2"})


def _handed_on(
    ctx: ModuleContext, node: FunctionNode, names: Sequence[str]
) -> dict[str, tuple[FunctionNode, str]]:
    """Parameters of ``node`` it hands on unchanged through ``x.run(fn, args=(p, ...))``:
    name -> (the function of this module that receives it, its parameter there)."""
    out: dict[str, tuple[FunctionNode, str]] = {}
    finder = _Nodes(cst.Call)
    finder.walk(node.body)
    for call in finder.found:
        assert isinstance(call, cst.Call)
        func = call.func
        handed = keyword(call, "args")
        if not (isinstance(func, cst.Attribute) and func.attr.value in _RUNNERS):
            continue
        if not isinstance(handed, cst.Tuple | cst.List) or not call.args:
            continue
        callees = list(traced_of(ctx).definitions.callables(call.args[0].value, node))
        if len(callees) != 1 or not isinstance(callees[0][0], cst.FunctionDef):
            continue
        callee = callees[0][0]
        params = [*callee.params.posonly_params, *callee.params.params]
        if ctx.enclosing_class(callee) is not None and isinstance(
            call.args[0].value, cst.Attribute
        ):
            params = params[1:]  # a bound method: `self` is not handed on
        for i, el in enumerate(handed.elements):
            if isinstance(el.value, cst.Name) and el.value.value in names and i < len(params):
                out[el.value.value] = (callee, params[i].name.value)
    return out


def _step_attempts(ctx: ModuleContext, node: FunctionNode) -> tuple[Attempt, ...]:
    """The ``data`` of a Keras step, as its body reads it: ``x, y = data`` (or Keras's
    unpacking helper, or ``data[1]``) a tuple of those parts (images for ``images``, a dict
    for a part read by key, here or in a method of the class it is handed to);
    ``data["image"]`` a dict; used as it is (a GAN's real images), one tensor; unknown, a
    tuple ``(x, y)`` first."""
    params = [p.name.value for p in [*node.params.posonly_params, *node.params.params][1:2]]
    if not params:
        return ()
    (data,) = params
    use = _DataUse(params).of(node)
    parts = _unpacked(node).get(data)
    keyed = _keys_read(ctx, node, parts) if parts else {}
    out = []
    for shape in GUESSED_SHAPES[:2]:
        target = TensorSpecLite("float32", (shape[0], 1))
        x = TensorSpecLite("float32", shape)
        pair = TupleSpec((x, target))
        if use.keys.get(data):
            out.append(_keyed_guess(use.keys[data], shape, per_element=False))
        elif parts and len(parts) > 1:
            if parts[0] in keyed:
                # A model's named inputs: a batch of each (an image, a vector of features).
                x = DictSpec(
                    tuple((k, _guess(k, shape, per_element=False)) for k in keyed[parts[0]])
                )
            elif _role(parts[0]) in ("image", "audio"):
                x = _guess(parts[0], shape, per_element=False)
            rest = (
                _keyed_guess(keyed[p], shape, per_element=False) if p in keyed else target
                for p in parts[1:]
            )
            out.append(TupleSpec((x, *rest)))
        elif data in use.split or use.index.get(data, 0) >= 1:
            out.append(pair)
        else:
            # Not unpacked: a batch of one tensor when the body uses it as it is.
            whole = data not in use.index and _mentions(node, data)
            out.extend((x, pair) if whole else (pair, x))
    if parts and len(parts) > 1 and parts[0] in keyed:
        # Last, the named inputs as columns, one value per row (`price` beside ids, as in
        # tabular and ranking data), for a model whose layers slice each to a vector.
        columns = _keyed_guess(keyed[parts[0]], GUESSED_SHAPES[0], per_element=False)
        out.extend(TupleSpec((columns, *t.items[1:])) for t in out[:1] if isinstance(t, TupleSpec))
    return tuple(Attempt("guessed", (spec,)) for spec in _unique(out))


def _unique(items: list[Any]) -> list[Any]:
    """``items`` in order, each once (by equality: specs and attempts are unhashable)."""
    return [item for i, item in enumerate(items) if item not in items[:i]]


# Names of a parameter that holds batches to loop over.
_DATASET_NAME = re.compile(r"(^|_)(dataset|ds|data|loader|batches|iterator)$")


def _iterated(
    node: FunctionNode, names: Sequence[str]
) -> dict[str, cst.BaseAssignTargetExpression]:
    """Parameters the body loops over as batches (``for images, targets in dataset``): name
    -> the loop's target.  A loop that unpacks each item, or over a parameter named for
    batches (``for batch in ds``); a list of tensors (``for g in grads``) is neither."""
    found: dict[str, cst.BaseAssignTargetExpression] = {}
    loops = _Nodes(cst.For)
    loops.walk(node.body)
    for loop in loops.found:
        assert isinstance(loop, cst.For)
        it = loop.iter
        if not (isinstance(it, cst.Name) and it.value in names) or it.value in found:
            continue
        unpacks = isinstance(loop.target, cst.Tuple | cst.List) and all(
            isinstance(e.value, cst.Name) for e in loop.target.elements
        )
        if unpacks or (isinstance(loop.target, cst.Name) and _DATASET_NAME.search(it.value)):
            found[it.value] = loop.target
    return found


def _with_datasets(
    ctx: ModuleContext,
    attempt: Attempt,
    node: FunctionNode,
    iterated: Mapping[str, cst.BaseAssignTargetExpression],
    names: Sequence[str],
    looped: Sequence[int],
) -> Attempt:
    """``attempt`` with a dataset of batches for each parameter at ``looped`` (shaped like the
    guess's first tensor)."""
    specs = [*attempt.args, *attempt.kwargs.values()]
    first = next((s for s in specs if isinstance(s, TensorSpecLite) and s.shape), None)
    shape = tuple(d or 2 for d in first.shape) if first is not None and first.shape else (2, 3)
    args = list(attempt.args)
    kwargs = dict(attempt.kwargs)
    for i in looped:
        guess = _dataset_guess(ctx, node, iterated[names[i]], shape)
        if i < len(args):
            args[i] = guess
        else:
            kwargs[names[i]] = guess
    return replace(attempt, args=tuple(args), kwargs=kwargs)


def _dataset_guess(
    ctx: ModuleContext,
    node: FunctionNode,
    target: cst.BaseAssignTargetExpression,
    shape: tuple[int, ...],
) -> DatasetSpec:
    """Batches shaped for the loop's names: a tuple for ``images, targets``, each part as its
    name and the keys the body (or a function it hands the part to) reads from it
    (``targets["count"]``) say."""
    parts = (
        [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        if isinstance(target, cst.Tuple | cst.List)
        else [target.value]
        if isinstance(target, cst.Name)
        else []
    )
    keys = _keys_read(ctx, node, parts)
    guesses = [
        _keyed_guess(keys[p], shape, per_element=False)
        if keys.get(p)
        else _guess(p, shape, per_element=False)
        for p in parts
    ]
    if isinstance(target, cst.Name):
        return DatasetSpec(guesses[0])
    return DatasetSpec(TupleSpec(tuple(guesses)))


def _keys_read(
    ctx: ModuleContext, node: FunctionNode, names: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """The string keys ``node`` reads from each of ``names`` (``targets["mask"]``), also in a
    method of its own class it hands the name to (``self._loss(targets, out)``, ``self(x)``
    for a model's ``call``)."""
    keys = dict(_DataUse(names).of(node).keys)
    cls = ctx.enclosing_class(node)
    body = cls.body.body if cls is not None else ()
    methods = {stmt.name.value: stmt for stmt in body if isinstance(stmt, cst.FunctionDef)}
    functions = {
        stmt.name.value: stmt for stmt in ctx.module.body if isinstance(stmt, cst.FunctionDef)
    }
    finder = _Nodes(cst.Call)
    finder.walk(node.body)
    for call in finder.found:
        assert isinstance(call, cst.Call)
        func = call.func
        if isinstance(func, cst.Name) and func.value in functions and func.value != "self":
            # A function of the module (`reranker_features(features)`): all its parameters.
            method = functions[func.value]
            params = [*method.params.posonly_params, *method.params.params]
            _keys_from(call, params, method, names, keys)
            continue
        if isinstance(func, cst.Name) and func.value == "self" and "call" in methods:
            method = methods["call"]  # `self(x)`: a Keras model runs its `call`
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and func.attr.value in methods
        ):
            method = methods[func.attr.value]
        else:
            continue
        params = [*method.params.posonly_params, *method.params.params][1:]
        _keys_from(call, params, method, names, keys)
    return keys


def _keys_from(
    call: cst.Call,
    params: Sequence[cst.Param],
    callee: cst.FunctionDef,
    names: Sequence[str],
    keys: dict[str, tuple[str, ...]],
) -> None:
    """Into ``keys``: the string keys ``callee`` reads from a parameter that ``call`` passes
    one of ``names`` positionally."""
    for i, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star or i >= len(params):
            break
        name = arg.value.value if isinstance(arg.value, cst.Name) else None
        if name in names and name not in keys:
            param = params[i].name.value
            found = _DataUse([param]).of(callee).keys.get(param)
            if found:
                keys[name] = found


def _mentions(node: FunctionNode, name: str) -> bool:
    finder = _Nodes(cst.Name)
    finder.walk(node.body)
    return any(isinstance(n, cst.Name) and n.value == name for n in finder.found)


def _guess(name: str, shape: tuple[int, ...], *, per_element: bool, as_list: bool = False) -> Spec:
    """A tensor for a parameter nothing describes: float32 of ``shape``, except that labels
    are int32 and serialized records strings, one per batch row (a scalar for a
    ``Dataset.map`` element); a list of tensors for one the body zips (``as_list``)."""
    row: tuple[int, ...] = () if per_element or not shape else (shape[0],)
    role = "list" if as_list else _role(name)
    if role in ("tensor", "prediction"):
        return TensorSpecLite("float32", shape)
    if role == "list":
        # Gradients come as one tensor per variable: a kernel and a bias.
        bias = shape[-1:] if shape else (3,)
        return TupleSpec((TensorSpecLite("float32", shape), TensorSpecLite("float32", bias)))
    if role == "mask":
        # A mask covers the batch and sequence axes of the tensor it goes with.
        return TensorSpecLite("bool", shape[:2])
    if role in ("label", "action"):
        # Class ids: 0 and 1 are in range for any classifier (or discrete action space).
        return TensorSpecLite("int32", row, values=(0, 2))
    if role == "per_example":
        return TensorSpecLite("float32", row)
    if role == "count":
        return TensorSpecLite("int32", (), values=(1, 4))
    if role == "rate":
        # A Python float, as a training script passes it (a map callback takes tensors).
        return TensorSpecLite("float32", ()) if per_element else PyValue(0.01)
    if role == "ids":
        # Small ids are in range for any vocabulary: a batch of sequences at most; token ids
        # are sequences even where the shape given is one per row (a feature dict's entry).
        if _SEQUENCE_NAME.search(name) and len(shape) < 2:
            return TensorSpecLite("int32", (*row, 3), values=(0, 2))
        if _ONE_ID_NAME.search(name):
            return TensorSpecLite("int32", row, values=(0, 2))  # `product_idx`: one per row
        return TensorSpecLite("int32", shape[:2], values=(0, 2))
    if role == "image":
        # Height, width and channels, whatever the batch (decoders and resizers need all 3).
        return TensorSpecLite("float32", (*row, 4, 4, 3))
    if role == "audio":
        return TensorSpecLite("float32", (*row, _AUDIO_SAMPLES))
    return TensorSpecLite("string", row)


# -- what state a finding claims changes ---------------------------------------------------


def _locals(fn: FunctionNode) -> frozenset[str]:
    """Parameter names of the function holding a finding: a bare name among them is not the
    module global of the same name."""
    params = fn.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    return frozenset(p.name.value for p in every)


def _mutable_defaults(ctx: ModuleContext, fn: FunctionNode) -> dict[str, str]:
    """Parameters of ``fn`` whose default is a mutable container (``registry={}``): param ->
    the function's qualified name, through which the child reads the one default object."""
    if not isinstance(fn, cst.FunctionDef) or ctx.enclosing_function(fn) is not None:
        return {}
    cls = ctx.enclosing_class(fn)
    if cls is not None and not isinstance(ctx.parent(cls), cst.Module):
        return {}
    qualname = f"{cls.name.value}.{fn.name.value}" if cls is not None else fn.name.value
    params = [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]
    return {
        p.name.value: qualname
        for p in params
        if isinstance(p.default, cst.List | cst.Dict | cst.Set)
        or (
            isinstance(p.default, cst.Call)
            and isinstance(p.default.func, cst.Name)
            and p.default.func.value in ("list", "dict", "set")
        )
    }


def _watch(
    tree: ast.Module | None,
    lines: list[str],
    finding: Finding,
    local: frozenset[str],
    defaults: Mapping[str, str] | None = None,
) -> Watch | None:
    if tree is None or not 0 < finding.line <= len(lines):
        return None
    # Findings count columns in characters, ast in UTF-8 bytes.
    col = len(lines[finding.line - 1][: finding.column - 1].encode("utf-8"))
    candidates = [
        n
        for n in ast.walk(tree)
        if getattr(n, "lineno", None) == finding.line and getattr(n, "col_offset", None) == col
    ]
    for node in candidates:
        found = _state_of(node, finding.code)
        if found is not None:
            kind, name, attr = found
            owner = (defaults or {}).get(name) if kind == "global" else None
            if owner is not None:
                # `registry={}`: the one default object every call without it shares.
                return Watch(finding.line, finding.code, "default", owner, name)
            if kind != "self" and name in local:
                return None
            return Watch(finding.line, finding.code, kind, name, attr)
    return None


def _ref(expr: ast.expr) -> tuple[str, str, str] | None:
    if isinstance(expr, ast.Name):
        return "global", expr.id, ""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        if expr.value.id == "self":
            return "self", "", expr.attr
        return "global_attr", expr.value.id, expr.attr
    return None


# Methods that change a list, dict, set or deque in place (TFG102's mutations).
_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "popitem",
        "appendleft",
        "extendleft",
        "sort",
        "reverse",
    }
)


def _written(node: ast.AST) -> ast.expr | None:
    """The target an assignment statement (or a store/del of a name, attribute or
    subscript) writes."""
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return node.target
    if isinstance(node, (ast.Assign, ast.Delete)) and len(node.targets) == 1:
        return node.targets[0]
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(
        node.ctx, (ast.Store, ast.Del)
    ):
        return node
    return None


def _state_of(node: ast.AST, code: str) -> tuple[str, str, str] | None:
    """What a finding's statement changes, strictly in its code's own terms: a decoy (a
    global write reported as a container mutation) must find nothing to watch."""
    if isinstance(node, ast.Expr):
        return _state_of(node.value, code)
    if code == "TFG109":
        # A global (`lr`), or an attribute read where the object lives on (`self.epsilon`
        # that another method reassigns, `cfg.lr` of a module-level config).
        return _ref(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if code == "TFG102":
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            owner = node.func.value
            while isinstance(owner, ast.Subscript):
                owner = owner.value  # `self.history["loss"].append(x)`: the dict holds it
            return _ref(owner)
        target = _written(node)
        if isinstance(target, ast.Subscript):
            return _ref(target.value)
        if isinstance(node, ast.AugAssign) and target is not None:
            return _ref(target)  # `history += [x]`: the child checks it holds a container
        return None
    target = _written(node)
    if code == "TFG105":
        return ("global", target.id, "") if isinstance(target, ast.Name) else None
    if code == "TFG106" and isinstance(target, ast.Attribute):
        return _ref(target)
    return None
