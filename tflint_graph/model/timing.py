"""Timed blocks: ``t0 = time.perf_counter()`` ... ``time.perf_counter() - t0`` in eager code.

``timed_block`` finds the block a clock read starts (the statements up to the clock read
that measures a duration) and the calls that surely run inside it; what a rule makes of them
is its own (TFG403: the first call of a tf.function there traces it inside the timing).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tflint_graph.model import walk
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.definitions import Definitions

# Clock reads that start and end a timed block.
CLOCKS = frozenset(
    {
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.process_time",
        "time.process_time_ns",
        "time.thread_time",
        "time.thread_time_ns",
        "timeit.default_timer",
    }
)


@dataclass(frozen=True, slots=True)
class CallEvent:
    """A call, and whether it runs whenever the statement holding it runs to its end."""

    call: cst.Call
    sure: bool


def call_events(root: cst.CSTNode, sure: bool = True) -> Iterator[CallEvent]:
    """Calls under ``root`` in source order, except in nested defs, classes and lambdas
    (they do not run here); ``sure`` is False under a branch that may not run."""
    stack: list[tuple[cst.CSTNode, bool]] = [(root, sure)]
    while stack:
        node, ok = stack.pop()
        if isinstance(node, cst.Call):
            yield CallEvent(node, ok)
        children = _children(node, ok)
        stack.extend(reversed(children))


def _children(node: cst.CSTNode, ok: bool) -> list[tuple[cst.CSTNode, bool]]:
    if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda | cst.GeneratorExp):
        return []
    if isinstance(node, cst.If):
        rest = [node.orelse] if node.orelse is not None else []
        return [(node.test, ok), (node.body, False), *((r, False) for r in rest)]
    if isinstance(node, cst.IfExp):
        return [(node.test, ok), (node.body, False), (node.orelse, False)]
    if isinstance(node, cst.BooleanOperation):
        return [(node.left, ok), (node.right, False)]
    if isinstance(node, cst.Try | cst.TryStar):
        out: list[tuple[cst.CSTNode, bool]] = [(node.body, ok)]
        out += [(h, False) for h in node.handlers]
        if node.orelse is not None:
            out.append((node.orelse, False))
        if node.finalbody is not None:
            out.append((node.finalbody, ok))
        return out
    if isinstance(node, cst.For):
        out = [(node.target, ok), (node.iter, ok), (node.body, ok)]
        return out + ([(node.orelse, False)] if node.orelse is not None else [])
    if isinstance(node, cst.While):
        out = [(node.test, ok), (node.body, ok)]
        return out + ([(node.orelse, False)] if node.orelse is not None else [])
    if isinstance(node, cst.Match):
        return [(node.subject, ok), *((c, False) for c in node.cases)]
    if isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp):
        has_if = False
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            has_if = has_if or bool(comp.ifs)
            comp = comp.inner_for_in
        return [(c, ok and not has_if) for c in walk.children(node)]
    return [(c, ok) for c in walk.children(node)]


@dataclass(frozen=True, slots=True)
class TimedBlock:
    """``start`` (``target = timer()``, a whole statement) up to ``end``, the statement
    whose clock read measures the duration; ``calls`` surely run in between, in order."""

    timer: cst.Call
    start: cst.SimpleStatementLine
    target: cst.Name
    end: cst.CSTNode
    calls: tuple[cst.Call, ...]


def timed_block(ctx: ModuleContext, definitions: Definitions, timer: cst.Call) -> TimedBlock | None:
    """The block the clock read ``timer`` starts; None when it is not assigned to a name as a
    statement of its own, when no later clock read measures from it, or when the read that
    does measures more than once (a time budget, a running clock).

    The block ends at the clock read that computes the elapsed time from the start name:
    ``clock() - t0``, or ``t1 = clock()`` with ``t1 - t0`` later.  Other clock reads in
    between (another timer's start or end) do not end it; a new assignment of ``t0`` before
    its end does: the block is then the later assignment's (notebooks assign ``start = ...``
    in many cells, and a clock read of one cell does not measure another cell's code)."""
    assign = ctx.parent(timer)
    if not isinstance(assign, cst.Assign | cst.AnnAssign) or assign.value is not timer:
        return None
    if isinstance(assign, cst.Assign):
        if len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
    else:
        target = assign.target
    stmt = ctx.parent(assign)
    if not isinstance(target, cst.Name) or not isinstance(stmt, cst.SimpleStatementLine):
        return None
    where = ctx.position(stmt).start
    start = (where.line, where.column)
    calls: list[cst.Call] = []
    for later in statements_after(ctx, stmt):
        for event in call_events(later):
            if definitions.resolve(event.call.func).is_(*CLOCKS) and _ends(
                ctx, event.call, target.value
            ):
                if not _measures(ctx, event.call, later):
                    return None
                return TimedBlock(timer, stmt, target, later, tuple(calls))
            at = ctx.position(event.call).start
            if event.sure and (at.line, at.column) > start:
                calls.append(event.call)
        if target.value in assigned_names(later):
            return None  # `t0` starts anew before anything measured from this read
    return None


def _ends(ctx: ModuleContext, read: cst.Call, start: str) -> bool:
    """The clock read computes the time elapsed since ``start``: ``clock() - start``
    directly, or ``end = clock()`` and a later ``end - start`` (before ``end`` is
    reassigned)."""
    parent = ctx.parent(read)
    if _elapsed(parent, read, start):
        return True
    if not isinstance(parent, cst.Assign | cst.AnnAssign) or parent.value is not read:
        return False
    targets = (
        [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
    )
    if len(targets) != 1 or not isinstance(targets[0], cst.Name):
        return False
    end = targets[0].value
    holder = ctx.parent(parent)
    if end == start or not isinstance(holder, cst.SimpleStatementLine):
        return False
    for later in statements_after(ctx, holder):
        if any(_elapsed(op, op.left, start) for op in _subtractions(later, end)):
            return True
        if end in assigned_names(later) or start in assigned_names(later):
            return False
    return False


def _elapsed(node: cst.CSTNode | None, left: cst.CSTNode, start: str) -> bool:
    """``node`` is ``left - start``."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Subtract)
        and node.left is left
        and isinstance(node.right, cst.Name)
        and node.right.value == start
    )


def _subtractions(root: cst.CSTNode, left: str) -> Iterator[cst.BinaryOperation]:
    """``left - ...`` anywhere in ``root`` (outside nested defs and classes)."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            continue
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Subtract)
            and isinstance(node.left, cst.Name)
            and node.left.value == left
        ):
            yield node
        stack.extend(walk.children(node))


