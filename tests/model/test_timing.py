"""Timed blocks (``model.timing``): where ``t0 = clock()`` starts a measurement, where the
clock read that measures it ends it, and which calls surely run in between."""

from __future__ import annotations

import libcst as cst

from tests.helpers import dedent
from tflint_graph.core.config import Config
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.timing import TimedBlock, call_events, statements_after, timed_block


def _blocks(source: str) -> list[TimedBlock | None]:
    """The block each clock read of ``source`` starts (None where it starts none)."""
    source = dedent(source)
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())
    definitions = Definitions(ctx)
    clocks = [
        call
        for _, call in definitions.facts.calls
        if ctx.code(call.func) in ("time.perf_counter", "perf_counter", "time.time")
    ]
    return [timed_block(ctx, definitions, clock) for clock in clocks]


def _names(block: TimedBlock | None) -> list[str]:
    assert block is not None
    return [cst.Module([]).code_for_node(call.func) for call in block.calls]


SIMPLE = """
    import time

    def bench(step, x):
        t0 = time.perf_counter()
        for _ in range(10):
            step(x)
        if x is None:
            setup(x)
        elapsed = time.perf_counter() - t0
        report(elapsed)
"""


def test_a_block_runs_from_the_start_read_to_the_read_that_measures() -> None:
    first, closing = _blocks(SIMPLE)
    assert first is not None and closing is None  # the closing read starts nothing
    assert first.target.value == "t0"
    assert cst.Module([]).code_for_node(first.end).strip() == "elapsed = time.perf_counter() - t0"
    # range() and step() surely run; setup() only under a branch; report() after the end.
    assert _names(first) == ["range", "step"]


def test_a_time_budget_or_a_running_clock_is_no_block() -> None:
    budget = """
        import time
        t0 = time.time()
        while time.time() - t0 < 5.0:
            work()
    """
    assert _blocks(budget)[0] is None
    logged = """
        import time
        t0 = time.time()
        for batch in data:
            train(batch)
            print(time.time() - t0)
    """
    assert _blocks(logged)[0] is None


def test_a_clock_read_not_assigned_alone_starts_nothing() -> None:
    assert _blocks("import time\nprint(time.perf_counter())\n") == [None]
    assert _blocks("import time\na = b = time.perf_counter()\n") == [None]
    assert _blocks("import time\nt0 = time.perf_counter()\nstep(1)\n") == [None]  # never closed


def test_any_spelling_of_the_clock_counts() -> None:
    source = """
        from time import perf_counter
        start = perf_counter()
        run()
        took = perf_counter() - start
    """
    block = _blocks(source)[0]
    assert _names(block) == ["run"]


def test_statements_after_climb_out_of_the_blocks_around() -> None:
    source = dedent(
        """
        def f():
            if a:
                t0 = clock()
                one()
            two()
        three()
        """
    )
    module = cst.parse_module(source)
    ctx = ModuleContext("m.py", source, module, Config())
    [start] = [n for n in ctx.nodes_in_order() if isinstance(n, cst.SimpleStatementLine)][:1]
    after = [cst.Module([]).code_for_node(s).strip() for s in statements_after(ctx, start)]
    assert after == ["one()", "two()"]  # not three(): it is outside the function


def test_calls_in_nested_functions_and_branches_are_not_sure() -> None:
    statement = cst.parse_statement("x = f(a) or g(b) if c() else h(lambda: k())\n")
    events = [(cst.Module([]).code_for_node(e.call.func), e.sure) for e in call_events(statement)]
    assert events == [("c", True), ("f", False), ("g", False), ("h", False)]
