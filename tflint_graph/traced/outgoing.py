"""Traced calls into other modules of the run: what this module tells the project to follow."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from tflint_graph.core.facts import ExternalRoot, Outgoing, TraceKind
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions


class OutgoingCalls:
    """Collects, in discovery order, the functions of other modules that traced code here
    calls or hands to TensorFlow (``ModuleSummary.outgoing``)."""

    def __init__(self, ctx: ModuleContext, definitions: Definitions) -> None:
        self.ctx = ctx
        self.definitions = definitions
        self.found: list[Outgoing] = []
        # The call behind each of ``found`` that is one, with the function making it.
        self._calls: dict[int, tuple[cst.Call, TracedFunction]] = {}

    def send(
        self,
        expr: cst.BaseExpression | None,
        kind: TraceKind,
        reason: str,
        parent: TracedFunction | None,
        autograph: bool = True,
        *,
        call: cst.Call | None = None,
    ) -> None:
        """Every function of another module ``expr`` denotes is traced there too; ``call``
        is the call that reaches it, when it is one."""
        chain = parent.chain if parent is not None else ()
        if parent is None:
            reason = f"{reason} in {self.ctx.path}"
        for target in self.definitions.foreign(expr):
            if call is not None and parent is not None:
                self._calls[len(self.found)] = (call, parent)
            why = parent.unconverted if parent is not None and not autograph else ""
            self.found.append(Outgoing(target, kind, reason, chain, autograph, why))

    def root(self, target: str, kind: TraceKind, reason: str) -> None:
        """``target`` (an absolute name) is handed to TensorFlow by this module's code, not
        called from traced code: ``ds.map(Augmenter())`` runs ``Augmenter.__call__``."""
        self.found.append(Outgoing(target, kind, f"{reason} in {self.ctx.path}", ()))

    def add(
        self,
        target: str,
        kind: TraceKind,
        reason: str,
        parent: TracedFunction,
        call: cst.Call,
        fresh: bool = False,
    ) -> None:
        """``target`` (an absolute name) is called from ``parent`` by ``call`` (on an object
        ``parent`` constructs: ``fresh``)."""
        self._calls[len(self.found)] = (call, parent)
        why = "" if parent.autograph else parent.unconverted
        self.found.append(
            Outgoing(target, kind, reason, parent.chain, parent.autograph, why, fresh=fresh)
        )

    def forward(self, target: str, root: ExternalRoot) -> None:
        """What another module's traced code calls here (``root``) is ``target`` (absolute)
        of a further module: a method a class here inherits from there."""
        for passed in root.passed if root.passed is not None else (None,):
            self.found.append(
                Outgoing(
                    target,
                    root.kind,
                    root.reason,
                    root.chain,
                    root.autograph,
                    root.unconverted,
                    passed=passed,
                    setup=root.setup,
                    fresh=root.fresh,
                )
            )

    def finish(
        self,
        present: Callable[[cst.BaseExpression, TracedFunction], bool],
        setup: Callable[[cst.CSTNode, TracedFunction], bool],
        fresh: Callable[[cst.BaseExpression, cst.CSTNode], bool],
        truth: Callable[[cst.BaseExpression, TracedFunction], bool | None] | None = None,
        dead: Callable[[cst.CSTNode, TracedFunction], bool] | None = None,
        tensor: Callable[[cst.BaseExpression, TracedFunction], bool] | None = None,
    ) -> None:
        """Say, for each call, which arguments it passes a value that is not None
        (``present(value, caller)``; ``given:`` keys for every argument, ``fresh:`` keys for
        an object made in the calling trace, ``fresh(value, caller.node)``, ``true:``/``false:``
        keys for a literal whose truth ``truth(value, caller)`` knows, ``tensor:`` keys for
        a symbolic tensor, ``tensor(value, caller)``) and whether it
        is one-time setup (``setup(call, caller)``), once the module's traced code is
        known; drop the calls ``dead(call, caller)`` says no trace makes."""
        for index, (call, parent) in self._calls.items():
            if setup(call, parent):
                self.found[index] = dataclasses.replace(self.found[index], setup=True)
            passed: set[str] | None = set()
            position = 0
            for arg in call.args:
                if arg.star:
                    passed = None
                    break
                key = f"kw:{arg.keyword.value}" if arg.keyword is not None else f"pos:{position}"
                if arg.keyword is None:
                    position += 1
                passed.add(f"given:{key}")
                if present(arg.value, parent):
                    passed.add(key)
                if fresh(arg.value, parent.node):
                    passed.add(f"fresh:{key}")
                if tensor is not None and tensor(arg.value, parent):
                    passed.add(f"tensor:{key}")
                known = truth(arg.value, parent) if truth is not None else None
                if known is not None:
                    # `verbose=False`: the callee's `if verbose:` is decided on this trace
                    passed.add(f"{'true' if known else 'false'}:{key}")
            if passed is not None:
                self.found[index] = dataclasses.replace(self.found[index], passed=frozenset(passed))
        if dead is not None:
            # A call in a branch no trace takes (`if knn:` that every call leaves False)
            # traces nothing elsewhere either; in place: the traced code holds this list.
            gone = {i for i, (call, parent) in self._calls.items() if dead(call, parent)}
            self.found[:] = [out for i, out in enumerate(self.found) if i not in gone]
            self._calls = {}