def assigned_names(stmt: cst.CSTNode) -> set[str]:
    """Names a statement (or a compound statement's body) assigns with ``=``, ``+=``, ``:=``
    or as a loop target."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, cst.AnnAssign | cst.AugAssign | cst.NamedExpr | cst.For):
            targets = [node.target]
        while targets:
            t = targets.pop()
            if isinstance(t, cst.Name):
                names.add(t.value)
            elif isinstance(t, cst.Tuple | cst.List):
                targets += [e.value for e in t.elements]
        stack.extend(walk.children(node))
    return names


def statements_after(ctx: ModuleContext, stmt: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements that run after ``stmt`` in its function (or module), in order:
    its later siblings, then those of each compound statement around it."""
    node = stmt
    while True:
        block = ctx.parent(node)
        if not isinstance(block, cst.Module | cst.IndentedBlock):
            return
        body = list(block.body)
        index = next((i for i, s in enumerate(body) if s is node), None)
        if index is None:
            return
        yield from body[index + 1 :]
        if isinstance(block, cst.Module):
            return
        # Climb from the block (and any else/except/finally/elif) to its statement.
        owner = ctx.parent(block)
        while owner is not None and not isinstance(
            ctx.parent(owner), cst.IndentedBlock | cst.Module
        ):
            if isinstance(owner, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                return
            owner = ctx.parent(owner)
        if owner is None or isinstance(owner, cst.FunctionDef | cst.ClassDef):
            return
        node = owner


def _measures(ctx: ModuleContext, end: cst.Call, stmt: cst.CSTNode) -> bool:
    """The closing clock read measures once: it is not compared (``while time.time() -
    t0 < budget``) and not repeated in a loop (periodic ``elapsed`` logs, which should
    include everything)."""
    for a in ctx.ancestors(end):
        if isinstance(a, cst.Comparison | cst.For | cst.While | cst.CompFor):
            return False
        if a is stmt:
            break
    return True
