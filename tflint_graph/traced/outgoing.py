"""Traced calls into other modules of the run: what this module tells the project to follow."""

from __future__ import annotations

import libcst as cst

from tflint_graph.core.facts import Outgoing, TraceKind
from tflint_graph.model.context import ModuleContext, TracedFunction
from tflint_graph.model.definitions import Definitions


class OutgoingCalls:
    """Collects, in discovery order, the functions of other modules that traced code here
    calls or hands to TensorFlow (``ModuleSummary.outgoing``)."""

    def __init__(self, ctx: ModuleContext, definitions: Definitions) -> None:
        self.ctx = ctx
        self.definitions = definitions
        self.found: list[Outgoing] = []

    def send(
        self,
        expr: cst.BaseExpression | None,
        kind: TraceKind,
        reason: str,
        parent: TracedFunction | None,
        autograph: bool = True,
    ) -> None:
        """Every function of another module ``expr`` denotes is traced there too."""
        chain = parent.chain if parent is not None else ()
        if parent is None:
            reason = f"{reason} in {self.ctx.path}"
        for target in self.definitions.foreign(expr):
            self.found.append(Outgoing(target, kind, reason, chain, autograph))

    def add(self, target: str, kind: TraceKind, reason: str, parent: TracedFunction) -> None:
        """``target`` (an absolute name) is called from ``parent``."""
        self.found.append(Outgoing(target, kind, reason, parent.chain, parent.autograph))
